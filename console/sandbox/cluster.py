"""A real local Kafka cluster (4.x in KRaft mode, 3.9.x in KRaft or ZooKeeper mode) started from
Maven Central jars.

``up`` fetches the classpath of the release asked for (``pom.xml`` beside this file; server and
tools of the same version) once into a cache of its own, then starts ZooKeeper and the brokers, or
the KRaft nodes (the first three brokers are also the controllers), on free loopback ports, brokers
spread over three racks, each with two log dirs, a SASL/PLAIN listener with ACLs beside the plain
one, and waits until the cluster answers. Every process runs in its own session; the state file
``sandbox.json`` in the data dir records them, so ``status`` and ``down`` work from any later process.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from console.core.errors import SandboxError
from console.sandbox.config import (
    RACKS,
    SASL_USERS,
    _broker_common,
    _sasl,
    _sasl_listener,
    _write_log4j,
    _write_props,
    tiered_props,
)
from console.sandbox.jars import (
    POM,
    Log,
    _release_of,
    _require,
    _stderr,
    cache_dir,
    ensure_classpath,
    ensure_tiered_jar,
    missing_jars,
)
from console.sandbox.versions import (
    ZOOKEEPER_KAFKA,
    KafkaRelease,
    Mode,
    parse_release,
    sandbox_options,
)

STATE_FILE = "sandbox.json"
CHROOT = "/sandbox"
KRAFT_CONTROLLERS = 3
"""In KRaft mode brokers 0..2 are also the controllers (a quorum of three); brokers after them are brokers only."""
_JVM = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k", "-Djava.awt.headless=true"]


def default_data_dir() -> Path:
    from console.core.paths import console_data_dir

    return console_data_dir() / "sandbox"


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
    controller: bool = False
    """A KRaft controller (alone or with a broker in the same process)."""

    def alive(self) -> bool:
        return pid_alive(self.pid)


@dataclass
class Sandbox:
    mode: Mode
    data_dir: str
    kafka_classpath: str
    bootstrap_servers: str
    zookeeper: str | None
    brokers: list[dict[str, object]]
    procs: list[Proc] = field(default_factory=list)
    started_at: float = 0.0
    sasl_bootstrap_servers: str | None = None
    kafka_version: str = ZOOKEEPER_KAFKA
    """The release of the server and tools jars (sandboxes started before releases were chosen ran 3.9.1)."""
    controller_bootstrap_servers: str | None = None
    """KRaft: the controllers' listeners (``--bootstrap-controller``, Admin ``bootstrap.controllers``)."""
    tiered_storage: bool = False
    """Tiered storage is on (:func:`tiered_props`): topics may set ``remote.storage.enable=true``."""

    def info(self) -> dict[str, object]:
        """The one-line JSON object ``sandbox up`` and ``sandbox status`` print."""
        return {
            "bootstrap_servers": self.bootstrap_servers,
            "zookeeper": self.zookeeper,
            "brokers": self.brokers,
            "kafka_classpath": self.kafka_classpath,
            "data_dir": self.data_dir,
            "mode": str(self.mode),
            "kafka_version": self.kafka_version,
            "bootstrap_controllers": self.controller_bootstrap_servers,
            "tiered_storage": self.tiered_storage,
            "sasl": None
            if self.sasl_bootstrap_servers is None
            else {
                "bootstrap_servers": self.sasl_bootstrap_servers,
                "mechanism": "PLAIN",
                "users": SASL_USERS,
            },
        }

    def sasl_properties(self, user: str) -> dict[str, str]:
        """librdkafka properties for ``user`` on the SASL listener."""
        if self.sasl_bootstrap_servers is None:
            raise SandboxError(
                "This sandbox has no SASL listener (it was started before KRaft sandboxes had one).",
                "Run `sandbox down` and `sandbox up` again.",
            )
        return {
            "bootstrap.servers": self.sasl_bootstrap_servers,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.username": user,
            "sasl.password": SASL_USERS[user],
        }

    def tool_argv(self, main: str, *args: str, heap: str = "256m") -> list[str]:
        """The command line of an official Kafka tool (``main``, e.g.
        ``org.apache.kafka.tools.reassign.ReassignPartitionsCommand``) from this sandbox's jars, logging
        to ``tools-server.log`` beside the brokers' logs through the logging of its release."""
        jvm = _Jvm(self.kafka_classpath, Path(self.data_dir), parse_release(self.kafka_version))
        return _java(jvm, "tools", main, *args, heap=heap)

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
        raw["mode"] = Mode(raw["mode"])
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
        if self.mode == Mode.ZOOKEEPER and name.startswith("broker-"):
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
    kafka_version: str | None = None,
    zookeeper: bool = False,
    brokers: int = 3,
    log: Log = _stderr,
    timeout: float = 120.0,
    kraft: bool = False,
    tiered_storage: bool = False,
    broker_config: Mapping[str, object] | None = None,
) -> Sandbox:
    """Start a fresh sandbox in ``data_dir`` (or return the one already running there).

    ``kafka_version``: a 4.x or 3.9.x release; ``zookeeper``: ZooKeeper mode (3.x only);
    ``kraft``: KRaft mode. The choice is checked before anything starts; see
    ``versions.sandbox_options`` for what is chosen when nothing is asked for. ``tiered_storage``:
    brokers with tiered storage on Kafka's LocalTieredStorage (:func:`tiered_props`), for the
    releases whose ``kafka-storage`` test jar Maven Central has (not 4.4.0). ``broker_config``:
    configs every broker (and controller) is given over the sandbox's own, e.g. a longer
    ``broker.session.timeout.ms`` so that a paused broker lags out of the ISR before it is fenced."""
    options = sandbox_options(kafka_version, zookeeper=zookeeper, kraft=kraft)
    if brokers < 1:
        raise SandboxError(f"A sandbox needs at least one broker (asked for {brokers}).")
    data = (data_dir or default_data_dir()).resolve()
    running = status(data)
    if running is not None:
        log(f"A sandbox already runs in {data} (Kafka {running.kafka_version}, {running.mode}).")
        if (running.kafka_version, running.mode) != (options.kafka_version, options.mode):
            log(f"It was kept: run `sandbox down` first to start Kafka {options.kafka_version} ({options.mode}).")
        return running
    release = options.release
    libs = ensure_classpath(log, str(release))
    tiered = ensure_tiered_jar(release, log) if tiered_storage else None
    _require("java", "Install a Java 17 runtime (Debian: apt-get install openjdk-17-jre-headless).")
    for sub in ("zk", "kraft", "logs", "config", *tuple(f"broker-{i}" for i in range(max(8, brokers)))):
        shutil.rmtree(data / sub, ignore_errors=True)
    (data / "logs").mkdir(parents=True, exist_ok=True)
    (data / "config").mkdir(parents=True, exist_ok=True)
    _write_log4j(data)
    jvm = _Jvm(f"{libs}/*" + (f":{tiered}/*" if tiered else ""), data, release)
    kraft_mode = options.mode is Mode.KRAFT
    extra = {**(tiered_props(data) if tiered else {}), **(broker_config or {})}
    sb = (_plan_kraft if kraft_mode else _plan_zookeeper)(jvm, brokers, extra)
    sb.tiered_storage = tiered is not None
    sb.started_at = time.time()
    try:
        if kraft_mode:
            _format_kraft(sb, jvm, log)
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
    log(
        f"Sandbox ready: Kafka {sb.kafka_version} ({sb.mode}), {sb.bootstrap_servers}"
        + (f", ZooKeeper {sb.zookeeper}" if sb.zookeeper else "")
    )
    return sb


