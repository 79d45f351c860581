"""tenant_integration: the Python SDK of the Tenant Integration Service.

A typed httpx client (:class:`Client`, :class:`AsyncClient`), a rotation-safe OAuth 2.0 token manager
(PKCE S256, RFC 6749 §4.1, RFC 7636) and token storages (memory, file, Redis) whose records are
interchangeable with the TypeScript kit's.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from ._retry import RetryPolicy
from ._running_time import RunningTimeTransport
from .auth import (
    AccessTokenSource,
    AsyncAccessTokenSource,
    AsyncRefreshableTokenSource,
    AsyncTokenAuth,
    RefreshableTokenSource,
    TokenAuth,
)
from .client import DEFAULT_TIMEOUT, AsyncClient, Client
from .errors import InvalidOptionsError, TenantIntegrationError
from .http_errors import (
    ForbiddenError,
    HttpError,
    InsufficientScopeError,
    InvalidResponseError,
    InvalidTokenError,
    NetworkError,
    NetworkTimeoutError,
    PathOutsideApiError,
    RateLimitError,
    ServerError,
    UnauthorizedError,
)
from .pkce import PkcePair, create_pkce_pair, derive_code_challenge
from .storage import FileStorage, FileStorageError, Lock, RedisStoreError, TokenStorage
from .storage.memory import MemoryStorage
from .token_errors import OAuthResponseError, SessionEndedError, TokenErrorCode, TokenManagerError, TransientError
from .token_manager import AsyncTokenManager, AuthorizationRequest, EventName, SessionInfo, SignedOut, TokenManager

try:
    __version__ = _version("tenant-integration")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"
"""The installed distribution's version (``package.json``'s, which the wheel carries)."""

__all__ = [
    "DEFAULT_TIMEOUT",
    "AccessTokenSource",
    "AsyncAccessTokenSource",
    "AsyncClient",
    "AsyncRefreshableTokenSource",
    "AsyncTokenAuth",
    "AsyncTokenManager",
    "AuthorizationRequest",
    "Client",
    "EventName",
    "FileStorage",
    "FileStorageError",
    "ForbiddenError",
    "HttpError",
    "InsufficientScopeError",
    "InvalidOptionsError",
    "InvalidResponseError",
    "InvalidTokenError",
    "Lock",
    "MemoryStorage",
    "NetworkError",
    "NetworkTimeoutError",
    "OAuthResponseError",
    "PathOutsideApiError",
    "PkcePair",
    "RateLimitError",
    "RedisStoreError",
    "RefreshableTokenSource",
    "RetryPolicy",
    "RunningTimeTransport",
    "ServerError",
    "SessionEndedError",
    "SessionInfo",
    "SignedOut",
    "TenantIntegrationError",
    "TokenAuth",
    "TokenErrorCode",
    "TokenManager",
    "TokenManagerError",
    "TokenStorage",
    "TransientError",
    "UnauthorizedError",
    "__version__",
    "create_pkce_pair",
    "derive_code_challenge",
]
