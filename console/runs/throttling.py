"""The throttles of a run: set per wave at the run's rate, each change recorded in the ledger with
what was there before, and taken off exactly."""

from __future__ import annotations

import time

from console.adapters.kafka.wire import CONFIGS_PARTIAL
from console.core.errors import (
    ClusterUnavailable,
)
from console.core.limits import FOLLOWER_RATE, LEADER_RATE, LOG_DIR_RATE
from console.core.model import (
    BrokerId,
    ClusterState,
    SourceStatus,
)
from console.moves.throttles import Throttle, merged, unmerged, wave_throttle
from console.plans.plan import PlanEntry
from console.runs.audited import Intent
from console.runs.settle import configs_shown, send_configs
from console.runs.steps import BrokerChanges, Ports, TopicChanges
from console.storage.runs import LedgerEntry, Run


class Throttler:
    """A run's throttles: set per wave at its rate (the ledger keeping what was there before), set
    to a new rate, and taken off exactly."""

    def __init__(self, ports: Ports, poll_s: float) -> None:
        self.ports = ports
        self.store = ports.store
        self.cluster = ports.cluster
        self.poll_s = poll_s
        """Pause between looks while waiting for the brokers to report a throttle."""

    def apply_rate(self, run: Run, rate: int) -> None:
        """Give the brokers the running wave throttles the run's new ``rate`` (the ledger keeps
        what was there before the run); the caller recorded the change."""
        changes: BrokerChanges = {}
        for e in self.store.runs.ledger(run.id):
            if e.kind == "broker":  # each rate the run set, and only those: a dir copy's broker keeps its others
                changes.setdefault(BrokerId(int(e.name)), {})[e.key] = str(rate)
        self.cluster.alter_configs(changes, {})

    def throttle(self, run: Run, wave: int, state: ClusterState, entries: tuple[PlanEntry, ...]) -> None:
        """Throttle what ``wave`` moves at the run's rate, the ledger recording what was there before."""
        if run.rate is None:
            return
        need = wave_throttle(state, entries)
        _throttles_known(state, need)
        with self.store.transaction():
            brokers, topics = self._ledger_throttle(run, wave, state, need)
            self.ports.resumed(run, self.ports.orphans(run, "throttle-set", wave), found(bool(brokers or topics)))
            if not brokers and not topics:  # the cluster shows it throttled already: nothing is sent again
                return
            intent = self.ports.announce(
                run,
                "throttle-set",
                {
                    "run": run.id,
                    "wave": wave,
                    "rate": run.rate,
                    "brokers": sorted(need.brokers),
                    **({"log_dir_brokers": sorted(need.dir_brokers)} if need.dir_brokers else {}),
                    "topics": {t: dict(c) for t, c in topics.items()},
                },
            )
        self._configs(intent, brokers, topics)
        self._await_configs(brokers, topics)

    def _ledger_throttle(
        self, run: Run, wave: int, state: ClusterState, need: Throttle
    ) -> tuple[BrokerChanges, TopicChanges]:
        """The config changes that throttle ``need`` at the run's rate, each recorded in the ledger
        with what was there before. A worker that stopped after setting the throttle finds it set:
        what the ledger holds of this run already is not recorded twice (the run's own rate is not
        "what was there before"), and a config the cluster shows at the run's value is not sent again."""
        brokers_now, topics_now = state.throttles.broker_map(), state.throttles.topic_map()
        broker_changes: BrokerChanges = {}
        topic_changes: TopicChanges = {}
        held = {(e.kind, e.name, e.key) for e in self.store.runs.ledger(run.id)}
        rates = [(b, key) for b in sorted(need.brokers) for key in (LEADER_RATE, FOLLOWER_RATE)]
        rates += [(b, LOG_DIR_RATE) for b in sorted(need.dir_brokers)]  # copies between a broker's dirs
        for b, key in rates:
            if ("broker", str(b), key) not in held:
                self.store.runs.ledger_add(
                    run.id, wave, "broker", str(b), key, brokers_now.get(str(b), {}).get(key), str(run.rate)
                )
            if brokers_now.get(str(b), {}).get(key) != str(run.rate):  # else set already (by a driver before)
                broker_changes.setdefault(b, {})[key] = str(run.rate)
        for topic, keys in sorted(need.topics.items()):
            for key, ours in sorted(keys.items()):
                before = topics_now.get(topic, {}).get(key)
                value = merged(before, ours)
                if value is None:
                    continue
                added = sorted(ours - set((before or "").split(",")))
                self.store.runs.ledger_add(run.id, wave, "topic", topic, key, before, ",".join(added))
                topic_changes.setdefault(topic, {})[key] = value
        return broker_changes, topic_changes

    def _await_configs(
        self,
        brokers: dict[BrokerId, dict[str, str | None]],
        topics: dict[str, dict[str, str | None]],
        timeout_s: float = 15.0,
    ) -> None:
        """Wait until every broker reports the throttle it was given: brokers apply dynamic
        configs a moment after the change, and a wave submitted before would copy unthrottled."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if configs_shown(self.cluster.describe_configs(tuple(brokers), tuple(topics)), brokers, topics):
                return
            time.sleep(min(self.poll_s, 0.2))
        raise ClusterUnavailable(
            "The throttle was set but the brokers do not report it yet; the wave waits.",
            "The console checks again at its next step.",
        )

    def unthrottle(self, run: Run, wave: int | None) -> None:
        """Take away exactly what this run (this wave) set; restore what was there before. A
        broker rate another, later run also set is handed over to it instead."""
        mine = [e for e in self.store.runs.ledger(run.id) if wave is None or e.wave == wave]
        if not mine:
            return
        fresh = self.cluster.snapshot(full=True)  # every topic's throttle lists as they are now
        if fresh.status.configs is not SourceStatus.OK or fresh.status.metadata is not SourceStatus.OK:
            raise ClusterUnavailable(
                "The throttles could not be read, so they were not taken off yet.",
                "The console tries again at its next step.",
            )
        brokers, topics, done = self._to_restore(mine, fresh)
        orphans = self.ports.orphans(run, "throttle-removed", wave)  # a driver before this one stopped mid-request
        if brokers or topics:  # else already as they were (a driver before this one took them off): nothing sent
            request = {
                "run": run.id,
                "wave": wave,
                "brokers": {str(b): c for b, c in brokers.items()},
                "topics": topics,
            }
            with self.store.transaction():
                self.ports.resumed(run, orphans, found(True))
                intent = self.ports.announce(run, "throttle-removed", request)
            self._configs(intent, brokers, topics)
        with self.store.transaction():
            if not (brokers or topics):
                self.ports.resumed(run, orphans, found(False))
            for i in done:
                self.store.runs.ledger_restored(i)

    def _to_restore(
        self, mine: list[LedgerEntry], fresh: ClusterState
    ) -> tuple[BrokerChanges, TopicChanges, list[int]]:
        """The config changes that take ``mine`` (ledger entries) away, and the entries they close.
        A broker rate a later run also set is handed over to it here; a broker that is down keeps
        its entry open for the sweeper; a deleted topic's entries close (its configs went with it);
        a config the cluster already shows as it was before closes without a change (a driver that
        lost the run took it off and could not record it: it is not sent twice)."""
        topics_now, brokers_now = fresh.throttles.topic_map(), fresh.throttles.broker_map()
        live = {str(b.id) for b in fresh.brokers if b.live}
        everyone = self.store.runs.ledger()
        broker_changes: BrokerChanges = {}
        topic_changes: TopicChanges = {}
        done: list[int] = []
        handed: dict[int, str | None] = {}  # entries of this call that took over an earlier "before"
        topics_there = set(fresh.topics)
        for e in mine:
            before = handed.get(e.id, e.before)
            if e.kind == "topic" and e.name not in topics_there:  # deleted: its configs went with it
                done.append(e.id)
                continue
            if e.kind == "topic":
                changed, value = unmerged(topics_now.get(e.name, {}).get(e.key), e.added.split(","))
                if changed:
                    topic_changes.setdefault(e.name, {})[e.key] = value
                done.append(e.id)
                continue
            later = [o for o in everyone if (o.kind, o.name, o.key) == (e.kind, e.name, e.key) and o.id > e.id]
            if later:
                self.store.runs.ledger_restored(e.id, hand_over_to=later[0].id, before=before)
                handed[later[0].id] = before
            elif e.name in live:  # a broker that is down keeps its entry open for the sweeper
                if brokers_now.get(e.name, {}).get(e.key) != before:
                    broker_changes.setdefault(BrokerId(int(e.name)), {})[e.key] = before
                done.append(e.id)
        return broker_changes, topic_changes, done

    def _configs(self, intent: Intent, brokers: BrokerChanges, topics: TopicChanges) -> None:
        """IncrementalAlterConfigs, its answer recorded against its intent (:func:`send_configs`)."""
        send_configs(self.cluster, intent, brokers, topics)


def found(sent_again: bool) -> dict[str, object]:
    """The answer of a config request a stopped driver never answered, by what the brokers report
    to the driver that took its run over: as asked (nothing sent again), or not all of it (what
    they do not report is sent again)."""
    if sent_again:
        return {"applied": "not all of it: what the brokers do not report is sent again", "sent_again": True}
    return {"applied": "the brokers report it", "sent_again": False}


def _throttles_known(state: ClusterState, need: Throttle) -> None:
    """What was there before must be known for every broker and topic about to change: the
    ledger restores it later, and an unknown value would be restored as "nothing"."""
    unknown = sorted(
        {
            f"broker {f.broker}"
            for f in state.findings
            if f.code == CONFIGS_PARTIAL and f.broker is not None and f.broker in need.brokers
        }
        | {
            f"topic {f.topic}"
            for f in state.findings
            if f.code == CONFIGS_PARTIAL and f.topic is not None and f.topic in need.topics
        }
    )
    if state.status.configs is not SourceStatus.OK or unknown:
        raise ClusterUnavailable(
            "The throttles in force could not be read "
            + (f"for {', '.join(unknown)}" if unknown else "")
            + "; the wave waits.",
            "The console reads them again at its next step.",
        )
