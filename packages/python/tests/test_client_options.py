"""The client's options: bad ones are refused at construction with a reason; every API operation has a method."""

from __future__ import annotations

import asyncio
import inspect
import logging
import re

import httpx
import pytest

from client_support import ORIGIN, USER, AsyncStaticSource, StaticSource, Tenant
from tenant_integration import AsyncClient, AsyncTokenAuth, Client, InvalidOptionsError, ServerError, TokenAuth
from tenant_integration._generated.operations import OPERATIONS, Operation


def snake_case(operation_id: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", operation_id).lower()


API_OPERATIONS = [op for op in OPERATIONS.values() if op.path.startswith("/api/v1/")]


# -- base_url ------------------------------------------------------------------------------------------------


def test_a_base_url_with_the_api_path_is_refused_with_a_hint_to_give_the_origin() -> None:
    with pytest.raises(InvalidOptionsError) as caught:
        Client(base_url=f"{ORIGIN}/api/v1")
    assert caught.value.option == "base_url"
    assert "give the tenant's origin only" in str(caught.value)
    assert f"{ORIGIN}" in str(caught.value)


@pytest.mark.parametrize(
    ("base_url", "reason"),
    [
        ("http://acme.tenant.test", "http is allowed only to a loopback host"),
        ("https://acme.tenant.test?x=1", "query"),
        ("https://user:pw@acme.tenant.test", "credentials"),
        ("acme.tenant.test", "absolute"),
    ],
)
def test_a_bad_base_url_is_refused_with_its_reason(base_url: str, reason: str) -> None:
    for make in (Client, AsyncClient):
        with pytest.raises(InvalidOptionsError, match=re.escape(reason)):
            make(base_url=base_url)


def test_the_base_url_is_normalized_and_http_is_allowed_to_loopback() -> None:
    assert Client(base_url="https://ACME.tenant.test:443/").base_url == ORIGIN
    assert AsyncClient(base_url="http://127.0.0.1:4010").base_url == "http://127.0.0.1:4010"


def test_token_auth_checks_its_origin_as_the_client_checks_base_url() -> None:
    with pytest.raises(InvalidOptionsError) as caught:
        TokenAuth(StaticSource("t"), origin=f"{ORIGIN}/api/v1")
    assert caught.value.option == "origin"
    with pytest.raises(InvalidOptionsError):
        AsyncTokenAuth(AsyncStaticSource("t"), origin="http://acme.tenant.test")


# -- auth ----------------------------------------------------------------------------------------------------


def test_an_auth_without_get_access_token_is_refused() -> None:
    with pytest.raises(InvalidOptionsError, match="get_access_token"):
        Client(base_url=ORIGIN, auth="a token string")  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionsError, match="get_access_token"):
        AsyncClient(base_url=ORIGIN, auth=object())  # type: ignore[arg-type]


def test_an_async_source_is_refused_by_the_sync_client_and_by_token_auth() -> None:
    with pytest.raises(InvalidOptionsError, match="use AsyncClient"):
        Client(base_url=ORIGIN, auth=AsyncStaticSource("t"))  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionsError, match="use AsyncTokenAuth"):
        TokenAuth(AsyncStaticSource("t"), origin=ORIGIN)  # type: ignore[arg-type]


def test_an_httpx_auth_of_ones_own_is_used_as_is() -> None:
    tenant = Tenant()
    auth = httpx.BasicAuth("user", "pass")
    Client(base_url=ORIGIN, auth=auth, transport=tenant.transport()).get_user()
    assert tenant.requests[0].headers["authorization"].startswith("Basic ")


# -- the other options ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("timeout", [0, -1, float("inf"), float("nan"), "5", True])
def test_a_bad_timeout_is_refused(timeout: object) -> None:
    with pytest.raises(InvalidOptionsError) as caught:
        Client(base_url=ORIGIN, timeout=timeout)  # type: ignore[arg-type]
    assert caught.value.option == "timeout"


def test_a_bad_per_call_timeout_is_refused_before_sending() -> None:
    tenant = Tenant()
    with pytest.raises(InvalidOptionsError) as caught:
        Client(base_url=ORIGIN, transport=tenant.transport()).request("GET", "/api/v1/x", timeout=-2)
    assert caught.value.option == "timeout (per request)"
    assert tenant.requests == []


