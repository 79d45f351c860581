"""The manager reads before it locks (issue 28), sync and async: where processes share a storage, fresh
tokens another process stored are served without the refresh lock, and a wait for the lock ends as
soon as another process stored fresh ones (the lock's ``until``), instead of each waiter taking the
lock in turn only to read them. The TypeScript and Go managers do the same (Go: ``readFirst``,
``WaitingLock``).

The fakes record what the manager asks of the lock; the real Redis lock (against a redis-server) and
the real file lock show the same with a holder that keeps the lock for as long as the test runs.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from fake_tenant import BASE_URL, CLIENT_ID, LIFETIME, REDIRECT_URI, Clock, FakeTenant
from tenant_integration import AsyncTokenManager, TokenManager
from tenant_integration.storage.file import FileStorage
from tenant_integration.storage.redis import LockWaitEnded, RedisLock, RedisStorage, redis_key

TOKENS = f"tenant-integration:{BASE_URL}:{CLIENT_ID}:tokens"
LOCK = f"tenant-integration:{BASE_URL}:{CLIENT_ID}:lock"
PAST_EXPIRY = LIFETIME + 1
#: A bound on a join, so that a manager still waiting (the behaviour guarded against) fails the test
#: instead of hanging it; far above the time a served token takes on a loaded machine.
JOIN = 30.0


class SharedStorage:
    """A storage the processes share (not a MemoryStorage, so refresh intents are used), counting reads."""

    def __init__(self) -> None:
        self.data: dict[str, str] = {}
        self.reads = 0

    def get(self, key: str) -> str | None:
        self.reads += 1
        return self.data.get(key)

    def set(self, key: str, value: str) -> None:
        self.data[key] = value

    def delete(self, key: str) -> None:
        self.data.pop(key, None)


def no_lock(name: str, task: Callable[[], Any]) -> Any:
    return task()


class Manager:
    """One manager, sync or async, called the same way."""

    def __init__(self, kind: str, tenant: FakeTenant, clock: Clock, **options: Any) -> None:
        self.kind = kind
        common: dict[str, Any] = {
            "base_url": BASE_URL,
            "client_id": CLIENT_ID,
            "redirect_uri": REDIRECT_URI,
            "scopes": ["profile:read"],
            "now": clock,
            "retry_delay": 0,
            **options,
        }
        if kind == "sync":
            self.sync = TokenManager(**common, transport=tenant.transport)
        else:
            self.async_ = AsyncTokenManager(**common, transport=tenant.async_transport)
        self.tenant = tenant

    def get_access_token(self) -> str:
        if self.kind == "sync":
            return self.sync.get_access_token()
        return asyncio.run(self.async_.get_access_token())

    def sign_in(self) -> None:
        if self.kind == "sync":
            self.sync.complete_authorization(self.tenant.approve(self.sync.begin_authorization().url))
            return

        async def sign_in() -> None:
            request = await self.async_.begin_authorization()
            await self.async_.complete_authorization(self.tenant.approve(request.url))

        asyncio.run(sign_in())


def in_thread(call: Callable[[], object]) -> tuple[threading.Thread, list[object]]:
    """Runs ``call`` in a thread; its result (or error) lands in the list."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(call())
        except Exception as e:
            outcome.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


KINDS = pytest.mark.parametrize("kind", ["sync", "async"])


@pytest.fixture
def tenant() -> FakeTenant:
    return FakeTenant()


@pytest.fixture
def clock() -> Clock:
    return Clock()


# -- with fakes ------------------------------------------------------------------------------------


@KINDS
def test_fresh_tokens_another_process_stored_are_served_without_taking_the_lock(
    kind: str, tenant: FakeTenant, clock: Clock
) -> None:
    storage = SharedStorage()
    taken: list[str] = []

    def lock(name: str, task: Callable[[], Any]) -> Any:
        taken.append(name)
        return task()

    first = Manager(kind, tenant, clock, storage=storage, lock=lock)
    first.sign_in()
    other = Manager(kind, tenant, clock, storage=storage, lock=lock)
    assert other.get_access_token() == first.get_access_token()
    assert taken == []
    clock.advance(PAST_EXPIRY)
    renewed = first.get_access_token()
    assert taken == [LOCK]
    # The other process's token expired too; the refreshed one is in storage: read, not locked for.
    assert other.get_access_token() == renewed
    assert taken == [LOCK]
    assert tenant.refreshes == 1


class HeldElsewhere:
    """A lock that, once :attr:`held`, another process holds for as long as the test runs: a wait for it
    ends only by ``until`` (then with an error of code ``LOCK_WAIT_ENDED``, as the Redis and file locks
    end it). Each wake-up calls ``on_wake`` first (the other process's progress), then ``until``."""

    def __init__(self, storage: SharedStorage, on_wake: Callable[[int], None]) -> None:
        self.storage = storage
        self.on_wake = on_wake
        self.held = False
        self.reads_per_check: list[int] = []
        self.ran = False

    def __call__(self, name: str, task: Callable[[], Any], *, until: Callable[[], bool] | None = None) -> Any:
        if not self.held:
            return task()
        if until is None:
            raise TimeoutError(f"{name} stayed held by another process")
        for wake in range(10):
            self.on_wake(wake)
            reads = self.storage.reads
            ended = until()
            self.reads_per_check.append(self.storage.reads - reads)
            if ended:
                error = RuntimeError("the wait ended")
                error.code = "LOCK_WAIT_ENDED"  # type: ignore[attr-defined]
                raise error
        self.ran = True
        return task()


