"""Roles per cluster: what a person may do on each cluster the console knows.

A cluster is named as ``[clusters.<name>]`` names it in ``secrets.toml`` (or
``CONSOLE_CLUSTER_NAME``, or ``sandbox``), or by its Kafka cluster id; ``*`` stands for every
cluster not named. Roles are given as a list (on every cluster) or as a table by cluster::

    ["operator"]
    {"staging": ["operator", "approver"], "production": ["viewer"], "*": ["viewer"]}

The users file gives them per user (``console.access.auth``); the identity provider's groups
per group (``console.access.groups``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from console.core.errors import ConfigError

EVERY_CLUSTER = "*"
"""The cluster name that stands for every cluster not named."""
_MAX_NAME = 256


@dataclass(frozen=True)
class ClusterRoles:
    """Roles by cluster: on the clusters named, and ``everywhere`` else."""

    everywhere: frozenset[str] = frozenset()
    named: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def on(self, *cluster: str) -> frozenset[str]:
        """The roles on the cluster known by the names ``cluster`` (its configured name, its Kafka
        cluster id): the first one named here, else the roles on every cluster."""
        for name in cluster:
            if name in self.named:
                return self.named[name]
        return self.everywhere

    @property
    def per_cluster(self) -> bool:
        """Whether any cluster is named (else the roles are the same everywhere)."""
        return bool(self.named)


def parse_cluster_roles(raw: object, where: str, known: Sequence[str]) -> ClusterRoles:
    """A list of roles (on every cluster) or a table ``{cluster: [roles], "*": [roles]}``, each
    role one of ``known``; ConfigError naming ``where`` for anything else."""
    if isinstance(raw, Mapping):
        named = {str(c)[:_MAX_NAME]: _roles(r, f"{where}, cluster {c!r}", known) for c, r in raw.items()}
        everywhere = named.pop(EVERY_CLUSTER, frozenset())
        return ClusterRoles(everywhere, named)
    return ClusterRoles(_roles(raw, where, known))


def _roles(raw: object, where: str, known: Sequence[str]) -> frozenset[str]:
    if isinstance(raw, str) or not isinstance(raw, Sequence):
        raise ConfigError(
            f'{where}: roles must be a list such as ["operator"], not {type(raw).__name__}.',
            f'Roles are {", ".join(known)}; per cluster, a table such as {{"staging": ["operator"], "*": ["viewer"]}}.',
        )
    bad = sorted({str(r) for r in raw} - set(known))
    if bad:
        raise ConfigError(f"{where} gives unknown roles {bad}.", f"Roles are {', '.join(known)}.")
    return frozenset(str(r) for r in raw)
