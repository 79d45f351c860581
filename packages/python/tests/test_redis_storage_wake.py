"""Waking the lock's waiters (issue 28), against a real redis-server: a holder announces its release
on ``<key>:released``, and a waiter subscribed there takes the lock then, not at its next poll. The
protocol is the one every kit speaks (``spec/token-store/README.md``, "Redis: waking waiters"), so a
bare ``PUBLISH`` (as the TypeScript or Go kit sends it) wakes a Python waiter too. Without a
subscription (an ACL denying it) the lock still works, by polling.

The waiters here poll once a minute: one that takes the lock within seconds of the release was woken
by the message. The bounds are generous: they tell "woken" from "polled", not fast from slow.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, cast

import pytest
import redis

from tenant_integration.storage.redis import LockWaitEnded, RedisLock

#: A waiter that would poll only once a minute: a message is the only thing that wakes it in time.
SLOW_POLL: dict[str, Any] = {"retry_delay": 60.0, "max_retry_delay": 60.0, "wait_timeout": 120.0}
#: Far below SLOW_POLL's first pause (30 to 60 s), far above a wake on a loaded machine.
WOKEN_WITHIN = 10.0


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    connection = redis.Redis.from_url(redis_url, socket_timeout=5, decode_responses=True)
    yield connection
    connection.close()


@pytest.fixture
def prefix() -> str:
    return f"test-{secrets.token_hex(4)}:"


def subscribers(client: redis.Redis, channel: str) -> int:
    return int(dict(client.pubsub_numsub(channel))[channel])


def until_subscribed(client: redis.Redis, channel: str) -> None:
    for _ in range(400):
        if subscribers(client, channel) == 1:
            return
        time.sleep(0.025)
    raise AssertionError(f"{channel} never had a subscriber")


def until_held(client: redis.Redis, key: str) -> None:
    """Returns once the holder's thread has taken the lock ``key`` (a thread may start late on a busy
    machine: a waiter started before would take the lock itself)."""
    for _ in range(400):
        if client.exists(key):
            return
        time.sleep(0.025)
    raise AssertionError(f"{key} was never taken")


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


def test_a_holder_announces_its_release_on_the_channel_with_an_empty_message_once_the_key_is_gone(
    client: redis.Redis, prefix: str
) -> None:
    listener = client.pubsub()  # type: ignore[no-untyped-call]
    listener.subscribe(f"{prefix}lock:released")
    assert listener.get_message(timeout=5)["type"] == "subscribe"
    RedisLock(client, prefix=prefix)("lock", lambda: None)
    message = listener.get_message(timeout=5)
    listener.close()
    assert message is not None
    assert (message["type"], message["data"]) == ("message", "")
    assert client.exists(f"{prefix}lock") == 0


def test_a_waiter_that_polls_once_a_minute_takes_the_lock_as_soon_as_the_holder_lets_go(
    client: redis.Redis, redis_url: str, prefix: str
) -> None:
    channel = f"{prefix}lock:released"
    let_go = threading.Event()
    holder, _ = in_thread(lambda: RedisLock(client, prefix=prefix)("lock", let_go.wait))
    until_held(client, f"{prefix}lock")
    order: list[str] = []
    waiter, outcome = in_thread(
        lambda: RedisLock(redis.Redis.from_url(redis_url, socket_timeout=5), prefix=prefix, **SLOW_POLL)(
            "lock", lambda: order.append("waiter ran")
        )
    )
    until_subscribed(client, channel)
    order.append("holder lets go")
    let_go.set()
    holder.join(5)
    waiter.join(WOKEN_WITHIN)
    assert not waiter.is_alive(), "the waiter was not woken by the release"
    assert outcome == [None]
    assert order == ["holder lets go", "waiter ran"]
    # The wait's own connection is gone with the wait.
    assert subscribers(client, channel) == 0


def test_wakes_on_a_release_any_kit_announces_a_del_and_a_bare_publish(client: redis.Redis, prefix: str) -> None:
    client.set(f"{prefix}lock", "another-kit-owner", px=60_000)
    waiter, outcome = in_thread(lambda: RedisLock(client, prefix=prefix, **SLOW_POLL)("lock", lambda: "taken"))
    until_subscribed(client, f"{prefix}lock:released")
    client.delete(f"{prefix}lock")
    client.publish(f"{prefix}lock:released", "")
    waiter.join(WOKEN_WITHIN)
    assert not waiter.is_alive(), "the waiter was not woken by the release"
    assert outcome == ["taken"]


class CountingSets(redis.Redis):
    """A client that records the key of every ``SET`` it sends (the lock's tries)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sets: list[str] = []

    def execute_command(self, *args: Any, **options: Any) -> Any:
        if str(args[0]).upper() == "SET":
            self.sets.append(str(args[1]))
        return super().execute_command(*args, **options)  # type: ignore[no-untyped-call]


def test_a_subscribed_waiter_leaves_the_backoff_to_the_message_two_sets_while_held_one_after_the_release(
    client: redis.Redis, redis_url: str, prefix: str
) -> None:
    let_go = threading.Event()
    holder, _ = in_thread(lambda: RedisLock(client, prefix=prefix)("lock", let_go.wait))
    until_held(client, f"{prefix}lock")
    counted = cast(CountingSets, CountingSets.from_url(redis_url, socket_timeout=5))
    # A backoff from 1 ms doubling to a minute: polling on it, the waiter would send a SET at 1, 2, 4,
    # 8… ms, seven or more while the lock is held below; subscribed, it sends none of them.
    waiter, outcome = in_thread(
        lambda: RedisLock(counted, prefix=prefix, retry_delay=0.001, max_retry_delay=60.0, wait_timeout=120.0)(
            "lock", lambda: "taken"
        )
    )
    until_subscribed(client, f"{prefix}lock:released")
    time.sleep(0.5)
    let_go.set()
    holder.join(5)
    waiter.join(WOKEN_WITHIN)
    counted.close()
    assert not waiter.is_alive(), "the waiter was not woken by the release"
    assert outcome == ["taken"]
    # Refused before and right after subscribing, taken on the release's message (two, when the second
    # try already found the lock let go on a very slow machine).
    assert len(counted.sets) <= 3, counted.sets
    assert set(counted.sets) == {f"{prefix}lock"}


def test_polls_when_it_may_not_subscribe_an_acl_without_subscribe_and_publish(client: redis.Redis, prefix: str) -> None:
    user, password = f"no-pubsub-{secrets.token_hex(4)}", secrets.token_hex(8)
    client.acl_setuser(
        user,
        enabled=True,
        passwords=[f"+{password}"],
        keys=["*"],
        channels=["*"],
        commands=["+@all", "-subscribe", "-publish"],
    )
    try:
        kwargs = client.get_connection_kwargs()
        restricted = redis.Redis(
            host=kwargs["host"], port=kwargs["port"], username=user, password=password, socket_timeout=5
        )
        assert restricted.acl_whoami() == user
        let_go = threading.Event()
        holder, held = in_thread(lambda: RedisLock(restricted, prefix=prefix)("lock", let_go.wait))
        until_held(client, f"{prefix}lock")
        waiter, outcome = in_thread(
            lambda: RedisLock(restricted, prefix=prefix, retry_delay=0.02, max_retry_delay=0.05)(
                "lock", lambda: "taken"
            )
        )
        time.sleep(0.2)
        assert subscribers(client, f"{prefix}lock:released") == 0
        let_go.set()
        holder.join(10)
        waiter.join(10)
        assert held == [True]  # its PUBLISH was refused: the release stands
        assert outcome == ["taken"]
        assert client.exists(f"{prefix}lock") == 0
    finally:
        client.acl_deluser(user)


def test_an_until_check_ends_a_wait_without_the_lock_when_it_says_so_on_the_wake(
    client: redis.Redis, prefix: str
) -> None:
    # What a manager that reads before it locks passes: the tokens another process stored end the wait.
    stored = threading.Event()
    let_go = threading.Event()

    def holder_task() -> None:
        let_go.wait()
        stored.set()  # what the holder's refresh leaves behind

    holder, _ = in_thread(lambda: RedisLock(client, prefix=prefix)("lock", holder_task))
    until_held(client, f"{prefix}lock")
    ran: list[bool] = []
    waiter, outcome = in_thread(
        lambda: RedisLock(client, prefix=prefix, **SLOW_POLL)("lock", lambda: ran.append(True), until=stored.is_set)
    )
    until_subscribed(client, f"{prefix}lock:released")
    let_go.set()
    holder.join(5)
    waiter.join(WOKEN_WITHIN)
    assert not waiter.is_alive(), "the waiter was not woken by the release"
    assert len(outcome) == 1
    assert isinstance(outcome[0], LockWaitEnded)
    assert outcome[0].code == "LOCK_WAIT_ENDED"
    assert ran == []