def down(data_dir: Path | None = None, log: Log = _stderr, timeout: float = 30.0) -> bool:
    """Stop every process the sandbox started; True when something was running."""
    data = (data_dir or default_data_dir()).resolve()
    sb = Sandbox.load(data)
    if sb is None:
        return False
    live = [p for p in sb.procs if p.alive()]
    # brokers first (a KRaft broker's controlled shutdown needs the controllers), then the
    # controllers, ZooKeeper last
    brokers = [p for p in live if p.name != "zookeeper" and not p.controller]
    controllers = [p for p in live if p.controller]
    zk = [p for p in live if p.name == "zookeeper"]
    if live:
        log(f"Stopping {', '.join(p.name for p in live)} ...")
    _terminate(brokers, hard=False, timeout=timeout)
    _terminate_voters(controllers, sum(p.controller for p in sb.procs), timeout=timeout)
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


NO_QUORUM_GRACE = 2.0
"""Seconds a KRaft voter is given to exit once its quorum is lost, before it is killed."""


def _terminate_voters(procs: list[Proc], voters: int, timeout: float) -> None:
    """Stop the KRaft voters together. A broker's controlled shutdown needs the controllers' answer,
    so once fewer than a majority of the ``voters`` run, the rest can never finish theirs: they are
    killed after a short grace (the sandbox's data is thrown away by the next ``up`` anyway)."""
    for p in procs:
        if p.alive():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    lost: float | None = None
    while time.monotonic() < deadline:
        for p in procs:
            _reap(p.pid)
        alive = [p for p in procs if p.alive()]
        if not alive:
            return
        if len(alive) < voters // 2 + 1:
            lost = lost or time.monotonic()
            if time.monotonic() - lost > NO_QUORUM_GRACE:
                break
        time.sleep(0.1)
    _terminate(procs, hard=True, timeout=timeout)


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


