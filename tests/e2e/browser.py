"""Helpers for the browser tests: how chromium is started, the sidebar sign-in, waiting for a
script run to end."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.support import settled, wait_for

ROOT = Path(__file__).resolve().parents[2]
SERVERS_LEASE_S = 10
"""The run lease (seconds) of the two console servers the ``two_servers_on_postgresql`` fixture starts."""
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def sign_in(page: Page, user: str = "operator") -> None:
    """Sign in from the sidebar as a sandbox user; wait for the session cookie the server sets a
    moment after the sign-in (the page goes through the console's route and back), and the page
    loaded again, signed in."""
    from console.access.auth import SANDBOX_USERS

    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_label("User").fill(user)
    sidebar.get_by_role("textbox", name="Password").fill(SANDBOX_USERS[user][0])
    sidebar.get_by_role("button", name="Sign in").click()
    expect(sidebar.get_by_text(f"Signed in as {user}")).to_be_visible(timeout=30_000)
    wait_for(
        lambda: any(c["name"] == "console_session" for c in page.context.cookies()),
        timeout=30,
        every=0.1,
        what="the session cookie",
    )
    page.wait_for_load_state()
    expect(sidebar.get_by_text(f"Signed in as {user}")).to_be_visible(timeout=30_000)


def script_run_done(page: Page, timeout_ms: float = 30_000) -> None:
    """Wait until the app's script is not running (Streamlit marks the state on its root element):
    what the current run draws last is in place."""
    expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-script-state", "notRunning", timeout=timeout_ms)


WIDE_TABLES = """
() => [...document.querySelectorAll('[data-testid="stDataFrame"], [data-testid="stTable"]')]
  .filter((t) => t.checkVisibility() && t.clientWidth > 0)
  .filter((t) => t.getBoundingClientRect().right > window.innerWidth + 1 || [t, ...t.querySelectorAll("*")].some(
    (e) => e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== "visible"))
  .map((t) => {
    const box = t.getBoundingClientRect();
    const over = [t, ...t.querySelectorAll("*")].filter(
      (e) => e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== "visible");
    const cols = [...t.querySelectorAll('[role="columnheader"]')].map((h) => `${h.textContent}:${h.getAttribute("aria-colindex") || ""}`);
    return `${t.textContent.slice(0, 120)} [right ${Math.round(box.right)} of ${window.innerWidth}; ` +
      over.map((e) => `${e.tagName.toLowerCase()}.${e.className} ${e.scrollWidth}>${e.clientWidth}`).join(", ") +
      `; columns ${cols.join(" ")}]`;
  })
"""
"""The tables on the page that scroll sideways (a data grid's columns wider than the grid, an HTML
table wider than its box) or reach past the window's right edge: the start of each one's text, and
what is wider than its box (to tell the cause from a failure's message alone)."""


def wide_tables(page: Page, settle_s: float = 15.0) -> list[str]:
    """The tables that scroll sideways (``WIDE_TABLES``) once the page's grids are drawn: a data grid
    being laid out (its cells' copy still empty) is wider than its box for a moment, so this asks
    again for up to ``settle_s`` seconds and gives what the last look found; a table that stays
    wide is still found."""
    try:
        page.wait_for_function(f"({WIDE_TABLES.strip()})().length === 0", timeout=settle_s * 1000)
    except PlaywrightTimeout:
        pass
    found: list[str] = page.evaluate(WIDE_TABLES)
    return found


SHOWN_IN_FULL = """
(text) => {
  const norm = (s) => s.replace(/\\s+/g, " ").trim();
  const wanted = norm(text);
  // a data grid draws its cells on a canvas (its DOM copy is for screen readers): text outside one
  const holders = [...document.querySelectorAll("body *")].filter(
    (e) => !e.closest('[data-testid="stDataFrame"]') && norm(e.innerText || "").includes(wanted));
  const deepest = holders.filter((e) => ![...e.children].some((c) => holders.includes(c)));
  const clipped = (e) => {
    for (let a = e; a && a !== document.body; a = a.parentElement) {
      const style = getComputedStyle(a);
      if (style.overflowX !== "visible" && a.scrollWidth > a.clientWidth + 1) return true;
    }
    return false;
  };
  return deepest.some((e) => {
    const box = e.getBoundingClientRect();
    return e.checkVisibility({ opacityProperty: true, visibilityProperty: true }) && box.width > 0
      && box.left >= 0 && box.right <= window.innerWidth + 1 && !clipped(e);
  });
}
"""
"""Whether ``text`` (spaces aside) is on the page as visible text, in one element, not cut: not in a
collapsed part, not only in a data grid's canvas, not clipped by a box that scrolls sideways, not
past the window's right edge."""


def shown_in_full(page: Page, text: str) -> bool:
    return bool(page.evaluate(SHOWN_IN_FULL, text))


LAYOUT = """() => [window.innerHeight, ...[...document.querySelectorAll('[data-testid=stMain]')]
  .flatMap((e) => [e.clientHeight, e.scrollHeight])]"""
"""The window's height and the main area's box: its height and its content's."""


def full_page_screenshot(page: Page, path: Path) -> None:
    """A screenshot of the whole page: Streamlit scrolls its main area in a box of the window's height,
    so the window is made as tall as that box's content for the shot (its width, hence the layout
    across, unchanged), then set back."""
    size = page.viewport_size
    assert size is not None
    tall = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll('[data-testid=stMain], section')].map((e) => e.scrollHeight))"
    )
    height = min(int(tall) + 50, 16_000)
    page.set_viewport_size({"width": size["width"], "height": height})
    settled(lambda: page.evaluate(LAYOUT), f"the page laid out {height} px tall", ok=lambda sizes: sizes[0] == height)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(size)


