"""Reads a hung broker does not hold up.

A broker paused (SIGSTOP, a stalled disk, a full GC) keeps its sockets open: the kernel still
accepts connections, and nothing answers. kafka-python sends a request that names no broker to its
"least loaded" node, which prefers an open connection with nothing in flight: the hung broker's, as
often as not. Each such request then waits for the whole request timeout, and the console said "the
cluster did not answer" about a cluster whose other brokers and controllers were all well.

:class:`Unanswering` remembers the brokers a request timed out on for a minute; :func:`steer` makes
a kafka-python client's next requests go to another broker while there is one.
"""

from __future__ import annotations

import contextlib
import queue
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

T = TypeVar("T")

AVOID_S = 60.0
"""How long a broker a request timed out on is passed over (the page's cluster info is read at most
once a minute: the next read avoids it, the one after asks it again)."""


class Unanswering:
    """The brokers a request timed out on lately, by id, and the bootstrap servers that did not
    answer, by address (thread-safe)."""

    def __init__(self, for_s: float = AVOID_S) -> None:
        self.for_s = for_s
        self._until: dict[int | str, float] = {}
        self._lock = threading.Lock()

    def mark(self, node: int | str) -> None:
        with self._lock:
            self._until[node] = time.monotonic() + self.for_s

    def clear(self, node: int | str) -> None:
        with self._lock:
            self._until.pop(node, None)

    def avoided(self) -> frozenset[int | str]:
        now = time.monotonic()
        with self._lock:
            return frozenset(n for n, until in self._until.items() if until > now)


@dataclass
class Picked:
    """The broker a steered client sent its last request to (None before any): an admin call's
    requests go one after another, so a call that timed out timed out there. The library's own
    metadata refresh does not count: it follows the timeout, from another broker it names, and
    the broker to blame is the one the call's request went to."""

    last: int | None = None


def steer(client: Any, unanswering: Unanswering) -> Picked:
    """Make ``client`` (a kafka-python admin client) send its requests that name no broker to a
    broker not in ``unanswering`` while there is one, and say where it sent the last. The choice
    is the library's own (``least_loaded_node``) unless it falls on an avoided broker."""
    manager = client._manager
    picked = Picked()
    library = type(manager)

    def send(request: Any, node_id: int | None = None, request_timeout_ms: int | None = None) -> Any:
        if node_id is None:
            node_id = library.least_loaded_node(manager)
            avoided = unanswering.avoided()
            if node_id in avoided:
                others = [b.node_id for b in manager.cluster.brokers() if b.node_id not in avoided]
                if others:
                    node_id = random.choice(others)
        if not type(request).__name__.startswith("MetadataRequest"):
            picked.last = node_id
        return library.send(manager, request, node_id=node_id, request_timeout_ms=request_timeout_ms)

    manager.send = send  # this client only: the library's class is untouched
    return picked


def timed_out(exc: BaseException) -> bool:
    """Whether ``exc`` is a request that got no answer in time (not a refusal, not a closed port)."""
    from kafka import errors as ke

    return isinstance(exc, (ke.KafkaTimeoutError, ke.RequestTimedOutError, TimeoutError))


BOOTSTRAP_S = 1.0
"""How long a new kafka-python client waits on one bootstrap server before it starts on the next
as well (:func:`bootstrapped`): kafka-python gives the one it picked at random the whole timeout."""


def bootstrapped(make: Callable[[dict[str, Any]], T], kwargs: dict[str, Any], unanswering: Unanswering) -> T:
    """``make(kwargs)`` (a kafka-python client, which bootstraps as it is made) from one bootstrap
    server, and from the next as well (a client each, in a thread) each time ``BOOTSTRAP_S`` pass
    without one made, those not in ``unanswering`` first: the first made; the others are closed
    as they come. A server still silent then, or that timed out, is marked (by address) until one
    is made from it again. A hung broker among the servers no longer takes a new client's whole
    timeout."""
    servers = sorted(kwargs.get("bootstrap_servers") or (), key=lambda s: (s in unanswering.avoided(), random.random()))
    if len(servers) < 2:
        return make(kwargs)
    made: queue.Queue[tuple[str, T | None, BaseException | None]] = queue.Queue()
    lock = threading.Lock()
    taken = [False]
    pending: set[str] = set()

    def attempt(server: str) -> None:
        try:
            client = make({**kwargs, "bootstrap_servers": [server]})
        except Exception as e:
            if timed_out(e):
                unanswering.mark(server)
            made.put((server, None, e))
            return
        unanswering.clear(server)
        with lock:
            late, taken[0] = taken[0], True
        if late:  # another was taken first
            with contextlib.suppress(Exception):
                client.close()  # type: ignore[attr-defined]
            return
        made.put((server, client, None))

    deadline = time.monotonic() + int(kwargs.get("bootstrap_timeout_ms") or 0) / 1000 + 1
    failures: list[BaseException] = []
    for n, server in enumerate(servers):
        pending.add(server)
        threading.Thread(target=attempt, args=(server,), name=f"bootstrap {server}", daemon=True).start()
        last = n == len(servers) - 1
        while pending:
            wait = (deadline if last else min(deadline, time.monotonic() + BOOTSTRAP_S)) - time.monotonic()
            try:
                which, client, error = made.get(timeout=max(0.0, wait))
            except queue.Empty:
                break
            pending.discard(which)
            if client is not None:
                for slow in pending:
                    unanswering.mark(slow)
                return client
            failures.append(error)  # type: ignore[arg-type]
    with lock:
        gave_up, taken[0] = not taken[0], True
    while not gave_up:  # one was made as the time ran out
        _, client, _ = made.get()
        if client is not None:
            return client
    raise failures[0] if failures else TimeoutError(f"no bootstrap server answered: {', '.join(servers)}")


