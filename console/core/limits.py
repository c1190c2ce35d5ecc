"""Numbers and names fixed by Kafka or chosen once for the whole console: one copy each."""

from __future__ import annotations

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

# Cordoned log dirs (KIP-1066, metadata.version 4.3-IV0 and later): a broker config.
CORDONED_LOG_DIRS = "cordoned.log.dirs"
"""The dynamic broker config naming the log dirs that receive no new replicas (a list, or ``*``)."""
CORDON_ALL = "*"
"""``cordoned.log.dirs`` that cordons every log dir of the broker: the whole broker."""

# Tiered storage (KIP-405, production-ready in Kafka 3.9): a topic config.
REMOTE_STORAGE_ENABLE = "remote.storage.enable"
"""``true`` on a topic whose older segments are kept in remote storage: a move copies its local log only."""
