"""Connection settings: librdkafka-style properties, as operators already write them.

One ``ConnectionSettings`` configures both clients: confluent-kafka takes the properties as-is,
kafka-python gets them translated by ``to_kafka_python``. ``load_command_config`` reads the
properties file the official Kafka tools take with ``--command-config`` (Java names such as
``sasl.jaas.config`` and ``ssl.truststore.location`` are mapped to their librdkafka forms).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from console.core.errors import ConfigError
from console.core.limits import MAX_THROTTLE
from console.moves.guardrails import GuardrailSettings

# librdkafka property -> kafka-python keyword
_TO_KAFKA_PYTHON: dict[str, str] = {
    "bootstrap.servers": "bootstrap_servers",
    "client.id": "client_id",
    "security.protocol": "security_protocol",
    "sasl.mechanism": "sasl_mechanism",
    "sasl.mechanisms": "sasl_mechanism",
    "sasl.username": "sasl_plain_username",
    "sasl.password": "sasl_plain_password",
    "sasl.kerberos.service.name": "sasl_kerberos_service_name",
    "ssl.ca.location": "ssl_cafile",
    "ssl.certificate.location": "ssl_certfile",
    "ssl.key.location": "ssl_keyfile",
    "ssl.key.password": "ssl_password",
    "ssl.crl.location": "ssl_crlfile",
    "request.timeout.ms": "request_timeout_ms",
}
# Java client property -> librdkafka property (for --command-config files of the official tools)
_JAVA_TO_RDKAFKA: dict[str, str] = {
    "ssl.truststore.location": "ssl.ca.location",
    "ssl.keystore.location": "ssl.keystore.location",
    "ssl.keystore.password": "ssl.keystore.password",
}
_IGNORED_JAVA = {"ssl.truststore.type", "ssl.keystore.type", "ssl.truststore.password", "sasl.jaas.config"}
_JAAS = re.compile(r'(username|password)\s*=\s*"((?:[^"\\]|\\.)*)"')


class Properties(Mapping[str, str]):
    """Connection properties that cannot change and hash by their content, so settings can key a cache."""

    __slots__ = ("_items", "_map")

    def __init__(self, properties: Mapping[str, str] | None = None) -> None:
        self._map = dict(properties or {})
        self._items = tuple(sorted(self._map.items()))

    def __getitem__(self, key: str) -> str:
        return self._map[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._map)

    def __len__(self) -> int:
        return len(self._map)

    def __hash__(self) -> int:
        return hash(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Properties):
            return self._items == other._items
        return isinstance(other, Mapping) and self._map == dict(other.items())

    def __repr__(self) -> str:
        return f"Properties({self._map!r})"

    def __reduce__(self) -> tuple[type[Properties], tuple[dict[str, str]]]:
        return Properties, (dict(self._items),)


@dataclass(frozen=True)
class ConnectionSettings:
    """How to reach one cluster: Kafka properties and, optionally, a ZooKeeper connect string.

    Immutable and hashable (the properties are kept as :class:`Properties`), so one cluster's
    settings can key a cache directly."""

    properties: Mapping[str, str]
    zookeeper: str | None = None
    name: str = ""
    timeout_s: float = 10.0
    zookeeper_timeout_s: float = 5.0
    sizes_every_s: float = 60.0
    """How often every partition's sizes (DescribeLogDirs) and every topic's configs are read in
    full (0: at every snapshot); in between, only those of the partitions in flight, the rest
    carried over (:mod:`console.state.cadence`)."""
    max_throttle: int = MAX_THROTTLE
    """The highest throttle (bytes/s) the cluster's broker links carry: above it, a run or a throttle
    change is effectively unthrottled and sent only when the operator says so."""
    guardrails: GuardrailSettings = field(default_factory=GuardrailSettings)
    """How the guardrails of its runs are set (``[clusters.<name>.guardrails]``)."""

    def __post_init__(self) -> None:
        if not isinstance(self.properties, Properties):
            object.__setattr__(self, "properties", Properties(self.properties))

    @property
    def bootstrap_servers(self) -> str:
        return self.properties.get("bootstrap.servers", "")

    def to_confluent(self) -> dict[str, str]:
        return dict(self.properties)

    def to_kafka_python(self) -> dict[str, Any]:
        return to_kafka_python(self.properties)


def to_kafka_python(props: Mapping[str, str]) -> dict[str, Any]:
    """Translate librdkafka properties to kafka-python keywords; unknown keys are an error."""
    out: dict[str, Any] = {}
    unknown = []
    for k, v in props.items():
        if k in _TO_KAFKA_PYTHON:
            key = _TO_KAFKA_PYTHON[k]
            if key == "bootstrap_servers":
                out[key] = [s.strip() for s in v.split(",") if s.strip()]
            elif key == "request_timeout_ms":
                out[key] = int(v)
            elif key == "security_protocol" or key == "sasl_mechanism":
                out[key] = v.upper()
            else:
                out[key] = v
        elif k == "ssl.endpoint.identification.algorithm":
            out["ssl_check_hostname"] = v.lower() == "https"
        elif k in ("enable.ssl.certificate.verification",):
            if v.lower() == "false":
                out["ssl_check_hostname"] = False
        elif k.startswith(("socket.", "metadata.", "log_level", "debug", "api.version")):
            continue  # librdkafka tuning with no kafka-python counterpart
        else:
            unknown.append(k)
    if unknown:
        raise ConfigError(
            f"Connection properties not understood for the Admin API client: {', '.join(sorted(unknown))}.",
            "Use librdkafka names (security.protocol, sasl.mechanism, sasl.username, sasl.password, "
            "ssl.ca.location, ssl.certificate.location, ssl.key.location).",
        )
    return out


def parse_properties(text: str) -> dict[str, str]:
    """Java ``.properties`` syntax: ``k=v`` or ``k: v``, ``#``/``!`` comments, ``\\`` continuations."""
    out: dict[str, str] = {}
    logical: list[str] = []
    buf = ""
    for raw in text.splitlines():
        line = raw.strip() if not buf else raw.lstrip()
        if not buf and (not line or line[0] in "#!"):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            buf += line[:-1]
            continue
        logical.append(buf + line)
        buf = ""
    if buf:
        logical.append(buf)
    for line in logical:
        m = re.match(r"^((?:[^=:\s\\]|\\.)+)\s*[=:\s]\s*(.*)$", line)
        if m:
            out[m.group(1).replace("\\", "")] = m.group(2).strip()
        else:
            out[line.strip()] = ""
    return out