@pytest.mark.parametrize("retries", ["2", 1.5, -1])
def test_bad_retries_are_refused(retries: object) -> None:
    with pytest.raises(InvalidOptionsError) as caught:
        Client(base_url=ORIGIN, retries=retries)  # type: ignore[arg-type]
    assert caught.value.option == "retries"


def test_a_logger_that_is_not_a_logging_logger_is_refused() -> None:
    with pytest.raises(InvalidOptionsError) as caught:
        Client(base_url=ORIGIN, logger=print)  # type: ignore[arg-type]
    assert caught.value.option == "logger"


def test_an_http_client_of_the_wrong_kind_or_with_a_transport_is_refused() -> None:
    with pytest.raises(InvalidOptionsError, match=r"give an httpx\.Client "):
        Client(base_url=ORIGIN, http_client=httpx.AsyncClient())  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionsError, match=r"give an httpx\.AsyncClient "):
        AsyncClient(base_url=ORIGIN, http_client=httpx.Client())  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionsError) as caught:
        Client(base_url=ORIGIN, http_client=httpx.Client(), transport=httpx.MockTransport(Tenant()))
    assert caught.value.option == "transport"


def test_a_stream_body_is_refused_because_it_could_not_be_sent_again() -> None:
    tenant = Tenant()
    with pytest.raises(InvalidOptionsError) as caught:
        Client(base_url=ORIGIN, transport=tenant.transport()).request(
            "POST",
            "/api/v1/files",
            content=iter([b"chunk"]),  # type: ignore[arg-type]
        )
    assert caught.value.option == "content"
    assert tenant.requests == []


def test_headers_are_sent_with_every_request_over_the_default_accept() -> None:
    tenant = Tenant()
    c = Client(base_url=ORIGIN, transport=tenant.transport(), headers={"User-Agent": "my-cli/1.0", "X-A": "1"})
    c.get_user()
    c.request("GET", "/api/v1/x", headers={"Accept": "text/csv", "X-A": "2"})
    first, second = tenant.requests
    assert (first.headers["user-agent"], first.headers["x-a"], first.headers["accept"]) == (
        "my-cli/1.0",
        "1",
        "application/json",
    )
    assert (second.headers["x-a"], second.headers["accept"]) == ("2", "text/csv")


def test_with_the_users_httpx_client_the_headers_option_and_accept_go_with_every_request() -> None:
    # The client's own httpx client is built with these headers; a user's gets them on each request.
    tenant = Tenant()
    http = httpx.Client(transport=tenant.transport(), headers={"Accept": "*/*", "X-Trace": "abc"})
    c = Client(base_url=ORIGIN, http_client=http, headers={"X-A": "1"})
    c.get_user()
    c.with_options(headers={"X-B": "2"}).get_user()
    first, second = tenant.requests
    assert (first.headers["accept"], first.headers["x-a"], first.headers["x-trace"]) == ("application/json", "1", "abc")
    assert (second.headers["x-a"], second.headers["x-b"]) == ("1", "2")
    assert "x-b" not in first.headers
    http.close()


def test_the_client_uses_the_default_logger_and_a_policy_with_two_retries() -> None:
    c = Client(base_url=ORIGIN)
    assert c.retry_policy.retries == 2
    assert logging.getLogger("tenant_integration").handlers  # a NullHandler: silent unless configured
    assert repr(c) == f"Client(base_url={ORIGIN!r})"


# -- closing -------------------------------------------------------------------------------------------------


class ClosingTransport(httpx.MockTransport):
    def __init__(self) -> None:
        super().__init__(Tenant())
        self.closed = 0

    def close(self) -> None:
        self.closed += 1

    async def aclose(self) -> None:
        self.closed += 1


def test_close_and_the_context_manager_close_the_clients_own_connections() -> None:
    transport = ClosingTransport()
    with Client(base_url=ORIGIN, transport=transport) as c:
        assert c.get_user() == USER
    assert transport.closed == 1


