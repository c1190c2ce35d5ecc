"""A real local Kafka 3.9 cluster started from Maven Central jars.

``up`` fetches the pinned classpath (``pom.xml`` beside this file) once into a cache, then
starts ZooKeeper and three brokers (or three combined KRaft nodes) on free loopback ports,
brokers spread over three racks, each with two log dirs, and waits until the cluster answers. Every
process runs in its own session; the state file ``sandbox.json`` in the data dir records them,
so ``status`` and ``down`` work from any later process.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from console.core.errors import SandboxError

POM = Path(__file__).with_name("pom.xml")
STATE_FILE = "sandbox.json"
CHROOT = "/sandbox"
RACKS = ("rack-a", "rack-b", "rack-c")
"""Broker i is on RACKS[i % 3]: three racks, so a 6-broker sandbox has two brokers per rack."""
# SASL/PLAIN users of the ZooKeeper-mode sandbox's second listener (ACLs enforced there):
# admin is a super user, viewer holds the read-only ACLs the console needs, nobody holds none.
SASL_USERS = {"admin": "admin-secret", "viewer": "viewer-secret", "nobody": "nobody-secret"}
_JVM = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k", "-Djava.awt.headless=true"]

Log = Callable[[str], None]


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def default_data_dir() -> Path:
    from console.core.paths import console_data_dir

    return console_data_dir() / "sandbox"


def cache_dir() -> Path:
    return Path(
        os.environ.get("CONSOLE_CACHE_DIR")
        or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "reassignment-console")
    )


# --------------------------------------------------------------------------------------------
# The classpath
# --------------------------------------------------------------------------------------------
def ensure_classpath(log: Log = _stderr) -> Path:
    """The directory of jars for the pinned pom; fetched with Maven on first use."""
    digest = hashlib.sha256(POM.read_bytes()).hexdigest()[:12]
    libs = cache_dir() / f"kafka-{digest}" / "libs"
    if (libs / ".complete").exists():
        return libs
    _require("java", "Install a Java 17 runtime (Debian: apt-get install openjdk-17-jre-headless).")
    mvn = _require("mvn", "Install Maven (Debian: apt-get install maven).")
    tmp = libs.with_name(f"libs.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    log(f"Fetching Apache Kafka jars with Maven into {libs} (first run only) ...")
    proc = subprocess.run(
        [
            mvn,
            "-q",
            "-B",
            "-f",
            str(POM),
            "dependency:copy-dependencies",
            "-DincludeScope=runtime",
            f"-DoutputDirectory={tmp}",
        ],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0 or not any(tmp.glob("kafka_2.13-*.jar")):
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        shutil.rmtree(tmp, ignore_errors=True)
        raise SandboxError(
            "Maven could not fetch the Kafka jars.",
            f"Check that Maven Central is reachable and ~/.m2/settings.xml is sane. Maven said:\n{tail}",
        )
    (tmp / ".complete").write_text(digest)
    shutil.rmtree(libs, ignore_errors=True)
    tmp.rename(libs)
    return libs


def _require(cmd: str, hint: str) -> str:
    path = shutil.which(cmd)
    if not path:
        raise SandboxError(f"`{cmd}` is not on PATH; the sandbox needs it.", hint)
    return path


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(n: int) -> list[int]:
    """``n`` distinct free ports: all held open at once while chosen, so the system cannot hand
    the same one out twice (one at a time, it may)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks.append(s)
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


