"""The shared table: its name, its DDL (``spec/token-store/postgres/schema.sql``), what the check at
first use reads and refuses, and :func:`ensure_schema`, the one place the kit runs DDL, only when called
(the TypeScript kit's ``schema.ts``, the Go kit's ``schema.go``; the I/O is ``_async/schema.py``).
"""

from __future__ import annotations

import re
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, LiteralString, overload

from ..errors import PostgresStorageError, PostgresStorageOptionsError

if TYPE_CHECKING:
    import psycopg_pool
    from psycopg import sql

__all__ = [
    "DEFAULT_TABLE",
    "INSPECTION",
    "SCHEMA_VERSION",
    "Table",
    "ddl",
    "ensure_schema",
    "refusal",
    "schema_sql",
]

#: The table every kit uses unless told another.
DEFAULT_TABLE: Final = "tenant_integration_records"
#: The table's comment, which says which version of the shared schema it is.
SCHEMA_VERSION: Final = "tenant-integration token store v1"

# One identifier part, as PostgreSQL folds an unquoted name; 48 at most so that <name>_expires_at fits 63.
_PART = re.compile(r"[a-z_][a-z0-9_]{0,47}")

#: The DDL, every kit's, with the table and its own name as placeholders (psycopg's ``sql.SQL.format``
#: and ``str.format`` read it alike). For the default table it is exactly ``schema.sql``.
_DDL: Final[LiteralString] = """\
-- The token store of the Tenant Integration SDK, shared by its TypeScript, Python and Go kits:
-- one row per record of spec/token-store (tokens, a refresh intent, a pending sign-in), keyed by
-- tenant origin, client id, session id and kind. Version: the table's comment.
CREATE TABLE {table} (
  origin     text        NOT NULL, -- the tenant's origin: https://acme.tenant.test
  client_id  text        NOT NULL, -- the OAuth client id
  session    text        NOT NULL, -- the app's session id; '' without one, and for pending sign-ins
  kind       text        NOT NULL, -- tokens, intent, or pending:<first 32 hex digits of SHA-256(state)>
  value      text        NOT NULL, -- the record's JSON text, as every storage stores it
  expires_at timestamptz,          -- when a pending sign-in may be dropped; NULL: never
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- The session first: an app finds and deletes a user's rows by session id alone.
  CONSTRAINT {pkey} PRIMARY KEY (session, origin, client_id, kind),
  CONSTRAINT {session} CHECK (session = '' OR session ~ '^[A-Za-z0-9._~@+=|-]{{1,128}}$'),
  CONSTRAINT {kind} CHECK (kind IN ('tokens', 'intent', 'pending') OR kind ~ '^pending:[0-9a-f]{{32}}$')
);
-- Expired pending sign-ins are found (and dropped) through this index, never by a scan.
CREATE INDEX {expires_at} ON {table} (expires_at) WHERE expires_at IS NOT NULL;
COMMENT ON TABLE {table} IS 'tenant-integration token store v1';
"""

#: Whether the table is there, its version, and whether the server takes writes.
INSPECTION: Final[LiteralString] = (
    "SELECT to_regclass(%(t)s) IS NOT NULL, coalesce(obj_description(to_regclass(%(t)s), 'pg_class'), ''), "
    "obj_description(to_regclass(%(t)s), 'pg_class') IS NOT NULL, pg_is_in_recovery(), "
    "current_setting('transaction_read_only') = 'on'"
)

_HOW_TO_CREATE = (
    "apply its schema (schema_sql(), spec/token-store/postgres/schema.sql) with your migrations, or call "
    "tenant_integration.storage.postgres.ensure_schema(pool) once at start"
)


@dataclass(frozen=True)
class Table:
    """A checked table name: as written (for messages), its parts, and its own name (the last part)."""

    text: str
    parts: tuple[str, ...]

    @classmethod
    def parse(cls, table: str) -> Table:
        """``name`` or ``schema.name``, each part of lowercase letters, digits and ``_`` (at most 48).

        Raises:
            PostgresStorageOptionsError: ``INVALID_OPTIONS`` otherwise.
        """
        parts = tuple(table.split(".")) if isinstance(table, str) else ()
        if not 1 <= len(parts) <= 2 or not all(_PART.fullmatch(part) for part in parts):
            raise PostgresStorageOptionsError(
                "table",
                f'{table!r} must be "name" or "schema.name", each of lowercase letters, digits and _ (at most 48), '
                "starting with a letter or _",
            )
        return cls(table, parts)

    @property
    def name(self) -> str:
        return self.parts[-1]

    @property
    def quoted(self) -> str:
        """The name as SQL text, each part double-quoted (as ``to_regclass`` and the DDL take it)."""
        return ".".join(f'"{part}"' for part in self.parts)

    def identifier(self) -> sql.Identifier:
        from psycopg import sql

        return sql.Identifier(*self.parts)


