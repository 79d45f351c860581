"""A storage that lives in memory and ends with the process: the token manager's default.

See RFC 6749 §10.3 (tokens kept confidential): nothing is written anywhere.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

from ..errors import InvalidOptionsError
from ..token_errors import TokenManagerError
from .base import Lock

__all__ = ["MemoryStorage"]

T = TypeVar("T")


class _NamedLock:
    """The lock of one name, and how many threads hold or wait for it."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0


class MemoryStorage:
    """Keys and values in a dict, and an in-process lock by name as :attr:`lock`.

    Every thread of the process that shares one ``MemoryStorage`` (several token managers included)
    shares its lock, so they make one refresh among them (RFC 9700 §4.14.2). Its wait is bounded by
    ``lock_timeout`` seconds. It offers ``set_expiring`` and ``take``, which pending sign-ins by state
    use (``spec/token-store/README.md``, "What a storage offers").

    Args:
        lock_timeout: how long :attr:`lock` waits for a holder before ``LOCK_TIMEOUT`` (default 60 s).

    Example:
        >>> storage = MemoryStorage()
        >>> storage.set("k", "v"); storage.get("k"), storage.lock("k:lock", lambda: "held")
        ('v', 'held')
    """

    def __init__(self, *, lock_timeout: float = 60.0) -> None:
        if not lock_timeout > 0:
            raise InvalidOptionsError("lock_timeout", "must be a number of seconds > 0")
        self._data: dict[str, str] = {}
        self._mutex = threading.Lock()
        self._locks: dict[str, _NamedLock] = {}
        self._lock_timeout = lock_timeout
        # When each key written by set_expiring is dropped (time.monotonic()).
        self._expires: dict[str, float] = {}

    @property
    def lock(self) -> Lock:
        """Runs ``task`` holding the lock ``name`` (one :class:`threading.Lock` per name).

        Raises:
            TokenManagerError: ``LOCK_TIMEOUT`` after ``lock_timeout`` seconds; else what ``task`` raises.
        """
        return self._run_locked

    def _run_locked(self, name: str, task: Callable[[], T]) -> T:
        # One lock per name while it is held or waited for: a server of many sessions keeps none for
        # the sessions that are not refreshing.
        with self._mutex:
            entry = self._locks.get(name)
            if entry is None:
                entry = self._locks[name] = _NamedLock()
            entry.users += 1
        try:
            if not entry.lock.acquire(timeout=self._lock_timeout):
                raise TokenManagerError(
                    "LOCK_TIMEOUT", f"the in-process lock {name!r} stayed held for {self._lock_timeout:g} s"
                )
            try:
                return task()
            finally:
                entry.lock.release()
        finally:
            with self._mutex:
                entry.users -= 1
                if entry.users == 0 and self._locks.get(name) is entry:
                    del self._locks[name]

    def _drop_expired(self, key: str, now: float) -> None:
        """Drops ``key`` when set_expiring's lifetime passed; called with the mutex held."""
        deadline = self._expires.get(key)
        if deadline is not None and deadline <= now:
            del self._expires[key]
            self._data.pop(key, None)

    def get(self, key: str) -> str | None:
        """The value under ``key``, or ``None`` (also once a :meth:`set_expiring` lifetime passed)."""
        with self._mutex:
            self._drop_expired(key, time.monotonic())
            return self._data.get(key)

    def set(self, key: str, value: str) -> None:
        """Stores ``value`` under ``key`` (durable as soon as it returns, for as long as the process lives)."""
        with self._mutex:
            self._expires.pop(key, None)
            self._data[key] = value

    def set_expiring(self, key: str, value: str, lifetime: float) -> None:
        """Stores ``value`` under ``key`` for ``lifetime`` seconds, then drops it; every entry whose
        lifetime passed is dropped as this writes, so that abandoned sign-ins never pile up."""
        with self._mutex:
            now = time.monotonic()
            for expiring in [k for k, deadline in self._expires.items() if deadline <= now]:
                self._drop_expired(expiring, now)
            self._data[key] = value
            self._expires[key] = now + lifetime

    def take(self, key: str) -> str | None:
        """Returns the value under ``key`` and deletes it in one step: of concurrent takes of one key, at
        most one returns it (``None`` for the others, and when absent or expired)."""
        with self._mutex:
            self._drop_expired(key, time.monotonic())
            self._expires.pop(key, None)
            return self._data.pop(key, None)

    def delete(self, key: str) -> None:
        """Removes ``key``; nothing happens when it is absent."""
        with self._mutex:
            self._expires.pop(key, None)
            self._data.pop(key, None)

    def __repr__(self) -> str:
        return f"MemoryStorage({len(self._data)} keys)"
