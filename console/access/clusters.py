"""Which clusters the console knows: configured ones, the environment, and a running sandbox."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from console.access.guardrail_settings import guardrail_problems, guardrail_settings
from console.access.settings import ConnectionSettings
from console.core.format import human_rate, parse_rate
from console.core.limits import MAX_THROTTLE

SANDBOX = "sandbox"

T = TypeVar("T")


def from_mapping(clusters: Mapping[str, Mapping[str, Any]]) -> dict[str, ConnectionSettings]:
    """``[clusters.<name>]`` tables: ``bootstrap_servers``, optional ``zookeeper``, ``timeout_s``
    (how long a request may go unanswered), ``sizes_every_s`` (how often every partition's sizes and
    every topic's configs are read in full) and ``max_throttle`` (the highest throttle its broker
    links carry, e.g. ``"10 GB/s"``), and any librdkafka properties under ``properties``."""
    out: dict[str, ConnectionSettings] = {}
    for name, cfg in clusters.items():
        if cluster_problems({name: cfg}):
            continue  # named on the page by cluster_problems; never connected to half-configured
        bs = str(cfg.get("bootstrap_servers", "")).strip()
        props = {str(k): str(v) for k, v in dict(cfg.get("properties", {})).items()}
        props["bootstrap.servers"] = bs
        zk = cfg.get("zookeeper") or None
        timeout_s = float(cfg.get("timeout_s", DEFAULT_TIMEOUT_S))
        sizes_every_s = float(cfg.get("sizes_every_s", DEFAULT_SIZES_EVERY_S))
        ceiling = parse_rate(cfg["max_throttle"]) if "max_throttle" in cfg else MAX_THROTTLE
        out[name] = ConnectionSettings(
            props,
            zookeeper=str(zk) if zk else None,
            name=name,
            timeout_s=timeout_s,
            sizes_every_s=sizes_every_s,
            max_throttle=ceiling,
            guardrails=guardrail_settings(cfg.get("guardrails")),
        )
    return out


DEFAULT_TIMEOUT_S = 10.0
TIMEOUT_RANGE_S = (1.0, 300.0)
"""How long a request to a cluster may go unanswered before the console says so (``timeout_s``,
``CONSOLE_TIMEOUT_S``): from a second (an on-call page that must say "not answering" fast) to
five minutes (a cluster far away)."""


DEFAULT_SIZES_EVERY_S = 60.0
SIZES_EVERY_RANGE_S = (0.0, 3600.0)
"""How often every partition's sizes (DescribeLogDirs) and every topic's configs are read in full
(``sizes_every_s``, ``CONSOLE_SIZES_EVERY_S``): from every snapshot (0) to once an hour; in between
only those of the partitions in flight are read, the rest carried over."""


def timeout_problem(value: object, where: str) -> str | None:
    """What is wrong with a request timeout given as ``value`` (None: nothing)."""
    return _seconds_problem(value, where, TIMEOUT_RANGE_S)


def sizes_every_problem(value: object, where: str) -> str | None:
    """What is wrong with how often sizes and topic configs are read in full, given as ``value``
    (None: nothing)."""
    return _seconds_problem(value, where, SIZES_EVERY_RANGE_S)


def _seconds_problem(value: object, where: str, within: tuple[float, float]) -> str | None:
    """What is wrong with a number of seconds given as ``value`` that must be ``within`` a range (None: nothing)."""
    low, high = within
    try:
        seconds = float(str(value))
    except ValueError:
        seconds = float("nan")
    if isinstance(value, bool) or not low <= seconds <= high:  # NaN fails both comparisons
        return f"{where} must be a number of seconds from {low:g} to {high:g}, not {value!r}."
    return None


def max_throttle_problem(value: object, where: str) -> str | None:
    """What is wrong with a throttle ceiling given as ``value`` (None: nothing): a rate as the
    pages and the CLI take it (``"10 GB/s"``; a number alone is bytes/s), above 0."""
    try:
        ceiling = -1 if isinstance(value, bool) else parse_rate(value if isinstance(value, int | float) else str(value))
    except ValueError:
        ceiling = -1
    if ceiling <= 0:
        return f'{where} must be a rate above 0, e.g. "10 GB/s" (a number alone is bytes/s), not {value!r}.'
    return None


def cluster_problems(clusters: Mapping[str, Any]) -> list[str]:
    """What is wrong with ``[clusters.<name>]`` tables, each naming the table and what to write."""
    from console.access.settings import to_kafka_python
    from console.core.errors import ConfigError

    out: list[str] = []
    for name, cfg in clusters.items():
        where = f"[clusters.{name}] in secrets.toml"
        if not isinstance(cfg, Mapping):
            out.append(f'{where} is not a table: write bootstrap_servers = "host:port" under it.')
            continue
        if not str(cfg.get("bootstrap_servers", "")).strip():
            out.append(
                f'{where} has no bootstrap_servers: add bootstrap_servers = "host:port,..."; '
                "the cluster is left out until then."
            )
        if "timeout_s" in cfg and (problem := timeout_problem(cfg["timeout_s"], f"timeout_s in {where}")):
            out.append(problem + " The cluster is left out until then.")
            continue
        if "sizes_every_s" in cfg and (
            problem := sizes_every_problem(cfg["sizes_every_s"], f"sizes_every_s in {where}")
        ):
            out.append(problem + " The cluster is left out until then.")
            continue
        if "max_throttle" in cfg and (problem := max_throttle_problem(cfg["max_throttle"], f"max_throttle in {where}")):
            out.append(problem + " The cluster is left out until then.")
            continue
        if problems := guardrail_problems(cfg.get("guardrails"), f"[clusters.{name}.guardrails] in secrets.toml"):
            out += [p + " The cluster is left out until then." for p in problems]
            continue
        props = cfg.get("properties", {})
        if not isinstance(props, Mapping):
            out.append(f"{where}: properties must be a table ([clusters.{name}.properties]) of librdkafka settings.")
            continue
        try:
            to_kafka_python({str(k): str(v) for k, v in props.items()})
        except ConfigError as e:
            out.append(f"{where}: {e.message} {e.hint}")
    return out


def from_environment(env: Mapping[str, str] | None = None) -> dict[str, ConnectionSettings]:
    env = os.environ if env is None else env
    bs = env.get("CONSOLE_BOOTSTRAP_SERVERS", "").strip()
    if not bs:
        return {}
    name = env.get("CONSOLE_CLUSTER_NAME", "cluster")
    return {
        name: ConnectionSettings(
            {"bootstrap.servers": bs},
            zookeeper=env.get("CONSOLE_ZOOKEEPER") or None,
            name=name,
            timeout_s=ENV_TIMEOUT.value(env),
            sizes_every_s=ENV_SIZES_EVERY.value(env),
            max_throttle=ENV_MAX_THROTTLE.value(env),
        )
    }


@dataclass(frozen=True)
class EnvSetting(Generic[T]):
    """One setting of the environment's cluster (``CONSOLE_…``): read with ``parse`` when set and
    ``check`` finds nothing wrong, else ``default``; the sidebar names a bad value with what the
    console does ``meanwhile``."""

    name: str
    parse: Callable[[str], T]
    check: Callable[[object, str], str | None]
    default: T
    meanwhile: str

    def value(self, env: Mapping[str, str] | None = None) -> T:
        """The setting when set and usable, else the default."""
        got = self._given(env)
        return self.parse(got) if got and self.problem(env) is None else self.default

    def problem(self, env: Mapping[str, str] | None = None) -> str | None:
        """What ``check`` finds wrong with the setting, then what the console does meanwhile (None:
        unset or usable)."""
        got = self._given(env)
        problem = self.check(got, self.name) if got else None
        return None if problem is None else f"{problem} {self.meanwhile}"

    def _given(self, env: Mapping[str, str] | None) -> str:
        return (os.environ if env is None else env).get(self.name, "").strip()


ENV_TIMEOUT = EnvSetting(
    "CONSOLE_TIMEOUT_S",
    float,
    timeout_problem,
    DEFAULT_TIMEOUT_S,
    f"The console waits {DEFAULT_TIMEOUT_S:g} s until it is fixed.",
)
ENV_SIZES_EVERY = EnvSetting(
    "CONSOLE_SIZES_EVERY_S",
    float,
    sizes_every_problem,
    DEFAULT_SIZES_EVERY_S,
    f"The console reads every size and topic config every {DEFAULT_SIZES_EVERY_S:g} s until it is fixed.",
)
ENV_MAX_THROTTLE = EnvSetting(
    "CONSOLE_MAX_THROTTLE",
    parse_rate,
    max_throttle_problem,
    MAX_THROTTLE,
    f"The console takes {human_rate(MAX_THROTTLE)} until it is fixed.",
)


def from_sandbox(data_dir: Path | None = None) -> dict[str, ConnectionSettings]:
    from console.sandbox.cluster import status

    sb = status(data_dir)
    if sb is None:
        return {}
    return {
        SANDBOX: ConnectionSettings({"bootstrap.servers": sb.bootstrap_servers}, zookeeper=sb.zookeeper, name=SANDBOX)
    }


def discover(configured: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, ConnectionSettings]:
    """Environment first, then configured clusters, then the local sandbox if one runs."""
    out = from_environment()
    out.update(from_mapping(configured or {}))
    for k, v in from_sandbox().items():
        out.setdefault(k, v)
    return out
