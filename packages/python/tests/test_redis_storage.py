"""RedisStorage and RedisLock on a real redis-server: the TypeScript store's keys and values, a lease lock
that only its owner renews or releases, a bounded wait, and errors that say which command failed on
which key without ever holding a value (RFC 6749 §10.4, RFC 9700 §4.14.2)."""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Iterator

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from tenant_integration import TokenManagerError
from tenant_integration.errors import InvalidOptionsError
from tenant_integration.storage.errors import RedisStorageError
from tenant_integration.storage.redis import RedisLock, RedisStorage

TOKENS_KEY = "tenant-integration:https://acme.tenant.test:demo:tokens"
LOCK_NAME = "tenant-integration:https://acme.tenant.test:demo:lock"
# Their Redis keys: the session part in a hash tag (issue 31), one cluster slot for the session.
TOKENS_REDIS_KEY = "tenant-integration:{https://acme.tenant.test:demo}:tokens"
LOCK_REDIS_KEY = "tenant-integration:{https://acme.tenant.test:demo}:lock"
CANARY = "rt-canary-" + "9" * 24


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    connection = redis.Redis.from_url(redis_url, socket_timeout=5)
    yield connection
    connection.close()


@pytest.fixture
def prefix() -> str:
    """A key prefix of the test's own: the tests share one redis-server."""
    return f"test-{secrets.token_hex(4)}:"


def test_values_are_stored_under_the_prefixed_key_as_they_are(client: redis.Redis, prefix: str) -> None:
    storage = RedisStorage(client, prefix=prefix)
    storage.set(TOKENS_KEY, '{"access_token":"a"}')
    assert client.get(prefix + TOKENS_REDIS_KEY) == b'{"access_token":"a"}'
    assert storage.get(TOKENS_KEY) == '{"access_token":"a"}'
    assert client.ttl(prefix + TOKENS_REDIS_KEY) == -1, "records must not expire"


def test_an_absent_key_reads_as_none_and_deleting_it_succeeds(client: redis.Redis, prefix: str) -> None:
    storage = RedisStorage(client, prefix=prefix)
    assert storage.get(TOKENS_KEY) is None
    storage.delete(TOKENS_KEY)
    storage.set(TOKENS_KEY, "v")
    storage.delete(TOKENS_KEY)
    assert client.exists(prefix + TOKENS_REDIS_KEY) == 0


def test_a_client_that_decodes_responses_reads_the_same_text(redis_url: str, prefix: str) -> None:
    decoding = redis.Redis.from_url(redis_url, socket_timeout=5, decode_responses=True)
    try:
        RedisStorage(decoding, prefix=prefix).set(TOKENS_KEY, "é ü")
        assert RedisStorage(redis.Redis.from_url(redis_url, socket_timeout=5), prefix=prefix).get(TOKENS_KEY) == "é ü"
        assert RedisStorage(decoding, prefix=prefix).get(TOKENS_KEY) == "é ü"
    finally:
        decoding.close()


