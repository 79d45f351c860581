"""The tenant's address: its origin only, https or loopback http, the same reasons for every class."""

from __future__ import annotations

import pytest

from tenant_integration import InvalidOptionsError
from tenant_integration._base_url import tenant_origin


@pytest.mark.parametrize(
    ("given", "origin"),
    [
        ("https://acme.tenant.test", "https://acme.tenant.test"),
        ("https://acme.tenant.test/", "https://acme.tenant.test"),
        ("HTTPS://Acme.Tenant.Test:443", "https://acme.tenant.test"),
        ("https://acme.tenant.test:8443", "https://acme.tenant.test:8443"),
        ("http://127.0.0.1:4020", "http://127.0.0.1:4020"),
        ("http://localhost:4020/", "http://localhost:4020"),
        ("http://[::1]:4020", "http://[::1]:4020"),
    ],
)
def test_accepts_an_origin_and_normalizes_it(given: str, origin: str) -> None:
    assert tenant_origin(given) == origin


@pytest.mark.parametrize(
    ("given", "reason"),
    [
        ("http://acme.tenant.test", "http is allowed only to a loopback host"),
        ("https://acme.tenant.test/api/v1", "has the path '/api/v1'; give the tenant's origin only"),
        ("https://acme.tenant.test/tenant", "has the path"),
        ("https://acme.tenant.test?x=1", "must not have a query"),
        ("https://acme.tenant.test/?", "must not have a query"),
        ("https://acme.tenant.test#top", "must not have a fragment"),
        ("https://user:pw@acme.tenant.test", "must not carry credentials"),
        ("ftp://acme.tenant.test", "not an absolute http(s) URL"),
        ("acme.tenant.test", "not an absolute http(s) URL"),
        ("", "give the tenant's origin"),
        ("https://acme.tenant.test:99999", "not a URL"),
    ],
)
def test_refuses_anything_else_with_the_reason(given: str, reason: str) -> None:
    with pytest.raises(InvalidOptionsError) as caught:
        tenant_origin(given)
    assert caught.value.code == "INVALID_OPTIONS"
    assert reason in str(caught.value)
    assert "base_url" in str(caught.value)


@pytest.mark.parametrize(
    ("given", "suggested"),
    [
        ("http://10.0.0.5:4101", "use https://10.0.0.5:4101"),
        ("http://[fd00::5]:4101", "use https://[fd00::5]:4101"),
        ("http://acme.tenant.test", "use https://acme.tenant.test"),
        ("http://acme.tenant.test:80", "use https://acme.tenant.test"),
    ],
)
def test_the_https_suggestion_for_a_non_loopback_http_url_keeps_its_port(given: str, suggested: str) -> None:
    """Issue 27, point 6: ``http://10.0.0.5:4101`` was told to use ``https://10.0.0.5``."""
    with pytest.raises(InvalidOptionsError) as caught:
        tenant_origin(given)
    assert str(caught.value).endswith(suggested)
