"""The configuration files of a sandbox's processes: properties, log4j, the SASL listener, tiered storage."""

from __future__ import annotations

from pathlib import Path

from console.sandbox.jars import TIERED_RSM
from console.sandbox.versions import (
    Mode,
)

RACKS = ("rack-a", "rack-b", "rack-c")
"""Broker i is on RACKS[i % 3]: three racks, so a 6-broker sandbox has two brokers per rack."""
# SASL/PLAIN users of the sandbox's second listener (ACLs enforced there): admin is a super user,
# viewer holds the read-only ACLs the console needs, nobody holds none.
SASL_USERS = {"admin": "admin-secret", "viewer": "viewer-secret", "nobody": "nobody-secret"}
AUTHORIZERS = {
    Mode.ZOOKEEPER: "kafka.security.authorizer.AclAuthorizer",
    Mode.KRAFT: "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
}


def tiered_props(data: Path) -> dict[str, object]:
    """Broker configs for tiered storage (KIP-405) on :data:`TIERED_RSM`, the "remote" store a
    directory under the sandbox's data dir, its metadata topic small (3 partitions, one replica)."""
    return {
        "remote.log.storage.system.enable": "true",
        "remote.log.storage.manager.class.name": TIERED_RSM,
        "remote.log.storage.manager.impl.prefix": "rsm.config.",
        "rsm.config.dir": data / "remote",
        "remote.log.metadata.manager.listener.name": "PLAINTEXT",
        "rlmm.config.remote.log.metadata.topic.num.partitions": 3,
        "rlmm.config.remote.log.metadata.topic.replication.factor": 1,
        "remote.log.manager.task.interval.ms": 1000,
        "log.retention.check.interval.ms": 1000,
    }


def _write_props(path: Path, props: dict[str, object]) -> None:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))


def _write_log4j(data: Path) -> None:
    (data / "config" / "log4j.properties").write_text(
        "log4j.rootLogger=INFO, file\n"
        "log4j.appender.file=org.apache.log4j.FileAppender\n"
        "log4j.appender.file.File=${kafka.logs.dir}/${sandbox.name}-server.log\n"
        "log4j.appender.file.layout=org.apache.log4j.PatternLayout\n"
        "log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n\n"
        "log4j.logger.kafka.request.logger=WARN\n"
        "log4j.logger.kafka.log.LogCleaner=WARN\n"
        "log4j.logger.org.apache.zookeeper=WARN\n"
        "log4j.logger.state.change.logger=INFO\n"
        "log4j.logger.kafka.controller=INFO\n"
    )
    # the same for Kafka 4's log4j2 (without a configuration each process prints "No configuration found")
    (data / "config" / "log4j2.properties").write_text(
        "status = warn\n"
        "name = sandbox\n"
        "appender.file.type = File\n"
        "appender.file.name = file\n"
        "appender.file.fileName = ${sys:kafka.logs.dir}/${sys:sandbox.name}-server.log\n"
        "appender.file.layout.type = PatternLayout\n"
        "appender.file.layout.pattern = [%d] %p %m (%c)%n\n"
        "rootLogger.level = INFO\n"
        "rootLogger.appenderRef.file.ref = file\n"
        + "".join(
            f"logger.{key}.name = {name}\nlogger.{key}.level = {level}\n"
            for key, name, level in (
                ("request", "kafka.request.logger", "WARN"),
                ("cleaner", "kafka.log.LogCleaner", "WARN"),
                ("statechange", "state.change.logger", "INFO"),
                ("controller", "kafka.controller", "INFO"),
            )
        )
    )


def _broker_common(data: Path, i: int, port: int) -> dict[str, object]:
    return {
        "log.dirs": f"{data / f'broker-{i}' / 'd1'},{data / f'broker-{i}' / 'd2'}",
        "broker.rack": RACKS[i % len(RACKS)],
        "num.partitions": 1,
        "default.replication.factor": 1,
        "auto.create.topics.enable": "false",
        "offsets.topic.replication.factor": 1,
        "offsets.topic.num.partitions": 3,
        "transaction.state.log.replication.factor": 1,
        "transaction.state.log.min.isr": 1,
        "transaction.state.log.num.partitions": 3,
        "group.initial.rebalance.delay.ms": 0,
        "auto.leader.rebalance.enable": "false",
        "replica.lag.time.max.ms": 5000,
        # Kafka's default: an idle follower asks again twice a second, not ten times (a sandbox at
        # rest took 0.18 of a core with 100 ms, 0.10 with 500; a copy's fetches never wait)
        "replica.fetch.wait.max.ms": 500,
        "replica.fetch.backoff.ms": 200,
        "log.segment.bytes": 1048576,
        # Small replica fetches so a replication throttle takes effect within a partition's copy.
        "replica.fetch.max.bytes": 16384,
        "replica.fetch.response.max.bytes": 65536,
        "num.network.threads": 2,
        "num.io.threads": 2,
        "background.threads": 2,
        "num.replica.fetchers": 1,
        "log.cleaner.dedupe.buffer.size": 16777216,
        "log.cleaner.threads": 1,
        "num.recovery.threads.per.data.dir": 1,
        "controlled.shutdown.enable": "true",
    }


def _sasl(mode: Mode) -> dict[str, object]:
    """SASL/PLAIN for the sandbox users on the SASL_PLAINTEXT listener, ACLs enforced by the mode's
    authorizer; the PLAINTEXT listeners (inter-broker, and the controllers') are anonymous super users."""
    users = " ".join(f'user_{u}="{pw}"' for u, pw in SASL_USERS.items())
    return {
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": f"org.apache.kafka.common.security.plain.PlainLoginModule required {users};",
        "authorizer.class.name": AUTHORIZERS[mode],
        "super.users": "User:ANONYMOUS;User:admin",
    }


def _sasl_listener(port: int, sasl_port: int) -> dict[str, object]:
    """A PLAINTEXT listener (inter-broker, anonymous super user) and a SASL/PLAIN one with ACLs."""
    return {
        "listeners": f"PLAINTEXT://127.0.0.1:{port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
        "inter.broker.listener.name": "PLAINTEXT",
        **_sasl(Mode.ZOOKEEPER),
    }
