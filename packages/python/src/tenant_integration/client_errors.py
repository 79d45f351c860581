"""The errors of the client: one class per status a caller branches on, and the failures without an answer
(the token manager's are in :mod:`tenant_integration.token_errors`), and how they are built from httpx's.

The codes are the TypeScript client's (``packages/client/src/errors.ts``):

======================================  ======================  ===========================================
class                                   code                    when
======================================  ======================  ===========================================
:class:`HttpError`                      ``HTTP_ERROR``          any other non-2xx answer (400, 404, a 3xx
                                                                left unfollowed, …)
:class:`UnauthorizedError`              ``UNAUTHORIZED``        401, after the one refresh-and-retry
:class:`ForbiddenError`                 ``FORBIDDEN``           403
:class:`InsufficientScopeError`         ``INSUFFICIENT_SCOPE``  403 with ``error="insufficient_scope"``
:class:`RateLimitError`                 ``RATE_LIMITED``        429, once retries are used up
:class:`ServerError`                    ``SERVER_ERROR``        5xx, once retries are used up
:class:`NetworkError`                   ``NETWORK_ERROR``       no answer: connection refused, reset, DNS
:class:`NetworkTimeoutError`            ``TIMEOUT``             no answer within the timeout
:class:`PathOutsideApiError`            ``PATH_OUTSIDE_API``    ``Client.request`` given a path outside
                                                                ``/api/v1`` (nothing is sent)
:class:`InvalidTokenError`              ``INVALID_TOKEN``       the token source gave no bearer token
:class:`InvalidResponseError`           ``INVALID_RESPONSE``    a 2xx answer the operation cannot read
======================================  ======================  ===========================================

None holds a token (RFC 6750 §5.3): the message names only the method, the URL without its query and
the status; ``headers`` drops ``Authorization``, ``Proxy-Authorization``, cookies and any header whose
value echoes a token the request carried; ``body`` has every form of that token replaced by
``[redacted]``; the ``cause`` of a network error is a copy of httpx's error without its request.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from typing import Any, Final

import httpx

from ._log import scrub, secret_variants
from ._redact import redact, secret_forms
from ._retry import parse_retry_after
from ._www_authenticate import bearer_challenge
from .errors import TenantIntegrationError

__all__ = [
    "ForbiddenError",
    "HttpError",
    "InsufficientScopeError",
    "InvalidResponseError",
    "InvalidTokenError",
    "NetworkError",
    "NetworkTimeoutError",
    "PathOutsideApiError",
    "RateLimitError",
    "ServerError",
    "UnauthorizedError",
]

# Response headers that carry credentials or session state: never kept on an error.
_CREDENTIAL_HEADERS: Final = frozenset({"authorization", "proxy-authorization", "set-cookie", "set-cookie2", "cookie"})


class HttpError(TenantIntegrationError):
    """A non-2xx answer (RFC 9110 §15): the base of the per-status classes, and the class itself for
    every status without one (400, 404, 409, a 3xx that was not followed, …).

    Attributes:
        status: the HTTP status.
        method: the request method.
        url: the request URL without its query.
        headers: the response headers, lower-case names, without credentials or echoed tokens.
        body: the parsed body (JSON when it parses, else text; ``None`` when empty), tokens redacted.

    Example:
        >>> try:
        ...     client.request("GET", "/api/v1/missing")  # doctest: +SKIP
        ... except HttpError as e:
        ...     e.status, e.code
        (404, 'HTTP_ERROR')
    """

    status: int
    method: str
    url: str
    headers: Mapping[str, str]
    body: Any

    def __init__(
        self,
        *,
        status: int,
        method: str,
        url: str,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
        code: str = "HTTP_ERROR",
        detail: str | None = None,
    ) -> None:
        reason = httpx.codes.get_reason_phrase(status)
        message = f"{method} {url}: {status}{f' {reason}' if reason else ''}{f': {detail}' if detail else ''}"
        super().__init__(code, message)
        self.status = status
        self.method = method
        self.url = url
        self.headers = dict(headers or {})
        self.body = body


class UnauthorizedError(HttpError):
    """401 Unauthorized: the tenant did not accept the token as authenticated.

    That a missing, expired or revoked token is answered 401 with ``invalid_token`` is the contract's
    assumption (RFC 6750 §3.1): the service description says only that calls with an expired token "are no
    longer accepted as authenticated".

    Raised after the client's one refresh-and-retry (``on_unauthorized``, then a new token) did not help,
    or when the token source cannot refresh (a static token). ``error`` and ``error_description`` are the
    ``WWW-Authenticate: Bearer`` challenge's (RFC 6750 §3), or ``None``.

    Example:
        >>> e = UnauthorizedError(status=401, method="GET", url="https://t.test/api/v1/auth/user",
        ...                       error="invalid_token")
        >>> e.code, e.error
        ('UNAUTHORIZED', 'invalid_token')
    """

    def __init__(
        self,
        *,
        status: int = 401,
        method: str,
        url: str,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
        error: str | None = None,
        error_description: str | None = None,
    ) -> None:
        super().__init__(
            status=status, method=method, url=url, headers=headers, body=body, code="UNAUTHORIZED", detail=error
        )
        self.error = error
        self.error_description = error_description


class ForbiddenError(HttpError):
    """403 Forbidden: the token is valid but may not do this (service description §5.9, RFC 6750 §3.1).

    ``missing_scopes`` are the scope names of the ``WWW-Authenticate: Bearer`` challenge's ``scope``
    attribute (RFC 6750 §3; space-separated, RFC 6749 §3.3), empty when it names none; ``error`` is the
    challenge's error code (``insufficient_scope`` gives the subclass :class:`InsufficientScopeError`).

    The list is read as alternatives: holding **any one** of the named scopes is taken to suffice. That
    reading is an assumption of the kit, as the TypeScript client marks it: RFC 6750 §3 says only that
    ``scope`` lists the scopes needed to access the resource, and the service description says neither
    what the challenge carries nor how its list is meant; what it says (§5.9) is that where a route
    checks several scopes, holding one of the accepted scopes suffices, and the kit reads the
    challenge's list as those accepted scopes.

    Example:
        >>> e = ForbiddenError(status=403, method="GET", url="https://t.test/api/v1/auth/user",
        ...                    missing_scopes=("profile:read",))
        >>> str(e)
        'FORBIDDEN: GET https://t.test/api/v1/auth/user: 403 Forbidden: needs profile:read'
    """

    def __init__(
        self,
        *,
        status: int = 403,
        method: str,
        url: str,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
        missing_scopes: Iterable[str] = (),
        error: str | None = None,
        error_description: str | None = None,
        code: str = "FORBIDDEN",
    ) -> None:
        scopes = tuple(missing_scopes)
        detail = f"needs {' or '.join(scopes)}" if scopes else None
        super().__init__(status=status, method=method, url=url, headers=headers, body=body, code=code, detail=detail)
        self.missing_scopes: tuple[str, ...] = scopes
        self.error = error
        self.error_description = error_description


class InsufficientScopeError(ForbiddenError):
    """A 403 whose challenge says ``error="insufficient_scope"`` (RFC 6750 §3.1): the token lacks a scope
    in ``missing_scopes``. Sign in again asking for it; retrying does not help.

    Example:
        >>> e = InsufficientScopeError(method="GET", url="https://t.test/x", missing_scopes=("profile:read",))
        >>> e.code, isinstance(e, ForbiddenError)
        ('INSUFFICIENT_SCOPE', True)
    """

    def __init__(
        self,
        *,
        status: int = 403,
        method: str,
        url: str,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
        missing_scopes: Iterable[str] = (),
        error_description: str | None = None,
    ) -> None:
        super().__init__(
            status=status,
            method=method,
            url=url,
            headers=headers,
            body=body,
            missing_scopes=missing_scopes,
            error="insufficient_scope",
            error_description=error_description,
            code="INSUFFICIENT_SCOPE",
        )


class RateLimitError(HttpError):
    """429 Too Many Requests (RFC 6585 §4), raised once the client's retries are used up or the server
    asks to wait longer than the retry policy's ``max_delay``.

    ``retry_after`` is the ``Retry-After`` header (delay-seconds or an HTTP-date, RFC 9110 §10.2.3) in
    seconds from when the answer was read, or ``None`` without a readable one.

    Example:
        >>> RateLimitError(method="GET", url="https://t.test/x", retry_after=30.0).retry_after
        30.0
    """

    def __init__(
        self,
        *,
        status: int = 429,
        method: str,
        url: str,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
        retry_after: float | None = None,
    ) -> None:
        detail = None if retry_after is None else f"retry after {retry_after:g} s"
        super().__init__(
            status=status, method=method, url=url, headers=headers, body=body, code="RATE_LIMITED", detail=detail
        )
        self.retry_after = retry_after


class ServerError(HttpError):
    """A 5xx answer (RFC 9110 §15.6), raised once the client's retries are used up (501 and 505 are never
    retried: they cannot succeed later).

    Example:
        >>> ServerError(status=503, method="GET", url="https://t.test/x").code
        'SERVER_ERROR'
    """

    def __init__(
        self,
        *,
        status: int,
        method: str,
        url: str,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(status=status, method=method, url=url, headers=headers, body=body, code="SERVER_ERROR")


class NetworkError(TenantIntegrationError):
    """No answer: the connection was refused or reset, the name did not resolve, the answer was cut.

    ``cause`` is a copy of httpx's error, with its message redacted and without the request (which
    carries the ``Authorization`` header). Idempotent requests are retried before this is raised
    (RFC 9110 §9.2.2).

    Example:
        >>> NetworkError(method="GET", url="https://t.test/x").code
        'NETWORK_ERROR'
    """

    def __init__(
        self, *, method: str, url: str, code: str = "NETWORK_ERROR", cause: BaseException | None = None
    ) -> None:
        verb = "timed out" if code == "TIMEOUT" else "failed"
        # The reason in the message too (a log line or a traceback's last line often shows only that);
        # the cause is already redacted (network_error_from).
        reason = "" if cause is None else f": {type(cause).__name__}" + (f": {cause}" if str(cause) else "")
        super().__init__(code, f"{method} {url} {verb}{reason}", cause=cause)
        self.method = method
        self.url = url


class NetworkTimeoutError(NetworkError):
    """The answer did not come within the client's timeout (connect, read, write or pool, httpx's
    phases), code ``TIMEOUT``. Named apart from the builtin :class:`TimeoutError`, and not an HTTP 408.
    A timed-out request is not sent again (RFC 9110 §9.2.2: it may have been processed).

    Example:
        >>> NetworkTimeoutError(method="GET", url="https://t.test/x").code
        'TIMEOUT'
    """

    def __init__(self, *, method: str, url: str, cause: BaseException | None = None) -> None:
        super().__init__(method=method, url=url, code="TIMEOUT", cause=cause)


class PathOutsideApiError(TenantIntegrationError):
    """``Client.request`` was given a path outside ``/api/v1`` of the tenant (an OAuth endpoint, an
    absolute URL, or a path that leaves ``/api/v1`` once dot segments are removed, RFC 3986 §5.2.4).
    Nothing is sent: the token goes only to the API it is meant for (RFC 6750 §5.2).

    Example:
        >>> PathOutsideApiError("/oauth/token").code
        'PATH_OUTSIDE_API'
    """

    def __init__(self, path: str) -> None:
        shown = path.split("?", 1)[0].split("#", 1)[0]
        super().__init__("PATH_OUTSIDE_API", f"{shown!r} is outside /api/v1; give a path such as /api/v1/auth/user")
        self.path = shown


class InvalidTokenError(TenantIntegrationError):
    """The token source gave something that is not a bearer token (RFC 6750 §2.1 ``b64token``: letters,
    digits, ``-._~+/``, then ``=`` padding). The value is never shown.

    Example:
        >>> InvalidTokenError().code
        'INVALID_TOKEN'
    """

    def __init__(self) -> None:
        super().__init__(
            "INVALID_TOKEN", "the token source gave a value that is not a bearer token (RFC 6750 §2.1 b64token)"
        )


class InvalidResponseError(TenantIntegrationError):
    """A 2xx answer the operation cannot read, e.g. a body that is not the JSON object the contract
    promises. ``status`` is the answer's status.

    Example:
        >>> InvalidResponseError(status=200, method="GET", url="https://t.test/x", reason="not JSON").code
        'INVALID_RESPONSE'
    """

    def __init__(self, *, status: int, method: str, url: str, reason: str) -> None:
        super().__init__("INVALID_RESPONSE", f"{method} {url}: {status}: {reason}")
        self.status = status
        self.method = method
        self.url = url


# -- building errors from httpx ------------------------------------------------------------------------


def sent_tokens(response_or_request: httpx.Response | httpx.Request | None) -> list[str]:
    """The credentials the request(s) behind an answer carried: the value after the scheme of each
    ``Authorization`` header, the answer's request and those of its history (a 401 resent once)."""
    if response_or_request is None:
        return []
    requests: list[httpx.Request] = []
    if isinstance(response_or_request, httpx.Response):
        for earlier in response_or_request.history:
            requests.append(earlier.request)
        # A response built by hand has no request: nothing was sent with it.
        with contextlib.suppress(RuntimeError):
            requests.append(response_or_request.request)
    else:
        requests.append(response_or_request)
    tokens: list[str] = []
    for request in requests:
        value = request.headers.get("authorization")
        if value:
            credential = value.split(None, 1)[-1].strip()
            if credential and credential not in tokens:
                tokens.append(credential)
    return tokens


