"""The errors of the token manager, with the TypeScript kit's stable codes.

Four classes, told apart further by ``code`` (the codes of ``@tenant-integration/token-manager``'s
``ErrorCode``, so that a Python and a TypeScript integration branch on the same strings). No error
carries a token, an authorization code, a PKCE verifier or a state: not in its message, its
attributes or its cause (causes are scrubbed copies, see :func:`scrubbed`).

See RFC 6749 §4.1.2.1 (error callback), §5.2 (error response), §10.12 (state); RFC 7636 §4.1.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from ._redact import redact
from .errors import TenantIntegrationError

__all__ = [
    "OAuthResponseError",
    "ScrubbedError",
    "SessionEndedError",
    "TokenErrorCode",
    "TokenManagerError",
    "TransientError",
    "scrubbed",
]

TokenErrorCode = Literal[
    "INVALID_OPTIONS",
    "INVALID_VERIFIER",
    "NO_PENDING_SIGN_IN",
    "STATE_MISSING",
    "STATE_MISMATCH",
    "STATE_EXPIRED",
    "INVALID_CALLBACK",
    "CALLBACK_PORT_IN_USE",
    "CALLBACK_TIMEOUT",
    "REDIRECT_URI_REFUSED",
    "AUTHORIZATION_DENIED",
    "OAUTH_ERROR",
    "SESSION_ENDED",
    "TRANSIENT",
    "INVALID_RESPONSE",
    "NOT_SIGNED_IN",
    "STORAGE_FAILED",
    "LOCK_TIMEOUT",
    "INVALID_SESSION_ID",
]
"""The stable codes of :class:`TokenManagerError` and its subclasses.

All but ``LOCK_TIMEOUT`` are the TypeScript kit's (``packages/token-manager/src/errors.ts``):

- ``INVALID_OPTIONS``: an option is invalid (raised as :class:`~tenant_integration.errors.InvalidOptionsError`).
- ``INVALID_VERIFIER``: a PKCE verifier is not 43 to 128 characters of ``A-Z a-z 0-9 - . _ ~`` (RFC 7636 §4.1).
- ``NO_PENDING_SIGN_IN``: ``complete_authorization`` found no pending sign-in (never begun, used, cleared).
- ``STATE_MISSING`` / ``STATE_MISMATCH`` / ``STATE_EXPIRED``: the callback's ``state`` is absent, differs
  from the stored one (or the sign-in was started in another browser, or for another session), or the
  pending sign-in outlived its lifetime (RFC 6749 §10.12, RFC 9700 §4.7.1). No request is sent.
- ``INVALID_CALLBACK``: the callback is not a full URL, not at the redirect URI, repeats ``state``,
  ``code`` or ``error``, or has no ``code``.
- ``CALLBACK_TIMEOUT``: no callback arrived within the loopback sign-in's wait
  (:class:`~tenant_integration.loopback.LoopbackError`, RFC 8252 §7.3).
- ``CALLBACK_PORT_IN_USE``: the loopback sign-in's port is taken by another program; ``port`` is set
  (:class:`~tenant_integration.loopback.LoopbackError`, RFC 8252 §7.3).
- ``REDIRECT_URI_REFUSED``: the tenant answered the authorize request with an error page instead of
  redirecting (the redirect URI or client id is not registered); ``status`` is set (RFC 6749 §4.1.2.1).
- ``AUTHORIZATION_DENIED``: the callback carries ``error`` (e.g. ``access_denied``, RFC 6749 §4.1.2.1).
- ``OAUTH_ERROR``: the token or revocation endpoint answered an RFC 6749 §5.2 error (:class:`OAuthResponseError`).
- ``SESSION_ENDED``: the refresh token was refused with ``invalid_grant``; tokens cleared (:class:`SessionEndedError`).
- ``TRANSIENT``: network error, timeout, 429 or 5xx; tokens kept (:class:`TransientError`).
- ``INVALID_RESPONSE``: the endpoint answered something that is not a valid response; nothing stored.
- ``NOT_SIGNED_IN``: there are no tokens.
- ``STORAGE_FAILED``: the storage failed; ``cause`` is the storage's error.
- ``INVALID_SESSION_ID``: a session id is outside the rule (1 to 128 characters from
  ``A-Z a-z 0-9 - . _ ~ @ + = |``); nothing was read or written (``spec/token-store/README.md``).

