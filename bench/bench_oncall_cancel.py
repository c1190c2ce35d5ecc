"""The on-call figure in a real browser: from a fresh load of the Live page to the cancel accepted by
the controller, with the machine quiet and with both cores kept busy.

    PYTHONPATH=. .venv/bin/python bench/bench_oncall_cancel.py [--runs 5] [--busy-workers 2] [--out FILE]

A Kafka 4.x KRaft sandbox of three brokers and the console served by ``streamlit run serve.py`` (as the
e2e tier starts it), Debian's Chromium driven by Playwright at 1440 × 900. Each try: two partitions put
in flight at 2 KB/s, the Live page loaded afresh by a signed-in operator, then "Cancel…" and "Send
the cancel" clicked as soon as each is there; timed from the load to the controller's answer (the
audit entry the cancel writes), with when the button became clickable and the in-flight list and
the partitions table were drawn. ``--runs`` tries quiet, then as many with a load generator: one
busy process per core (``--busy-workers``), each stopping itself after ``--busy-for`` seconds (and
with the benchmark). The load average is recorded with each phase: other work on the machine makes
"quiet" approximate.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROOT = Path(__file__).resolve().parents[1]
SLOW = 2_000
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


def busy(until: float) -> None:
    """Keep one core busy until ``until`` (epoch seconds), then stop."""
    x = 0
    while time.time() < until:
        for _ in range(100_000):
            x = (x * 31 + 7) % 1_000_003


def serve(bs: str, data: Path) -> tuple[subprocess.Popen[bytes], str]:
    from console.sandbox.cluster import free_port

    port = free_port()
    env = dict(
        os.environ,
        CONSOLE_BOOTSTRAP_SERVERS=bs,
        CONSOLE_CLUSTER_NAME="sandbox",
        CONSOLE_DATA_DIR=str(data),
        PYTHONPATH=str(ROOT),
    )
    log = open(data / "streamlit.log", "w")  # noqa: SIM115 - closed with the server
    # serve.py: the app with its routes (the session cookie's among them); a release before it: app.py
    entry = ROOT / "serve.py" if (ROOT / "serve.py").exists() else ROOT / "app.py"
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(entry), "--server.port", str(port),
         "--server.headless", "true"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    for _ in range(240):
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=1) as answer:
                if answer.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("streamlit did not start: see " + str(data / "streamlit.log"))


CLICKABLE = """([name, inDialog]) => {
    const root = inDialog ? document.querySelector('[role=dialog]') : document;
    return !!root && [...root.querySelectorAll('button')].some(
        b => b.innerText.includes(name) && !b.disabled && b.offsetParent !== null);
}"""
"""A button of that name is on the page (or in its dialog), shown and enabled."""


def clickable(page, name: str, in_dialog: bool) -> None:  # type: ignore[no-untyped-def]
    """Wait until a person could click the button, looking at every frame the browser draws: not
    Playwright's ``expect``, whose retries back off to a second apart and would add up to that
    much to the figure."""
    page.wait_for_function(CLICKABLE, arg=[name, in_dialog], polling="raf", timeout=60_000)


def one_try(page, url: str, bs: str, topic: str, store_dir: Path) -> dict[str, float]:  # type: ignore[no-untyped-def]
    from console.storage.store import Store
    from tests.integration.helpers import in_flight, reassign

    reassign(bs, {(topic, p): [2] for p in range(2)})
    deadline = time.time() + 30
    while {p for _, p in in_flight(bs, topic)} != {0, 1}:
        if time.time() > deadline:
            raise SystemExit("the moves did not start")
        time.sleep(0.2)
    before = {a.id for a in Store().audit.entries(action="cancel")}
    loaded = time.time()
    page.goto(url + "/live")
    opener = page.get_by_role("button", name="Cancel…")
    clickable(page, "Cancel…", in_dialog=False)
    ready = time.time()
    opener.click()
    send = page.get_by_role("dialog").get_by_role("button", name="Send the cancel for")
    clickable(page, "Send the cancel for", in_dialog=True)
    send.click()
    while True:
        answered = [a for a in Store().audit.entries(action="cancel") if a.id not in before and a.ref is not None]
        if answered:
            break
        if time.time() - loaded > 120:
            raise SystemExit("no answer to the cancel")
        time.sleep(0.05)
    # the partitions panel drawn (its table is a canvas: its cells are not text on the page)
    table = page.get_by_text("Replicas by broker", exact=True).or_(page.get_by_text("No partition reassignments found"))
    try:
        table.first.wait_for(timeout=60_000)
    except Exception:
        pass
    drawn = time.time()
    page.get_by_role("dialog").get_by_role("button", name="Close").click()
    deadline = time.time() + 60
    while in_flight(bs, topic) and time.time() < deadline:
        time.sleep(0.2)
    return {"answered": answered[0].at - loaded, "ready": ready - loaded, "table": drawn - loaded}


def phase(page, url: str, bs: str, topic: str, data: Path, runs: int, label: str) -> dict[str, object]:  # type: ignore[no-untyped-def]
    rows = []
    for i in range(runs):
        r = one_try(page, url, bs, topic, data)
        rows.append(r)
        print(f"{label} {i + 1}: answered {r['answered']:.2f} s (Cancel… clickable {r['ready']:.2f} s) "
              f"load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    return {
        "phase": label,
        "runs": runs,
        "median_answered_s": statistics.median(r["answered"] for r in rows),
        "max_answered_s": max(r["answered"] for r in rows),
        "median_ready_s": statistics.median(r["ready"] for r in rows),
        "load_average_1m": os.getloadavg()[0],
        "tries": rows,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--busy-workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--busy-for", type=float, default=300.0, help="seconds each busy process runs at most")
    ap.add_argument("--out")
    ap.add_argument("--app", help="serve the app of this checkout (another release, to compare); default: this one")
    args = ap.parse_args()
    global ROOT
    if args.app:
        ROOT = Path(args.app).resolve()
    data = Path(tempfile.mkdtemp(prefix="bench-oncall-"))
    os.environ["CONSOLE_DATA_DIR"] = str(data)
    from playwright.sync_api import sync_playwright

    from console.access.auth import SANDBOX_USERS, write_users
    from console.sandbox import cluster
    from console.sandbox.demo import create_assigned_topic, fill, set_broker_rates
    from tests.e2e.browser import sign_in
    from tests.integration.helpers import throttle_topic_all

    write_users(data / "users.json", {n: (pw, list(r)) for n, (pw, r) in SANDBOX_USERS.items()})
    sb = cluster.up(data / "sandbox", brokers=3, log=lambda m: None)
    bs = sb.bootstrap_servers
    topic = "oncall-bench"
    create_assigned_topic(bs, topic, [[0], [1]])
    fill(bs, topic, 2, 200)
    set_broker_rates(bs, [0, 1, 2], SLOW)
    throttle_topic_all(bs, topic)
    server, url = serve(bs, data)
    results = []
    workers: list[multiprocessing.Process] = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.goto(url + "/live")
            page.get_by_role("heading", name="Live reassignments").wait_for(timeout=60_000)
            sign_in(page)
            results.append(phase(page, url, bs, topic, data, args.runs, "quiet"))
            until = time.time() + args.busy_for
            workers = [
                multiprocessing.Process(target=busy, args=(until,), daemon=True) for _ in range(args.busy_workers)
            ]
            for w in workers:
                w.start()
            time.sleep(5)  # the load average starts to show it
            results.append(phase(page, url, bs, topic, data, args.runs, "loaded"))
            browser.close()
    finally:
        for w in workers:
            w.terminate()
        server.terminate()
        server.wait(timeout=30)
        cluster.down(data / "sandbox", log=lambda m: None)
    for r in results:
        print(f"{r['phase']}: median {r['median_answered_s']:.2f} s, max {r['max_answered_s']:.2f} s, "
              f"Cancel… clickable after {r['median_ready_s']:.2f} s (median); load average {r['load_average_1m']:.1f}")  # fmt: skip
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
