"""A secrets.toml the console cannot use says what is wrong and where (instead of "no cluster
configured" or a silent drop to viewer)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.app.pages import APP


def test_a_malformed_secrets_file_is_named_with_its_error(tmp_path, monkeypatch):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("CONSOLE_BOOTSTRAP_SERVERS", raising=False)
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "secrets.toml").write_text('[clusters.prod\nbootstrap_servers = "k1:9092"\n')
    monkeypatch.chdir(tmp_path)  # Streamlit reads ./.streamlit/secrets.toml
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    errors = " ".join(e.value for e in at.sidebar.error)
    assert "Error parsing secrets file" in errors and "secrets.toml" in errors and "line 1" in errors, errors


def test_cluster_tables_and_sign_in_settings_the_console_cannot_use_are_named(tmp_path, monkeypatch):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("CONSOLE_BOOTSTRAP_SERVERS", raising=False)
    at = AppTest.from_file(APP, default_timeout=60)
    at.secrets["clusters"] = {
        "prod": {"zookeeper": "zk:2181"},
        "staging": {"bootstrap_servers": "s1:9092", "properties": {"sasl.oops": "x"}},
    }
    at.secrets["auth"] = {"client_id": "x"}
    at.run()
    assert not at.exception
    errors = " ".join(e.value for e in at.sidebar.error)
    assert "[clusters.prod] in secrets.toml has no bootstrap_servers" in errors, errors
    assert "[clusters.staging] in secrets.toml" in errors and "sasl.oops" in errors, errors
    assert "[auth] in secrets.toml lacks redirect_uri, cookie_secret" in errors, errors


def test_notification_settings_and_a_metrics_address_the_console_cannot_use_are_named(tmp_path, monkeypatch):
    monkeypatch.setenv("CONSOLE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("CONSOLE_BOOTSTRAP_SERVERS", raising=False)
    (tmp_path / "notify.toml").write_text(
        '[[clusters.prod.destinations]]\nurl = "json://h:1/x"\nevents = ["run-stuk"]\n'
    )
    monkeypatch.setenv("CONSOLE_METRICS_ADDRESS", "9464")
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    errors = " ".join(e.value for e in at.sidebar.error)
    assert "events not known: run-stuk" in errors and "the destination is left out" in errors, errors
    assert "CONSOLE_METRICS_ADDRESS='9464' is not host:port" in errors, errors
