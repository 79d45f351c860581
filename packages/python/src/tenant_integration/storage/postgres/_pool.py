"""The part of the application's psycopg pool the storage uses (``psycopg_pool.ConnectionPool`` or
``AsyncConnectionPool``), and what every statement shares: its deadline, the error it fails with, and
how a connection that failed is dropped (the TypeScript kit's ``pool.ts``). How a statement runs on a
connection of the pool is ``_async/pool.py`` (and ``_sync/pool.py``, generated from it).

A blocking psycopg call cannot be abandoned from outside, so a deadline ends the connection's socket
(``shutdown``) when it passes, from a timer thread (:class:`Deadline`) or a loop timer
(:class:`AsyncDeadline`): psycopg's wait then returns with a lost connection, the call fails
``COMMAND_FAILED`` ("no answer within …"), and the pool discards the connection. So a server that stops
answering (a stopped or hung PostgreSQL, a lost network) costs a call ``command_timeout``, not forever.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from typing import TYPE_CHECKING, Any, Literal

from ..errors import PostgresStorageError, PostgresStorageErrorCode, PostgresStorageOptionsError

if TYPE_CHECKING:
    import psycopg

__all__ = ["AsyncDeadline", "Deadline", "FailureCode", "check_pool", "discard", "failure"]

FailureCode = Literal["COMMAND_FAILED", "LOCK_UNAVAILABLE"]


def _modules() -> tuple[Any, Any]:
    """``psycopg`` and ``psycopg_pool``, imported on first use so the SDK works without them."""
    try:
        import psycopg
        import psycopg_pool
    except ImportError as e:
        raise ImportError(
            'PostgresStorage needs psycopg 3 and psycopg_pool: pip install "tenant-integration[postgres]"',
            name=e.name,
        ) from e
    return psycopg, psycopg_pool


def check_pool(pool: object) -> tuple[int, bool]:
    """Refuses what is not a ``psycopg_pool.ConnectionPool`` or ``AsyncConnectionPool``; returns its
    ``max_size`` and whether it is the asyncio one."""
    _, psycopg_pool = _modules()
    if not isinstance(pool, psycopg_pool.ConnectionPool | psycopg_pool.AsyncConnectionPool):
        raise PostgresStorageOptionsError(
            "pool", "must be the app's psycopg_pool.ConnectionPool (or AsyncConnectionPool)"
        )
    size = pool.max_size
    if not isinstance(size, int) or size < 1:
        raise PostgresStorageOptionsError("pool", "has no max_size")
    return size, isinstance(pool, psycopg_pool.AsyncConnectionPool)


def _shutdown(connection: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> None:
    """Ends the connection's socket, from another thread: a call blocked on it returns at once."""
    with contextlib.suppress(Exception):
        fd = connection.pgconn.socket
        with socket.socket(fileno=os.dup(fd)) as s:
            s.shutdown(socket.SHUT_RDWR)


class Deadline:
    """Ends ``connection``'s socket when the block has not finished within ``seconds``; ``fired`` says
    whether it did. Ended under a guard, so a connection given back in time is never touched."""

    def __init__(self, connection: psycopg.Connection[Any], seconds: float) -> None:
        self._connection = connection
        self._guard = threading.Lock()
        self._done = False
        self.fired = False
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        with self._guard:
            if self._done:
                return
            self.fired = True
            _shutdown(self._connection)

    def __enter__(self) -> Deadline:
        return self

    def __exit__(self, *_: object) -> None:
        with self._guard:
            self._done = True
        self._timer.cancel()


class AsyncDeadline:
    """:class:`Deadline` on the running event loop: a loop timer ends the socket (psycopg's asyncio wait
    then wakes with a lost connection). No thread: the block and the timer run on one loop."""

    def __init__(self, connection: psycopg.AsyncConnection[Any], seconds: float) -> None:
        import asyncio

        self._connection = connection
        self._done = False
        self.fired = False
        self._timer = asyncio.get_running_loop().call_later(seconds, self._fire)

    def _fire(self) -> None:
        if not self._done:
            self.fired = True
            _shutdown(self._connection)

    def __enter__(self) -> AsyncDeadline:
        return self

    def __exit__(self, *_: object) -> None:
        self._done = True
        self._timer.cancel()


def _without_values(error: BaseException) -> BaseException:
    """psycopg's error without what may hold a value: its text carries the server's ``DETAIL`` and
    ``CONTEXT`` lines, which can quote a row (a constraint's "Failing row contains (…)"), and a row holds
    refresh tokens. Kept: the class (so its ``sqlstate``) and the primary message."""
    psycopg, _ = _modules()
    if not isinstance(error, psycopg.Error):
        return error
    primary = error.diag.message_primary
    if primary is None:
        primary = str(error).split("\n", 1)[0]
    try:
        copy: BaseException = type(error)(primary)
    except Exception:
        copy = RuntimeError(primary)
    return copy


def _reason(error: BaseException, late: bool, timeout: float) -> tuple[PostgresStorageErrorCode | None, str]:
    """The specific code for ``error`` (``None``: the caller's), and why in words."""
    psycopg, psycopg_pool = _modules()
    if late:
        return None, f"no answer within {timeout:g} s (the server stopped answering, or is unreachable)"
    if isinstance(error, psycopg_pool.PoolTimeout):
        return None, f"no connection of the pool within {timeout:g} s ({error})"
    sqlstate = getattr(error, "sqlstate", None) or ""
    said = (getattr(getattr(error, "diag", None), "message_primary", None) or str(error).split("\n", 1)[0]).strip()
    if sqlstate == "42P01":
        return "SCHEMA_MISSING", f"the table does not exist ({said}, 42P01)"
    if sqlstate in ("42703", "42804", "23502"):
        return "SCHEMA_MISMATCH", f"the table is not this kit's ({said}, {sqlstate})"
    if sqlstate == "25006":
        why = (
            f"the server refuses writes ({said}, 25006): it is a hot standby or read-only by default; "
            "give the storage the primary"
        )
        return "READ_ONLY", why
    if sqlstate == "57014":
        return None, f"the server cancelled it: statement_timeout, or pg_cancel_backend ({said}, 57014)"
    if sqlstate == "42501":
        return None, f"{said} (42501): grant SELECT, INSERT, UPDATE and DELETE on the table"
    if sqlstate.startswith(("57P0", "08")) or (isinstance(error, psycopg.OperationalError) and not sqlstate):
        if "refused" in said.lower():
            return None, f"PostgreSQL could not be reached (connection refused: {said})"
        return None, f"the connection was lost or could not be made ({said}{', ' + sqlstate if sqlstate else ''})"
    return None, f"{said} ({sqlstate})" if sqlstate else said


def failure(
    error: BaseException, what: str, code: FailureCode, *, late: bool = False, timeout: float = 0.0
) -> PostgresStorageError:
    """The :class:`PostgresStorageError` of a statement (``what``) that failed with ``error``:
    ``SCHEMA_MISSING``, ``SCHEMA_MISMATCH`` or ``READ_ONLY`` when the SQLSTATE says so, else ``code``,
    the message saying why, never a value."""
    if isinstance(error, PostgresStorageError):
        return error
    specific, why = _reason(error, late, timeout)
    return PostgresStorageError(specific or code, f"{what} failed: {why}", cause=_without_values(error))


def discard(connection: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> None:
    """Closes ``connection`` for good (its libpq connection: a pool made with ``close_returns=True`` would
    take a ``close()`` back); given back after, the pool drops it and opens another when it needs one. The
    server ends its transaction, and the locks of it."""
    with contextlib.suppress(Exception):
        connection.pgconn.finish()
