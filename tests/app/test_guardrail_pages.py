"""AppTest: a run a guardrail paused (its destination broker stopped with a partition in flight onto
it) is said at the top of Live and of the run's section on Runs, in the words ``runs`` prints, with
"Cancel these…" (the cancel dialog on exactly the partitions that cannot finish) and "Resume" (the
service, its role and audit); a viewer sees both off, with the reason. The audit log says what the
guardrail saw and did in a sentence."""

from __future__ import annotations

import time

from streamlit.testing.v1 import AppTest

from components import keys
from console.access.auth import Identity
from console.core.model import BrokerId
from console.core.states import RunState
from console.moves.guardrails import GuardrailSettings
from console.moves.waves import WaveLimits
from console.plans.plan import Plan, PlanEntry
from console.present.guardrails import hold_notice
from console.runs.executor import Executor
from console.services import runs as run_service
from console.storage.store import Store
from tests.app.pages import APP, sign_in

WORDS = "broker 2, a destination of wave 2, is offline. In flight onto it: g-0 (cannot finish while it is gone)."


def paused_by_a_guardrail(fake_cluster) -> int:  # type: ignore[no-untyped-def]
    """A run of two waves (g-0 onto broker 2, then g-1 onto broker 2): the first is sent, then
    broker 2 stops and the guardrail pauses the run. The test's worker keeps the run's lease, so the
    server's worker leaves it be."""
    with fake_cluster.held() as fake:
        fake.create_topic("g", [[0], [1]], size=10**11)  # copies for hours
    plan = Plan.of([PlanEntry("g", 0, (BrokerId(0), BrokerId(2))), PlanEntry("g", 1, (BrokerId(1), BrokerId(2)))])
    store = Store()
    run_id = run_service.start_run(
        store,
        fake_cluster,
        fake_cluster.snapshot(),
        run_service.RunRequest(
            Identity.cli("ann"), plan, "g", run_service.RunSettings(limits=WaveLimits(moves_per_broker=1, partitions=1))
        ),
        users=None,
    )
    ex = Executor(store, fake_cluster, "ann", guardrails=GuardrailSettings())
    assert ex.tick(run_id).did.startswith("wave 1 submitted")
    with fake_cluster.held() as fake:
        fake.stop_broker(2)
    assert ex.tick(run_id).run.state is RunState.PAUSED
    return run_id


def test_live_and_runs_say_why_a_guardrail_paused_the_run_and_offer_cancel_these_and_resume(
    fake_cluster, sandbox_users
):
    run_id = paused_by_a_guardrail(fake_cluster)
    store = Store()
    notice = hold_notice(store.runs.require(run_id), store.holds.get(run_id), time.time())
    assert notice is not None and notice.words.endswith(WORDS)

    at = AppTest.from_file(APP, default_timeout=60).run()
    sign_in(at, "operator")
    assert at.header[0].value == "Live reassignments"
    (said,) = [w.value for w in at.warning if "by a guardrail" in w.value]
    assert said.startswith(f"Run {run_id} (g) paused by a guardrail since ") and said.endswith(WORDS)
    cancel = at.button(key=f"live.held_cancel.{run_id}")
    resume = at.button(key=f"live.held_resume.{run_id}")
    assert (cancel.label, cancel.disabled, resume.label, resume.disabled) == ("Cancel these…", False, "Resume", False)

    cancel.click().run()  # the cancel dialog, on exactly the partition that cannot finish
    assert not at.exception
    assert at.session_state[keys.CANCEL_SEEN].scope == (("g", 0),)
    assert at.button(key=keys.CANCEL_SEND).label == "Send the cancel for 1 partition"
    assert set(fake_cluster.list_reassignments()) == {("g", 0)}  # nothing sent before the confirmation

    at.switch_page("views/runs.py").run()
    assert not at.exception
    (said,) = [w.value for w in at.warning if "by a guardrail" in w.value]
    assert said.startswith("Paused by a guardrail since ")
    assert [b.label for b in at.button if b.label == "Resume"] == ["Resume"]  # one: the guardrail's
    at.button(key=f"runs.held_resume.{run_id}").click().run()
    assert not at.exception
    assert store.runs.require(run_id).state is RunState.RUNNING
    assert [(a.user, a.outcome) for a in store.audit.entries(action="run-running")] == [("operator", "running")]
    assert not [w for w in at.warning if "by a guardrail" in w.value]  # acknowledged: said no more
    assert at.session_state[keys.LAST_ACTION].startswith(f"Run {run_id} resumed by operator")
    audit = next(d.value for d in at.dataframe if "what" in d.value.columns)
    assert f"Run {run_id}, destination gone: {WORDS[:-1]} (paused)." in list(audit["what"])


def test_a_viewer_sees_why_and_the_buttons_off_with_the_reason(fake_cluster, sandbox_users):
    run_id = paused_by_a_guardrail(fake_cluster)
    at = AppTest.from_file(APP, default_timeout=60).run()
    sign_in(at, "viewer")
    assert [w.value for w in at.warning if "by a guardrail" in w.value]
    for key, action in ((f"live.held_cancel.{run_id}", "cancel"), (f"live.held_resume.{run_id}", "resume")):
        button = at.button(key=key)
        assert button.disabled and button.help.startswith(f"viewer may not {action}")
    at.switch_page("views/runs.py").run()
    assert not at.exception
    assert at.button(key=f"runs.held_resume.{run_id}").disabled
    assert Store().runs.require(run_id).state is RunState.PAUSED
