"""The errors of the file, Redis and PostgreSQL storages and of their locks, with the TypeScript kit's
codes.

Messages name the file, the lock, the Redis key or the PostgreSQL table and row, and say what happened;
they never contain a stored value, which holds refresh tokens (RFC 6749 §10.4). The token manager
reports a failed ``get``, ``set`` or ``delete`` as ``STORAGE_FAILED`` with one of these as cause, a
``FILE_CORRUPT`` read (``reset`` is ``True``) as ``NOT_SIGNED_IN``, and a ``LOCK_TIMEOUT`` as is.
"""

from __future__ import annotations

from typing import Literal

from ..errors import InvalidOptionsError, TenantIntegrationError

__all__ = [
    "FileStorageError",
    "FileStorageErrorCode",
    "LockWaitEnded",
    "PostgresStorageError",
    "PostgresStorageErrorCode",
    "PostgresStorageOptionsError",
    "RedisStorageError",
    "RedisStorageErrorCode",
    "RedisStorageOptionsError",
]

FileStorageErrorCode = Literal["FILE_CORRUPT", "FILE_UNSAFE", "IO_FAILED", "LOCK_TIMEOUT"]
"""The stable codes of :class:`FileStorageError`.

- ``FILE_CORRUPT``: the token file was empty or not a JSON object of strings; it was moved aside
  (``moved_to``) and the storage is empty now (``reset`` is ``True``).
- ``FILE_UNSAFE``: the token file is not a regular file, or others may read it and its mode could not
  be tightened to 0600.
- ``IO_FAILED``: reading, writing or locking the file failed (read-only directory, full disk,
  permissions); ``cause`` is the :class:`OSError`, and the message names the path and the errno.
- ``LOCK_TIMEOUT``: a lock stayed held by another live process for the whole bounded wait.
"""

RedisStorageErrorCode = Literal[
    "INVALID_OPTIONS",
    "COMMAND_FAILED",
    "UNEXPECTED_REPLY",
    "REPLICATION_TIMEOUT",
    "LOCK_UNAVAILABLE",
    "LOCK_TIMEOUT",
    "LEASE_LOST",
]
"""The stable codes of :class:`RedisStorageError` (those of ``@tenant-integration/token-store-redis``).

- ``INVALID_OPTIONS``: at construction, a duration is not a finite number > 0, ``renew_every`` is not
  shorter than ``lease``, or ``replicas`` is malformed (raised as :class:`RedisStorageOptionsError`).
- ``COMMAND_FAILED``: a command failed (Redis unreachable, connection lost, an error reply); ``cause``
  is redis-py's error, and the message says which command on which key failed and why.
- ``UNEXPECTED_REPLY``: Redis answered something other than a string where one was expected.
- ``REPLICATION_TIMEOUT``: fewer replicas than ``replicas.count`` acknowledged a write in time (``WAIT``).
- ``LOCK_UNAVAILABLE``: a command failed while the lock was being taken.
- ``LOCK_TIMEOUT``: the bounded wait for a lock held by another owner ran out.
- ``LEASE_LOST``: passed to ``on_lease_lost``, never raised: a running task's lease ran out.
"""


PostgresStorageErrorCode = Literal[
    "INVALID_OPTIONS",
    "UNKNOWN_NAME",
    "SCHEMA_MISSING",
    "SCHEMA_MISMATCH",
    "READ_ONLY",
    "COMMAND_FAILED",
    "LOCK_UNAVAILABLE",
    "LOCK_TIMEOUT",
]
"""The stable codes of :class:`PostgresStorageError`: those of ``@tenant-integration/token-store-postgres``
and of the Go kit's ``postgresstorage`` (``spec/token-store/README.md``, "PostgreSQL").

- ``INVALID_OPTIONS``: at construction, a bad option (raised as :class:`PostgresStorageOptionsError`).
- ``UNKNOWN_NAME``: a name that is not a record of the tenant and client the storage was made for.
- ``SCHEMA_MISSING``: the table does not exist: apply ``schema.sql`` with your migrations, or call
  :func:`~tenant_integration.storage.postgres.ensure_schema`.
- ``SCHEMA_MISMATCH``: the table exists but is not this kit's version of it (its comment, a column).
- ``READ_ONLY``: the server refuses writes: a hot standby (a replica given as the primary) or
  ``default_transaction_read_only``. The tokens must live on the primary.
- ``COMMAND_FAILED``: a statement failed: the connection was refused or lost (a server restart, a
  terminated backend), no answer came within ``command_timeout``, the server cancelled it
  (``statement_timeout``), or it answered an error; the message says which, ``cause`` is psycopg's
  error without the parts that may quote a row.
- ``LOCK_UNAVAILABLE``: taking the lock failed on such an error; the lock raises the token manager's
  ``STORAGE_FAILED`` with this as its cause.
- ``LOCK_TIMEOUT``: the bounded wait for the lock ran out while another session of the database held it.
"""


