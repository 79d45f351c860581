"""PostgresStorage and PostgresLock on a real PostgreSQL: the table every kit shares, a row per record as
the TypeScript and Go storages write it, the first-use check of the table, a transaction-scoped advisory
lock with a bounded wait, and errors with the other kits' codes that say which statement failed on which
row without ever holding a value (RFC 6749 §10.4, RFC 9700 §4.14.2)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from fake_tenant import signed_in_and_expired
from tenant_integration import AsyncTokenManager, TokenManagerError
from tenant_integration.errors import InvalidOptionsError
from tenant_integration.storage.errors import LockWaitEnded, PostgresStorageError
from tenant_integration.storage.postgres import PostgresLock, PostgresStorage, ensure_schema, schema_sql
from tenant_integration.storage.postgres._rows import Scope

REPO = Path(__file__).resolve().parents[3]
ORIGIN, CLIENT = "https://acme.tenant.test", "demo"
TOKENS = f"tenant-integration:{ORIGIN}:{CLIENT}:tokens"
INTENT = f"tenant-integration:{ORIGIN}:{CLIENT}:intent"
SESSION_TOKENS = f"tenant-integration:{ORIGIN}:{CLIENT}:42:tokens"
PENDING = f"tenant-integration:{ORIGIN}:{CLIENT}:pending:13d31e961a1ad8ec2f16b10c4c982e08"
LOCK = f"tenant-integration:{ORIGIN}:{CLIENT}:lock"
CANARY = "rt-canary-" + "7" * 24


def make_pool(url: str, max_size: int = 4, **kwargs: Any) -> ConnectionPool[Any]:
    return ConnectionPool(url, min_size=1, max_size=max_size, open=True, kwargs=kwargs or None)


@pytest.fixture
def pool(postgres_url: str) -> Iterator[ConnectionPool[Any]]:
    pool = make_pool(postgres_url)
    yield pool
    pool.close()


@pytest.fixture
def storage(pool: ConnectionPool[Any], postgres_table: str) -> PostgresStorage:
    ensure_schema(pool, postgres_table)
    return PostgresStorage(pool, base_url=ORIGIN, client_id=CLIENT, table=postgres_table, wait_slice=0.05)


def rows(url: str, table: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as connection:
        query = f"SELECT origin, client_id, session, kind, value, expires_at IS NOT NULL FROM {table} ORDER BY kind"  # noqa: S608 - the test's own table name
        return connection.execute(query).fetchall()


# -- the table and the rows, every kit's ---------------------------------------------------------


def test_the_schema_is_the_spec_file_every_kit_applies() -> None:
    assert schema_sql() == (REPO / "spec" / "token-store" / "postgres" / "schema.sql").read_text()
    assert schema_sql("billing.tokens").splitlines()[3] == 'CREATE TABLE "billing"."tokens" ('
    assert 'CONSTRAINT "tokens_pkey"' in schema_sql("billing.tokens")


def test_each_name_of_the_shared_vectors_maps_to_its_row() -> None:
    vectors = json.loads((REPO / "spec" / "token-store" / "vectors" / "sessions.json").read_text())
    seen = 0
    for scope in vectors["scopes"]:
        split = Scope.of(scope["origin"], scope["clientId"])
        for kind, row in scope.get("postgresRows", {}).items():
            found = split.row(scope["names"][kind])
            assert (found.origin, found.client_id, found.session, found.kind) == (
                row["origin"],
                row["client_id"],
                row["session"],
                row["kind"],
            )
            seen += 1
    for pending in vectors["pending"]:
        row = pending["postgresRow"]
        found = Scope.of(pending["origin"], pending["clientId"]).row(pending["name"])
        assert (found.session, found.kind) == (row["session"], row["kind"])
        seen += 1
    assert seen >= 4


def test_a_name_of_another_client_or_a_lock_is_unknown_name() -> None:
    scope = Scope.of(ORIGIN, CLIENT)
    for name in (f"tenant-integration:{ORIGIN}:other:tokens", LOCK, f"tenant-integration:{ORIGIN}:{CLIENT}:a b:tokens"):
        with pytest.raises(PostgresStorageError) as caught:
            scope.row(name)
        assert caught.value.code == "UNKNOWN_NAME"


def test_records_are_stored_one_row_each_as_the_other_kits_read_them(
    storage: PostgresStorage, postgres_url: str, postgres_table: str
) -> None:
    storage.set(TOKENS, '{"b":1,"a":2}')
    storage.set(INTENT, '{"fingerprint":"f"}')
    storage.set(SESSION_TOKENS, '{"s":"42"}')
    storage.set_expiring(PENDING, '{"state":"x"}', 60)
    assert rows(postgres_url, postgres_table) == [
        (ORIGIN, CLIENT, "", "intent", '{"fingerprint":"f"}', False),
        (ORIGIN, CLIENT, "", "pending:13d31e961a1ad8ec2f16b10c4c982e08", '{"state":"x"}', True),
        (ORIGIN, CLIENT, "", "tokens", '{"b":1,"a":2}', False),
        (ORIGIN, CLIENT, "42", "tokens", '{"s":"42"}', False),
    ], "text as written (not jsonb, which reorders keys), keyed by session and kind"
    assert storage.get(TOKENS) == '{"b":1,"a":2}'
    storage.set(TOKENS, "v2")
    assert storage.get(TOKENS) == "v2"
    storage.delete(TOKENS)
    assert storage.get(TOKENS) is None
    storage.delete(TOKENS)  # absent: succeeds
    assert storage.where(SESSION_TOKENS) == (
        f"{postgres_table} (origin, client_id, session, kind) = ('{ORIGIN}', '{CLIENT}', '42', 'tokens')"
    )


def test_a_pending_sign_in_is_taken_once_and_an_expired_one_reads_as_absent(storage: PostgresStorage) -> None:
    storage.set_expiring(PENDING, "p", 60)
    results: list[str | None] = []
    threads = [threading.Thread(target=lambda: results.append(storage.take(PENDING))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results, key=str) == [None, None, "p"], "of concurrent takes, one gets the record"
    storage.set_expiring(PENDING, "p", 0.001)
    time.sleep(0.05)
    assert storage.get(PENDING) is None
    assert storage.take(PENDING) is None


# -- the first-use check and ensure_schema --------------------------------------------------------


def test_a_missing_table_is_schema_missing_until_ensure_schema_creates_it_once(
    pool: ConnectionPool[Any], postgres_table: str
) -> None:
    storage = PostgresStorage(pool, base_url=ORIGIN, client_id=CLIENT, table=postgres_table)
    with pytest.raises(PostgresStorageError) as caught:
        storage.get(TOKENS)
    assert caught.value.code == "SCHEMA_MISSING"
    assert f"the table {postgres_table} does not exist" in str(caught.value)
    assert "ensure_schema" in str(caught.value)
    assert ensure_schema(pool, postgres_table) is True
    assert ensure_schema(pool, postgres_table) is False, "a second call changes nothing"
    storage.set(TOKENS, "v")  # the same storage: the failed check is made again
    assert storage.get(TOKENS) == "v"


def test_processes_starting_together_create_the_table_once(postgres_url: str, postgres_table: str) -> None:
    pools = [make_pool(postgres_url, max_size=2) for _ in range(4)]
    created: list[bool] = []
    try:
        threads = [threading.Thread(target=lambda p=p: created.append(ensure_schema(p, postgres_table))) for p in pools]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for p in pools:
            p.close()
    assert sorted(created) == [False, False, False, True]


def test_another_applications_table_is_schema_mismatch_and_nothing_is_written(
    pool: ConnectionPool[Any], postgres_url: str, postgres_table: str
) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute(f"CREATE TABLE {postgres_table} (id int)")
    storage = PostgresStorage(pool, base_url=ORIGIN, client_id=CLIENT, table=postgres_table)
    with pytest.raises(PostgresStorageError) as caught:
        storage.set(TOKENS, CANARY)
    assert caught.value.code == "SCHEMA_MISMATCH"
    assert "it has no comment" in str(caught.value)
    with pytest.raises(PostgresStorageError) as refused:
        ensure_schema(pool, postgres_table)
    assert refused.value.code == "SCHEMA_MISMATCH"
    assert rows_of(postgres_url, postgres_table) == 0


def rows_of(url: str, table: str) -> int:
    with psycopg.connect(url, autocommit=True) as connection:
        return int(connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # type: ignore[index]  # noqa: S608


def test_a_changed_column_is_schema_mismatch_and_the_message_never_holds_the_value(
    storage: PostgresStorage, postgres_url: str, postgres_table: str
) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute(f"ALTER TABLE {postgres_table} ADD COLUMN owner text NOT NULL")
    with pytest.raises(PostgresStorageError) as caught:
        storage.set(TOKENS, CANARY)
    error = caught.value
    assert error.code == "SCHEMA_MISMATCH"
    assert "23502" in str(error)
    assert "INSERT of " + postgres_table in str(error)
    # PostgreSQL's DETAIL quotes the failing row, the refresh token with it: never kept.
    for text in (str(error), repr(error), str(error.cause), repr(error.cause)):
        assert CANARY not in text


def test_a_statement_timeout_is_command_failed_saying_so(
    storage: PostgresStorage, postgres_url: str, postgres_table: str
) -> None:
    storage.set(TOKENS, "v")
    slow = make_pool(postgres_url, options="-c statement_timeout=300")
    try:
        timed_out = PostgresStorage(slow, base_url=ORIGIN, client_id=CLIENT, table=postgres_table)
        with psycopg.connect(postgres_url) as holder:
            holder.execute(f"SELECT 1 FROM {postgres_table} WHERE kind = 'tokens' FOR UPDATE")  # noqa: S608
            with pytest.raises(PostgresStorageError) as caught:
                timed_out.set(TOKENS, "w")
        assert caught.value.code == "COMMAND_FAILED"
        assert "statement_timeout" in str(caught.value)
        assert "57014" in str(caught.value)
        assert storage.get(TOKENS) == "v", "nothing written"
    finally:
        slow.close()


def test_bad_options_are_refused_at_construction_naming_them(postgres_url: str) -> None:
    one = make_pool(postgres_url, max_size=1)
    try:
        with pytest.raises(InvalidOptionsError, match="max_lock_connections"):
            PostgresStorage(one, base_url=ORIGIN, client_id=CLIENT)
    finally:
        one.close()
    pool = make_pool(postgres_url)
    try:
        for options, name in (
            ({"table": "Tokens"}, "table"),
            ({"table": "a.b.c"}, "table"),
            ({"command_timeout": 0}, "command_timeout"),
            ({"base_url": "https://acme.tenant.test/api"}, "base_url"),
            ({"client_id": ""}, "client_id"),
        ):
            given: dict[str, Any] = {"base_url": ORIGIN, "client_id": CLIENT, **options}
            with pytest.raises(InvalidOptionsError) as caught:
                PostgresStorage(pool, **given)
            assert caught.value.option == name
            assert caught.value.code == "INVALID_OPTIONS"
    finally:
        pool.close()


async def test_on_an_async_pool_the_async_manager_signs_in_and_refreshes_once(
    postgres_url: str, postgres_table: str
) -> None:
    from fake_tenant import BASE_URL, CLIENT_ID, LIFETIME, REDIRECT_URI, Clock, FakeTenant

    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(postgres_url, min_size=1, max_size=4, open=False)
    await pool.open()
    try:
        assert await ensure_schema(pool, postgres_table) is True
        storage = PostgresStorage(pool, base_url=BASE_URL, client_id=CLIENT_ID, table=postgres_table, wait_slice=0.05)
        tenant, clock = FakeTenant(), Clock()
        manager = AsyncTokenManager(
            BASE_URL,
            CLIENT_ID,
            REDIRECT_URI,
            ["profile:read"],
            now=clock,
            transport=tenant.async_transport,
            retry_delay=0,
            storage=storage,
        )
        await manager.complete_authorization(tenant.approve((await manager.begin_authorization()).url))
        clock.advance(LIFETIME + 1)
        tokens = await asyncio.gather(*(manager.get_access_token() for _ in range(5)))
        assert tenant.refreshes == 1
        assert len(set(tokens)) == 1
        stored = await asyncio.to_thread(storage.get, f"tenant-integration:{BASE_URL}:{CLIENT_ID}:tokens")
        assert json.loads(stored or "{}")["access_token"] == tokens[0]
        # Called on the pool's own loop, a statement would wait for that loop: refused, saying what to do.
        with pytest.raises(RuntimeError, match="worker thread"):
            storage.get(f"tenant-integration:{BASE_URL}:{CLIENT_ID}:tokens")
        await manager.aclose()
    finally:
        await pool.close()


def test_an_async_pool_needs_the_storage_made_on_its_loop(postgres_url: str) -> None:
    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(postgres_url, open=False)
    with pytest.raises(InvalidOptionsError, match="make the storage in a coroutine of the event loop"):
        PostgresStorage(pool, base_url=ORIGIN, client_id=CLIENT)


def hold(entered: threading.Event, release: threading.Event) -> None:
    """A task that says it runs, then holds the lock until released."""
    entered.set()
    release.wait()


# -- the lock ----------------------------------------------------------------------------------------


def test_the_lock_lets_one_holder_at_a_time_run_its_task(postgres_url: str) -> None:
    pools = [make_pool(postgres_url) for _ in range(2)]
    locks = [PostgresLock(p, wait_slice=0.02) for p in pools]
    inside = most = done = 0
    guard = threading.Lock()

    def task() -> None:
        nonlocal inside, most, done
        with guard:
            inside += 1
            most = max(most, inside)
        time.sleep(0.01)
        with guard:
            inside -= 1
            done += 1

    threads = [threading.Thread(target=lambda i=i: locks[i % 2](LOCK, task)) for i in range(8)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for p in pools:
            p.close()
    assert (most, done) == (1, 8)


def test_a_lock_another_session_holds_is_waited_for_within_a_bound_then_lock_timeout_naming_it(
    postgres_url: str,
) -> None:
    holder = make_pool(postgres_url, application_name="the-holder")
    waiter = make_pool(postgres_url)
    entered, release = threading.Event(), threading.Event()
    thread = threading.Thread(target=lambda: PostgresLock(holder)(LOCK, lambda: hold(entered, release)))
    thread.start()
    try:
        assert entered.wait(10)
        started = time.monotonic()
        with pytest.raises(PostgresStorageError) as caught:
            PostgresLock(waiter, wait_timeout=0.5, wait_slice=0.1)(LOCK, lambda: None)
        assert caught.value.code == "LOCK_TIMEOUT"
        assert time.monotonic() - started >= 0.5
        assert "application_name 'the-holder'" in str(caught.value)
        assert "by the server process" in str(caught.value)
    finally:
        release.set()
        thread.join()
        holder.close()
        waiter.close()


def test_until_ends_the_wait_and_a_release_lets_the_waiter_in(postgres_url: str) -> None:
    pool = make_pool(postgres_url, max_size=6)
    entered, release = threading.Event(), threading.Event()
    thread = threading.Thread(target=lambda: PostgresLock(pool)(LOCK, lambda: hold(entered, release)))
    thread.start()
    try:
        assert entered.wait(10)
        asked = 0

        def until() -> bool:
            nonlocal asked
            asked += 1
            return asked == 3

        with pytest.raises(LockWaitEnded):
            PostgresLock(pool, wait_slice=0.02)(LOCK, lambda: pytest.fail("the task must not run"), until=until)
        assert asked == 3
        threading.Timer(0.2, release.set).start()
        started = time.monotonic()
        assert PostgresLock(pool, wait_slice=5)(LOCK, lambda: "in") == "in"
        assert time.monotonic() - started < 4, (
            "the release woke the waiter blocked in the server, before its slice ended"
        )
    finally:
        release.set()
        thread.join()
        pool.close()


def test_is_held_is_false_once_the_lock_connection_is_dropped_mid_refresh(
    pool: ConnectionPool[Any], postgres_url: str
) -> None:
    lock = PostgresLock(pool)

    def task() -> tuple[bool, bool]:
        before = lock.is_held(LOCK)
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                "AND pid <> pg_backend_pid()"
            )
        return before, lock.is_held(LOCK)

    assert lock(LOCK, task) == (True, False)
    assert not lock.is_held(LOCK), "nobody holds it outside a task"
    assert lock(LOCK, lambda: "again") == "again", "the pool hands out a working connection after"


def test_a_killed_holders_lock_is_released_by_the_server_at_once(pool: ConnectionPool[Any], postgres_url: str) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from psycopg_pool import ConnectionPool; "
            "from tenant_integration.storage.postgres import PostgresLock; "
            f"p = ConnectionPool({postgres_url!r}, min_size=1, max_size=2, open=True); "
            f"PostgresLock(p)({LOCK!r}, lambda: (print('held', flush=True), time.sleep(600)))",
        ],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO / "packages" / "python" / "src")},
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == b"held"
        with pytest.raises(PostgresStorageError, match="LOCK_TIMEOUT"):
            PostgresLock(pool, wait_timeout=0.3, wait_slice=0.05)(LOCK, lambda: None)
        holder.kill()
        holder.wait()
        assert PostgresLock(pool, wait_timeout=10)(LOCK, lambda: "taken") == "taken"
    finally:
        holder.kill()
        holder.wait()


# -- the token manager on it -------------------------------------------------------------------------


def test_callers_of_a_manager_on_the_database_refresh_once_and_store_the_tokens(
    storage: PostgresStorage,
) -> None:
    from fake_tenant import BASE_URL, CLIENT_ID

    shared = PostgresStorage(
        storage._pool, base_url=BASE_URL, client_id=CLIENT_ID, table=storage._table.text, wait_slice=0.05
    )
    manager, tenant = signed_in_and_expired(shared)
    tokens: list[str] = []
    threads = [threading.Thread(target=lambda: tokens.append(manager.get_access_token())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert tenant.refreshes == 1
    assert len(set(tokens)) == 1
    stored = json.loads(shared.get(f"tenant-integration:{BASE_URL}:{CLIENT_ID}:tokens") or "{}")
    assert stored["access_token"] == tokens[0]


def test_a_lock_that_gets_no_connection_is_storage_failed(postgres_url: str, postgres_table: str) -> None:
    pool = make_pool(postgres_url, max_size=2)
    try:
        ensure_schema(pool, postgres_table)
        lock = PostgresLock(pool, command_timeout=0.5)
        pool.close()
        with pytest.raises(TokenManagerError) as caught:
            lock(LOCK, lambda: None)
        assert caught.value.code == "STORAGE_FAILED"
        assert isinstance(caught.value.cause, PostgresStorageError)
        assert caught.value.cause.code == "LOCK_UNAVAILABLE"
    finally:
        pool.close()