def still_picture(target: Page | Locator, what: str, path: Path | None = None, full_page: bool = False) -> bytes:
    """A screenshot of ``target`` (a page or an element) once it is drawn and still: two in a row
    alike, with more than one colour in it (a chart's canvas is blank until drawn); saved at ``path``
    when given."""
    import io

    import numpy as np
    from PIL import Image

    def shot() -> bytes:
        if isinstance(target, Page):
            return target.screenshot(animations="disabled", full_page=full_page)
        return target.screenshot(animations="disabled")

    def drawn(png: bytes) -> bool:
        rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).reshape(-1, 3)
        return bool((rgb != rgb[0]).any())

    png = settled(shot, f"{what} drawn and still", ok=drawn, every=0.2)
    if path is not None:
        path.write_bytes(png)
    return png


SCROLL_TOP = """() => Math.max(0, ...[document.scrollingElement, ...document.querySelectorAll('[data-testid=stMain], section')]
  .filter((e) => e).map((e) => e.scrollTop))"""
"""How far the page is scrolled down (Streamlit scrolls its main area in a box of its own)."""


def scrolled_past(page: Page, top: float) -> float:
    """How far the page is scrolled once it scrolled past ``top`` and stopped there."""
    return settled(
        lambda: float(page.evaluate(SCROLL_TOP)), f"the page scrolled past {top:.0f} px", ok=lambda t: t > top
    )


def alarm_red_pixels(png: bytes) -> int:
    """How many pixels of a screenshot are an alarm's red (a strong red: red high, green and blue
    low), as the default chart palette's third colour (#ff2b2b) is."""
    import io

    import numpy as np
    from PIL import Image

    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    return int(((rgb[..., 0] >= 200) & (rgb[..., 1] <= 110) & (rgb[..., 2] <= 110)).sum())


def grid_tooltips(page: Page) -> list[str]:
    """The text of every data grid tooltip shown on the page (a column header's help, a cell's)."""
    return list(
        page.evaluate(
            """() => [...document.querySelectorAll('[data-testid=stDataFrameTooltipContent]')]
               .filter((e) => e.checkVisibility({ opacityProperty: true, visibilityProperty: true }))
               .map((e) => e.innerText.slice(0, 80))"""
        )
    )
