"""The sync client against a scripted tenant (httpx.MockTransport): tokens, refresh, retries, redirects, errors."""

from __future__ import annotations

import json
import logging

import httpx
import pytest

from client_support import (
    ORIGIN,
    USER,
    FakeSource,
    Sleeps,
    StaticSource,
    Tenant,
    unauthorized,
)
from tenant_integration import (
    DEFAULT_TIMEOUT,
    Client,
    ForbiddenError,
    HttpError,
    InsufficientScopeError,
    NetworkError,
    NetworkTimeoutError,
    PathOutsideApiError,
    RateLimitError,
    RetryPolicy,
    ServerError,
    TenantIntegrationError,
    TokenAuth,
    UnauthorizedError,
)


def client(tenant: Tenant, auth: object = None, **options: object) -> Client:
    return Client(base_url=ORIGIN, auth=auth, transport=tenant.transport(), **options)  # type: ignore[arg-type]


# -- the token goes to the tenant, and only there --------------------------------------------------------


def test_get_user_sends_the_bearer_token_and_returns_the_json_record() -> None:
    tenant = Tenant()
    with client(tenant, StaticSource("tok-1")) as c:
        assert c.get_user() == USER
    (request,) = tenant.requests
    assert (request.method, str(request.url)) == ("GET", f"{ORIGIN}/api/v1/auth/user")
    assert request.headers["authorization"] == "Bearer tok-1"
    assert request.headers["accept"] == "application/json"


def test_get_authenticated_user_is_the_operation_and_get_user_its_short_name() -> None:
    tenant = Tenant()
    with client(tenant, StaticSource("tok-1")) as c:
        assert c.get_authenticated_user() == c.get_user()
    assert [r.url.path for r in tenant.requests] == ["/api/v1/auth/user", "/api/v1/auth/user"]


def test_request_sends_any_method_under_api_v1_with_the_token() -> None:
    tenant = Tenant(httpx.Response(201, json={"ok": True}))
    with client(tenant, StaticSource("tok-1")) as c:
        response = c.request("post", "/api/v1/tickets", json={"title": "x"}, params={"dry": "1"})
    assert response.status_code == 201
    (request,) = tenant.requests
    assert (request.method, str(request.url)) == ("POST", f"{ORIGIN}/api/v1/tickets?dry=1")
    assert json.loads(request.content) == {"title": "x"}
    assert request.headers["authorization"] == "Bearer tok-1"


@pytest.mark.parametrize(
    "path",
    [
        "/oauth/token",
        "/api/v10/x",
        "/api/v1/../oauth/token",
        "/api/v1/%2e%2e/oauth/token",
        "https://evil.test/api/v1/x",
        "//evil.test/api/v1/x",
        "api/v1/x",
        "/api/v1\\..\\oauth",
    ],
)
def test_request_refuses_a_path_outside_api_v1_and_sends_nothing(path: str) -> None:
    tenant = Tenant()
    with client(tenant, StaticSource("tok-1")) as c, pytest.raises(PathOutsideApiError) as caught:
        c.request("GET", path)
    assert caught.value.code == "PATH_OUTSIDE_API"
    assert tenant.requests == []


def test_token_auth_adds_the_token_only_to_the_tenants_origin() -> None:
    tenant = Tenant(httpx.Response(200))
    auth = TokenAuth(StaticSource("tok-1"), origin=ORIGIN)
    with httpx.Client(transport=tenant.transport(), auth=auth) as http:
        http.get(f"{ORIGIN}/api/v1/auth/user")
        http.get("https://ACME.tenant.test:443/api/v1/auth/user")  # the same origin, written otherwise
        http.get("https://other.test/api/v1/auth/user")
        http.get("https://acme.tenant.test.evil.test/api/v1/auth/user")
        http.get("http://acme.tenant.test/api/v1/auth/user")  # another scheme
        http.get("https://acme.tenant.test:8443/api/v1/auth/user")  # another port
    assert tenant.bearer_tokens() == ["tok-1", "tok-1", None, None, None, None]