def _redacted(value: Any, secrets: list[str]) -> Any:
    """``value`` (parsed JSON or text) with every form of every secret replaced, at every depth."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, list):
        return [_redacted(item, secrets) for item in value]
    if isinstance(value, dict):
        return {_redacted(k, secrets): _redacted(v, secrets) for k, v in value.items()}
    return value


def _body(response: httpx.Response) -> Any:
    """The answer's body: JSON when it parses, else text, ``None`` when empty."""
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        return response.text


def _headers(response: httpx.Response, secrets: list[str]) -> dict[str, str]:
    forms = [form for secret in secrets for form in secret_forms(secret)]
    kept: dict[str, str] = {}
    for name in response.headers:
        lower = name.lower()
        if lower in _CREDENTIAL_HEADERS:
            continue
        value = ", ".join(response.headers.get_list(name))
        if any(form in value for form in forms):
            continue
        kept[lower] = value
    return kept


def url_without_query(url: httpx.URL, secrets: Iterable[str] = ()) -> str:
    """``scheme://host[:port]/path`` of ``url``, with any secret in the path redacted."""
    return redact(str(url.copy_with(query=None, fragment=None)), secrets)


def http_error_from(response: httpx.Response, *, now: float) -> HttpError:
    """The error of a non-2xx answer, of the class its status calls for, without credentials.

    ``now`` (seconds since the epoch) reads a ``Retry-After`` date. The challenge of a 401 or 403 is
    read from every ``WWW-Authenticate`` line (RFC 9110 §11.6.1, RFC 6750 §3).
    """
    # Every form of the tokens sent, base64 included (a server may echo a token in any of them).
    secrets = [variant for token in sent_tokens(response) for variant in secret_variants(token)]
    request = response.request
    common: dict[str, Any] = {
        "status": response.status_code,
        "method": request.method,
        "url": url_without_query(request.url, secrets),
        "headers": _headers(response, secrets),
        "body": _redacted(_body(response), secrets),
    }
    status = response.status_code
    if status in (401, 403):
        challenge = bearer_challenge(", ".join(response.headers.get_list("www-authenticate"))) or {}
        error = challenge.get("error")
        description = challenge.get("error_description")
        if description is not None:
            description = redact(description, secrets)
        if status == 401:
            return UnauthorizedError(**common, error=error, error_description=description)
        scopes = tuple(s for s in challenge.get("scope", "").replace("\t", " ").split(" ") if s)
        if error == "insufficient_scope":
            return InsufficientScopeError(**common, missing_scopes=scopes, error_description=description)
        return ForbiddenError(**common, missing_scopes=scopes, error=error, error_description=description)
    if status == 429:
        return RateLimitError(**common, retry_after=parse_retry_after(response.headers.get("retry-after"), now))
    if 500 <= status <= 599:
        return ServerError(**common)
    return HttpError(**common)


def network_error_from(failure: httpx.RequestError, *, method: str, url: str) -> NetworkError:
    """The error of a request that got no answer: :class:`NetworkTimeoutError` for httpx's timeouts,
    else :class:`NetworkError`. Its ``cause`` is a new exception of httpx's class with the message
    redacted and no request attached (the original's request carries the ``Authorization`` header and
    its traceback the token in local variables)."""
    try:
        secrets = sent_tokens(failure.request)
    except RuntimeError:
        secrets = []
    # The tokens in every form, and the values of secret-named keys (a URL's ?state=… in the message).
    message = scrub(str(failure), secrets)
    cause: BaseException
    try:
        cause = type(failure)(message)
    except Exception:
        cause = httpx.TransportError(message)
    if isinstance(failure, httpx.TimeoutException):
        return NetworkTimeoutError(method=method, url=url, cause=cause)
    return NetworkError(method=method, url=url, cause=cause)
