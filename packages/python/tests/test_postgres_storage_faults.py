"""A PostgreSQL that fails under the storage, each test on a server of its own: restarted (every
connection lost), stopped (connections refused), hung (SIGSTOP: connections open, nothing answers), and a
hot standby given as the primary. Each is a typed error with the TypeScript and Go kits' code, within
``command_timeout``, and nothing stored is lost. The bounds asserted are the promise (a wait that never
ends is the bug), with a generous margin: "settles within the bound", never "is fast"."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from postgres_server import PostgresServer
from tenant_integration import TokenManagerError
from tenant_integration.storage.errors import PostgresStorageError
from tenant_integration.storage.postgres import PostgresLock, PostgresStorage, ensure_schema

ORIGIN, CLIENT = "https://acme.tenant.test", "demo"
TOKENS = f"tenant-integration:{ORIGIN}:{CLIENT}:tokens"
LOCK = f"tenant-integration:{ORIGIN}:{CLIENT}:lock"
COMMAND_TIMEOUT = 0.5
#: Slack for the scheduler and a loaded machine: the bound is the promise, not a speed.
MARGIN = 3.0


@pytest.fixture
def server(postgres_servers: Callable[..., PostgresServer]) -> PostgresServer:
    return postgres_servers()


@pytest.fixture
def pool(server: PostgresServer) -> Iterator[ConnectionPool[Any]]:
    # As an app would: a connect timeout, so that a server that is down fails a checkout in time.
    pool = ConnectionPool(server.url, min_size=1, max_size=4, open=True, kwargs={"connect_timeout": 2})
    ensure_schema(pool)
    yield pool
    pool.close(timeout=1)


def storage_of(pool: ConnectionPool[Any]) -> PostgresStorage:
    return PostgresStorage(pool, base_url=ORIGIN, client_id=CLIENT, command_timeout=COMMAND_TIMEOUT)


def failure_of(call: Callable[[], object]) -> tuple[BaseException, float]:
    """What ``call`` raised (it must raise a typed error of the kit), and how long it took."""
    started = time.monotonic()
    with pytest.raises((PostgresStorageError, TokenManagerError)) as caught:
        call()
    return caught.value, time.monotonic() - started


def test_a_restart_fails_the_calls_on_lost_connections_typed_and_loses_nothing(
    server: PostgresServer, pool: ConnectionPool[Any]
) -> None:
    storage = storage_of(pool)
    storage.set(TOKENS, "v")
    server.restart()
    failures: list[PostgresStorageError] = []
    value: str | None = None
    for _ in range(6):  # each lost connection fails one call, and is discarded
        try:
            value = storage.get(TOKENS)
            break
        except PostgresStorageError as e:
            failures.append(e)
    assert value == "v", failures
    assert all(e.code == "COMMAND_FAILED" for e in failures), failures
    assert all("the connection was lost" in str(e) or "no connection" in str(e) for e in failures), failures


@pytest.mark.parametrize("outage", ["hang", "down"])
def test_a_server_that_does_not_answer_fails_every_step_within_the_command_timeout(
    server: PostgresServer, pool: ConnectionPool[Any], outage: str
) -> None:
    storage = storage_of(pool)
    storage.set(TOKENS, "v")
    server.hang() if outage == "hang" else server.stop()
    try:
        for step in (lambda: storage.get(TOKENS), lambda: storage.set(TOKENS, "w")):
            error, took = failure_of(step)
            assert isinstance(error, PostgresStorageError)
            assert error.code == "COMMAND_FAILED"
            assert took < COMMAND_TIMEOUT * 2 + MARGIN, took
        error, took = failure_of(lambda: storage.lock(LOCK, lambda: None))
        assert isinstance(error, TokenManagerError)
        assert error.code == "STORAGE_FAILED"
        assert isinstance(error.cause, PostgresStorageError)
        assert error.cause.code == "LOCK_UNAVAILABLE"
        assert took < COMMAND_TIMEOUT * 2 + MARGIN, took
        if outage == "hang":
            assert "no answer within 0.5 s" in str(error.cause) or "no connection" in str(error.cause)
    finally:
        server.resume() if outage == "hang" else server.start()
    deadline = time.monotonic() + 10
    while True:
        try:
            # Down, the write never reached the server; hung, it was sent before the server stopped, and runs
            # when it resumes (the caller was told it failed: a retry writes the same): nothing else is lost.
            assert storage.get(TOKENS) in (("v", "w") if outage == "hang" else ("v",))
            break
        except PostgresStorageError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_a_hot_standby_given_as_the_primary_is_read_only(server: PostgresServer, pool: ConnectionPool[Any]) -> None:
    storage_of(pool).set(TOKENS, "v")
    standby = server.standby()
    replica = ConnectionPool(standby.url, min_size=1, max_size=3, open=True)
    try:
        with pytest.raises(PostgresStorageError) as caught:
            storage_of(replica).get(TOKENS)
        assert caught.value.code == "READ_ONLY"
        assert "hot standby" in str(caught.value)
        with pytest.raises(TokenManagerError) as locked:
            PostgresLock(replica)(LOCK, lambda: None)
        assert locked.value.code == "STORAGE_FAILED"
        assert isinstance(locked.value.cause, PostgresStorageError)
        assert locked.value.cause.code == "READ_ONLY"
    finally:
        replica.close()
        standby.close()


def test_a_read_only_default_is_read_only(server: PostgresServer) -> None:
    pool = ConnectionPool(server.url, min_size=1, max_size=2, open=True)
    try:
        ensure_schema(pool)
        read_only = ConnectionPool(
            server.url, min_size=1, max_size=2, open=True, kwargs={"options": "-c default_transaction_read_only=on"}
        )
        try:
            with pytest.raises(PostgresStorageError) as caught:
                storage_of(read_only).set(TOKENS, "v")
            assert caught.value.code == "READ_ONLY"
            assert "default_transaction_read_only" in str(caught.value)
        finally:
            read_only.close()
    finally:
        pool.close()
