"""Test doubles for the client's tests: a scripted tenant behind httpx.MockTransport, token sources, canaries.

Not a test module (no ``test_`` prefix): the client tests import it.
"""

from __future__ import annotations

import base64
import json
import re
import traceback
from collections.abc import Callable, Iterable
from urllib.parse import quote, quote_plus

import httpx

ORIGIN = "https://acme.tenant.test"
USER = {"id": 42, "name": "Ada Lovelace"}

Answer = httpx.Response | Callable[[httpx.Request], httpx.Response] | Exception


class Tenant:
    """A scripted tenant: answers each request with the next answer of the script (the last one repeats),
    and records every request it saw, its body read."""

    def __init__(self, *answers: Answer) -> None:
        self._answers = list(answers) or [httpx.Response(200, json=USER)]
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        # A copy: the auth flow sends the same request object again after a 401, with another header.
        copy = httpx.Request(request.method, request.url, headers=request.headers.copy(), content=request.read())
        copy.extensions = dict(request.extensions)
        self.requests.append(copy)
        answer = self._answers.pop(0) if len(self._answers) > 1 else self._answers[0]
        if isinstance(answer, Exception):
            raise answer
        if callable(answer):
            return answer(request)
        # A Response object can be returned once only: each request gets a copy.
        return httpx.Response(answer.status_code, headers=answer.headers, content=answer.content)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)

    def bearer_tokens(self) -> list[str | None]:
        """The bearer token of each request seen, ``None`` for a request without one."""
        out: list[str | None] = []
        for request in self.requests:
            value = request.headers.get("authorization")
            out.append(value.removeprefix("Bearer ") if value else None)
        return out


class StaticSource:
    """A token source with one token and no refresh (as a static token)."""

    def __init__(self, token: str) -> None:
        self._token = token

    def get_access_token(self) -> str:
        return self._token


class FakeSource:
    """A refreshable token source: ``on_unauthorized`` moves to the next token of the list (if any)."""

    def __init__(self, *tokens: str, fail_with: Exception | None = None) -> None:
        self.tokens = list(tokens)
        self.index = 0
        self.rejected: list[str] = []
        self.fail_with = fail_with

    def get_access_token(self) -> str:
        return self.tokens[self.index]

    def on_unauthorized(self, rejected_token: str) -> None:
        self.rejected.append(rejected_token)
        if self.fail_with is not None:
            raise self.fail_with
        if self.tokens[self.index] == rejected_token and self.index + 1 < len(self.tokens):
            self.index += 1


class AsyncStaticSource:
    """The async twin of :class:`StaticSource`."""

    def __init__(self, token: str) -> None:
        self._token = token

    async def get_access_token(self) -> str:
        return self._token


class AsyncFakeSource:
    """The async twin of :class:`FakeSource`."""

    def __init__(self, *tokens: str, fail_with: Exception | None = None) -> None:
        self._sync = FakeSource(*tokens, fail_with=fail_with)

    @property
    def rejected(self) -> list[str]:
        return self._sync.rejected

    async def get_access_token(self) -> str:
        return self._sync.get_access_token()

    async def on_unauthorized(self, rejected_token: str) -> None:
        self._sync.on_unauthorized(rejected_token)


class Sleeps:
    """An injected sleep that records the waits and never waits."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


class AsyncSleeps:
    """The async twin of :class:`Sleeps`."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def unauthorized(description: str = "The access token expired") -> httpx.Response:
    return httpx.Response(
        401,
        headers={"WWW-Authenticate": f'Bearer realm="api", error="invalid_token", error_description="{description}"'},
        json={"error": "invalid_token"},
    )


# -- canaries: secrets that must never be printed, and every form they could be printed in ----------

CANARY_TOKEN = "cAnArY-Acc3ss.tok~en/x+y=="
CANARY_REFRESHED = "cAnArY-Refr3shed.tok~en/z+w="
CANARY_CODE = "cAnArY-c0de+with/slash"
CANARY_VERIFIER = "cAnArY-verifier-0123456789-abcdefghijklmnopqrstuvwxyz.~_"
CANARY_STATE = "cAnArY-st4te/with+plus="
CANARIES = (CANARY_TOKEN, CANARY_REFRESHED, CANARY_CODE, CANARY_VERIFIER, CANARY_STATE)


def printed_forms(secret: str) -> set[str]:
    """``secret`` as it could be printed: raw, percent-encoded (both cases), form-encoded, JSON-escaped,
    base64 (standard and URL-safe, padded or not)."""
    raw = secret.encode()
    b64 = base64.b64encode(raw).decode()
    b64url = base64.urlsafe_b64encode(raw).decode()
    percent = quote(secret, safe="")
    return {
        secret,
        percent,
        re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), percent),
        quote_plus(secret),
        json.dumps(secret)[1:-1],
        b64,
        b64.rstrip("="),
        b64url,
        b64url.rstrip("="),
    }


def leaks(text: str, secrets: Iterable[str] = CANARIES) -> list[str]:
    """The forms of ``secrets`` found in ``text`` (empty when none leaked)."""
    return sorted(form for secret in secrets for form in printed_forms(secret) if form in text)


def everything_printed(error: BaseException) -> str:
    """All an error shows: str, repr, args, attributes (recursively for exceptions), its formatted
    traceback, and the same for its cause and context chain."""
    parts: list[str] = []
    seen: set[int] = set()

    def visit(value: object, depth: int = 0) -> None:
        if id(value) in seen or depth > 6:
            return
        seen.add(id(value))
        parts.append(repr(value))
        if isinstance(value, BaseException):
            parts.append(str(value))
            parts.append("".join(traceback.format_exception(value)))
            for arg in value.args:
                visit(arg, depth + 1)
            visit(value.__cause__, depth + 1)
            visit(value.__context__, depth + 1)
        if hasattr(value, "__dict__"):
            for item in vars(value).values():
                visit(item, depth + 1)
        if isinstance(value, dict):
            for key, item in value.items():
                visit(key, depth + 1)
                visit(item, depth + 1)
        if isinstance(value, list | tuple):
            for item in value:
                visit(item, depth + 1)

    visit(error)
    return "\n".join(parts)
