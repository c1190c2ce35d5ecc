"""Every error the console raises on purpose, in one tree.

Library errors (confluent-kafka, kafka-python, kazoo, sqlite3, psycopg, subprocess, Maven) are translated
into these at the boundary where they occur (the adapters, the storage module, the sandbox), so
pages, the CLI and notebooks handle one tree::

    ConsoleError                      anything the console reports to an operator
    ├── ConfigError                   bad connection settings, command-config or users file, bad input (exit 2)
    │   ├── NotATerminal              a command asks to confirm with no terminal to ask at (add ``--yes``)
    │   ├── PlanFormatError           a plan file that cannot be used (``problems`` lists why, by entry)
    │   ├── PlanNameTaken             a plan saved under a name another saved plan of the cluster has (``plan_id``)
    │   └── SparkError                Spark could not run a job (exit 2, as for unusable input)
    │       ├── SparkUnavailable      the Spark master or Connect server given does not answer
    │       └── SparkJobFailed        a job failed on its input (a corrupt file, a schema Spark cannot read)
    ├── ClusterUnavailable            Kafka does not answer, or a part of the cluster needed could not be read (exit 1)
    │   └── AnswerLost                a request that changes the cluster went out and its answer did not come back
    ├── RequestRefused                Kafka answered a request with an error asking again will not change
    ├── ZooKeeperUnavailable          ZooKeeper does not answer or the session is lost
    ├── AuthorizationFailed           the cluster answered "not authorised" for an operation
    ├── NotPermitted                  the console's roles or approval rules refuse an action (nothing is sent)
    │   └── SubmitRefused             a run refused: the plan has blocking errors, or the cluster was not read in full
    ├── UnsupportedByCluster          the broker is too old for an API (e.g. before Kafka 2.4)
    ├── ReassignmentBusy              a reassignment in progress blocks the request (the legacy znode is there)
    ├── PartiallyApplied              a request in several batches stopped part-way (``outcomes``: what was applied)
    ├── GoalImpossible                a plan generator's goal cannot be reached (drain below RF, no destination left)
    ├── RunOverlap                    another active run already moves some of the plan's partitions (nothing recorded)
    ├── JobAlreadyRunning             the history job already runs over the same history (one at a time; exit 4)
    ├── IllegalTransition             a run, wave or decommission asked for a change its state does not allow (exit 1)
    ├── LeaseLost                     a run's driver no longer holds its lease (another drives it): it sends nothing
    ├── StoreError                    the console's store (SQLite or PostgreSQL) cannot be read or written
    │   └── StoreWriteClash           another console process wrote the same record at the same moment (exit 4)
    ├── DiskError                     a file or directory the console writes (snapshots, tables, --report-json)
    ├── SandboxError                  the local sandbox cluster could not be started or stopped
    └── ZnodeFormatError              a znode Kafka wrote is not in the expected shape (also a ValueError)

Every error carries ``message`` (what is wrong) and ``hint`` (what the operator can do about it).

Anything else that escapes (a ``TypeError``, a library error no adapter knows) is a bug, never
translated: the CLI and the app let it surface as one (a traceback in the log; in the browser an
"internal error" box naming the log line). The CLI's exit code for each branch is in
:mod:`console.cli.exits`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from console.core.limits import PROBLEMS_SHOWN

if TYPE_CHECKING:
    from console.core.findings import Finding
    from console.core.model import Outcome, TopicPartition


class ConsoleError(Exception):
    """Base of every error the console raises on purpose."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} {self.hint}".strip() if self.hint else self.message


class ConfigError(ConsoleError):
    """Connection settings, a command-config or users file, or command-line input that cannot be used."""


class NotATerminal(ConfigError):
    """A command asks for confirmation and has no terminal to ask at (add ``--yes``)."""


PLAN_FILE_HINT = "Fix the file and load it again; nothing was read from it."
"""What to do about a plan that cannot be used, unless its error says otherwise."""


class PlanFormatError(ConfigError):
    """A plan file that cannot be used at all: ``problems`` lists what is wrong, by entry (the first
    :data:`~console.core.limits.PROBLEMS_SHOWN`; ``more`` counts the others). The message has one
    line per problem."""

    def __init__(self, problems: list[str], hint: str = "", more: int = 0, stopped: bool = False) -> None:
        shown = problems[:PROBLEMS_SHOWN]
        more += len(problems) - len(shown)
        others = f"{'at least ' if stopped else ''}{more:,} more {'problem' if more == 1 else 'problems'}"
        lines = [f"- {p}" for p in shown] + ([f"- and {others}"] if more > 0 else [])
        super().__init__(
            "The plan cannot be used:\n" + "\n".join(lines),
            hint or PLAN_FILE_HINT,
        )
        self.problems = shown
        self.more = more
        self.stopped = stopped
        """Whether the check stopped looking before the end of the file (``more`` is then a lower bound)."""


