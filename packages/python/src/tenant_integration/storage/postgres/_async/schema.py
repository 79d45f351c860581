"""The check of the table at first use, and :func:`ensure`, the one place the kit runs DDL (the
TypeScript kit's ``schema.ts``, the Go kit's ``schema.go``); the DDL itself is ``../_schema.py``."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from ...errors import PostgresStorageError
from .._schema import INSPECTION, Table, ddl, refusal
from .pool import checked_out, execute

if TYPE_CHECKING:
    import psycopg
    import psycopg_pool

__all__ = ["ensure", "inspect"]


async def inspect(
    connection: psycopg.AsyncConnection[Any], table: Table, timeout: float, what: str
) -> PostgresStorageError | None:
    """Reads whether ``table`` is there in this version on a server that takes writes: the refusal, or
    ``None``."""
    from psycopg import sql

    rows = await execute(connection, sql.SQL(INSPECTION), {"t": table.quoted}, timeout=timeout, what=what)
    return refusal(table, rows[0])


async def ensure(pool: psycopg_pool.AsyncConnectionPool[Any], table: Table, timeout: float) -> bool:
    """Creates ``table`` when it does not exist, in one transaction, under an advisory lock so that
    processes starting together do not race in the catalog; nothing when it is this version; whether it
    created it. Raises the refusal of another version's table (``SCHEMA_MISMATCH``, nothing changed) or of
    a server that takes no writes (``READ_ONLY``)."""
    from psycopg import sql

    what = f"ensure_schema of {table.text}"
    async with checked_out(pool, timeout, what) as connection:
        await execute(connection, sql.SQL("BEGIN"), None, timeout=timeout, what=what)
        try:
            await execute(
                connection,
                sql.SQL("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))"),
                ("tenant-integration:schema:" + table.quoted,),
                timeout=timeout,
                what=what,
            )
            refused = await inspect(connection, table, timeout, what)
            if refused is not None and refused.code != "SCHEMA_MISSING":
                raise refused
            if refused is not None:
                await execute(connection, ddl(table), None, timeout=timeout, what=what)
            await execute(connection, sql.SQL("COMMIT"), None, timeout=timeout, what=what)
        except BaseException:
            # Nothing is kept; a connection that cannot roll back is dropped when given back.
            with contextlib.suppress(PostgresStorageError):
                await execute(connection, sql.SQL("ROLLBACK"), None, timeout=timeout, what=what)
            raise
    return refused is not None