class FileStorageError(TenantIntegrationError):
    """A failure of :class:`~tenant_integration.storage.FileStorage` or of its lock.

    Attributes:
        code: one of :data:`FileStorageErrorCode`.
        path: the file (or lock) concerned.
        moved_to: with ``FILE_CORRUPT``, where the unreadable file was moved (kept for inspection).
        reset: ``True`` with ``FILE_CORRUPT``: the stored data was set aside, every key is absent now.

    Example:
        >>> e = FileStorageError("LOCK_TIMEOUT", "the lock /tmp/t.json.refresh.lock stayed held", path="/tmp/t.json")
        >>> (e.code, e.path, e.reset)
        ('LOCK_TIMEOUT', '/tmp/t.json', False)

    See RFC 6749 §10.3 (tokens kept confidential).
    """

    code: FileStorageErrorCode

    def __init__(
        self,
        code: FileStorageErrorCode,
        message: str,
        *,
        path: str,
        cause: BaseException | None = None,
        moved_to: str | None = None,
        reset: bool = False,
    ) -> None:
        super().__init__(code, message, cause=cause)
        self.path = path
        self.moved_to = moved_to
        self.reset = reset


class RedisStorageError(TenantIntegrationError):
    """A failure of :class:`~tenant_integration.storage.RedisStorage` or of its lock.

    Never carries a stored value or a token: messages name the command and the key.

    Example:
        >>> RedisStorageError("LOCK_TIMEOUT", "tenant-integration:…:lock still held after 45 s").code
        'LOCK_TIMEOUT'

    See RFC 6749 §10.4 (refresh tokens kept confidential), RFC 9700 §4.14.2.
    """

    code: RedisStorageErrorCode

    def __init__(self, code: RedisStorageErrorCode, message: str, *, cause: BaseException | None = None) -> None:
        super().__init__(code, message, cause=cause)


class RedisStorageOptionsError(RedisStorageError, InvalidOptionsError):
    """A bad option of :class:`~tenant_integration.storage.RedisStorage` (code ``INVALID_OPTIONS``).

    Both a :class:`RedisStorageError` (as in the TypeScript kit) and an
    :class:`~tenant_integration.errors.InvalidOptionsError` (as every bad option of this SDK), with the
    option's name in ``option``.

    Example:
        >>> e = RedisStorageOptionsError("lease", "must be a finite number > 0")
        >>> (e.code, e.option, isinstance(e, InvalidOptionsError))
        ('INVALID_OPTIONS', 'lease', True)
    """

    def __init__(self, option: str, reason: str) -> None:
        TenantIntegrationError.__init__(self, "INVALID_OPTIONS", f"{option}: {reason}")
        self.option = option


class PostgresStorageError(TenantIntegrationError):
    """A failure of :class:`~tenant_integration.storage.postgres.PostgresStorage` or of its lock.

    Never carries a stored value or a token: messages name the table, the row (as a condition to
    paste into a query) and the statement.

    Example:
        >>> PostgresStorageError("SCHEMA_MISSING", "the table tenant_integration_records does not exist").code
        'SCHEMA_MISSING'

    See RFC 6749 §10.4 (refresh tokens kept confidential), RFC 9700 §4.14.2.
    """

    code: PostgresStorageErrorCode

    def __init__(self, code: PostgresStorageErrorCode, message: str, *, cause: BaseException | None = None) -> None:
        super().__init__(code, message, cause=cause)


class PostgresStorageOptionsError(PostgresStorageError, InvalidOptionsError):
    """A bad option of :class:`~tenant_integration.storage.postgres.PostgresStorage` (code ``INVALID_OPTIONS``),
    with the option's name in ``option``.

    Example:
        >>> e = PostgresStorageOptionsError("table", "must be name or schema.name")
        >>> (e.code, e.option, isinstance(e, InvalidOptionsError))
        ('INVALID_OPTIONS', 'table', True)
    """

    def __init__(self, option: str, reason: str) -> None:
        TenantIntegrationError.__init__(self, "INVALID_OPTIONS", f"{option}: {reason}")
        self.option = option


class LockWaitEnded(Exception):
    """The wait for a storage's lock (``RedisLock``, ``FileStorage.lock``) ended because its ``until``
    check said so: the task did not run (the TypeScript and Go kits' ``LockWaitEnded``, code
    ``LOCK_WAIT_ENDED``). A caller that passes ``until`` catches it; nobody else meets it."""

    code = "LOCK_WAIT_ENDED"

    def __init__(self, key: str) -> None:
        super().__init__(f"the wait for the lock {key} ended: no longer needed")
