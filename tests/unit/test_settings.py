import pytest

from console.access.settings import load_command_config, parse_properties, settings_from_args, to_kafka_python
from console.core.errors import ConfigError


def test_properties_syntax():
    text = "# comment\n! also\na=1\nb : two\nc three\nlong=x\\\n   y\n"
    assert parse_properties(text) == {"a": "1", "b": "two", "c": "three", "long": "xy"}


def test_command_config_java_names(tmp_path):
    f = tmp_path / "client.properties"
    f.write_text(
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="alice" password="s3cr\\"et";\nssl.truststore.location=/etc/ca.pem\n'
    )
    props = load_command_config(f)
    assert props["sasl.username"] == "alice" and props["sasl.password"] == 's3cr\\"et'
    assert props["ssl.ca.location"] == "/etc/ca.pem"
    kp = to_kafka_python(props | {"bootstrap.servers": "a:1,b:2"})
    assert kp["bootstrap_servers"] == ["a:1", "b:2"] and kp["security_protocol"] == "SASL_SSL"
    assert kp["sasl_plain_username"] == "alice" and kp["ssl_cafile"] == "/etc/ca.pem"


def test_bad_settings_are_config_errors(tmp_path):
    with pytest.raises(ConfigError):
        settings_from_args("")
    with pytest.raises(ConfigError):
        settings_from_args("a:1", command_config=str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="not understood"):
        to_kafka_python({"bootstrap.servers": "a:1", "fancy.thing": "1"})


def test_a_clusters_request_timeout_comes_from_its_table_or_the_environment_and_a_bad_one_is_named():
    from console.access.clusters import ENV_TIMEOUT, cluster_problems, from_environment, from_mapping

    tables = {"near": {"bootstrap_servers": "a:1", "timeout_s": 2}, "far": {"bootstrap_servers": "b:1"}}
    got = from_mapping(tables)
    assert got["near"].timeout_s == 2.0 and got["far"].timeout_s == 10.0
    for bad in ("soon", 0, 301, True, float("nan")):
        (problem,) = cluster_problems({"x": {"bootstrap_servers": "a:1", "timeout_s": bad}})
        assert problem.startswith("timeout_s in [clusters.x] in secrets.toml must be a number of seconds from 1 to 300")
        assert from_mapping({"x": {"bootstrap_servers": "a:1", "timeout_s": bad}}) == {}  # left out, not guessed
    env = {"CONSOLE_BOOTSTRAP_SERVERS": "c:1", "CONSOLE_TIMEOUT_S": "3.5"}
    assert from_environment(env)["cluster"].timeout_s == 3.5 and ENV_TIMEOUT.problem(env) is None
    env["CONSOLE_TIMEOUT_S"] = "ten"
    assert from_environment(env)["cluster"].timeout_s == 10.0
    assert "CONSOLE_TIMEOUT_S must be a number of seconds" in (ENV_TIMEOUT.problem(env) or "")


def test_a_clusters_throttle_ceiling_comes_from_its_table_or_the_environment_and_a_bad_one_is_named():
    """``max_throttle``: a rate as the pages take it (a number alone is bytes/s), 10 GB/s unless set;
    a bad one is named as ``timeout_s``'s is and the cluster left out (the environment's: the default)."""
    from console.access.clusters import ENV_MAX_THROTTLE, cluster_problems, from_environment, from_mapping
    from console.access.settings import settings_from_args
    from console.state.reader import ClusterReader

    tables = {
        "fast": {"bootstrap_servers": "a:1", "max_throttle": "40 GB/s"},
        "bare": {"bootstrap_servers": "b:1", "max_throttle": 2_000_000_000},
        "plain": {"bootstrap_servers": "c:1"},
    }
    got = from_mapping(tables)
    assert [got[n].max_throttle for n in tables] == [40 * 10**9, 2 * 10**9, 10 * 10**9]
    assert cluster_problems(tables) == []
    for bad in ("fast", "0 MB/s", "5 Gb/s", True, -1, float("nan"), ""):
        (problem,) = cluster_problems({"x": {"bootstrap_servers": "a:1", "max_throttle": bad}})
        assert problem.startswith('max_throttle in [clusters.x] in secrets.toml must be a rate above 0, e.g. "10 GB/s"')
        assert problem.endswith("The cluster is left out until then.")
        assert from_mapping({"x": {"bootstrap_servers": "a:1", "max_throttle": bad}}) == {}  # left out, not guessed
    env = {"CONSOLE_BOOTSTRAP_SERVERS": "c:1", "CONSOLE_MAX_THROTTLE": "1.5 GB/s"}
    assert from_environment(env)["cluster"].max_throttle == 1_500_000_000 and ENV_MAX_THROTTLE.problem(env) is None
    env["CONSOLE_MAX_THROTTLE"] = "lots"
    assert from_environment(env)["cluster"].max_throttle == 10 * 10**9
    assert "CONSOLE_MAX_THROTTLE must be a rate above 0" in (ENV_MAX_THROTTLE.problem(env) or "")
    assert "takes 10.0 GB/s until it is fixed" in (ENV_MAX_THROTTLE.problem(env) or "")
    # the write path's gateway carries the cluster's ceiling (the services read it there)
    with ClusterReader(settings_from_args("127.0.0.1:1", max_throttle=123_000)) as reader:
        assert reader.gateway().max_throttle == 123_000


def test_a_clusters_guardrails_table_tunes_or_turns_them_off_and_a_bad_one_is_named() -> None:
    from console.access.clusters import cluster_problems, from_mapping
    from console.moves.guardrails import GuardrailSettings

    good = {
        "bootstrap_servers": "k:9092",
        "guardrails": {"destination_gone": False, "auto_resume": True, "clear_for_s": 120, "overrun_polls": 3},
    }
    (settings,) = from_mapping({"prod": good}).values()
    assert settings.guardrails == GuardrailSettings(
        destination_gone=False, auto_resume=True, clear_for_s=120, overrun_polls=3
    )
    assert from_mapping({"plain": {"bootstrap_servers": "k:9092"}})["plain"].guardrails == GuardrailSettings()
    bad = {"bootstrap_servers": "k:9092", "guardrails": {"auto_resume": "yes", "min_isr": 2, "overrun_factor": 0.5}}
    assert from_mapping({"prod": bad}) == {}  # never run with guardrails other than the ones asked for
    assert cluster_problems({"prod": bad}) == [
        "[clusters.prod.guardrails] in secrets.toml: auto_resume must be true or false, not 'yes'. "
        "The cluster is left out until then.",
        "[clusters.prod.guardrails] in secrets.toml: min_isr is not a guardrail setting (known: at_min_isr, "
        "auto_resume, clear_for_s, cluster_unread, destination_gone, overrun_factor, overrun_polls, overrun_slack, "
        "throttle_changed, throttle_not_holding, under_min_isr, unread_grace_s). The cluster is left out until then.",
        "[clusters.prod.guardrails] in secrets.toml: overrun_factor must be a number from 1 to 100, not 0.5. "
        "The cluster is left out until then.",
    ]
