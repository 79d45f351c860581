"""The refresh lock on PostgreSQL: a transaction-scoped advisory lock on ``hashtextextended(<lock name>,
0)``, held in a transaction on a connection checked out of the app's pool for the refresh, waited for in
the server in SHARE mode (``spec/token-store/README.md``, "The refresh lock"; the TypeScript kit's
``lock.ts`` and ``slots.ts``, the Go kit's ``lock.go``). Here: its options, the connections the locks of
one process may hold per pool, and the statements' texts; the transaction itself is ``_async/lock.py``.

See RFC 9700 §4.14.2 (refresh token rotation).
"""

from __future__ import annotations

import math
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeVar

from ...token_errors import TokenManagerError
from ..errors import PostgresStorageError, PostgresStorageOptionsError
from ._bridge import Runner, direct, on_loop
from ._pool import check_pool

if TYPE_CHECKING:
    import psycopg_pool

__all__ = ["DEFAULT_KEEPALIVES", "HOLDER", "Keepalives", "LockSettings", "PostgresLock", "seconds", "storage_failed"]

T = TypeVar("T")


@dataclass(frozen=True)
class Keepalives:
    """The server's TCP keepalives on the lock's connection while it holds the lock, in seconds: a holder
    whose machine vanished is found dead after about ``idle + interval x count``."""

    idle: int = 10
    interval: int = 5
    count: int = 3


#: Finds a holder whose machine vanished dead in about 10 + 5 x 3 = 25 s.
DEFAULT_KEEPALIVES: Final = Keepalives()

#: The connections the locks of this process may hold, per pool: shared by every lock on it.
_slots: weakref.WeakKeyDictionary[object, threading.BoundedSemaphore] = weakref.WeakKeyDictionary()
_slots_guard = threading.Lock()

#: The holder of a lock, for the message of a wait that ran out.
HOLDER: Final = (
    "SELECT l.pid, coalesce(a.application_name, ''), coalesce(host(a.client_addr), ''), "
    "coalesce(a.xact_start::text, '') FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid "
    "WHERE l.locktype = 'advisory' AND l.mode = 'ExclusiveLock' AND l.granted AND l.objsubid = 1 "
    "AND l.classid::bigint = (hashtextextended(%(n)s, 0) >> 32) & 4294967295 "
    "AND l.objid::bigint = hashtextextended(%(n)s, 0) & 4294967295"
)


def seconds(name: str, value: float) -> float:
    """``value`` when it is a finite number of seconds > 0; else ``INVALID_OPTIONS`` naming the option."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not (math.isfinite(value) and value > 0):
        raise PostgresStorageOptionsError(name, "must be a finite number of seconds > 0")
    return float(value)


def storage_failed(error: PostgresStorageError) -> TokenManagerError:
    """A lock statement's failure as the token manager's ``STORAGE_FAILED``: the code a failed read or
    write gets, so an outage is one code at every step; the store's error is the cause."""
    return TokenManagerError("STORAGE_FAILED", str(error).removeprefix(f"{error.code}: "), cause=error)


@dataclass(frozen=True)
class LockSettings:
    """The lock's options, checked: what its transaction needs."""

    command_timeout: float
    wait_timeout: float
    wait_slice: float
    keepalives: Keepalives | None

    def opening(self) -> tuple[str, dict[str, object]]:
        """The first statement of the lock's transaction: its settings (for this transaction only), whether
        the server takes writes, and a first try of the lock (``%(n)s``: the lock's name)."""
        statement = "SELECT set_config('lock_timeout', %(slice)s, true)"
        params: dict[str, object] = {"slice": f"{max(1, round(self.wait_slice * 1000))}ms"}
        if self.keepalives is not None:
            statement += (
                ", set_config('tcp_keepalives_idle', %(idle)s, true)"
                ", set_config('tcp_keepalives_interval', %(interval)s, true)"
                ", set_config('tcp_keepalives_count', %(count)s, true)"
            )
            k = self.keepalives
            params |= {"idle": str(k.idle), "interval": str(k.interval), "count": str(k.count)}
        statement += (
            ", pg_is_in_recovery(), current_setting('transaction_read_only') = 'on', "
            "pg_try_advisory_xact_lock(hashtextextended(%(n)s, 0))"
        )
        return statement, params


def runner_of(pool: object, is_async: bool, option: str = "pool") -> Runner:
    """How the flows run for ``pool``: plain calls, or on the event loop running now (an
    ``AsyncConnectionPool``'s: the storage must be made there)."""
    if not is_async:
        return direct
    import asyncio  # loaded already by the running event loop; not at import, for sync users

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        raise PostgresStorageOptionsError(
            option,
            "is an AsyncConnectionPool: make the storage in a coroutine of the event loop the pool runs on (your "
            "app's startup, where the pool is opened), so that its statements run on that loop",
        ) from None
    return on_loop(loop)


