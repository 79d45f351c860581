"""A Python process with its own token manager and storage, as an app or a worker of a data sync runs
them. Long-lived, driven over stdin/stdout with one JSON object per line, for the single-process
pause tests (tests/processes/test_pause.py); fleets are the conformance suite's actors.

Environment: TENANT_URL, CLIENT_ID, REDIRECT_URI; STORAGE=file (TOKEN_FILE) or redis (REDIS_URL, PREFIX,
LEASE_MS optional); CLOCK_OFFSET_MS (the sandbox's test clock offset at start, default 0);
SIGN_IN=1 (optional): sign in through the sandbox's auto-approve first when the storage holds no tokens;
VICTIM=before|after (optional): the first refresh request hangs before it is sent ("before"), or
after the tenant answered but before the manager sees the answer ("after"), so that a test can
SIGKILL the lock holder in the middle of a refresh;
PAUSE=locked|in-flight|answered (optional): at the first refresh, the process stops itself with SIGSTOP
(the test sends SIGCONT): "locked" after taking the refresh lock and reading the record (before its
checks and its intent), "in-flight" 0.2 s after its request left (while it waits for the answer, its timer running;
a test makes the tenant slow), "answered" after the tenant's answer, before the manager reads it;
STALE_S, REQUEST_TIMEOUT_S, INTENT_WAIT_S (optional): FileStorage's stale_after, the manager's timeout
and intent_wait; ASYNC=1 (optional): AsyncTokenManager on one event loop instead of TokenManager.

In:  {"go": <clock offset ms>}   move this process's clock, then get a token and the user
     {"again": true}             get a token and the user again (no clock change)
     {"exit": true}
Out: {"ready": true} once warmed up (a token and the user fetched), then one {"result": ...} per command;
     {"tokenRequest": true} / {"tokenResponse": <status>} in VICTIM mode, {"paused": <where>} before a
     PAUSE stop. Never a token.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import httpx

from tenant_integration import AsyncTokenManager, TenantIntegrationError, TokenManager
from tenant_integration.storage.base import Lock, TokenStorage
from tenant_integration.testing import sign_in_through_sandbox

env = os.environ
offset_ms = int(env.get("CLOCK_OFFSET_MS", "0"))
victim = env.get("VICTIM")
# Armed by the first go command (the warm-up call takes the lock too).
pause: str | None = None
T = TypeVar("T")


def say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def stop_here(where: str) -> None:
    """Says where, then stops this process (SIGSTOP) until the test sends SIGCONT."""
    say({"paused": where})
    os.kill(os.getpid(), signal.SIGSTOP)


def is_refresh(request: httpx.Request) -> bool:
    return request.url.path.endswith("/oauth/token") and b"refresh_token" in request.read()


def pause_request(request: httpx.Request) -> bool:
    """For PAUSE=in-flight or answered, at the first refresh: arms the stop; returns whether to stop
    after the answer ("answered")."""
    global pause
    if pause not in ("in-flight", "answered") or not is_refresh(request):
        return False
    mode, pause = pause, None
    if mode == "answered":
        return True

    def trace(name: str, info: object) -> None:
        if name == "http11.receive_response_headers.started":
            # A moment later, while this thread waits for the answer with its read timer running.
            threading.Timer(0.2, stop_here, ["in-flight"]).start()

    async def async_trace(name: str, info: object) -> None:
        trace(name, info)

    request.extensions["trace"] = async_trace if env.get("ASYNC") == "1" else trace
    return False


class PausingLock:
    """The storage's lock, telling :class:`PausingStorage` while a task runs under it."""

    def __init__(self, inner: Lock) -> None:
        self._inner = inner
        self.is_held = getattr(inner, "is_held", lambda name: True)
        self.running = False

    def __call__(self, name: str, task: Callable[[], T]) -> T:
        def under() -> T:
            self.running = True
            try:
                return task()
            finally:
                self.running = False

        return self._inner(name, under)


class PausingStorage:
    """The storage, stopping this process (PAUSE=locked) once it has read the token record under the lock."""

    def __init__(self, inner: TokenStorage) -> None:
        self._inner = inner
        assert inner.lock is not None
        self.lock = PausingLock(inner.lock)

    def get(self, key: str) -> str | None:
        global pause
        value = self._inner.get(key)
        if pause == "locked" and self.lock.running and key.endswith(":tokens"):
            pause = None
            stop_here("locked")
        return value

    def set(self, key: str, value: str) -> None:
        self._inner.set(key, value)

    def delete(self, key: str) -> None:
        self._inner.delete(key)