def test_the_users_own_httpx_client_with_token_auth_refreshes_after_a_401() -> None:
    tenant = Tenant(unauthorized(), httpx.Response(200, json=USER))
    source = FakeSource("old-token", "new-token")
    with httpx.Client(transport=tenant.transport(), auth=TokenAuth(source, origin=ORIGIN)) as http:
        response = http.get(f"{ORIGIN}/api/v1/auth/user")
    assert response.json() == USER
    assert tenant.bearer_tokens() == ["old-token", "new-token"]
    assert source.rejected == ["old-token"]


def test_the_client_sends_through_the_users_own_httpx_client_and_leaves_it_open() -> None:
    tenant = Tenant()
    http = httpx.Client(transport=tenant.transport(), headers={"X-Trace": "abc"})
    with Client(base_url=ORIGIN, auth=StaticSource("tok-1"), http_client=http) as c:
        assert c.get_user() == USER
    assert not http.is_closed
    (request,) = tenant.requests
    assert request.headers["x-trace"] == "abc"
    assert request.headers["authorization"] == "Bearer tok-1"
    http.close()


def test_without_auth_the_users_httpx_client_keeps_its_own_auth() -> None:
    tenant = Tenant()
    http = httpx.Client(transport=tenant.transport(), auth=TokenAuth(StaticSource("theirs-1"), origin=ORIGIN))
    Client(base_url=ORIGIN, http_client=http).get_user()
    assert tenant.bearer_tokens() == ["theirs-1"]
    http.close()


def test_without_auth_the_client_sends_no_token() -> None:
    tenant = Tenant()
    client(tenant).get_user()
    assert tenant.bearer_tokens() == [None]


# -- one refresh-and-retry after a 401 -------------------------------------------------------------------


def test_a_401_is_answered_by_one_refresh_and_the_post_body_is_sent_again() -> None:
    tenant = Tenant(unauthorized(), httpx.Response(201, json={"id": 7}))
    source = FakeSource("old-token", "new-token")
    with client(tenant, source) as c:
        response = c.request("POST", "/api/v1/tickets", json={"title": "Printer on fire", "n": 1})
    assert response.json() == {"id": 7}
    assert source.rejected == ["old-token"]
    assert tenant.bearer_tokens() == ["old-token", "new-token"]
    first, second = tenant.requests
    assert first.method == second.method == "POST"
    assert json.loads(second.content) == {"title": "Printer on fire", "n": 1}
    assert second.content == first.content
    assert second.headers["content-type"] == "application/json"


def test_a_form_body_is_replayed_too() -> None:
    tenant = Tenant(unauthorized(), httpx.Response(200, json={}))
    with client(tenant, FakeSource("old-token", "new-token")) as c:
        c.request("PUT", "/api/v1/settings", data={"a": "1", "b": "two words"})
    assert [r.content for r in tenant.requests] == [b"a=1&b=two+words", b"a=1&b=two+words"]


def test_no_retry_when_on_unauthorized_gives_the_same_token() -> None:
    tenant = Tenant(unauthorized("revoked"))
    source = FakeSource("only-token")
    with client(tenant, source) as c, pytest.raises(UnauthorizedError) as caught:
        c.get_user()
    assert len(tenant.requests) == 1
    assert source.rejected == ["only-token"]
    assert (caught.value.status, caught.value.code, caught.value.error) == (401, "UNAUTHORIZED", "invalid_token")
    assert caught.value.error_description == "revoked"


def test_a_second_401_after_the_refresh_is_raised_without_a_third_attempt() -> None:
    tenant = Tenant(unauthorized())
    source = FakeSource("token-a", "token-b", "token-c")
    with client(tenant, source) as c, pytest.raises(UnauthorizedError):
        c.get_user()
    assert tenant.bearer_tokens() == ["token-a", "token-b"]
    assert source.rejected == ["token-a"]


def test_a_source_without_on_unauthorized_gets_the_401_at_once() -> None:
    tenant = Tenant(unauthorized())
    with client(tenant, StaticSource("static-token")) as c, pytest.raises(UnauthorizedError):
        c.get_user()
    assert len(tenant.requests) == 1


class SessionEnded(TenantIntegrationError):
    def __init__(self) -> None:
        super().__init__("SESSION_ENDED", "sign in again")


def test_the_sources_error_on_unauthorized_reaches_the_caller_unchanged() -> None:
    tenant = Tenant(unauthorized())
    ended = SessionEnded()
    with client(tenant, FakeSource("token-a", fail_with=ended)) as c, pytest.raises(SessionEnded) as caught:
        c.get_user()
    assert caught.value is ended
    assert len(tenant.requests) == 1