def port_open(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


# --------------------------------------------------------------------------------------------
# State
# --------------------------------------------------------------------------------------------
@dataclass
class Proc:
    """One started JVM: how to start it again and where it logs."""

    name: str
    argv: list[str]
    log: str
    port: int
    pid: int = 0

    def alive(self) -> bool:
        return pid_alive(self.pid)


@dataclass
class Sandbox:
    mode: str  # "zookeeper" | "kraft"
    data_dir: str
    kafka_classpath: str
    bootstrap_servers: str
    zookeeper: str | None
    brokers: list[dict[str, object]]
    procs: list[Proc] = field(default_factory=list)
    started_at: float = 0.0
    sasl_bootstrap_servers: str | None = None

    def info(self) -> dict[str, object]:
        """The one-line JSON object ``sandbox up`` and ``sandbox status`` print."""
        return {
            "bootstrap_servers": self.bootstrap_servers,
            "zookeeper": self.zookeeper,
            "brokers": self.brokers,
            "kafka_classpath": self.kafka_classpath,
            "data_dir": self.data_dir,
            "mode": self.mode,
            "sasl": None
            if self.sasl_bootstrap_servers is None
            else {
                "bootstrap_servers": self.sasl_bootstrap_servers,
                "mechanism": "PLAIN",
                "users": SASL_USERS,
            },
        }

    def sasl_properties(self, user: str) -> dict[str, str]:
        """librdkafka properties for ``user`` on the SASL listener (ZooKeeper mode only)."""
        if self.sasl_bootstrap_servers is None:
            raise SandboxError("This sandbox has no SASL listener (KRaft mode).")
        return {
            "bootstrap.servers": self.sasl_bootstrap_servers,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.username": user,
            "sasl.password": SASL_USERS[user],
        }

    def proc(self, name: str) -> Proc:
        for p in self.procs:
            if p.name == name:
                return p
        raise SandboxError(f"No process named {name} in this sandbox.")

    def save(self) -> None:
        path = Path(self.data_dir) / STATE_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=1))
        tmp.replace(path)

    @staticmethod
    def load(data_dir: Path) -> Sandbox | None:
        path = data_dir / STATE_FILE
        try:
            raw = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        raw["procs"] = [Proc(**p) for p in raw.get("procs", [])]
        return Sandbox(**raw)

    # -- fault injection and recovery (tests, demos) -----------------------------------------
    def stop(self, name: str, hard: bool = False, timeout: float = 30.0) -> None:
        p = self.proc(name)
        _terminate([p], hard=hard, timeout=timeout)
        p.pid = 0
        self.save()

    def start(self, name: str, timeout: float = 60.0) -> None:
        p = self.proc(name)
        if p.alive():
            return
        if not _wait_port_free(p.port, 20.0):
            raise SandboxError(f"Port {p.port} of {name} is still taken; cannot restart it.")
        if self.mode == "zookeeper" and name.startswith("broker-"):
            self._wait_unregistered(int(name.split("-")[1]), timeout)
        p.pid = _spawn(p)
        self.save()
        _wait_port(p, timeout)

    def _wait_unregistered(self, broker: int, timeout: float) -> None:
        """A broker killed hard keeps its /brokers/ids znode until its ZooKeeper session expires
        (6 s here); starting it again before that makes it exit with NodeExists."""
        from kazoo.client import KazooClient

        zk = KazooClient(hosts=self.zookeeper or "", timeout=10.0)
        zk.start(timeout=10.0)
        try:
            deadline = time.monotonic() + timeout
            while zk.exists(f"/brokers/ids/{broker}") is not None and time.monotonic() < deadline:
                time.sleep(0.5)
        finally:
            zk.stop()
            zk.close()


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie still answers kill(0): look at its state.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][:1] != "Z"
    except OSError:
        return True


# --------------------------------------------------------------------------------------------
# Start and stop
# --------------------------------------------------------------------------------------------
def status(data_dir: Path | None = None) -> Sandbox | None:
    """The running sandbox in ``data_dir``, or None when none runs there."""
    sb = Sandbox.load(data_dir or default_data_dir())
    if sb is None or not any(p.alive() for p in sb.procs):
        return None
    return sb


def up(
    data_dir: Path | None = None,
    kraft: bool = False,
    brokers: int = 3,
    log: Log = _stderr,
    timeout: float = 120.0,
) -> Sandbox:
    """Start a fresh sandbox in ``data_dir`` (or return the one already running there)."""
    data = (data_dir or default_data_dir()).resolve()
    running = status(data)
    if running is not None:
        log(f"A sandbox already runs in {data}.")
        return running
    libs = ensure_classpath(log)
    _require("java", "Install a Java 17 runtime (Debian: apt-get install openjdk-17-jre-headless).")
    for sub in ("zk", "kraft", "logs", "config", *tuple(f"broker-{i}" for i in range(8))):
        shutil.rmtree(data / sub, ignore_errors=True)
    (data / "logs").mkdir(parents=True, exist_ok=True)
    (data / "config").mkdir(parents=True, exist_ok=True)
    _write_log4j(data)
    classpath = f"{libs}/*"
    sb = (_plan_kraft if kraft else _plan_zookeeper)(data, classpath, brokers)
    sb.started_at = time.time()
    try:
        if kraft:
            _format_kraft(sb, data, classpath, log)
        sb.save()
        for p in sb.procs:
            if p.name == "zookeeper":
                log(f"Starting ZooKeeper on 127.0.0.1:{p.port} ...")
                p.pid = _spawn(p)
                sb.save()
                _wait_port(p, 30.0)
                _wait_zk(p, 30.0)
        for p in sb.procs:
            if p.name != "zookeeper":
                log(f"Starting {p.name} on 127.0.0.1:{p.port} ...")
                p.pid = _spawn(p)
        sb.save()
        for p in sb.procs:
            _wait_port(p, timeout)
        _wait_cluster(sb, timeout)
        if sb.sasl_bootstrap_servers is not None:
            _grant_viewer(sb)
    except BaseException:
        down(data, log=lambda _m: None)
        raise
    log(f"Sandbox ready: {sb.bootstrap_servers}" + (f", ZooKeeper {sb.zookeeper}" if sb.zookeeper else ""))
    return sb


