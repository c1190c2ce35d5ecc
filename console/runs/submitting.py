"""A wave sent: what is left to send (reconciled with the cluster when resumed), through the Admin
API or the legacy znode, and its answers kept."""

from __future__ import annotations

import time
from functools import partial

from console.core.errors import (
    PartiallyApplied,
    UnsupportedByCluster,
)
from console.core.model import (
    BrokerId,
    ClusterState,
    Outcome,
    TopicPartition,
)
from console.core.states import SubmitPath
from console.metrics.instruments import WAVES_SENT
from console.moves.rf_guard import split_by_rf
from console.plans.plan import parse_plan
from console.runs.reassign import send_reassignments
from console.runs.steps import Ports
from console.storage.runs import Run, Wave


class Submitter:
    """A wave's partitions sent once (what the cluster shows sent already is not sent again), their
    answers kept."""

    def __init__(self, ports: Ports, poll_s: float) -> None:
        self.ports = ports
        self.store = ports.store
        self.cluster = ports.cluster
        self.poll_s = poll_s
        """Pause between looks when reconciling a resumed wave."""

    def send(self, run: Run, wave: Wave, state: ClusterState, resuming: bool = False) -> bool:
        """Send what is left of ``wave`` (``resuming``: a worker stopped between its intent and its
        answer: reconciled with the cluster first), its answers kept; False when the cluster is
        older than 2.4 (nothing was applied: the run takes the znode path, and its wave is sent again)."""
        send = self._left_to_send(run, wave, state, resuming)
        request = {"run": run.id, "wave": wave.number, "partitions": [[t, p, list(r)] for (t, p), r in send.items()]}
        if send and run.path is SubmitPath.ZOOKEEPER:
            self._send_znode(run, wave, request, send)
        elif send and not self._send_wave(run, wave, request, send, state):
            return False
        return True

    def _left_to_send(
        self, run: Run, wave: Wave, state: ClusterState, resuming: bool
    ) -> dict[TopicPartition, tuple[BrokerId, ...]]:
        """The wave's partitions still to send, and their targets.

        A wave whose answer was never recorded may have been sent: whatever the cluster shows
        moving to, or sitting at, its target is not sent again (recorded as sent already). Brokers
        learn a completed move from the controller a moment later, so a resumed wave looks a few
        times."""
        recorded = {o.key for o in self.store.runs.outcomes(run.id, wave.number)}
        entries = [e for e in parse_plan(wave.entries_json).entries if e.key not in recorded]
        send: dict[TopicPartition, tuple[BrokerId, ...]] = {e.key: e.replicas for e in entries}
        found: list[Outcome] = []
        looks = 6 if resuming else 1
        for look in range(looks):
            index = state.partition_index
            for e in entries:
                p = index.get(e.key)
                if (
                    e.key in send
                    and p is not None
                    and (p.target == e.replicas if p.reassigning else p.replicas == e.replicas)
                ):
                    del send[e.key]
                    found.append(
                        Outcome(e.topic, e.partition, True, "ALREADY_SENT", "moving to (or at) its target when resumed")
                    )
            if not send or look == looks - 1:
                break
            time.sleep(self.poll_s)
            state = self.cluster.snapshot()
        orphans = self.ports.orphans(run, "submit-wave", wave.number)  # a driver before this one stopped mid-request
        with self.store.transaction():
            if found:
                self.store.runs.add_outcomes(run.id, wave.number, found)
            self.ports.resumed(
                run,
                orphans,
                {"already_sent": [[o.topic, o.partition] for o in found], "sent_again": [[t, p] for t, p in send]},
            )
        return send

    def _send_znode(
        self, run: Run, wave: Wave, request: dict[str, object], send: dict[TopicPartition, tuple[BrokerId, ...]]
    ) -> None:
        """The wave through the pre-2.4 znode (its intent says so)."""
        intent = self.ports.announce(run, "submit-wave", {**request, "path": "zookeeper"}).answered_as(request)
        intent.send(partial(self.cluster.create_legacy_reassignment, send))
        with self.store.transaction():
            self.store.runs.add_outcomes(
                run.id,
                wave.number,
                [Outcome(t, p, True, "ZNODE", "written to /admin/reassign_partitions") for t, p in send],
            )
            intent.answer("znode created")
        WAVES_SENT.labels(run.cluster).inc()

    def _send_wave(
        self,
        run: Run,
        wave: Wave,
        request: dict[str, object],
        send: dict[TopicPartition, tuple[BrokerId, ...]],
        state: ClusterState,
    ) -> bool:
        """The wave through AlterPartitionReassignments, split by replication factor as ``state``
        shows the partitions (:func:`~console.runs.reassign.send_reassignments`: moves that keep it
        guarded, RF changes on their own, named in the audited request); False when the cluster is
        older than 2.4 and has ZooKeeper (nothing was applied: the run takes the znode path)."""
        _, changing = split_by_rf(send, state.partition_index)
        if changing:
            request = {**request, "rf_changes": [[t, p] for t, p in changing]}
        intent = self.ports.announce(run, "submit-wave", request)
        try:
            outcomes = intent.send(
                partial(send_reassignments, self.cluster, send, state),
                answered_by_caller=(UnsupportedByCluster, PartiallyApplied),
            )
        except UnsupportedByCluster as e:
            if not self.cluster.has_zookeeper:
                intent.failed(e)
                raise
            with self.store.transaction():
                self.store.runs.set_path(run.id, SubmitPath.ZOOKEEPER)
                intent.answer("unsupported: using the znode path")
            return False
        except PartiallyApplied as e:  # what was applied is recorded; resuming reconciles the rest
            self.ports.partly_answered(intent, wave.number, e)
            raise e.cause from None
        self.ports.answered(intent, wave.number, list(outcomes.values()))  # nothing applied on a failure: sent again
        WAVES_SENT.labels(run.cluster).inc()
        return True
