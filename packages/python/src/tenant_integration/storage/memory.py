"""A storage that lives in memory and ends with the process: the token manager's default.

See RFC 6749 §10.3 (tokens kept confidential): nothing is written anywhere.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from ..errors import InvalidOptionsError
from ..token_errors import TokenManagerError
from .base import Lock

__all__ = ["MemoryStorage"]

T = TypeVar("T")


class MemoryStorage:
    """Keys and values in a dict, and an in-process lock by name as :attr:`lock`.

    Every thread of the process that shares one ``MemoryStorage`` (several token managers included)
    shares its lock, so they make one refresh among them (RFC 9700 §4.14.2). Its wait is bounded by
    ``lock_timeout`` seconds.

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
        self._locks: dict[str, threading.Lock] = {}
        self._lock_timeout = lock_timeout

    @property
    def lock(self) -> Lock:
        """Runs ``task`` holding the lock ``name`` (one :class:`threading.Lock` per name).

        Raises:
            TokenManagerError: ``LOCK_TIMEOUT`` after ``lock_timeout`` seconds; else what ``task`` raises.
        """
        return self._run_locked

    def _run_locked(self, name: str, task: Callable[[], T]) -> T:
        with self._mutex:
            lock = self._locks.setdefault(name, threading.Lock())
        if not lock.acquire(timeout=self._lock_timeout):
            raise TokenManagerError(
                "LOCK_TIMEOUT", f"the in-process lock {name!r} stayed held for {self._lock_timeout:g} s"
            )
        try:
            return task()
        finally:
            lock.release()

    def get(self, key: str) -> str | None:
        """The value under ``key``, or ``None``."""
        with self._mutex:
            return self._data.get(key)

    def set(self, key: str, value: str) -> None:
        """Stores ``value`` under ``key`` (durable as soon as it returns, for as long as the process lives)."""
        with self._mutex:
            self._data[key] = value

    def delete(self, key: str) -> None:
        """Removes ``key``; nothing happens when it is absent."""
        with self._mutex:
            self._data.pop(key, None)

    def __repr__(self) -> str:
        return f"MemoryStorage({len(self._data)} keys)"
