"""20 Python processes on one real redis-server, each with its own connection, ``RedisStorage`` and token
manager (tests/processes/worker.py), released at the same instant after the access token expired:
exactly one refresh per trial, every process gets the user, and a later call needs no refresh.
"""

from __future__ import annotations

import uuid

import redis

from tenant_integration.storage.redis import RedisStorage
from tenant_integration.testing import SandboxProcess

from .fleet import (
    CLIENT_ID,
    DEMO_USER_ID,
    REDIRECT_URI,
    again,
    expire,
    refresh_outcomes,
    release_together,
    served,
    sign_in,
    start_fleet,
    stop_fleet,
)

FLEET = 20
TRIALS = 20


def test_20_processes_on_one_redis_make_one_refresh_per_expiry_and_all_get_the_user(
    sandbox: SandboxProcess, redis_url: str
) -> None:
    prefix = f"fleet-{uuid.uuid4().hex[:8]}:"
    connection = redis.Redis.from_url(redis_url)
    sign_in(sandbox, RedisStorage(connection, prefix=prefix))
    env = {
        "STORAGE": "redis",
        "REDIS_URL": redis_url,
        "PREFIX": prefix,
        "TENANT_URL": sandbox.url,
        "CLIENT_ID": CLIENT_ID,
        "REDIRECT_URI": REDIRECT_URI,
        "CLOCK_OFFSET_MS": str(round(sandbox.clock.offset_seconds * 1000)),
    }
    fleet = start_fleet("python", FLEET, env)
    try:
        for trial in range(1, TRIALS + 1):
            label = f"trial {trial}"
            seq = sandbox.last_seq()
            results = release_together(fleet, expire(sandbox))
            assert served(results) == [], label
            assert {r["userId"] for r in results} == {DEMO_USER_ID}, label
            assert refresh_outcomes(sandbox, seq) == ["ok"], label
            assert [r["refreshed"] for r in results].count(True) == 1, label
            later = again(fleet)
            assert served(later) == [], label
            assert refresh_outcomes(sandbox, seq) == ["ok"], label
    finally:
        stop_fleet(fleet)
        connection.close()
