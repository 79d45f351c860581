"""The 401 refresh-and-retry of the auth classes, decided once and carried out three ways: :class:`TokenAuth`
in an :class:`httpx.Client`, :class:`TokenAuth` in an :class:`httpx.AsyncClient` (the sync source called in a
worker thread), and :class:`AsyncTokenAuth` in an :class:`httpx.AsyncClient`. Each case runs through all
three and must give the same requests, answer, error and log lines (RFC 6750 §2.1, §5.2; RFC 6749 §6)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterator

import httpx
import pytest

from client_support import ORIGIN, USER, FakeSource, StaticSource, Tenant, unauthorized
from tenant_integration import AsyncTokenAuth, InvalidTokenError, TenantIntegrationError, TokenAuth

LOGGER = "test.auth_flow"


class SessionEnded(TenantIntegrationError):
    def __init__(self) -> None:
        super().__init__("SESSION_ENDED", "sign in again")


class CountingSource(StaticSource):
    """A static token that counts how often it was asked for."""

    def __init__(self, token: str) -> None:
        super().__init__(token)
        self.asked = 0

    def get_access_token(self) -> str:
        self.asked += 1
        return super().get_access_token()


class AsyncOf:
    """A sync source behind an async ``get_access_token`` (no ``on_unauthorized``)."""

    def __init__(self, source: StaticSource | FakeSource) -> None:
        self.source = source

    async def get_access_token(self) -> str:
        return self.source.get_access_token()


class AsyncRefreshableOf(AsyncOf):
    """A refreshable sync source behind async methods: the same tokens and record of rejections."""

    source: FakeSource

    async def on_unauthorized(self, rejected_token: str) -> None:
        self.source.on_unauthorized(rejected_token)


def send_with_sync_token_auth(tenant: Tenant, source: StaticSource | FakeSource, url: str) -> httpx.Response:
    auth = TokenAuth(source, origin=ORIGIN, logger=logging.getLogger(LOGGER))
    with httpx.Client(transport=tenant.transport(), auth=auth) as http:
        return http.post(url, json={"title": "x"})


def send_with_token_auth_in_an_async_client(
    tenant: Tenant, source: StaticSource | FakeSource, url: str
) -> httpx.Response:
    async def send() -> httpx.Response:
        auth = TokenAuth(source, origin=ORIGIN, logger=logging.getLogger(LOGGER))
        async with httpx.AsyncClient(transport=tenant.transport(), auth=auth) as http:
            return await http.post(url, json={"title": "x"})

    return asyncio.run(send())


def send_with_async_token_auth(tenant: Tenant, source: StaticSource | FakeSource, url: str) -> httpx.Response:
    async def send() -> httpx.Response:
        async_source = AsyncRefreshableOf(source) if isinstance(source, FakeSource) else AsyncOf(source)
        auth = AsyncTokenAuth(async_source, origin=ORIGIN, logger=logging.getLogger(LOGGER))
        async with httpx.AsyncClient(transport=tenant.transport(), auth=auth) as http:
            return await http.post(url, json={"title": "x"})

    return asyncio.run(send())


Send = Callable[[Tenant, StaticSource | FakeSource, str], httpx.Response]
DRIVERS = pytest.mark.parametrize(
    "send",
    [send_with_sync_token_auth, send_with_token_auth_in_an_async_client, send_with_async_token_auth],
    ids=["TokenAuth-in-Client", "TokenAuth-in-AsyncClient", "AsyncTokenAuth-in-AsyncClient"],
)
URL = f"{ORIGIN}/api/v1/tickets"


def lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == LOGGER]


@DRIVERS
def test_a_401_is_answered_by_one_refresh_and_the_request_sent_again_with_its_body(
    send: Send, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    tenant = Tenant(unauthorized(), httpx.Response(201, json=USER))
    source = FakeSource("old-token", "new-token")
    assert send(tenant, source, URL).status_code == 201
    assert source.rejected == ["old-token"]
    assert tenant.bearer_tokens() == ["old-token", "new-token"]
    assert [r.content for r in tenant.requests] == [b'{"title":"x"}', b'{"title":"x"}']
    assert lines(caplog) == [
        ("INFO", "POST /api/v1/tickets 401: refreshing the token through the token source"),
        ("INFO", "POST /api/v1/tickets: token refreshed, sending again"),
    ]


@DRIVERS
def test_the_same_token_after_the_refresh_returns_the_401_without_sending_again(
    send: Send, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    tenant = Tenant(unauthorized())
    source = FakeSource("only-token")
    assert send(tenant, source, URL).status_code == 401
    assert len(tenant.requests) == 1
    assert source.rejected == ["only-token"]
    assert lines(caplog)[-1] == (
        "WARNING",
        "POST /api/v1/tickets 401: the token source has no new token; returning the 401",
    )


@DRIVERS
def test_a_second_401_is_returned_without_a_third_attempt(send: Send) -> None:
    tenant = Tenant(unauthorized())
    source = FakeSource("token-a", "token-b", "token-c")
    assert send(tenant, source, URL).status_code == 401
    assert tenant.bearer_tokens() == ["token-a", "token-b"]
    assert source.rejected == ["token-a"]


@DRIVERS
def test_the_sources_error_on_refresh_reaches_the_caller_unchanged_and_is_logged_by_its_class(
    send: Send, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    ended = SessionEnded()
    tenant = Tenant(unauthorized())
    with pytest.raises(SessionEnded) as caught:
        send(tenant, FakeSource("token-a", fail_with=ended), URL)
    assert caught.value is ended
    assert len(tenant.requests) == 1
    assert lines(caplog)[-1] == ("WARNING", "POST /api/v1/tickets: the token source gave no new token (SessionEnded)")


@DRIVERS
def test_a_refreshed_token_outside_the_bearer_syntax_is_refused_before_sending_again(
    send: Send, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    tenant = Tenant(unauthorized())
    with pytest.raises(InvalidTokenError):
        send(tenant, FakeSource("token-a", "two words\r\nX-Evil: 1"), URL)
    assert tenant.bearer_tokens() == ["token-a"]
    assert lines(caplog)[-1] == (
        "WARNING",
        "POST /api/v1/tickets: the token source gave no new token (InvalidTokenError)",
    )


@DRIVERS
def test_a_source_without_on_unauthorized_gets_the_401_at_once(send: Send, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    tenant = Tenant(unauthorized())
    assert send(tenant, StaticSource("static-token"), URL).status_code == 401
    assert len(tenant.requests) == 1
    assert lines(caplog) == []


@DRIVERS
def test_a_request_to_another_origin_goes_out_untouched_and_the_source_is_not_asked(send: Send) -> None:
    tenant = Tenant(unauthorized())
    source = CountingSource("tok-1")
    assert send(tenant, source, "https://other.test/api/v1/tickets").status_code == 401
    assert tenant.bearer_tokens() == [None]
    assert source.asked == 0


def test_a_streamed_body_is_read_into_memory_before_it_is_sent_so_a_401_can_send_it_again() -> None:
    seen: list[bool] = []

    def answer(request: httpx.Request) -> httpx.Response:
        # What the transport is handed, before it reads anything: a body in memory, or still a stream.
        seen.append(isinstance(request.stream, httpx.ByteStream))
        return httpx.Response(401 if request.headers["authorization"] == "Bearer old" else 201, json=USER)

    class Recording(httpx.BaseTransport, httpx.AsyncBaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            response = answer(request)
            request.read()
            return response

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            response = answer(request)
            await request.aread()
            return response

    def chunks() -> Iterator[bytes]:
        yield from (b'{"title":', b'"x"}')

    async def async_chunks() -> AsyncIterator[bytes]:
        for chunk in (b'{"title":', b'"x"}'):
            yield chunk

    with httpx.Client(transport=Recording(), auth=TokenAuth(FakeSource("old", "new"), origin=ORIGIN)) as http:
        assert http.post(URL, content=chunks()).status_code == 201

    async def send() -> int:
        auth = AsyncTokenAuth(AsyncRefreshableOf(FakeSource("old", "new")), origin=ORIGIN)
        async with httpx.AsyncClient(transport=Recording(), auth=auth) as http:
            return (await http.post(URL, content=async_chunks())).status_code

    assert asyncio.run(send()) == 201
    assert seen == [True, True, True, True]
