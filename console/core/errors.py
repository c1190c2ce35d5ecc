"""The console's own error types.

Library errors (confluent-kafka, kafka-python, kazoo, subprocess, Maven) are translated into
these at the adapter boundary, so pages, the CLI and notebooks handle one tree::

    ConsoleError                      anything the console reports to an operator
    ├── ConfigError                   bad connection settings or command-config file
    │   └── PlanFormatError           a plan file that cannot be used (console.plans.plan)
    ├── ClusterUnavailable            Kafka does not answer (timeout, connection refused)
    ├── ZooKeeperUnavailable          ZooKeeper does not answer or the session is lost
    ├── AuthorizationFailed           the cluster answered "not authorised" for an operation
    ├── UnsupportedByCluster          the broker is too old for an API (e.g. before Kafka 2.4)
    └── SandboxError                  the local sandbox cluster could not be started or stopped

Every error carries ``hint``: what the operator can do about it.
"""

from __future__ import annotations


class ConsoleError(Exception):
    """Base of every error the console raises on purpose."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} {self.hint}".strip() if self.hint else self.message


class ConfigError(ConsoleError):
    """Connection settings or a command-config file that cannot be used."""


class ClusterUnavailable(ConsoleError):
    """Kafka did not answer in time or refused the connection."""


class ZooKeeperUnavailable(ConsoleError):
    """ZooKeeper did not answer, or the session was lost."""


class AuthorizationFailed(ConsoleError):
    """The cluster refused an operation for lack of permissions."""


class UnsupportedByCluster(ConsoleError):
    """The cluster is too old for an API the console needs."""


class SandboxError(ConsoleError):
    """The local sandbox cluster could not be started, found or stopped."""
