"""One Python member of a fleet: its own token manager and storage, as an app or a worker of a data sync
runs them. Long-lived, driven over stdin/stdout with one JSON object per line, in the protocol of the
TypeScript fleet's child.mjs (packages/token-store-redis/test/fleet/child.mjs), so that tests can
start many of them, Python and Node side by side, and release them at the same instant.

Environment: TENANT_URL, CLIENT_ID, REDIRECT_URI; STORAGE=file (TOKEN_FILE) or redis (REDIS_URL, PREFIX,
LEASE_MS optional); CLOCK_OFFSET_MS (the sandbox's test clock offset at start, default 0);
SIGN_IN=1 (optional): sign in through the sandbox's auto-approve first when the storage holds no tokens;
VICTIM=before|after (optional): the first refresh request hangs before it is sent ("before"), or
after the tenant answered but before the manager sees the answer ("after"), so that a test can
SIGKILL the lock holder in the middle of a refresh.

In:  {"go": <clock offset ms>}   move this process's clock, then get a token and the user
     {"again": true}             get a token and the user again (no clock change)
     {"exit": true}
Out: {"ready": true} once warmed up (a token and the user fetched), then one {"result": ...} per command;
     {"tokenRequest": true} / {"tokenResponse": <status>} in VICTIM mode. Never a token.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

import httpx

from tenant_integration import TenantIntegrationError, TokenManager
from tenant_integration.storage.base import TokenStorage
from tenant_integration.testing import sign_in_through_sandbox

env = os.environ
offset_ms = int(env.get("CLOCK_OFFSET_MS", "0"))
victim = env.get("VICTIM")


def say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


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
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()


def make_storage() -> TokenStorage:
    if env["STORAGE"] == "file":
        from tenant_integration.storage.file import FileStorage

        return FileStorage(env["TOKEN_FILE"])
    import redis

    from tenant_integration.storage.redis import RedisStorage

    client = redis.Redis.from_url(env["REDIS_URL"])
    if env.get("LEASE_MS"):
        return RedisStorage(client, prefix=env["PREFIX"], lease=int(env["LEASE_MS"]) / 1000)
    return RedisStorage(client, prefix=env["PREFIX"])


manager = TokenManager(
    base_url=env["TENANT_URL"],
    client_id=env["CLIENT_ID"],
    redirect_uri=env["REDIRECT_URI"],
    scopes=["profile:read"],
    storage=make_storage(),
    now=lambda: time.time() + offset_ms / 1000,
    transport=VictimTransport(),
)
refreshed = False


def on_refreshed(_: object) -> None:
    global refreshed
    refreshed = True


manager.on("tokens-refreshed", on_refreshed)
http = httpx.Client(trust_env=False, timeout=30.0)


def get_user() -> httpx.Response:
    """GET /api/v1/auth/user with a token; after a 401, ``on_unauthorized`` and one retry (as the client does)."""

    def call() -> tuple[str, httpx.Response]:
        token = manager.get_access_token()
        return token, http.get(
            f"{env['TENANT_URL']}/api/v1/auth/user",
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
        )

    token, response = call()
    if response.status_code != 401:
        return response
    manager.on_unauthorized(token)
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
    global offset_ms
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
        say({"result": work()})


main()
