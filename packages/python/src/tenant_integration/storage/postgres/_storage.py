"""Token storage on PostgreSQL: one row per record in the table every kit shares, and the lock it brings
(the TypeScript kit's ``storage.ts``, the Go kit's ``postgresstorage.go``). The statements are
``_async/storage.py`` (and ``_sync/storage.py``, generated from it).

See RFC 6749 §6, §10.4; RFC 9700 §4.14.2.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..base import Lock
from ..errors import PostgresStorageError
from ._lock import DEFAULT_KEEPALIVES, Keepalives, PostgresLock, runner_of, seconds
from ._pool import check_pool
from ._rows import Scope
from ._schema import DEFAULT_TABLE, Table

if TYPE_CHECKING:
    import psycopg_pool

__all__ = ["PostgresStorage"]


class PostgresStorage:
    """Stores the token manager's records in PostgreSQL, one row each in the table every kit shares
    (``spec/token-store/postgres/schema.sql``), and brings the PostgreSQL lock that makes one refresh out of
    many across every process (Python, TypeScript or Go) sharing the database.

    Over the application's pool, ``psycopg_pool.ConnectionPool`` or ``AsyncConnectionPool``: the storage
    checks connections out of it and gives them back, and never opens or closes a pool of its own. Each
    ``get``, ``set``, ``delete``, ``set_expiring`` and ``take`` (pending sign-ins by state: an expiring row,
    taken once by ``DELETE … RETURNING``) is one autocommitted statement on a connection of the pool,
    bounded by ``command_timeout`` for the checkout and again for the answer. Its methods are called from
    a thread, as every storage of the kit (``AsyncTokenManager`` runs them in a worker thread): on an
    ``AsyncConnectionPool`` each statement runs on the event loop the pool runs on, where the storage must
    be made (your app's startup), the calling thread waiting for it.

    A storage is made for one tenant origin and client id, the manager's (a client id may hold ``:``, so a
    record's name alone does not say where it ends). At its first use it checks the table:
    ``SCHEMA_MISSING`` (apply the schema, or call :func:`~tenant_integration.storage.postgres.ensure_schema`),
    ``SCHEMA_MISMATCH`` (another version's or application's table: nothing is written), ``READ_ONLY`` (a hot
    standby or a read-only server given as the primary); a check that failed is made again at the next
    call. The token manager reports each failure as ``STORAGE_FAILED``, with it as the cause.

    Args:
        pool: the app's ``psycopg_pool.ConnectionPool`` or ``AsyncConnectionPool`` (``max_size`` at least 2:
            a refresh holds one connection for its lock and writes on another).
        base_url, client_id: the token manager's.
        table: ``name`` or ``schema.name`` (default ``tenant_integration_records``).
        command_timeout: seconds each statement may wait for a connection, then for its answer (default 5).
        wait_timeout, wait_slice, max_lock_connections, keepalives: the lock's, see :class:`PostgresLock`.

    Raises:
        ImportError: when psycopg or psycopg_pool is not installed (naming the extra to install).
        PostgresStorageOptionsError: at construction, for a bad option (code ``INVALID_OPTIONS``).
        PostgresStorageError: from the methods: ``UNKNOWN_NAME``, ``SCHEMA_MISSING``, ``SCHEMA_MISMATCH``,
            ``READ_ONLY``, ``COMMAND_FAILED`` (the message says which statement on which row failed and why,
            never a value).

    Example:
        >>> from psycopg_pool import ConnectionPool  # doctest: +SKIP
        >>> pool = ConnectionPool("postgresql://app@db/app", max_size=10)  # doctest: +SKIP
        >>> ensure_schema(pool)  # or apply schema_sql() with your migrations  # doctest: +SKIP
        >>> storage = PostgresStorage(pool, base_url="https://acme.tenant.test", client_id="demo")  # doctest: +SKIP
        >>> manager = TokenManager(base_url="https://acme.tenant.test", client_id="demo", ...,  # doctest: +SKIP
        ...                        storage=storage)

    See RFC 6749 §6, §10.4; RFC 9700 §4.14.2.
    """

    def __init__(
        self,
        pool: psycopg_pool.ConnectionPool[Any] | psycopg_pool.AsyncConnectionPool[Any],
        *,
        base_url: str,
        client_id: str,
        table: str = DEFAULT_TABLE,
        command_timeout: float = 5.0,
        wait_timeout: float = 45.0,
        wait_slice: float = 0.25,
        max_lock_connections: int | None = None,
        keepalives: Keepalives | None = DEFAULT_KEEPALIVES,
    ) -> None:
        _, is_async = check_pool(pool)
        self._pool = pool
        self._table = Table.parse(table)
        self._scope = Scope.of(base_url, client_id)
        timeout = seconds("command_timeout", command_timeout)
        self._lock = PostgresLock(
            pool,
            command_timeout=command_timeout,
            wait_timeout=wait_timeout,
            wait_slice=wait_slice,
            max_lock_connections=max_lock_connections,
            keepalives=keepalives,
        )
        self._run = runner_of(pool, is_async)
        if is_async:
            from ._async.storage import AsyncRecords

            self._records: Any = AsyncRecords(pool, self._table, self._scope, timeout)  # type: ignore[arg-type]
        else:
            from ._sync.storage import Records

            self._records = Records(pool, self._table, self._scope, timeout)  # type: ignore[arg-type]

    @property
    def lock(self) -> Lock:
        """The PostgreSQL lock, which the token manager uses unless given its own ``lock``."""
        return self._lock

    def where(self, key: str) -> str:
        """The row of the manager's record ``key`` as a condition a user can paste into a query: the
        manager names it in its messages.

        Example:
            >>> storage.where("tenant-integration:https://acme.tenant.test:demo:42:tokens")  # doctest: +SKIP
            "tenant_integration_records (origin, client_id, session, kind) = ('https://acme…', 'demo', '42', 'tokens')"
        """
        try:
            return self._scope.row(key).describe(self._table.text)
        except PostgresStorageError:
            return key

    def get(self, key: str) -> str | None:
        """``SELECT`` of the row of ``key``: its value, or ``None`` when absent (an expired row reads as absent).

        Raises:
            PostgresStorageError: ``UNKNOWN_NAME``, ``SCHEMA_MISSING``, ``SCHEMA_MISMATCH``, ``READ_ONLY``,
                ``COMMAND_FAILED``.
        """
        return self._run(self._records.get, key)  # type: ignore[no-any-return]

    def set(self, key: str, value: str) -> None:
        """Stores ``value`` under ``key`` (``INSERT … ON CONFLICT DO UPDATE``), committed when it returns.

        Raises:
            PostgresStorageError: as :meth:`get`.
        """
        self._run(self._records.set, key, value)

    def set_expiring(self, key: str, value: str, lifetime: float) -> None:
        """Stores ``value`` under ``key`` to be dropped once ``lifetime`` seconds passed (by the server's
        clock): a pending sign-in. Expired rows read as absent; up to 100 of them (others', never this one)
        are deleted by the same statement through the ``expires_at`` index, never a scan, skipping rows
        another statement holds.

        Raises:
            PostgresStorageOptionsError: ``INVALID_OPTIONS`` for a lifetime under a millisecond.
            PostgresStorageError: as :meth:`get`.
        """
        milliseconds = math.ceil(seconds("lifetime", lifetime) * 1000)
        self._run(self._records.set_expiring, key, value, milliseconds)

    def take(self, key: str) -> str | None:
        """Returns the value of ``key`` and deletes it in one statement (``DELETE … RETURNING``): of any
        number of concurrent takes, in any processes, at most one gets it; ``None`` when absent (an expired
        row is deleted and reads as absent).

        Raises:
            PostgresStorageError: as :meth:`get`.
        """
        return self._run(self._records.take, key)  # type: ignore[no-any-return]

    def delete(self, key: str) -> None:
        """``DELETE`` of the row of ``key``; succeeds when absent.

        Raises:
            PostgresStorageError: as :meth:`get`.
        """
        self._run(self._records.delete, key)