def test_a_token_outside_the_bearer_syntax_is_refused_before_sending() -> None:
    tenant = Tenant()
    with client(tenant, StaticSource("two words\r\nX-Evil: 1")) as c, pytest.raises(TenantIntegrationError) as caught:
        c.get_user()
    assert caught.value.code == "INVALID_TOKEN"
    assert "two words" not in str(caught.value)
    assert tenant.requests == []


def test_a_source_that_gives_no_token_is_refused_before_sending() -> None:
    tenant = Tenant()
    with client(tenant, StaticSource(None)) as c, pytest.raises(TenantIntegrationError) as caught:  # type: ignore[arg-type]
        c.get_user()
    assert caught.value.code == "INVALID_TOKEN"
    assert tenant.requests == []


def test_a_token_outside_the_bearer_syntax_is_refused_even_after_good_ones() -> None:
    # A token is checked once, not once per call: a new one from the source is checked again.
    tenant = Tenant()
    source = FakeSource("tok-1", "two words\r\nX-Evil: 1")
    with client(tenant, source) as c:
        assert c.get_user() == USER
        source.index = 1
        with pytest.raises(TenantIntegrationError) as caught:
            c.get_user()
    assert caught.value.code == "INVALID_TOKEN"
    assert tenant.bearer_tokens() == ["tok-1"]


# -- 429 and 5xx: Retry-After, backoff, a cap --------------------------------------------------------------


def test_a_429_is_retried_after_its_retry_after_delay() -> None:
    tenant = Tenant(httpx.Response(429, headers={"Retry-After": "2"}), httpx.Response(200, json=USER))
    sleeps = Sleeps()
    with client(tenant, StaticSource("tok-1"), sleep=sleeps) as c:
        assert c.get_user() == USER
    assert sleeps.waits == [2.0]
    assert len(tenant.requests) == 2


def test_a_503_with_an_http_date_is_retried_after_the_time_until_that_date() -> None:
    # Sun, 06 Nov 1994 08:49:37 GMT is 784111777 s after the epoch; the policy's clock says 5 s before.
    answer = httpx.Response(503, headers={"Retry-After": "Sun, 06 Nov 1994 08:49:37 GMT"})
    tenant = Tenant(answer, httpx.Response(200, json=USER))
    sleeps = Sleeps()
    policy = RetryPolicy(now=lambda: 784111772.0)
    with client(tenant, StaticSource("tok-1"), sleep=sleeps, retries=policy) as c:
        assert c.get_user() == USER
    assert sleeps.waits == [5.0]


def test_without_retry_after_the_wait_is_the_jittered_exponential_backoff() -> None:
    tenant = Tenant(httpx.Response(502), httpx.Response(504), httpx.Response(200, json=USER))
    sleeps = Sleeps()
    policy = RetryPolicy(retries=2, base_delay=1.0, random=lambda: 0.5)
    with client(tenant, StaticSource("tok-1"), sleep=sleeps, retries=policy) as c:
        assert c.get_user() == USER
    assert sleeps.waits == [0.75, 1.5]


def test_a_429_that_persists_gives_up_after_the_cap_with_a_rate_limit_error() -> None:
    tenant = Tenant(httpx.Response(429, headers={"Retry-After": "1"}))
    sleeps = Sleeps()
    with client(tenant, StaticSource("tok-1"), sleep=sleeps, retries=3) as c, pytest.raises(RateLimitError) as caught:
        c.get_user()
    assert len(tenant.requests) == 4
    assert sleeps.waits == [1.0, 1.0, 1.0]
    assert (caught.value.status, caught.value.code, caught.value.retry_after) == (429, "RATE_LIMITED", 1.0)


def test_a_503_that_persists_gives_up_after_the_cap_with_a_server_error() -> None:
    tenant = Tenant(httpx.Response(503))
    sleeps = Sleeps()
    with client(tenant, StaticSource("tok-1"), sleep=sleeps) as c, pytest.raises(ServerError) as caught:
        c.get_user()
    assert len(tenant.requests) == 3  # the default policy: 2 retries
    assert len(sleeps.waits) == 2
    assert (caught.value.status, caught.value.code) == (503, "SERVER_ERROR")


