"""``store copy``: move a console's history from one store to another (its SQLite file to the
team's PostgreSQL), checked row for row."""

from __future__ import annotations

import argparse
import getpass
import json
import sys

from console.cli.exits import Exit


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    st = sub.add_parser("store", help="the console's store: copy one into another")
    ops = st.add_subparsers(dest="store_command", required=True)
    cp = ops.add_parser(
        "copy", help="copy every table of a store into an empty one, checked row for row (counts and digests)"
    )
    cp.add_argument(
        "--from",
        dest="source",
        required=True,
        metavar="URL",
        help="the store to copy: a path, sqlite:///… or postgresql://…",
    )
    cp.add_argument(
        "--to", dest="target", required=True, metavar="URL", help="the empty store to copy into (created when new)"
    )
    cp.add_argument("--json", action="store_true", help="one JSON object: each table's rows and digest")
    cp.set_defaults(handler=copy)


def copy(args: argparse.Namespace) -> int:
    from console.access.auth import Identity
    from console.services.store_copy import copy_store

    report = copy_store(args.source, args.target, Identity.cli(getpass.getuser()))
    if args.json:
        tables = {t.table: {"rows": t.rows, "digest": t.digest} for t in report.tables}
        print(json.dumps({"from": report.source, "to": report.target, "tables": tables}))
        return Exit.OK
    for t in report.tables:
        print(f"{t.table:<18} {t.rows:>10,} rows  {t.digest[:16]}")
    print(
        f"Copied {report.rows:,} rows of {len(report.tables)} tables from {report.source} to {report.target}; "
        "each table checked (rows and digest).",
        file=sys.stderr,
    )
    return Exit.OK