async def test_aclose_and_async_with_close_the_async_clients_own_connections() -> None:
    transport = ClosingTransport()
    async with AsyncClient(base_url=ORIGIN, transport=transport) as c:
        assert await c.get_user() == USER
    assert transport.closed == 1


# -- one method per API operation of the contract ---------------------------------------------------------------


def test_the_contract_has_api_operations_to_cover() -> None:
    assert [op.operation_id for op in API_OPERATIONS] == ["getAuthenticatedUser"]


@pytest.mark.parametrize("operation", API_OPERATIONS, ids=lambda op: op.operation_id)
def test_every_api_operation_has_a_sync_method_that_sends_its_method_and_path(operation: Operation) -> None:
    method = getattr(Client, snake_case(operation.operation_id), None)
    assert method is not None, f"Client has no method {snake_case(operation.operation_id)}"
    assert method.__doc__ is not None
    assert operation.operation_id in method.__doc__
    tenant = Tenant()
    getattr(Client(base_url=ORIGIN, transport=tenant.transport()), method.__name__)()
    assert [(r.method, r.url.path) for r in tenant.requests] == [(operation.method, operation.path)]


@pytest.mark.parametrize("operation", API_OPERATIONS, ids=lambda op: op.operation_id)
def test_every_api_operation_has_an_async_method_too(operation: Operation) -> None:
    method = getattr(AsyncClient, snake_case(operation.operation_id), None)
    assert method is not None
    assert inspect.iscoroutinefunction(method)
    tenant = Tenant()

    async def call() -> None:
        async with AsyncClient(base_url=ORIGIN, transport=tenant.transport()) as c:
            await getattr(c, method.__name__)()

    asyncio.run(call())
    assert [(r.method, r.url.path) for r in tenant.requests] == [(operation.method, operation.path)]


# -- per-call options (issue 27, point 6; openai-python's ``with_options`` is the model) -------------------------


def test_an_operation_method_takes_a_timeout_and_headers_for_this_call_only() -> None:
    tenant = Tenant()
    seen: list[dict[str, object]] = []
    with Client(base_url=ORIGIN, auth=StaticSource("tok-1"), transport=tenant.transport(), timeout=30.0) as client:
        client._http.event_hooks["request"].append(lambda request: seen.append(dict(request.extensions["timeout"])))
        assert client.get_user(timeout=5, headers={"X-Trace": "t1"}) == USER
        assert client.get_authenticated_user() == USER
    assert seen[0]["read"] == 5.0
    assert seen[1]["read"] == 30.0
    assert tenant.requests[0].headers["x-trace"] == "t1"
    assert "x-trace" not in tenant.requests[1].headers


def test_with_options_gives_a_client_sharing_the_connections_with_other_defaults() -> None:
    tenant = Tenant(httpx.Response(503), httpx.Response(200, json=USER))
    with Client(base_url=ORIGIN, auth=StaticSource("tok-1"), transport=tenant.transport()) as client:
        quick = client.with_options(timeout=2, retries=0, headers={"X-Tool": "cli"})
        assert quick.retry_policy.retries == 0
        assert client.retry_policy.retries == 2
        assert quick._http is client._http
        with pytest.raises(ServerError) as caught:
            quick.get_user()  # retries=0: the 503 is raised, not retried
        assert caught.value.status == 503
        assert tenant.requests[-1].headers["x-tool"] == "cli"
        quick.close()  # the connections are the original's: still open
        assert client.get_user() == USER
        assert "x-tool" not in tenant.requests[-1].headers


async def test_the_async_client_has_the_same_per_call_options() -> None:
    tenant = Tenant()
    async with AsyncClient(
        base_url=ORIGIN, auth=AsyncStaticSource("tok-1"), transport=httpx.MockTransport(tenant)
    ) as client:
        assert await client.get_user(timeout=5, headers={"X-Trace": "t2"}) == USER
        assert await client.with_options(retries=0).get_authenticated_user() == USER
    assert tenant.requests[0].headers["x-trace"] == "t2"


def test_the_package_has_a_version() -> None:
    import tenant_integration

    assert "__version__" in tenant_integration.__all__
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", tenant_integration.__version__)
