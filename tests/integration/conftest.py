"""The integration tier's cluster fixtures beside the session's (tests/conftest.py): a Kafka 4
sandbox of a module's own on another 4.x release, and the cross-version set's clusters; a local HTTP
receiver for notifications."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from console.sandbox.cluster import Sandbox
from console.sandbox.versions import EARLIER_KAFKA4, ZOOKEEPER_KAFKA
from tests.support import OTHER_KAFKA4, own_sandbox


@pytest.fixture(scope="module")
def kafka4(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """Kafka ``OTHER_KAFKA4`` (a 4.x release other than the default) in KRaft mode, the module's own:
    its tests may stop it."""
    yield from own_sandbox(tmp_path_factory, "sandbox-kafka4", kafka_version=OTHER_KAFKA4)


EARLIER_KAFKA4_CLUSTERS = {f"kafka{v.rsplit('.', 1)[0]}-kraft": v for v in EARLIER_KAFKA4}
"""``kafka4.0-kraft`` → ``4.0.2``: a cluster of each earlier 4.x line (``EARLIER_KAFKA4``)."""

CROSS_VERSIONS = ("kafka4-kraft", *EARLIER_KAFKA4_CLUSTERS, "kafka3.9-kraft", "kafka3.9-zookeeper")
"""The clusters the cross-version set runs on: the session's Kafka 4.x KRaft sandbox, the newest
patch of 4.0, 4.1 and 4.2 and 3.9 in KRaft mode (each its own, 3 brokers, started once for the
module and stopped before the next starts) and the session's 3.9 ZooKeeper sandbox."""


@pytest.fixture(scope="module", params=CROSS_VERSIONS)
def any_kafka(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """Each of ``CROSS_VERSIONS`` in turn (the tests using it run once per cluster, grouped by cluster).
    The tests leave the shared clusters as they found them: nothing in flight, no throttle, no cordon."""
    if request.param == "kafka4-kraft":
        yield request.getfixturevalue("sandbox")
    elif request.param == "kafka3.9-zookeeper":
        yield request.getfixturevalue("zk_sandbox")
    elif request.param in EARLIER_KAFKA4_CLUSTERS:
        version = EARLIER_KAFKA4_CLUSTERS[request.param]
        yield from own_sandbox(tmp_path_factory, f"sandbox-{version}", kafka_version=version)
    else:
        yield from own_sandbox(tmp_path_factory, "sandbox-39-kraft", kafka_version=ZOOKEEPER_KAFKA, kraft=True)


class Receiver:
    """A local HTTP receiver (``http.server`` in a thread): what Apprise's JSON webhook posts to it,
    each body decoded, with its path, in the order received."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, dict[str, object]]] = []
        self.lock = threading.Lock()
        received = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with received.lock:
                    received.posts.append((self.path, json.loads(body)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        """Apprise's JSON webhook pointed at ``path`` of this receiver."""
        return f"json://127.0.0.1:{self.port}/{path}"

    def at(self, path: str) -> list[dict[str, object]]:
        with self.lock:
            return [body for p, body in self.posts if p == f"/{path}"]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.stop()


@pytest.fixture
def hanging_port() -> Iterator[int]:
    """A port that takes connections and never answers: a receiver that is down, the worst way."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    yield sock.getsockname()[1]
    sock.close()