def schema_sql(table: str = DEFAULT_TABLE) -> str:
    """The DDL of the table ``table`` (version :data:`SCHEMA_VERSION`): what :func:`ensure_schema` runs,
    and what to give your migrations. For the default name it is exactly
    ``spec/token-store/postgres/schema.sql``, every kit's.

    Raises:
        PostgresStorageOptionsError: ``INVALID_OPTIONS`` for a name that is not ``name`` or ``schema.name``.

    Example:
        >>> schema_sql("billing.tokens").splitlines()[3]
        'CREATE TABLE "billing"."tokens" ('
    """
    t = Table.parse(table)
    names = {f: f'"{t.name}_{f}"' for f in ("pkey", "session", "kind", "expires_at")}
    return _DDL.format(table=t.quoted, **names)


def ddl(t: Table) -> sql.Composed:
    """The DDL of ``t`` as psycopg composes it (each name quoted as an identifier)."""
    from psycopg import sql

    names = {f: sql.Identifier(f"{t.name}_{f}") for f in ("pkey", "session", "kind", "expires_at")}
    return sql.SQL(_DDL).format(table=t.identifier(), **names)


def refusal(table: Table, row: tuple[Any, ...]) -> PostgresStorageError | None:
    """The error of what the inspection found, or ``None`` for this version on a writable server."""
    found, version, commented, standby, read_only = row
    if standby:
        return PostgresStorageError(
            "READ_ONLY",
            "the server is a hot standby (pg_is_in_recovery() is true): the tokens must live on the primary, "
            "where every process reads and writes them; give the storage a pool of the primary",
        )
    if read_only:
        return PostgresStorageError(
            "READ_ONLY",
            "the server's transactions are read-only (default_transaction_read_only is on): give the storage "
            "a pool of the primary, or a role whose transactions may write",
        )
    if not found:
        return PostgresStorageError("SCHEMA_MISSING", f"the table {table.text} does not exist: {_HOW_TO_CREATE}")
    if version != SCHEMA_VERSION:
        what = f"its comment is {version!r}" if commented else "it has no comment"
        return PostgresStorageError(
            "SCHEMA_MISMATCH",
            f"the table {table.text} is not the kit's ({what}, not {SCHEMA_VERSION!r}): it may be another "
            "application's table or another version's; give the storage another table name, or migrate this one",
        )
    return None


@overload
def ensure_schema(
    pool: psycopg_pool.ConnectionPool[Any], table: str = DEFAULT_TABLE, *, timeout: float = 5.0
) -> bool: ...


@overload
def ensure_schema(
    pool: psycopg_pool.AsyncConnectionPool[Any], table: str = DEFAULT_TABLE, *, timeout: float = 5.0
) -> Coroutine[Any, Any, bool]: ...


def ensure_schema(
    pool: psycopg_pool.ConnectionPool[Any] | psycopg_pool.AsyncConnectionPool[Any],
    table: str = DEFAULT_TABLE,
    *,
    timeout: float = 5.0,
) -> bool | Coroutine[Any, Any, bool]:
    """Creates the table (:func:`schema_sql`) when it does not exist, in one transaction, under an advisory
    lock so that processes starting together do not race in the catalog; does nothing when the table is
    this version. The only DDL the kit ever runs, and only when called. Returns whether it created it;
    on an ``AsyncConnectionPool``, a coroutine of that (``await ensure_schema(pool)``).

    Raises:
        PostgresStorageOptionsError: ``INVALID_OPTIONS`` for a bad table name or pool.
        PostgresStorageError: ``SCHEMA_MISMATCH`` (nothing changed) for a table of that name that is not
            this version; ``READ_ONLY`` on a standby or read-only server; ``COMMAND_FAILED`` when the DDL
            failed (42501: the role may not create tables) or the server did not answer within ``timeout``.

    Example:
        >>> from psycopg_pool import ConnectionPool  # doctest: +SKIP
        >>> ensure_schema(ConnectionPool("postgresql://app@db/app", open=True))  # doctest: +SKIP
        True
    """
    from ._lock import seconds
    from ._pool import check_pool

    t = Table.parse(table)
    _, is_async = check_pool(pool)
    timeout = seconds("timeout", timeout)
    if is_async:
        from ._async.schema import ensure as ensure_async

        return ensure_async(pool, t, timeout)  # type: ignore[arg-type]
    from ._sync.schema import ensure

    return ensure(pool, t, timeout)  # type: ignore[arg-type]