@KINDS
def test_a_wait_for_the_lock_ends_once_another_process_stored_fresh_tokens_and_serves_them(
    kind: str, tenant: FakeTenant, clock: Clock
) -> None:
    storage = SharedStorage()
    first = Manager(kind, tenant, clock, storage=storage, lock=no_lock)
    first.sign_in()
    waiting_on: list[str] = []

    def other_process_refreshes(wake: int) -> None:
        if wake == 2:
            waiting_on.append(first.get_access_token())

    lock = HeldElsewhere(storage, other_process_refreshes)
    waiter = Manager(kind, tenant, clock, storage=storage, lock=lock)
    waiter.get_access_token()
    clock.advance(PAST_EXPIRY)
    lock.held = True
    token = waiter.get_access_token()
    assert token == waiting_on[0]
    assert lock.ran is False
    assert tenant.refreshes == 1
    # Woken three times (twice still expired), one storage read per check: cheap at every wake-up.
    assert lock.reads_per_check == [1, 1, 1]


@KINDS
def test_a_lock_without_until_is_called_as_the_protocol_says(kind: str, tenant: FakeTenant, clock: Clock) -> None:
    storage = SharedStorage()
    calls: list[tuple[str, dict[str, Any]]] = []

    def lock(name: str, task: Callable[[], Any], **options: Any) -> Any:
        calls.append((name, options))
        return task()

    manager = Manager(kind, tenant, clock, storage=storage, lock=lock)
    manager.sign_in()
    clock.advance(PAST_EXPIRY)
    manager.get_access_token()
    assert calls == [(LOCK, {})]


# -- with the real locks ---------------------------------------------------------------------------


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    connection = redis.Redis.from_url(redis_url, socket_timeout=5, decode_responses=True)
    yield connection
    connection.close()


def hold_lock(lock: Callable[..., Any], name: str) -> tuple[threading.Event, threading.Event, threading.Thread]:
    """Another process's refresh: holds ``lock`` until the returned event is set."""
    taken, release = threading.Event(), threading.Event()

    def held() -> None:
        taken.set()
        release.wait(60)

    def holder() -> None:
        lock(name, held)

    thread = threading.Thread(target=holder, daemon=True)
    thread.start()
    assert taken.wait(JOIN)
    return taken, release, thread


def entering(lock: Callable[..., Any], entered: threading.Event) -> Callable[..., Any]:
    """``lock``, noting when a caller starts waiting for it (the ``until`` passed through)."""

    def waiting(name: str, task: Callable[[], Any], *, until: Callable[[], bool] | None = None) -> Any:
        entered.set()
        return lock(name, task, until=until)

    return waiting


@KINDS
def test_a_waiter_on_the_redis_lock_is_served_fresh_tokens_stored_while_the_holder_still_holds_it(
    kind: str, tenant: FakeTenant, clock: Clock, client: redis.Redis
) -> None:
    prefix = f"test-{secrets.token_hex(4)}:"
    storage = RedisStorage(client, prefix=prefix, wait_timeout=JOIN)
    first = Manager(kind, tenant, clock, storage=storage, lock=no_lock)
    first.sign_in()
    entered = threading.Event()
    waiter = Manager(kind, tenant, clock, storage=storage, lock=entering(storage.lock, entered))
    waiter.get_access_token()
    clock.advance(PAST_EXPIRY)
    _, release, holder = hold_lock(RedisLock(client, prefix=prefix), LOCK)
    try:
        thread, outcome = in_thread(waiter.get_access_token)
        assert entered.wait(JOIN)
        renewed = first.get_access_token()  # the holder's refresh, stored while it holds the lock
        thread.join(JOIN)
        assert outcome == [renewed]
        assert client.exists(redis_key(prefix, LOCK)) == 1  # served while the lock was still held
    finally:
        release.set()
        holder.join(JOIN)
    assert tenant.refreshes == 1


@KINDS
def test_a_waiter_on_the_file_lock_is_served_fresh_tokens_stored_while_the_holder_still_holds_it(
    kind: str, tenant: FakeTenant, clock: Clock, tmp_path: Path
) -> None:
    path = tmp_path / "tokens.json"
    storage = FileStorage(path, lock_timeout=JOIN)
    first = Manager(kind, tenant, clock, storage=storage, lock=no_lock)
    first.sign_in()
    entered = threading.Event()
    waiting_storage = FileStorage(path, lock_timeout=JOIN)
    waiter = Manager(kind, tenant, clock, storage=waiting_storage, lock=entering(waiting_storage.lock, entered))
    waiter.get_access_token()
    clock.advance(PAST_EXPIRY)
    _, release, holder = hold_lock(FileStorage(path).lock, LOCK)
    try:
        thread, outcome = in_thread(waiter.get_access_token)
        assert entered.wait(JOIN)
        renewed = first.get_access_token()
        thread.join(JOIN)
        assert outcome == [renewed]
        assert holder.is_alive()  # served while the lock was still held
    finally:
        release.set()
        holder.join(JOIN)
    assert tenant.refreshes == 1


def test_the_file_lock_ends_a_wait_when_until_says_so_and_never_runs_the_task(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    _, release, holder = hold_lock(FileStorage(path).lock, LOCK)
    checks: list[int] = []
    ran: list[bool] = []

    def third_check() -> bool:
        checks.append(1)
        return len(checks) == 3

    waiting: Callable[..., Any] = FileStorage(path, lock_timeout=JOIN).lock
    try:
        with pytest.raises(LockWaitEnded) as caught:
            waiting(LOCK, lambda: ran.append(True), until=third_check)
    finally:
        release.set()
        holder.join(JOIN)
    assert caught.value.code == "LOCK_WAIT_ENDED"
    assert len(checks) == 3
    assert ran == []
