"""A throwaway PostgreSQL cluster for the tests: Debian's server binaries, a data dir in a temporary
directory, a free port on 127.0.0.1, stopped and removed at the end. As root (initdb refuses root)
the server runs as the ``postgres`` user the Debian packages create. ``python -m tests.postgres``
starts one and prints its URL until Ctrl-C or SIGTERM (for trying the console on PostgreSQL by hand)."""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

SUPERUSER = "console"


def bin_dir() -> Path:
    """The newest installed server's binaries (``scripts/system-packages.sh`` installs them)."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    if not found:
        raise RuntimeError("No PostgreSQL server is installed: run scripts/system-packages.sh (make test does).")
    return found[-1].parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_server(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


@dataclass
class PgCluster:
    home: Path
    port: int
    _names: Iterator[int] = field(default_factory=itertools.count)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def new_database(self, prefix: str = "t") -> str:
        """A fresh, empty database; returns its URL."""
        name = f"{prefix}_{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        subprocess.run(
            _as_server([str(bin_dir() / "pg_ctl"), "-D", str(self.home / "data"), "-m", "immediate", "stop"]),
            capture_output=True,
            check=False,
        )
        shutil.rmtree(self.home, ignore_errors=True)


def start(durable: bool = False) -> PgCluster:
    """A new cluster; ``durable``: with fsync on, as a real server runs (the tests leave it off)."""
    home = Path(tempfile.mkdtemp(prefix="console-pg-"))
    if os.geteuid() == 0:
        shutil.chown(home, "postgres", "postgres")
    home.chmod(0o700)
    binaries, port = bin_dir(), free_port()
    subprocess.run(
        _as_server(
            [
                str(binaries / "initdb"),
                "-D",
                str(home / "data"),
                "-A",
                "trust",
                "-U",
                SUPERUSER,
                "-E",
                "UTF8",
                "--no-sync",
            ]
        ),
        capture_output=True,
        check=True,
    )
    options = f"-k {home} -p {port} -c listen_addresses=127.0.0.1 -c max_connections=200"
    options += "" if durable else " -c fsync=off"
    done = subprocess.run(
        _as_server(
            [
                str(binaries / "pg_ctl"),
                "-D",
                str(home / "data"),
                "-l",
                str(home / "server.log"),
                "-w",
                "-o",
                options,
                "start",
            ]
        ),
        capture_output=True,
        text=True,
        check=False,
    )
    cluster = PgCluster(home, port)
    if done.returncode != 0:
        log = (home / "server.log").read_text(errors="replace") if (home / "server.log").exists() else ""
        cluster.stop()
        raise RuntimeError(f"PostgreSQL did not start: {done.stderr}\n{log}")
    return cluster


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGTERM, _interrupt)  # stopped by Ctrl-C or SIGTERM: the cluster goes too
    signal.signal(signal.SIGINT, _interrupt)
    pg = start()
    print(pg.new_database("console"), flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        while True:
            signal.pause()  # until Ctrl-C or SIGTERM
    pg.stop()
