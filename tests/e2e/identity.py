"""What the sign-in tests configure (a helper module: fixtures are in conftest.py)."""

OIDC_ACCESS = """
[access]
claim = "groups"

[access.groups]
operators = { sandbox = ["operator", "approver"], "*" = ["viewer"] }
viewers = ["viewer"]
"""
"""The console's group mapping in the OIDC tests: operators operate the sandbox only (a viewer on
any other cluster name, such as ``production``: the same cluster under another name)."""

PROXY_SECRET = "proxy-secret-of-the-tests-0123456789"
"""What the trusted proxy sends in ``X-Console-Proxy-Secret`` in the proxy tests."""
