"""The e2e tier's fixtures: the console served by `streamlit run` on the session's sandbox."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from console.sandbox.cluster import Sandbox, free_port
from tests.e2e.browser import ROOT, SERVERS_LEASE_S
from tests.e2e.identity import OIDC_ACCESS, PROXY_SECRET
from tests.keycloak import CLIENT_ID as KEYCLOAK_CLIENT_ID
from tests.keycloak import CLIENT_SECRET as KEYCLOAK_CLIENT_SECRET
from tests.keycloak import Keycloak
from tests.keycloak import start as start_keycloak
from tests.support import own_sandbox, wait_for

# An expectation without a timeout of its own waits 30 s, not Playwright's 5 s: on a loaded two-core
# machine a page's script run takes longer than 5 s to draw what the test looks for (CI met it).
expect.set_options(timeout=30_000)


@pytest.fixture
def app_url(sandbox: Sandbox, tmp_path: Path) -> Iterator[str]:
    """`streamlit run serve.py` (the console and its routes) on the sandbox (Kafka 4.x KRaft, named "sandbox"), its data dir
    ``tmp_path``, its output in ``tmp_path / "streamlit.log"``; the URL once it answers its health check."""
    yield from _serve(sandbox, tmp_path)


@pytest.fixture(scope="module")
def four_brokers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """Kafka 4.x KRaft with four brokers (0–2 also the controllers), the module's own: its tests stop
    brokers and take broker 3 out for good."""
    yield from own_sandbox(tmp_path_factory, "sandbox-e2e-kafka4", brokers=4)


@pytest.fixture
def four_app_url(four_brokers: Sandbox, tmp_path: Path) -> Iterator[str]:
    """As ``app_url``, on ``four_brokers``."""
    yield from _serve(four_brokers, tmp_path)


@pytest.fixture
def unreachable_app_url(tmp_path: Path) -> Iterator[str]:
    """The console on a cluster that never answers (nothing listens on 127.0.0.1:1), read with a 2 s timeout."""
    yield from _serve_on(
        tmp_path, env={"CONSOLE_BOOTSTRAP_SERVERS": "127.0.0.1:1", "CONSOLE_ZOOKEEPER": "", "CONSOLE_TIMEOUT_S": "2"}
    )


@pytest.fixture
def zk_app_url(zk_sandbox: Sandbox, tmp_path: Path) -> Iterator[str]:
    """As ``app_url``, on the ZooKeeper-mode sandbox (Kafka 3.9), ZooKeeper given to the console."""
    yield from _serve(zk_sandbox, tmp_path)


@pytest.fixture(scope="session")
def keycloak(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Keycloak]:
    """A real OIDC provider: Keycloak (from Maven Central) in development mode with the test realm
    (tests/e2e/keycloak/realm.json: alice in group operators, victor in viewers, nina in none),
    started once per test session (about a minute) and stopped at its end."""
    work = tmp_path_factory.mktemp("keycloak")
    kc = start_keycloak(work)
    yield kc
    kc.stop()
    shutil.rmtree(kc.home, ignore_errors=True)  # the copy of the distribution; its log stays


@pytest.fixture
def oidc_app_url(sandbox: Sandbox, keycloak: Keycloak, tmp_path: Path) -> Iterator[str]:
    """As ``app_url``, with sign-in through ``keycloak`` (``[auth]`` in a secrets.toml of the
    test's own, ``tmp_path / "secrets.toml"``) and :data:`OIDC_ACCESS`; the sandbox is also
    configured as ``production``."""
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(
        f"""
[auth]
redirect_uri = "http://127.0.0.1:{{port}}/oauth2callback"
cookie_secret = "{os.urandom(16).hex()}"
client_id = "{KEYCLOAK_CLIENT_ID}"
client_secret = "{KEYCLOAK_CLIENT_SECRET}"
server_metadata_url = "{keycloak.metadata_url}"
client_kwargs = {{ prompt = "login" }}
{OIDC_ACCESS}
[clusters.production]
bootstrap_servers = "{sandbox.bootstrap_servers}"
"""
    )
    yield from _serve(sandbox, tmp_path, "--secrets.files", str(secrets))


@pytest.fixture
def proxy_app_url(sandbox: Sandbox, tmp_path: Path) -> Iterator[str]:
    """As ``app_url``, trusting a reverse proxy that sends :data:`PROXY_SECRET`
    (``[access.proxy]``), with :data:`OIDC_ACCESS`'s group mapping."""
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(f'{OIDC_ACCESS}\n[access.proxy]\nsecret = "{PROXY_SECRET}"\n')
    yield from _serve(sandbox, tmp_path, "--secrets.files", str(secrets))


@pytest.fixture
def two_servers_on_postgresql(sandbox: Sandbox, pg_url: str, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """Two console servers (``streamlit run serve.py``, each its own data dir under ``tmp_path``)
    sharing one store on the session's PostgreSQL (``pg_url``) and one users file,
    ``tmp_path / "users.json"``, each run's lease :data:`SERVERS_LEASE_S`; their URLs."""
    shared = {
        "CONSOLE_STORE_URL": pg_url,
        "CONSOLE_USERS_FILE": str(tmp_path / "users.json"),
        "CONSOLE_RUN_LEASE_S": str(SERVERS_LEASE_S),
    }
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    with contextlib.ExitStack() as both:
        first = both.enter_context(contextlib.contextmanager(_serve)(sandbox, tmp_path / "a", env=shared))
        second = both.enter_context(contextlib.contextmanager(_serve)(sandbox, tmp_path / "b", env=shared))
        yield first, second


def _serve(sandbox: Sandbox, tmp_path: Path, *extra: str, env: dict[str, str] | None = None) -> Iterator[str]:
    cluster = {"CONSOLE_BOOTSTRAP_SERVERS": sandbox.bootstrap_servers, "CONSOLE_ZOOKEEPER": sandbox.zookeeper or ""}
    yield from _serve_on(tmp_path, *extra, env={**cluster, **(env or {})})


def _serve_on(tmp_path: Path, *extra: str, env: dict[str, str]) -> Iterator[str]:
    """`streamlit run serve.py` on the cluster ``env`` names (CONSOLE_BOOTSTRAP_SERVERS), its data dir ``tmp_path``."""
    port = free_port()
    env = {
        **os.environ,
        "CONSOLE_CLUSTER_NAME": "sandbox",
        "CONSOLE_DATA_DIR": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        **env,
    }
    with open(tmp_path / "streamlit.log", "w") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                str(ROOT / "serve.py"),
                "--server.port",
                str(port),
                "--server.headless",
                "true",
                *extra,
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )

        def healthy() -> bool:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as answer:
                    return int(answer.status) == 200
            except OSError:
                return False

        try:
            wait_for(healthy, timeout=60, what="streamlit health")
            yield f"http://127.0.0.1:{port}"
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:  # a loaded machine: do not leave it behind
                proc.kill()
                proc.wait(10)
