"""Notifications: the delivery queue (retries with back-off on a fake clock, order per destination,
never blocking the caller), the settings, and the events a run on the fake cluster emits, in
order, once each, with the failures kept and audited."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from console.access.auth import Identity, write_users
from console.core.errors import AuthorizationFailed, ClusterUnavailable
from console.core.model import BrokerId
from console.core.states import RunState
from console.moves.impact import Pricing
from console.moves.waves import WaveLimits
from console.notify import hub
from console.notify.delivery import Delivery, DeliveryError, Failure
from console.notify.events import DEFAULT_EVENTS, Event, Message, Progress, run_link
from console.notify.settings import Destination, NotifySettings, parse, redact
from console.plans.plan import Plan, PlanEntry
from console.runs.executor import Executor
from console.services import decommission as flow_service
from console.services import plans as plan_service
from console.services import runs as run_service
from console.storage.store import Store
from tests.fakes.cluster import FakeCluster

pytestmark = pytest.mark.usefixtures("no_sleep")

HOOK = Destination("json://127.0.0.1:9/hook", frozenset(Event))
OTHER = Destination("json://127.0.0.1:9/other", frozenset(Event))


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Receiver:
    """A sender that fails the first ``fail`` attempts of each URL, then takes everything."""

    def __init__(self, fail: int = 0, clock: Clock | None = None) -> None:
        self.fail = fail
        self.clock = clock
        self.attempts: list[tuple[str, str, float | None]] = []
        self.taken: list[tuple[str, str]] = []

    def __call__(self, url: str, message: Message) -> None:
        self.attempts.append((url, message.detail, self.clock() if self.clock else None))
        if sum(1 for u, _, _ in self.attempts if u == url) <= self.fail:
            raise DeliveryError("connection refused")
        self.taken.append((url, message.detail))


def message(text: str, event: Event = Event.RUN_STARTED) -> Message:
    return Message(event, "prod", "ann", text, run=1)


def test_a_refused_message_is_retried_with_back_off_and_keeps_its_destinations_order() -> None:
    clock = Clock()
    receiver = Receiver(fail=2, clock=clock)
    failures: list[Failure] = []
    delivery = Delivery(receiver, retries=5, backoff_s=1.0, clock=clock)
    delivery.submit(message("first"), [HOOK], failures.append)
    delivery.submit(message("second"), [HOOK], failures.append)
    assert delivery.step() == 1.0  # refused once: again in 1 s
    clock.now += 0.5
    assert delivery.step() == 0.5 and len(receiver.attempts) == 1  # not due yet: not tried
    clock.now += 0.5
    assert delivery.step() == 2.0  # refused again: the wait doubles
    clock.now += 2.0
    assert delivery.step() is None  # taken, and "second" right after it
    assert receiver.taken == [(HOOK.url, "first"), (HOOK.url, "second")]
    assert [t for _, _, t in receiver.attempts] == [100.0, 101.0, 103.0, 103.0]
    assert not failures and delivery.waiting() == 0


def test_a_message_given_up_on_is_handed_to_its_failure_once_and_the_next_goes() -> None:
    clock = Clock()
    receiver = Receiver(fail=3, clock=clock)
    failures: list[Failure] = []
    delivery = Delivery(receiver, retries=2, backoff_s=1.0, clock=clock)
    delivery.submit(message("lost"), [HOOK], failures.append)
    delivery.submit(message("next"), [HOOK], failures.append)
    for _ in range(10):
        wait = delivery.step()
        if wait is None:
            break
        clock.now += wait
    assert [(f.message.detail, f.attempts, f.error) for f in failures] == [("lost", 3, "connection refused")]
    assert failures[0].destination == "json://127.0.0.1:9/…"
    assert receiver.taken == [(HOOK.url, "next")]  # its 4th attempt overall: the URL takes it now


def test_one_destination_refusing_does_not_hold_back_another() -> None:
    clock = Clock()
    delivery = Delivery(Receiver(fail=0, clock=clock), retries=1, backoff_s=5.0, clock=clock)
    down = Destination("json://127.0.0.1:9/down", frozenset(Event))

    def send(url: str, m: Message) -> None:
        if url == down.url:
            raise DeliveryError("refused")
        taken.append(m.detail)

    taken: list[str] = []
    delivery.send = send
    delivery.submit(message("a"), [down, OTHER], lambda f: None)
    delivery.submit(message("b"), [down, OTHER], lambda f: None)
    delivery.step()
    assert taken == ["a", "b"] and delivery.waiting() == 2  # the refused ones wait their back-off


def test_submit_never_waits_on_a_destination_that_hangs() -> None:
    release = threading.Event()
    started = threading.Event()

    def hang(url: str, m: Message) -> None:
        started.set()
        release.wait(30)

    failures: list[Failure] = []
    delivery = Delivery(hang, retries=0, backoff_s=1.0, capacity=50).start()
    try:
        delivery.submit(message("m0"), [HOOK], failures.append)
        assert started.wait(5)  # the thread is inside the hanging send
        t0 = time.perf_counter()
        for i in range(1, 200):
            delivery.submit(message(f"m{i}"), [HOOK], failures.append)
        took = time.perf_counter() - t0
        assert took < 0.5, f"199 submits took {took:.3f} s while the destination hung"
    finally:
        release.set()
    assert delivery.drain(10)
    overflow = [f for f in failures if f.attempts == 0]
    assert len(overflow) == 200 - 50 and "not queued" in overflow[0].error  # m0 (sending) to m49 wait; the rest: said
    delivery.stop()


def test_settings_name_their_problems_and_leave_bad_destinations_out() -> None:
    settings = parse(
        {
            "public_url": "https://console.example.com/",
            "retries": 3,
            "clusters": {
                "prod": {
                    "destinations": [
                        {"url": "slack://T0/B0/secret-token"},
                        {"url": "json://h:1/x", "events": ["run-stuck", "no-such-event"]},
                        {"events": ["run-stuck"]},
                    ]
                },
                "*": {"destinations": [{"url": "ntfy://ntfy.example/topic", "events": ["wave-done"]}]},
            },
        }
    )
    assert settings.public_url == "https://console.example.com/" and settings.retries == 3
    assert [d.url for d in settings.for_cluster("id-1", "prod")] == [
        "slack://T0/B0/secret-token",
        "ntfy://ntfy.example/topic",
    ]
    assert settings.for_cluster("id-1", "prod")[0].events == DEFAULT_EVENTS and Event.WAVE_DONE not in DEFAULT_EVENTS
    assert len(settings.problems) == 2 and "no-such-event" in settings.problems[0] and "no url" in settings.problems[1]
    assert redact("slack://T0/B0/secret-token") == "slack://…"
    assert "secret" not in redact("json://user:secret@host:8080/path?token=secret")
    assert run_link("https://console.example.com/", 7) == "https://console.example.com/runs?run=7"
    assert parse({"retries": "many", "public_url": "ftp://x"}).problems[0].startswith("notify.toml: public_url")


def test_message_says_cluster_run_who_progress_eta_and_link() -> None:
    m = Message(
        Event.RUN_STUCK,
        "prod",
        "console-server",
        "Run #4 (drain) is stuck: no progress for 5 min 0 s: broker 3 is down.",
        4,
        "drain",
        Progress(6, 4, 1, 3, 125.0),
        "https://c.example/runs?run=4",
    )
    assert m.title == "[prod] Run stuck · run #4" and m.kind == "warning"
    assert m.body.splitlines() == [
        "Run #4 (drain) is stuck: no progress for 5 min 0 s: broker 3 is down.",
        "Cluster: prod",
        "Run: #4 (drain)",
        "By: console-server",
        "Moved so far: 6 partition(s); left: 4 (1 of 3 wave(s) done)",
        "ETA: 2 min 5 s",
        "https://c.example/runs?run=4",
    ]


# -- events of a run on the fake cluster ---------------------------------------------------------------
@pytest.fixture
def recorded(request: pytest.FixtureRequest) -> Iterator[tuple[list[Message], hub.Notifier]]:
    """The process's notifier over a recording sender (``fail``: it refuses everything)."""
    fail = getattr(request, "param", False)
    got: list[Message] = []

    def send(url: str, m: Message) -> None:
        if fail:
            raise DeliveryError("connection refused")
        got.append(m)

    settings = NotifySettings("https://c.example", {"*": (HOOK,)}, retries=1, backoff_s=0.01)
    yield got, hub.configure(settings, send)
    hub.reset()


