"""Who is acting on the pages: signed in through the identity provider (OIDC, Streamlit's
``st.login``), through a trusted reverse proxy's headers, or against the users file; with the
roles they hold on the cluster shown (``[access]`` in secrets.toml maps the provider's groups to
roles per cluster; the users file gives roles on every cluster or per cluster).

The identity the pages act with is bound to the cluster shown, by its configured name and its
Kafka cluster id (``Identity.on``): the services' role check (``console.services.guard``) sees
the same roles for that cluster and only a viewer's anywhere else.

A sign-in through the provider or the proxy is audited once per Streamlit session (action
``sign-in``, source ``oidc`` or ``proxy``, as a users-file sign-in is); identity headers that no
trusted proxy sent are ignored, with a refusal audited once per session and a warning in the
sidebar.
"""

from __future__ import annotations

import getpass
import hmac
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import streamlit as st

from components import deps, session
from console.access.auth import VIEWER, Identity, load_users
from console.access.groups import GroupRoles, group_roles
from console.access.proxy import ProxySettings, proxy_settings
from console.access.settings import ConnectionSettings
from console.core.errors import ConfigError, ConsoleError
from console.services import signins

AUDITED = "auth.provider_audited"
"""The session_state key of the provider or proxy sign-in this session has audited."""
REFUSED = "auth.proxy_refused"
"""The session_state key set once this session's untrusted identity headers were audited."""
ID_AGE_S = 60.0
"""How old a shared snapshot may be for learning the shown cluster's id (it does not change)."""


@dataclass(frozen=True)
class Person:
    """Who signed in, before their roles on a cluster are looked up."""

    identity: Identity
    """Their roles on every cluster (users file) or viewer (provider, proxy), not yet bound."""
    groups: tuple[str, ...] = ()
    """The provider's groups (OIDC claim or proxy header)."""
    email: str = ""
    sign_in: str = ""
    """Which sign-in at the provider this is (its session id, else when it happened); empty when
    unknown (a proxy's headers)."""


@dataclass(frozen=True)
class Access:
    """``[access]`` of secrets.toml: the group mapping and the trusted proxy."""

    groups: GroupRoles
    proxy: ProxySettings | None


def access(speak: bool = False) -> Access:
    """``[access]`` as configured; with ``speak``, its problems shown in the sidebar (then nobody
    gets roles from groups and no proxy is trusted)."""
    raw = _section("access")
    try:
        return Access(group_roles(raw), proxy_settings(raw.get("proxy")))
    except ConfigError as e:
        if speak:
            st.sidebar.error(f"{e.message} {e.hint}", icon=":material/settings_alert:")
        return Access(GroupRoles(), None)


def _section(name: str) -> Mapping[str, object]:
    try:
        raw = st.secrets.get(name)
    except Exception:  # no or unreadable secrets.toml: said by deps.configuration_problems
        return {}
    return dict(raw) if isinstance(raw, Mapping) else {}


def identity(shown: ConnectionSettings | None, speak: bool = False) -> Identity:
    """Who is acting and what they may do on the cluster ``shown``: the provider's sign-in, else
    a trusted proxy's, else a sign-in against the users file, else a viewer. ``speak``: say in
    the sidebar what is wrong with the configuration or the headers (the sidebar's sign-in box
    does, once per run)."""
    try:
        users = load_users()
    except ConfigError as e:
        st.sidebar.error(f"{e.message} {e.hint}")
        users = None
    rules = access(speak)
    person = _provider_person(rules, speak) or _proxy_person(rules, speak)
    if person is None:
        chosen = session.identity(users) if users is not None else None
        if chosen is not None:
            return _bound(chosen, shown, lambda *names: users.roles_on(chosen.name, *names) if users else chosen.roles)
        if users is None:
            return Identity(getpass.getuser(), frozenset({VIEWER}), "nobody configured users")
        return Identity("guest", frozenset({VIEWER}), "not signed in")
    _audit_once(person)
    by_email = users.emails.get(person.email, frozenset()) if users is not None and person.email else frozenset()
    return _bound(person.identity, shown, lambda *names: rules.groups.on(person.groups, *names) | by_email)


def _bound(who: Identity, shown: ConnectionSettings | None, roles_on: Callable[..., frozenset[str]]) -> Identity:
    if shown is None:
        return who.on(roles_on())
    names = _names(shown)
    return who.on(roles_on(*names), *names)


_IDS: dict[ConnectionSettings, str] = {}
"""Each configured cluster's Kafka id, once a read said it."""


def _names(settings: ConnectionSettings) -> tuple[str, ...]:
    """The shown cluster's names: as configured, and its Kafka cluster id when it is known."""
    known = _IDS.get(settings)  # learned once (an id does not change): nothing read before an on-call dialog
    if known is None:
        try:
            known = deps.reader(settings).snapshot(max_age_s=ID_AGE_S).cluster_id
        except ConsoleError:
            return (settings.name,)
        if known:  # a cluster that did not answer says no id: asked again next time
            _IDS[settings] = known
    return (settings.name, known) if known and known != settings.name else (settings.name,)


def _provider_person(rules: Access, speak: bool) -> Person | None:
    """Who Streamlit's OIDC sign-in says is signed in, or None."""
    try:
        if not st.user.is_logged_in:
            return None
        claims = st.user.to_dict()
    except Exception:  # [auth] not configured or not usable: said by deps.configuration_problems
        return None
    if _headers_override_user(speak):
        return None
    email = _text(claims.get("email"))
    name = email or _text(claims.get("preferred_username")) or _text(claims.get("name")) or "signed-in user"
    sign_in = next((_text(str(claims[k])) for k in ("sid", "auth_time", "iat") if claims.get(k)), "")
    return Person(Identity(name, frozenset({VIEWER}), "oidc"), rules.groups.groups_in(claims), email, sign_in)


