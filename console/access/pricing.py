"""The price table and the impact's limits, as settings: ``[pricing]`` and ``[impact]`` in
secrets.toml (the pages) or in a TOML file given to the CLI (``--pricing FILE``), each overridable
per cluster (``[clusters.<name>.pricing]``, ``[clusters.<name>.impact]``)::

    [pricing]
    currency = "USD"
    per_gb_cross_zone = 0.02      # AWS: $0.01 billed on each side; about 0.01 on GCP and Azure

    [pricing.zones]               # where racks are not zones: rack -> zone (a rack not named is its zone)
    "rack-a" = "use1-az1"

    [impact]
    dir_fill_percent = 85         # a log dir peaking above this is a finding
    steady_growth_percent = 10    # steady cross-zone traffic growing more than this is a finding
    leader_factor = 2.0           # a broker leading more than this times the mean is a finding

No prices by default: without them the impact is bytes only, and says how to set them. A bad table
names the key and what to write; what it sets is left out until it is fixed."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from console.core.errors import ConfigError
from console.moves.impact import ImpactLimits, Pricing

_IMPACT_KEYS: dict[str, tuple[float, float]] = {
    "dir_fill_percent": (1.0, 100.0),
    "steady_growth_percent": (0.0, 10_000.0),
    "leader_factor": (1.0, 1_000.0),
}


def _number(value: object) -> float | None:
    return None if isinstance(value, bool) or not isinstance(value, int | float) else float(value)


def pricing_of(table: object, where: str) -> tuple[Pricing | None, list[str]]:
    """A ``[pricing]`` table as a :class:`Pricing` (None: no table, or one that cannot be used) and
    what is wrong with it."""
    if table is None:
        return None, []
    if not isinstance(table, Mapping):
        return None, [f'{where} is not a table: write currency = "USD" and per_gb_cross_zone = 0.02 under it.']
    problems = [
        f"{where}: {k} is not a pricing setting (known: currency, per_gb_cross_zone, zones)."
        for k in table
        if k not in ("currency", "per_gb_cross_zone", "zones")
    ]
    currency = table.get("currency")
    if not (isinstance(currency, str) and currency.strip()):
        problems.append(f'{where}: currency must be a currency code such as "USD", not {currency!r}.')
    price = _number(table.get("per_gb_cross_zone"))
    if price is None or not 0 <= price <= 1_000:
        problems.append(
            f"{where}: per_gb_cross_zone must be the price of a GB crossing zones, e.g. 0.02, "
            f"not {table.get('per_gb_cross_zone')!r}."
        )
    zones = table.get("zones", {})
    if not isinstance(zones, Mapping) or not all(isinstance(v, str) and v.strip() for v in zones.values()):
        problems.append(f'{where}: zones must be a table of rack = "zone" ([pricing.zones]).')
        zones = {}
    if problems:
        return None, [p + " Prices are left out until it is fixed." for p in problems]
    pairs = tuple(sorted((str(k), str(v).strip()) for k, v in zones.items()))
    return Pricing(str(currency).strip(), price, pairs), []


def limits_of(table: object, where: str) -> tuple[ImpactLimits, list[str]]:
    """An ``[impact]`` table as :class:`ImpactLimits` (the defaults for what it does not set or sets
    wrong) and what is wrong with it."""
    if table is None:
        return ImpactLimits(), []
    if not isinstance(table, Mapping):
        return ImpactLimits(), [f"{where} is not a table: write dir_fill_percent = 85 under it."]
    problems: list[str] = []
    given: dict[str, float] = {}
    for key, value in table.items():
        if key not in _IMPACT_KEYS:
            problems.append(f"{where}: {key} is not an impact setting (known: {', '.join(_IMPACT_KEYS)}).")
            continue
        low, high = _IMPACT_KEYS[key]
        number = _number(value)
        if number is None or not low <= number <= high:
            problems.append(f"{where}: {key} must be a number from {low:g} to {high:g}, not {value!r}.")
        else:
            given[key] = number
    default = ImpactLimits()
    return (
        ImpactLimits(
            dir_fill=given.get("dir_fill_percent", default.dir_fill * 100) / 100,
            steady_growth=given.get("steady_growth_percent", default.steady_growth * 100) / 100,
            leader_factor=given.get("leader_factor", default.leader_factor),
        ),
        problems,
    )


def _merged(settings: Mapping[str, Any], cluster: str | None, key: str) -> tuple[object, str]:
    """The top-level table ``key`` with the cluster's own (``[clusters.<name>.<key>]``) over it."""
    top = settings.get(key)
    clusters = settings.get("clusters")
    cfg = clusters.get(cluster) if cluster and isinstance(clusters, Mapping) else None
    own = cfg.get(key) if isinstance(cfg, Mapping) else None
    if own is None:
        return top, f"[{key}]"
    if not isinstance(top, Mapping) or not isinstance(own, Mapping):
        return own, f"[clusters.{cluster}.{key}]"
    return {**top, **own}, f"[{key}] with [clusters.{cluster}.{key}]"


def impact_settings(
    settings: Mapping[str, Any], cluster: str | None = None, source: str = "secrets.toml"
) -> tuple[Pricing | None, ImpactLimits, list[str]]:
    """The cluster's prices and limits from settings read as TOML (secrets.toml, a ``--pricing``
    file), and what is wrong with them (each naming the table, the key and what to write)."""
    table, where = _merged(settings, cluster, "pricing")
    pricing, problems = pricing_of(table, f"{where} in {source}")
    limits_table, where = _merged(settings, cluster, "impact")
    limits, more = limits_of(limits_table, f"{where} in {source}")
    return pricing, limits, problems + more


def read_pricing_file(path: str, cluster: str | None = None) -> tuple[Pricing | None, ImpactLimits, list[str]]:
    """A TOML file's ``[pricing]`` and ``[impact]`` (secrets.toml itself will do): :class:`ConfigError`
    when it cannot be read or is not TOML."""
    try:
        settings = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(
            f"Cannot read the pricing file {path}: {e}.", "Give a TOML file with a [pricing] table."
        ) from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"The pricing file {path} is not TOML: {e}.", "Fix it (see docs/GUIDE.md, Prices).") from e
    return impact_settings(settings, cluster, path)