HEDGE_S = 1.0
"""How long a request any broker can answer waits for its broker before it is sent to the next as
well (:func:`first_answer`): a well broker answers a cancel's reads in milliseconds."""


def first_answer(
    client: Any, request: Callable[[], Any], unanswering: Unanswering, timeout_s: float, hedge_s: float | None = None
) -> tuple[int, Any]:
    """A request any broker can answer, sent on ``client``'s (kafka-python admin) connections to
    one broker, and to the next as well each time ``hedge_s`` (``HEDGE_S``) pass without an answer,
    at once when the last one sent failed: the first answer, and the broker that gave it. Brokers
    not in ``unanswering`` are asked first. A broker still silent when another answered, or whose
    request timed out, is marked in ``unanswering`` (its later answer clears it); an answer saying
    NOT_CONTROLLER (a broker of a ZooKeeper cluster that is not the controller) counts as a failure.
    When no broker answered within ``timeout_s``: a timeout naming those still silent, else the
    first failure."""
    from kafka import errors as ke
    from kafka.future import Future

    manager = client._manager
    library = type(manager)
    hedge = HEDGE_S if hedge_s is None else hedge_s
    avoided = unanswering.avoided()
    # a broker passed over by id, or by its address as a bootstrap server (:func:`bootstrapped`), is asked last
    brokers = sorted(
        manager.cluster.brokers(),
        key=lambda b: (b.node_id in avoided or f"{b.host}:{b.port}" in avoided, random.random()),
    )
    nodes = [b.node_id for b in brokers]
    if not nodes:
        raise ke.NodeNotReadyError("no broker known")
    won = Future()
    silent: set[int] = set()
    failures: list[BaseException] = []
    wake: list[Any] = [Future()]

    def answered(node: int, response: Any) -> None:
        silent.discard(node)
        unanswering.clear(node)
        if getattr(response, "error_code", 0) == ke.NotControllerError.errno:
            failures.append(ke.NotControllerError(f"broker {node} is not the controller"))
        elif not won.is_done:
            won.success((node, response))
        _woken(wake)

    def failed(node: int, exc: BaseException) -> None:
        silent.discard(node)
        if timed_out(exc):
            unanswering.mark(node)
        failures.append(exc)
        _woken(wake)

    async def until(deadline: float) -> None:
        """Wait until an answer won, every request sent failed, or ``deadline`` (monotonic)."""
        while not won.is_done and silent and (left := deadline - time.monotonic()) > 0:
            wake[0] = Future()
            with contextlib.suppress(ke.KafkaTimeoutError):
                await manager.wait_for(wake[0], left * 1000)

    async def race() -> tuple[int, Any]:
        deadline = time.monotonic() + timeout_s
        for node in nodes:
            silent.add(node)
            sent = library.send(manager, request(), node_id=node, request_timeout_ms=int(timeout_s * 1000))
            sent.add_callback(partial(answered, node))
            sent.add_errback(partial(failed, node))
            await until(min(deadline, time.monotonic() + hedge))
            if won.is_done or time.monotonic() >= deadline:
                break
        await until(deadline)
        still = sorted(silent)
        for node in still:  # beaten by another broker, or out of time: passed over until it answers
            unanswering.mark(node)
        if won.is_done:
            return won.value  # type: ignore[no-any-return]
        if still or not failures:
            raise ke.KafkaTimeoutError(f"no answer from broker {', '.join(map(str, still))} in {timeout_s:g} s")
        raise failures[0]

    return manager.run(race)  # type: ignore[no-any-return]


def _woken(wake: list[Any]) -> None:
    if not wake[0].is_done:
        wake[0].success(None)
