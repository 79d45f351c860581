"""The storage's statements on the app's pool: a row per record, one autocommitted statement each,
after the check of the table at its first use (the TypeScript kit's ``storage.ts``, the Go kit's
``postgresstorage.go``). ``PostgresStorage`` runs them.

See RFC 6749 §6, §10.4.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from .._rows import Scope
from .._schema import Table
from .pool import checked_out, run
from .schema import inspect

if TYPE_CHECKING:
    import psycopg_pool

__all__ = ["AsyncRecords"]

# The statements, with the table as ``{table}`` (quoted by psycopg) and the row's key first: session,
# origin, client id, kind (the primary key's order). The same SQL as the TypeScript and Go storages.
_GET: Final = (
    "SELECT value FROM {table} WHERE session = %s AND origin = %s AND client_id = %s AND kind = %s"
    " AND (expires_at IS NULL OR expires_at > now())"
)
_SET: Final = (
    "INSERT INTO {table} AS t (session, origin, client_id, kind, value, expires_at, updated_at)"
    " VALUES (%s, %s, %s, %s, %s, NULL, now())"
    " ON CONFLICT (session, origin, client_id, kind)"
    " DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at, updated_at = excluded.updated_at"
)
#: The upsert with an expiry, and the clean-up of at most 100 expired rows of others (the other kits'
#: batch) through the ``expires_at`` index, skipping rows another statement holds. The key is given twice:
#: to the clean-up's ``NOT (...)``, then to the upsert.
_SET_EXPIRING: Final = (
    "WITH expired AS (DELETE FROM {table} WHERE (session, origin, client_id, kind) IN ("
    "SELECT session, origin, client_id, kind FROM {table} WHERE expires_at <= now()"
    " AND NOT (session = %s AND origin = %s AND client_id = %s AND kind = %s)"
    " ORDER BY expires_at LIMIT 100 FOR UPDATE SKIP LOCKED))"
    " INSERT INTO {table} AS t (session, origin, client_id, kind, value, expires_at, updated_at)"
    " VALUES (%s, %s, %s, %s, %s, now() + %s * interval '1 millisecond', now())"
    " ON CONFLICT (session, origin, client_id, kind)"
    " DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at, updated_at = excluded.updated_at"
)
_TAKE: Final = (
    "DELETE FROM {table} WHERE session = %s AND origin = %s AND client_id = %s AND kind = %s"
    " RETURNING value, (expires_at IS NULL OR expires_at > now())"
)
_DELETE: Final = "DELETE FROM {table} WHERE session = %s AND origin = %s AND client_id = %s AND kind = %s"


class AsyncRecords:
    """The statements of one storage: its pool, table, tenant and client, and whether its table passed
    the check."""

    def __init__(
        self, pool: psycopg_pool.AsyncConnectionPool[Any], table: Table, scope: Scope, command_timeout: float
    ) -> None:
        self._pool = pool
        self._table = table
        self._scope = scope
        self._command_timeout = command_timeout
        self._checked = False

    async def _statement(self, key: str, verb: str, template: str, params: tuple[object, ...]) -> list[tuple[Any, ...]]:
        """One statement about the row of ``key``, after the first-use check of the table."""
        from psycopg import sql

        row = self._scope.row(key)
        await self._check_schema()
        query = sql.SQL(template).format(table=self._table.identifier())
        what = f"{verb} of {row.describe(self._table.text)}"
        return await run(self._pool, query, (*row.params(), *params), timeout=self._command_timeout, what=what)

    async def _check_schema(self) -> None:
        """The first-use check, once it passed; one that failed is made again at the next call, so a
        migration applied while the app runs is taken without a restart."""
        if self._checked:
            return
        what = f"the check of the table {self._table.text}"
        async with checked_out(self._pool, self._command_timeout, what) as connection:
            refused = await inspect(connection, self._table, self._command_timeout, what)
        if refused is not None:
            raise refused
        self._checked = True

    async def get(self, key: str) -> str | None:
        rows = await self._statement(key, "SELECT", _GET, ())
        return None if not rows else str(rows[0][0])

    async def set(self, key: str, value: str) -> None:
        await self._statement(key, "INSERT", _SET, (value,))

    async def set_expiring(self, key: str, value: str, milliseconds: int) -> None:
        await self._statement(key, "INSERT", _SET_EXPIRING, (*self._scope.row(key).params(), value, milliseconds))

    async def take(self, key: str) -> str | None:
        rows = await self._statement(key, "DELETE", _TAKE, ())
        return str(rows[0][0]) if rows and rows[0][1] else None

    async def delete(self, key: str) -> None:
        await self._statement(key, "DELETE", _DELETE, ())
