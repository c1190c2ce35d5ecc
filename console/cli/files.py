"""The files a command reads (plans, topic lists) and writes (``--report-json``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from console.core.errors import ConfigError, DiskError, PlanFormatError
from console.core.format import human_bytes
from console.core.limits import MAX_PLAN_BYTES

PLAN_FLAG = "--reassignment-json-file"


def plan_file_args(p: argparse.ArgumentParser) -> None:
    """The plan file a command reads: by its flag, as the official tool takes it, or positionally
    (``validate plan.json``); :func:`plan_file` says which was given."""
    p.add_argument("plan", nargs="?", metavar="FILE", help=f"the plan, in the official format (or {PLAN_FLAG} FILE)")
    p.add_argument(PLAN_FLAG, metavar="FILE", help="the plan, in the official format (or FILE on its own)")


def plan_file(args: argparse.Namespace) -> str:
    """The plan file given (:func:`plan_file_args`); :class:`ConfigError` when none, or two different ones."""
    given: list[str] = list(dict.fromkeys(f for f in (args.plan, args.reassignment_json_file) if f is not None))
    if not given:
        raise ConfigError(
            f"No plan file given: {args.command} needs the plan to read.",
            f"Name it: {args.command} FILE, or {args.command} {PLAN_FLAG} FILE.",
        )
    if len(given) > 1:
        raise ConfigError(
            f"Two plan files given ({given[0]} and {given[1]}): {args.command} reads one.",
            f"Name it once: FILE on its own, or {PLAN_FLAG} FILE.",
        )
    return given[0]


def read_plan(args: argparse.Namespace) -> bytes:
    """The bytes of the plan file given (:func:`plan_file`), held to the plan limits (:func:`read_file`)."""
    path = plan_file(args)
    return read_file(path, PLAN_FLAG if path == args.reassignment_json_file else "FILE")


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
