"""Token storages and their locks (memory, file, Redis), and the protocol for bringing one's own.

Every storage keeps the token manager's records in the format of ``spec/token-store/``, shared with
the TypeScript kit: a Python and a TypeScript process sharing one token file or one Redis stay signed
in together, with one refresh per expiry.
"""

from __future__ import annotations

from .base import Lock, TokenStorage
from .errors import (
    FileStorageError,
    FileStorageErrorCode,
    RedisStoreError,
    RedisStoreErrorCode,
    RedisStoreOptionsError,
)
from .file import FileStorage
from .memory import MemoryStorage

__all__ = [
    "FileStorage",
    "FileStorageError",
    "FileStorageErrorCode",
    "Lock",
    "MemoryStorage",
    "RedisStoreError",
    "RedisStoreErrorCode",
    "RedisStoreOptionsError",
    "TokenStorage",
]