def load_command_config(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read a ``--command-config`` properties file into librdkafka properties."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(
            f"Cannot read the command-config file {p}: {e.strerror or e}.",
            "Give the path of a readable properties file.",
        ) from None
    java = parse_properties(text)
    out: dict[str, str] = {}
    for k, v in java.items():
        if k == "sasl.jaas.config":
            creds = dict(_JAAS.findall(v))
            if "username" in creds:
                out["sasl.username"] = creds["username"]
            if "password" in creds:
                out["sasl.password"] = creds["password"]
        elif k in _JAVA_TO_RDKAFKA:
            out[_JAVA_TO_RDKAFKA[k]] = v
        elif k in _IGNORED_JAVA:
            continue
        else:
            out[k] = v
    return out


def settings_from_args(
    bootstrap_server: str,
    zookeeper: str | None = None,
    command_config: str | None = None,
    name: str = "",
    timeout_s: float = 10.0,
    max_throttle: int = MAX_THROTTLE,
) -> ConnectionSettings:
    if not bootstrap_server or not bootstrap_server.strip():
        raise ConfigError("No bootstrap server given.", "Pass --bootstrap-server host:port.")
    props = load_command_config(command_config) if command_config else {}
    props["bootstrap.servers"] = bootstrap_server.strip()
    to_kafka_python(props)  # fail early on properties the second client cannot take
    name = name or props["bootstrap.servers"].split(",")[0]
    return ConnectionSettings(
        properties=props, zookeeper=zookeeper or None, name=name, timeout_s=timeout_s, max_throttle=max_throttle
    )
