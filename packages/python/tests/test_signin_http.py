"""The start and callback handlers of a server's sign-in (DESIGN-39 S6; spec/token-store/README.md,
"Decisions every kit follows"), as ASGI and WSGI apps driven the way a server calls them: the binding
cookie of spec/token-store/vectors/sessions.json, the callback refused in another browser and for
another user, the statuses and headers every kit answers with."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from fake_tenant import BASE_URL, CLIENT_ID, Clock, FakeTenant
from tenant_integration import AsyncSessions, Sessions
from tenant_integration.signin_http import AsgiSignIn, WsgiSignIn, cookie_binding, set_cookie

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[3] / "spec" / "token-store" / "vectors" / "sessions.json").read_text("utf-8")
)
REDIRECT = "https://app.example.org/tenant/callback"


@pytest.mark.parametrize("case", VECTORS["cookies"], ids=[c["redirectUri"] for c in VECTORS["cookies"]])
def test_the_binding_cookie_is_set_as_every_kit_sets_it(case: dict[str, Any]) -> None:
    header = set_cookie(case["redirectUri"], "B" * 43, case["pendingLifetimeMs"] / 1000)
    parts = header.split("; ")
    assert parts[0] == f"{case['name']}={'B' * 43}"
    assert f"Path={case['path']}" in parts
    assert f"Max-Age={case['maxAge']}" in parts
    assert ("HttpOnly" in parts) is case["httpOnly"]
    assert ("Secure" in parts) is case["secure"]
    assert f"SameSite={case['sameSite']}" in parts


@pytest.mark.parametrize(
    "case", VECTORS["bindingCookieValues"], ids=[c["value"] for c in VECTORS["bindingCookieValues"]]
)
def test_only_a_cookie_of_the_bindings_form_is_read(case: dict[str, Any]) -> None:
    found = cookie_binding(f"other=1; __Host-tenant-signin={case['value']}", REDIRECT)
    assert (found == case["value"]) is case["valid"]


class Wsgi:
    """Calls a WSGI app as a server does, with one browser's cookie jar."""

    def __init__(self) -> None:
        self.cookie: str | None = None

    def call(self, app: Any, method: str, url: str) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(url)
        environ = {"REQUEST_METHOD": method, "PATH_INFO": parts.path, "SCRIPT_NAME": "", "QUERY_STRING": parts.query}
        if self.cookie:
            environ["HTTP_COOKIE"] = self.cookie
        got: dict[str, Any] = {}

        def start_response(status: str, headers: list[tuple[str, str]]) -> None:
            got["status"], got["headers"] = int(status.split()[0]), headers

        body = b"".join(app(environ, start_response))
        headers = {k.lower(): v for k, v in got["headers"]}
        if "set-cookie" in headers:
            self.cookie = headers["set-cookie"].split(";")[0]
        return got["status"], headers, body


def wsgi_server(tenant: FakeTenant, user: dict[str, str | None], **options: Any) -> tuple[Sessions, WsgiSignIn]:
    sessions = Sessions(
        BASE_URL, CLIENT_ID, REDIRECT, ["profile:read"], now=Clock(time.time()), transport=tenant.transport
    )
    return sessions, WsgiSignIn(sessions, session_of=lambda _environ: user["id"], **options)


def test_wsgi_two_browsers_sign_their_own_users_in_and_a_replay_in_another_browser_is_refused() -> None:
    tenant = FakeTenant()
    user: dict[str, str | None] = {"id": "ada"}
    sessions, handlers = wsgi_server(tenant, user)
    ada_browser, bob_browser = Wsgi(), Wsgi()
    status, headers, _ = ada_browser.call(handlers.start, "GET", "https://app.example.org/tenant/start")
    assert status == 303
    assert headers["location"].startswith(f"{BASE_URL}/oauth/authorize?")
    assert headers["cache-control"] == "no-store"
    assert "HttpOnly" in headers["set-cookie"]
    assert "__Host-tenant-signin=" in headers["set-cookie"]
    ada_callback = tenant.approve(headers["location"], redirect_uri=REDIRECT)
    # The same callback in bob's browser (another binding) is refused before any exchange, and used up.
    user["id"] = "bob"
    bob_browser.call(handlers.start, "POST", "https://app.example.org/tenant/start")
    user["id"] = "ada"
    status, headers, body = bob_browser.call(handlers.callback, "GET", ada_callback)
    assert status == 400
    assert headers["referrer-policy"] == "no-referrer"
    assert body == (
        b"The sign-in could not be completed (STATE_MISMATCH): the sign-in was started in another browser;"
        b" start it again."
    )
    assert parse_qs(urlsplit(ada_callback).query)["state"][0].encode() not in body
    assert tenant.requests == []
    status, _, body = ada_browser.call(handlers.callback, "GET", ada_callback)
    assert status == 400  # used up by the refused replay: start again
    assert body == (
        b"The sign-in could not be completed (NO_PENDING_SIGN_IN): it was already used, or has expired; start it again."
    )
    status, headers, _ = ada_browser.call(handlers.start, "GET", "https://app.example.org/tenant/start")
    cookie = ada_browser.cookie
    status, headers, _ = ada_browser.call(
        handlers.callback, "GET", tenant.approve(headers["location"], redirect_uri=REDIRECT)
    )
    assert (status, headers["location"]) == (303, "/")
    assert ada_browser.cookie == cookie
    assert sessions.is_signed_in("ada")
    assert not sessions.is_signed_in("bob")


