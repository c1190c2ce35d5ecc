"""The ZooKeeper reader (kazoo): what a ZooKeeper-mode Kafka cluster keeps there.

Reads are batched: every ``get`` of a level is issued asynchronously at once, then collected,
so tens of thousands of partition znodes read in seconds. One-shot watches on
``/admin/reassign_partitions``, ``/controller``, ``/brokers/ids`` and ``/brokers/topics``, re-armed
by every read, bump ``generation`` so a live view knows something changed there since.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from console.adapters.records import ZkView
from console.adapters.znodes import (
    parse_broker,
    parse_config,
    parse_controller,
    parse_legacy_reassignment,
    parse_partition_state,
    parse_topic,
)
from console.core.errors import (
    AuthorizationFailed,
    ConfigError,
    ConsoleError,
    ReassignmentBusy,
    ZnodeFormatError,
    ZooKeeperUnavailable,
)
from console.core.limits import REMOTE_STORAGE_ENABLE
from console.core.model import BrokerId, Finding, Severity, SourceStatus, TopicPartition

K = TypeVar("K")
V = TypeVar("V")

logging.getLogger("kazoo").setLevel(logging.CRITICAL)

REASSIGN_PATH = "/admin/reassign_partitions"
THROTTLE_KEYS = (
    "leader.replication.throttled.rate",
    "follower.replication.throttled.rate",
    "replica.alter.log.dirs.io.max.bytes.per.second",
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
)


LEGACY_ZNODE_MAX = 500_000
"""Well under ZooKeeper's default 1 MB jute.maxbuffer."""


def translate(exc: BaseException, what: str) -> ConsoleError:
    """A kazoo error as the console's own error, by its type. Anything else is not ZooKeeper's
    doing: it is raised again as itself (a bug surfaces as one)."""
    from kazoo import exceptions as ke
    from kazoo.handlers.threading import KazooTimeoutError

    if isinstance(exc, ConsoleError):
        return exc
    if isinstance(exc, (ke.NoAuthError, ke.AuthFailedError, ke.SASLException, ke.SessionClosedRequireSaslError)):
        return AuthorizationFailed(
            f"ZooKeeper refused {what}: not authorised.",
            "Check the ZooKeeper ACLs and the console's credentials (SASL/digest).",
        )
    if isinstance(
        exc,
        (
            KazooTimeoutError,
            ke.ConnectionLoss,
            ke.ConnectionDropped,
            ke.SessionExpiredError,  # and ConnectionClosedError
            ke.OperationTimeoutError,
            ke.RequestTimeoutError,
            ke.ZookeeperStoppedError,
            TimeoutError,
            ConnectionError,
        ),
    ):
        return ZooKeeperUnavailable(
            f"ZooKeeper did not answer {what}.",
            "Check the connect string (host:port/chroot) and that ZooKeeper runs. The Admin API view stays available.",
        )
    if isinstance(exc, (ke.KazooException, OSError)):  # another answer of ZooKeeper's, a host that does not resolve
        return ZooKeeperUnavailable(
            f"ZooKeeper failed on {what}: {type(exc).__name__} {exc}.", "Check the connect string (host:port/chroot)."
        )
    raise exc