class PostgresLock:
    """The refresh lock on PostgreSQL, the same in every kit: a transaction-scoped advisory lock on
    ``hashtextextended(<lock name>, 0)``, held in a transaction on a connection of the app's pool while the
    task runs. The server releases it when the transaction ends: at the release (``ROLLBACK``), or when the
    holder's connection closes (the process was killed, its machine vanished past the TCP keepalives). A
    holder that is paused but lives keeps it. Nothing is written in the lock's transaction.

    A waiter blocks in the server in slices of ``lock_timeout`` (``wait_slice``), in SHARE mode, which
    conflicts with the holder's exclusive lock only: a release wakes every waiter at once, and each asks
    ``until`` (the manager's "the stored record is fresh now") before it tries the lock. Works through
    PgBouncer in transaction mode (everything is in one transaction; session ``SET``s are not used).

    Args:
        pool: the app's ``psycopg_pool.ConnectionPool``, or ``AsyncConnectionPool`` (then make the lock in a
            coroutine of the loop the pool runs on; it is called from threads, as the token managers do).
        command_timeout: seconds each of the lock's statements may take (default 5).
        wait_timeout: seconds to wait for a lock another session holds, then ``LOCK_TIMEOUT`` (default 45).
        wait_slice: seconds each wait blocks in the server before ``until`` is asked (default 0.25).
        max_lock_connections: how many of the pool's connections this process's locks may hold at once
            (default ``max_size`` less one: a refresh writes the tokens on another connection).
        keepalives: the server's TCP keepalives for the lock's transaction (``None``: the server's own).

    Raises:
        PostgresStorageOptionsError: at construction, for a bad option (code ``INVALID_OPTIONS``).
        PostgresStorageError: from a call: ``LOCK_TIMEOUT`` when the wait runs out (naming the holder's
            server process, its ``application_name``, client and transaction start).
        TokenManagerError: from a call: ``STORAGE_FAILED`` when the server fails or does not answer while
            the lock is taken (cause ``LOCK_UNAVAILABLE``, or ``READ_ONLY`` on a standby). Otherwise what
            the task raises.

    Example:
        >>> lock = PostgresLock(pool)  # doctest: +SKIP
        >>> lock("tenant-integration:https://acme.tenant.test:demo:lock", lambda: "refreshed")  # doctest: +SKIP
        'refreshed'

    See RFC 9700 §4.14.2.
    """

    def __init__(
        self,
        pool: psycopg_pool.ConnectionPool[Any] | psycopg_pool.AsyncConnectionPool[Any],
        *,
        command_timeout: float = 5.0,
        wait_timeout: float = 45.0,
        wait_slice: float = 0.25,
        max_lock_connections: int | None = None,
        keepalives: Keepalives | None = DEFAULT_KEEPALIVES,
    ) -> None:
        size, is_async = check_pool(pool)
        self._pool = pool
        wait_slice = seconds("wait_slice", wait_slice)
        if wait_slice < 0.001:
            raise PostgresStorageOptionsError("wait_slice", "must be at least 1 ms")
        limit = size - 1 if max_lock_connections is None else max_lock_connections
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit < size:
            raise PostgresStorageOptionsError(
                "max_lock_connections",
                f"must be from 1 to the pool's max_size less one (max_size is {size}): a refresh holds one "
                "connection for its lock and writes the tokens on another",
            )
        if keepalives is not None and not all(
            isinstance(v, int) and not isinstance(v, bool) and v > 0
            for v in (keepalives.idle, keepalives.interval, keepalives.count)
        ):
            raise PostgresStorageOptionsError("keepalives", "idle, interval and count must be integers > 0, or None")
        self._settings = LockSettings(
            seconds("command_timeout", command_timeout), seconds("wait_timeout", wait_timeout), wait_slice, keepalives
        )
        self._run = runner_of(pool, is_async)
        if is_async:
            from ._async.lock import acquire
        else:
            from ._sync.lock import acquire  # type: ignore[assignment]
        self._acquire = acquire
        with _slots_guard:
            self._slots = _slots.setdefault(pool, threading.BoundedSemaphore(limit))
        self._limit = limit
        # The transaction holding each lock this process's tasks run under, by name: what is_held asks.
        self._held: dict[str, Any] = {}
        self._held_guard = threading.Lock()

    def __call__(self, name: str, task: Callable[[], T], *, until: Callable[[], bool] | None = None) -> T:
        """Runs ``task`` holding the lock ``name``; see the class.

        ``until``, when given, is called (in a thread, never on an event loop) between the slices of the
        wait, before the lock is tried again; when it returns ``True`` the wait ends without the lock,
        raising :class:`~tenant_integration.storage.errors.LockWaitEnded`, and ``task`` never runs. It must
        not raise.
        """
        settings = self._settings
        deadline = time.monotonic() + settings.wait_timeout
        if not self._slots.acquire(timeout=settings.wait_timeout):
            raise PostgresStorageError(
                "LOCK_TIMEOUT",
                f"the lock {name}: no connection of the pool came free for the lock within "
                f"{settings.wait_timeout:g} s (this process's other refreshes hold all {self._limit} the locks "
                "may use)",
            )
        try:
            held = self._run(self._acquire, self._pool, name, settings, deadline, until)
            with self._held_guard:
                self._held[name] = held
            try:
                return task()
            finally:
                with self._held_guard:
                    if self._held.get(name) is held:
                        del self._held[name]
                self._run(held.end)
        finally:
            self._slots.release()

    def is_held(self, name: str) -> bool:
        """ "The lock is still held" (the refresh protocol's steps 3 and 5): the lock's connection still
        answers ``SELECT 1`` in its transaction. ``False`` once it was lost (the server restarted, the
        backend was terminated, ``idle_in_transaction_session_timeout``: the server released the lock with
        it), gave no answer within ``command_timeout``, or when no task of this lock holds ``name``.

        See RFC 9700 §4.14.2.
        """
        with self._held_guard:
            held = self._held.get(name)
        return held is not None and bool(self._run(held.answers))
