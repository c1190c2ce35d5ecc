"""A real OIDC provider for the suite: Keycloak's distribution from Maven Central, started in
development mode on a free port with the test realm (tests/e2e/keycloak/realm.json) imported.

``python -m tests.keycloak`` fetches the distribution into the cache (``make setup`` runs it), so
the first test session does not wait for the download. The fixture that starts it is in
tests/e2e/conftest.py (``keycloak``, once per test session).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

from console.sandbox.cluster import free_port
from console.sandbox.jars import cache_dir
from tests.support import QUICK_JVM, log, wait_for

VERSION = "26.7.3"
ARTIFACT = f"org.keycloak:keycloak-quarkus-dist:{VERSION}:zip"
REALM_FILE = Path(__file__).resolve().parent / "e2e" / "keycloak" / "realm.json"
REALM = "console"
CLIENT_ID = "reassignment-console"
CLIENT_SECRET = "console-test-client-secret"
"""As in the realm file (a test realm's, nothing else's)."""
PASSWORDS = {"alice": "alice-secret", "victor": "victor-secret", "nina": "nina-secret"}
"""The realm's users: alice in group operators, victor in group viewers, nina in no group."""
START_TIMEOUT_S = 600.0
"""About a minute on an idle machine (40 s of it the first-start build); much more under load."""


def dist_dir() -> Path:
    return cache_dir() / f"keycloak-{VERSION}"


def ensure_keycloak() -> Path:
    """The unpacked distribution, fetched with Maven (``mvn dependency:copy``) on first use."""
    home = dist_dir()
    if (home / "bin" / "kc.sh").exists() and (home / "lib" / "quarkus-run.jar").exists():
        return home
    for tool, hint in (("java", "apt-get install openjdk-17-jre-headless"), ("mvn", "apt-get install maven")):
        if shutil.which(tool) is None:
            raise RuntimeError(f"Keycloak needs {tool}: {hint} (make setup installs it).")
    fetched = home.with_name(f"keycloak-{VERSION}.fetch-{os.getpid()}")
    shutil.rmtree(fetched, ignore_errors=True)
    log(f"Fetching Keycloak {VERSION} with Maven into {home} (first run only) ...")
    proc = subprocess.run(
        ["mvn", "-q", "-B", "dependency:copy", f"-Dartifact={ARTIFACT}", f"-DoutputDirectory={fetched}"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent,
    )
    archive = fetched / f"keycloak-quarkus-dist-{VERSION}.zip"
    if proc.returncode != 0 or not archive.exists():
        shutil.rmtree(fetched, ignore_errors=True)
        raise RuntimeError(f"Maven could not fetch {ARTIFACT}:\n{(proc.stdout + proc.stderr)[-3000:]}")
    unpacked = fetched / "unpacked"
    with zipfile.ZipFile(archive) as z:
        z.extractall(unpacked)
    top = unpacked / f"keycloak-{VERSION}"
    for script in (top / "bin").glob("*.sh"):
        script.chmod(0o755)
    shutil.rmtree(home, ignore_errors=True)
    top.rename(home)
    shutil.rmtree(fetched, ignore_errors=True)
    return home


@dataclass(frozen=True)
class Keycloak:
    """A running Keycloak with the test realm."""

    url: str
    home: Path
    process: subprocess.Popen[bytes]

    @property
    def issuer(self) -> str:
        return f"{self.url}/realms/{REALM}"

    @property
    def metadata_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    def stop(self) -> None:
        """SIGTERM to its process group, SIGKILL after 30 s."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)


def start(work: Path) -> Keycloak:
    """A copy of the distribution under ``work`` started in development mode (in-memory
    database) on a free port, the test realm imported; its output in ``work / "keycloak.log"``."""
    home = work / "keycloak"
    shutil.copytree(ensure_keycloak(), home, symlinks=True)
    (home / "data" / "import").mkdir(parents=True, exist_ok=True)
    shutil.copy(REALM_FILE, home / "data" / "import" / "realm.json")
    port = free_port()
    env = dict(
        os.environ,
        KC_BOOTSTRAP_ADMIN_USERNAME="admin",
        KC_BOOTSTRAP_ADMIN_PASSWORD=os.urandom(12).hex(),
        JAVA_OPTS_APPEND=QUICK_JVM,  # kc.sh adds it to its own options (it chooses the collector)
    )
    with open(work / "keycloak.log", "wb") as out:
        proc = subprocess.Popen(
            [
                str(home / "bin" / "kc.sh"),
                "start-dev",
                "--http-port",
                str(port),
                "--http-host",
                "127.0.0.1",
                "--import-realm",
                "--db",
                "dev-mem",
                "--http-management-port",
                str(free_port()),
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    kc = Keycloak(f"http://127.0.0.1:{port}", home, proc)

    def ready() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"Keycloak exited ({proc.returncode}); see {work / 'keycloak.log'}")
        try:
            with urllib.request.urlopen(kc.metadata_url, timeout=2) as answer:
                return int(answer.status) == 200
        except OSError:
            return False

    try:
        wait_for(ready, timeout=START_TIMEOUT_S, every=1.0, what="Keycloak's test realm")
    except BaseException:
        kc.stop()
        raise
    keep_build(home)
    return kc


BUILT = "dev-mem.built"
"""Marks the cached distribution's ``lib/quarkus`` as built for ``start-dev --db dev-mem``."""


def keep_build(started: Path) -> None:
    """Keep the build a first start made (its Quarkus augmentation, most of a first start) in the
    cached distribution: later starts with the same build options skip it."""
    cached = dist_dir() / "lib" / "quarkus"
    if (cached / BUILT).exists():
        return
    fresh = cached.with_name(f"quarkus.fresh-{os.getpid()}")
    old = cached.with_name(f"quarkus.old-{os.getpid()}")
    try:
        shutil.copytree(started / "lib" / "quarkus", fresh)
        (fresh / BUILT).write_text(VERSION)
        cached.rename(old)
        fresh.rename(cached)
    except OSError as e:  # another test session keeping its build at the same moment: theirs will do
        log(f"Keycloak's build not kept in the cache ({e}).")
        if not cached.exists() and old.exists():
            old.rename(cached)
    shutil.rmtree(fresh, ignore_errors=True)
    shutil.rmtree(old, ignore_errors=True)


if __name__ == "__main__":
    print(ensure_keycloak())