class PlanNameTaken(ConfigError):
    """Saving would replace the content of another saved plan of the cluster, ``plan_id``, which
    has that name: nothing was saved (the command line's ``save --replace`` saves over it)."""

    def __init__(self, message: str, hint: str, plan_id: int) -> None:
        super().__init__(message, hint)
        self.plan_id = plan_id


class SparkError(ConfigError):
    """Spark could not run a job: reported as unusable input (exit 2)."""


class SparkUnavailable(SparkError):
    """The Spark master or Spark Connect server given does not answer."""


class SparkJobFailed(SparkError):
    """A Spark job failed on its input (a corrupt file, a schema Spark cannot read)."""


class ClusterUnavailable(ConsoleError):
    """Kafka did not answer in time, refused the connection, or has no controller."""


class AnswerLost(ClusterUnavailable):
    """A request that changes the cluster was sent and its answer did not come back (a timeout, a
    connection lost while waiting): the cluster may have applied it, in part or whole. The console
    never sends it again unseen: it reads what the cluster shows first
    (:mod:`console.runs.settle`), and says applied, not applied, or not known."""


class RequestRefused(ConsoleError):
    """Kafka answered a request with an error that asking again will not change (an unknown topic,
    an invalid replica assignment, a policy violation): nothing of the request was applied."""


class ZooKeeperUnavailable(ConsoleError):
    """ZooKeeper did not answer, or the session was lost."""


class AuthorizationFailed(ConsoleError):
    """The cluster refused an operation for lack of permissions."""


class NotPermitted(ConsoleError):
    """The acting identity may not do this (its roles, or the two-person rule): the console refused
    it before writing or sending anything but the audit entry that says so."""


class SubmitRefused(NotPermitted):
    """The console refused to start a run (:func:`console.services.runs.start_run`): the plan has
    errors that block a submission against the cluster as it is now, or the cluster's essential
    reads (Metadata, ListPartitionReassignments) failed. ``findings`` are what the front ends list
    under the message (the plan's blocking errors, or the snapshot's read problems). Audited;
    nothing is sent."""

    def __init__(self, message: str, hint: str, findings: tuple[Finding, ...] = ()) -> None:
        super().__init__(message, hint)
        self.findings = findings


class UnsupportedByCluster(ConsoleError):
    """The cluster is too old for an API the console needs."""


class ReassignmentBusy(ConsoleError):
    """A reassignment in progress blocks the request: the legacy reassignment znode exists, or Kafka
    answered REASSIGNMENT_IN_PROGRESS. Wait for it to end."""


class PartiallyApplied(ConsoleError):
    """A request sent in batches stopped part-way: ``outcomes`` holds the answers of the batches
    that were applied, ``cause`` why the next one was not."""

    def __init__(self, cause: ConsoleError, outcomes: Mapping[TopicPartition, Outcome]) -> None:
        super().__init__(cause.message, cause.hint)
        self.cause = cause
        self.outcomes = dict(outcomes)


class GoalImpossible(ConsoleError):
    """A plan generator's goal cannot be reached on this cluster (e.g. draining brokers would leave
    fewer eligible brokers than a topic's replication factor): no plan is made."""


class IllegalTransition(ConsoleError):
    """A run or a wave cannot go from its state to the one asked for (e.g. resume a completed run)."""


class LeaseLost(ConsoleError):
    """A run's driver found, before a request, that it no longer holds the run's lease (it was
    paused or cut off from the store past the lease, and another process took the run over):
    nothing is sent, and it stops driving the run."""


class StoreError(ConsoleError):
    """The console's store could not be read or written."""


class StoreWriteClash(StoreError):
    """Another console process wrote the same record at the same moment (PostgreSQL's serialization
    failure, a unique key taken, a deadlock): nothing was written; the same action again may go
    through."""


class RunOverlap(ConsoleError):
    """Another active run already moves some of the plan's partitions: the run is not recorded and
    nothing is sent (checked in the transaction that would record it)."""


class JobAlreadyRunning(ConsoleError):
    """The history job already runs over the same history (a lock beside its tables): one runs at a
    time, so this one did not start; asking again once it has finished starts one."""


class DiskError(ConsoleError):
    """A file or directory the console writes (snapshots, pipeline outputs, a report) could not be
    written: a path that does not exist or is not writable, a full disk."""


class SandboxError(ConsoleError):
    """The local sandbox cluster could not be started, found or stopped."""


class ZnodeFormatError(ConsoleError, ValueError):
    """A znode's content is not what Kafka writes there: ``path`` and ``reason`` say where and why."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(
            f"{path}: {reason}",
            "Kafka wrote something the console does not understand; the rest of the picture is still read.",
        )
        self.path = path
        self.reason = reason

    def __str__(self) -> str:
        return self.message
