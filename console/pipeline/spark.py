"""One Spark session per process, configured for the machine, and Spark's errors in the console's terms.

``local[*]`` is the default; ``master`` takes any Spark master URL (``spark://``, ``yarn``,
``k8s://``) and ``remote`` a Spark Connect server (``sc://``). A master or Connect server that
does not answer is found before any work starts (a TCP check of the address, then a timeout on
session start) and reported as :class:`SparkUnavailable`.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlparse

from console.core.errors import ConfigError, SparkJobFailed, SparkUnavailable

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

T = TypeVar("T")
DEFAULT_MASTER = "local[*]"
LOG_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")
"""Spark's driver logs at ERROR only: the jobs print their own stages."""
_CONNECT_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class SparkSettings:
    """Where jobs run and how the session is sized."""

    master: str | None = None
    remote: str | None = None
    ui: bool = False
    shuffle_partitions: int | None = None
    driver_memory: str | None = None
    conf: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return self.remote or self.master or DEFAULT_MASTER


def _cores(master: str) -> int:
    """Cores a ``local[N]`` master uses (all for ``local[*]``); a guess of 2 per executor otherwise."""
    if master.startswith("local"):
        inner = master[master.find("[") + 1 : master.find("]")] if "[" in master else "1"
        return os.cpu_count() or 2 if inner.startswith("*") else max(1, int(inner.split(",")[0]))
    return 2 * (os.cpu_count() or 2)


def _driver_memory() -> str:
    """A third of the machine's memory, at least 1 GiB and at most 16 GiB."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return "2g"
    return f"{max(1, min(16, total // 3 // 2**30))}g"


def check_reachable(url: str) -> None:
    """Raise :class:`SparkUnavailable` unless something listens at a ``spark://`` or ``sc://`` address."""
    parsed = urlparse(url)
    if parsed.scheme not in ("spark", "sc"):
        return
    default = 7077 if parsed.scheme == "spark" else 15002
    hosts = parsed.netloc.split("/")[0].split(";")[0].split(",")
    problems = []
    for hostport in hosts:
        host, _, port = hostport.rpartition(":") if ":" in hostport else (hostport, "", str(default))
        try:
            with socket.create_connection((host or "127.0.0.1", int(port or default)), timeout=_CONNECT_TIMEOUT_S):
                return
        except (OSError, ValueError) as e:
            problems.append(f"{hostport}: {getattr(e, 'strerror', None) or e}")
    what = "Spark master" if parsed.scheme == "spark" else "Spark Connect server"
    flag = "--master" if parsed.scheme == "spark" else "--remote"
    raise SparkUnavailable(
        f"The {what} at {url} does not answer ({'; '.join(problems)}).",
        f"Start it, or give {flag} the address of one that runs; without {flag} jobs run "
        f"on this machine ({DEFAULT_MASTER}).",
    )


def session(settings: SparkSettings = SparkSettings()) -> SparkSession:
    """The process's Spark session for ``settings`` (created once; Spark keeps one per process)."""
    from pyspark.sql import SparkSession

    if settings.master and settings.remote:
        raise ConfigError("Give either --master or --remote, not both.")
    check_reachable(settings.where)
    builder = SparkSession.builder.appName("reassignment-console")
    if settings.remote:
        builder = builder.remote(settings.remote)
    else:
        master = settings.master or DEFAULT_MASTER
        cores = _cores(master)
        if master.startswith("local"):  # one machine: no "hostname resolves to a loopback address" warning
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            # Python workers (the generate job's planners) run this interpreter, with its packages
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = (
            builder.master(master)
            .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{LOG_CONFIG}")
            .config("spark.ui.enabled", str(settings.ui).lower())
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.memory", settings.driver_memory or _driver_memory())
            .config("spark.sql.shuffle.partitions", str(settings.shuffle_partitions or max(4, 2 * cores)))
            .config("spark.sql.adaptive.enabled", "true")
            .config("spark.driver.maxResultSize", "4g")
            .config("spark.sql.adaptive.coalescePartitions.enabled", "true")
        )
        # Python workers on this machine import the console from where this one does
        builder = builder.config("spark.executorEnv.PYTHONPATH", os.pathsep.join(_python_path()))
    builder = (
        builder.config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        .config("spark.sql.parquet.compression.codec", "zstd")
        .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    )  # UTC instants, as pyarrow reads them
    for k, v in settings.conf.items():
        builder = builder.config(k, v)
    try:
        spark = builder.getOrCreate()
        if not settings.remote:
            spark.sparkContext.setLogLevel("ERROR")
    except Exception as e:
        raise SparkUnavailable(
            f"Spark could not start on {settings.where}: {_first_line(e)}",
            "Check the address and that Java 17+ is installed (java -version).",
        ) from None
    return spark


def _python_path() -> list[str]:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # holds console/
    return [root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]


