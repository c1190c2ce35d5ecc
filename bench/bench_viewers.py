"""Many people on the Live page at once: what the console's server costs, and whether everyone is served.

The console is started as `make demo` starts it: a sandbox in a temporary data dir
(`python -m console sandbox up --demo-reassignment`, the `payments` move) plus a throttled move of
`clickstream`, 30 partitions in flight, then `streamlit run app.py` with the repository's
.streamlit/config.toml. For each number of viewers N, a fresh server and N headless Chromium
pages on the Live page for ``--seconds``:

* the refreshes each page saw (the changes of its "last refreshed HH:MM:SS" caption, counted in
  the page), the slowest page's count; how long the slowest page took to load;
* the server's CPU seconds per minute (utime + stime of the streamlit process, /proc) and its
  resident memory (now and peak); the browser's CPU for comparison (it runs on the same machine);
* the on-call cancel while the N watch: an operator's page (signed in, on the Live page as well)
  clicks "Cancel…" and the dialog's "Send the cancel for …"; the time from the first click to the
  controller's answer in the audit log. The move is started again for the next N.

    PYTHONPATH=. .venv/bin/python bench/bench_viewers.py [--viewers 1,10,20,50] [--seconds 60]
        [--old-settings | --settings new,old,freeze] [--screenshots DIR] [--json FILE]

Settings: ``new`` is .streamlit/config.toml as it is; ``old`` the settings the console ran with
before (Streamlit's defaults: the file watcher on, a full garbage collection after every script run;
``--old-settings`` measures both, side by side); ``freeze`` the collection after every run kept but
the objects loaded at start-up frozen out of the collector (``gc.freeze()``) first. A benchmark, not
a test: it prints figures; expect 2 minutes per N and setting.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from console.sandbox.cluster import free_port
from tests.e2e.browser import CHROMIUM_ARGS as BROWSER_ARGS

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
CHROMIUM_ARGS = [
    *BROWSER_ARGS,  # the browser tests' Chromium
    # every page counts as one in front, as each person's own browser would be
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
]
OLD_FLAGS = ["--server.fileWatcherType", "auto", "--runner.postScriptGC", "true"]
SECOND_MOVE = "clickstream"  # with the demo's `payments` move: 30 partitions in flight
THROTTLE = 2_000  # B/s per broker: the moves last about half an hour, well beyond a round
TICKS = os.sysconf("SC_CLK_TCK")

# Counts, in the page, each change of the "last refreshed HH:MM:SS" caption (and when it was first seen).
WATCH_JS = """() => {
  window.__refreshes = [];
  window.__last = null;
  setInterval(() => {
    const el = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
      .find(e => e.innerText.includes('last refreshed'));
    const m = el && el.innerText.match(/last refreshed (\\d\\d:\\d\\d:\\d\\d)/);
    if (m && m[1] !== window.__last) { window.__last = m[1]; window.__refreshes.push(Date.now()); }
  }, 200);
}"""

# What the freeze setting runs instead of `streamlit run`: load what the app loads, freeze it, go on.
FREEZE = """
import gc, sys
import altair as alt, pandas as pd, pyarrow, streamlit
import components.actions, components.deps, components.widgets, console.present.charts, console.present.live
alt.Chart(pd.DataFrame({"a": [1]})).mark_point().encode(x="a").to_dict()  # Altair's schema, loaded once
gc.collect()
gc.freeze()
from streamlit.web.cli import main
sys.argv = ["streamlit", *sys.argv[1:]]
main()
"""


@dataclass
class Round:
    settings: str
    viewers: int
    seconds: float
    in_flight: tuple[int, int]
    """Partitions in flight when the minute started and when it ended."""
    server_cpu_s_loading: float
    """The server's CPU seconds while the N pages loaded."""
    refreshes_min: int
    refreshes_median: float
    pages_served: int
    slowest_load_s: float
    server_cpu_s_per_min: float
    server_rss_mib: float
    server_peak_mib: float
    browser_cpu_s_per_min: float
    cancel_dialog_s: float | None
    cancel_answer_s: float | None
    cancel_total_s: float | None
    cancel_outcome: str
    load_avg: float


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def mem_mib(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def tree_cpu_s(pid: int) -> float:
    import psutil

    total = 0.0
    try:
        root = psutil.Process(pid)
        for p in [root, *root.children(recursive=True)]:
            try:
                t = p.cpu_times()
                total += t.user + t.system
            except psutil.Error:
                pass
    except psutil.Error:
        pass
    return total


def start_moves(env: dict[str, str]) -> dict[str, Any]:
    """The sandbox as `make demo` starts it (reused when it runs), the demo move, and the second move
    (once the last round's cancel is through: nothing in flight)."""
    running = subprocess.run(
        [PY, "-m", "console", "sandbox", "status"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if running.returncode == 0:
        bs = json.loads(running.stdout)["bootstrap_servers"]
        deadline = time.monotonic() + 120
        while in_flight(bs) and time.monotonic() < deadline:
            time.sleep(1)
    out = subprocess.run(
        [PY, "-m", "console", "sandbox", "up", "--demo-reassignment"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    info: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    from kafka.admin import KafkaAdminClient

    from console.sandbox.demo import set_broker_rates, start_demo_reassignment

    bs = info["bootstrap_servers"]
    kp = KafkaAdminClient(bootstrap_servers=bs.split(","), client_id="bench-viewers")
    try:
        moving = {tp.topic for tp in kp.list_partition_reassignments()}
    finally:
        kp.close()
    brokers = [int(b["id"]) for b in info["brokers"]]
    if SECOND_MOVE not in moving:
        start_demo_reassignment(bs, brokers, topic=SECOND_MOVE, log=log)
    set_broker_rates(bs, brokers, THROTTLE)
    return info


def in_flight(bs: str) -> int:
    from kafka.admin import KafkaAdminClient

    kp = KafkaAdminClient(bootstrap_servers=bs.split(","), client_id="bench-viewers")
    try:
        return len(kp.list_partition_reassignments())
    finally:
        kp.close()


def start_server(settings: str, env: dict[str, str], data: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    flags = ["--server.port", str(port), "--server.headless", "true"]
    if settings == "old":
        flags += OLD_FLAGS
    if settings == "freeze":
        cmd = [PY, "-c", FREEZE, "run", str(ROOT / "app.py"), *flags, "--runner.postScriptGC", "true"]
    else:
        # as `make demo` serves it: serve.py (its session cookie routes: a sign-in outlasts a reload)
        cmd = [PY, "-m", "streamlit", "run", str(ROOT / "serve.py"), *flags]
    with open(data / f"streamlit-{settings}.log", "ab") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).status == 200:
                return proc, url
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    raise SystemExit(f"streamlit did not start (see {data}/streamlit-{settings}.log)")


def sign_in(page: Any, user: str, password: str) -> None:
    from playwright.sync_api import expect

    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_label("User").fill(user)
    sidebar.get_by_role("textbox", name="Password").fill(password)
    sidebar.get_by_role("button", name="Sign in").click()
    expect(sidebar.get_by_text(f"Signed in as {user}")).to_be_visible(timeout=120_000)


def cancel_everything(page: Any) -> tuple[float | None, float | None, float | None, str]:
    """The on-call's two clicks; seconds from "Cancel…" to the dialog, from the dialog's button to
    the controller's answer (audit log), and in all."""
    from playwright.sync_api import expect

    from console.storage.store import Store

    before = {a.id for a in Store().audit.entries(action="cancel")}
    opener = page.get_by_role("button", name="Cancel…")
    expect(opener).to_be_enabled(timeout=60_000)
    clicked = time.time()
    opener.click()
    send = page.get_by_role("dialog").get_by_role("button", name=re.compile("Send the cancel for"))
    try:
        expect(send).to_be_visible(timeout=120_000)
    except AssertionError:
        return None, None, None, "the dialog did not open"
    dialog = time.time() - clicked
    sent = time.time()
    send.click()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        answers = [a for a in Store().audit.entries(action="cancel") if a.id not in before and a.ref is not None]
        if answers:
            return dialog, answers[0].at - sent, answers[0].at - clicked, answers[0].outcome
        time.sleep(0.05)
    return dialog, None, None, "no answer"


def one_round(
    pw: Any, settings: str, n: int, seconds: float, env: dict[str, str], data: Path, shots: Path | None
) -> Round:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import expect

    from console.access.auth import SANDBOX_USERS

    info = start_moves(env)
    bs = info["bootstrap_servers"]
    moving = in_flight(bs)
    env = {**env, "CONSOLE_USERS_FILE": info["console_users_file"]}  # the sandbox's users, as `make demo`
    proc, url = start_server(settings, env, data)
    browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
    try:
        oncall = browser.new_context(viewport={"width": 1400, "height": 1300}).new_page()
        oncall.goto(f"{url}/live")
        expect(oncall.get_by_role("heading", name="Live reassignments")).to_be_visible(timeout=180_000)
        sign_in(oncall, "operator", SANDBOX_USERS["operator"][0])
        # the server's first run pays for loading pandas, Altair and its schema: done before the minute
        expect(oncall.get_by_text("Replicas by broker")).to_be_visible(timeout=300_000)
        viewers = browser.new_context(viewport={"width": 1400, "height": 1100})
        pages = []
        opened, cpu_opened = time.monotonic(), cpu_s(proc.pid)
        unreached = 0  # pages the server did not even answer (navigation timed out): not served
        for _ in range(n):
            page = viewers.new_page()
            try:
                page.goto(url, wait_until="commit")
                page.evaluate(WATCH_JS)
            except PlaywrightError:
                unreached += 1
                continue
            pages.append(page)
        loaded = []
        for page in pages:  # each page's first picture (a page that never shows one counts as not served)
            try:
                expect(page.get_by_text(re.compile(r"last refreshed \d\d:\d\d:\d\d"))).to_be_visible(
                    timeout=max(1.0, 180 - (time.monotonic() - opened)) * 1000
                )
                loaded.append(time.monotonic() - opened)
            except AssertionError:
                pass
        cpu_loading = cpu_s(proc.pid) - cpu_opened
        moving = in_flight(bs)
        log(f"  {settings}, {n} viewers ({moving} partitions in flight): {len(loaded)} pages loaded, watching ...")
        cpu0, browser0, t0 = cpu_s(proc.pid), tree_cpu_s(browser_pid(browser)), time.monotonic()
        start_ms = time.time() * 1000
        time.sleep(seconds)
        elapsed = time.monotonic() - t0
        cpu = (cpu_s(proc.pid) - cpu0) * 60 / elapsed
        browser_cpu = (tree_cpu_s(browser_pid(browser)) - browser0) * 60 / elapsed
        rss, peak = mem_mib(proc.pid, "VmRSS"), mem_mib(proc.pid, "VmHWM")
        counts = []
        for page in pages:
            seen = page.evaluate("() => window.__refreshes || []")
            counts.append(sum(1 for at in seen if start_ms < at <= start_ms + seconds * 1000))
        counts += [0] * unreached
        if shots is not None:
            shots.mkdir(parents=True, exist_ok=True)
            for i in sorted({0, len(pages) // 2, len(pages) - 1}):
                pages[i].screenshot(path=str(shots / f"{settings}-{n}-viewer{i + 1}.png"), full_page=True)
        load = os.getloadavg()[0]
        moving_end = in_flight(bs)
        dialog, answer, total, outcome = (
            cancel_everything(oncall) if moving_end else (None, None, None, "nothing in flight")
        )  # while the N still watch
        if shots is not None:
            oncall.screenshot(path=str(shots / f"{settings}-{n}-oncall.png"), full_page=True)
        return Round(
            settings,
            n,
            elapsed,
            (moving, moving_end),
            cpu_loading,
            min(counts, default=0),
            statistics.median(counts) if counts else 0.0,
            len(loaded),
            max(loaded, default=float("nan")),
            cpu,
            rss,
            peak,
            browser_cpu,
            dialog,
            answer,
            total,
            outcome,
            load,
        )
    finally:
        browser.close()
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


def browser_pid(browser: Any) -> int:
    """The Chromium process's id (Playwright keeps it on the connection's transport)."""
    import psutil

    me = psutil.Process()
    found = [p for p in me.children(recursive=True) if "chromium" in (p.name() or "")]
    roots = [p for p in found if p.ppid() not in {q.pid for q in found}]
    return roots[0].pid if roots else me.pid


def fmt(x: float | None, digits: int = 1) -> str:
    return "—" if x is None or x != x else f"{x:.{digits}f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--viewers", default="1,10,20,50")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--old-settings", action="store_true", help="measure the old settings too, side by side")
    ap.add_argument("--settings", default=None, help="comma-separated: new, old, freeze")
    ap.add_argument("--screenshots", type=Path, default=None, help="save some pages' screenshots here")
    ap.add_argument("--json", type=Path, default=None, help="append each round as a JSON line here")
    ap.add_argument("--keep-sandbox", action="store_true", help="leave the sandbox running at the end")
    a = ap.parse_args()
    settings = a.settings.split(",") if a.settings else (["new", "old"] if a.old_settings else ["new"])
    sizes = [int(x) for x in a.viewers.split(",")]
    data = Path(tempfile.mkdtemp(prefix="bench-viewers-"))
    os.environ["CONSOLE_DATA_DIR"] = str(data)
    for k in ("CONSOLE_BOOTSTRAP_SERVERS", "CONSOLE_ZOOKEEPER", "CONSOLE_CLUSTER_NAME", "CONSOLE_COLLECT_EVERY"):
        os.environ.pop(k, None)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    log(f"data dir {data}; settings {settings}; viewers {sizes}; {a.seconds:.0f} s each")
    from playwright.sync_api import sync_playwright

    rounds: list[Round] = []
    try:
        with sync_playwright() as pw:
            for n in sizes:
                for s in settings:
                    r = one_round(pw, s, n, a.seconds, env, data, a.screenshots)
                    rounds.append(r)
                    log(f"  -> {json.dumps(asdict(r))}")
                    if a.json:
                        with a.json.open("a") as f:
                            f.write(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M"), **asdict(r)}) + "\n")
    finally:
        if not a.keep_sandbox:
            subprocess.run([PY, "-m", "console", "sandbox", "down"], cwd=ROOT, env=env, check=False)
    print(
        "| settings | viewers | in flight | pages served | refreshes in the minute, slowest page (median) | slowest load "
        "(server CPU-s) | server CPU-s / min | server RSS (peak) | browser CPU-s / min | cancel: click → dialog, → answer, "
        "in all | load avg |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rounds:
        print(
            f"| {r.settings} | {r.viewers} | {r.in_flight[0]}→{r.in_flight[1]} | {r.pages_served}/{r.viewers} | "
            f"{r.refreshes_min} ({fmt(r.refreshes_median)}) | {fmt(r.slowest_load_s)} s ({fmt(r.server_cpu_s_loading)}) | "
            f"{fmt(r.server_cpu_s_per_min)} | {r.server_rss_mib:.0f} MiB ({r.server_peak_mib:.0f}) | "
            f"{fmt(r.browser_cpu_s_per_min)} | {fmt(r.cancel_dialog_s, 2)} s, {fmt(r.cancel_answer_s, 2)} s, "
            f"{fmt(r.cancel_total_s, 2)} s ({r.cancel_outcome}) | {r.load_avg:.1f} |"
        )


if __name__ == "__main__":
    main()
