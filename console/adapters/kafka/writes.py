"""The requests that move partitions and leaders."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import partial

from console.adapters.kafka.base import ClientPart
from console.adapters.kafka.requests import Api
from console.adapters.kafka.translate import translate
from console.adapters.kafka.wire import NO_ANSWER, _alter_reassignments, outcome_of
from console.core.errors import (
    PartiallyApplied,
)
from console.core.model import (
    BrokerId,
    Outcome,
    TopicPartition,
)


class Writes(ClientPart):
    """AlterPartitionReassignments and ElectLeaders."""

    # -- writes --------------------------------------------------------------------------------
    def alter_reassignments(
        self,
        targets: Mapping[TopicPartition, tuple[BrokerId, ...] | None],
        batch: int = 2_000,
        attempts: int = 5,
        *,
        allow_rf_change: bool = True,
    ) -> dict[TopicPartition, Outcome]:
        """AlterPartitionReassignments to the active controller: a target per partition, or None
        to cancel. Requests carry at most ``batch`` partitions. A request the controller did not
        take (NOT_CONTROLLER while it moves, no broker ready) changed nothing and is sent again,
        up to ``attempts`` times; partition errors are the broker's own, per partition, with the
        controller's message. A request whose answer did not come back (a timeout) raises
        :class:`AnswerLost` at once, unsent again (:func:`not_taken`). Raises
        :class:`ConsoleError` when a request never got an answer: the outcomes of the requests
        before it are in :class:`PartiallyApplied`'s ``outcomes``.

        ``allow_rf_change`` False: the requests carry ``AllowReplicationFactorChange=false`` where
        the broker taking them has AlterPartitionReassignments v1 (Kafka 4.1+; KIP-860), and go
        unguarded, as before, where it has not (:func:`_alter_reassignments`)."""
        from kafka import TopicPartition as KafkaTP

        out: dict[TopicPartition, Outcome] = {}
        items = list(targets.items())
        for start in range(0, len(items), batch):
            chunk = items[start : start + batch]
            request = {KafkaTP(t, p): (None if r is None else [int(b) for b in r]) for (t, p), r in chunk}
            self.client.requests.sent(Api.ALTER_PARTITION_REASSIGNMENTS, len(chunk))
            answer = self.client._to_controller(
                "AlterPartitionReassignments",
                partial(_alter_reassignments, reassignments=request, allow_rf_change=allow_rf_change),
                attempts,
                out,
                write=True,
            )
            for (t, p), _ in chunk:
                err, said = answer.get(KafkaTP(t, p), (NO_ANSWER, None))
                out[(t, p)] = outcome_of(t, p, err, said)
        return out

    def elect_leaders(self, keys: Iterable[TopicPartition], batch: int = 2_000) -> dict[TopicPartition, Outcome]:
        """Preferred leader election (ElectLeaders, KIP-460) of ``keys``, in batches; per partition
        the broker's answer (ELECTION_NOT_NEEDED counts as accepted: the preferred replica leads)."""
        from confluent_kafka import ElectionType
        from confluent_kafka import TopicPartition as CTP

        admin = self.client.confluent()
        items = list(keys)
        out: dict[TopicPartition, Outcome] = {}
        for start in range(0, len(items), batch):
            chunk = items[start : start + batch]
            self.client.requests.sent(Api.ELECT_LEADERS, len(chunk))
            try:
                # no request_timeout/operation_timeout: confluent-kafka 2.16's binding refuses either
                # ("SystemError: more argument specifiers than keyword list entries"); the wait for
                # the answer is bounded here instead
                answer = admin.elect_leaders(ElectionType.PREFERRED, [CTP(t, p) for t, p in chunk]).result(
                    timeout=self.client.settings.timeout_s + 1
                )
            except Exception as e:
                err = translate(e, "ElectLeaders")
                raise (PartiallyApplied(err, out) if out else err) from None
            for tp, error in answer.items():
                # a KafkaError per partition (a KafkaException wrapping one in older releases)
                kerr = error.args[0] if isinstance(error, BaseException) and error.args else error
                code = None if kerr is None else str(kerr.name()) if hasattr(kerr, "name") else type(kerr).__name__
                ok = kerr is None or code == "ELECTION_NOT_NEEDED"
                text = None if ok else str(kerr.str()) if hasattr(kerr, "str") else str(kerr)
                out[(tp.topic, tp.partition)] = Outcome(tp.topic, tp.partition, ok, None if ok else code, text)
        return out
