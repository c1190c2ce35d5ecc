"""Sign-in that cannot be guessed at (back-off per name and per client, the same work for an
unknown name, scrypt at OWASP's cost with old hashes upgraded, failures audited without
flooding), the one-time ticket for the HttpOnly cookie, and files nobody else can read."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import statistics
import time
from pathlib import Path

import pytest

from console.access import auth
from console.access.auth import OPERATOR, VIEWER, Identity, Users, check_password, hash_password, load_users
from console.core.errors import ConfigError
from console.sandbox.versions import Mode
from console.services import sessions as session_service
from console.services.sessions import CLIENT_LIMIT, LOCK_FIRST_S, NAME_LIMIT, Refusal, Refused, SignedIn
from console.storage.store import Store


def cheap_hash(password: str, n: int = 2**10) -> str:
    """A stored hash at a low cost (an old file's; fast to check in a test)."""
    salt = os.urandom(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=n, r=8, p=1)
    return f"scrypt${n}$8$1${salt.hex()}${digest.hex()}"


@pytest.fixture(scope="module")
def cheap_users() -> Users:
    names = ["ann", *(f"user{i}" for i in range(CLIENT_LIMIT + 2))]
    return Users({n: cheap_hash(f"{n}-secret") for n in names}, {n: frozenset({OPERATOR}) for n in names})


def test_fifteen_wrong_passwords_lock_the_name_and_the_right_one_is_refused_until_the_lock_ends(store, cheap_users):
    now = time.time()
    answers = [
        session_service.sign_in(store, cheap_users, "ann", f"guess-{i}", 3600, "10.0.0.9", now=now + i * 0.1)
        for i in range(15)
    ]
    assert all(isinstance(a, Refused) for a in answers)
    assert [a.why for a in answers[: NAME_LIMIT - 1]] == [Refusal.WRONG] * (NAME_LIMIT - 1)
    assert {a.why for a in answers[NAME_LIMIT - 1 :]} == {Refusal.LOCKED}
    right = session_service.sign_in(store, cheap_users, "ann", "ann-secret", 3600, "10.0.0.9", now=now + 1.6)
    assert isinstance(right, Refused) and right.why is Refusal.LOCKED
    assert right.until is not None and right.until >= now + LOCK_FIRST_S
    assert "try again after" in right.message()
    # from another client too: the name is locked, not the browser
    other = session_service.sign_in(store, cheap_users, "ann", "ann-secret", 3600, "10.0.0.10", now=now + 1.7)
    assert isinstance(other, Refused) and other.why is Refusal.LOCKED
    assert store.sessions.count() == 0
    # once the lock is over, the right password signs in and the count starts again
    later = right.until + 1
    signed = session_service.sign_in(store, cheap_users, "ann", "ann-secret", 3600, "10.0.0.9", now=later)
    assert isinstance(signed, SignedIn)
    again = session_service.sign_in(store, cheap_users, "ann", "wrong", 3600, "10.0.0.9", now=later + 1)
    assert isinstance(again, Refused) and again.why is Refusal.WRONG


def test_the_lock_grows_with_each_failure_after_it(store, cheap_users):
    now, untils = time.time(), []
    for _ in range(NAME_LIMIT + 3):
        answer = session_service.sign_in(store, cheap_users, "ann", "wrong", 3600, "c", now=now)
        assert isinstance(answer, Refused)
        if answer.until is not None:
            untils.append(answer.until - now)
            now = answer.until + 0.001  # the next attempt right after the lock ends
    assert untils == pytest.approx([LOCK_FIRST_S, 2 * LOCK_FIRST_S, 4 * LOCK_FIRST_S, 8 * LOCK_FIRST_S], abs=0.01)


def test_one_client_trying_many_names_is_locked(store, cheap_users):
    now = time.time()
    for i in range(CLIENT_LIMIT):
        session_service.sign_in(store, cheap_users, f"user{i}", "wrong", 3600, "203.0.113.7", now=now)
    locked = session_service.sign_in(store, cheap_users, "ann", "ann-secret", 3600, "203.0.113.7", now=now + 1)
    assert isinstance(locked, Refused) and locked.why is Refusal.LOCKED
    # the same user from elsewhere is not
    assert isinstance(session_service.sign_in(store, cheap_users, "ann", "ann-secret", 3600, "198.51.100.1"), SignedIn)


def test_failed_sign_ins_are_audited_without_flooding_the_log(store, cheap_users):
    now = time.time()
    for i in range(15):
        session_service.sign_in(store, cheap_users, "ann", "wrong", 3600, "10.0.0.9", now=now + i)
    entries = store.audit.entries(action="sign-in")
    assert [(e.user, e.cluster, e.outcome) for e in entries] == [("ann", "*", "refused")] * 2
    first, locking = (json.loads(e.request) for e in entries)
    assert first == {"source": "users file", "client": "10.0.0.9", "attempts": 1}
    assert locking["attempts"] == NAME_LIMIT - 1 and locking["locked until"] >= now + LOCK_FIRST_S
    # the attempts refused while locked are counted in the next entry
    session_service.sign_in(store, cheap_users, "ann", "wrong", 3600, "10.0.0.9", now=now + 3600)
    assert json.loads(store.audit.entries(action="sign-in")[-1].request)["attempts"] == 1 + 15 - NAME_LIMIT
    # whatever was typed as a name is cut short
    session_service.sign_in(store, cheap_users, "x" * 100_000, "wrong", 3600, "y" * 10_000)
    last = store.audit.entries(action="sign-in")[-1]
    assert len(last.user) <= session_service.SHOWN_CHARS + 1 and len(last.request) < 300


def _seconds(users: Users, name: str) -> float:
    start = time.perf_counter()
    assert users.login(name, "not the password") is None
    return time.perf_counter() - start


def test_an_unknown_name_costs_the_same_work_as_a_known_one():
    users = Users({"ann": hash_password("ann-secret")}, {"ann": frozenset({OPERATOR})})
    _seconds(users, "nobody")  # the dummy hash is made once
    known, unknown = [], []
    for _ in range(4):  # interleaved, so a busy machine slows both alike
        known.append(_seconds(users, "ann"))
        unknown.append(_seconds(users, "nobody"))
    ratio = statistics.median(unknown) / statistics.median(known)
    assert 0.5 < ratio < 2.0, (known, unknown)


def test_passwords_are_hashed_at_owasp_cost_and_compared_in_constant_time(monkeypatch):
    stored = hash_password("pw")
    kind, n, r, p, salt, digest = stored.split("$")
    assert (kind, int(n), int(r), int(p)) == ("scrypt", 2**17, 8, 1) and len(bytes.fromhex(salt)) == 16
    compared = []
    real = auth.hmac.compare_digest
    monkeypatch.setattr(auth.hmac, "compare_digest", lambda a, b: compared.append(1) or real(a, b))
    assert check_password("pw", stored) and not check_password("px", stored)
    assert len(compared) == 2
    # absurd costs in a file are refused, not computed
    assert not check_password("pw", f"scrypt${2**30}$8$1${salt}${digest}")
    assert not check_password("pw", "plain-text")


def _users_file(path: Path, body: dict[str, object]) -> None:
    path.write_text(json.dumps(body))
    path.chmod(0o600)


def test_an_old_hash_is_upgraded_at_the_next_sign_in_keeping_the_rest_of_the_file(tmp_path):
    path = tmp_path / "users.json"
    old_ann, bob = cheap_hash("ann-secret", 2**14), cheap_hash("bob-secret", 2**14)
    body = {
        "users": {"ann": {"password": old_ann, "roles": ["operator"]}, "bob": {"password": bob, "roles": ["viewer"]}},
        "emails": {"ann@example.com": ["approver"]},
        "two_person_rule": True,
        "comment": "kept",
    }
    _users_file(path, body)
    users = load_users(path)
    assert users is not None and users.login("ann", "wrong") is None
    assert json.loads(path.read_text()) == body  # a failure changes nothing
    assert users.login("ann", "ann-secret") == Identity("ann", frozenset({OPERATOR}), "users file")
    now = json.loads(path.read_text())
    assert now["users"]["ann"]["password"].startswith(f"scrypt${2**17}$8$1$")
    assert check_password("ann-secret", now["users"]["ann"]["password"])
    now["users"]["ann"]["password"] = old_ann
    assert now == body  # everything else as it was
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    upgraded = load_users(path)
    assert upgraded is not None and upgraded.login("ann", "ann-secret") is not None
    assert [p.name for p in tmp_path.iterdir()] == ["users.json"]  # no temp file left


def test_the_users_file_is_written_0600_from_creation(tmp_path, monkeypatch):
    """Created private, not made private after being written (a chmod afterwards leaves a window in
    which anyone may read it): with chmod doing nothing and a umask that lets everyone read what is
    created, the file is still 0600, and so was the new file before it took the old one's place."""
    seen: list[int] = []
    real_replace = os.replace

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        seen.append(stat.S_IMODE(os.stat(src).st_mode))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(os, "chmod", lambda *a, **k: None)
    old = os.umask(0)
    try:
        auth.write_users(tmp_path / "users.json", {"ann": ("pw", [OPERATOR])})
    finally:
        os.umask(old)
    assert seen == [0o600]
    assert stat.S_IMODE((tmp_path / "users.json").stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["users.json"]


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_a_users_file_others_may_read_is_refused(tmp_path, mode):
    path = tmp_path / "users.json"
    _users_file(path, {"users": {"ann": {"password": "x", "roles": [VIEWER]}}})
    path.chmod(mode)
    with pytest.raises(ConfigError) as e:
        load_users(path)
    assert "may be read by others" in e.value.message and f"chmod 600 {path}" in e.value.hint


def test_the_store_is_created_0600_with_its_wal_and_shm(tmp_path):
    old = os.umask(0)
    try:
        store = Store(tmp_path / "data" / "console.db")
        store.audit.record("ann", "*", "sign-in", {}, "signed in")
    finally:
        os.umask(old)
    files = sorted(p.name for p in (tmp_path / "data").iterdir())
    assert files == ["console.db", "console.db-shm", "console.db-wal"]
    assert {p: stat.S_IMODE((tmp_path / "data" / p).stat().st_mode) for p in files} == dict.fromkeys(files, 0o600)
    store.close()


def test_an_older_store_others_could_read_is_made_private(tmp_path):
    Store(tmp_path / "console.db").close()
    (tmp_path / "console.db").chmod(0o644)
    Store(tmp_path / "console.db").close()
    assert stat.S_IMODE((tmp_path / "console.db").stat().st_mode) == 0o600


def test_a_ticket_gives_its_session_token_once_within_a_minute(store, cheap_users):
    signed = session_service.sign_in(store, cheap_users, "ann", "ann-secret", 3600, "c")
    assert isinstance(signed, SignedIn)
    dump = json.dumps(store.db.query("SELECT * FROM sign_in_tickets"))
    assert signed.token not in dump and signed.ticket not in dump  # a copy of the store signs nobody in
    assert session_service.redeem_ticket(store, signed.ticket) == signed.token
    assert session_service.redeem_ticket(store, signed.ticket) is None  # once
    late = session_service.sign_in(store, cheap_users, "ann", "ann-secret", 3600, "c")
    assert isinstance(late, SignedIn)
    assert session_service.redeem_ticket(store, late.ticket, now=time.time() + 61) is None
    ended = session_service.sign_in(store, cheap_users, "ann", "ann-secret", 3600, "c")
    assert isinstance(ended, SignedIn) and session_service.sign_out(store, ended.token)
    assert session_service.redeem_ticket(store, ended.ticket) is None  # its session is over
    for bad in (None, "", "x", "'; DROP TABLE sign_in_tickets; --", signed.token):
        assert session_service.redeem_ticket(store, bad) is None


def test_a_streamlit_sign_in_is_audited(store):
    session_service.record_streamlit_sign_in(store, Identity("ann@example.com", frozenset({OPERATOR}), "streamlit"))
    (entry,) = store.audit.entries(action="sign-in")
    assert (entry.user, entry.cluster, entry.outcome) == ("ann@example.com", "*", "signed in")
    assert json.loads(entry.request)["source"] == "streamlit"


def test_the_console_routes_set_the_cookie_httponly_and_secure_behind_https_and_clear_it_after_sign_out(
    tmp_path, monkeypatch, cheap_users
):
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from components import deps, session_routes

    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv(session_routes.SERVED, "")  # routes() marks them served; put back after
    app = Starlette(routes=session_routes.routes())
    store = deps.store()
    signed = session_service.sign_in(store, cheap_users, "ann", "ann-secret", 3600, "c")
    assert isinstance(signed, SignedIn)
    https = TestClient(app, base_url="https://console.example")
    ticket = {session_routes.TICKET_HEADER: signed.ticket}
    # only with the ticket in its header, by POST (what another site cannot make a browser send)
    assert https.get("/console/session", headers=ticket).status_code == 405
    assert https.post("/console/session", params={"ticket": signed.ticket}).status_code == 400
    answer = https.post("/console/session", headers=ticket)
    assert answer.status_code == 204 and answer.headers["cache-control"] == "no-store"
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"console_session={signed.token};")
    assert {"HttpOnly", "Secure", "Path=/", "SameSite=lax"} <= {p.strip() for p in cookie.split(";")}
    # once only
    again = https.post("/console/session", headers=ticket)
    assert again.status_code == 403 and "set-cookie" not in again.headers
    # over plain http the cookie is not Secure (the browser would drop it)
    plain = TestClient(app, base_url="http://127.0.0.1:8501")
    other = session_service.sign_in(store, cheap_users, "ann", "ann-secret", 3600, "c")
    assert isinstance(other, SignedIn)
    cookie = plain.post("/console/session", headers={session_routes.TICKET_HEADER: other.ticket}).headers["set-cookie"]
    assert "HttpOnly" in cookie and "Secure" not in cookie
    # sign-out clears the cookie only once its session has ended
    plain.cookies.set("console_session", other.token)
    out = {session_routes.SIGN_OUT_HEADER: "1"}
    assert "set-cookie" not in plain.post("/console/sign-out", headers=out).headers
    assert session_service.sign_out(store, other.token)
    assert plain.post("/console/sign-out").status_code == 400
    cleared = plain.post("/console/sign-out", headers=out)
    assert cleared.status_code == 204
    assert (
        cleared.headers["set-cookie"].startswith('console_session="";') and "Max-Age=0" in cleared.headers["set-cookie"]
    )


def test_sandbox_up_keeps_its_users_in_the_sandbox_s_own_file(tmp_path, monkeypatch, capsys):
    from console.access.auth import SANDBOX_USERS
    from console.cli import main
    from console.core.paths import users_file
    from console.sandbox import cluster

    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("CONSOLE_USERS_FILE", raising=False)
    sandbox_dir = tmp_path / "data" / "sandbox"
    sandbox_dir.mkdir(parents=True)
    started = cluster.Sandbox(Mode.KRAFT, str(sandbox_dir), "", "127.0.0.1:1", None, [])
    monkeypatch.setattr(cluster, "up", lambda *a, **k: started)  # the cluster itself is not the point here
    assert main(["sandbox", "up"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert not users_file().exists()  # the console's real users file: not written
    sandbox_file = Path(info["console_users_file"])
    assert sandbox_file == sandbox_dir / "console-users.json"
    assert stat.S_IMODE(sandbox_file.stat().st_mode) == 0o600
    users = load_users(sandbox_file)
    assert users is not None and users.login("admin", SANDBOX_USERS["admin"][0]) is not None
    assert load_users() is None  # a console not pointed at the sandbox's file has no users


def test_sandbox_up_says_when_the_real_users_file_takes_a_published_password(tmp_path, monkeypatch, capsys):
    from console.access.auth import SANDBOX_USERS, write_users_file
    from console.cli import main
    from console.core.paths import users_file
    from console.sandbox import cluster

    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("CONSOLE_USERS_FILE", raising=False)
    body = {"users": {"admin": {"password": cheap_hash(SANDBOX_USERS["admin"][0]), "roles": ["operator"]}}}
    write_users_file(users_file(), body)
    (tmp_path / "sb").mkdir()
    started = cluster.Sandbox(Mode.KRAFT, str(tmp_path / "sb"), "", "127.0.0.1:1", None, [])
    monkeypatch.setattr(cluster, "up", lambda *a, **k: started)
    assert main(["sandbox", "up"]) == 0
    assert "lets admin sign in with the sandbox's published passwords" in capsys.readouterr().err
    assert json.loads(users_file().read_text()) == body  # left for its owner to decide