One belongs to the Python SDK for now: ``LOCK_TIMEOUT``, the in-process lock of
:class:`~tenant_integration.storage.memory.MemoryStorage` stayed held for its whole bounded wait (the
file and Redis locks raise their own ``LOCK_TIMEOUT`` errors, which the manager lets through, as the
TypeScript manager does).
"""


class TokenManagerError(TenantIntegrationError):
    """The base class of the token manager's errors, raised directly for every failure that is not an
    endpoint's answer (a rejected callback, an invalid response, no tokens, a failed storage).

    Attributes:
        code: one of :data:`TokenErrorCode`.
        error, error_description, error_uri: with ``AUTHORIZATION_DENIED`` (and on
            :class:`OAuthResponseError`), the RFC 6749 §5.2 fields the tenant sent; otherwise ``None``.

    Example:
        >>> try:
        ...     raise TokenManagerError("STATE_MISMATCH", "the callback's state is not the stored one")
        ... except TokenManagerError as e:
        ...     e.code
        'STATE_MISMATCH'

    See RFC 6749 §4.1.2.1, §5.2, §10.12.
    """

    code: TokenErrorCode

    def __init__(
        self,
        code: TokenErrorCode,
        message: str = "",
        *,
        cause: BaseException | None = None,
        error: str | None = None,
        error_description: str | None = None,
        error_uri: str | None = None,
    ) -> None:
        super().__init__(code, message, cause=cause)
        self.error = error
        self.error_description = error_description
        self.error_uri = error_uri


def _describe(error: str, description: str | None) -> str:
    return f"{error} ({description})" if description else error


class OAuthResponseError(TokenManagerError):
    """The token or revocation endpoint answered with an RFC 6749 §5.2 error body. Tokens are kept.

    Attributes:
        status: the HTTP status of the answer.
        error: the RFC 6749 §5.2 ``error`` code, e.g. ``invalid_request``.

    Example:
        >>> e = OAuthResponseError(400, "invalid_request", "missing code_verifier")
        >>> (e.code, e.status, e.error, str(e))
        ('OAUTH_ERROR', 400, 'invalid_request', 'OAUTH_ERROR: HTTP 400: invalid_request (missing code_verifier)')

    See RFC 6749 §5.2, RFC 7009 §2.2.1.
    """

    error: str

    def __init__(
        self,
        status: int,
        error: str,
        error_description: str | None = None,
        error_uri: str | None = None,
        *,
        code: TokenErrorCode = "OAUTH_ERROR",
    ) -> None:
        super().__init__(
            code,
            f"HTTP {status}: {_describe(error, error_description)}",
            error=error,
            error_description=error_description,
            error_uri=error_uri,
        )
        self.status = status


class SessionEndedError(OAuthResponseError):
    """The refresh token is dead (``invalid_grant``: expired, revoked or rotated away). The manager has
    cleared its tokens and fired ``session-ended``; the user must sign in again.

    Example:
        >>> SessionEndedError(400, "invalid_grant").code
        'SESSION_ENDED'

    See RFC 6749 §5.2 (``invalid_grant``), §6.
    """

    def __init__(
        self, status: int, error: str, error_description: str | None = None, error_uri: str | None = None
    ) -> None:
        super().__init__(status, error, error_description, error_uri, code="SESSION_ENDED")


class TransientError(TokenManagerError):
    """A network error, a timeout, 429 or a 5xx answer. Tokens are kept; calling again later may succeed.

    Attributes:
        status: the HTTP status of the last answer, or ``None`` when no answer came.
        attempts: how many requests were made.
        sent: ``False`` when the last request cannot have been handled by the tenant (no connection was
            made, or it answered 503, RFC 9110 §15.6.4, or 429, by the kit's assumption): only then is a refresh tried
            again, since the tenant may otherwise have rotated the refresh token already.
        retry_after: the last answer's ``Retry-After`` (RFC 9110 §10.2.3) in seconds, or ``None``. A
            refresh is retried after that delay, unless it is longer than 10 s: then it is raised at once
            and this says when to try again.

    Example:
        >>> e = TransientError(503, 1)
        >>> (e.code, e.status, str(e))
        ('TRANSIENT', 503, 'TRANSIENT: HTTP 503 (1 attempt)')
        >>> str(TransientError(429, 1, retry_after=30.0))
        'TRANSIENT: HTTP 429 (1 attempt); retry after 30 s'

    See RFC 6749 §6.
    """

    def __init__(
        self,
        status: int | None,
        attempts: int,
        *,
        cause: BaseException | None = None,
        sent: bool = True,
        retry_after: float | None = None,
    ) -> None:
        what = f"HTTP {status}" if status is not None else "no answer"
        plural = "attempt" if attempts == 1 else "attempts"
        wait = "" if retry_after is None else f"; retry after {retry_after:g} s"
        super().__init__("TRANSIENT", f"{what} ({attempts} {plural}){wait}", cause=cause)
        self.status = status
        self.attempts = attempts
        self.sent = sent
        self.retry_after = retry_after


class ScrubbedError(Exception):
    """The stand-in cause of an error whose original held a secret or a request (e.g. an
    :class:`httpx.RequestError`, whose ``request`` holds the body): its class name and its message,
    scrubbed, and nothing else."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}" if message else kind)
        self.kind = kind


def scrubbed(error: BaseException, secrets: Iterable[str | None]) -> BaseException:
    """A cause safe to attach: ``error`` itself when it is one of the SDK's errors and prints no secret
    (storage and lock errors name files and keys, never values), else a :class:`ScrubbedError` copy of
    its class name and scrubbed message, which holds no request, body or context.

    See RFC 6749 §10.3, §10.4; RFC 6750 §5.3.
    """
    secrets = list(secrets)
    text = str(error)
    clean = redact(text, secrets)
    if isinstance(error, TenantIntegrationError) and clean == text:
        return error
    return ScrubbedError(type(error).__name__, clean)
