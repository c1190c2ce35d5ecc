"""The Kafka jars a sandbox runs: the classpath of a release fetched by Maven (``pom.xml`` beside
this module) once into a cache of its own, and the tiered storage plugin's jar."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from console.core.errors import SandboxError
from console.sandbox.versions import (
    UP_DEFAULT,
    KafkaRelease,
    parse_release,
)

POM = Path(__file__).with_name("pom.xml")

Log = Callable[[str], None]


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def cache_dir() -> Path:
    return Path(
        os.environ.get("CONSOLE_CACHE_DIR")
        or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "reassignment-console")
    )


# --------------------------------------------------------------------------------------------
# The classpath
# --------------------------------------------------------------------------------------------
def ensure_classpath(log: Log = _stderr, version: str | None = None) -> Path:
    """The directory of jars of Kafka ``version`` (server and tools; ``UP_DEFAULT``'s release when
    None), fetched with Maven from the pom on first use and cached apart from every other release's."""
    release = parse_release(version) if version is not None else UP_DEFAULT.release
    libs = libs_dir(release)
    if (libs / COMPLETE).exists():
        return libs
    _require("java", "Install a Java 17 runtime (Debian: apt-get install openjdk-17-jre-headless).")
    mvn = _require("mvn", "Install Maven (Debian: apt-get install maven).")
    tmp = libs.with_name(f"libs.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    log(f"Fetching Apache Kafka {release} jars with Maven into {libs} (first run of this release only) ...")
    proc = subprocess.run(
        [
            mvn,
            "-q",
            "-B",
            "-f",
            str(POM),
            f"-Dkafka.version={release}",
            "-P",
            f"kafka{release.major}",
            "dependency:copy-dependencies",
            "-DincludeScope=runtime",
            f"-DoutputDirectory={tmp}",
        ],
        capture_output=True,
        text=True,
    )
    jars = sorted(f.name for f in tmp.glob("*.jar"))
    if proc.returncode != 0 or f"kafka_2.13-{release}.jar" not in jars or f"kafka-tools-{release}.jar" not in jars:
        said = _ANSI.sub("", proc.stdout + proc.stderr).strip()
        tail = "\n".join([ln for ln in said.splitlines() if not _MAVEN_BOILERPLATE.search(ln)][-15:])
        shutil.rmtree(tmp, ignore_errors=True)
        with contextlib.suppress(OSError):
            libs.parent.rmdir()  # only when empty: nothing fetched for this release
        if "Could not find artifact" in said or "could not be resolved" in said:
            raise SandboxError(
                f"Maven has no Kafka {release} jars (server and tools of that release are both needed).",
                f"Name a release whose server and tools are both published. Maven said:\n{tail}",
            )
        raise SandboxError(
            f"Maven could not fetch the Kafka {release} jars.",
            f"Check that Maven Central is reachable and ~/.m2/settings.xml is sane. Maven said:\n{tail}",
        )
    (tmp / COMPLETE).write_text(json.dumps({"kafka_version": str(release), "jars": jars}))
    shutil.rmtree(libs, ignore_errors=True)
    tmp.rename(libs)
    return libs


TIERED_RSM = "org.apache.kafka.server.log.remote.storage.LocalTieredStorage"
"""Kafka's own remote storage manager for tests (a directory on local disk standing in for an object
store): in the ``kafka-storage`` test jar, which Maven Central has for 3.9.1 and 4.3.1 but not for 4.4.0."""


def ensure_tiered_jar(release: KafkaRelease, log: Log = _stderr) -> Path:
    """The directory holding ``release``'s ``kafka-storage`` test jar (:data:`TIERED_RSM`), fetched
    with Maven on first use; SandboxError when Maven Central has none for that release."""
    libs = libs_dir(release).parent / "tiered"
    if (libs / COMPLETE).exists():
        return libs
    mvn = _require("mvn", "Install Maven (Debian: apt-get install maven).")
    tmp = libs.with_name(f"tiered.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    log(f"Fetching the Apache Kafka {release} kafka-storage test jar (LocalTieredStorage) into {libs} ...")
    artifact = f"org.apache.kafka:kafka-storage:{release}:jar:test"
    proc = subprocess.run(
        [mvn, "-q", "-B", "-f", str(POM), "dependency:copy", f"-Dartifact={artifact}", f"-DoutputDirectory={tmp}"],
        capture_output=True,
        text=True,
    )
    jars = sorted(f.name for f in tmp.glob("*.jar"))
    if proc.returncode != 0 or not jars:
        said = _ANSI.sub("", proc.stdout + proc.stderr).strip()
        shutil.rmtree(tmp, ignore_errors=True)
        missing = "Could not find artifact" in said or "could not be resolved" in said or "not found" in said
        raise SandboxError(
            f"Maven has no kafka-storage test jar for Kafka {release}: tiered storage needs its LocalTieredStorage."
            if missing
            else f"Maven could not fetch the kafka-storage test jar of Kafka {release}.",
            "Start the tiered sandbox on a release whose test jar is published (--kafka 4.3.1 or 3.9.1)."
            if missing
            else "Check that Maven Central is reachable.",
        )
    (tmp / COMPLETE).write_text(json.dumps({"kafka_version": str(release), "jars": jars}))
    shutil.rmtree(libs, ignore_errors=True)
    tmp.rename(libs)
    return libs


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


_MAVEN_BOILERPLATE = re.compile(r"^\[ERROR\] *$|re-run Maven|Re-run Maven|For more information about|\[Help 1\] http")


COMPLETE = ".complete"
"""Written last into a release's libs dir: the release and the jars Maven fetched for it."""


def libs_dir(release: KafkaRelease) -> Path:
    """Where ``release``'s jars are cached: named by the release and a digest of the pom and release."""
    digest = hashlib.sha256(POM.read_bytes() + str(release).encode()).hexdigest()[:12]
    return cache_dir() / f"kafka-{release}-{digest}" / "libs"


def missing_jars(libs: Path) -> list[str]:
    """The jars fetched into ``libs`` that are no longer there (a cache damaged since)."""
    try:
        jars = json.loads((libs / COMPLETE).read_text())["jars"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return [str(j) for j in jars if not (libs / str(j)).is_file()]


def _require(cmd: str, hint: str) -> str:
    path = shutil.which(cmd)
    if not path:
        raise SandboxError(f"`{cmd}` is not on PATH; the sandbox needs it.", hint)
    return path


def _release_of(libs: Path) -> KafkaRelease | None:
    try:
        return parse_release(str(json.loads((libs / COMPLETE).read_text())["kafka_version"]))
    except (OSError, ValueError, KeyError, TypeError, SandboxError):
        return None
