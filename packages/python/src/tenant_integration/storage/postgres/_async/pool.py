"""A statement on a connection of the app's pool: checked out for it alone, autocommit while held,
within a deadline; given back as it came, or dropped when it failed or did not answer (the TypeScript
kit's ``pool.ts``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from ...errors import PostgresStorageError
from .._pool import AsyncDeadline, FailureCode, discard, failure

if TYPE_CHECKING:
    import psycopg
    import psycopg_pool
    from psycopg import sql

__all__ = ["checked_out", "execute", "give_back", "run"]


@asynccontextmanager
async def checked_out(
    pool: psycopg_pool.AsyncConnectionPool[Any], timeout: float, what: str, code: FailureCode = "COMMAND_FAILED"
) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    """A connection of the pool, checked out within ``timeout``, autocommit while held; given back after
    (its autocommit as it was), or dropped when it failed or was left in a transaction."""
    import psycopg

    error: PostgresStorageError | None = None
    try:
        connection = await pool.getconn(timeout=timeout)
    except psycopg.Error as e:
        error = failure(e, f"{what} (no connection)", code, timeout=timeout)
    if error is not None:
        raise error
    autocommit = connection.autocommit
    try:
        if not autocommit:
            await connection.set_autocommit(True)
        yield connection
    finally:
        await give_back(pool, connection, autocommit)


async def give_back(
    pool: psycopg_pool.AsyncConnectionPool[Any], connection: psycopg.AsyncConnection[Any], autocommit: bool
) -> None:
    """Back to the pool as it came; a connection left in a transaction (or broken) is dropped instead."""
    import psycopg
    from psycopg import pq

    if connection.closed or connection.info.transaction_status != pq.TransactionStatus.IDLE:
        discard(connection)
    elif not autocommit:
        try:
            await connection.set_autocommit(False)
        except psycopg.Error:
            discard(connection)
    await pool.putconn(connection)


async def execute(
    connection: psycopg.AsyncConnection[Any],
    query: sql.SQL | sql.Composed,
    params: Sequence[object] | dict[str, object] | None,
    *,
    timeout: float,
    what: str,
    code: FailureCode = "COMMAND_FAILED",
) -> list[tuple[Any, ...]]:
    """Runs ``query`` on ``connection`` within ``timeout``; its rows (none for a statement without).

    Raises:
        PostgresStorageError: as :func:`~.._pool.failure` makes it; a connection that did not answer in
            time has had its socket ended, and is dropped when given back.
    """
    import psycopg

    error: PostgresStorageError | None = None
    with AsyncDeadline(connection, timeout) as deadline:
        try:
            cursor = await connection.execute(query, params, prepare=False)
            return await cursor.fetchall() if cursor.description is not None else []
        except psycopg.Error as e:
            error = failure(e, what, code, late=deadline.fired, timeout=timeout)
    raise error


async def run(
    pool: psycopg_pool.AsyncConnectionPool[Any],
    query: sql.SQL | sql.Composed,
    params: Sequence[object] | dict[str, object] | None,
    *,
    timeout: float,
    what: str,
) -> list[tuple[Any, ...]]:
    """One statement on a connection of its own, checked out of ``pool`` and given back at once: within
    ``timeout`` for the checkout and again for the answer. Autocommit: what it writes is committed (durable,
    seen by every other connection) when it returns."""
    async with checked_out(pool, timeout, what) as connection:
        return await execute(connection, query, params, timeout=timeout, what=what)
