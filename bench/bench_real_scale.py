"""The console and the official tools side by side on a large real cluster, and what the console
costs the brokers there.

Builds (once) a Kafka 4.4 sandbox of three combined nodes with ``--topics`` × ``--partitions``
partitions, replication factor 1 (40 × 1,000: about 13,300 replicas per broker), puts
``--moving`` of them in flight with the official ``kafka-reassign-partitions --execute --throttle
1000`` (each filled with 40 KB first, so that they stay in flight), then measures, medians of
``--runs``:

* ``list`` against the official ``--list``; ``state --json`` against ``kafka-topics --describe``;
  ``validate`` of the plan against the official ``--verify``;
* cancel of everything in flight, the console's ``cancel --all --yes`` against the official
  ``--cancel``: the time to the tool's exit, until nothing is listed in flight, and until every
  broker shows every partition back at its original replicas (each broker asked, Metadata);
* the Live page in Chromium (1440 × 900) on a fresh server, signed out and signed in: the time
  to the on-call line, to the Cancel button (enabled when signed in), to the whole page; the
  server's memory after;
* the brokers' CPU (utime + stime of each broker process, /proc) per minute with no console,
  with one Live viewer and with ten; in each, the time from a cancel the controller took (the
  official tool's) to every broker showing it; and what one refresh asks of the cluster, request
  by request (the requests the gateway tells its listeners of, :mod:`console.adapters.kafka.requests`):
  a full one (every partition's sizes, every topic's configs) and one in between (those in flight).

``python -m bench.bench_real_scale --data-dir /tmp/scale`` (keeps the sandbox with ``--keep``;
``--reuse`` measures on the one running there). Results go to stdout and to ``--out`` as JSON.
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
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_viewers import cpu_s, mem_mib, sign_in, start_server
from components.session_routes import COOKIE
from console.access.sandbox_users import ensure_sandbox_users
from console.access.settings import ConnectionSettings
from console.adapters.kafka import KafkaGateway
from console.adapters.kafka.requests import Sent
from console.core.model import BrokerId
from console.sandbox import cluster
from console.sandbox.cluster import Sandbox
from console.sandbox.demo import create_assigned_topic, fill
from console.state.reader import ClusterReader

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
TOPICS_TOOL = "org.apache.kafka.tools.TopicCommand"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def topic_name(t: int) -> str:
    return f"scale-{t:02d}"


# -- the cluster -------------------------------------------------------------------------------------------
def build(data: Path, topics: int, partitions: int, moving: int) -> tuple[Sandbox, dict[str, float]]:
    """The sandbox, its topics (every log created: each partition has a leader), the partitions to
    move filled; how long each step took."""
    took: dict[str, float] = {}
    t0 = time.monotonic()
    sb = cluster.up(data, brokers=3, log=log, timeout=600)
    took["brokers_up_s"] = time.monotonic() - t0
    bs = sb.bootstrap_servers
    t0 = time.monotonic()
    for t in range(topics):
        create_assigned_topic(bs, topic_name(t), [[p % 3] for p in range(partitions)], timeout_ms=600_000)
    took["topics_created_s"] = time.monotonic() - t0
    kafka = gateway(bs)
    want = topics * partitions
    while True:
        _, _, _, parts = kafka.reads.read_metadata()
        led = sum(1 for k, m in parts.items() if k[0].startswith("scale-") and m.leader is not None)
        if led >= want:
            break
        time.sleep(5)
    took["every_log_created_s"] = time.monotonic() - t0
    t0 = time.monotonic()
    per_topic = moving // topics
    for t in range(topics):
        fill(bs, topic_name(t), per_topic, 40, timeout_s=600)
    took["filled_s"] = time.monotonic() - t0
    kafka.close()
    return sb, took


def gateway(bs: str) -> KafkaGateway:
    return KafkaGateway(ConnectionSettings({"bootstrap.servers": bs}, timeout_s=30.0))


def plan_of(topics: int, moving: int) -> dict[str, Any]:
    per_topic = moving // topics
    return {
        "version": 1,
        "partitions": [
            {"topic": topic_name(t), "partition": p, "replicas": [(p % 3 + 1) % 3]}
            for t in range(topics)
            for p in range(per_topic)
        ],
    }


def official(sb: Sandbox, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    argv = sb.tool_argv(REASSIGN, "--bootstrap-server", sb.bootstrap_servers, *args, heap="1g")
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


def put_in_flight(sb: Sandbox, plan: Path, n: int) -> int:
    """The official ``--execute --additional --throttle 1000`` (``--additional``: some may be in flight
    still); how many are listed in flight once it settled."""
    done = official(sb, "--execute", "--additional", "--throttle", "1000", "--reassignment-json-file", str(plan))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    kafka = gateway(sb.bootstrap_servers)
    seen = -1
    for _ in range(60):
        now = len(kafka.list_reassignments())
        if now == seen and now > 0:
            break
        seen = now
        time.sleep(2)
    kafka.close()
    return seen


def originals(n_topics: int, moving: int) -> dict[tuple[str, int], tuple[int, ...]]:
    per_topic = moving // n_topics
    return {(topic_name(t), p): (p % 3,) for t in range(n_topics) for p in range(per_topic)}


def until_brokers_agree(kafka: KafkaGateway, want: dict[tuple[str, int], tuple[int, ...]], t0: float) -> float:
    """Seconds from ``t0`` until every broker shows every partition of ``want`` as wanted (asked once a second)."""
    left = dict(want)
    while left:
        views = kafka.replicas_by_broker(left)
        if all(v.error is None for v in views):
            agreed = {k for k, r in left.items() if all(set(v.replicas.get(k, ())) == set(r) for v in views)}
            for k in agreed:
                del left[k]
        if left:
            if time.monotonic() - t0 > 600:
                return float("nan")
            time.sleep(1)
    return time.monotonic() - t0


# -- the command line, side by side ---------------------------------------------------------------------------
def timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, subprocess.CompletedProcess[str]]:
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900)
    return time.perf_counter() - t0, done


def cli_side_by_side(sb: Sandbox, plan: Path, runs: int, env: dict[str, str]) -> dict[str, Any]:
    bs = sb.bootstrap_servers
    console = [PY, "-m", "console"]
    pairs = {
        "list": (
            [*console, "list", "--bootstrap-server", bs],
            sb.tool_argv(REASSIGN, "--bootstrap-server", bs, "--list", heap="1g"),
        ),
        "state": (
            [*console, "state", "--json", "--bootstrap-server", bs],
            sb.tool_argv(TOPICS_TOOL, "--bootstrap-server", bs, "--describe", heap="1g"),
        ),
        "validate": (
            [*console, "validate", str(plan), "--bootstrap-server", bs],
            sb.tool_argv(
                REASSIGN, "--bootstrap-server", bs, "--verify", "--reassignment-json-file", str(plan), heap="1g"
            ),
        ),
    }
    out: dict[str, Any] = {}
    for name, (mine, theirs) in pairs.items():
        got: dict[str, list[float]] = {"console": [], "official": []}
        sizes: dict[str, int] = {}
        for run in range(runs):
            for tool, argv in (("console", mine), ("official", theirs))[:: 1 if run % 2 == 0 else -1]:
                s, done = timed(argv, env if tool == "console" else None)
                got[tool].append(s)
                sizes[tool] = len(done.stdout)
                log(f"  {name} {tool}: {s:.2f} s (exit {done.returncode}, {len(done.stdout):,} bytes out)")
        med = {t: statistics.median(v) for t, v in got.items()}
        out[name] = {
            **{f"{t}_s": round(v, 2) for t, v in med.items()},
            "ratio": round(med["console"] / med["official"], 2),
        }
        out[name]["bytes"] = sizes
    return out


def cancels(sb: Sandbox, plan: Path, runs: int, env: dict[str, str], want: dict[Any, Any], n: int) -> dict[str, Any]:
    """Each tool's cancel of everything in flight: exit, none listed, every broker showing it back."""
    bs = sb.bootstrap_servers
    mine = [PY, "-m", "console", "cancel", "--bootstrap-server", bs, "--all", "--yes", "--json"]
    theirs = sb.tool_argv(
        REASSIGN, "--bootstrap-server", bs, "--cancel", "--reassignment-json-file", str(plan), heap="1g"
    )
    got: dict[str, list[tuple[float, float, float]]] = {"console": [], "official": []}
    said: list[str] = []
    for run in range(runs):
        for tool, argv in (("console", mine), ("official", theirs))[:: 1 if run % 2 == 0 else -1]:
            flying = put_in_flight(sb, plan, n)
            kafka = gateway(bs)
            kafka.list_reassignments()
            t0 = time.monotonic()
            done = subprocess.run(
                argv, capture_output=True, text=True, env=env if tool == "console" else None, timeout=900
            )
            exited = time.monotonic() - t0
            while kafka.list_reassignments():
                time.sleep(0.1)
            cleared = time.monotonic() - t0
            agreed = until_brokers_agree(kafka, want, t0)
            kafka.close()
            got[tool].append((exited, cleared, agreed))
            if tool == "console" and done.stdout.strip():
                outcomes = Counter(r["outcome"] for r in json.loads(done.stdout.strip().splitlines()[-1])["outcomes"])
                said.append(json.dumps(outcomes))
            log(
                f"  cancel {tool}: {flying} in flight; exit {exited:.1f} s, none listed {cleared:.1f} s, brokers agree {agreed:.1f} s"
            )
    med = {t: [statistics.median(x[i] for x in v) for i in range(3)] for t, v in got.items()}
    return {
        t: {"exit_s": round(m[0], 2), "none_listed_s": round(m[1], 2), "brokers_agree_s": round(m[2], 2)}
        for t, m in med.items()
    } | {"ratio_exit": round(med["console"][0] / med["official"][0], 2), "console_said": said}


