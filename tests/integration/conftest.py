"""The integration tier's cluster fixtures beside the session's (tests/conftest.py): a Kafka 4
sandbox of a module's own on another 4.x release, and the cross-version set's clusters."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from console.sandbox.cluster import Sandbox
from console.sandbox.versions import ZOOKEEPER_KAFKA
from tests.support import OTHER_KAFKA4, own_sandbox


@pytest.fixture(scope="module")
def kafka4(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """Kafka ``OTHER_KAFKA4`` (a 4.x release other than the default) in KRaft mode, the module's own:
    its tests may stop it."""
    yield from own_sandbox(tmp_path_factory, "sandbox-kafka4", kafka_version=OTHER_KAFKA4)


CROSS_VERSIONS = ("kafka4-kraft", "kafka3.9-kraft", "kafka3.9-zookeeper")
"""The clusters the cross-version set runs on: the session's Kafka 4.x KRaft sandbox, 3.9 in KRaft
mode (its own, started once for the module) and the session's 3.9 ZooKeeper sandbox."""


@pytest.fixture(scope="module", params=CROSS_VERSIONS)
def any_kafka(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """Each of ``CROSS_VERSIONS`` in turn (the tests using it run once per cluster, grouped by cluster).
    The tests leave the shared clusters as they found them: nothing in flight, no throttle."""
    if request.param == "kafka4-kraft":
        yield request.getfixturevalue("sandbox")
    elif request.param == "kafka3.9-zookeeper":
        yield request.getfixturevalue("zk_sandbox")
    else:
        yield from own_sandbox(tmp_path_factory, "sandbox-39-kraft", kafka_version=ZOOKEEPER_KAFKA, kraft=True)
