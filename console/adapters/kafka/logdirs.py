"""Log dirs: where each replica lives, and moves between a broker's dirs."""

from __future__ import annotations

from collections.abc import Mapping

from console.adapters.kafka.base import ClientPart
from console.adapters.kafka.requests import Api
from console.adapters.records import (
    BrokerLogDirs,
)
from console.core.model import (
    BrokerId,
    DirOutcome,
    LogDir,
)


class LogDirsAdmin(ClientPart):
    """Log dirs: AlterReplicaLogDirs and DescribeLogDirs."""

    def alter_replica_log_dirs(self, moves: Mapping[tuple[str, int, BrokerId], str]) -> list[DirOutcome]:
        """AlterReplicaLogDirs (KIP-113) to each replica's broker: per replica the broker's answer
        (REPLICA_NOT_AVAILABLE for one it does not hold yet: it keeps the dir for when it creates it)."""
        from kafka.structs import TopicPartitionReplica

        if not moves:
            return []
        request = {TopicPartitionReplica(t, p, int(b)): d for (t, p, b), d in moves.items()}
        for b in sorted({b for _, _, b in moves}):
            self.client.requests.sent(Api.ALTER_REPLICA_LOG_DIRS, sum(1 for m in moves if m[2] == b), int(b))
        answer = self.client._with_kp("AlterReplicaLogDirs", lambda c: c.alter_replica_log_dirs(request))
        out = []
        for (t, p, b), d in moves.items():
            err = answer.get(TopicPartitionReplica(t, p, int(b)))
            code = None if err is None or getattr(err, "errno", 0) == 0 else str(getattr(err, "message", err))
            out.append(DirOutcome(t, p, b, d, code if err is not None else "NO_ANSWER"))
        return out

    def describe_log_dirs(self, broker: BrokerId, partitions: dict[str, list[int]]) -> BrokerLogDirs:
        """DescribeLogDirs on ``broker`` for ``partitions`` (topic → partition ids; empty: none, the
        broker's dirs only, with their sizes and free space)."""
        self.client.requests.sent(Api.DESCRIBE_LOG_DIRS, sum(map(len, partitions.values())), int(broker))
        raw = self.client._with_kp(
            f"DescribeLogDirs on broker {broker}",
            lambda c: c.describe_log_dirs(partitions, brokers=[int(broker)]),
        )
        dirs: list[LogDir] = []
        replicas: list[tuple[str, int, str, int, bool]] = []
        for answer in raw:
            for d in answer["log_dirs"]:
                err = d.get("error_code", 0)
                total, usable = d.get("total_bytes", -1), d.get("usable_bytes", -1)
                cordoned = d.get("is_cordoned")  # only in v5 answers (Kafka 4.3 and later)
                dirs.append(
                    LogDir(
                        d["log_dir"],
                        None
                        if not err
                        else f"error {err}" + (" (KAFKA_STORAGE_ERROR: the dir is offline)" if err == 56 else ""),
                        total if total is not None and total >= 0 else None,
                        usable if usable is not None and usable >= 0 else None,
                        None if cordoned is None else bool(cordoned),
                    )
                )
                for t in d.get("topics", ()):
                    for p in t["partitions"]:
                        if p["partition_size"] >= 0:
                            replicas.append(
                                (t["name"], p["partition_index"], d["log_dir"], p["partition_size"], p["is_future_key"])
                            )
        return BrokerLogDirs(broker, tuple(dirs), tuple(replicas))
