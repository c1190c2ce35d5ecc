"""The guardrails' figures: how long from an event on a real cluster to the run's decision, rule by
rule, and what the checks cost per poll on a big cluster.

    PYTHONPATH=. .venv/bin/python bench/bench_guardrails.py synthetic [--partitions 100000] [--moving 10000]
        [--later 10000] [--polls 9]
    PYTHONPATH=. .venv/bin/python bench/bench_guardrails.py sandbox [--tries 3] [--every 1.0]

``synthetic``: a cluster built in memory (``bench/synthetic.py``: 50 brokers on 5 racks, RF 3, a log
size for every replica) with ``--moving`` partitions in flight (the run's wave in flight), the run's
later waves (``--later`` partitions more), ``min.insync.replicas`` 2 on every topic, 1 % of the
partitions with a follower out of the ISR (at min ISR: the rule has something to find), and the
run's throttles set as it set them. Each poll is a fresh snapshot (the copies grown by a second's
worth), as the executor reads one per step: what :meth:`console.runs.guard.Guard.check` takes on it
is timed (every rule, and the copy rates it keeps between polls; wall and CPU time), and beside it the
parse of the run's waves that gives the guard its view (the executor does it when they change: a
wave sent, done or cut). Median and slowest of ``--polls``.

``sandbox``: runs on a real 5-broker Kafka sandbox (the default release) driven by the console's
worker stepping every ``--every`` seconds (the default poll); for each rule an event, timed to the
guardrail's audit entry (the decision, written with it): broker 4, the next wave's destination,
killed with ``kill -9`` (``destination``); two of the three controllers paused with SIGSTOP
(``quorum``); a broker rate raised, then one lowered, with ``kafka-configs`` (``throttles``); a
topic's ``min.insync.replicas`` set with ``kafka-configs`` to 2, then 3, while a follower of a
partition of the run is out of its ISR and online (``min-isr``: on a sandbox of its own whose
session timeout outlasts the paused follower). A config change is timed from its commit (the
controllers' log), a kill or a pause from the signal; where Kafka takes time to show the event
(fencing a killed broker: its session timeout), that share is given too.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.synthetic import views
from console.access.auth import Identity
from console.access.settings import ConnectionSettings
from console.core.limits import FOLLOWER_LIST, FOLLOWER_RATE, LEADER_LIST, LEADER_RATE
from console.core.model import BrokerId, ClusterState, Partition, ReplicaLog, SourceStatus
from console.core.states import RunState, WaveState
from console.core.throttle_configs import Throttles
from console.moves.guardrails import Approved, RunView
from console.moves.waves import WaveLimits
from console.plans.plan import Plan, PlanEntry, parse_plan
from console.runs.guard import Guard
from console.runs.worker import Worker
from console.sandbox import cluster
from console.sandbox.cluster import Sandbox
from console.sandbox.demo import create_assigned_topic, fill
from console.services import runs as run_service
from console.state.merge import merge
from console.state.reader import ClusterReader
from console.storage.store import Store

WHO = Identity.cli("bench")
CONFIG_COMMAND = "org.apache.kafka.tools.ConfigCommand"
"""``kafka-configs.sh`` of Kafka 4."""

RATE = 10_000_000
"""The run's throttle in the synthetic cluster (bytes/s per broker)."""


