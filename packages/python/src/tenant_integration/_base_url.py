"""Validation of the tenant's address, shared by the client and the token manager.

The service description (§1, §5.8) has one tenant host serve authorization, token exchange and the
API, so the SDK takes the tenant's *origin* and appends fixed paths to it: a token can then only go to
that origin. https is required (RFC 6749 §3.1 and §3.2 require TLS at the authorization and token
endpoints, RFC 6750 §5.3 for bearer tokens), except for loopback hosts: a local sandbox, for development,
which no request leaves the machine to reach.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from .errors import InvalidOptionsError

__all__ = ["is_loopback_host", "tenant_origin"]


def is_loopback_host(host: str) -> bool:
    """True for ``localhost``, ``127.0.0.0/8`` and ``::1``.

    Example:
        >>> is_loopback_host("127.0.0.1"), is_loopback_host("localhost"), is_loopback_host("example.org")
        (True, True, False)
    """
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def tenant_origin(base_url: str, option: str = "base_url") -> str:
    """Checks that ``base_url`` is the tenant's origin and returns it normalized (no trailing slash).

    It must be ``https://host[:port]``, or ``http://`` to a loopback host, with no credentials, path
    (a lone ``/`` is allowed), query or fragment.

    Raises:
        InvalidOptionsError: ``INVALID_OPTIONS`` whose message says which rule the value breaks.

    Example:
        >>> tenant_origin("https://acme.tenant.test/")
        'https://acme.tenant.test'
        >>> tenant_origin("https://acme.tenant.test/api/v1")
        Traceback (most recent call last):
        ...
        tenant_integration.errors.InvalidOptionsError: INVALID_OPTIONS: base_url: ...
    """
    if not isinstance(base_url, str) or not base_url:
        raise InvalidOptionsError(option, "give the tenant's origin as a string, e.g. https://acme.tenant.test")
    try:
        parts = urlsplit(base_url)
        port = parts.port
    except ValueError as e:
        raise InvalidOptionsError(option, f"not a URL ({e})") from None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in ("https", "http") or not host:
        raise InvalidOptionsError(
            option, "not an absolute http(s) URL; give the tenant's origin, e.g. https://acme.tenant.test"
        )
    netloc = f"[{host}]" if ":" in host else host
    if scheme == "http" and not is_loopback_host(host):
        # The suggestion keeps the port (http's default 80 says nothing about https's).
        suggested = netloc if port in (None, 80) else f"{netloc}:{port}"
        raise InvalidOptionsError(
            option, f"http is allowed only to a loopback host (the local sandbox); use https://{suggested}"
        )
    if parts.username is not None or parts.password is not None:
        raise InvalidOptionsError(option, "must not carry credentials (user:password@)")
    if parts.path not in ("", "/"):
        raise InvalidOptionsError(
            option,
            f"has the path {parts.path!r}; give the tenant's origin only (e.g. {scheme}://{parts.netloc}): "
            "the SDK adds /oauth/... and /api/v1/... itself",
        )
    if "?" in base_url:
        raise InvalidOptionsError(option, "must not have a query; give the tenant's origin only")
    if "#" in base_url:
        raise InvalidOptionsError(option, "must not have a fragment; give the tenant's origin only")
    default_port = 443 if scheme == "https" else 80
    if port is not None and port != default_port:
        netloc += f":{port}"
    return f"{scheme}://{netloc}"