def drive(store: Store, fake: FakeCluster) -> int:
    plan = Plan.of([PlanEntry("t", 0, (BrokerId(3), BrokerId(1))), PlanEntry("t", 1, (BrokerId(3), BrokerId(2)))])
    run_id = run_service.start_run(
        store,
        fake,
        fake.snapshot(),
        run_service.RunRequest(
            Identity.cli("ann"), plan, "r", run_service.RunSettings(rate=1000, limits=WaveLimits(1))
        ),
        users=None,
    )
    executor = Executor(store, fake, "worker")
    for _ in range(200):
        if executor.tick(run_id).run.state.terminal:
            return run_id
        fake.advance(1.0)
    raise AssertionError("the run did not end")


def test_a_run_emits_its_events_in_order_once_each(store: Store, recorded: tuple[list[Message], hub.Notifier]) -> None:
    got, notifier = recorded
    fake = FakeCluster.of(4, {"t": [(0, 1), (1, 2)]}, size=4000, copy_rate=10_000)
    run_id = drive(store, fake)
    assert notifier.delivery.drain(10)
    assert [m.event for m in got] == [Event.RUN_STARTED, Event.WAVE_DONE, Event.WAVE_DONE, Event.RUN_COMPLETED]
    assert {m.run for m in got} == {run_id} and got[0].who == "ann" and got[-1].who == "worker"
    assert got[0].progress == Progress(0, 2, 0, 2, got[0].progress.eta_s if got[0].progress else None)
    assert got[-1].progress is not None and got[-1].progress.left == 0 and got[-1].progress.moved == 2
    assert got[-1].link == f"https://c.example/runs?run={run_id}"