# -- synthetic: the cost of the checks per poll ----------------------------------------------------------
def synthetic_run(
    partitions: int, moving: int, later: int
) -> tuple[ClusterState, RunView, list[Approved], tuple[str, ...]]:
    """The cluster (its wave in flight moving), the run's view, what it set, and its waves as the
    store keeps them (JSON: the wave in flight, the later waves, the rollback)."""
    api, _ = views(partitions, 50, in_flight=moving)
    state = merge(api, None, taken_at=time.time(), name="synthetic")
    parts = list(state.partitions)
    for i in range(0, len(parts), 100):  # 1 %: a follower out of the ISR (RF 3, min ISR 2: at min ISR)
        p = parts[i]
        if not p.reassigning:
            parts[i] = dataclasses.replace(p, isr=p.isr[:-1])
    current = tuple(PlanEntry(p.topic, p.partition, p.target) for p in state.in_flight)
    before = {p.key: p.original for p in state.in_flight}
    still = [p for p in parts if not p.reassigning and len(p.isr) == len(p.replicas)][:later]
    later_entries = []
    for p in still:  # each: its last replica moved to the next broker that holds none of it
        free = next(
            BrokerId(b % 50) for b in range(p.replicas[-1] + 1, p.replicas[-1] + 50) if b % 50 not in p.replicas
        )
        later_entries.append(PlanEntry(p.topic, p.partition, (*p.replicas[:-1], free)))
        before[p.key] = p.replicas
    half = len(later_entries) // 2
    later_waves = tuple((n, tuple(w)) for n, w in ((2, later_entries[:half]), (3, later_entries[half:])) if w)
    approved, throttles = _throttles(state.in_flight)
    state = dataclasses.replace(
        state, partitions=tuple(parts), min_insync=tuple((t, 2) for t in state.topics), throttles=throttles
    )
    stored = (
        Plan(current).to_json(),
        *(Plan(w).to_json() for _, w in later_waves),
        Plan(tuple(PlanEntry(t, p, r) for (t, p), r in before.items())).to_json(),
    )
    return state, RunView(current, later_waves, before), approved, stored


def _throttles(in_flight: tuple[Partition, ...]) -> tuple[list[Approved], Throttles]:
    """The throttles a run sets for its wave in flight (every broker taking part at ``RATE``, each
    topic's leader and follower lists), as its ledger records them and as the cluster shows them."""
    brokers: set[BrokerId] = set()
    topics: dict[str, dict[str, list[str]]] = {}
    for p in in_flight:
        lists = topics.setdefault(p.topic, {LEADER_LIST: [], FOLLOWER_LIST: []})
        lists[LEADER_LIST] += [f"{p.partition}:{b}" for b in p.original]
        lists[FOLLOWER_LIST] += [f"{p.partition}:{b}" for b in p.adding]
        brokers.update(p.replicas)
    approved = [Approved("broker", str(b), k, str(RATE)) for b in sorted(brokers) for k in (LEADER_RATE, FOLLOWER_RATE)]
    approved += [Approved("topic", t, k, ",".join(v)) for t, keys in topics.items() for k, v in keys.items() if v]
    shown = Throttles.of(
        {str(b): {LEADER_RATE: str(RATE), FOLLOWER_RATE: str(RATE)} for b in brokers},
        {t: {k: ",".join(v) for k, v in keys.items() if v} for t, keys in topics.items()},
    )
    return approved, shown


def polls(state: ClusterState, n: int) -> Iterator[ClusterState]:
    """``n`` fresh snapshots a second apart, each adding replica a second's copy further (a new
    snapshot object each time: nothing derived from the one before is kept with it)."""
    moving = {i for i, p in enumerate(state.partitions) if p.adding}
    for k in range(n):
        parts = list(state.partitions)
        for i in moving:
            p = parts[i]
            logs = tuple(
                ReplicaLog(r.broker, r.log_dir, r.size + k * 20_000) if r.broker in p.adding else r for r in p.logs
            )
            parts[i] = dataclasses.replace(p, logs=logs)
        yield dataclasses.replace(state, partitions=tuple(parts), taken_at=state.taken_at + k)