def test_wsgi_a_callback_for_another_logged_in_user_or_nobody_or_elsewhere_is_refused() -> None:
    tenant = FakeTenant()
    user: dict[str, str | None] = {"id": "ada"}
    sessions, handlers = wsgi_server(tenant, user)
    browser = Wsgi()
    _, headers, _ = browser.call(handlers.start, "GET", "https://app.example.org/tenant/start")
    callback = tenant.approve(headers["location"], redirect_uri=REDIRECT)
    assert browser.call(handlers.callback, "GET", callback.replace("/callback", "/other"))[0] == 404
    assert browser.call(handlers.callback, "POST", callback)[0] == 405
    assert browser.call(handlers.start, "PUT", "https://app.example.org/tenant/start")[0] == 405
    user["id"] = None
    assert browser.call(handlers.start, "GET", "https://app.example.org/tenant/start")[0] == 401
    assert browser.call(handlers.callback, "GET", callback)[0] == 401
    user["id"] = "mallory"
    errors: list[str] = []
    handlers._o.on_error = lambda error, _request: errors.append(getattr(error, "code", ""))
    assert browser.call(handlers.callback, "GET", callback)[0] == 400
    assert errors == ["STATE_MISMATCH"]
    assert not sessions.is_signed_in("ada")
    assert not sessions.is_signed_in("mallory")


def test_wsgi_a_storage_failure_is_503_try_later() -> None:
    class Down:
        lock = None

        def get(self, key: str) -> str | None:
            raise OSError("down")

        def set(self, key: str, value: str) -> None:
            raise OSError("down")

        def delete(self, key: str) -> None:
            raise OSError("down")

    tenant = FakeTenant()
    sessions = Sessions(BASE_URL, CLIENT_ID, REDIRECT, ["profile:read"], storage=Down(), transport=tenant.transport)
    handlers = WsgiSignIn(sessions, session_of=lambda _e: "ada")
    assert Wsgi().call(handlers.start, "GET", "https://app.example.org/tenant/start")[0] == 503


async def asgi(app: Any, method: str, url: str, cookie: str | None = None) -> tuple[int, dict[str, str]]:
    parts = urlsplit(url)
    headers = [(b"cookie", cookie.encode())] if cookie else []
    scope = {
        "type": "http",
        "method": method,
        "path": parts.path,
        "query_string": parts.query.encode(),
        "headers": headers,
    }
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, None, send)
    return sent[0]["status"], {k.decode(): v.decode() for k, v in sent[0]["headers"]}


async def test_asgi_a_user_signs_in_and_an_app_binding_replaces_the_cookie() -> None:
    tenant = FakeTenant()
    async with AsyncSessions(
        BASE_URL, CLIENT_ID, REDIRECT, ["profile:read"], transport=tenant.async_transport
    ) as sessions:

        async def session_of(_scope: Any) -> str:
            return "ada"

        handlers = AsgiSignIn(sessions, session_of=session_of, after_sign_in="/home")
        status, headers = await asgi(handlers.start, "GET", "https://app.example.org/tenant/start")
        assert status == 303
        cookie = headers["set-cookie"].split(";")[0]
        callback = tenant.approve(headers["location"], redirect_uri=REDIRECT)
        assert (await asgi(handlers.callback, "GET", callback))[0] == 400  # no cookie: another browser
        status, headers = await asgi(handlers.start, "GET", "https://app.example.org/tenant/start", cookie)
        assert headers["set-cookie"].split(";")[0] == cookie  # a valid cookie is kept
        status, headers = await asgi(
            handlers.callback, "GET", tenant.approve(headers["location"], redirect_uri=REDIRECT), cookie
        )
        assert (status, headers["location"]) == (303, "/home")
        assert await sessions.is_signed_in("ada")

        own = AsgiSignIn(sessions, session_of=session_of, binding_of=lambda _scope: "app-session-7f3a9c2e")
        status, headers = await asgi(own.start, "GET", "https://app.example.org/tenant/start")
        assert "set-cookie" not in headers
        status, _ = await asgi(own.callback, "GET", tenant.approve(headers["location"], redirect_uri=REDIRECT))
        assert status == 303
        assert len(tenant.grants("authorization_code")) == 2