_MISSING_CLASS = re.compile(r"(?:ClassNotFoundException|NoClassDefFoundError):? +([\w.$/]+)")


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
    missing = _MISSING_CLASS.search(text)
    if missing is not None:
        return _missing_class(p, missing[1].replace("/", "."), tail)
    return SandboxError(f"{p.name} exited during start-up.", f"Its log ({p.log}) ends with:\n{tail}")


_ZOOKEEPER_PACKAGES = ("org.apache.zookeeper.", "com.codahale.metrics.", "io.dropwizard.metrics", "kafka.zk.")


def _missing_class(p: Proc, cls: str, tail: str) -> SandboxError:
    """A class not on the classpath: fetching again helps only when the cache lost jars it had."""
    classpath = p.argv[p.argv.index("-cp") + 1] if "-cp" in p.argv else ""
    libs = Path(classpath.removesuffix("/*"))
    lost = missing_jars(libs) if classpath else []
    if lost:
        return SandboxError(
            f"{p.name}: {cls} is missing: the cached Kafka classpath lost "
            + ", ".join(lost[:3])
            + (f" and {len(lost) - 3} more jars." if len(lost) > 3 else "."),
            f"Delete {libs.parent} and run again to fetch the jars again.\n{tail}",
        )
    release = _release_of(libs)
    if release is None:  # not a classpath this sandbox fetched and recorded: a fresh fetch is the best bet
        return SandboxError(
            f"{p.name}: {cls} is not on the Kafka classpath ({classpath}).",
            f"Delete {cache_dir()} and run again to fetch the jars again.\n{tail}",
        )
    # ZooKeeper itself, its metrics (Dropwizard's, brought by Kafka 3 only) and Kafka's ZooKeeper client
    zookeeper_class = p.name == "zookeeper" or cls.startswith(_ZOOKEEPER_PACKAGES)
    if zookeeper_class and not release.has_zookeeper:
        return SandboxError(
            f"{p.name}: Kafka {release} has no ZooKeeper ({cls} is not part of it).",
            "Kafka 4 has no ZooKeeper mode; use --kafka 3.9.1 --zookeeper",
        )
    return SandboxError(
        f"{p.name}: {cls} is not on the classpath of Kafka {release}, and fetching the jars "
        "again would not bring it: the release's dependencies do not include it.",
        f"The sandbox's pom ({POM}) lacks a dependency for this release. Its log ({p.log}) ends with:\n{tail}",
    )


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
@dataclass(frozen=True)
class _Jvm:
    """What every JVM of one sandbox shares: the jars, the data dir, the release (for its logging)."""

    classpath: str
    data: Path
    release: KafkaRelease


def _java(jvm: _Jvm, name: str, main: str, *args: str, heap: str = "512m") -> list[str]:
    java = shutil.which("java") or "java"
    config = jvm.data / "config"
    logging = (  # Kafka 3 logs through log4j 1 (reload4j), Kafka 4 through log4j2
        f"-Dlog4j.configuration=file:{config / 'log4j.properties'}"
        if jvm.release.major < 4
        else f"-Dlog4j2.configurationFile={config / 'log4j2.properties'}"
    )
    return [
        java,
        f"-Xmx{heap}",
        *_JVM,
        "-cp",
        jvm.classpath,
        logging,
        f"-Dkafka.logs.dir={jvm.data / 'logs'}",
        f"-Dsandbox.name={name}",
        main,
        *args,
    ]


def _grant_viewer(sb: Sandbox) -> None:
    """The read-only ACLs the console needs: DESCRIBE and DESCRIBE_CONFIGS on the cluster and all topics."""
    from confluent_kafka import KafkaError, KafkaException
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
    for attempt in range(5):
        try:
            for future in admin.create_acls(bindings, request_timeout=30).values():
                future.result()
            return
        except KafkaException as e:
            # Creating the same ACLs again is harmless. _DESTROY_BROKER: librdkafka dropped the
            # bootstrap broker's handle the request waited on, once the metadata named the brokers.
            err = e.args[0] if e.args and isinstance(e.args[0], KafkaError) else None
            again = err is not None and (err.retriable() or err.code() == KafkaError._DESTROY_BROKER)
            if not again or attempt == 4:
                raise
            time.sleep(1.0)


def _broker_proc(jvm: _Jvm, i: int, port: int, props: dict[str, object], controller: bool = False) -> Proc:
    path = jvm.data / "config" / f"broker-{i}.properties"
    _write_props(path, props)
    return Proc(
        f"broker-{i}",
        _java(jvm, f"broker-{i}", "kafka.Kafka", str(path)),
        str(jvm.data / "logs" / f"broker-{i}.out"),
        port,
        controller=controller,
    )