def test_a_run_with_a_partition_cancelled_says_it_completed_naming_it(
    store: Store, recorded: tuple[list[Message], hub.Notifier]
) -> None:
    from console.moves.cancel import plan_cancel
    from console.services import cancel as cancel_service

    got, notifier = recorded
    fake = FakeCluster({b: f"r{b}" for b in range(4)}, {("t", 0): ((0, 1), 1000), ("t", 1): ((1, 2), 10**9)})
    plan = Plan.of([PlanEntry("t", 0, (BrokerId(3), BrokerId(1))), PlanEntry("t", 1, (BrokerId(0), BrokerId(2)))])
    run_id = run_service.start_run(
        store, fake, fake.snapshot(), run_service.RunRequest(Identity.cli("ann"), plan, "r"), users=None
    )
    executor = Executor(store, fake, "worker", settle_s=0)
    executor.tick(run_id)
    fake.advance(2.0)  # t-0 moved, t-1 copies for ever
    ours = store.runs.active_partitions(fake.cluster_id)
    seen = plan_cancel(fake.snapshot(), [("t", 1)], ours)
    cancel_service.cancel_seen(store, fake, Identity.cli("bob"), fake.cluster_id, seen, ours, wait_s=5)
    assert executor.drive(run_id, every=0).state is RunState.PARTLY_CANCELLED
    assert notifier.delivery.drain(10)
    assert [m.event for m in got] == [Event.RUN_STARTED, Event.WAVE_DONE, Event.RUN_PARTLY_CANCELLED]
    last = got[-1]
    assert last.detail == f"Run completed, 1 partition cancelled: t-1 (run #{run_id}, r, by ann)."
    assert last.title == f"[fake-cluster] Run completed, partly cancelled · run #{run_id}"
    assert last.progress == Progress(1, 0, 1, 1, None, cancelled=1)
    assert "Moved so far: 1 partition(s); left: 0; cancelled: 1 (1 of 1 wave(s) done)" in last.body


@pytest.mark.parametrize("recorded", [True], indirect=True)
def test_a_run_with_its_destination_down_ends_alike_and_the_failures_are_kept_and_audited(
    store: Store, recorded: tuple[list[Message], hub.Notifier]
) -> None:
    _, notifier = recorded
    fake = FakeCluster.of(4, {"t": [(0, 1), (1, 2)]}, size=4000, copy_rate=10_000)
    run_id = drive(store, fake)
    assert store.runs.require(run_id).state is RunState.COMPLETED
    assert notifier.delivery.drain(10)
    failed = store.notifications.list()
    assert [f.event for f in reversed(failed)] == ["run-started", "wave-done", "wave-done", "run-completed"]
    assert {(f.attempts, f.error, f.destination) for f in failed} == {(2, "connection refused", "json://127.0.0.1:9/…")}
    audited = [a for a in store.audit.entries() if a.action == "notification-failed"]
    assert len(audited) == 4 and {a.user for a in audited} == {"console"} and {a.outcome for a in audited} == {"failed"}


