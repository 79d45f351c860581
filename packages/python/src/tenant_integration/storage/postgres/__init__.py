"""Token storage and refresh lock on PostgreSQL, interchangeable with
``@tenant-integration/token-store-postgres`` and the Go kit's ``postgresstorage``: the same table
(``spec/token-store/postgres/schema.sql``), the same row for each record and the same transaction-scoped
advisory lock (``spec/token-store/README.md``, "PostgreSQL"), so Python, Node and Go processes sharing one
database make one refresh per expiry between them.

On psycopg 3 over the application's pool (the ``postgres`` extra: ``pip install
"tenant-integration[postgres]"``), ``psycopg_pool.ConnectionPool`` or ``AsyncConnectionPool``: the
storage checks connections out of it and gives them back, and never opens or closes a pool of its own.
Its methods are called from a thread, as every storage of the kit (``AsyncTokenManager`` runs them in a
worker thread); on an ``AsyncConnectionPool`` each statement runs on the pool's event loop, where the
storage must be made. The flows are written once for asyncio (``_async/``) and generated for a
``ConnectionPool`` (``_sync/``, ``scripts/unasync.py``).

    pool = ConnectionPool(os.environ["DATABASE_URL"], max_size=10, open=True)
    ensure_schema(pool)  # or apply schema_sql() with your migrations: the kit never runs DDL otherwise
    storage = PostgresStorage(pool, base_url="https://acme.tenant.test", client_id="demo-integration")
    manager = TokenManager(..., storage=storage)

    # asyncio: in your app's startup, on the loop the pool runs on
    pool = AsyncConnectionPool(os.environ["DATABASE_URL"], max_size=10, open=False)
    await pool.open()
    await ensure_schema(pool)
    manager = AsyncTokenManager(..., storage=PostgresStorage(pool, base_url=..., client_id=...))

**Errors** (:class:`~tenant_integration.storage.errors.PostgresStorageError`, the TypeScript and Go
kits' codes): ``SCHEMA_MISSING`` (no table), ``SCHEMA_MISMATCH`` (another version's or application's
table), ``READ_ONLY`` (a hot standby or read-only server given as the primary), ``UNKNOWN_NAME``,
``COMMAND_FAILED`` (a lost connection, a server restart, ``statement_timeout``, no answer within
``command_timeout``), ``LOCK_TIMEOUT``; the token manager reports each as ``STORAGE_FAILED``.

See RFC 9700 §4.14.2 (refresh token rotation), RFC 6749 §6, §10.4.
"""

from __future__ import annotations

from ..errors import LockWaitEnded, PostgresStorageError, PostgresStorageErrorCode, PostgresStorageOptionsError
from ._lock import DEFAULT_KEEPALIVES, Keepalives, PostgresLock
from ._schema import DEFAULT_TABLE, SCHEMA_VERSION, ensure_schema, schema_sql
from ._storage import PostgresStorage

__all__ = [
    "DEFAULT_KEEPALIVES",
    "DEFAULT_TABLE",
    "SCHEMA_VERSION",
    "Keepalives",
    "LockWaitEnded",
    "PostgresLock",
    "PostgresStorage",
    "PostgresStorageError",
    "PostgresStorageErrorCode",
    "PostgresStorageOptionsError",
    "ensure_schema",
    "schema_sql",
]
