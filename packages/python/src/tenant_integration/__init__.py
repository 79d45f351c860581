"""tenant_integration: the Python SDK of the Tenant Integration Service.

A typed httpx client (:class:`Client`, :class:`AsyncClient`), a rotation-safe OAuth 2.0 token manager
(PKCE S256, RFC 6749 §4.1, RFC 7636) and token storages (memory, file, Redis) whose records are
interchangeable with the TypeScript kit's.
"""

from __future__ import annotations

from .errors import InvalidOptionsError, TenantIntegrationError
from .storage import FileStorage, FileStorageError, Lock, RedisStoreError, TokenStorage

__all__ = [
    "FileStorage",
    "FileStorageError",
    "InvalidOptionsError",
    "Lock",
    "RedisStoreError",
    "TenantIntegrationError",
    "TokenStorage",
]
