"""tenant_integration: the Python SDK of the Tenant Integration Service.

A typed httpx client (:class:`Client`, :class:`AsyncClient`), a rotation-safe OAuth 2.0 token manager
(PKCE S256, RFC 6749 §4.1, RFC 7636) and token storages (memory, file, Redis) whose records are
interchangeable with the TypeScript kit's.

Every name below is loaded on first use (PEP 562): ``import tenant_integration`` costs next to
nothing, and ``from tenant_integration import Client`` loads the client and what it needs (httpx),
not the token manager, the file lock or asyncio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ._lazy_exports import lazy_exports

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time, __getattr__ below loads each name
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
    from .client_errors import (
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
    from .errors import InvalidOptionsError, TenantIntegrationError
    from .pkce import PkcePair, create_pkce_pair, derive_code_challenge
    from .storage import FileStorage, FileStorageError, Lock, RedisStorageError, TokenStorage
    from .storage.memory import MemoryStorage
    from .token_errors import OAuthResponseError, SessionEndedError, TokenErrorCode, TokenManagerError, TransientError
    from .token_manager import (
        AsyncSessions,
        AsyncTokenManager,
        AuthorizationRequest,
        EventName,
        SessionInfo,
        Sessions,
        SignedIn,
        SignedOut,
        SignIn,
        TokenManager,
    )

    __version__: str
    """The installed distribution's version (``package.json``'s, which the wheel carries)."""

# Each public name and the module that defines it (relative to this package).
_EXPORTS: Final[dict[str, str]] = {
    "RetryPolicy": "._retry",
    "RunningTimeTransport": "._running_time",
    "AccessTokenSource": ".auth",
    "AsyncAccessTokenSource": ".auth",
    "AsyncRefreshableTokenSource": ".auth",
    "AsyncTokenAuth": ".auth",
    "RefreshableTokenSource": ".auth",
    "TokenAuth": ".auth",
    "DEFAULT_TIMEOUT": ".client",
    "AsyncClient": ".client",
    "Client": ".client",
    "ForbiddenError": ".client_errors",
    "HttpError": ".client_errors",
    "InsufficientScopeError": ".client_errors",
    "InvalidResponseError": ".client_errors",
    "InvalidTokenError": ".client_errors",
    "NetworkError": ".client_errors",
    "NetworkTimeoutError": ".client_errors",
    "PathOutsideApiError": ".client_errors",
    "RateLimitError": ".client_errors",
    "ServerError": ".client_errors",
    "UnauthorizedError": ".client_errors",
    "InvalidOptionsError": ".errors",
    "TenantIntegrationError": ".errors",
    "PkcePair": ".pkce",
    "create_pkce_pair": ".pkce",
    "derive_code_challenge": ".pkce",
    "FileStorage": ".storage",
    "FileStorageError": ".storage",
    "Lock": ".storage",
    "RedisStorageError": ".storage",
    "TokenStorage": ".storage",
    "MemoryStorage": ".storage.memory",
    "OAuthResponseError": ".token_errors",
    "SessionEndedError": ".token_errors",
    "TokenErrorCode": ".token_errors",
    "TokenManagerError": ".token_errors",
    "TransientError": ".token_errors",
    "AsyncSessions": ".token_manager",
    "AsyncTokenManager": ".token_manager",
    "AuthorizationRequest": ".token_manager",
    "EventName": ".token_manager",
    "SessionInfo": ".token_manager",
    "Sessions": ".token_manager",
    "SignIn": ".token_manager",
    "SignedIn": ".token_manager",
    "SignedOut": ".token_manager",
    "TokenManager": ".token_manager",
}


def _installed_version() -> str:
    # importlib.metadata alone costs a third of httpx's import time: loaded only when asked.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tenant-integration")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "0+unknown"


# PEP 562, hidden from type checkers: they read the imports above, so a misspelt name stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _EXPORTS, computed={"__version__": _installed_version})


__all__ = [
    "DEFAULT_TIMEOUT",
    "AccessTokenSource",
    "AsyncAccessTokenSource",
    "AsyncClient",
    "AsyncRefreshableTokenSource",
    "AsyncSessions",
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
    "RedisStorageError",
    "RefreshableTokenSource",
    "RetryPolicy",
    "RunningTimeTransport",
    "ServerError",
    "SessionEndedError",
    "SessionInfo",
    "Sessions",
    "SignIn",
    "SignedIn",
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
