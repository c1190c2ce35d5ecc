"""``python -m console ...``: the command line.

One module per family of commands, each adding its sub-commands to the parser and naming the
function that runs them (``handler``):

* :mod:`~console.cli.sandbox`: ``sandbox up | status | down``
* :mod:`~console.cli.read`: ``list``, ``state``
* :mod:`~console.cli.plans`: ``validate``, ``diff``, ``rollback``, ``generate``, ``rebase``
* :mod:`~console.cli.pipeline`: ``collect``, ``pipeline history | review | generate | compact``
* :mod:`~console.cli.saved`: ``save``, ``approve``
* :mod:`~console.cli.runs`: ``cancel``, ``submit``, ``throttle``, ``executor``, ``runs``
* :mod:`~console.cli.cordons`: ``cordon``, ``uncordon``
* :mod:`~console.cli.decommission`: ``decommission``
* :mod:`~console.cli.store`: ``store copy``

and what they share: :mod:`~console.cli.cluster` (connection arguments, the reader, the snapshot),
:mod:`~console.cli.goals` (the goal arguments of ``generate`` and ``pipeline generate``),
:mod:`~console.cli.confirm` (the questions asked before a change), :mod:`~console.cli.files`,
:mod:`~console.cli.output`, and :mod:`~console.cli.exits` (the exit codes, named).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from console.cli import cordons, decommission, pipeline, plans, read, runs, sandbox, saved, store, stream
from console.cli.exits import Exit, exit_for
from console.cli.output import error
from console.core.errors import ConsoleError


def build_parser() -> argparse.ArgumentParser:
    installed = os.path.basename(sys.argv[0]) == "reassignment-console"
    parser = argparse.ArgumentParser(
        prog="reassignment-console" if installed else "python -m console",
        description="Kafka partition reassignment console",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    # in this order in the help
    sandbox.add_commands(sub)
    read.add_commands(sub)
    plans.add_review_commands(sub)
    plans.add_generate(sub)
    pipeline.add_commands(sub)
    plans.add_rebase(sub)
    saved.add_commands(sub)
    runs.add_commands(sub)
    cordons.add_commands(sub)
    decommission.add_commands(sub)
    stream.add_commands(sub)
    store.add_commands(sub)
    return parser


def run() -> None:
    """The ``reassignment-console`` command (the same as ``python -m console``)."""
    sys.exit(main())


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except ConsoleError as e:
        error(e)
        return exit_for(e)
    except KeyboardInterrupt:
        return Exit.INTERRUPTED
    except BrokenPipeError:  # the reader of our output went away (e.g. `| head`)
        return Exit.OK