def _plan_zookeeper(jvm: _Jvm, n: int, extra: dict[str, object] | None = None) -> Sandbox:
    data = jvm.data
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
                jvm,
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
    brokers: list[dict[str, object]] = []
    for i, port in enumerate(ports):
        props = {
            "broker.id": i,
            **_sasl_listener(port, sasl_ports[i]),
            "zookeeper.connect": zk,
            "zookeeper.session.timeout.ms": 6000,
            "zookeeper.connection.timeout.ms": 10000,
            **_broker_common(data, i, port),
            **(extra or {}),
        }
        procs.append(_broker_proc(jvm, i, port, props))
        brokers.append({"id": i, "rack": RACKS[i % len(RACKS)], "port": port})
    return _planned(Mode.ZOOKEEPER, jvm, ports, sasl_ports, zk, brokers, procs)


def _plan_kraft(jvm: _Jvm, n: int, extra: dict[str, object] | None = None) -> Sandbox:
    """Brokers 0..2 are broker and controller in one process (a quorum of three, as few JVMs as
    possible); brokers from 3 on are brokers only, so a 6-broker sandbox keeps a quorum of three."""
    data = jvm.data
    k = min(n, KRAFT_CONTROLLERS)
    all_ports = free_ports(2 * n + k)
    ports, sasl_ports, cports = all_ports[:n], all_ports[n : 2 * n], all_ports[2 * n :]
    voters = ",".join(f"{i}@127.0.0.1:{c}" for i, c in enumerate(cports))
    procs, brokers = [], []
    for i, port in enumerate(ports):
        controller = i < k
        listeners = f"PLAINTEXT://127.0.0.1:{port},SASL_PLAINTEXT://127.0.0.1:{sasl_ports[i]}"
        props = {
            "process.roles": "broker,controller" if controller else "broker",
            "node.id": i,
            "controller.quorum.voters": voters,
            "listeners": listeners + (f",CONTROLLER://127.0.0.1:{cports[i]}" if controller else ""),
            "advertised.listeners": listeners,
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": (
                "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT"
            ),
            **_sasl(Mode.KRAFT),
            "metadata.log.dir": data / "kraft" / f"meta-{i}",
            # the quorum's no-op record every 5 s, not every 0.5 s: a cluster at rest costs a third
            # less CPU (nothing else waits on these records)
            "metadata.max.idle.interval.ms": 5000,
            **_broker_common(data, i, port),
            **(extra or {}),
        }
        procs.append(_broker_proc(jvm, i, port, props, controller=controller))
        brokers.append({"id": i, "rack": RACKS[i % len(RACKS)], "port": port})
    return _planned(Mode.KRAFT, jvm, ports, sasl_ports, None, brokers, procs, controllers=cports)


def _addresses(ports: list[int]) -> str:
    return ",".join(f"127.0.0.1:{p}" for p in ports)


def _planned(
    mode: Mode,
    jvm: _Jvm,
    ports: list[int],
    sasl_ports: list[int],
    zk: str | None,
    brokers: list[dict[str, object]],
    procs: list[Proc],
    controllers: list[int] | None = None,
) -> Sandbox:
    """The sandbox a plan of processes makes: its listeners' addresses on loopback."""
    return Sandbox(
        mode,
        str(jvm.data),
        jvm.classpath,
        _addresses(ports),
        zk,
        brokers,
        procs,
        sasl_bootstrap_servers=_addresses(sasl_ports),
        kafka_version=str(jvm.release),
        controller_bootstrap_servers=_addresses(controllers) if controllers else None,
    )


def new_cluster_id(draw: Callable[[], uuid.UUID] = uuid.uuid4) -> str:
    """A KRaft cluster id as Kafka makes one: 22 URL-safe base64 characters.

    Like Kafka's own ``Uuid.randomUuid`` it never starts with "-": the storage
    tool would read such an id as an option and refuse to format (one id in 64).
    """
    while True:
        cluster_id = base64.urlsafe_b64encode(draw().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


def _format_kraft(sb: Sandbox, jvm: _Jvm, log: Log) -> None:
    cluster_id = new_cluster_id()
    log(f"Formatting KRaft storage (cluster id {cluster_id}) ...")
    running = []
    for p in sb.procs:
        props = p.argv[-1]
        argv = _java(
            jvm,
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
def running(
    data_dir: Path,
    kraft: bool = False,
    log: Log = _stderr,
    kafka_version: str | None = None,
    zookeeper: bool = False,
    brokers: int = 3,
) -> Iterator[Sandbox]:
    """A sandbox for the duration of a ``with`` block (tests, benchmarks)."""
    sb = up(data_dir, kafka_version, zookeeper=zookeeper, brokers=brokers, log=log, kraft=kraft)
    try:
        yield sb
    finally:
        down(data_dir, log=log)
