"""The files a command reads (plans, topic lists) and writes (``--report-json``)."""

from __future__ import annotations

import json
from pathlib import Path

from console.core.errors import ConfigError, DiskError


def read_file(path: str, option: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise ConfigError(f"Cannot read {path}: {e.strerror or e}.", f"Check the path given to {option}.") from None


def write_json(path: str, doc: object, option: str) -> None:
    try:
        Path(path).write_text(json.dumps(doc))
    except OSError as e:
        raise DiskError(f"Cannot write {path}: {e.strerror or e}.", f"Check the path given to {option}.") from None
