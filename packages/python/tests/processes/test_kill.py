"""The lock holder killed with SIGKILL in the middle of a refresh, on a token file and on Redis.

A Python process takes the lock and starts the refresh, but its request hangs before it reaches the
tenant (worker.py's VICTIM=before); the others, released meanwhile, wait on the lock; the holder is
killed with ``kill -9``. Its lock is then stale (the file lock's directory is no longer touched, the
Redis lease is no longer renewed): one of the others takes it over, refreshes once with the refresh
token nobody used, and every survivor gets the user. The session is the same one: the stored record
keeps its ``session`` id, and the tenant saw no refresh token presented twice.
"""

from __future__ import annotations

import json
import signal
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path

import redis

from tenant_integration.storage.file import FileStorage
from tenant_integration.storage.redis import RedisStorage
from tenant_integration.testing import SandboxProcess

from .fleet import (
    CLIENT_ID,
    REDIRECT_URI,
    Member,
    again,
    expire,
    refresh_outcomes,
    served,
    sign_in,
    start_fleet,
    stop_fleet,
)

SURVIVORS = 4
LEASE_MS = 2_000


def tokens_key(sandbox: SandboxProcess) -> str:
    """The key of the token record, the TypeScript kit's: ``tenant-integration:<origin>:<client id>:tokens``."""
    return f"tenant-integration:{sandbox.url}:{CLIENT_ID}:tokens"


def kill_the_holder(
    sandbox: SandboxProcess, env: Mapping[str, str], stored_record: Callable[[], dict[str, object]]
) -> None:
    victim = Member("python", {**env, "VICTIM": "before"})
    survivors: list[Member] = []
    try:
        victim.expect_ready()
        survivors = start_fleet("python", SURVIVORS, env)
        session = stored_record()["session"]
        seq = sandbox.last_seq()
        offset = expire(sandbox)
        victim.send(victim.go_command(offset))
        # The victim holds the lock and its refresh request hangs before it reaches the tenant.
        assert victim.next() == {"tokenRequest": True}
        for member in survivors:
            member.send(member.go_command(offset))
        victim.kill(signal.SIGKILL)
        assert victim.wait() == -signal.SIGKILL
        results = [member.result(member.next(timeout=90)) for member in survivors]

        assert served(results) == []
        assert [r["refreshed"] for r in results].count(True) == 1
        assert refresh_outcomes(sandbox, seq) == ["ok"]
        assert stored_record()["session"] == session
        later = again(survivors)
        assert served(later) == []
        assert not any(r["refreshed"] for r in later)
    finally:
        victim.kill()
        victim.wait()
        victim.close_pipes()
        stop_fleet(survivors)


def test_on_a_token_file_the_others_take_over_the_stale_lock_and_keep_the_session(
    sandbox: SandboxProcess, tmp_path: Path
) -> None:
    token_file = tmp_path / "tokens.json"
    sign_in(sandbox, FileStorage(token_file))
    env = {
        "STORAGE": "file",
        "TOKEN_FILE": str(token_file),
        "TENANT_URL": sandbox.url,
        "CLIENT_ID": CLIENT_ID,
        "REDIRECT_URI": REDIRECT_URI,
        "CLOCK_OFFSET_MS": str(round(sandbox.clock.offset_seconds * 1000)),
    }

    def stored_record() -> dict[str, object]:
        record: dict[str, object] = json.loads(json.loads(token_file.read_text())[tokens_key(sandbox)])
        return record

    kill_the_holder(sandbox, env, stored_record)


def test_on_redis_the_others_take_over_after_the_lease_and_keep_the_session(
    sandbox: SandboxProcess, redis_url: str
) -> None:
    prefix = f"kill-{uuid.uuid4().hex[:8]}:"
    connection = redis.Redis.from_url(redis_url)
    try:
        sign_in(sandbox, RedisStorage(connection, prefix=prefix))
        env = {
            "STORAGE": "redis",
            "REDIS_URL": redis_url,
            "PREFIX": prefix,
            "LEASE_MS": str(LEASE_MS),
            "TENANT_URL": sandbox.url,
            "CLIENT_ID": CLIENT_ID,
            "REDIRECT_URI": REDIRECT_URI,
            "CLOCK_OFFSET_MS": str(round(sandbox.clock.offset_seconds * 1000)),
        }

        def stored_record() -> dict[str, object]:
            value = connection.get(prefix + tokens_key(sandbox))
            assert isinstance(value, bytes)
            record: dict[str, object] = json.loads(value)
            return record

        kill_the_holder(sandbox, env, stored_record)
    finally:
        connection.close()
