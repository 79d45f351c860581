"""A tenant's OAuth endpoints in memory, behind ``httpx.MockTransport``, for the token manager's unit tests.

It approves authorization requests (checking the PKCE challenge at the exchange), rotates refresh
tokens strictly (a rotated-away one answers ``invalid_grant``), takes revocations, and records every
request. Tests script the answers to the next requests (``tenant.script``), hold a refresh until
released (``tenant.hold``), and read what was sent (``tenant.requests``).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

from tenant_integration import TokenManager
from tenant_integration.storage import TokenStorage

BASE_URL = "https://acme.tenant.test"
CLIENT_ID = "demo-integration"
REDIRECT_URI = "http://127.0.0.1:53682/callback"
LIFETIME = 900

Script = Callable[[httpx.Request], httpx.Response]


@dataclass
class Sent:
    """One request the tenant received: its path, content type and parsed body."""

    path: str
    content_type: str
    body: dict[str, Any]

    @property
    def grant(self) -> str | None:
        value = self.body.get("grant_type")
        return value if isinstance(value, str) else None


class FakeTenant:
    """The tenant's ``/oauth/token`` and ``/oauth/revoke``, strict rotation, scripted failures."""

    def __init__(self, *, rotate: bool = True, scope: str | None = "profile:read") -> None:
        self.rotate = rotate
        self.scope = scope
        self.requests: list[Sent] = []
        self.script: list[Script] = []
        self.hold: threading.Event | None = None
        self.held = threading.Event()
        #: Run once when the next refresh request arrives, before it is answered: a fault that begins
        #: while the request is in flight (after the refresh intent was written).
        self.on_refresh: Callable[[], None] | None = None
        self._codes: dict[str, str] = {}
        self._refresh_tokens: set[str] = set()
        self._issued = 0
        self._mutex = threading.Lock()
        #: Access tokens the API accepts (a test may discard one, as a tenant that revoked it early).
        self.accepted: set[str] = set()
        #: Every token, code and state this tenant issued or saw, and every verifier sent: what must never leak.
        self.secrets: list[str] = []
        self.transport = httpx.MockTransport(self.handle)
        # For AsyncTokenManager: the handler runs in a worker thread, so a held refresh blocks no loop.
        self.async_transport = httpx.MockTransport(self.handle_async)

    # -- the browser's part ----------------------------------------------------------------------

    def approve(self, authorize_url: str, *, redirect_uri: str = REDIRECT_URI) -> str:
        """Plays the user approving: returns the callback URL with a new code and the unchanged state."""
        query = {k: v[0] for k, v in parse_qs(urlsplit(authorize_url).query).items()}
        with self._mutex:
            self._issued += 1
            code = f"code-{self._issued}-AbCdEfGhIj"
            self._codes[code] = query["code_challenge"]
            self.secrets += [code, query["state"]]
        return f"{redirect_uri}?{urlencode({'code': code, 'state': query['state']})}"

    def deny(self, authorize_url: str, *, redirect_uri: str = REDIRECT_URI) -> str:
        """Plays the user denying: the callback carries ``error=access_denied`` and the state."""
        state = parse_qs(urlsplit(authorize_url).query)["state"][0]
        return f"{redirect_uri}?{urlencode({'error': 'access_denied', 'error_description': 'no', 'state': state})}"

    # -- what was sent -----------------------------------------------------------------------------

    def grants(self, kind: str) -> list[Sent]:
        """The token requests of ``grant_type`` ``kind``, in order."""
        return [r for r in self.requests if r.path == "/oauth/token" and r.grant == kind]

    @property
    def refreshes(self) -> int:
        """How many refresh requests reached the tenant."""
        return len(self.grants("refresh_token"))

    # -- the endpoints -----------------------------------------------------------------------------

    def _tokens(self, refresh: bool) -> dict[str, Any]:
        self._issued += 1
        n = self._issued
        body: dict[str, Any] = {"access_token": f"at-{n}-QwErTyUiOp", "token_type": "Bearer", "expires_in": LIFETIME}
        if self.scope is not None:
            body["scope"] = self.scope
        if not refresh or self.rotate:
            body["refresh_token"] = f"rt-{n}-AsDfGhJkLz"
            self._refresh_tokens.add(body["refresh_token"])
        self.secrets += [v for k, v in body.items() if k.endswith("_token")]
        self.accepted.add(body["access_token"])
        return body

    async def handle_async(self, request: httpx.Request) -> httpx.Response:
        return await asyncio.to_thread(self.handle, request)

    def handle(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/api/v1/"):
            return self._api(request)
        content_type = request.headers.get("content-type", "")
        raw = request.read().decode()
        body: dict[str, Any] = (
            json.loads(raw) if content_type == "application/json" else {k: v[0] for k, v in parse_qs(raw).items()}
        )
        sent = Sent(request.url.path, content_type, body)
        with self._mutex:
            self.requests.append(sent)
            self.secrets += [str(body[k]) for k in ("code_verifier", "code", "refresh_token", "token") if k in body]
            scripted = self.script.pop(0) if self.script else None
        if scripted is not None:
            return scripted(request)
        if request.url.path == "/oauth/revoke":
            return httpx.Response(200)
        if sent.grant == "refresh_token" and self.on_refresh is not None:
            run, self.on_refresh = self.on_refresh, None
            run()
        if sent.grant == "refresh_token" and self.hold is not None:
            self.held.set()
            self.hold.wait(timeout=30)
        with self._mutex:
            return self._token(sent)

    def _api(self, request: httpx.Request) -> httpx.Response:
        """``GET /api/v1/auth/user``: 200 for an accepted bearer token, else 401 (RFC 6750 §3.1)."""
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        with self._mutex:
            self.requests.append(Sent(request.url.path, "", {}))
            ok = token in self.accepted
        if not ok:
            return httpx.Response(401, headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
        return httpx.Response(200, json={"id": 42, "name": "Ada Lovelace"})

    def _token(self, sent: Sent) -> httpx.Response:
        body = sent.body
        if sent.grant == "authorization_code":
            challenge = self._codes.pop(str(body.get("code")), None)
            verifier = str(body.get("code_verifier", ""))
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if challenge is None or digest != challenge:
                return httpx.Response(400, json={"error": "invalid_grant", "error_description": "bad code"})
            return httpx.Response(200, json=self._tokens(refresh=False))
        if sent.grant == "refresh_token":
            token = str(body.get("refresh_token"))
            if token not in self._refresh_tokens:
                return httpx.Response(400, json={"error": "invalid_grant", "error_description": "refresh token reused"})
            if self.rotate:
                self._refresh_tokens.discard(token)
            return httpx.Response(200, json=self._tokens(refresh=True))
        return httpx.Response(400, json={"error": "unsupported_grant_type"})


class Clock:
    """A clock the test moves: seconds since the epoch."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.t = start

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


def manager_of(tenant: FakeTenant, **options: Any) -> TokenManager:
    """A sync manager of the tests' client (``BASE_URL``, ``CLIENT_ID``, ``REDIRECT_URI``, scope
    ``profile:read``) whose requests go to ``tenant``; ``options`` are the manager's other options."""
    return TokenManager(BASE_URL, CLIENT_ID, REDIRECT_URI, ["profile:read"], transport=tenant.transport, **options)


def signed_in_to(tenant: FakeTenant, **options: Any) -> TokenManager:
    """:func:`manager_of`, signed in to ``tenant`` (it approves the authorization request)."""
    manager = manager_of(tenant, **options)
    manager.complete_authorization(tenant.approve(manager.begin_authorization().url))
    return manager


def signed_in_and_expired(storage: TokenStorage) -> tuple[TokenManager, FakeTenant]:
    """A sync manager on ``storage``, signed in to a new :class:`FakeTenant`, its access token expired
    (the manager's clock moved past its lifetime): its next call refreshes."""
    tenant, clock = FakeTenant(), Clock()
    manager = signed_in_to(tenant, now=clock, retry_delay=0, storage=storage)
    clock.advance(LIFETIME + 1)
    return manager, tenant
