"""A mixed fleet: 5 Node processes (the TypeScript kit, its BUILT packages) and 5 Python processes sharing one
token file, then one Redis, released together (in a shuffled order) after the access token expired.
They read each other's records and wait on each other's locks: one refresh per expiry, every process
gets the user. Then a hand-off each way: the records one runtime writes, the other reads, refreshing
nothing.

Node on the file: packages/token-manager/src/testing/file-worker.mjs (``fileStorage(file)``, a new
manager per call, as a new run of a tool). Node on Redis: packages/token-store-redis/test/fleet/child.mjs
(``redisStorage``, one long-lived manager). Python: tests/processes/worker.py.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from pathlib import Path

import redis

from tenant_integration.storage.file import FileStorage
from tenant_integration.storage.redis import RedisStorage
from tenant_integration.testing import SandboxProcess

from .fleet import (
    CLIENT_ID,
    REDIRECT_URI,
    Member,
    expire,
    refresh_outcomes,
    release_together,
    served,
    sign_in,
    start_fleet,
    stop_fleet,
)

EACH = 5
TRIALS = 10


def offset_ms(sandbox: SandboxProcess) -> int:
    return round(sandbox.clock.offset_seconds * 1000)


def prove(sandbox: SandboxProcess, node: Sequence[Member], python: Sequence[Member]) -> None:
    """The mixed trials, then the hand-offs."""
    everyone = [*node, *python]
    for trial in range(1, TRIALS + 1):
        label = f"trial {trial}"
        order = random.Random(trial).sample(everyone, len(everyone))
        seq = sandbox.last_seq()
        results = release_together(order, expire(sandbox))
        assert served(results) == [], label
        assert refresh_outcomes(sandbox, seq) == ["ok"], label

    for first, second in ((node, python), (python, node)):
        seq = sandbox.last_seq()
        # One runtime refreshes (nobody else is released)...
        assert served(release_together(first, expire(sandbox))) == []
        assert refresh_outcomes(sandbox, seq) == ["ok"]
        # ...and the other, on the same clock, takes the record it wrote, refreshing nothing.
        assert served(release_together(second, offset_ms(sandbox))) == []
        assert refresh_outcomes(sandbox, seq) == ["ok"]


def test_node_and_python_processes_on_one_token_file(sandbox: SandboxProcess, tmp_path: Path) -> None:
    token_file = tmp_path / "state" / "tokens.json"
    sign_in(sandbox, FileStorage(token_file))
    python_env = {
        "STORAGE": "file",
        "TOKEN_FILE": str(token_file),
        "TENANT_URL": sandbox.url,
        "CLIENT_ID": CLIENT_ID,
        "REDIRECT_URI": REDIRECT_URI,
        "CLOCK_OFFSET_MS": str(offset_ms(sandbox)),
    }
    node: list[Member] = []
    python: list[Member] = []
    try:
        node = start_fleet("node-file", EACH, {}, [sandbox.url, str(token_file), CLIENT_ID, REDIRECT_URI])
        python = start_fleet("python", EACH, python_env)
        prove(sandbox, node, python)
    finally:
        stop_fleet([*node, *python])


def test_node_and_python_processes_on_one_redis(sandbox: SandboxProcess, redis_url: str) -> None:
    prefix = f"mixed-{uuid.uuid4().hex[:8]}:"
    connection = redis.Redis.from_url(redis_url)
    env = {
        "REDIS_URL": redis_url,
        "PREFIX": prefix,
        "TENANT_URL": sandbox.url,
        "CLIENT_ID": CLIENT_ID,
        "REDIRECT_URI": REDIRECT_URI,
    }
    node: list[Member] = []
    python: list[Member] = []
    try:
        sign_in(sandbox, RedisStorage(connection, prefix=prefix))
        env["CLOCK_OFFSET_MS"] = str(offset_ms(sandbox))
        node = start_fleet("node-redis", EACH, env)
        python = start_fleet("python", EACH, {**env, "STORAGE": "redis"})
        prove(sandbox, node, python)
    finally:
        stop_fleet([*node, *python])
        connection.close()
