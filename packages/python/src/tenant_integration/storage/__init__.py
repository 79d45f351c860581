"""Token storages and their locks (memory, file, Redis, PostgreSQL), and the protocol for bringing one's own.

Every storage keeps the token manager's records in the format of ``spec/token-store/``, shared with
the TypeScript kit: a Python and a TypeScript process sharing one token file or one Redis stay signed
in together, with one refresh per expiry.

Each name below is loaded on first use (PEP 562), as the package's own names are: the token manager
imports the storage protocol (:mod:`.base`), which runs this file, and a manager on a
:class:`MemoryStorage` or a Redis one then never loads :class:`FileStorage`'s lock (``filelock``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from .._lazy_exports import lazy_exports

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time, __getattr__ below loads each name
    from .base import Lock, TokenStorage
    from .errors import (
        FileStorageError,
        FileStorageErrorCode,
        PostgresStorageError,
        PostgresStorageErrorCode,
        PostgresStorageOptionsError,
        RedisStorageError,
        RedisStorageErrorCode,
        RedisStorageOptionsError,
    )
    from .file import FileStorage
    from .memory import MemoryStorage

# Each public name and the module that defines it (relative to this package).
_EXPORTS: Final[dict[str, str]] = {
    "Lock": ".base",
    "TokenStorage": ".base",
    "FileStorageError": ".errors",
    "FileStorageErrorCode": ".errors",
    "PostgresStorageError": ".errors",
    "PostgresStorageErrorCode": ".errors",
    "PostgresStorageOptionsError": ".errors",
    "RedisStorageError": ".errors",
    "RedisStorageErrorCode": ".errors",
    "RedisStorageOptionsError": ".errors",
    "FileStorage": ".file",
    "MemoryStorage": ".memory",
}


# PEP 562, hidden from type checkers: they read the imports above, so a misspelt name stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)


__all__ = [
    "FileStorage",
    "FileStorageError",
    "FileStorageErrorCode",
    "Lock",
    "MemoryStorage",
    "PostgresStorageError",
    "PostgresStorageErrorCode",
    "PostgresStorageOptionsError",
    "RedisStorageError",
    "RedisStorageErrorCode",
    "RedisStorageOptionsError",
    "TokenStorage",
]
