"""Canary tests: no token, code, verifier or state the manager handles appears in a log line, an error
(its message, attributes, cause and context, at any depth), an event payload or a printed object,
in any of the forms a secret takes when printed (raw, percent-encoded, form-encoded, JSON-escaped)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from fake_tenant import BASE_URL, CLIENT_ID, LIFETIME, REDIRECT_URI, Clock, FakeTenant
from tenant_integration import AsyncTokenManager, MemoryStorage, TokenManager, TokenManagerError
from tenant_integration._redact import secret_forms
from tenant_integration.pkce import create_pkce_pair

PAST_EXPIRY = LIFETIME + 1


class Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def captured() -> Iterator[Capture]:
    handler = Capture()
    logger = logging.getLogger("tenant_integration")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


def texts(value: object, seen: set[int] | None = None) -> Iterator[str]:
    """Every text reachable from ``value``: strings, bytes, reprs, exception messages, attributes,
    causes and contexts, at any depth."""
    seen = set() if seen is None else seen
    if value is None or isinstance(value, bool | int | float) or id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, str):
        yield value
    elif isinstance(value, bytes | bytearray):
        yield bytes(value).decode("utf-8", "replace")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from texts(key, seen)
            yield from texts(item, seen)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from texts(item, seen)
    else:
        yield repr(value)
        if isinstance(value, BaseException):
            yield str(value)
            yield from texts(value.args, seen)
            yield from texts(value.__cause__, seen)
            yield from texts(value.__context__, seen)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            # Printing shows what repr shows; the fields hidden from repr are the point of the check.
            return
        attributes = getattr(value, "__dict__", None)
        if isinstance(attributes, dict) and not isinstance(value, type | logging.Logger):
            yield from texts(attributes, seen)


def leaks(secrets: list[str], *observed: object) -> list[str]:
    forms = {form for secret in secrets for form in secret_forms(secret)}
    return sorted({form for text in texts(list(observed)) for form in forms if form in text})


def record_texts(records: list[logging.LogRecord]) -> list[object]:
    return [[r.getMessage(), r.args, r.exc_text, r.__dict__] for r in records]


def test_no_secret_appears_in_logs_errors_events_or_printed_objects(captured: Capture) -> None:
    tenant = FakeTenant()
    clock = Clock()
    errors: list[BaseException] = []
    events: list[object] = []

    def attempt(call: Any) -> object:
        try:
            return call()
        except TokenManagerError as e:
            errors.append(e)
            return None

    class EchoingStorage(MemoryStorage):
        """A storage whose failure message prints the value it was given (a badly written one)."""

        failing = False

        def set(self, key: str, value: str) -> None:
            if self.failing:
                raise OSError(f"cannot write {value}")
            super().set(key, value)

    storage = EchoingStorage()
    manager = TokenManager(
        BASE_URL, CLIENT_ID, REDIRECT_URI, ["profile:read"], storage=storage, now=clock, transport=tenant.transport
    )
    for event in ("tokens-refreshed", "session-ended", "revoked", "storage-failed"):
        manager.on(event, events.append)

    # A refused exchange whose description echoes the code and the verifier, percent-encoded.
    request = manager.begin_authorization()
    callback = tenant.approve(request.url)

    def echo_exchange(sent: httpx.Request) -> httpx.Response:
        body = sent.read().decode()
        return httpx.Response(400, json={"error": "invalid_grant", "error_description": f"bad {quote(body)}"})

    tenant.script.append(echo_exchange)
    attempt(lambda: manager.complete_authorization(callback))
    # A denied sign-in echoing the state; a state mismatch; a partial callback.
    request = manager.begin_authorization()
    denied = tenant.deny(request.url).replace("error_description=no", f"error_description=state+{request.state}")
    attempt(lambda: manager.complete_authorization(denied))
    request = manager.begin_authorization()
    attempt(lambda: manager.complete_authorization(tenant.approve(request.url).replace(request.state, "y" * 43)))
    bound = manager._begin(None, "b" * 43)  # a server's sign-in, bound to a browser: refused without its binding
    attempt(lambda: manager.complete_authorization(tenant.approve(bound.url)))
    attempt(lambda: manager.complete_authorization("?" + tenant.approve(request.url).split("?")[1]))
    # A sign-in, then a refresh, then a network error whose message holds the refresh token.
    request = manager.begin_authorization()
    sessions = [manager.complete_authorization(tenant.approve(request.url)), manager.get_session()]
    clock.advance(PAST_EXPIRY)
    tokens = [manager.get_access_token()]
    clock.advance(PAST_EXPIRY)

    def failing(sent: httpx.Request) -> httpx.Response:
        raise httpx.ReadError(f"connection reset while sending {sent.read().decode()}", request=sent)

    tenant.script.append(failing)
    attempt(manager.get_access_token)
    # Rotated tokens whose write fails with a message holding them.
    storage.failing = True
    tokens.append(manager.get_access_token())
    storage.failing = False
    # A refused revocation echoing the token; then invalid_grant echoing the refresh token.
    tenant.script.append(
        lambda sent: httpx.Response(400, json={"error": "invalid_request", "error_description": sent.read().decode()})
    )
    attempt(manager.revoke)
    clock.advance(PAST_EXPIRY)
    tenant.script.append(
        lambda sent: httpx.Response(400, json={"error": "invalid_grant", "error_description": sent.read().decode()})
    )
    attempt(manager.get_access_token)

    assert {getattr(e, "code", None) for e in errors} >= {
        "OAUTH_ERROR",
        "AUTHORIZATION_DENIED",
        "STATE_MISMATCH",
        "NO_PENDING_SIGN_IN",
        "INVALID_CALLBACK",
        "TRANSIENT",
        "SESSION_ENDED",
    }
    assert {type(e).__name__ for e in events} >= {"SessionInfo", "TokenManagerError", "SessionEndedError"}
    assert len(tenant.secrets) > 10
    observed = [errors, events, sessions, repr(manager), repr(request), repr(create_pkce_pair()), repr(storage)]
    assert leaks(tenant.secrets, *observed, record_texts(captured.records)) == []
    # The canary can fail: the tokens handed out are secrets, and are found.
    assert leaks(tenant.secrets, tokens) != []


async def test_the_async_manager_logs_and_raises_no_secret_either(captured: Capture) -> None:
    tenant = FakeTenant()
    clock = Clock()
    manager = AsyncTokenManager(
        BASE_URL, CLIENT_ID, REDIRECT_URI, ["profile:read"], now=clock, transport=tenant.async_transport
    )
    request = await manager.begin_authorization()
    await manager.complete_authorization(tenant.approve(request.url))
    clock.advance(PAST_EXPIRY)
    tenant.script.append(
        lambda sent: httpx.Response(400, json={"error": "invalid_grant", "error_description": sent.read().decode()})
    )
    errors: list[BaseException] = []
    results = await asyncio.gather(*(manager.get_access_token() for _ in range(3)), return_exceptions=True)
    errors += [r for r in results if isinstance(r, BaseException)]
    assert [getattr(e, "code", None) for e in errors] == ["SESSION_ENDED"] * 3
    assert leaks(tenant.secrets, errors, record_texts(captured.records)) == []
    assert any("Refresh started" in r.getMessage() for r in captured.records)