def ship_console(spark: SparkSession, settings: SparkSettings) -> None:
    """Add this console's code to ``spark`` as a zip, so Python workers on other machines (a Spark
    cluster's executors, a Spark Connect server's workers) run the very code the driver runs; its
    dependencies (pyarrow, numpy, msgspec) must be installed there. Nothing to do on ``local``."""
    if not settings.remote and (settings.master or DEFAULT_MASTER).startswith("local"):
        return
    root = os.path.dirname(os.path.abspath(__file__))
    package = os.path.dirname(root)
    path = os.path.join(tempfile.mkdtemp(prefix="console-code-"), "console.zip")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for folder, _, files in os.walk(package):
            for name in files:
                if name.endswith((".py", ".properties")):
                    full = os.path.join(folder, name)
                    z.write(full, os.path.relpath(full, os.path.dirname(package)))
    if settings.remote:
        spark.addArtifacts(path, pyfile=True)
    else:
        spark.sparkContext.addPyFile(path)


def _first_line(e: BaseException) -> str:
    text = str(getattr(e, "desc", None) or e).strip()
    line = next((x for x in text.splitlines() if x.strip()), type(e).__name__)
    return line[:500]


def spark_errors() -> tuple[type[BaseException], ...]:
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    return (PySparkException, Py4JError)


def run_job(what: str, body: Callable[[], T]) -> T:
    """``body()``, with a Spark failure turned into :class:`SparkJobFailed` naming ``what`` failed.
    In a classic session the Spark jobs ``body`` starts carry ``what`` as their description (the
    web UI's and the event log's name for them)."""
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context
    before = sc.getLocalProperty(_DESCRIPTION) if sc is not None else None
    if sc is not None:
        sc.setLocalProperty(_DESCRIPTION, what)
    try:
        return body()
    except spark_errors() as e:
        raise job_failed(what, e) from None
    finally:
        if sc is not None:
            # a Spark that has gone (its JVM died) must not hide why the job failed
            with contextlib.suppress(*spark_errors(), OSError):
                sc.setLocalProperty(_DESCRIPTION, before)  # type: ignore[arg-type]  # None removes it


_DESCRIPTION = "spark.job.description"


def job_failed(what: str, e: BaseException) -> BaseException:
    """``e`` as the console reports it: a Spark exception becomes :class:`SparkJobFailed`; others stay."""
    if not isinstance(e, spark_errors()):
        return e
    worker = _worker_error(str(getattr(e, "desc", None) or e))
    if worker:
        return SparkJobFailed(
            f"{what} failed in a Spark Python worker: {worker}",
            "The executors' Python needs the console's requirements (pip install -r "
            "requirements.txt there); point PYSPARK_PYTHON at that Python.",
        )
    return SparkJobFailed(
        f"{what} failed: {_first_line(e)}",
        "If a file is named, it is unreadable or not Parquet: move it out of the snapshot "
        "directory and run the job again.",
    )


_RAISED = re.compile(r"^(\w+(?:Error|Exception)): (.+)$", re.M)


def _worker_error(text: str) -> str | None:
    """The Python exception a worker raised (its traceback's last line), when Spark says one did."""
    if "Python worker" not in text:
        return None
    raised = _RAISED.findall(text)
    return f"{raised[-1][0]}: {raised[-1][1]}" if raised else None


@contextmanager
def progress(spark: SparkSession, report: Callable[[int, int], None], every_s: float = 0.5) -> Iterator[None]:
    """Calls ``report(done, total)`` with the tasks of the running Spark stages while the block runs:
    polled from the status tracker in a classic session, pushed by the server through a progress
    handler in a Spark Connect session."""
    try:
        tracker = spark.sparkContext.statusTracker()
    except Exception:
        from pyspark.sql.connect.shell.progress import ProgressHandler, StageInfo

        class Handler(ProgressHandler):
            def __call__(
                self, stages: Iterable[StageInfo] | None, inflight_tasks: int, operation_id: str | None, done: bool
            ) -> None:
                seen = list(stages or ())
                total = sum(s.num_tasks for s in seen)
                if total and not done:
                    report(sum(s.num_completed_tasks for s in seen), total)

        try:
            spark.registerProgressHandler(Handler())
        except Exception:
            yield
            return
        try:
            yield
        finally:
            spark.clearProgressHandlers()
        return
    done = threading.Event()

    def poll() -> None:
        while not done.wait(every_s):
            total = finished = 0
            for sid in tracker.getActiveStageIds():
                info = tracker.getStageInfo(sid)
                if info is not None:
                    total += info.numTasks
                    finished += info.numCompletedTasks
            if total:
                report(finished, total)

    t = threading.Thread(target=poll, daemon=True, name="spark-progress")
    t.start()
    try:
        yield
    finally:
        done.set()
        t.join(timeout=2)