def test_a_saved_plan_is_said_to_wait_for_approval_only_under_the_two_person_rule(
    store: Store, recorded: tuple[list[Message], hub.Notifier], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    got, notifier = recorded
    monkeypatch.setenv("CONSOLE_USERS_FILE", str(tmp_path / "users.json"))
    fake = FakeCluster.of(3, {"u": [(0, 1)]})
    plan = Plan.of([PlanEntry("u", 0, (BrokerId(1), BrokerId(2)))])
    carol = Identity.cli("carol")
    plan_service.save_plan(store, carol, fake.snapshot(), fake.name, "no rule", plan)
    write_users(tmp_path / "users.json", {"carol": ("pw", ["operator"])}, two_person_rule=True)
    plan_id = plan_service.save_plan(store, carol, fake.snapshot(), fake.name, "ruled", plan)
    assert notifier.delivery.drain(10)
    (m,) = got
    assert (
        m.event is Event.PLAN_AWAITING_APPROVAL
        and m.plan == plan_id
        and m.link == f"https://c.example/review?plan={plan_id}"
    )
    assert "who authored no version of it (not carol)" in m.detail and m.title.endswith(
        f"Plan waiting for approval · plan #{plan_id}"
    )


def test_the_approval_message_heads_with_what_the_plan_costs(
    store: Store, recorded: tuple[list[Message], hub.Notifier], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    got, notifier = recorded
    monkeypatch.setenv("CONSOLE_USERS_FILE", str(tmp_path / "users.json"))
    write_users(tmp_path / "users.json", {"carol": ("pw", ["operator"])}, two_person_rule=True)
    fake = FakeCluster.of(3, {"u": [(0, 1)]}, size=380 * 10**9)
    plan = Plan.of([PlanEntry("u", 0, (BrokerId(1), BrokerId(2)))])  # 2 (rack r2) copies from leader 0 (r0)
    plan_service.save_plan(
        store, Identity.cli("carol"), fake.snapshot(), fake.name, "priced", plan, pricing=Pricing("USD", 0.02)
    )
    assert notifier.delivery.drain(10)
    (m,) = got
    assert (
        "Impact: this plan copies 380.0 GB, 380.0 GB across zones ≈ USD 7.60; 1 leader change; broker 2's disk peaks at 38 %."
        in m.detail
    )


def test_a_run_that_fails_with_its_throttle_left_on_says_both(
    store: Store, recorded: tuple[list[Message], hub.Notifier]
) -> None:
    got, notifier = recorded
    fake = FakeCluster.of(4, {"t": [(0, 1)]}, size=4000, copy_rate=10_000)
    plan = Plan.of([PlanEntry("t", 0, (BrokerId(3), BrokerId(1)))])
    run_id = run_service.start_run(
        store,
        fake,
        fake.snapshot(),
        run_service.RunRequest(Identity.cli("ann"), plan, "r", run_service.RunSettings(rate=1000)),
        users=None,
    )
    n = len(fake.calls)  # the tick: snapshot, throttle set, read back, the wave sent, then the clean-up
    fake.fail_call(n + 3, AuthorizationFailed("Not authorised to alter reassignments."))
    fake.fail_call(n + 4, ClusterUnavailable("Broker 3 did not answer."))
    assert Executor(store, fake, "worker", settle_s=0, poll_s=0).tick(run_id).run.state is RunState.FAILED
    assert store.runs.ledger(run_id)  # the throttle it set is still on
    assert notifier.delivery.drain(10)
    assert [m.event for m in got] == [Event.RUN_STARTED, Event.RUN_FAILED, Event.THROTTLE_LEFT]
    assert got[1].detail.startswith("Run failed: Not authorised to alter reassignments.") and got[1].kind == "failure"
    assert "throttle --sweep" in got[2].detail and "broker 3" in got[2].detail


def test_a_stuck_run_is_said_once_with_what_it_waits_on(
    store: Store, recorded: tuple[list[Message], hub.Notifier]
) -> None:
    got, notifier = recorded
    fake = FakeCluster.of(4, {"t": [(0, 1)]}, size=4000, copy_rate=100)
    plan = Plan.of([PlanEntry("t", 0, (BrokerId(0), BrokerId(3)))])
    run_id = run_service.start_run(
        store, fake, fake.snapshot(), run_service.RunRequest(Identity.cli("ann"), plan, "r"), users=None
    )
    ex = Executor(store, fake, "worker", settle_s=0, poll_s=0, stuck_after_s=60)
    ex.tick(run_id)
    fake.stop_broker(3)
    for _ in range(12):
        ex.tick(run_id)
        fake.advance(10)
    assert notifier.delivery.drain(10)
    stuck = [m for m in got if m.event is Event.RUN_STUCK]
    assert len(stuck) == 1 and "broker 3 is down" in stuck[0].detail and stuck[0].progress is not None
    assert stuck[0].progress.left == 1 and stuck[0].kind == "warning"


def test_a_decommission_says_when_it_waits_for_a_person(
    store: Store, recorded: tuple[list[Message], hub.Notifier]
) -> None:
    got, notifier = recorded
    fake = FakeCluster.of(4, {"t": [[0, 3], [3, 1]]}, size=10_000, copy_rate=10**9)
    fake.kafka4 = True
    fake = fake.at_level(33)
    flow = flow_service.start(store, fake, Identity.cli("ann"), fake.name, (3,))
    assert notifier.delivery.drain(10)
    waits = [m for m in got if m.event is Event.DECOMMISSION_WAITING]
    assert len(waits) == 1 and f"Decommission #{flow.id} of broker(s) 3 waits for a person: review" in waits[0].detail
