"""Canaries: no token, code, verifier or state is ever printed by the client, in any form.

The forms looked for are raw, percent-encoded (both cases), form-encoded, JSON-escaped and base64
(standard and URL-safe, with and without padding): ``client_support.printed_forms``. The places looked
at are every log line at DEBUG (message, arguments and extra fields), and every error's message, repr,
attributes, traceback, cause and context.
"""

from __future__ import annotations

import base64
import json
import logging
from urllib.parse import quote, quote_plus

import httpx
import pytest

from client_support import (
    CANARIES,
    CANARY_CODE,
    CANARY_REFRESHED,
    CANARY_STATE,
    CANARY_TOKEN,
    CANARY_VERIFIER,
    ORIGIN,
    USER,
    AsyncFakeSource,
    AsyncSleeps,
    FakeSource,
    Sleeps,
    StaticSource,
    Tenant,
    everything_printed,
    leaks,
    printed_forms,
)
from tenant_integration import AsyncClient, Client, HttpError, NetworkError, ServerError, UnauthorizedError
from tenant_integration._log import RedactingLogger, scrub

# A query a user might (wrongly) put secrets in: the client must print none of it.
SECRET_QUERY = f"state={quote(CANARY_STATE)}&code={quote(CANARY_CODE)}&code_verifier={CANARY_VERIFIER}"


def echo_everything(status: int, token: str, **headers: str) -> httpx.Response:
    """An answer that echoes ``token`` in every form, in its body, its headers and its challenge."""
    b64 = base64.b64encode(token.encode()).decode()
    body = {
        "message": f"bad token {token}",
        "echo": [quote(token, safe=""), quote_plus(token), b64, b64.rstrip("="), json.dumps(token)],
        token: "as a key",
    }
    return httpx.Response(
        status,
        headers={
            "WWW-Authenticate": f'Bearer error="invalid_token", error_description="token {token} expired"',
            "X-Echo": f"Bearer {token}",
            "X-Echo-B64": b64,
            "Set-Cookie": f"session={token}",
            "X-Request-Id": "r-1",
            **headers,
        },
        json=body,
    )


def tenant_lines(records: list[logging.LogRecord]) -> str:
    """Every log record of the SDK, rendered, with all its attributes (extra fields included)."""
    return "\n".join(f"{r.getMessage()} {vars(r)}" for r in records if r.name.startswith("tenant_integration"))


def test_the_canary_forms_are_what_the_tests_look_for() -> None:
    # The check itself must be able to fail: each form of the canary is found by leaks().
    for form in printed_forms(CANARY_TOKEN):
        assert leaks(f"x {form} y") != []
    # "/", "+" and "=" make the percent-encoded forms (two cases) and the four base64 forms all differ.
    assert len(printed_forms(CANARY_TOKEN)) == 7