class VictimTransport(httpx.BaseTransport):
    """Hands requests to the network, except the first refresh in VICTIM mode, which never returns."""

    def __init__(self) -> None:
        self._inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        global victim
        if victim and request.url.path.endswith("/oauth/token") and b"refresh_token" in request.read():
            mode, victim = victim, None
            say({"tokenRequest": True})
            if mode == "after":
                response = self._inner.handle_request(request)
                response.read()
                say({"tokenResponse": response.status_code})
            threading.Event().wait()  # held here until the test kills the process
        stop_after = pause_request(request)
        response = self._inner.handle_request(request)
        if stop_after:
            response.read()
            stop_here("answered")
        return response

    def close(self) -> None:
        self._inner.close()


class AsyncPausingTransport(httpx.AsyncBaseTransport):
    """The PAUSE points for AsyncTokenManager."""

    def __init__(self) -> None:
        self._inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        stop_after = pause_request(request)
        response = await self._inner.handle_async_request(request)
        if stop_after:
            await response.aread()
            stop_here("answered")
        return response


def make_storage() -> TokenStorage:
    if env["STORAGE"] == "file":
        from tenant_integration.storage.file import FileStorage

        return FileStorage(env["TOKEN_FILE"], stale_after=float(env.get("STALE_S", "10")))
    import redis

    from tenant_integration.storage.redis import RedisStorage

    client = redis.Redis.from_url(env["REDIS_URL"])
    if env.get("LEASE_MS"):
        return RedisStorage(client, prefix=env["PREFIX"], lease=int(env["LEASE_MS"]) / 1000)
    return RedisStorage(client, prefix=env["PREFIX"])


storage = PausingStorage(make_storage())
options: dict[str, Any] = {
    "base_url": env["TENANT_URL"],
    "client_id": env["CLIENT_ID"],
    "redirect_uri": env["REDIRECT_URI"],
    "scopes": ["profile:read"],
    "storage": storage,
    "lock": storage.lock,
    "now": lambda: time.time() + offset_ms / 1000,
    "timeout": float(env.get("REQUEST_TIMEOUT_S", "10")),
    "intent_wait": float(env.get("INTENT_WAIT_S", "20")),
}
loop = asyncio.new_event_loop()
async_manager = AsyncTokenManager(**options, transport=AsyncPausingTransport()) if env.get("ASYNC") == "1" else None
manager = TokenManager(**options, transport=VictimTransport())


def access_token() -> str:
    if async_manager is not None:
        return loop.run_until_complete(async_manager.get_access_token())
    return manager.get_access_token()


def on_unauthorized(token: str) -> None:
    if async_manager is not None:
        loop.run_until_complete(async_manager.on_unauthorized(token))
    else:
        manager.on_unauthorized(token)


refreshed = False


def on_refreshed(_: object) -> None:
    global refreshed
    refreshed = True


manager.on("tokens-refreshed", on_refreshed)
if async_manager is not None:
    async_manager.on("tokens-refreshed", on_refreshed)
http = httpx.Client(trust_env=False, timeout=30.0)


def get_user() -> httpx.Response:
    """GET /api/v1/auth/user with a token; after a 401, ``on_unauthorized`` and one retry (as the client does)."""

    def call() -> tuple[str, httpx.Response]:
        token = access_token()
        return token, http.get(
            f"{env['TENANT_URL']}/api/v1/auth/user",
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
        )

    token, response = call()
    if response.status_code != 401:
        return response
    on_unauthorized(token)
    return call()[1]


def work() -> dict[str, Any]:
    """A token and the user: what every member of the fleet needs to work."""
    global refreshed
    started = time.perf_counter()
    refreshed = False
    try:
        response = get_user()
        user = response.json() if response.status_code == 200 else None
        return {
            "ok": response.status_code == 200,
            "status": response.status_code,
            "userId": user and user.get("id"),
            "user": user and user.get("name"),
            "refreshed": refreshed,
            "ms": (time.perf_counter() - started) * 1000,
        }
    except TenantIntegrationError as error:
        return {"ok": False, "name": error.name, "code": error.code, "refreshed": refreshed}


def main() -> None:
    global offset_ms, pause
    armed = False
    if env.get("SIGN_IN") == "1" and not manager.is_signed_in():
        sign_in_through_sandbox(manager)
    warm = work()
    if not warm["ok"]:
        say({"result": warm})
        sys.exit(1)
    say({"ready": True})
    for line in sys.stdin:
        command = json.loads(line)
        if command.get("exit"):
            break
        if isinstance(command.get("go"), int):
            offset_ms = command["go"]
            if not armed:
                armed, pause = True, env.get("PAUSE")
        say({"result": work()})


main()