def down(data_dir: Path | None = None, log: Log = _stderr, timeout: float = 30.0) -> bool:
    """Stop every process the sandbox started; True when something was running."""
    data = (data_dir or default_data_dir()).resolve()
    sb = Sandbox.load(data)
    if sb is None:
        return False
    live = [p for p in sb.procs if p.alive()]
    brokers = [p for p in live if p.name != "zookeeper"]
    zk = [p for p in live if p.name == "zookeeper"]
    if live:
        log(f"Stopping {', '.join(p.name for p in live)} ...")
    _terminate(brokers, hard=False, timeout=timeout)
    _terminate(zk, hard=False, timeout=timeout)
    for p in sb.procs:
        _wait_port_free(p.port, 10.0)
    with contextlib.suppress(OSError):
        (data / STATE_FILE).unlink()
    return bool(live)


def _terminate(procs: list[Proc], hard: bool, timeout: float) -> None:
    sig = signal.SIGKILL if hard else signal.SIGTERM
    for p in procs:
        if p.alive():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, sig)
    deadline = time.monotonic() + timeout
    for p in procs:
        while p.alive() and time.monotonic() < deadline:
            _reap(p.pid)
            time.sleep(0.1)
        if p.alive():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, signal.SIGKILL)
            while p.alive():
                _reap(p.pid)
                time.sleep(0.05)
        _reap(p.pid)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def _spawn(p: Proc) -> int:
    logf = open(p.log, "ab")  # noqa: SIM115 (closed below once the child holds it)
    try:
        proc = subprocess.Popen(
            p.argv,
            stdout=logf,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as e:
        raise SandboxError(f"Could not start {p.name}: {e}.", "Is Java installed and on PATH?") from None
    finally:
        logf.close()
    return proc.pid


def _wait_port(p: Proc, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not p.alive():
            raise _start_failure(p)
        if port_open(p.port):
            return
        time.sleep(0.2)
    raise SandboxError(f"{p.name} did not open port {p.port} within {timeout:.0f}s.", f"See its log: {p.log}")


def _wait_port_free(port: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not port_open(port, timeout=0.2):
            return True
        time.sleep(0.2)
    return False


def _start_failure(p: Proc) -> SandboxError:
    text = ""
    for f in (p.log, str(Path(p.log).with_name(f"{p.name}-server.log"))):
        with contextlib.suppress(OSError):
            text += Path(f).read_text(errors="replace")
    tail = "\n".join(text.strip().splitlines()[-12:])
    if "Address already in use" in text or "BindException" in text:
        return SandboxError(
            f"{p.name} could not bind port {p.port}: the port is taken.",
            "Stop whatever listens there (ss -ltnp) or run `sandbox up` again to pick new ports.",
        )
    if "UnsupportedClassVersionError" in text:
        return SandboxError(f"{p.name} needs a newer Java.", "Install Java 17.")
    if "ClassNotFoundException" in text or "NoClassDefFoundError" in text:
        return SandboxError(
            f"{p.name}: the Kafka classpath is incomplete.",
            f"Delete {cache_dir()} and run again to refetch the jars.\n{tail}",
        )
    return SandboxError(f"{p.name} exited during start-up.", f"Its log ({p.log}) ends with:\n{tail}")


def _wait_zk(p: Proc, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", p.port), timeout=1.0) as s:
            s.sendall(b"ruok")
            if s.recv(16) == b"imok":
                return
        if not p.alive():
            raise _start_failure(p)
        time.sleep(0.2)
    raise SandboxError("ZooKeeper did not answer `ruok`.", f"See its log: {p.log}")


def _wait_cluster(sb: Sandbox, timeout: float) -> None:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": sb.bootstrap_servers, "log_level": "0"})
    want = {int(b["id"]) for b in sb.brokers}  # type: ignore[call-overload]
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        for p in sb.procs:
            if not p.alive():
                raise _start_failure(p)
        try:
            md = admin.list_topics(timeout=3)
            seen = set(md.brokers)
            if seen >= want and md.controller_id >= 0:
                return
            last = f"brokers seen {sorted(seen)}, controller {md.controller_id}"
        except Exception as e:
            last = str(e)
        time.sleep(0.5)
    raise SandboxError(
        f"The cluster did not become ready within {timeout:.0f}s ({last}).", f"See the logs under {sb.data_dir}/logs."
    )


# --------------------------------------------------------------------------------------------
# Configuration files
# --------------------------------------------------------------------------------------------
def _java(classpath: str, data: Path, name: str, main: str, *args: str, heap: str = "512m") -> list[str]:
    java = shutil.which("java") or "java"
    return [
        java,
        f"-Xmx{heap}",
        *_JVM,
        "-cp",
        classpath,
        f"-Dlog4j.configuration=file:{data / 'config' / 'log4j.properties'}",
        f"-Dkafka.logs.dir={data / 'logs'}",
        f"-Dsandbox.name={name}",
        main,
        *args,
    ]


def _write_props(path: Path, props: dict[str, object]) -> None:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))


def _write_log4j(data: Path) -> None:
    (data / "config" / "log4j.properties").write_text(
        "log4j.rootLogger=INFO, file\n"
        "log4j.appender.file=org.apache.log4j.FileAppender\n"
        "log4j.appender.file.File=${kafka.logs.dir}/${sandbox.name}-server.log\n"
        "log4j.appender.file.layout=org.apache.log4j.PatternLayout\n"
        "log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n\n"
        "log4j.logger.kafka.request.logger=WARN\n"
        "log4j.logger.kafka.log.LogCleaner=WARN\n"
        "log4j.logger.org.apache.zookeeper=WARN\n"
        "log4j.logger.state.change.logger=INFO\n"
        "log4j.logger.kafka.controller=INFO\n"
    )


def _broker_common(data: Path, i: int, port: int) -> dict[str, object]:
    return {
        "log.dirs": f"{data / f'broker-{i}' / 'd1'},{data / f'broker-{i}' / 'd2'}",
        "broker.rack": RACKS[i % len(RACKS)],
        "num.partitions": 1,
        "default.replication.factor": 1,
        "auto.create.topics.enable": "false",
        "offsets.topic.replication.factor": 1,
        "offsets.topic.num.partitions": 3,
        "transaction.state.log.replication.factor": 1,
        "transaction.state.log.min.isr": 1,
        "transaction.state.log.num.partitions": 3,
        "group.initial.rebalance.delay.ms": 0,
        "auto.leader.rebalance.enable": "false",
        "replica.lag.time.max.ms": 5000,
        "replica.fetch.wait.max.ms": 100,
        "replica.fetch.backoff.ms": 200,
        "log.segment.bytes": 1048576,
        # Small replica fetches so a replication throttle takes effect within a partition's copy.
        "replica.fetch.max.bytes": 16384,
        "replica.fetch.response.max.bytes": 65536,
        "num.network.threads": 2,
        "num.io.threads": 2,
        "background.threads": 2,
        "num.replica.fetchers": 1,
        "log.cleaner.dedupe.buffer.size": 16777216,
        "log.cleaner.threads": 1,
        "num.recovery.threads.per.data.dir": 1,
        "controlled.shutdown.enable": "true",
    }


def _grant_viewer(sb: Sandbox) -> None:
    """The read-only ACLs the console needs: DESCRIBE and DESCRIBE_CONFIGS on the cluster and all topics."""
    from confluent_kafka.admin import (
        AclBinding,
        AclOperation,
        AclPermissionType,
        AdminClient,
        ResourcePatternType,
        ResourceType,
    )

    admin = AdminClient({"bootstrap.servers": sb.bootstrap_servers, "log_level": "0"})
    # librdkafka names Kafka's CLUSTER resource type (code 4) BROKER.
    bindings = [
        AclBinding(rtype, name, ResourcePatternType.LITERAL, "User:viewer", "*", op, AclPermissionType.ALLOW)
        for rtype, name in ((ResourceType.BROKER, "kafka-cluster"), (ResourceType.TOPIC, "*"))
        for op in (AclOperation.DESCRIBE, AclOperation.DESCRIBE_CONFIGS)
    ]
    for future in admin.create_acls(bindings, request_timeout=30).values():
        future.result()


def _sasl_listener(port: int, sasl_port: int) -> dict[str, object]:
    """A PLAINTEXT listener (inter-broker, anonymous super user) and a SASL/PLAIN one with ACLs."""
    users = " ".join(f'user_{u}="{pw}"' for u, pw in SASL_USERS.items())
    return {
        "listeners": f"PLAINTEXT://127.0.0.1:{port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
        "inter.broker.listener.name": "PLAINTEXT",
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": f"org.apache.kafka.common.security.plain.PlainLoginModule required {users};",
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "super.users": "User:ANONYMOUS;User:admin",
    }


def _plan_zookeeper(data: Path, classpath: str, n: int) -> Sandbox:
    zk_port, *rest = free_ports(1 + 2 * n)
    ports, sasl_ports = rest[:n], rest[n:]
    cfg = data / "config"
    _write_props(
        cfg / "zookeeper.properties",
        {
            "dataDir": data / "zk",
            "clientPort": zk_port,
            "clientPortAddress": "127.0.0.1",
            "maxClientCnxns": 0,
            "admin.enableServer": "false",
            "4lw.commands.whitelist": "ruok,srvr,stat",
            "tickTime": 500,
        },
    )
    procs = [
        Proc(
            "zookeeper",
            _java(
                classpath,
                data,
                "zookeeper",
                "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                str(cfg / "zookeeper.properties"),
                heap="256m",
            ),
            str(data / "logs" / "zookeeper.out"),
            zk_port,
        )
    ]
    zk = f"127.0.0.1:{zk_port}{CHROOT}"
    brokers = []
    for i, port in enumerate(ports):
        props = {
            "broker.id": i,
            **_sasl_listener(port, sasl_ports[i]),
            "zookeeper.connect": zk,
            "zookeeper.session.timeout.ms": 6000,
            "zookeeper.connection.timeout.ms": 10000,
            **_broker_common(data, i, port),
        }
        _write_props(cfg / f"broker-{i}.properties", props)
        procs.append(
            Proc(
                f"broker-{i}",
                _java(classpath, data, f"broker-{i}", "kafka.Kafka", str(cfg / f"broker-{i}.properties")),
                str(data / "logs" / f"broker-{i}.out"),
                port,
            )
        )
        brokers.append({"id": i, "rack": RACKS[i % len(RACKS)], "port": port})
    return Sandbox(
        "zookeeper",
        str(data),
        classpath,
        ",".join(f"127.0.0.1:{p}" for p in ports),
        zk,
        brokers,
        procs,
        sasl_bootstrap_servers=",".join(f"127.0.0.1:{p}" for p in sasl_ports),
    )


def _plan_kraft(data: Path, classpath: str, n: int) -> Sandbox:
    both = free_ports(2 * n)
    ports, cports = both[:n], both[n:]
    voters = ",".join(f"{i}@127.0.0.1:{c}" for i, c in enumerate(cports))
    cfg = data / "config"
    procs, brokers = [], []
    for i, (port, cport) in enumerate(zip(ports, cports, strict=False)):
        props = {
            "process.roles": "broker,controller",
            "node.id": i,
            "controller.quorum.voters": voters,
            "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{cport}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "metadata.log.dir": data / "kraft" / f"meta-{i}",
            **_broker_common(data, i, port),
        }
        _write_props(cfg / f"broker-{i}.properties", props)
        procs.append(
            Proc(
                f"broker-{i}",
                _java(classpath, data, f"broker-{i}", "kafka.Kafka", str(cfg / f"broker-{i}.properties")),
                str(data / "logs" / f"broker-{i}.out"),
                port,
            )
        )
        brokers.append({"id": i, "rack": RACKS[i % len(RACKS)], "port": port})
    return Sandbox("kraft", str(data), classpath, ",".join(f"127.0.0.1:{p}" for p in ports), None, brokers, procs)


def _format_kraft(sb: Sandbox, data: Path, classpath: str, log: Log) -> None:
    cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    log(f"Formatting KRaft storage (cluster id {cluster_id}) ...")
    running = []
    for p in sb.procs:
        props = p.argv[-1]
        argv = _java(
            classpath,
            data,
            f"format-{p.name}",
            "kafka.tools.StorageTool",
            "format",
            "-t",
            cluster_id,
            "-c",
            props,
            "--ignore-formatted",
            heap="256m",
        )
        running.append((p, subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)))
    for p, proc in running:
        out, _ = proc.communicate(timeout=120)
        if proc.returncode != 0:
            raise SandboxError(f"Formatting the KRaft storage of {p.name} failed.", out.strip()[-2000:])


@contextlib.contextmanager
def running(data_dir: Path, kraft: bool = False, log: Log = _stderr) -> Iterator[Sandbox]:
    """A sandbox for the duration of a ``with`` block (tests, benchmarks)."""
    sb = up(data_dir, kraft=kraft, log=log)
    try:
        yield sb
    finally:
        down(data_dir, log=log)
