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
    from console.access.clusters import cluster_problems, env_timeout_problem, from_environment, from_mapping

    tables = {"near": {"bootstrap_servers": "a:1", "timeout_s": 2}, "far": {"bootstrap_servers": "b:1"}}
    got = from_mapping(tables)
    assert got["near"].timeout_s == 2.0 and got["far"].timeout_s == 10.0
    for bad in ("soon", 0, 301, True, float("nan")):
        (problem,) = cluster_problems({"x": {"bootstrap_servers": "a:1", "timeout_s": bad}})
        assert problem.startswith("timeout_s in [clusters.x] in secrets.toml must be a number of seconds from 1 to 300")
        assert from_mapping({"x": {"bootstrap_servers": "a:1", "timeout_s": bad}}) == {}  # left out, not guessed
    env = {"CONSOLE_BOOTSTRAP_SERVERS": "c:1", "CONSOLE_TIMEOUT_S": "3.5"}
    assert from_environment(env)["cluster"].timeout_s == 3.5 and env_timeout_problem(env) is None
    env["CONSOLE_TIMEOUT_S"] = "ten"
    assert from_environment(env)["cluster"].timeout_s == 10.0
    assert "CONSOLE_TIMEOUT_S must be a number of seconds" in (env_timeout_problem(env) or "")