def test_a_retry_after_longer_than_the_cap_is_raised_at_once() -> None:
    tenant = Tenant(httpx.Response(429, headers={"Retry-After": "3600"}))
    sleeps = Sleeps()
    with client(tenant, StaticSource("tok-1"), sleep=sleeps) as c, pytest.raises(RateLimitError) as caught:
        c.get_user()
    assert sleeps.waits == []
    assert len(tenant.requests) == 1
    assert caught.value.retry_after == 3600.0


@pytest.mark.parametrize("retries", [None, 0, RetryPolicy(retries=0)])
def test_retries_can_be_turned_off(retries: RetryPolicy | int | None) -> None:
    tenant = Tenant(httpx.Response(503, headers={"Retry-After": "1"}))
    sleeps = Sleeps()
    with client(tenant, StaticSource("tok-1"), sleep=sleeps, retries=retries) as c, pytest.raises(ServerError):
        c.get_user()
    assert len(tenant.requests) == 1
    assert sleeps.waits == []


def test_a_post_is_not_retried_because_it_is_not_idempotent() -> None:
    tenant = Tenant(httpx.Response(503, headers={"Retry-After": "1"}))
    sleeps = Sleeps()
    with client(tenant, StaticSource("tok-1"), sleep=sleeps) as c, pytest.raises(ServerError):
        c.request("POST", "/api/v1/tickets", json={})
    assert len(tenant.requests) == 1


@pytest.mark.parametrize("status", [501, 505])
def test_501_and_505_are_not_retried(status: int) -> None:
    tenant = Tenant(httpx.Response(status))
    with client(tenant, StaticSource("tok-1"), sleep=Sleeps()) as c, pytest.raises(ServerError):
        c.get_user()
    assert len(tenant.requests) == 1


def test_a_retried_request_gets_a_fresh_token_and_the_401_refresh_still_applies() -> None:
    tenant = Tenant(httpx.Response(503, headers={"Retry-After": "0"}), unauthorized(), httpx.Response(200, json=USER))
    source = FakeSource("token-a", "token-b")
    with client(tenant, source, sleep=Sleeps()) as c:
        assert c.get_user() == USER
    assert tenant.bearer_tokens() == ["token-a", "token-a", "token-b"]


# -- failures without an answer ------------------------------------------------------------------------------


def test_a_failed_connection_is_retried_then_answered() -> None:
    tenant = Tenant(httpx.ConnectError("connection refused"), httpx.Response(200, json=USER))
    sleeps = Sleeps()
    with client(tenant, StaticSource("tok-1"), sleep=sleeps, retries=RetryPolicy(random=lambda: 0.0)) as c:
        assert c.get_user() == USER
    assert sleeps.waits == [0.15]


def test_a_connection_that_keeps_failing_raises_a_network_error() -> None:
    tenant = Tenant(httpx.ConnectError("connection refused"))
    with client(tenant, StaticSource("tok-1"), sleep=Sleeps()) as c, pytest.raises(NetworkError) as caught:
        c.get_user()
    assert len(tenant.requests) == 3
    assert caught.value.code == "NETWORK_ERROR"
    # Issue 27, point 2: the reason is in the message, not in __cause__ alone.
    assert str(caught.value) == f"NETWORK_ERROR: GET {ORIGIN}/api/v1/auth/user failed: ConnectError: connection refused"
    assert isinstance(caught.value.cause, httpx.ConnectError)