class ZkReader:
    """Long-lived reader of one ZooKeeper ensemble (with the cluster's chroot in ``connect``)."""

    def __init__(self, connect: str, timeout_s: float = 5.0) -> None:
        self.connect = connect
        self.timeout_s = timeout_s
        self._zk: Any = None
        self._lock = threading.Lock()
        self.generation = 0

    def _client(self) -> Any:
        from kazoo.client import KazooClient
        from kazoo.retry import KazooRetry

        with self._lock:
            if self._zk is not None and self._zk.connected:
                return self._zk
            if self._zk is not None:
                self._stop_client()
            zk = KazooClient(
                hosts=self.connect,
                timeout=max(self.timeout_s, 4.0),
                connection_retry=KazooRetry(max_tries=-1, max_delay=2.0),
                command_retry=KazooRetry(max_tries=1, max_delay=1.0),
            )
            try:
                zk.start(timeout=self.timeout_s)
            except Exception as e:
                with contextlib.suppress(Exception):  # a client that fails to stop is dropped anyway
                    zk.stop()
                    zk.close()
                raise translate(e, f"a connection to {self.connect}") from None
            self._zk = zk
            return zk

    def _stop_client(self) -> None:
        with contextlib.suppress(Exception):  # a session that fails to close is dropped anyway
            self._zk.stop()
            self._zk.close()
        self._zk = None

    def close(self) -> None:
        with self._lock:
            if self._zk is not None:
                self._stop_client()

    # -- the legacy write path ------------------------------------------------------------------
    def create_reassignment(self, targets: dict[TopicPartition, tuple[BrokerId, ...]]) -> None:
        """Start reassignments the pre-2.4 way: create ``/admin/reassign_partitions``. The
        controller reacts only to the creation, so an existing node means another reassignment
        is still running: :class:`ReassignmentBusy`, nothing written."""
        from kazoo.exceptions import NodeExistsError

        from console.adapters.znodes import encode_legacy_reassignment

        data = encode_legacy_reassignment(targets)
        if len(data) > LEGACY_ZNODE_MAX:
            raise ConfigError(
                f"The wave is {len(data):,} bytes of JSON, over the {LEGACY_ZNODE_MAX:,} the console "
                "writes into one znode.",
                "Use smaller waves (fewer partitions per wave).",
            )
        zk = self._client()
        try:
            zk.create(REASSIGN_PATH, data, makepath=True)
        except NodeExistsError:
            raise ReassignmentBusy(
                f"{REASSIGN_PATH} exists: a reassignment started through ZooKeeper is still running.",
                "Wait until it completes (the controller deletes the node).",
            ) from None
        except Exception as e:
            raise translate(e, f"creating {REASSIGN_PATH}") from None

    # -- batched reads -----------------------------------------------------------------------
    def _children(self, zk: Any, path: str, watch: bool = False) -> list[str]:
        from kazoo.exceptions import NoNodeError

        try:
            return list(
                zk.get_children_async(path, watch=self._on_watch if watch else None).get(timeout=self.timeout_s)
            )
        except NoNodeError:
            return []

    def _get_many(self, zk: Any, paths: list[str], watch_prefix: str | None = None) -> dict[str, bytes | None]:
        """Issue every get at once, then collect; missing nodes give None. Paths under
        ``watch_prefix`` get a one-shot data watch."""
        from kazoo.exceptions import NoNodeError

        pending = [
            (p, zk.get_async(p, watch=self._on_watch if watch_prefix and p.startswith(watch_prefix) else None))
            for p in paths
        ]
        out: dict[str, bytes | None] = {}
        deadline = time.monotonic() + self.timeout_s + len(paths) / 2000.0
        for p, r in pending:
            try:
                data, _stat = r.get(timeout=max(0.1, deadline - time.monotonic()))
                out[p] = data
            except NoNodeError:
                out[p] = None
        return out

    def read(self) -> ZkView:
        """Everything ZooKeeper says; never raises for ZooKeeper trouble (see ``status``), only for
        a bug."""
        try:
            return self._read()
        except Exception as e:
            err = translate(e, "a read")  # raises ``e`` itself when it is not ZooKeeper's
            status = SourceStatus.UNAUTHORIZED if isinstance(err, AuthorizationFailed) else SourceStatus.UNAVAILABLE
            with self._lock:
                if self._zk is not None and not self._zk.connected:
                    self._stop_client()
            return ZkView(
                status=status, problems=(Finding("zookeeper-unavailable", Severity.WARNING, err.message, err.hint),)
            )

    def _read(self) -> ZkView:
        zk = self._client()
        problems: list[Finding] = []

        def bad(e: ZnodeFormatError) -> None:
            problems.append(
                Finding(
                    "znode-unreadable",
                    Severity.WARNING,
                    f"Cannot parse {e.path}: {e.reason}.",
                    "Something other than Kafka may have written it; the console ignores it.",
                )
            )

        # one-shot watches, re-armed by every read: the reassignment znode, controller, brokers, topics,
        # and each topic znode's data (AR / RR appear there when a reassignment starts and go when it ends)
        zk.exists_async(REASSIGN_PATH, watch=self._on_watch)
        zk.exists_async("/controller", watch=self._on_watch)
        ids = self._children(zk, "/brokers/ids", watch=True)
        topics = self._children(zk, "/brokers/topics", watch=True)
        cfg_topics = self._children(zk, "/config/topics")
        cfg_brokers = self._children(zk, "/config/brokers")
        first = self._get_many(
            zk,
            ["/controller", REASSIGN_PATH]
            + [f"/brokers/ids/{i}" for i in ids]
            + [f"/brokers/topics/{t}" for t in topics]
            + [f"/config/topics/{t}" for t in cfg_topics]
            + [f"/config/brokers/{b}" for b in cfg_brokers],
            watch_prefix="/brokers/topics/",
        )
        controller = _parse_each(first, [(0, "/controller")], lambda _, path, d: parse_controller(path, d), bad).get(0)
        legacy = _parse_each(
            first, [(0, REASSIGN_PATH)], lambda _, path, d: parse_legacy_reassignment(path, d), bad
        ).get(0, {})
        brokers = list(
            _parse_each(
                first,
                [(int(i), f"/brokers/ids/{i}") for i in ids if i.lstrip("-").isdigit()],
                lambda i, path, d: parse_broker(path, i, d),
                bad,
            ).values()
        )
        tz = _parse_each(
            first, [(t, f"/brokers/topics/{t}") for t in topics], lambda _, path, d: parse_topic(path, d), bad
        )
        state_paths = {(t, p): f"/brokers/topics/{t}/partitions/{p}/state" for t, z in tz.items() for p in z.partitions}
        states = _parse_each(
            self._get_many(zk, list(state_paths.values())),
            list(state_paths.items()),
            lambda k, path, d: parse_partition_state(path, d, tz[k[0]].partitions[k[1]]),
            bad,
        )
        b_thr = self._throttles(first, "brokers", cfg_brokers, bad)
        t_thr = self._throttles(first, "topics", cfg_topics, bad)
        min_isr = self._min_insync(first, cfg_topics)
        tiered = self._tiered(first, cfg_topics)
        return ZkView(
            controller=controller,
            brokers=tuple(sorted(brokers, key=lambda b: b.id)),
            topics=tz,
            states=states,
            legacy=legacy,
            broker_throttles=b_thr,
            topic_throttles=t_thr,
            min_insync=min_isr,
            tiered_topics=tiered,
            status=SourceStatus.OK,
            problems=tuple(problems),
        )

    @staticmethod
    def _throttles(
        raw: dict[str, bytes | None], kind: str, names: list[str], bad: Callable[[ZnodeFormatError], None]
    ) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        for n in names:
            path = f"/config/{kind}/{n}"
            if raw.get(path) is None:
                continue
            try:
                cfg = parse_config(path, raw[path])
            except ZnodeFormatError as e:
                bad(e)
                continue
            found = {k: v for k, v in cfg.items() if k in THROTTLE_KEYS and v != ""}
            if found:
                out[n] = found
        return out

    @staticmethod
    def _min_insync(raw: dict[str, bytes | None], topics: list[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for t in topics:
            path = f"/config/topics/{t}"
            try:
                value = parse_config(path, raw[path] or b"{}").get("min.insync.replicas", "")
            except (ZnodeFormatError, KeyError):
                continue  # already reported by _throttles
            if value.isdigit():
                out[t] = int(value)
        return out

    @staticmethod
    def _tiered(raw: dict[str, bytes | None], topics: list[str]) -> frozenset[str]:
        """Topics whose override sets ``remote.storage.enable=true`` (it is only ever set on a topic)."""
        out: set[str] = set()
        for t in topics:
            path = f"/config/topics/{t}"
            try:
                value = parse_config(path, raw[path] or b"{}").get(REMOTE_STORAGE_ENABLE, "")
            except (ZnodeFormatError, KeyError):
                continue  # already reported by _throttles
            if value.lower() == "true":
                out.add(t)
        return frozenset(out)

    # -- watches -----------------------------------------------------------------------------
    def _on_watch(self, event: Any) -> None:
        """A one-shot ZooKeeper watch fired: count it. No ZooKeeper call here (kazoo runs this
        on its event thread, which ``stop()`` joins)."""
        self.generation += 1


def _parse_each(
    raw: Mapping[str, bytes | None],
    items: Iterable[tuple[K, str]],
    parse: Callable[[K, str, bytes], V],
    bad: Callable[[ZnodeFormatError], None],
) -> dict[K, V]:
    """Each znode of ``items`` (key, path) that exists in ``raw``, parsed; one that cannot be is
    handed to ``bad`` and left out."""
    out: dict[K, V] = {}
    for key, path in items:
        data = raw.get(path)
        if data is None:
            continue
        try:
            out[key] = parse(key, path, data)
        except ZnodeFormatError as e:
            bad(e)
    return out
