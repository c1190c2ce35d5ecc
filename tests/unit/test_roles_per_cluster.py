"""Roles per cluster: the users file (a list on every cluster, or a table by cluster name), the
identity provider's groups mapped per cluster, and the services' check that an identity looked
up for one cluster is only a viewer on any other."""

from __future__ import annotations

import json

import pytest

from console.access.auth import APPROVER, OPERATOR, ROLES, VIEWER, Identity, load_users
from console.access.groups import MAX_GROUPS, group_roles
from console.access.proxy import proxy_settings
from console.access.roles import ClusterRoles, parse_cluster_roles
from console.core.errors import ConfigError, NotPermitted
from console.services import signins
from console.services.guard import require
from console.storage.store import Store

ACCESS = {
    "claim": "groups",
    "groups": {
        "kafka-admins": ["operator", "approver"],
        "kafka-ops": {"staging": ["operator"], "production": ["viewer"], "*": ["viewer"]},
        "auditors": {"production": ["approver"]},
    },
}


def test_a_list_of_roles_holds_on_every_cluster_and_a_table_per_cluster():
    assert parse_cluster_roles(["operator"], "here", ROLES).on("staging", "id-1") == {OPERATOR}
    by_cluster = parse_cluster_roles({"staging": ["operator"], "*": ["viewer"]}, "here", ROLES)
    assert by_cluster.on("staging") == {OPERATOR}
    assert by_cluster.on("production") == {VIEWER}
    assert by_cluster.on("other-name", "staging") == {OPERATOR}  # known by its id, say
    assert ClusterRoles(named={"staging": frozenset({OPERATOR})}).on("production") == frozenset()


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (["root"], "unknown roles ['root']"),
        ({"staging": ["admin"]}, "cluster 'staging' gives unknown roles ['admin']"),
        ("operator", "roles must be a list"),
        ({"staging": "operator"}, "roles must be a list"),
        (7, "roles must be a list"),
    ],
)
def test_bad_roles_are_named_with_where_they_are(raw, said):
    with pytest.raises(ConfigError, match="the users file: ann") as e:
        parse_cluster_roles(raw, "the users file: ann", ROLES)
    assert said in e.value.message


def test_groups_map_to_roles_per_cluster_with_a_default_per_group():
    groups = group_roles(ACCESS)
    assert groups.on(["kafka-ops"], "staging") == {VIEWER, OPERATOR}
    assert groups.on(["kafka-ops"], "production") == {VIEWER}
    assert groups.on(["kafka-ops"], "sandbox") == {VIEWER}  # its "*"
    assert groups.on(["kafka-ops", "auditors"], "production") == {VIEWER, APPROVER}
    assert groups.on(["auditors"], "staging") == {VIEWER}  # no "*": nothing beyond viewer
    assert groups.on(["kafka-admins"], "anything") == {VIEWER, OPERATOR, APPROVER}
    assert groups.on(["nobody-maps-this"], "staging") == {VIEWER}
    assert groups.on([], "staging") == {VIEWER}


def test_the_groups_claim_is_read_as_a_list_or_a_string_and_bounded():
    groups = group_roles({"claim": "roles", "groups": {}})
    assert groups.groups_in({"roles": ["a", " b ", "", 7, None]}) == ("a", "b")
    assert groups.groups_in({"roles": "a, b c"}) == ("a", "b", "c")
    assert groups.groups_in({"groups": ["a"]}) == ()  # another claim
    assert groups.groups_in({"roles": {"a": 1}}) == ()
    many = groups.groups_in({"roles": [f"g{i}" * 100 for i in range(5000)]})
    assert len(many) == MAX_GROUPS and max(map(len, many)) == 256
    assert group_roles(None).on(["kafka-ops"], "staging") == {VIEWER}


@pytest.mark.parametrize(
    ("access", "said"),
    [
        ({"claim": ""}, "is not a claim name"),
        ({"groups": ["ops"]}, "[access.groups] in secrets.toml is not a table"),
        ({"groups": {"ops": ["superuser"]}}, "[access.groups] 'ops' in secrets.toml gives unknown roles"),
    ],
)
def test_a_bad_mapping_says_what_to_fix(access, said):
    with pytest.raises(ConfigError) as e:
        group_roles(access)
    assert said in e.value.message