def synthetic(a: argparse.Namespace) -> None:
    t0 = time.perf_counter()
    state, view, approved, stored = synthetic_run(a.partitions, a.moving, a.later)
    later = sum(len(w) for _, w in view.later)
    print(
        f"synthetic cluster: {len(state.partitions):,} partitions, {len(state.brokers)} brokers, "
        f"{len(state.in_flight):,} moving (the wave in flight), {later:,} in later waves, "
        f"{len(approved):,} throttle configs set by the run; built in {time.perf_counter() - t0:.1f} s"
    )
    guard = Guard()
    timed: dict[str, list[tuple[float, float]]] = {"Guard.check per poll": [], "the run's waves parsed": []}
    verdict = None
    for snapshot in polls(state, a.polls):
        wall, cpu = time.perf_counter(), time.process_time()
        verdict = guard.check(1, snapshot, view, approved)
        timed["Guard.check per poll"].append((time.perf_counter() - wall, time.process_time() - cpu))
        wall, cpu = time.perf_counter(), time.process_time()
        for text in stored:
            parse_plan(text)
        timed["the run's waves parsed"].append((time.perf_counter() - wall, time.process_time() - cpu))
    assert verdict is not None
    print(
        f"  what the guard said at the last poll: {[c.rule.value for c in verdict.concerns]}, {len(verdict.fixes)} fixes"
    )
    for label, times in timed.items():
        walls, cpus = [w for w, _ in times], [c for _, c in times]
        print(
            f"  {label}: median {statistics.median(walls) * 1000:.0f} ms (CPU {statistics.median(cpus) * 1000:.0f} ms), "
            f"slowest {max(walls) * 1000:.0f} ms ({len(times)} polls)"
        )
    print(f"  load average (1, 5, 15 min): {os.getloadavg()}")


