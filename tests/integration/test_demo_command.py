"""`make demo` as a person runs it: a sandbox already running without the demo topics gets them and
the demo reassignment; SIGTERM (or Ctrl-C) stops Streamlit and the sandbox, leaving no process or
port behind; on a machine where Streamlit never ran, with stdin closed, it starts without a question;
six brokers on three racks, and Kafka 3.9 in ZooKeeper mode."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import urllib.request
from collections.abc import Callable
from pathlib import Path

from kafka.admin import KafkaAdminClient

from console.sandbox import cluster
from console.sandbox.cluster import free_port
from console.sandbox.jars import cache_dir
from console.sandbox.versions import ZOOKEEPER_KAFKA, Mode
from tests.support import wait_for

ROOT = Path(__file__).resolve().parents[2]


def _healthy(port: int) -> bool:
    try:
        return urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1).status == 200
    except OSError:
        return False


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def _processes_of(data_dir: Path) -> list[str]:
    out = subprocess.run(["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if str(data_dir) in line and "ps -ww -eo" not in line]


def _demo(tmp_path: Path, **extra: str) -> tuple[dict[str, str], Path]:
    data = tmp_path / "data"
    return dict(os.environ, CONSOLE_DATA_DIR=str(data), PORT=str(free_port()), PYTHONPATH=str(ROOT), **extra), data


def _run_then_stop(
    env: dict[str, str],
    data: Path,
    check: Callable[[], None],
    ctrl_c: bool = False,
    output_check: Callable[[str], None] = lambda _: None,
) -> None:
    """`make demo` until its console answers, ``check``, then SIGTERM to make alone, as a service
    manager would (``ctrl_c``: SIGINT to the whole process group, as a terminal's Ctrl-C): nothing may
    be left running. Its stdin is closed, as in `make demo </dev/null &`."""
    port = int(env["PORT"])
    make = subprocess.Popen(
        ["make", "demo"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    failed: AssertionError | None = None
    try:
        wait_for(lambda: _healthy(port) or make.poll() is not None, timeout=240, what="the console of `make demo`")
        assert make.poll() is None, f"`make demo` exited {make.returncode} before its console answered"
        check()
    except AssertionError as e:
        failed = e
    finally:
        if make.poll() is None and ctrl_c:
            os.killpg(make.pid, signal.SIGINT)
        elif make.poll() is None:
            make.send_signal(signal.SIGTERM)
        output = make.communicate(timeout=120)[0]
    if failed is not None:  # with what `make demo` printed, which says why
        raise AssertionError(f"{failed}\n--- make demo printed ---\n{output[-6000:]}") from failed
    wait_for(lambda: _port_free(port), timeout=30, what="the console's port free")
    wait_for(lambda: not _processes_of(data), timeout=60, what="no sandbox process left")
    assert cluster.status(data / "sandbox") is None, output
    output_check(output)


def test_make_demo_on_six_brokers_starts_without_a_question_where_streamlit_never_ran_and_stops_on_ctrl_c(
    tmp_path,
):
    """`BROKERS=6 make demo`: six brokers, two on each of three racks, with the demo data. With a
    fresh HOME (no ~/.streamlit/credentials.toml) and stdin closed: Streamlit's first-run "Email:"
    question must not be asked (it made `make demo` exit 255 and stop its sandbox); the URL and the
    sandbox's users are printed; Ctrl-C stops everything. One `make demo` for both (each start costs
    a sandbox and a console)."""
    home = tmp_path / "home"
    home.mkdir()
    env, data = _demo(tmp_path, BROKERS="6", HOME=str(home), CONSOLE_CACHE_DIR=str(cache_dir()))
    port = env["PORT"]

    def check() -> None:
        assert not (home / ".streamlit" / "credentials.toml").exists()
        running = cluster.status(data / "sandbox")
        assert running is not None
        assert [b["rack"] for b in running.brokers] == ["rack-a", "rack-b", "rack-c"] * 2  # type: ignore[index]
        kp = KafkaAdminClient(bootstrap_servers=running.bootstrap_servers.split(","))
        try:
            assert {"orders", "payments", "clickstream"} <= set(kp.list_topics())
        finally:
            kp.close()

    def printed(output: str) -> None:
        assert "Email" not in output, output
        assert f"http://127.0.0.1:{port}" in output, output
        assert "admin / admin-secret" in output and "viewer / viewer-secret" in output, output

    try:
        _run_then_stop(env, data, check, ctrl_c=True, output_check=printed)
    finally:
        cluster.down(data / "sandbox")


def test_make_demo_adds_demo_data_to_a_running_sandbox_and_stops_everything(tmp_path):
    env, data = _demo(tmp_path)
    sb = cluster.up(data / "sandbox")  # a sandbox already running, without the demo topics
    kp = KafkaAdminClient(bootstrap_servers=sb.bootstrap_servers.split(","))

    def check() -> None:
        assert {"orders", "payments", "clickstream"} <= set(kp.list_topics())
        wait_for(
            lambda: any(tp.topic == "payments" for tp in kp.list_partition_reassignments()),
            timeout=60,
            what="the demo reassignment in flight",
        )
        snapshots = data / "history" / "snapshots" / "headers"
        wait_for(
            lambda: snapshots.exists() and any(snapshots.rglob("*.parquet")),
            timeout=60,
            what="the demo collecting snapshots into the history",
        )

    try:
        assert "payments" not in kp.list_topics()
        _run_then_stop(env, data, check)
    finally:
        kp.close()
        cluster.down(data / "sandbox")


def test_make_demo_on_kafka_3_9_in_zookeeper_mode(tmp_path):
    """`KAFKA=3.9.1 ZOOKEEPER=1 make demo`: Kafka 3.9 in ZooKeeper mode (the default is Kafka 4.x
    KRaft), with the demo data, collecting snapshots."""
    env, data = _demo(tmp_path, KAFKA=ZOOKEEPER_KAFKA, ZOOKEEPER="1")

    def check() -> None:
        running = cluster.status(data / "sandbox")
        assert running is not None
        assert (running.kafka_version, running.mode) == (ZOOKEEPER_KAFKA, Mode.ZOOKEEPER) and running.zookeeper
        kp = KafkaAdminClient(bootstrap_servers=running.bootstrap_servers.split(","))
        try:
            assert {"orders", "payments", "clickstream"} <= set(kp.list_topics())
        finally:
            kp.close()
        snapshots = data / "history" / "snapshots" / "headers"
        wait_for(
            lambda: snapshots.exists() and any(snapshots.rglob("*.parquet")),
            timeout=60,
            what="the demo collecting snapshots into the history",
        )

    try:
        _run_then_stop(env, data, check)
    finally:
        cluster.down(data / "sandbox")
