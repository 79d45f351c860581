"""The async client and AsyncTokenAuth: the sync client's promises on asyncio."""

from __future__ import annotations

import json
import threading

import httpx
import pytest

from client_support import (
    ORIGIN,
    USER,
    AsyncFakeSource,
    AsyncSleeps,
    AsyncStaticSource,
    FakeSource,
    StaticSource,
    Tenant,
    unauthorized,
)
from tenant_integration import (
    AsyncClient,
    AsyncTokenAuth,
    ForbiddenError,
    HttpError,
    InsufficientScopeError,
    InvalidOptionsError,
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


def client(tenant: Tenant, auth: object = None, **options: object) -> AsyncClient:
    return AsyncClient(base_url=ORIGIN, auth=auth, transport=tenant.transport(), **options)  # type: ignore[arg-type]


async def test_get_user_sends_the_bearer_token_and_returns_the_json_record() -> None:
    tenant = Tenant()
    async with client(tenant, AsyncStaticSource("tok-1")) as c:
        assert await c.get_user() == USER
        assert await c.get_authenticated_user() == USER
    assert tenant.bearer_tokens() == ["tok-1", "tok-1"]
    assert str(tenant.requests[0].url) == f"{ORIGIN}/api/v1/auth/user"


async def test_a_sync_token_source_is_called_in_a_worker_thread() -> None:
    calls: list[str] = []

    class Recording(StaticSource):
        def get_access_token(self) -> str:
            calls.append(threading.current_thread().name)
            return super().get_access_token()

    tenant = Tenant()
    async with client(tenant, Recording("tok-1")) as c:
        assert await c.get_user() == USER
    assert tenant.bearer_tokens() == ["tok-1"]
    assert calls
    assert calls[0] != threading.main_thread().name


async def test_async_token_auth_adds_the_token_only_to_the_tenants_origin() -> None:
    tenant = Tenant(httpx.Response(200))
    auth = AsyncTokenAuth(AsyncStaticSource("tok-1"), origin=ORIGIN)
    async with httpx.AsyncClient(transport=tenant.transport(), auth=auth) as http:
        await http.get(f"{ORIGIN}/api/v1/auth/user")
        await http.get("https://other.test/api/v1/auth/user")
        await http.get("http://acme.tenant.test/api/v1/auth/user")
    assert tenant.bearer_tokens() == ["tok-1", None, None]


async def test_token_auth_with_a_sync_source_works_in_an_httpx_async_client_too() -> None:
    tenant = Tenant(unauthorized(), httpx.Response(200, json=USER))
    source = FakeSource("old-token", "new-token")
    async with httpx.AsyncClient(transport=tenant.transport(), auth=TokenAuth(source, origin=ORIGIN)) as http:
        await http.get(f"{ORIGIN}/api/v1/auth/user")
        await http.get("https://other.test/")
    assert tenant.bearer_tokens() == ["old-token", "new-token", None]


async def test_async_token_auth_in_a_sync_httpx_client_is_refused_with_a_reason() -> None:
    tenant = Tenant()
    with (
        httpx.Client(transport=tenant.transport(), auth=AsyncTokenAuth(AsyncStaticSource("t"), origin=ORIGIN)) as http,
        pytest.raises(InvalidOptionsError, match=r"AsyncTokenAuth needs httpx\.AsyncClient"),
    ):
        http.get(f"{ORIGIN}/api/v1/auth/user")  # noqa: ASYNC212 (the sync client is the point of the test)
    assert tenant.requests == []


async def test_the_users_own_httpx_async_client_is_used_and_left_open() -> None:
    tenant = Tenant()
    http = httpx.AsyncClient(transport=tenant.transport())
    async with AsyncClient(base_url=ORIGIN, auth=AsyncStaticSource("tok-1"), http_client=http) as c:
        assert await c.get_user() == USER
    assert not http.is_closed
    await http.aclose()


async def test_request_refuses_a_path_outside_api_v1_and_sends_nothing() -> None:
    tenant = Tenant()
    async with client(tenant, AsyncStaticSource("tok-1")) as c:
        with pytest.raises(PathOutsideApiError):
            await c.request("POST", "/oauth/revoke", data={"token": "x"})
    assert tenant.requests == []


async def test_a_401_is_answered_by_one_refresh_and_the_post_body_is_sent_again() -> None:
    tenant = Tenant(unauthorized(), httpx.Response(201, json={"id": 7}))
    source = AsyncFakeSource("old-token", "new-token")
    async with client(tenant, source) as c:
        response = await c.request("POST", "/api/v1/tickets", json={"title": "Printer on fire"})
    assert response.json() == {"id": 7}
    assert source.rejected == ["old-token"]
    assert tenant.bearer_tokens() == ["old-token", "new-token"]
    assert [json.loads(r.content) for r in tenant.requests] == [{"title": "Printer on fire"}] * 2


async def test_no_retry_when_on_unauthorized_gives_the_same_token() -> None:
    tenant = Tenant(unauthorized())
    source = AsyncFakeSource("only-token")
    async with client(tenant, source) as c:
        with pytest.raises(UnauthorizedError) as caught:
            await c.get_user()
    assert len(tenant.requests) == 1
    assert source.rejected == ["only-token"]
    assert caught.value.error == "invalid_token"


async def test_a_second_401_after_the_refresh_is_raised() -> None:
    tenant = Tenant(unauthorized())
    async with client(tenant, AsyncFakeSource("token-a", "token-b", "token-c")) as c:
        with pytest.raises(UnauthorizedError):
            await c.get_user()
    assert tenant.bearer_tokens() == ["token-a", "token-b"]


async def test_the_sources_error_on_unauthorized_reaches_the_caller_unchanged() -> None:
    ended = TenantIntegrationError("SESSION_ENDED", "sign in again")
    async with client(Tenant(unauthorized()), AsyncFakeSource("token-a", fail_with=ended)) as c:
        with pytest.raises(TenantIntegrationError) as caught:
            await c.get_user()
    assert caught.value is ended


async def test_a_token_outside_the_bearer_syntax_is_refused_even_after_good_ones() -> None:
    tenant = Tenant()
    source = AsyncFakeSource("tok-1", "two words\r\nX-Evil: 1")
    async with client(tenant, source) as c:
        assert await c.get_user() == USER
        source._sync.index = 1
        with pytest.raises(TenantIntegrationError) as caught:
            await c.get_user()
    assert caught.value.code == "INVALID_TOKEN"
    assert tenant.bearer_tokens() == ["tok-1"]


async def test_a_429_is_retried_after_its_retry_after_delay() -> None:
    tenant = Tenant(httpx.Response(429, headers={"Retry-After": "2"}), httpx.Response(200, json=USER))
    sleeps = AsyncSleeps()
    async with client(tenant, AsyncStaticSource("tok-1"), sleep=sleeps) as c:
        assert await c.get_user() == USER
    assert sleeps.waits == [2.0]


async def test_a_429_that_persists_gives_up_after_the_cap_with_a_rate_limit_error() -> None:
    tenant = Tenant(httpx.Response(429, headers={"Retry-After": "1"}))
    sleeps = AsyncSleeps()
    async with client(tenant, AsyncStaticSource("tok-1"), sleep=sleeps, retries=2) as c:
        with pytest.raises(RateLimitError) as caught:
            await c.get_user()
    assert len(tenant.requests) == 3
    assert sleeps.waits == [1.0, 1.0]
    assert caught.value.retry_after == 1.0


async def test_a_503_that_persists_gives_up_after_the_cap_with_a_server_error() -> None:
    tenant = Tenant(httpx.Response(503))
    sleeps = AsyncSleeps()
    policy = RetryPolicy(retries=3, base_delay=1.0, random=lambda: 0.0)
    async with client(tenant, AsyncStaticSource("tok-1"), sleep=sleeps, retries=policy) as c:
        with pytest.raises(ServerError) as caught:
            await c.get_user()
    assert sleeps.waits == [0.5, 1.0, 2.0]
    assert caught.value.status == 503


async def test_retries_can_be_turned_off() -> None:
    tenant = Tenant(httpx.Response(503))
    async with client(tenant, AsyncStaticSource("tok-1"), sleep=AsyncSleeps(), retries=None) as c:
        with pytest.raises(ServerError):
            await c.get_user()
    assert len(tenant.requests) == 1


async def test_failures_without_an_answer_are_network_errors() -> None:
    tenant = Tenant(httpx.ConnectError("refused"), httpx.ConnectError("refused"), httpx.ReadTimeout("slow"))
    sleeps = AsyncSleeps()
    async with client(tenant, AsyncStaticSource("tok-1"), sleep=sleeps) as c:
        with pytest.raises(NetworkTimeoutError) as caught:
            await c.get_user()
    assert len(tenant.requests) == 3
    assert len(sleeps.waits) == 2
    assert isinstance(caught.value, NetworkError)
    assert caught.value.code == "TIMEOUT"


async def test_a_redirect_is_raised_not_followed() -> None:
    tenant = Tenant(httpx.Response(301, headers={"Location": "https://evil.test/"}))
    http = httpx.AsyncClient(transport=tenant.transport(), follow_redirects=True)
    async with AsyncClient(base_url=ORIGIN, auth=AsyncStaticSource("tok-1"), http_client=http) as c:
        with pytest.raises(HttpError) as caught:
            await c.get_user()
    assert caught.value.status == 301
    assert [r.url.host for r in tenant.requests] == ["acme.tenant.test"]
    await http.aclose()


async def test_the_default_timeout_is_10_s_to_connect_and_30_s_for_the_other_phases() -> None:
    tenant = Tenant()
    async with client(tenant, AsyncStaticSource("tok-1")) as c:
        await c.get_user()
    assert tenant.requests[0].extensions["timeout"] == {"connect": 10.0, "read": 30.0, "write": 30.0, "pool": 30.0}


@pytest.mark.parametrize(
    ("status", "cls"),
    [(400, HttpError), (401, UnauthorizedError), (403, ForbiddenError), (429, RateLimitError), (500, ServerError)],
)
async def test_each_status_raises_its_error_class(status: int, cls: type[HttpError]) -> None:
    async with client(Tenant(httpx.Response(status)), AsyncStaticSource("tok-1"), retries=None) as c:
        with pytest.raises(HttpError) as caught:
            await c.get_user()
    assert type(caught.value) is cls


async def test_a_403_insufficient_scope_carries_the_missing_scopes_of_the_challenge() -> None:
    challenge = 'Bearer error="insufficient_scope", scope="profile:read"'
    tenant = Tenant(httpx.Response(403, headers={"WWW-Authenticate": challenge}))
    async with client(tenant, AsyncStaticSource("t")) as c:
        with pytest.raises(InsufficientScopeError) as caught:
            await c.get_user()
    assert caught.value.missing_scopes == ("profile:read",)