def test_a_refresh_retries_and_errors_print_no_canary_in_logs_or_errors(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    tenant = Tenant(
        echo_everything(401, CANARY_TOKEN),
        echo_everything(429, CANARY_REFRESHED, **{"Retry-After": "0"}),
        echo_everything(500, CANARY_REFRESHED),
    )
    source = FakeSource(CANARY_TOKEN, CANARY_REFRESHED)
    with (
        Client(base_url=ORIGIN, auth=source, transport=tenant.transport(), sleep=Sleeps(), retries=1) as client,
        pytest.raises(ServerError) as caught,
    ):
        client.request("GET", f"/api/v1/things?{SECRET_QUERY}")
    assert tenant.bearer_tokens() == [CANARY_TOKEN, CANARY_REFRESHED, CANARY_REFRESHED]  # the scenario ran
    assert "401: refreshing" in caplog.text  # and was logged
    assert "retry in" in caplog.text
    assert leaks(tenant_lines(caplog.records)) == []
    assert leaks(everything_printed(caught.value)) == []
    # httpx's own log lines carry the URL (with the query the user chose) but never a token.
    assert leaks(caplog.text, [CANARY_TOKEN, CANARY_REFRESHED]) == []
    error = caught.value
    # The echoing headers (X-Echo, X-Echo-B64, Set-Cookie, WWW-Authenticate) are dropped, the rest kept.
    assert set(error.headers) == {"x-request-id", "content-type", "content-length"}
    assert error.body["message"] == "bad token [redacted]"


def test_an_unauthorized_error_redacts_the_challenge_and_the_body(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    tenant = Tenant(echo_everything(401, CANARY_TOKEN))
    with (
        Client(base_url=ORIGIN, auth=StaticSource(CANARY_TOKEN), transport=tenant.transport()) as client,
        pytest.raises(UnauthorizedError) as caught,
    ):
        client.get_user()
    assert caught.value.error_description == "token [redacted] expired"
    assert leaks(everything_printed(caught.value)) == []
    assert leaks(tenant_lines(caplog.records)) == []


def test_a_network_error_prints_no_canary_and_holds_no_request(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    failure = httpx.ConnectError(f"cannot reach {ORIGIN}/api/v1/x?{SECRET_QUERY} with Bearer {CANARY_TOKEN}")
    tenant = Tenant(failure)
    with (
        Client(base_url=ORIGIN, auth=StaticSource(CANARY_TOKEN), transport=tenant.transport(), sleep=Sleeps()) as c,
        pytest.raises(NetworkError) as caught,
    ):
        c.request("GET", f"/api/v1/x?{SECRET_QUERY}")
    error = caught.value
    assert leaks(everything_printed(error)) == []
    assert leaks(tenant_lines(caplog.records)) == []
    assert error.__context__ is None
    cause = error.cause
    assert isinstance(cause, httpx.ConnectError)
    with pytest.raises(RuntimeError):
        cause.request  # noqa: B018 (the copy has no request, which would carry the Authorization header)


def test_a_users_own_httpx_auth_has_what_it_sent_redacted_too() -> None:
    tenant = Tenant(echo_everything(400, CANARY_TOKEN))
    auth = httpx.BasicAuth("client", CANARY_VERIFIER)
    with Client(base_url=ORIGIN, auth=auth, transport=tenant.transport()) as client, pytest.raises(HttpError) as caught:
        client.get_user()
    basic = base64.b64encode(f"client:{CANARY_VERIFIER}".encode()).decode()
    assert tenant.requests[0].headers["authorization"] == f"Basic {basic}"
    assert basic not in everything_printed(caught.value)


async def test_the_async_client_prints_no_canary_in_logs_or_errors(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    tenant = Tenant(echo_everything(401, CANARY_TOKEN), echo_everything(503, CANARY_REFRESHED, **{"Retry-After": "0"}))
    source = AsyncFakeSource(CANARY_TOKEN, CANARY_REFRESHED)
    async with AsyncClient(base_url=ORIGIN, auth=source, transport=tenant.transport(), sleep=AsyncSleeps()) as c:
        with pytest.raises(ServerError) as caught:
            await c.request("DELETE", f"/api/v1/things/1?{SECRET_QUERY}")
    assert len(tenant.requests) == 4  # 401, refresh, then 503 twice retried: 1 + 1 + 2
    assert leaks(tenant_lines(caplog.records)) == []
    assert leaks(everything_printed(caught.value)) == []


def test_log_lines_name_the_method_path_status_and_attempt(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="tenant_integration")
    tenant = Tenant(httpx.Response(503, headers={"Retry-After": "1"}), httpx.Response(200, json=USER))
    with Client(base_url=ORIGIN, auth=StaticSource("tok-12345678"), transport=tenant.transport(), sleep=Sleeps()) as c:
        c.request("GET", f"/api/v1/auth/user?{SECRET_QUERY}")
    lines = [(r.name, r.levelname, r.getMessage().split(" ms")[0]) for r in caplog.records]
    assert [(name, level) for name, level, _ in lines] == [
        ("tenant_integration.client", "INFO"),
        ("tenant_integration.client", "WARNING"),
        ("tenant_integration.client", "INFO"),
    ]
    assert lines[0][2].startswith("GET /api/v1/auth/user 503 ")
    assert lines[1][2] == "GET /api/v1/auth/user 503: retry in 1000ms (attempt 2)"
    assert lines[2][2].startswith("GET /api/v1/auth/user 200 ")
    assert caplog.records[2].__dict__["status"] == 200
    assert caplog.records[2].__dict__["attempt"] == 2


def test_the_client_logs_to_the_logger_it_is_given(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("my.app.tenant")
    caplog.set_level(logging.INFO, logger="my.app.tenant")
    with Client(base_url=ORIGIN, auth=StaticSource("tok-12345678"), transport=Tenant().transport(), logger=logger) as c:
        c.get_user()
    assert [r.name for r in caplog.records] == ["my.app.tenant"]


# -- the redacting logger on its own ----------------------------------------------------------------------


@pytest.mark.parametrize("secret", CANARIES)
def test_a_remembered_secret_is_scrubbed_in_every_form(secret: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="test.redacting")
    log = RedactingLogger(logging.getLogger("test.redacting"))
    log.remember(secret)
    for form in printed_forms(secret):
        log.debug("sent %s and %r", form, {"value": form}, extra={"field": f"x{form}x"})
    assert len(caplog.records) == len(printed_forms(secret))
    assert leaks(tenant_lines(caplog.records), [secret]) == []
    assert leaks("\n".join(f"{r.getMessage()} {r.__dict__['field']}" for r in caplog.records), [secret]) == []


def test_secrets_it_was_never_told_are_scrubbed_after_their_key_or_scheme() -> None:
    text = (
        f"GET /cb?code={quote(CANARY_CODE)}&state={quote(CANARY_STATE)} "
        f'{{"code_verifier": "{CANARY_VERIFIER}", "refresh_token":"{CANARY_REFRESHED}"}} '
        f"Authorization: Bearer {CANARY_TOKEN} Basic {base64.b64encode(b'a:' + CANARY_CODE.encode()).decode()}"
    )
    assert leaks(scrub(text)) == []
    assert "GET /cb?code=[redacted]&state=[redacted]" in scrub(text)


def test_an_exception_is_logged_as_its_scrubbed_message_without_a_traceback(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="test.redacting")
    log = RedactingLogger(logging.getLogger("test.redacting"))
    log.remember(CANARY_TOKEN)
    try:
        raise ValueError(f"token {CANARY_TOKEN} refused")
    except ValueError:
        log.exception("refresh failed")
    (record,) = caplog.records
    assert record.getMessage() == "refresh failed (ValueError: token [redacted] refused)"
    assert record.exc_info is None
    assert leaks(caplog.text) == []


def test_nothing_is_rendered_below_the_loggers_level() -> None:
    class Loud:
        def __str__(self) -> str:
            raise AssertionError("rendered although DEBUG is off")

    logger = logging.getLogger("test.redacting.quiet")
    logger.setLevel(logging.WARNING)
    RedactingLogger(logger).debug("%s", Loud())
