"""A trusted reverse proxy's identity headers (oauth2-proxy style), ``[access.proxy]`` in
``secrets.toml``::

    [access.proxy]
    secret = "a long random string"           # the proxy sends it in secret_header
    secret_header = "X-Console-Proxy-Secret"  # the defaults of the headers are shown
    user_header = "X-Forwarded-User"
    email_header = "X-Forwarded-Email"
    groups_header = "X-Forwarded-Groups"      # comma-separated groups, mapped by [access.groups]

Identity headers count only on a request that carries the secret: anyone who reaches the
console's port directly can send ``X-Forwarded-User``, but not the secret the proxy adds. Without
``[access.proxy]``, identity headers are ignored (and the refusal audited).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from console.core.errors import ConfigError

MIN_SECRET = 16
"""The shortest proxy secret taken (characters)."""


@dataclass(frozen=True)
class ProxySettings:
    secret: str = ""
    secret_header: str = "X-Console-Proxy-Secret"
    user_header: str = "X-Forwarded-User"
    email_header: str = "X-Forwarded-Email"
    groups_header: str = "X-Forwarded-Groups"


def proxy_settings(raw: object) -> ProxySettings | None:
    """``[access.proxy]`` as :class:`ProxySettings`, None when absent; ConfigError for a table
    without a usable secret."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ConfigError("[access.proxy] in secrets.toml is not a table.", 'Write secret = "..." under it.')
    secret = raw.get("secret")
    if not isinstance(secret, str) or len(secret.strip()) < MIN_SECRET:
        raise ConfigError(
            f"[access.proxy] in secrets.toml has no secret of at least {MIN_SECRET} characters: no proxy is trusted.",
            "Set secret to a long random string (python -c 'import secrets; print(secrets.token_urlsafe(32))') and "
            "have the proxy send it in the X-Console-Proxy-Secret header.",
        )
    headers = {
        k: str(raw[k]).strip() for k in ("secret_header", "user_header", "email_header", "groups_header") if raw.get(k)
    }
    return ProxySettings(secret.strip(), **headers)
