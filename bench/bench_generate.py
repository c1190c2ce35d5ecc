"""Plan generators: quality (moved vs the lower bound, balance reached), the console against the
official ``--generate`` (emulated: AdminUtils' assignment, as ``Goal.OFFICIAL`` computes it), and
speed and peak memory at 100k partitions / 50 brokers and 1M partitions / 500 brokers.

    PYTHONPATH=. .venv/bin/python bench/bench_generate.py            # everything (about 10 min)
    PYTHONPATH=. .venv/bin/python bench/bench_generate.py --quick    # quality and 100k only
    PYTHONPATH=. .venv/bin/python bench/bench_generate.py --zones           # least cross-zone bytes at 100k
    PYTHONPATH=. .venv/bin/python bench/bench_generate.py --versus /tmp/base --rounds 2
        # 1M partitions / 500 brokers only, this tree against another checkout (a detached
        # worktree of an earlier commit), alternating old and new processes: this script runs
        # on either code, and says whether both made the same plan for each goal

Each speed figure runs in a fresh process (its peak RSS includes the snapshot); the median of
``--runs`` runs is printed. Synthetic clusters: Pareto partition sizes, RF 3, brokers on racks
(rack = id mod racks), replicas rack-spread (bench/synthetic.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import resource
import statistics
import subprocess
import sys
import time

from bench.synthetic import cluster_state
from console.core.format import human_bytes
from console.plans.generate import Generated, generate
from console.plans.generators.options import GenerateOptions, Goal, Metric


def quality() -> None:
    print("## Quality (10k partitions, RF 3, 3 racks)\n")
    print(
        "| goal | cluster | replicas moved / lower bound | bytes moved / lower bound | reached | after: replicas max–min, bytes max/min |"
    )
    print("|---|---|---|---|---|---|")
    cases = [
        ("decommission 5", {"brokers": 24, "racks": 3}, GenerateOptions(Goal.DECOMMISSION, (5,))),
        (
            "add brokers 20–23",
            {"brokers": 24, "racks": 3, "empty": 4},
            GenerateOptions(Goal.ADD_BROKERS, (20, 21, 22, 23)),
        ),
        (
            "rebalance count",
            {"brokers": 24, "racks": 3, "skew": 0.15},
            GenerateOptions(Goal.REBALANCE, metric=Metric.COUNT),
        ),
        (
            "rebalance bytes",
            {"brokers": 24, "racks": 3, "skew": 0.15},
            GenerateOptions(Goal.REBALANCE, metric=Metric.BYTES),
        ),
        (
            "rebalance leaders",
            {"brokers": 24, "racks": 3, "skew": 0.15},
            GenerateOptions(Goal.REBALANCE, metric=Metric.LEADERS),
        ),
    ]
    for label, shape, options in cases:
        state = cluster_state(10_000, **shape)  # type: ignore[arg-type]
        r = generate(state, options).report
        after = r.spreads["after"]
        print(
            f"| {label} | {shape} | {r.moved_replicas:,} / {r.lower_bound_replicas:,} ({_ratio(r.ratio_replicas)}) "
            f"| {human_bytes(r.moved_bytes)} / {human_bytes(r.lower_bound_bytes)} ({_ratio(r.ratio_bytes)}) | {r.reached} "
            f"| {after['replicas'].max:,.0f}–{after['replicas'].min:,.0f}, "
            f"{after['bytes'].max / max(after['bytes'].min, 1):.3f} |"
        )
    print()


def versus_official() -> None:
    print("## Decommission of one broker: the console against --generate (emulated)\n")
    print("| cluster | console moves | --generate moves | ratio |")
    print("|---|---|---|---|")
    for brokers, partitions in ((6, 2_000), (48, 20_000)):
        state = cluster_state(partitions, brokers, racks=3)
        ours = generate(state, GenerateOptions(Goal.DECOMMISSION, (1,))).report.moved_replicas
        rest = tuple(b for b in range(brokers) if b != 1)
        theirs = [
            generate(state, GenerateOptions(Goal.OFFICIAL, rest, topics=state.topics, seed=s)).report.moved_replicas
            for s in range(3)
        ]
        t = statistics.median(theirs)
        print(
            f"| {brokers} brokers, {partitions:,} partitions | {ours:,} | {t:,.0f} (median of 3 seeds) | {t / ours:.1f}× |"
        )
    print()


ZONE_MAP = (("rack-0", "az-1"), ("rack-1", "az-1"), ("rack-2", "az-2"), ("rack-3", "az-2"), ("rack-4", "az-3"))
"""Racks that are not zones: five racks in three zones."""

GOALS = {
    "decommission 1 broker": lambda b, s: GenerateOptions(Goal.DECOMMISSION, (3,)),
    "add brokers (4 %)": lambda b, s: GenerateOptions(Goal.ADD_BROKERS, tuple(range(b - max(1, b // 25), b))),
    "rebalance count": lambda b, s: GenerateOptions(Goal.REBALANCE, metric=Metric.COUNT),
    "rebalance bytes": lambda b, s: GenerateOptions(Goal.REBALANCE, metric=Metric.BYTES),
    "rebalance leaders": lambda b, s: GenerateOptions(Goal.REBALANCE, metric=Metric.LEADERS),
    "replication factor 3→4 (5 topics)": lambda b, s: GenerateOptions(
        Goal.REPLICATION_FACTOR, replication_factor=4, topics=tuple(s.topics[:5])
    ),
    "fix racks": lambda b, s: GenerateOptions(Goal.FIX_RACKS),
    "official (5 topics)": lambda b, s: GenerateOptions(Goal.OFFICIAL, tuple(range(b)), topics=tuple(s.topics[:5])),
}


def digest(made: Generated) -> str:
    """A fingerprint of a generated plan: its entries, its basis and every report field but the
    seconds (two codes that agree on it made the same plan)."""
    r = made.report
    fields = [getattr(r, f.name) for f in dataclasses.fields(r) if f.name != "seconds"]
    return hashlib.sha256(repr((made.plan.entries, sorted(made.plan.basis.items()), fields)).encode()).hexdigest()


def one_scale(partitions: int, brokers: int, runs: int) -> dict[str, object]:
    """In this process: every goal on one synthetic cluster (10 % of partitions crowded on a quarter
    of the brokers, 4 % of brokers empty); seconds per goal (wall and the process's CPU), the
    plan's fingerprint and the peak RSS."""
    state = cluster_state(partitions, brokers, racks=5, skew=0.1, empty=max(1, brokers // 25))
    out: dict[str, object] = {}
    for name, make in GOALS.items():
        times, cpu, moved, made = [], [], 0, None
        for _ in range(runs):
            started, cpu_started = time.perf_counter(), time.process_time()
            made = generate(state, make(brokers, state))
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - cpu_started)
            moved = made.report.moved_replicas
        out[name] = {
            "seconds": statistics.median(times),
            "cpu": statistics.median(cpu),
            "moved": moved,
            "digest": digest(made) if made is not None else "",
        }
    out["peak_rss_gib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return out


def speed(scales: list[tuple[int, int, int]]) -> None:
    print("## Speed (in process, 2 cores; median seconds per goal)\n")
    results = []
    for partitions, brokers, runs in scales:
        ran = subprocess.run(
            [sys.executable, __file__, "--scale", f"{partitions},{brokers},{runs}"],
            capture_output=True,
            text=True,
            check=True,
        )
        results.append(((partitions, brokers), json.loads(ran.stdout.strip().splitlines()[-1])))
    print("| goal | " + " | ".join(f"{p:,} partitions / {b} brokers" for (p, b), _ in results) + " |")
    print("|---|" + "---|" * len(results))
    for name in GOALS:
        print(
            f"| {name} | "
            + " | ".join(f"{r[name]['seconds']:.2f} s ({r[name]['moved']:,} moves)" for _, r in results)
            + " |"
        )
    print("| peak RSS (snapshot included) | " + " | ".join(f"{r['peak_rss_gib']:.2f} GiB" for _, r in results) + " |")
    print()


def versus(other: str, rounds: int) -> None:
    """The 1M scale in ``other`` (the previous code) and here, alternating, ``rounds`` times each:
    the median seconds per goal, before and after, and the peak RSS."""
    import os
    from pathlib import Path

    here = Path(__file__).resolve().parent.parent
    runs: dict[str, list[dict[str, object]]] = {"before": [], "after": []}
    for _ in range(rounds):
        for label, root in (("before", Path(other).resolve()), ("after", here)):
            ran = subprocess.run(  # this very script, on the code of ``root`` (its console and bench)
                [str(root / ".venv/bin/python"), __file__, "--scale", "1000000,500,1"],
                capture_output=True,
                text=True,
                check=True,
                cwd=root,
                env={**os.environ, "PYTHONPATH": "."},
            )
            runs[label].append(json.loads(ran.stdout.strip().splitlines()[-1]))
            print(f"{label} ({root}): {runs[label][-1]}", file=sys.stderr, flush=True)

    def median(label: str, name: str, field: str = "seconds") -> float:
        return statistics.median(float(r[name][field]) for r in runs[label])  # type: ignore[index]

    def same(name: str) -> str:
        prints = {str(r[name]["digest"]) for v in runs.values() for r in v}  # type: ignore[index]
        return "yes" if len(prints) == 1 else "**no**"

    print(f"## 1,000,000 partitions / 500 brokers: {other} (before) against this tree (after), median of {rounds}\n")
    print("| goal | before | after | ratio | CPU before | CPU after | same plan |")
    print("|---|---|---|---|---|---|---|")
    for name in GOALS:
        b, a = median("before", name), median("after", name)
        cb, ca = median("before", name, "cpu"), median("after", name, "cpu")
        moves = int(median("after", name, "moved"))
        print(
            f"| {name} | {b:.2f} s | {a:.2f} s ({moves:,} moves) | {b / a:.1f}× | {cb:.2f} s | {ca:.2f} s | {same(name)} |"
        )
    rss = {k: statistics.median(float(r["peak_rss_gib"]) for r in v) for k, v in runs.items()}  # type: ignore[arg-type]
    print(f"| peak RSS (snapshot included) | {rss['before']:.2f} GiB | {rss['after']:.2f} GiB | |")
    print()


ZONE_GOALS = {
    "decommission broker 3": GenerateOptions(Goal.DECOMMISSION, (3,)),
    "decommission broker 3, 3 zones of 5 racks": GenerateOptions(Goal.DECOMMISSION, (3,), zones=ZONE_MAP),
    "add brokers 48, 49": GenerateOptions(Goal.ADD_BROKERS, (48, 49)),
    "rebalance count": GenerateOptions(Goal.REBALANCE, metric=Metric.COUNT),
    "rebalance bytes": GenerateOptions(Goal.REBALANCE, metric=Metric.BYTES),
}
ZONE_MODES: dict[str, float | None] = {"current": None, "tie-breaker": 0.0, "weight 1": 1.0, "weight 4": 4.0}


def zones(partitions: int = 100_000, brokers: int = 50) -> None:
    """Least cross-zone bytes against the current generator on the synthetic cluster of the speed
    figures (5 racks as zones, 10 % of partitions crowded, 2 brokers empty), all in this run: the
    bytes across zones (the impact model's, on the plan's diff), the moves and the balance after."""
    from console.moves.impact import Pricing
    from console.moves.impact_columns import impact
    from console.plans.diff import diff

    state = cluster_state(partitions, brokers, racks=5, skew=0.1, empty=2)
    print(f"## Least cross-zone bytes ({partitions:,} partitions / {brokers} brokers, 5 racks)\n")
    print(
        "| goal | preference | replicas moved | bytes copied | across zones | × current | "
        "after: replicas max–min | bytes max/min | reached | seconds |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label, options in ZONE_GOALS.items():
        base = None
        for mode, weight in ZONE_MODES.items():
            started = time.perf_counter()
            made = generate(state, dataclasses.replace(options, zone_weight=weight))
            took = time.perf_counter() - started
            im = impact(diff(state, made.plan), Pricing(zones=options.zones))
            base = im.cross_zone_bytes if base is None else base
            r, after = made.report, made.report.spreads["after"]
            print(
                f"| {label} | {mode} | {r.moved_replicas:,} | {human_bytes(im.bytes_to_copy)} "
                f"| {human_bytes(im.cross_zone_bytes)} | {im.cross_zone_bytes / max(base, 1):.2f} "
                f"| {after['replicas'].max:,.0f}–{after['replicas'].min:,.0f} "
                f"| {after['bytes'].max / max(after['bytes'].min, 1):.3f} | {r.reached} | {took:.2f} |",
                flush=True,
            )
    print()


def _ratio(r: float | None) -> str:
    return "—" if r is None else f"{r:.2f}"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true", help="quality, versus --generate and 100k only")
    p.add_argument("--runs", type=int, default=3, help="runs per goal at 100k (1M runs once)")
    p.add_argument("--scale", help=argparse.SUPPRESS)
    p.add_argument("--zones", action="store_true", help="only least cross-zone bytes against the current generator")
    p.add_argument("--versus", metavar="DIR", help="only 1M: the checkout DIR (before) against this one (after)")
    p.add_argument("--rounds", type=int, default=2, help="with --versus: runs of each, alternating")
    args = p.parse_args()
    if args.versus:
        versus(args.versus, args.rounds)
        return
    if args.zones:
        print(f"# Plan generators: least cross-zone bytes ({time.strftime('%Y-%m-%d')})\n")
        zones()
        return
    if args.scale:
        partitions, brokers, runs = map(int, args.scale.split(","))
        print(json.dumps(one_scale(partitions, brokers, runs)))
        return
    print(f"# Plan generators ({time.strftime('%Y-%m-%d')})\n")
    quality()
    versus_official()
    speed([(100_000, 50, args.runs)] + ([] if args.quick else [(1_000_000, 500, 1)]))


if __name__ == "__main__":
    main()