def test_an_identity_looked_up_for_one_cluster_is_a_viewer_on_every_other():
    alice = Identity("alice", source="oidc").on(frozenset({VIEWER, OPERATOR}), "staging", "id-staging")
    assert alice.can("submit") and alice.can("submit", "staging") and alice.can("submit", "id-staging")
    assert not alice.can("submit", "id-production") and not alice.can("save plans", "production")
    assert alice.roles_on("id-production") == {VIEWER}
    assert alice.why_not("submit", "id-production") == (
        "alice may not submit on id-production: it needs the operator role (roles on id-production: viewer)."
    )
    cli = Identity.cli("ops")
    assert cli.clusters is None and all(cli.can(a, "any-cluster") for a in ("submit", "approve", "cancel"))
    assert Identity("ann", frozenset({OPERATOR})).can("submit", "any")  # not bound: every cluster


def test_the_services_refuse_an_identity_of_another_cluster_and_audit_it(tmp_path):
    store = Store(tmp_path / "console.db")
    alice = Identity("alice", source="oidc").on(frozenset({VIEWER, OPERATOR}), "staging", "id-staging")
    require(store, alice, "submit", "id-staging")  # her roles hold there
    with pytest.raises(NotPermitted, match="alice may not submit on id-production"):
        require(store, alice, "submit", "id-production")
    [entry] = store.audit.entries()
    assert (entry.user, entry.cluster, entry.action, entry.outcome) == ("alice", "id-production", "submit", "refused")


def test_the_users_file_gives_roles_on_every_cluster_or_per_cluster(tmp_path):
    path = tmp_path / "users.json"
    path.write_text(
        json.dumps(
            {
                "users": {
                    "ann": {"password": "scrypt$x", "roles": ["operator", "approver"]},
                    "bob": {"password": "scrypt$x", "roles": {"staging": ["operator"], "*": ["viewer"]}},
                    "cid": {"password": "scrypt$x", "roles": {"staging": ["approver"]}},
                    "dan": {"password": "scrypt$x"},
                }
            }
        )
    )
    path.chmod(0o600)  # a users file others may read is refused
    users = load_users(path)
    assert users is not None
    assert users.roles_on("ann", "production") == {OPERATOR, APPROVER}
    assert users.roles_on("bob", "staging", "id-1") == {OPERATOR}
    assert users.roles_on("bob", "production") == {VIEWER}
    assert users.roles_on("cid", "production") == {VIEWER}
    assert users.roles_on("dan", "staging") == {VIEWER}
    assert users.identity_of("bob") == Identity("bob", frozenset({VIEWER}), "users file")  # before a cluster
    path.write_text(json.dumps({"users": {"eve": {"password": "x", "roles": {"staging": ["root"]}}}}))
    path.chmod(0o600)
    with pytest.raises(ConfigError, match="eve, cluster 'staging' gives unknown roles"):
        load_users(path)


def test_a_trusted_proxy_needs_a_long_secret():
    assert proxy_settings(None) is None
    with pytest.raises(ConfigError, match="no secret of at least 16 characters"):
        proxy_settings({"secret": "short"})
    with pytest.raises(ConfigError, match="is not a table"):
        proxy_settings("yes")
    proxy = proxy_settings({"secret": "s" * 32, "groups_header": "X-Auth-Request-Groups"})
    assert proxy is not None
    assert (proxy.user_header, proxy.groups_header) == ("X-Forwarded-User", "X-Auth-Request-Groups")


def test_provider_sign_ins_are_audited_as_users_file_ones(tmp_path):
    store = Store(tmp_path / "console.db")
    signins.signed_in(store, "alice@example.com", "oidc", [f"g{i}" for i in range(60)])
    signins.refused_headers(store, "mallory" * 100, "no trusted proxy is configured")
    signins.signed_out(store, "alice@example.com", "oidc")
    first, refused, out = store.audit.entries()
    assert (first.user, first.cluster, first.action, first.outcome) == (
        "alice@example.com",
        "*",
        "sign-in",
        "signed in",
    )
    request = json.loads(first.request)
    assert request["source"] == "oidc" and len(request["groups"]) == 50 and request["groups_left_out"] == 10
    assert (refused.action, refused.outcome, len(refused.user)) == ("sign-in", "refused", 100)
    assert (out.action, json.loads(out.request)) == ("sign-out", {"source": "oidc"})
