"""The files a command reads (plans, topic lists) and writes (``--report-json``)."""

from __future__ import annotations

import json
from pathlib import Path

from console.core.errors import ConfigError, DiskError, PlanFormatError
from console.core.format import human_bytes
from console.core.limits import MAX_PLAN_BYTES


def read_file(path: str, option: str, limit: int | None = None) -> bytes:
    """The file's bytes; a file over ``limit`` (by default what a plan may take) is refused unread,
    whatever its size (a pipe or a device too: at most ``limit`` + 1 bytes are read)."""
    limit = MAX_PLAN_BYTES if limit is None else limit
    try:
        with Path(path).open("rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise ConfigError(f"Cannot read {path}: {e.strerror or e}.", f"Check the path given to {option}.") from None
    if len(data) > limit:
        raise PlanFormatError(
            [f"{path} takes more than the {human_bytes(limit)} a plan may take"],
            "Split the plan into several plans; nothing was read from it.",
        )
    return data


def write_json(path: str, doc: object, option: str) -> None:
    try:
        Path(path).write_text(json.dumps(doc))
    except OSError as e:
        raise DiskError(f"Cannot write {path}: {e.strerror or e}.", f"Check the path given to {option}.") from None
