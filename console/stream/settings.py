"""The audit stream's settings: ``[audit_stream]`` in secrets.toml (or the CLI's flags).

```
[audit_stream]
file = "/var/log/kafka-console/audit.jsonl"   # a JSON-lines file, appended to
topic = "kafka-console-audit"                 # a Kafka topic ...
cluster = "production"                        # ... on this configured cluster, with its security settings
```

Off by default: no table, no stream.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from console.access.settings import ConnectionSettings
from console.stream.sinks import FileSink, KafkaSink, Sink

WHERE = "[audit_stream] in secrets.toml"


@dataclass(frozen=True)
class StreamSettings:
    file: str | None = None
    topic: str | None = None
    cluster: str | None = None
    """The configured cluster whose connection and security settings the producer uses."""

    @property
    def on(self) -> bool:
        return bool(self.file or self.topic)


def from_mapping(raw: Mapping[str, Any] | None) -> tuple[StreamSettings, list[str]]:
    """The settings and what is wrong with them (each naming what to write)."""
    if not raw:
        return StreamSettings(), []
    if not isinstance(raw, Mapping):
        return StreamSettings(), [f'{WHERE} is not a table: write file = "path" and/or topic and cluster under it.']
    problems: list[str] = []
    values: dict[str, str | None] = {}
    for k in ("file", "topic", "cluster"):
        v = raw.get(k)
        if v is not None and not (isinstance(v, str) and v.strip()):
            problems.append(f"{WHERE}: {k} must be a non-empty string.")
            v = None
        values[k] = v.strip() if isinstance(v, str) else None
    unknown = sorted(set(raw) - {"file", "topic", "cluster"})
    if unknown:
        problems.append(f"{WHERE}: unknown keys {', '.join(unknown)} (known: file, topic, cluster).")
    if values["topic"] and not values["cluster"]:
        problems.append(f"{WHERE}: topic needs cluster = the name of a [clusters.<name>] table to produce to.")
    return StreamSettings(values["file"], values["topic"], values["cluster"]), problems


def sinks_of(settings: StreamSettings, clusters: Mapping[str, ConnectionSettings]) -> tuple[list[Sink], list[str]]:
    """The sinks ``settings`` asks for, and what keeps one from being made."""
    sinks: list[Sink] = []
    problems: list[str] = []
    if settings.file:
        sinks.append(FileSink(settings.file))
    if settings.topic and settings.cluster:
        conn = clusters.get(settings.cluster)
        if conn is None:
            problems.append(
                f"{WHERE}: cluster {settings.cluster!r} is not a known cluster "
                f"(known: {', '.join(sorted(clusters)) or 'none'}); the topic gets nothing until then."
            )
        else:
            sinks.append(KafkaSink(conn, settings.topic))
    return sinks, problems
