"""tenant_integration: the Python SDK of the Tenant Integration Service.

A typed httpx client (:class:`Client`, :class:`AsyncClient`), a rotation-safe OAuth 2.0 token manager
(PKCE S256, RFC 6749 §4.1, RFC 7636) and token storages (memory, file, Redis) whose records are
interchangeable with the TypeScript kit's.
"""

from __future__ import annotations

from .errors import InvalidOptionsError, TenantIntegrationError
from .pkce import PkcePair, create_pkce_pair, derive_code_challenge
from .storage import FileStorage, FileStorageError, Lock, RedisStoreError, TokenStorage
from .storage.memory import MemoryStorage
from .token_errors import OAuthResponseError, SessionEndedError, TokenErrorCode, TokenManagerError, TransientError
from .token_manager import AsyncTokenManager, AuthorizationRequest, EventName, SessionInfo, TokenManager

__all__ = [
    "AsyncTokenManager",
    "AuthorizationRequest",
    "EventName",
    "FileStorage",
    "FileStorageError",
    "InvalidOptionsError",
    "Lock",
    "MemoryStorage",
    "OAuthResponseError",
    "PkcePair",
    "RedisStoreError",
    "SessionEndedError",
    "SessionInfo",
    "TenantIntegrationError",
    "TokenErrorCode",
    "TokenManager",
    "TokenManagerError",
    "TokenStorage",
    "TransientError",
    "create_pkce_pair",
    "derive_code_challenge",
]
