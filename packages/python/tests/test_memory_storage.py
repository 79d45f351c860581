"""MemoryStorage: the default storage, a dict and an in-process lock by name."""

from __future__ import annotations

import threading

import pytest

from tenant_integration import InvalidOptionsError, MemoryStorage, TokenManagerError, TokenStorage


def test_it_is_a_token_storage_that_keeps_values_and_forgets_them() -> None:
    storage = MemoryStorage()
    assert isinstance(storage, TokenStorage)
    assert storage.get("k") is None
    storage.set("k", "v")
    assert storage.get("k") == "v"
    storage.delete("k")
    storage.delete("k")
    assert storage.get("k") is None


def test_its_repr_shows_no_value() -> None:
    storage = MemoryStorage()
    storage.set("tenant-integration:x:y:tokens", "secret-refresh-token-value")
    assert "secret" not in repr(storage)


def test_its_lock_runs_one_task_at_a_time_per_name_and_others_beside() -> None:
    storage = MemoryStorage()
    inside = threading.Event()
    release = threading.Event()
    order: list[str] = []

    def first() -> None:
        inside.set()
        release.wait(30)
        order.append("first")

    holder = threading.Thread(target=lambda: storage.lock("a", first))
    holder.start()
    inside.wait(30)
    # Another name is not held.
    assert storage.lock("b", lambda: "other name") == "other name"
    waiter = threading.Thread(target=lambda: storage.lock("a", lambda: order.append("second")))
    waiter.start()
    release.set()
    holder.join(30)
    waiter.join(30)
    assert order == ["first", "second"]


def test_its_lock_bounds_the_wait_and_passes_the_tasks_errors_through() -> None:
    storage = MemoryStorage(lock_timeout=0.01)
    release = threading.Event()
    inside = threading.Event()

    def hold() -> None:
        inside.set()
        release.wait(30)

    holder = threading.Thread(target=lambda: storage.lock("a", hold))
    holder.start()
    inside.wait(30)
    with pytest.raises(TokenManagerError) as caught:
        storage.lock("a", lambda: None)
    assert caught.value.code == "LOCK_TIMEOUT"
    assert "'a'" in str(caught.value)
    release.set()
    holder.join(30)

    def broken() -> None:
        raise ValueError("the task's own error")

    with pytest.raises(ValueError, match="the task's own error"):
        storage.lock("a", broken)
    assert storage.lock("a", lambda: "free again") == "free again"


def test_a_wait_that_is_not_positive_is_refused() -> None:
    with pytest.raises(InvalidOptionsError, match="lock_timeout"):
        MemoryStorage(lock_timeout=0)