# -- sandbox: from the event to the decision ------------------------------------------------------------
@dataclass
class Bench:
    """A 5-broker sandbox, the console's store on it, and a worker stepping its runs every ``every`` s."""

    sb: Sandbox
    store: Store
    reader: ClusterReader
    every: float
    tries: int = 0

    @property
    def bs(self) -> str:
        return self.sb.bootstrap_servers

    def run(self, moves: list[tuple[str, int, tuple[int, ...]]], rate: int) -> int:
        plan = Plan.of(PlanEntry(t, p, tuple(BrokerId(b) for b in r)) for t, p, r in moves)
        limits = WaveLimits(moves_per_broker=1, partitions=1)
        return run_service.start_run(
            self.store,
            self.reader.gateway(),
            self.reader.snapshot(),
            run_service.RunRequest(WHO, plan, "bench", run_service.RunSettings(rate=rate, limits=limits)),
            users=None,
        )

    def topic(self, prefix: str, assignment: list[list[int]], kbytes: int) -> str:
        self.tries += 1
        name = f"{prefix}-{self.tries}"
        create_assigned_topic(self.bs, name, assignment)
        fill(self.bs, name, len(assignment), kbytes)
        return name

    def decided(self, run_id: int, rule: str, outcome: str, after: float, timeout: float = 180.0) -> float:
        """When the guardrails' audit entry of ``rule`` with ``outcome`` for ``run_id`` was written."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for e in self.store.audit.entries(action="guardrail"):
                r = json.loads(e.request)
                if e.at >= after and r.get("run") == run_id and r.get("rule") == rule and e.outcome == outcome:
                    return e.at
            time.sleep(0.1)
        raise SystemExit(f"no {rule} {outcome} within {timeout:.0f} s")

    def wait(self, cond: Callable[[], object], what: str, timeout: float = 180.0) -> None:
        deadline = time.monotonic() + timeout
        while not cond():
            if time.monotonic() > deadline:
                raise SystemExit(f"timed out waiting for {what}")
            time.sleep(0.5)

    def configs(self, *args: str, without: int | None = None) -> float:
        """``kafka-configs --alter`` of the sandbox's release, as an operator runs it; when it returned.
        With a broker paused (``without``): bootstrapped from the others, giving up on a request to
        the paused one after 3 s (the tool's admin client may pick any broker it learns of)."""
        from tests.integration.helpers import servers

        extra: list[str] = []
        bs = self.bs
        if without is not None:
            impatient = Path(self.sb.data_dir) / "config" / "impatient-tool.properties"
            impatient.write_text(
                "request.timeout.ms=3000\nsocket.connection.setup.timeout.ms=3000\n"
                "socket.connection.setup.timeout.max.ms=3000\n"
            )
            extra, bs = ["--command-config", str(impatient)], servers(self.sb, without)
        done = subprocess.run(
            self.sb.tool_argv(CONFIG_COMMAND, "--bootstrap-server", bs, *extra, "--alter", *args),
            capture_output=True,
            text=True,
            timeout=180,
        )
        if done.returncode != 0:
            raise SystemExit(done.stderr)
        return time.time()

    def held_since(self, run_id: int) -> float | None:
        """When the read began that the guardrails last decided on (what holds the run, since)."""
        held = self.store.holds.get(run_id)
        return None if held is None else held.since

    def committed(self, needle: str, after: float) -> float | None:
        """When the controllers' logs first say ``needle`` after ``after`` (epoch s; log lines carry ms)."""
        found = []
        for i in range(3):
            path = Path(self.sb.data_dir) / "logs" / f"broker-{i}-server.log"
            for line in path.read_text(errors="replace").splitlines():
                if needle in line and line.startswith("["):
                    at = time.mktime(time.strptime(line[1:20], "%Y-%m-%d %H:%M:%S")) + int(line[21:24]) / 1000
                    if at >= after - 1:
                        found.append(at)
        return min(found, default=None)

    def copying(self, run_id: int, topic: str) -> None:
        """Wait until the run's wave of ``topic``-0 is sent and copying: bytes on its new replica."""

        def copied() -> bool:
            p = self.reader.snapshot().partition(topic, 0)
            return p is not None and any((r.copied_bytes or 0) > 0 for r in p.progress(True))

        def running() -> bool:
            return any(
                w.state is WaveState.RUNNING and f'"{topic}"' in w.entries_json for w in self.store.runs.waves(run_id)
            )

        self.wait(lambda: running() and copied(), f"the wave of {topic}-0 copying")

    def finish(self, run_id: int) -> None:
        """A person resumes the run if a guardrail paused it and lets it go fast; it completes."""
        if self.store.runs.require(run_id).state is RunState.PAUSED:
            run_service.resume(self.store, WHO, run_id)
        run_service.change_throttle(self.store, self.reader.gateway(), WHO, run_id, 50_000_000)
        self.wait(lambda: self.store.runs.require(run_id).state is RunState.COMPLETED, f"run {run_id} completed", 300)


@dataclass(frozen=True)
class Figure:
    """One decision timed: from the event to the guardrail's audit entry; the part Kafka took to
    show the event (None: it shows at once, or its log does not say); how long the read took that
    the decision was made on (None: not kept)."""

    rule: str
    event: str
    decision: str
    seconds: float
    kafka_s: float | None = None
    read_s: float | None = None


SAID = {
    "sending": "set back (its intent written)",
    "adopted": "kept (adopted)",
    "slowed": "later waves slowed",
    "paused": "paused",
}
"""A guardrail's audit outcome, as the figures name the decision."""


def by_hand(
    b: Bench, run_id: int, rule: str, outcome: str, change: tuple[str, str, str, str], needle: str, without: int | None
) -> Figure:
    """One config changed with kafka-configs (``change``: entity type, name, key, value), timed from
    its commit (the controllers' log, ``needle``) to the guardrail's decision."""
    kind, name, key, value = change
    before = time.time()
    returned = b.configs(
        "--entity-type", kind, "--entity-name", name, "--add-config", f"{key}={value}", without=without
    )
    at = b.committed(needle, before) or returned
    decided = b.decided(run_id, rule, outcome, before)
    since = b.held_since(run_id) if outcome in ("slowed", "paused") else None
    return Figure(
        rule, f"{key}={value} (kafka-configs)", SAID[outcome], decided - at, read_s=decided - since if since else None
    )


def throttles_by_hand(b: Bench) -> list[Figure]:
    """A run copying from broker 0 onto 4 (a long wave); by hand, in turn: broker 4's follower rate
    raised (set back), broker 0's leader rate lowered (kept)."""
    t = b.topic("bench-rates", [[0], [0]], 3000)
    run_id = b.run([(t, 0, (4,)), (t, 1, (4,))], rate=50_000)
    b.copying(run_id, t)
    figures = [
        by_hand(b, run_id, "throttle_changed", "sending", ("brokers", "4", FOLLOWER_RATE, "900000000"),
                "name='4') which set configuration follower", None),
        by_hand(b, run_id, "throttle_changed", "adopted", ("brokers", "0", LEADER_RATE, "10000"),
                "name='0') which set configuration leader", None),
    ]  # fmt: skip
    b.finish(run_id)
    return figures


def min_isr_by_hand(b: Bench) -> list[Figure]:
    """A run copying from broker 0 onto 4 (a long wave), its next wave moving a partition whose
    follower on broker 3 is out of the ISR and online (paused: :func:`tests.integration.helpers.lagging`);
    by hand, in turn: that topic's min.insync.replicas set to 2 (at its min ISR: later waves slowed),
    then 3 (under it: paused). Every read waits on the paused broker: the figure says how long the
    deciding read took."""
    from tests.integration.helpers import lagging

    long_topic = b.topic("bench-copy", [[0]], 3000)  # a plan's entries go in name order: this one first
    watched = b.topic("bench-isr", [[1, 2, 3]], 100)
    run_id = b.run([(long_topic, 0, (4,)), (watched, 0, (1, 2, 4))], rate=50_000)
    b.copying(run_id, long_topic)
    with lagging(b.sb, watched, 0, broker=3):
        figures = [
            by_hand(b, run_id, "at_min_isr", "slowed", ("topics", watched, "min.insync.replicas", "2"),
                    "min.insync.replicas to 2", 3),
            by_hand(b, run_id, "under_min_isr", "paused", ("topics", watched, "min.insync.replicas", "3"),
                    "min.insync.replicas to 3", 3),
        ]  # fmt: skip
        b.configs(
            "--entity-type", "topics", "--entity-name", watched, "--delete-config", "min.insync.replicas", without=3
        )
    b.finish(run_id)
    return figures


def destination_killed(b: Bench) -> list[Figure]:
    """A run copying onto broker 3 (a long wave), its next wave onto broker 4; broker 4 killed (kill -9)."""
    from tests.integration.helpers import live

    t = b.topic("bench-dest", [[0], [1]], 1000)
    run_id = b.run([(t, 0, (3,)), (t, 1, (4,))], rate=50_000)
    b.copying(run_id, t)
    at = time.time()
    b.sb.stop("broker-4", hard=True)
    decided = b.decided(run_id, "destination_gone", "paused", at)
    fenced = b.committed("Fencing broker 4 at epoch", at)
    b.sb.start("broker-4")
    b.wait(lambda: live(b.reader, 4), "broker 4 back")
    b.finish(run_id)
    return [Figure("destination_gone", "kill -9 of broker 4", "paused", decided - at, fenced - at if fenced else None)]


def quorum_paused(b: Bench) -> list[Figure]:
    """A run copying (a long wave), its next wave pending; two of the three controllers paused (SIGSTOP)."""
    t = b.topic("bench-quorum", [[0], [0]], 1000)
    run_id = b.run([(t, 0, (3,)), (t, 1, (4,))], rate=50_000)
    b.copying(run_id, t)
    pids = [b.sb.proc(f"broker-{n}").pid for n in (1, 2)]
    at = time.time()
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        held = b.decided(run_id, "cluster_unread", "held", at)
        paused = b.decided(run_id, "cluster_unread", "paused", at)
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
    b.wait(lambda: settled(b.reader), "the quorum back", 300)
    b.finish(run_id)
    return [
        Figure("cluster_unread", "SIGSTOP of 2 of 3 voters", "held (no wave sent)", held - at),
        Figure("cluster_unread", "SIGSTOP of 2 of 3 voters", "paused (past the 30 s grace)", paused - at),
    ]


def settled(reader: ClusterReader) -> bool:
    s = reader.snapshot()
    return s.status.reassignments is SourceStatus.OK and all(b.live for b in s.brokers)


SCENARIOS: dict[str, tuple[Callable[[Bench], list[Figure]], bool]] = {
    "throttles": (throttles_by_hand, False),
    "destination": (destination_killed, False),
    "quorum": (quorum_paused, False),
    "min-isr": (min_isr_by_hand, True),
}
"""Each scenario, and whether it needs the sandbox whose brokers' session outlasts a paused follower
(the others run at Kafka's default session timeout, 9 s: a broker killed hard is fenced after it)."""


def sandbox(a: argparse.Namespace) -> None:
    asked = a.scenarios.split(",")
    figures: list[Figure] = []
    for long_session in (False, True):
        names = [n for n in asked if SCENARIOS[n][1] is long_session]
        if names:
            figures += on_a_sandbox(a, names, long_session)
    print(f"\nfrom the event to the decision, worker step every {a.every:.1f} s ({a.tries} tries; median, slowest):")
    for key in dict.fromkeys((f.rule, f.decision) for f in figures):
        got = [f for f in figures if (f.rule, f.decision) == key]
        kafka = [f.kafka_s for f in got if f.kafka_s is not None]
        reads = [f.read_s for f in got if f.read_s is not None]
        print(
            f"  {key[0]:17s} {key[1]:30s} median {statistics.median(f.seconds for f in got):5.1f} s, "
            f"slowest {max(f.seconds for f in got):5.1f} s"
            + (f"; Kafka's share median {statistics.median(kafka):.1f} s" if kafka else "")
            + (f"; the deciding read took median {statistics.median(reads):.1f} s" if reads else "")
        )
    print(f"  load average (1, 5, 15 min): {os.getloadavg()}")


def on_a_sandbox(a: argparse.Namespace, names: list[str], long_session: bool) -> list[Figure]:
    """``names`` run ``a.tries`` times each on a 5-broker sandbox of their own, a worker stepping."""
    from tests.integration.helpers import LAG_SESSION_S

    config = {"broker.session.timeout.ms": LAG_SESSION_S * 1000} if long_session else None
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="bench-guardrails-") as tmp:
        os.environ["CONSOLE_DATA_DIR"] = str(Path(tmp) / "console")
        data = Path(tmp) / "sandbox"
        sb = cluster.up(data, brokers=5, log=lambda m: None, broker_config=config)
        try:
            settings = ConnectionSettings({"bootstrap.servers": sb.bootstrap_servers}, name="bench", timeout_s=5.0)
            with ClusterReader(settings) as reader:
                worker = Worker(Store(), reader.gateway(), "worker", every_s=a.every).start()
                b = Bench(sb, Store(), reader, a.every)
                try:
                    for n in range(a.tries):
                        for name in names:
                            for f in SCENARIOS[name][0](b):
                                figures.append(f)
                                print(f"  try {n + 1}: {f.rule:17s} {f.decision:30s} {f.seconds:6.1f} s after {f.event}"
                                      + (f" (Kafka showed it after {f.kafka_s:.1f} s)" if f.kafka_s is not None else "")
                                      + (f" (the deciding read took {f.read_s:.1f} s)" if f.read_s is not None else ""),
                                      flush=True)  # fmt: skip
                finally:
                    worker.stop()
        finally:
            cluster.down(data, log=lambda m: None)
    return figures


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    s = sub.add_parser("synthetic")
    s.add_argument("--partitions", type=int, default=100_000)
    s.add_argument("--moving", type=int, default=10_000)
    s.add_argument("--later", type=int, default=10_000)
    s.add_argument("--polls", type=int, default=9)
    r = sub.add_parser("sandbox")
    r.add_argument("--tries", type=int, default=3)
    r.add_argument("--every", type=float, default=1.0, help="the worker's step (the console's default: 1 s)")
    r.add_argument("--scenarios", default=",".join(SCENARIOS))
    a = ap.parse_args(argv)
    (synthetic if a.what == "synthetic" else sandbox)(a)


if __name__ == "__main__":
    main()
