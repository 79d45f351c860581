"""Sessions against the real sandbox (its several users, its rotation and reuse detection), and across
processes: two users signed in at once on one server each get their own account, and sessions served
by several Python processes sharing a token file or a Redis are each refreshed once after expiry, no
refresh token presented twice (the conformance suite's many-sessions scenario does it at scale).

The worker processes run this file as a script (``worker`` below)."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tenant_integration import Sessions, TokenManagerError
from tenant_integration.storage.file import FileStorage
from tenant_integration.testing import SandboxClock, SandboxProcess

CLIENT_ID = "test-integration"
REDIRECT_URI = "http://127.0.0.1:53682/callback"


def browser_callback(authorize_url: str, user: str) -> str:
    """Plays the browser: the sandbox auto-approves, as ``user`` (its sandbox-only parameter)."""
    with httpx.Client(trust_env=False, follow_redirects=False, timeout=10.0) as browser:
        answer = browser.get(f"{authorize_url}&sandbox_user={user}")
    assert answer.status_code in (302, 303), answer.status_code
    return answer.headers["location"]


def sessions_on(sandbox: SandboxProcess, storage: Any, now: Callable[[], float]) -> Sessions:
    return Sessions(sandbox.url, CLIENT_ID, REDIRECT_URI, ["profile:read"], storage=storage, now=now)


def test_two_users_signed_in_at_once_on_one_server_each_see_their_own_account(
    tenant_sandbox: SandboxProcess, tmp_path: Path
) -> None:
    with sessions_on(tenant_sandbox, FileStorage(tmp_path / "tokens.json"), tenant_sandbox.clock.now) as sessions:
        starts = {user: sessions.begin_sign_in(f"app-user-{user}") for user in ("42", "43")}
        callbacks = {user: browser_callback(start.url, user) for user, start in starts.items()}
        # The callback of 43's sign-in replayed in 42's browser: refused before any exchange, used up.
        with pytest.raises(TokenManagerError) as replayed:
            sessions.complete_sign_in(callbacks["43"], binding=starts["42"].binding)
        assert replayed.value.code == "STATE_MISMATCH"
        starts["43"] = sessions.begin_sign_in("app-user-43")
        callbacks["43"] = browser_callback(starts["43"].url, "43")
        for user in ("43", "42"):
            sessions.complete_sign_in(callbacks[user], binding=starts[user].binding, session_id=f"app-user-{user}")
        for user in ("42", "43"):
            with sessions.client(f"app-user-{user}") as client:
                assert str(client.get_user().get("id")) == user


def test_sessions_served_by_three_processes_at_once_are_each_refreshed_once(
    tenant_sandbox: SandboxProcess, tmp_path: Path, redis_url: str
) -> None:
    count, processes = 12, 3
    for kind in ("file", "redis"):
        storage_spec = (
            {"file": str(tmp_path / f"{kind}.json")}
            if kind == "file"
            else {
                "redis": redis_url,
                "prefix": f"trial-{secrets.token_hex(4)}:",
            }
        )
        storage = make_storage(storage_spec)
        with sessions_on(tenant_sandbox, storage, tenant_sandbox.clock.now) as sessions:
            ids = [f"s{n}" for n in range(count)]
            for session_id in ids:
                start = sessions.begin_sign_in(session_id)
                sessions.complete_sign_in(browser_callback(start.url, "42"), binding=start.binding)
        for _expiry in range(1):
            tenant_sandbox.advance(15 * 60 + 1)
            after = tenant_sandbox.last_seq()
            args = [tenant_sandbox.url, str(tenant_sandbox.clock.offset_seconds), json.dumps(storage_spec)]
            workers = [
                subprocess.Popen([sys.executable, __file__, *args, json.dumps(ids)], stdout=subprocess.PIPE, text=True)
                for _ in range(processes)
            ]
            tokens = [json.loads(worker.communicate(timeout=120)[0]) for worker in workers]
            assert all(worker.returncode == 0 for worker in workers)
            events = [e for e in tenant_sandbox.events(after=after) if e["grantType"] == "refresh_token"]
            assert [e for e in events if e["status"] != 200] == [], kind
            assert len(events) == count, kind  # one refresh per session, whichever process made it
            assert all(t == tokens[0] for t in tokens), kind  # every process serves each session's one token
            assert len(set(tokens[0].values())) == count, kind


def make_storage(spec: dict[str, str]) -> Any:
    if "file" in spec:
        return FileStorage(spec["file"])
    import redis

    from tenant_integration.storage.redis import RedisStorage

    return RedisStorage(redis.Redis.from_url(spec["redis"], socket_timeout=5), prefix=spec["prefix"])


def worker(url: str, offset: str, storage_spec: str, ids_text: str) -> None:
    """Serves every session at once (a thread each) and prints each session's access token."""
    clock = SandboxClock(float(offset))
    ids: list[str] = json.loads(ids_text)
    tokens: dict[str, str] = {}
    with Sessions(
        url, CLIENT_ID, REDIRECT_URI, ["profile:read"], storage=make_storage(json.loads(storage_spec)), now=clock.now
    ) as sessions:

        def serve(session_id: str) -> None:
            tokens[session_id] = sessions.get_access_token(session_id)

        threads = [threading.Thread(target=serve, args=(session_id,)) for session_id in ids]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    print(json.dumps(tokens, sort_keys=True))


if __name__ == "__main__":
    worker(*sys.argv[1:5])