def test_the_lock_lets_one_holder_at_a_time_run_its_task(client: redis.Redis, prefix: str) -> None:
    storage = RedisStorage(client, prefix=prefix, retry_delay=0.005, max_retry_delay=0.02)
    storage.set("count", "0")
    inside = 0
    most_inside = 0
    guard = threading.Lock()

    def increment() -> None:
        nonlocal inside, most_inside
        with guard:
            inside += 1
            most_inside = max(most_inside, inside)
        value = int(storage.get("count") or "0")
        time.sleep(0.002)
        storage.set("count", str(value + 1))
        with guard:
            inside -= 1

    threads = [threading.Thread(target=storage.lock, args=(LOCK_NAME, increment)) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (storage.get("count"), most_inside) == ("12", 1)
    assert client.exists(prefix + LOCK_REDIS_KEY) == 0, "the lock is released after the last task"


def test_the_lock_returns_what_the_task_returns_and_releases_when_it_raises(client: redis.Redis, prefix: str) -> None:
    lock = RedisLock(client, prefix=prefix)
    assert lock(LOCK_NAME, lambda: "refreshed") == "refreshed"

    def fail() -> None:
        raise ValueError("the task's own error")

    with pytest.raises(ValueError, match="the task's own error"):
        lock(LOCK_NAME, fail)
    assert client.exists(prefix + LOCK_REDIS_KEY) == 0


def test_a_lock_another_owner_holds_is_waited_for_within_a_bound_then_lock_timeout(
    client: redis.Redis, prefix: str
) -> None:
    client.set(prefix + LOCK_REDIS_KEY, "another-owner", px=60_000)
    lock = RedisLock(client, prefix=prefix, wait_timeout=0.3, retry_delay=0.01)
    ran = False

    def task() -> None:
        nonlocal ran
        ran = True

    with pytest.raises(RedisStorageError) as caught:
        lock(LOCK_NAME, task)
    assert caught.value.code == "LOCK_TIMEOUT"
    assert LOCK_REDIS_KEY in str(caught.value)
    assert "0.3 s" in str(caught.value)
    assert not ran
    assert client.get(prefix + LOCK_REDIS_KEY) == b"another-owner", "a waiter never takes or deletes another's lock"


def test_a_dead_holders_lease_expires_and_the_next_caller_gets_the_lock(client: redis.Redis, prefix: str) -> None:
    # A holder that died without releasing: its key, with its lease, and no one renewing it.
    client.set(prefix + LOCK_REDIS_KEY, "dead-owner", px=200)
    lock = RedisLock(client, prefix=prefix, wait_timeout=5, retry_delay=0.01, max_retry_delay=0.05)
    assert lock(LOCK_NAME, lambda: "ran") == "ran"


def test_the_lease_is_renewed_while_a_long_task_runs(client: redis.Redis, prefix: str) -> None:
    lock = RedisLock(client, prefix=prefix, lease=0.3, renew_every=0.05)
    competitors_won = 0

    def long_task() -> None:
        nonlocal competitors_won
        for _ in range(10):  # 1 s, more than three leases
            time.sleep(0.1)
            if client.set(prefix + LOCK_REDIS_KEY, "competitor", nx=True, px=300):
                competitors_won += 1

    lock(LOCK_NAME, long_task)
    assert competitors_won == 0


def test_a_lost_lease_is_reported_and_the_new_owners_lock_is_left_alone(client: redis.Redis, prefix: str) -> None:
    lost: list[RedisStorageError] = []
    lock = RedisLock(client, prefix=prefix, lease=5, on_lease_lost=lost.append)

    def task() -> None:
        # The lease expired under the task and another owner took the lock.
        client.set(prefix + LOCK_REDIS_KEY, "new-owner", px=60_000)

    lock(LOCK_NAME, task)
    assert client.get(prefix + LOCK_REDIS_KEY) == b"new-owner"
    assert [e.code for e in lost] == ["LEASE_LOST"]
    assert LOCK_REDIS_KEY in str(lost[0])


def test_is_held_answers_from_a_fresh_get_whether_the_lease_is_still_this_tasks(
    client: redis.Redis, prefix: str
) -> None:
    lock = RedisLock(client, prefix=prefix, lease=5, on_lease_lost=lambda e: None)

    def task() -> list[bool]:
        before = lock.is_held(LOCK_NAME)
        # The holder was paused past its lease, and another owner took the lock.
        client.set(prefix + LOCK_REDIS_KEY, "new-owner", px=60_000)
        return [before, lock.is_held(LOCK_NAME), lock.is_held("another-lock")]

    assert lock(LOCK_NAME, task) == [True, False, False]
    assert not lock.is_held(LOCK_NAME)


def test_a_failing_command_names_the_command_and_the_key_never_the_value(prefix: str) -> None:
    with socket_on_a_closed_port() as url:
        down = redis.Redis.from_url(url, retry=Retry(NoBackoff(), 0), socket_timeout=5, socket_connect_timeout=1)
        storage = RedisStorage(down, prefix=prefix)
        with pytest.raises(RedisStorageError) as caught:
            storage.set(TOKENS_KEY, CANARY)
        assert caught.value.code == "COMMAND_FAILED"
        message = str(caught.value)
        assert "SET" in message
        assert prefix + TOKENS_REDIS_KEY in message
        assert CANARY not in message
        assert CANARY not in repr(caught.value.__dict__)
        assert isinstance(caught.value.cause, redis.exceptions.ConnectionError)
        with pytest.raises(RedisStorageError) as read:
            storage.get(TOKENS_KEY)
        assert (read.value.code, "GET" in str(read.value)) == ("COMMAND_FAILED", True)
        # The lock's failure is the storage's: STORAGE_FAILED, the store's LOCK_UNAVAILABLE as cause.
        with pytest.raises(TokenManagerError) as locked:
            storage.lock(LOCK_NAME, lambda: None)
        assert locked.value.code == "STORAGE_FAILED"
        assert isinstance(locked.value.cause, RedisStorageError)
        assert locked.value.cause.code == "LOCK_UNAVAILABLE"


def test_replicas_that_do_not_acknowledge_a_write_are_a_replication_timeout(client: redis.Redis, prefix: str) -> None:
    # A single server has no replica: WAIT 1 answers 0 once its timeout passes.
    storage = RedisStorage(client, prefix=prefix, replicas=(1, 0.05))
    with pytest.raises(RedisStorageError) as caught:
        storage.set(TOKENS_KEY, "v")
    assert caught.value.code == "REPLICATION_TIMEOUT"
    assert "0 of 1 replicas" in str(caught.value)
    RedisStorage(client, prefix=prefix, replicas=(0, 0.05)).set(TOKENS_KEY, "v")


@pytest.mark.parametrize(
    ("options", "option"),
    [
        ({"lease": 0}, "lease"),
        ({"lease": float("nan")}, "lease"),
        ({"lease": 1, "renew_every": 1}, "renew_every"),
        ({"wait_timeout": -1}, "wait_timeout"),
        ({"replicas": (-1, 1.0)}, "replicas"),
        ({"replicas": (1, 0.0001)}, "replicas"),
    ],
)
def test_a_bad_option_is_refused_at_construction_naming_it(
    client: redis.Redis, options: dict[str, object], option: str
) -> None:
    with pytest.raises(InvalidOptionsError) as caught:
        RedisStorage(client, **options)  # type: ignore[arg-type]
    assert (caught.value.code, caught.value.option) == ("INVALID_OPTIONS", option)


def test_an_asyncio_client_is_refused_with_what_to_pass_instead(redis_url: str) -> None:
    import redis.asyncio

    with pytest.raises(InvalidOptionsError, match=r"asyncio client: pass a redis\.Redis"):
        RedisStorage(redis.asyncio.Redis.from_url(redis_url))  # type: ignore[arg-type]


class socket_on_a_closed_port:
    """A ``redis://`` URL on a loopback port nothing listens on (bound, then closed)."""

    def __enter__(self) -> str:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        return f"redis://127.0.0.1:{port}"

    def __exit__(self, *_: object) -> None:
        return None
