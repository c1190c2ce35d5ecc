"""The history job, started on the server on request (:func:`update_history`): the History page's
"Update the history now".

The job (:func:`console.pipeline.child.history_in_subprocess`, Spark in a child process) is
costly: it needs the operator role, runs one at a time over a history (the lock file beside its
tables, so that two servers or a server and a second tab share it: a second request while one
runs is refused at once, never queued), and is audited (who asked, when it ended and how).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path

from console.access.auth import Identity
from console.core.errors import ConsoleError, JobAlreadyRunning, StoreError
from console.services.guard import REFUSED, require
from console.storage.store import Store

HistoryJob = Callable[[str, str], Iterable[str]]
"""``job(snapshots, tables)``: runs the history job, yielding its stage lines; a console error when it fails."""

ACTION = "update the history"
"""The role check's action (and a refusal's audit entry)."""
JOB = "history-job"
"""The audit entries of a job that ran: started, then updated or failed."""


def _default_job(snapshots: str, tables: str) -> Iterable[str]:
    from console.pipeline.child import history_in_subprocess

    return history_in_subprocess(snapshots, tables)


def lock_file(tables: Path) -> Path:
    """The lock held while the history job writes ``tables`` (beside it, the same for every process)."""
    return tables.parent / f".{tables.name}.lock"


@contextlib.contextmanager
def _held(tables: Path, holder: str) -> Iterator[str | None]:
    """Hold the history's lock for the block, or yield who holds it now (then nothing is held)."""
    path = lock_file(tables)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as e:
        raise StoreError(
            f"Cannot open the history's lock {path}: {e.strerror or e}.", "Check the history dir."
        ) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield os.pread(fd, 512, 0).decode(errors="replace").strip() or "someone"
            return
        os.ftruncate(fd, 0)
        os.pwrite(fd, holder.encode(), 0)
        try:
            yield None
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def update_history(
    store: Store,
    who: Identity,
    cluster_id: str,
    snapshots: Path,
    tables: Path,
    on_line: Callable[[str], object] = lambda _: None,
    job: HistoryJob = _default_job,
) -> int:
    """Run the history job over ``snapshots`` into ``tables`` now, asked from ``cluster_id``'s
    History page; each stage line goes to ``on_line``. ``who`` needs the operator role (else
    :class:`console.core.errors.NotPermitted`); while a job runs over the same history, a request is
    refused at once (:class:`~console.core.errors.JobAlreadyRunning`, audited). Audited when it starts and when it ends
    (failed, with the job's message, which is raised again). Returns the lines the job said."""
    asked: dict[str, object] = {"snapshots": str(snapshots), "tables": str(tables)}
    require(store, who, ACTION, cluster_id, asked)
    holder = f"{who.name} since {datetime.now():%Y-%m-%d %H:%M:%S}"
    with _held(tables, holder) as busy:
        if busy is not None:
            why = f"The history job is running already ({busy}): one runs at a time."
            store.audit.record(who.name, cluster_id, ACTION, asked, REFUSED, response={"why": why})
            raise JobAlreadyRunning(why, "Wait for it to finish (its tables are then on this page), then update again.")
        started = time.monotonic()
        intent = store.audit.record(who.name, cluster_id, JOB, asked, "started")
        lines = 0
        try:
            for line in job(str(snapshots), str(tables)):
                lines += 1
                on_line(line)
        except ConsoleError as e:
            store.audit.record(who.name, cluster_id, JOB, asked, "failed", ref=intent, response={"error": e.message})
            raise
        store.audit.record(
            who.name,
            cluster_id,
            JOB,
            asked,
            "updated",
            ref=intent,
            response={"seconds": round(time.monotonic() - started, 1)},
        )
    return lines
