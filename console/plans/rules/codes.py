"""The review's finding codes (stable: the CLI's --json and the store use them) and the words
several rules share."""

from __future__ import annotations

UNKNOWN_TOPIC = "unknown-topic"
UNKNOWN_PARTITION = "unknown-partition"
UNKNOWN_BROKER = "unknown-broker"
BROKER_NOT_ELIGIBLE = "adding-on-ineligible-broker"
EMPTY_REPLICAS = "empty-replica-list"
DUPLICATE_BROKER = "duplicate-broker"
NEGATIVE_BROKER = "invalid-broker-id"
LOG_DIRS_LENGTH = "log-dirs-length"
UNKNOWN_LOG_DIR = "unknown-log-dir"
RF_CHANGE = "replication-factor-change"
RF_BELOW_MIN_ISR = "replication-factor-below-min-isr"
RF_STILL_BELOW_MIN_ISR = "replication-factor-still-below-min-isr"
BELOW_MIN_ISR_NOW = "below-min-isr-now"
RACK_SPREAD_REDUCED = "rack-spread-reduced"
RACKS_UNDERUSED = "racks-underused"
ALREADY_REASSIGNING = "already-reassigning"
NO_CHANGE = "no-change"
REORDER_ONLY = "reorder-only"
LEADER_NEEDS_ELECTION = "leader-needs-election"
EXCEEDS_FREE_SPACE = "exceeds-free-space"
STALE = "stale"
TOO_LARGE = "too-large-for-one-request"
TOO_LARGE_FOR_ZNODE = "too-large-for-znode"
OFFLINE_NOW = "offline-now"
SOURCE_ON_FENCED = "replica-on-fenced-broker"
CORDONED_DESTINATION = "cordoned-destination"
CORDONED_REFUSED = "cordoned-broker-refused"
"""A replica sent to a wholly cordoned broker of a cluster whose controller refuses it (Kafka 4.4 and
later): an error no override lets through, since nothing would be moved."""
OFFLINE_LOG_DIR = "offline-log-dir"
TIERED_LOCAL_ONLY = "tiered-local-log-only"

OVERRIDABLE = frozenset({CORDONED_DESTINATION})
"""Errors the operator may override explicitly when submitting (``submit --allow-cordoned``, the
Review page's checkbox); the override is audited with the run. Every other error blocks."""
CORDON_WHY = (
    "Kafka 4.3's controller accepts and completes such an explicit reassignment, Kafka 4.4's refuses one onto "
    "a broker whose every log dir is cordoned, and a broker refuses a cordoned dir (a new replica goes to "
    "another of its dirs): this check is the console's own, made before anything is sent."
)
CORDON_REFUSED_WHY = (
    "This cluster's Kafka release (4.4 or later) refuses an explicit reassignment onto a broker whose every "
    "log dir is cordoned (INVALID_REPLICATION_ASSIGNMENT, per partition): submitted anyway, the partition "
    "would not move."
)
CORDON_REFUSED_HINT = "Pick another broker, or uncordon it first (python -m console uncordon --broker N)."
CORDON_HINT = (
    "Pick another broker (or dir), uncordon it first (python -m console uncordon --broker N), or submit "
    "anyway with --allow-cordoned (Review: “Submit onto cordoned brokers anyway”), which the audit log records."
)
OFFLINE_DIR_HINT = (
    'Pick another dir (or "any"). A transient I/O error during a move between log dirs can mark a whole '
    "dir offline (KAFKA-19571): it comes back only when the broker restarts."
)
FENCED_WHY = "is fenced (registered but fenced: it takes no replicas)"
"""How a plan check says a broker the cluster knows is fenced (DescribeCluster, KIP-1073)."""
DIR_PEAK_FILL = "log-dir-peak-fill"
"""A log dir whose peak during the plan (current + adding, before removing) passes the set fill."""
CROSS_ZONE_GROWTH = "cross-zone-traffic-grows"
"""The steady replication traffic across zones of the partitions moved grows by more than the set share."""
LEADERS_CONCENTRATED = "leaders-concentrated"
"""A broker leads many times the mean of the brokers that lead, after the plan."""
