"""Numbers and names fixed by Kafka or chosen once for the whole console: one copy each."""

from __future__ import annotations

from dataclasses import dataclass

INT32_MAX = 2**31 - 1
"""Broker ids and partition numbers are int32 in Kafka's protocol."""
MAX_TOPIC_LENGTH = 249
"""Kafka refuses longer topic names."""

REQUEST_LIMIT = 2_000
"""Partitions per AlterPartitionReassignments request the console sends at most."""
MOVES_PER_BROKER = 5
"""Adding replicas per broker in one wave, unless the operator says otherwise."""
PARTITIONS_PER_WAVE = 500
"""Partitions in one wave (one request), unless the operator says otherwise (at most :data:`REQUEST_LIMIT`)."""
ZNODE_LIMIT_BYTES = 1_000_000
"""ZooKeeper's default jute.maxbuffer (~1 MB): the legacy znode path must stay well under it."""

# Replication throttle configs (KIP-73), as ``kafka-reassign-partitions.sh --throttle`` sets them.
LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LOG_DIR_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"
LEADER_LIST = "leader.replication.throttled.replicas"
FOLLOWER_LIST = "follower.replication.throttled.replicas"
ALL_REPLICAS = "*"
"""A throttled-replicas list that throttles every replica of the topic."""
BROKER_THROTTLE_KEYS = (LEADER_RATE, FOLLOWER_RATE, LOG_DIR_RATE)
TOPIC_THROTTLE_KEYS = (LEADER_LIST, FOLLOWER_LIST)
MAX_THROTTLE = 10 * 1000**3
"""The default ceiling of a cluster's throttle (bytes/s; ``max_throttle``, ``CONSOLE_MAX_THROTTLE``):
10 GB/s (80 Gbit/s), more than most broker links carry. A throttle above a cluster's ceiling limits
nothing, so it is effectively unthrottled: sent only when the operator says so."""

# Cordoned log dirs (KIP-1066, metadata.version 4.3-IV0 and later): a broker config.
CORDONED_LOG_DIRS = "cordoned.log.dirs"
"""The dynamic broker config naming the log dirs that receive no new replicas (a list, or ``*``)."""
CORDON_ALL = "*"
"""``cordoned.log.dirs`` that cordons every log dir of the broker: the whole broker."""

# Tiered storage (KIP-405, production-ready in Kafka 3.9): a topic config.
REMOTE_STORAGE_ENABLE = "remote.storage.enable"
"""``true`` on a topic whose older segments are kept in remote storage: a move copies its local log only."""

# Plans read from outside (an upload, a paste, a file, a notebook): checked against these before
# anything else is done with them, so a hostile file costs a bounded amount (docs/GUIDE.md, "Limits").
MAX_PLAN_BYTES = 256 * 2**20
"""A plan file's size: a million entries of RF 3 take about 90 MiB."""
MAX_PLAN_UPLOAD_MB = MAX_PLAN_BYTES // 2**20
"""The same, as the pages' uploaders take it (Streamlit's "MB" are MiB); the server's own cap,
``server.maxUploadSize`` in .streamlit/config.toml, is no lower."""
MAX_PLAN_ENTRIES = 2_000_000
"""Entries (partitions) in one plan."""
MAX_REPLICAS = 32
"""Replicas in one entry when no cluster is known (when one is: no more than its brokers either)."""
MAX_PLAN_DEPTH = 8
"""How deep a plan's JSON may nest (a plan needs 4: file, list, entry, replica list)."""
MAX_LOG_DIR_LENGTH = 4096
"""A log dir's path (Linux's PATH_MAX)."""
BATCH_PLAN_BYTES = 4 * 2**30
"""A plan's size for the Spark review (``pipeline review``), run by an operator on big clusters."""
BATCH_PLAN_ENTRIES = 50_000_000
"""Entries of a plan for the Spark review."""
NAME_SHOWN = 60
"""Characters of a name a message shows before cutting it ("… (N characters)")."""
PROBLEMS_SHOWN = 20
"""Problems an error lists, one a line, before "and N more"."""
PROBLEMS_COUNTED = 10_000
"""Problems a plan's check finds before it stops looking ("and at least N more")."""


@dataclass(frozen=True)
class PlanLimits:
    """What a plan read from outside may hold (the defaults: everywhere but the Spark review)."""

    bytes: int = MAX_PLAN_BYTES
    entries: int = MAX_PLAN_ENTRIES
    replicas: int = MAX_REPLICAS
    depth: int = MAX_PLAN_DEPTH

    def replicas_for(self, brokers: int | None) -> int:
        """Replicas an entry may list: no more than the cluster's ``brokers`` when it is known."""
        return self.replicas if not brokers else min(self.replicas, brokers)


PLAN_LIMITS = PlanLimits()
BATCH_PLAN_LIMITS = PlanLimits(bytes=BATCH_PLAN_BYTES, entries=BATCH_PLAN_ENTRIES)
