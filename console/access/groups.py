"""The identity provider's groups mapped to console roles, per cluster (``[access]`` in
``secrets.toml``), for people signed in through OIDC (Streamlit's ``st.login``) or a trusted
reverse proxy::

    [access]
    claim = "groups"                          # the ID token claim listing the person's groups

    [access.groups]
    kafka-admins = ["operator", "approver"]   # on every cluster

    [access.groups.kafka-ops]
    staging = ["operator", "approver"]
    production = ["viewer"]
    "*" = ["viewer"]

A person's roles on a cluster are the union over their groups of what each group's entry gives
that cluster (its own line, else its ``*`` line); everyone signed in is at least a viewer, so a
person in no mapped group is a viewer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from console.access.auth import ROLES, VIEWER
from console.access.roles import ClusterRoles, parse_cluster_roles
from console.core.errors import ConfigError

DEFAULT_CLAIM = "groups"
"""The claim that lists a person's groups, unless ``[access] claim`` says another."""
MAX_GROUPS = 1000
"""At most this many of one person's groups are looked at."""
MAX_NAME = 256
"""Group names are cut to this many characters."""


@dataclass(frozen=True)
class GroupRoles:
    """The identity provider's groups mapped to console roles, per cluster (``[access]``)."""

    claim: str = DEFAULT_CLAIM
    groups: Mapping[str, ClusterRoles] = field(default_factory=dict)

    def on(self, groups: Iterable[str], *cluster: str) -> frozenset[str]:
        """The roles of a member of ``groups`` on the cluster known by the names ``cluster``:
        viewer, and whatever each group's entry gives that cluster."""
        out = {VIEWER}
        for group in groups:
            entry = self.groups.get(group)
            if entry is not None:
                out |= entry.on(*cluster)
        return frozenset(out)

    def groups_in(self, claims: Mapping[str, object]) -> tuple[str, ...]:
        """The groups the claim lists (a list of names, or one string of names separated by commas
        or spaces), at most a thousand, each cut to 256 characters."""
        raw = claims.get(self.claim)
        if isinstance(raw, str):
            names: Iterable[object] = raw.replace(",", " ").split()
        elif isinstance(raw, Sequence):
            names = raw
        else:
            return ()
        out: list[str] = []
        for name in names:
            if len(out) == MAX_GROUPS:
                break
            if isinstance(name, str) and name.strip():
                out.append(name.strip()[:MAX_NAME])
        return tuple(out)


def group_roles(access: Mapping[str, object] | None) -> GroupRoles:
    """``[access]`` of ``secrets.toml`` as a :class:`GroupRoles` (no mapping: everyone a viewer);
    ConfigError naming what to fix."""
    if not access:
        return GroupRoles()
    claim = access.get("claim", DEFAULT_CLAIM)
    if not isinstance(claim, str) or not claim.strip():
        raise ConfigError(
            "[access] claim in secrets.toml is not a claim name.", 'For example claim = "groups" (the default).'
        )
    raw = access.get("groups", {})
    if not isinstance(raw, Mapping):
        raise ConfigError(
            "[access.groups] in secrets.toml is not a table.",
            'Write one line per group: kafka-admins = ["operator", "approver"], or a table per group by cluster.',
        )
    groups = {str(g): parse_cluster_roles(r, f"[access.groups] {g!r} in secrets.toml", ROLES) for g, r in raw.items()}
    return GroupRoles(claim.strip(), groups)