def test_a_failed_connection_is_logged_at_error_when_only_warnings_are_enabled(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 27, point 2: the ERROR line was written only when INFO was enabled; production runs at WARNING."""
    caplog.set_level(logging.WARNING, logger="tenant_integration.client")
    tenant = Tenant(httpx.ConnectError("connection refused"))
    with client(tenant, StaticSource("tok-1"), sleep=Sleeps(), retries=0) as c, pytest.raises(NetworkError):
        c.get_user()
    errors = [r for r in caplog.records if r.name == "tenant_integration.client" and r.levelno == logging.ERROR]
    assert len(errors) == 1, caplog.records
    assert errors[0].getMessage().startswith("GET /api/v1/auth/user failed: NETWORK_ERROR")
    assert not [r for r in caplog.records if r.levelno == logging.INFO]


def test_a_timeout_raises_a_network_timeout_error_and_is_not_retried() -> None:
    tenant = Tenant(httpx.ReadTimeout("timed out"))
    with client(tenant, StaticSource("tok-1"), sleep=Sleeps()) as c, pytest.raises(NetworkTimeoutError) as caught:
        c.get_user()
    assert len(tenant.requests) == 1
    assert caught.value.code == "TIMEOUT"
    assert str(caught.value) == f"TIMEOUT: GET {ORIGIN}/api/v1/auth/user timed out: ReadTimeout: timed out"
    assert isinstance(caught.value, NetworkError)


# -- redirects are never followed with a token -----------------------------------------------------------------


def test_a_redirect_is_raised_not_followed() -> None:
    tenant = Tenant(httpx.Response(302, headers={"Location": "https://evil.test/steal"}))
    with client(tenant, StaticSource("tok-1")) as c, pytest.raises(HttpError) as caught:
        c.get_user()
    assert type(caught.value) is HttpError
    assert (caught.value.status, caught.value.code) == (302, "HTTP_ERROR")
    assert caught.value.headers["location"] == "https://evil.test/steal"
    assert [str(r.url) for r in tenant.requests] == [f"{ORIGIN}/api/v1/auth/user"]


def test_a_same_origin_307_is_not_followed_either_even_on_a_client_that_follows_redirects() -> None:
    tenant = Tenant(httpx.Response(307, headers={"Location": f"{ORIGIN}/api/v1/elsewhere"}))
    http = httpx.Client(transport=tenant.transport(), follow_redirects=True)
    with Client(base_url=ORIGIN, auth=StaticSource("tok-1"), http_client=http) as c, pytest.raises(HttpError):
        c.request("POST", "/api/v1/tickets", json={"a": 1})
    assert len(tenant.requests) == 1
    http.close()


def test_token_auth_on_a_client_that_follows_redirects_never_sends_the_token_to_another_origin() -> None:
    tenant = Tenant(
        lambda r: (
            httpx.Response(302, headers={"Location": "https://elsewhere.test/landing"})
            if r.url.host == "acme.tenant.test"
            else httpx.Response(200, json={"landed": True})
        )
    )
    auth = TokenAuth(FakeSource("tok-1", "tok-2"), origin=ORIGIN)
    with httpx.Client(transport=tenant.transport(), auth=auth, follow_redirects=True) as http:
        assert http.get(f"{ORIGIN}/api/v1/auth/user").json() == {"landed": True}
    assert [(r.url.host, r.headers.get("authorization")) for r in tenant.requests] == [
        ("acme.tenant.test", "Bearer tok-1"),
        ("elsewhere.test", None),
    ]


# -- the timeout -----------------------------------------------------------------------------------------------


def test_the_default_timeout_is_10_s_to_connect_and_30_s_for_the_other_phases() -> None:
    tenant = Tenant()
    client(tenant, StaticSource("tok-1")).get_user()
    assert tenant.requests[0].extensions["timeout"] == {"connect": 10.0, "read": 30.0, "write": 30.0, "pool": 30.0}
    assert httpx.Timeout(30.0, connect=10.0) == DEFAULT_TIMEOUT


def test_the_timeout_option_and_a_per_call_timeout_are_used() -> None:
    tenant = Tenant()
    c = client(tenant, StaticSource("tok-1"), timeout=5)
    c.get_user()
    c.request("GET", "/api/v1/auth/user", timeout=httpx.Timeout(1.0, connect=2.0))
    c.request("GET", "/api/v1/auth/user", timeout=None)
    assert [r.extensions["timeout"] for r in tenant.requests] == [
        {"connect": 5.0, "read": 5.0, "write": 5.0, "pool": 5.0},
        {"connect": 2.0, "read": 1.0, "write": 1.0, "pool": 1.0},
        {"connect": None, "read": None, "write": None, "pool": None},
    ]


def test_with_the_users_httpx_client_its_own_timeout_applies_unless_one_is_given() -> None:
    tenant = Tenant()
    http = httpx.Client(transport=tenant.transport(), timeout=7.0)
    Client(base_url=ORIGIN, http_client=http).get_user()
    Client(base_url=ORIGIN, http_client=http, timeout=3.0).get_user()
    assert [r.extensions["timeout"]["read"] for r in tenant.requests] == [7.0, 3.0]
    http.close()


# -- typed errors per status ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "cls", "code"),
    [
        (400, HttpError, "HTTP_ERROR"),
        (401, UnauthorizedError, "UNAUTHORIZED"),
        (403, ForbiddenError, "FORBIDDEN"),
        (404, HttpError, "HTTP_ERROR"),
        (409, HttpError, "HTTP_ERROR"),
        (429, RateLimitError, "RATE_LIMITED"),
        (500, ServerError, "SERVER_ERROR"),
        (503, ServerError, "SERVER_ERROR"),
    ],
)
def test_each_status_raises_its_error_class_with_its_code(status: int, cls: type[HttpError], code: str) -> None:
    tenant = Tenant(httpx.Response(status, json={"message": "no"}))
    with client(tenant, StaticSource("tok-1"), retries=None) as c, pytest.raises(HttpError) as caught:
        c.get_user()
    error = caught.value
    assert type(error) is cls
    assert isinstance(error, TenantIntegrationError)
    assert (error.status, error.code, error.method, error.url) == (status, code, "GET", f"{ORIGIN}/api/v1/auth/user")
    assert error.body == {"message": "no"}
    assert error.name == cls.__name__


def test_an_error_message_names_the_method_the_url_without_query_and_the_status() -> None:
    tenant = Tenant(httpx.Response(404, text="not here"))
    with client(tenant, StaticSource("tok-1")) as c, pytest.raises(HttpError) as caught:
        c.request("GET", "/api/v1/things?secret=1", params={"q": "x"})
    assert str(caught.value) == f"HTTP_ERROR: GET {ORIGIN}/api/v1/things: 404 Not Found"
    assert caught.value.body == "not here"


def test_a_403_insufficient_scope_carries_the_missing_scopes_of_the_challenge() -> None:
    challenge = 'Bearer realm="api", error="insufficient_scope", scope="profile:read users:read"'
    tenant = Tenant(httpx.Response(403, headers={"WWW-Authenticate": challenge}))
    with client(tenant, StaticSource("tok-1")) as c, pytest.raises(ForbiddenError) as caught:
        c.get_user()
    error = caught.value
    assert isinstance(error, InsufficientScopeError)
    assert error.code == "INSUFFICIENT_SCOPE"
    assert error.missing_scopes == ("profile:read", "users:read")
    assert str(error).endswith("403 Forbidden: needs profile:read or users:read")


def test_a_403_without_insufficient_scope_is_a_forbidden_error_with_the_scopes_it_names() -> None:
    tenant = Tenant(httpx.Response(403, headers={"WWW-Authenticate": 'Bearer scope="tickets:write"'}))
    with client(tenant, StaticSource("tok-1")) as c, pytest.raises(ForbiddenError) as caught:
        c.get_user()
    assert type(caught.value) is ForbiddenError
    assert caught.value.code == "FORBIDDEN"
    assert caught.value.missing_scopes == ("tickets:write",)


def test_a_403_without_a_challenge_names_no_scope() -> None:
    tenant = Tenant(httpx.Response(403))
    with client(tenant, StaticSource("tok-1")) as c, pytest.raises(ForbiddenError) as caught:
        c.get_user()
    assert caught.value.missing_scopes == ()
    assert str(caught.value).endswith("403 Forbidden")


def test_a_2xx_body_that_is_not_a_json_object_is_an_invalid_response_error() -> None:
    tenant = Tenant(httpx.Response(200, json=[1, 2]), httpx.Response(200, text="<html>"))
    with client(tenant, StaticSource("tok-1")) as c:
        for reason in ("not a JSON object", "not JSON"):
            with pytest.raises(TenantIntegrationError) as caught:
                c.get_user()
            assert caught.value.code == "INVALID_RESPONSE"
            assert reason in str(caught.value)


def test_error_headers_drop_credentials_and_keep_the_rest_with_lower_case_names() -> None:
    answer = httpx.Response(
        400,
        headers=[("Set-Cookie", "session=abc"), ("X-Request-Id", "r-1"), ("Vary", "Accept"), ("Vary", "Origin")],
    )
    tenant = Tenant(answer)
    with client(tenant, StaticSource("tok-1")) as c, pytest.raises(HttpError) as caught:
        c.get_user()
    assert caught.value.headers == {"x-request-id": "r-1", "vary": "Accept, Origin"}
