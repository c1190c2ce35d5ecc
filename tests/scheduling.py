"""How ``make test`` hands the test modules to its pytest-xdist workers: by module, as
``--dist loadscope`` does, except that the modules sharing an expensive process-wide part run on
one worker, so that only one worker starts it and keeps it running:

* ``zookeeper``: the modules that ask for the session's Kafka 3.9 ZooKeeper sandbox (``zk_sandbox``,
  ``zk_demo_sandbox``, or ``any_kafka``, which runs on it too: ZooKeeper and three brokers, four
  JVMs kept for the rest of the session; the unit tier never starts one);
* ``spark``: the modules that run the pipeline's jobs in the test process (``console.pipeline.jobs``,
  or the command line's ``["pipeline", ...]``: the session's Spark driver, a JVM of about 1 GB).

A module's group is read from its source, so a new module that asks for either joins its group
without a list to keep."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from xdist.scheduler import LoadScopeScheduling

ROOT = Path(__file__).resolve().parents[1]
GROUPS = (
    ("zookeeper", re.compile(r"\bzk_(?:demo_)?sandbox\b|\bany_kafka\b")),
    ("spark", re.compile(r"\bconsole\.pipeline\.jobs\b|\bfrom console\.pipeline import jobs\b|\[\s*\"pipeline\"\s*,")),
)
"""Each group, and what in a test module's source puts the module in it (the first that matches)."""


@cache
def group_of(module: str) -> str | None:
    """The group of the test module at ``module`` (a path from the project's root), if any."""
    path = ROOT / module
    if path.name.startswith("test_") and path.suffix == ".py" and path.is_file():
        source = path.read_text(encoding="utf-8")
        for name, pattern in GROUPS:
            if pattern.search(source) and not (name == "zookeeper" and path.parent.name == "unit"):
                return name
    return None


class SharedPartsScheduling(LoadScopeScheduling):  # type: ignore[misc]  # xdist ships no types
    """``--dist loadscope``, with the modules of one group as one scope."""

    def _split_scope(self, nodeid: str) -> str:
        module = nodeid.split("::", 1)[0]
        group = group_of(module)
        return f"group:{group}" if group else super()._split_scope(nodeid)