def _headers_override_user(speak: bool) -> bool:
    """Whether Streamlit's ``server.trustedUserHeaders`` is set: then any client's headers can
    overwrite ``st.user``'s claims, so the console does not take them (it says so)."""
    try:
        mapping = st.get_option("server.trustedUserHeaders")
    except Exception:
        return False
    if mapping and speak:
        st.sidebar.error(
            "server.trustedUserHeaders is set: headers can overwrite the OIDC sign-in's claims, so the "
            "console ignores it. Unset it; for a reverse proxy's headers use [access.proxy] (docs/GUIDE.md).",
            icon=":material/gpp_bad:",
        )
    return bool(mapping)


def _proxy_person(rules: Access, speak: bool) -> Person | None:
    """Who a trusted reverse proxy's headers say is signed in, or None; identity headers from
    anyone else are refused (audited once per session)."""
    try:
        headers = {k.lower(): v for k, v in st.context.headers.items()}
    except Exception:
        return None
    proxy = rules.proxy or ProxySettings()
    user = _text(headers.get(proxy.user_header.lower())) or _text(headers.get(proxy.email_header.lower()))
    if not user:
        return None
    sent = headers.get(proxy.secret_header.lower(), "")
    if rules.proxy is None or not hmac.compare_digest(sent.encode(), rules.proxy.secret.encode()):
        why = "no trusted proxy is configured" if rules.proxy is None else "the proxy secret is missing or wrong"
        if speak:
            st.sidebar.warning(
                f"Identity headers ignored: {why} ([access.proxy], docs/GUIDE.md).", icon=":material/gpp_bad:"
            )
        if not st.session_state.get(REFUSED):
            st.session_state[REFUSED] = True
            _record(lambda: signins.refused_headers(deps.store(), user, why))
        return None
    email = _text(headers.get(proxy.email_header.lower()))
    groups = rules.groups.groups_in({rules.groups.claim: headers.get(proxy.groups_header.lower(), "")})
    return Person(Identity(user, frozenset({VIEWER}), "proxy"), groups, email)


def _text(value: object) -> str:
    return value.strip()[:256] if isinstance(value, str) else ""


def _audit_once(person: Person) -> None:
    """Audit a sign-in once: once per sign-in at the provider however many tabs and reloads use
    it (while the server runs), else once per Streamlit session."""
    seen = (person.identity.source, person.identity.name, person.sign_in)
    if st.session_state.get(AUDITED) == seen:
        return
    if person.sign_in and not _seen_sign_ins().first(seen):
        st.session_state[AUDITED] = seen
        return
    if _record(lambda: signins.signed_in(deps.store(), person.identity.name, person.identity.source, person.groups)):
        st.session_state[AUDITED] = seen


class SeenSignIns:
    """The provider sign-ins this server has audited, the latest :data:`KEPT` of them."""

    KEPT = 10_000

    def __init__(self) -> None:
        self._seen: OrderedDict[tuple[str, str, str], None] = OrderedDict()
        self._lock = threading.Lock()

    def first(self, sign_in: tuple[str, str, str]) -> bool:
        """Whether ``sign_in`` is seen here for the first time (it is remembered from now on)."""
        with self._lock:
            if sign_in in self._seen:
                return False
            self._seen[sign_in] = None
            while len(self._seen) > self.KEPT:
                self._seen.popitem(last=False)
            return True


@st.cache_resource(show_spinner=False)
def _seen_sign_ins() -> SeenSignIns:
    return SeenSignIns()


def _record(write: Callable[[], object]) -> bool:
    try:
        write()
    except ConsoleError as e:
        st.sidebar.error(f"Cannot record the sign-in: {e.message} {e.hint}")
        return False
    return True


def providers() -> list[str]:
    """The OIDC providers ``[auth]`` configures: ``default`` when ``[auth]`` itself names a
    client, and each ``[auth.<name>]`` that does."""
    auth = _section("auth")
    named = [k for k, v in auth.items() if isinstance(v, Mapping) and ("client_id" in v or "server_metadata_url" in v)]
    return (["default"] if "client_id" in auth else []) + sorted(named)


def provider_box(me: Identity) -> bool:
    """The sidebar's provider part: sign-out when signed in through the provider (audited), else
    a sign-in button per provider; whether it offered any sign-in."""
    if me.source == "oidc":
        if st.button("Sign out", key="auth.oidc_sign_out", help="Ends the identity provider's sign-in here."):
            _record(lambda: signins.signed_out(deps.store(), me.name, "oidc"))
            st.session_state.pop(AUDITED, None)
            st.logout()
        return False
    if me.source in ("proxy", "users file"):
        return False
    names = providers()
    for name in names:
        label = "Sign in with the identity provider" if name == "default" else f"Sign in with {name.capitalize()}"
        if st.button(label, key=f"auth.oidc.{name}", type="primary", icon=":material/login:"):
            st.login(name)
    return bool(names)


def signed_in_caption(me: Identity) -> str:
    """Who is signed in and their roles on the cluster shown."""
    via = {"oidc": " through the identity provider", "proxy": " through the proxy"}.get(me.source, "")
    return f"Signed in as **{me.name}**{via} ({', '.join(sorted(me.roles))})"
