"""The lock's transaction on a connection of the app's pool: taken, waited for in slices in the server
in SHARE mode, checked, and ended (``spec/token-store/README.md``, "The refresh lock"; the TypeScript
kit's ``lock.ts``, the Go kit's ``lock.go``). ``PostgresLock`` runs it.

See RFC 9700 §4.14.2.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...._synchronization import AsyncBackend
from ...errors import LockWaitEnded, PostgresStorageError
from .._lock import HOLDER, LockSettings, storage_failed
from .._pool import discard, failure
from .pool import execute

if TYPE_CHECKING:
    import psycopg
    import psycopg_pool

__all__ = ["AsyncHeld", "acquire"]


async def acquire(
    pool: psycopg_pool.AsyncConnectionPool[Any],
    name: str,
    settings: LockSettings,
    deadline: float,
    until: Callable[[], bool] | None,
) -> AsyncHeld:
    """Checks a connection out, opens the lock's transaction and takes the lock, waiting in slices until it
    is granted, ``until`` says the wait is no longer needed (:class:`LockWaitEnded`), or the deadline (on
    the monotonic clock) passes (``LOCK_TIMEOUT``). A failure is the token manager's ``STORAGE_FAILED``."""
    what = f"taking the lock {name}"
    timeout = min(settings.command_timeout, max(0.001, deadline - time.monotonic()))
    error: PostgresStorageError | None = None
    try:
        connection = await pool.getconn(timeout=timeout)
    except Exception as e:
        error = failure(e, f"{what} (no connection)", "LOCK_UNAVAILABLE", timeout=timeout)
    if error is not None:
        raise storage_failed(error)
    held = AsyncHeld(pool, name, settings, connection)
    try:
        taken = await held.open()
        while not taken:
            released = await held.wait_slice()
            if until is not None and await AsyncBackend.run_blocking(until):
                await held.end()
                raise LockWaitEnded(name)
            taken = await held.try_lock()
            if taken:
                break
            if released:
                # Lost to other waiters woken with this one: they let their shares go within a round trip.
                await AsyncBackend.sleep((5 + random.random() * 20) / 1000)  # noqa: S311 - jitter
            if time.monotonic() > deadline:
                holder = await held.holder()
                await held.end()
                raise PostgresStorageError(
                    "LOCK_TIMEOUT",
                    f"the lock {name} (the advisory lock hashtextextended of that name) was still held{holder} "
                    f"after {settings.wait_timeout:g} s",
                )
    except PostgresStorageError as e:
        if e.code == "LOCK_TIMEOUT":
            raise
        await held.fail()
        error = e
    except BaseException:
        await held.fail()  # a wait that ended, or an interrupt: the connection goes, and the lock with it
        raise
    if error is not None:
        raise storage_failed(error)
    return held


class AsyncHeld:
    """The connection whose transaction holds (or waits for) the lock ``name``. One caller at a time: the
    task under the lock asks :meth:`answers`, and :meth:`end` comes after it."""

    def __init__(
        self,
        pool: psycopg_pool.AsyncConnectionPool[Any],
        name: str,
        settings: LockSettings,
        connection: psycopg.AsyncConnection[Any],
    ) -> None:
        self._pool, self._name, self._settings, self._connection = pool, name, settings, connection
        self._autocommit = connection.autocommit
        self._gone = False

    async def _step(
        self, statement: str, params: dict[str, object] | None = None, timeout: float | None = None
    ) -> list[Any]:
        from psycopg import sql

        return await execute(
            self._connection,
            sql.SQL(statement),
            params,
            timeout=self._settings.command_timeout if timeout is None else timeout,
            what=f"taking the lock {self._name}",
            code="LOCK_UNAVAILABLE",
        )

    async def open(self) -> bool:
        """Begins the transaction and tries the lock once."""
        if not self._autocommit:
            await self._connection.set_autocommit(True)
        await self._step("BEGIN")
        statement, params = self._settings.opening()
        row = (await self._step(statement, {**params, "n": self._name}))[0]
        standby, read_only, taken = row[-3:]
        if standby or read_only:
            which = "is a hot standby" if standby else "is read-only (default_transaction_read_only)"
            raise PostgresStorageError(
                "READ_ONLY",
                f"taking the lock {self._name}: the server {which}; a lock there would coordinate nobody: give "
                "the storage a pool of the primary",
            )
        return bool(taken)

    async def wait_slice(self) -> bool:
        """Blocks in the server until the holder lets go or ``lock_timeout`` passes, and holds nothing after
        it; whether the holder let go within the slice. In SHARE mode, which conflicts with the holder's
        exclusive lock only, so a release wakes every waiter at once; ``ROLLBACK TO SAVEPOINT`` lets the
        share go. Waiting for the exclusive lock itself would make a convoy: the server grants it to the
        waiters one after another, each holding it for a read and a release before the next may go."""
        await self._step("SAVEPOINT tenant_integration_wait")
        released = True
        try:
            await self._step(
                "SELECT pg_advisory_xact_lock_shared(hashtextextended(%(n)s, 0))",
                {"n": self._name},
                timeout=self._settings.wait_slice + self._settings.command_timeout,
            )
        except PostgresStorageError as e:
            # 55P03: lock_timeout ran out; 57014: a shorter statement_timeout did. The lock is still another's.
            if getattr(e.cause, "sqlstate", None) not in ("55P03", "57014"):
                raise
            released = False
        await self._step("ROLLBACK TO SAVEPOINT tenant_integration_wait")
        return released

    async def try_lock(self) -> bool:
        rows = await self._step("SELECT pg_try_advisory_xact_lock(hashtextextended(%(n)s, 0))", {"n": self._name})
        return bool(rows[0][0])

    async def holder(self) -> str:
        """The holder of the lock, for the message of a wait that ran out (``""`` when unknown)."""
        try:
            rows = await self._step(HOLDER, {"n": self._name})
        except PostgresStorageError:
            return ""
        if not rows:
            return ""
        pid, app, client, since = rows[0]
        text = f" by the server process {pid}"
        if app:
            text += f", application_name {app!r}"
        if client:
            text += f", client {client}"
        if since:
            text += f", its transaction open since {since}"
        return text

    async def answers(self) -> bool:
        """ "The lock is still held": ``SELECT 1`` answers in the lock's transaction. A connection that fails
        is dropped (the server released the lock with it)."""
        if self._gone:
            return False
        try:
            await self._step("SELECT 1")
        except PostgresStorageError:
            await self.fail()
            return False
        return True

    async def fail(self) -> None:
        """Drops the connection after a failed statement (the server ends the transaction, and the lock with
        it) and gives it back, for the pool to replace."""
        if self._gone:
            return
        self._gone = True
        discard(self._connection)
        await self._pool.putconn(self._connection)

    async def end(self) -> None:
        """Ends the lock's transaction (``ROLLBACK``: nothing was written in it), which releases the lock, and
        gives the connection back; one that fails is dropped instead, which releases it too."""
        if self._gone:
            return
        try:
            await self._step("ROLLBACK")
            if not self._autocommit:
                await self._connection.set_autocommit(False)
        except PostgresStorageError:
            await self.fail()
            return
        self._gone = True
        await self._pool.putconn(self._connection)