# -- the pages and the brokers' load ---------------------------------------------------------------------------
@contextmanager
def server(env: dict[str, str], data: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    proc, url = start_server("new", env, data)
    try:
        yield proc, url
    finally:
        proc.terminate()
        proc.wait(30)


def live_page(url: str, signed_in: bool) -> dict[str, float]:
    """Seconds from navigation to the on-call line, to the Cancel button (enabled when signed in), to the whole page."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        if signed_in:
            page.goto(url)
            sign_in(page, "operator", "operator-secret")
            # the page trades its sign-in for the session cookie with a fetch of its own: leave only then
            deadline = time.monotonic() + 60
            while not any(c["name"] == COOKIE for c in page.context.cookies()) and time.monotonic() < deadline:
                page.wait_for_timeout(100)
            page.goto("about:blank")
        t0 = time.monotonic()
        page.goto(url)
        main = page.get_by_test_id("stMain")
        expect(main.get_by_text(re.compile(r"In flight now \(\d+\)"))).to_be_visible(timeout=600_000)
        line = time.monotonic() - t0
        button = page.get_by_role("button", name="Cancel…")
        (expect(button).to_be_enabled if signed_in else expect(button).to_be_visible)(timeout=600_000)
        cancel = time.monotonic() - t0
        expect(main.get_by_test_id("stMetric").filter(has_text="Slowest broker")).to_be_visible(timeout=600_000)
        expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-script-state", "notRunning", timeout=600_000)
        whole = time.monotonic() - t0
        browser.close()
    return {"on_call_line_s": round(line, 2), "cancel_s": round(cancel, 2), "whole_page_s": round(whole, 2)}


def pages(env: dict[str, str], data: Path, runs: int) -> dict[str, Any]:
    """Live on a fresh server each time: its first page (signed out: the server's first script run
    imports the pages' libraries and reads the cluster first), then signed out and signed in on the
    server so warmed, as a person meets a console that has been up."""
    got: dict[str, list[dict[str, float]]] = {"first_page_signed_out": [], "signed_out": [], "signed_in": []}
    rss = 0.0
    for _ in range(runs):
        with server(env, data) as (proc, url):
            for key in got:
                got[key].append(live_page(url, key == "signed_in"))
                log(f"  Live {key.replace('_', ' ')}: {got[key][-1]}")
            rss = mem_mib(proc.pid, "VmRSS")
        log(f"  server {rss:.0f} MiB")
    return {k: {m: statistics.median(g[m] for g in v) for m in v[0]} for k, v in got.items()} | {
        "server_rss_mib": round(rss)
    }


def broker_cpu(sb: Sandbox, seconds: float) -> dict[str, float]:
    """CPU seconds per minute of each broker process over ``seconds``."""
    pids = {p.name: p.pid for p in sb.procs if p.pid}
    before = {n: cpu_s(pid) for n, pid in pids.items()}
    time.sleep(seconds)
    return {n: round((cpu_s(pid) - before[n]) * 60 / seconds, 2) for n, pid in pids.items()}


def viewers(url: str, n: int) -> Callable[[], None]:
    """``n`` Live pages open (one headless Chromium); returns what closes them."""
    from playwright.sync_api import expect, sync_playwright

    pw = sync_playwright().start()
    browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
    for _ in range(n):
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(url)
        expect(page.get_by_test_id("stMetric").filter(has_text="Slowest broker")).to_be_visible(timeout=600_000)

    def close() -> None:
        browser.close()
        pw.stop()

    return close


def load(
    sb: Sandbox, plan: Path, env: dict[str, str], data: Path, want: dict[Any, Any], n: int, window: float
) -> dict[str, Any]:
    """The brokers' CPU and the time until every broker shows an official cancel, with 0, 1 and 10 Live viewers."""
    out: dict[str, Any] = {}
    for count in (0, 1, 10):
        put_in_flight(sb, plan, n)
        close: Callable[[], None] | None = None
        with server(env, data) as (_, url):
            if count:
                close = viewers(url, count)
            cpu = broker_cpu(sb, window)
            kafka = gateway(sb.bootstrap_servers)
            t0 = time.monotonic()
            done = official(sb, "--cancel", "--reassignment-json-file", str(plan))
            assert done.returncode == 0, done.stderr[-2000:]
            agreed = until_brokers_agree(kafka, want, t0)
            kafka.close()
            if close is not None:
                close()
        out[f"{count}_viewers"] = {"broker_cpu_s_per_min": cpu, "official_cancel_brokers_agree_s": round(agreed, 1)}
        log(f"  {count} viewers: brokers' CPU s/min {cpu}; official cancel shown by every broker after {agreed:.1f} s")
    return out


def requests_by_kind(told: list[Sent]) -> dict[str, dict[str, int]]:
    """The requests told, by Kafka API: how many, and how many partitions or resources they named."""
    out: dict[str, dict[str, int]] = {}
    for s in told:
        kind = out.setdefault(s.api.value, {"requests": 0, "items": 0})
        kind["requests"] += 1
        kind["items"] += s.items
    return dict(sorted(out.items()))


def scale_reader(sb: Sandbox, sizes_every_s: float = 60.0) -> ClusterReader:
    return ClusterReader(
        ConnectionSettings(
            {"bootstrap.servers": sb.bootstrap_servers}, name="scale", timeout_s=30.0, sizes_every_s=sizes_every_s
        )
    )


def one_refresh(sb: Sandbox) -> dict[str, Any]:
    """What one refresh asks of the cluster, by request kind, and how long it takes (median of
    three): a full one (every partition's sizes and every topic's configs, as a submit reads) and
    one between two full ones (a Live refresh within the minute: those of the partitions in flight)."""
    told: list[Sent] = []
    reader = scale_reader(sb)
    reader.kafka.requests.listen(told.append)
    out: dict[str, Any] = {}
    try:
        for kind, full in (("full", True), ("in_between", False)):
            took, asked = [], {}
            for _ in range(3):
                told.clear()
                t0 = time.monotonic()
                state = reader.snapshot(full=full)
                took.append(time.monotonic() - t0)
                asked = requests_by_kind(told)
            out[kind] = {"seconds": round(statistics.median(took), 2), "requests": asked}
        out["partitions"] = len(state.partitions)
        out["in_flight"] = len(state.in_flight)
    finally:
        reader.close()
    return out


def reads_load(sb: Sandbox, window: float, every: float = 5.0) -> dict[str, Any]:
    """The brokers' CPU with no console, then while one reader takes a snapshot every ``every``
    seconds (what a refresh costs, one read per refresh whatever the number of viewers): reading
    every partition's sizes each time (``sizes_every_s`` 0), and at the default (once a minute)."""
    out: dict[str, Any] = {"idle_cpu_s_per_min": broker_cpu(sb, window)}
    pids = {p.name: p.pid for p in sb.procs if p.pid}
    for label, sizes_every_s in (("full_every_time", 0.0), ("default", 60.0)):
        told: list[Sent] = []
        reader = scale_reader(sb, sizes_every_s)
        reader.kafka.requests.listen(told.append)
        before = {n: cpu_s(pid) for n, pid in pids.items()}
        t0 = time.monotonic()
        reads = 0
        while time.monotonic() - t0 < window:
            started = time.monotonic()
            reader.snapshot()
            reads += 1
            time.sleep(max(0.0, every - (time.monotonic() - started)))
        took = time.monotonic() - t0
        reader.close()
        out[label] = {
            "reading_cpu_s_per_min": {n: round((cpu_s(pid) - before[n]) * 60 / took, 2) for n, pid in pids.items()},
            "reads": reads,
            "seconds": round(took, 1),
            "requests": requests_by_kind(told),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "bench-real-scale")
    ap.add_argument("--topics", type=int, default=40)
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--moving", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--window", type=float, default=60.0, help="seconds the brokers' CPU is measured over")
    ap.add_argument("--reuse", action="store_true", help="measure on the sandbox already running in --data-dir")
    ap.add_argument("--keep", action="store_true", help="leave the sandbox running")
    ap.add_argument("--only", default="refresh,cli,cancel,pages,load")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    data = args.data_dir.resolve()
    results: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "load": os.getloadavg()}}
    if args.reuse:
        sb = cluster.status(data)
        assert sb is not None, f"no sandbox runs in {data}"
    else:
        sb, results["build"] = build(data, args.topics, args.partitions, args.moving)
        log(f"built: {results['build']}")
    work = data / "bench"
    work.mkdir(exist_ok=True)
    plan = work / "plan.json"
    plan.write_text(json.dumps(plan_of(args.topics, args.moving)))
    env = {**os.environ, "CONSOLE_DATA_DIR": str(work / "console"), "PYTHONPATH": str(ROOT)}
    env |= {"CONSOLE_BOOTSTRAP_SERVERS": sb.bootstrap_servers, "CONSOLE_CLUSTER_NAME": "scale"}
    env["CONSOLE_USERS_FILE"] = str(ensure_sandbox_users(data))  # the sandbox's users, as `make demo`
    want = {k: tuple(BrokerId(b) for b in r) for k, r in originals(args.topics, args.moving).items()}
    only = set(args.only.split(","))
    try:
        results["in_flight"] = put_in_flight(sb, plan, args.moving)
        if "refresh" in only:
            results["one_refresh"] = one_refresh(sb)
            log(f"one refresh: {results['one_refresh']}")
        if "cli" in only:
            results["cli"] = cli_side_by_side(sb, plan, args.runs, env)
        if "pages" in only:
            results["pages"] = pages(env, work, args.runs)
        if "cancel" in only:
            results["cancel"] = cancels(sb, plan, args.runs, env, want, args.moving)
        if "reads" in only:
            results["reads_load"] = reads_load(sb, args.window)
            log(f"reads load: {results['reads_load']}")
        if "load" in only:
            results["load"] = load(sb, plan, env, work, want, args.moving, args.window)
    finally:
        print(json.dumps(results, indent=2, default=str))
        if args.out:
            args.out.write_text(json.dumps(results, indent=2, default=str))
        if not args.keep:
            cluster.down(data, log=log)


if __name__ == "__main__":
    main()
