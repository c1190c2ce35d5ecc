"""The command line's exit codes, in one place (their values are part of the interface).

* ``OK`` (0): done as asked (also: nothing to do, the goal is met already).
* ``FAILED`` (1): the cluster could not give what was asked or could not be read
  (``ClusterUnavailable``); a change of state the console refuses (``IllegalTransition``: e.g. the
  throttle of a run that ended, a decommission not at that step); (validate) the plan has errors;
  (cancel, submit) the console refused, or was not confirmed, and sent nothing; (rebase) nothing is
  left to do; (generate) the goal cannot be reached; (pipeline) a job failed on some clusters.
* ``UNUSABLE`` (2): bad usage, settings, or an input that cannot be used (``ConfigError``: a plan
  file, a snapshot directory, a run or plan not in the store; ``DiskError``: a path that cannot be
  written; a Spark that does not answer).
* ``PARTLY`` (3): (cancel, submit) the controller accepted only part of the request; (throttle
  --sweep) some settings were still reported set afterwards, or could not be read back.
* ``AGAIN`` (4): nothing was done because other work held the same thing at that moment, and the
  same command again may go through: another console process wrote the same record in the store
  (``StoreWriteClash``), the history job already runs over the same history (``JobAlreadyRunning``).
  Another active run moving the plan's partitions (``RunOverlap``) is a refusal (1): it lasts until
  that run ends.
* ``INTERRUPTED`` (130): stopped with Ctrl-C.
"""

from __future__ import annotations

from enum import IntEnum

from console.core.errors import ConfigError, ConsoleError, DiskError, JobAlreadyRunning, StoreWriteClash


class Exit(IntEnum):
    OK = 0
    FAILED = 1
    UNUSABLE = 2
    PARTLY = 3
    AGAIN = 4
    INTERRUPTED = 130


def exit_for(error: ConsoleError) -> Exit:
    """The exit code of a command that stopped on ``error``."""
    if isinstance(error, (ConfigError, DiskError)):  # input that cannot be used: a path that cannot be written too
        return Exit.UNUSABLE
    if isinstance(error, (StoreWriteClash, JobAlreadyRunning)):  # nothing done; the same again may go through
        return Exit.AGAIN
    return Exit.FAILED
