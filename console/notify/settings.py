"""Where notifications go: a TOML file (``CONSOLE_NOTIFY_FILE``, by default ``notify.toml`` in the
data dir) read by the server and by ``python -m console executor`` alike. ::

    public_url = "https://console.example.com"   # links to a run's page (or CONSOLE_PUBLIC_URL)
    retries = 5                                   # attempts after the first, per message
    backoff_s = 2.0                               # the first wait; doubled each time, at most 300 s

    [[clusters.prod.destinations]]                # a cluster's configured name, or its id; "*": every cluster
    url = "slack://T000/B000/XXXX"                # any Apprise URL
    events = ["run-stuck", "run-failed", "throttle-left"]   # omitted: every event but wave-done

A file that cannot be read, a destination without a URL, an event name not known: each is said
in :attr:`NotifySettings.problems` and left out; nothing else is affected."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from console.core.paths import console_data_dir
from console.notify.events import DEFAULT_EVENTS, Event

ANY_CLUSTER = "*"
MAX_BACKOFF_S = 300.0


@dataclass(frozen=True)
class Destination:
    """One Apprise URL and the events it wants."""

    url: str
    events: frozenset[Event] = DEFAULT_EVENTS

    @property
    def shown(self) -> str:
        """The URL with its secrets hidden, for the store, the audit log and the pages."""
        return redact(self.url)


@dataclass(frozen=True)
class NotifySettings:
    public_url: str | None = None
    destinations: Mapping[str, tuple[Destination, ...]] = field(default_factory=dict)
    """Per cluster (a name, an id or ``*``)."""
    retries: int = 5
    backoff_s: float = 2.0
    problems: tuple[str, ...] = ()

    def for_cluster(self, *names: str) -> list[Destination]:
        """The destinations of a cluster known by any of ``names`` (its id, its name), and of ``*``."""
        out: list[Destination] = []
        for key in dict.fromkeys((*names, ANY_CLUSTER)):
            for d in self.destinations.get(key, ()):
                if d not in out:
                    out.append(d)
        return out


def notify_file() -> Path:
    return Path(os.environ.get("CONSOLE_NOTIFY_FILE") or console_data_dir() / "notify.toml")


def load(path: Path | None = None, env: Mapping[str, str] | None = None) -> NotifySettings:
    """The settings from ``path`` (default :func:`notify_file`); none configured when it is absent."""
    env = os.environ if env is None else env
    path = notify_file() if path is None else path
    raw: dict[str, Any] = {}
    problems: list[str] = []
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        problems.append(f"{path}: cannot be read ({e}); no notification is sent until it is fixed.")
    settings = parse(raw, str(path))
    public = (env.get("CONSOLE_PUBLIC_URL") or "").strip() or settings.public_url
    return NotifySettings(
        public, settings.destinations, settings.retries, settings.backoff_s, (*problems, *settings.problems)
    )


def parse(raw: Mapping[str, Any], where: str = "notify.toml") -> NotifySettings:
    problems: list[str] = []
    public = raw.get("public_url")
    if public is not None and not (isinstance(public, str) and public.startswith(("http://", "https://"))):
        problems.append(f"{where}: public_url must be an http(s) URL; links are left out.")
        public = None
    retries = _number(raw, "retries", 5, 0, 20, where, problems)
    backoff = _number(raw, "backoff_s", 2.0, 0.01, MAX_BACKOFF_S, where, problems)
    destinations: dict[str, tuple[Destination, ...]] = {}
    clusters = raw.get("clusters", {})
    if not isinstance(clusters, Mapping):
        problems.append(f"{where}: clusters must be a table of [clusters.<name>] tables.")
        clusters = {}
    for name, table in clusters.items():
        listed = table.get("destinations", []) if isinstance(table, Mapping) else None
        if not isinstance(listed, list):
            problems.append(f"{where}: [clusters.{name}] needs [[clusters.{name}.destinations]] entries.")
            continue
        found = [
            d
            for i, t in enumerate(listed)
            if (d := _destination(t, f"{where}: clusters.{name}.destinations[{i}]", problems))
        ]
        destinations[str(name)] = tuple(found)
    return NotifySettings(public, destinations, int(retries), float(backoff), tuple(problems))


def _destination(table: object, where: str, problems: list[str]) -> Destination | None:
    if not isinstance(table, Mapping) or not isinstance(table.get("url"), str) or not table["url"].strip():
        problems.append(f'{where} has no url: write url = "<an Apprise URL>"; it is left out.')
        return None
    events = table.get("events")
    if events is None:
        return Destination(table["url"].strip())
    known = {e.value for e in Event}
    names = [str(e) for e in events] if isinstance(events, list) else []
    unknown = [n for n in names if n not in known]
    if not isinstance(events, list) or unknown:
        problems.append(
            f"{where}: events not known: {', '.join(unknown) or repr(events)} (known: {', '.join(sorted(known))}); "
            "the destination is left out."
        )
        return None
    return Destination(table["url"].strip(), frozenset(Event(n) for n in names))


def _number(
    raw: Mapping[str, Any], key: str, default: float, low: float, high: float, where: str, problems: list[str]
) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        problems.append(f"{where}: {key} must be a number from {low:g} to {high:g}; {default:g} is used.")
        return default
    return float(value)


def redact(url: str) -> str:
    """An Apprise URL without its secrets: its scheme and host (``slack://…``, ``json://127.0.0.1:9000/…``)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return "(not a URL)"
    host = rest.split("/", 1)[0].rsplit("@", 1)[-1]
    if scheme.rstrip("s") in ("json", "xml", "form", "http", "ntfy", "apprise") and host:
        return f"{scheme}://{host}/…"
    return f"{scheme}://…"
