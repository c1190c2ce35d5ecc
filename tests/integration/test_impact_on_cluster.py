"""The impact on the real cluster, racks as zones (the sandbox puts broker i on rack-a, -b, -c): a
plan moving replicas across racks announces the bytes it copies across them (``validate --json``),
and once the run completes DescribeLogDirs shows those bytes on the new replicas (within what the
logs grew meanwhile: nothing is produced during the run)."""

from __future__ import annotations

import json

from console import cli
from console.core.model import ClusterState
from console.state.reader import ClusterReader
from tests.integration.helpers import make_topic
from tests.support import settings_for, wait_for, write_plan


def test_bytes_announced_across_racks_are_what_the_new_replicas_hold(sandbox, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    bs = sandbox.bootstrap_servers
    make_topic(bs, "imp-racks", 3, 2, 300, assignment=[[0, 1], [0, 1], [1, 0]])
    moves = [("imp-racks", 0, [0, 2]), ("imp-racks", 1, [2, 1]), ("imp-racks", 2, [1, 2])]
    plan = write_plan(tmp_path / "plan.json", moves)
    with ClusterReader(settings_for(sandbox)) as reader:

        def sized() -> ClusterState | None:
            s = reader.snapshot()
            return s if all(s.partition("imp-racks", p).size for p in range(3)) else None

        state = wait_for(sized, what="the topic's sizes read")
        assert cli.main(["validate", "--bootstrap-server", bs, str(plan), "--json"]) == 0
        im = json.loads(capsys.readouterr().out)["impact"]
        # every copy crosses racks into broker 2 (rack-c): from leader 0 (rack-a) twice, from leader 1 (rack-b)
        pairs = {(z["source"], z["destination"]): z["bytes"] for z in im["zone_pairs"]}
        assert set(pairs) == {("rack-a", "rack-c"), ("rack-b", "rack-c")}, pairs
        announced = im["cross_zone_bytes"]
        assert announced == im["bytes_to_copy"] == sum(state.partition("imp-racks", p).size or 0 for p in range(3))
        assert announced > 600_000
        code = cli.main(["submit", "--bootstrap-server", bs, str(plan), "--throttle", "50MB/s", "--yes", "--json"])
        out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert code == 0 and out["state"] == "completed", out
        new = {("imp-racks", p): 2 for p in range(3)}

        def landed() -> int | None:
            s = reader.snapshot()
            sizes = [s.partition(t, p).size_on(b) for (t, p), b in new.items()]
            return sum(x or 0 for x in sizes) if all(x is not None for x in sizes) else None

        held = wait_for(landed, what="the new replicas' sizes in DescribeLogDirs")
        grown = sum((reader.snapshot().partition("imp-racks", p).size or 0) for p in range(3)) - announced
        assert announced <= held <= announced + max(grown, 0) + 1024, (announced, held, grown)
