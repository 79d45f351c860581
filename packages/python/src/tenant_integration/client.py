"""The typed client of one tenant, on httpx: :class:`Client` (sync) and :class:`AsyncClient` (asyncio).

One method per API operation of the contract (``spec/dist/openapi.json``, read through the generated
table :mod:`tenant_integration._generated.operations`), named after its ``operationId`` in snake case
(``getAuthenticatedUser`` → :meth:`Client.get_authenticated_user`, also :meth:`Client.get_user`), plus
:meth:`Client.request` for ``/api/v1`` routes the contract does not list yet. What every call does, as
the TypeScript client (``createTenantClient``) does it:

- the bearer token goes only to the tenant's origin (:class:`~tenant_integration.auth.TokenAuth`,
  RFC 6750 §2.1, §5.2); a 401 is answered once by ``on_unauthorized``, a new token and the request sent
  again with its body (RFC 6749 §6);
- redirects are never followed (RFC 6750 §5.2: no token follows one); a 3xx is raised as
  :class:`~tenant_integration.HttpError`;
- an idempotent request answered 429 or a retryable 5xx, or whose connection failed, is sent again
  after the ``Retry-After`` delay or a jittered exponential backoff, up to a cap
  (:class:`~tenant_integration.RetryPolicy`, RFC 9110 §10.2.3, §9.2.2);
- a non-2xx answer raises the error class of its status
  (:mod:`tenant_integration.client_errors`), which never holds a token;
- a timeout by default (:data:`DEFAULT_TIMEOUT`), and a :mod:`logging` logger whose lines never hold a
  token, code, verifier or state.

Written once (see ``CONTRIBUTING.md``, "Sync and async"): :class:`AsyncClient` is the source
(``_async/client.py``), :class:`Client` is generated from it (``_sync/client.py``, by
``scripts/unasync.py``). This module holds what needs no I/O, written once for both (the options, the
URL of a call, the retry decision, the log lines: :class:`_Base`), the few things that differ, as pairs
the generator swaps (``AsyncSleep``/``Sleep``, ``_check_async_auth``/``_check_sync_auth``), and both
clients under their public name.
"""

from __future__ import annotations

import copy
import inspect
import logging
import math
import posixpath
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Self, cast
from urllib.parse import unquote, urlsplit

import httpx

from ._base_url import tenant_origin
from ._lazy_exports import lazy_exports
from ._log import CLIENT_LOGGER_NAME, RedactingLogger
from ._retry import IDEMPOTENT_METHODS, RetryPolicy, is_retryable_status, retry_policy
from ._tls import shared_context
from .auth import AccessTokenSource, AsyncAccessTokenSource, AsyncTokenAuth, TokenAuth
from .client_errors import (
    InvalidResponseError,
    NetworkError,
    PathOutsideApiError,
    http_error_from,
    sent_tokens,
    url_without_query,
)
from .errors import InvalidOptionsError

if TYPE_CHECKING:  # what type checkers see; at run time, __getattr__ at the end loads each client on first use
    from ._async.client import AsyncClient
    from ._sync.client import Client

__all__ = ["API_PREFIX", "DEFAULT_TIMEOUT", "AsyncClient", "Client", "RetryPolicy"]

DEFAULT_TIMEOUT: Final = httpx.Timeout(30.0, connect=10.0)
"""The default timeout, suitable for a command-line tool: 10 s to connect, 30 s for each of httpx's
other phases (each read and write of the connection, and the wait for a pooled connection). It is
not a deadline on the whole call: retries add their waits, each attempt has its own timeouts."""

API_PREFIX: Final = "/api/v1"
"""The path under which :meth:`Client.request` sends (service description §4)."""

# Sent with every request; the ``headers`` option and a call's own headers go over them.
_DEFAULT_HEADERS: Final = {"Accept": "application/json"}

# httpx's errors after which the connection may simply be tried again (RFC 9110 §9.2.2): not a timeout,
# which may have reached the server, nor a bad URL.
_RETRYABLE_FAILURES: Final = (httpx.NetworkError, httpx.RemoteProtocolError)

_DEFAULT_RETRIES: Final = RetryPolicy()

TimeoutOption = float | httpx.Timeout | None
"""The ``timeout`` option: seconds for every phase, an :class:`httpx.Timeout`, or ``None`` for none."""


class _Unset:
    """The default of an option that is left to something else (httpx's client, the client's default)."""

    def __repr__(self) -> str:
        return "<default>"


_UNSET: Final = _Unset()


def _timeout(value: TimeoutOption | _Unset, option: str = "timeout") -> httpx.Timeout | _Unset:
    if isinstance(value, _Unset | httpx.Timeout):
        return value
    if value is None:
        return httpx.Timeout(None)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise InvalidOptionsError(option, "give seconds (a positive number), an httpx.Timeout, or None for none")
    return httpx.Timeout(float(value))


def _api_path(path: str) -> str:
    """``path`` if it stays under ``/api/v1`` once percent-decoded and without dot segments (RFC 3986
    §5.2.4), else :class:`PathOutsideApiError`. Absolute URLs and network-path references are refused."""
    if not isinstance(path, str) or not path.startswith("/") or path.startswith("//") or "\\" in path:
        raise PathOutsideApiError(str(path))
    parts = urlsplit(path)
    if parts.scheme or parts.netloc:
        raise PathOutsideApiError(path)
    decoded = unquote(parts.path)
    normalized = posixpath.normpath(decoded) if decoded else decoded
    if normalized != API_PREFIX and not normalized.startswith(f"{API_PREFIX}/"):
        raise PathOutsideApiError(path)
    return path


def _json_object(response: httpx.Response) -> dict[str, Any]:
    """The answer's body as the JSON object the contract promises, else :class:`InvalidResponseError`."""
    request = response.request
    try:
        body = response.json()
    except ValueError:
        body = None
        reason = "the body is not JSON"
    else:
        reason = "the body is not a JSON object"
    if not isinstance(body, dict):
        raise InvalidResponseError(
            status=response.status_code,
            method=request.method,
            url=url_without_query(request.url, sent_tokens(response)),
            reason=reason,
        )
    return body


class _Base:
    """What both clients share: the options, the URL of a call, the retry decision, the log lines."""

    _origin: str
    _policy: RetryPolicy
    _log: RedactingLogger
    _headers: dict[str, str]
    _timeout: httpx.Timeout | _Unset
    _owns_http: bool
    # What each request adds to the httpx client's own headers and timeout. The httpx client the SDK
    # makes is built with ``_headers`` and ``_timeout``, so they are not merged again on every call
    # (that merge was half of the client's cost over bare httpx); a user's ``http_client`` gets them
    # with each request.
    _request_headers: dict[str, str]
    _request_timeout: httpx.Timeout | _Unset

    def _configure(
        self,
        base_url: str,
        timeout: TimeoutOption | _Unset,
        retries: RetryPolicy | int | None,
        logger: logging.Logger | None,
        headers: Mapping[str, str] | None,
    ) -> None:
        self._origin = tenant_origin(base_url, "base_url")
        self._timeout = _timeout(timeout)
        self._policy = retry_policy(retries)
        if logger is not None and not isinstance(logger, logging.Logger):
            raise InvalidOptionsError("logger", "give a logging.Logger")
        self._log = RedactingLogger(logger if logger is not None else logging.getLogger(CLIENT_LOGGER_NAME))
        self._headers = {**_DEFAULT_HEADERS, **dict(headers or {})}

    @property
    def base_url(self) -> str:
        """The tenant's origin, normalized (no trailing slash)."""
        return self._origin

    @property
    def retry_policy(self) -> RetryPolicy:
        """The retry policy in use (``retries=0`` when retries are off)."""
        return self._policy

    def with_options(
        self,
        *,
        timeout: TimeoutOption | _Unset = _UNSET,
        retries: RetryPolicy | int | _Unset | None = _UNSET,
        headers: Mapping[str, str] | None = None,
    ) -> Self:
        """A client like this one with other defaults (openai-python's ``with_options``): the same
        tenant, auth, logger and connections, with ``timeout`` and ``retries`` replaced and ``headers``
        added where given. Closing it closes nothing: the connections stay this client's.

        Raises:
            InvalidOptionsError: for a bad option, as the constructor.

        Example:
            >>> client.with_options(timeout=5, retries=0).get_user()  # doctest: +SKIP
        """
        other = copy.copy(self)
        if not isinstance(timeout, _Unset):
            other._timeout = other._request_timeout = _timeout(timeout)
        if not isinstance(retries, _Unset):
            other._policy = retry_policy(retries)
        if headers is not None:
            other._headers = {**self._headers, **dict(headers)}
            other._request_headers = {**self._request_headers, **dict(headers)}
        other._owns_http = False
        return other

    def _http_options(self, http_client: object) -> dict[str, Any]:
        """Puts the client's headers and timeout where they are set once: on the httpx client the SDK
        makes (returned as its options), or, with a user's ``http_client``, on each request."""
        if http_client is not None:
            self._request_headers, self._request_timeout = dict(self._headers), self._timeout
            return {}
        if isinstance(self._timeout, _Unset):
            self._timeout = DEFAULT_TIMEOUT
        self._request_headers, self._request_timeout = {}, _UNSET
        # One SSL context for all the kit's httpx clients, its CA bundle read at the first TLS connection.
        return {"headers": self._headers, "timeout": self._timeout, "verify": shared_context()}

    def _build_options(
        self,
        params: Any,
        json: Any,
        content: str | bytes | None,
        data: Mapping[str, Any] | None,
        headers: Mapping[str, str] | None,
        timeout: TimeoutOption | _Unset,
    ) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if headers:
            options["headers"] = {**self._request_headers, **dict(headers)}
        elif self._request_headers:
            options["headers"] = self._request_headers
        if params is not None:
            options["params"] = params
        if json is not None:
            options["json"] = json
        if content is not None:
            if not isinstance(content, str | bytes):
                # A stream can be sent only once: a retry or a refresh-and-retry could not replay it.
                raise InvalidOptionsError("content", "give str or bytes (a stream cannot be sent again)")
            options["content"] = content
        if data is not None:
            options["data"] = data
        # Most calls give no timeout of their own: then nothing is checked again.
        chosen = self._request_timeout if timeout is _UNSET else _timeout(timeout, "timeout (per request)")
        if not isinstance(chosen, _Unset):
            options["timeout"] = chosen
        return options

    def _retry_delay(
        self, method: str, response: httpx.Response | None, failure: NetworkError | None, index: int
    ) -> float | None:
        """The wait before retry number ``index`` (0-based) after this outcome, or ``None``."""
        if method not in IDEMPOTENT_METHODS:
            return None
        if response is not None:
            if not is_retryable_status(response.status_code):
                return None
            return self._policy.delay(index, response.headers.get("retry-after"))
        cause = failure.cause if failure is not None else None
        if not isinstance(cause, _RETRYABLE_FAILURES):
            return None
        return self._policy.delay(index, None)

    def _log_outcome(
        self,
        method: str,
        path: str,
        response: httpx.Response | None,
        failure: NetworkError | None,
        attempt: int,
        started: float,
    ) -> None:
        duration_ms = round((time.perf_counter() - started) * 1000)
        fields: dict[str, object] = {"method": method, "path": path, "duration_ms": duration_ms, "attempt": attempt}
        if response is not None:
            if response.history:
                # The token was refreshed after a 401 and the request sent again.
                self._log.info(
                    "%s %s %d (attempt %d)", method, path, response.history[0].status_code, attempt, extra=fields
                )
            fields["status"] = response.status_code
            self._log.info(
                "%s %s %d %dms (attempt %d)", method, path, response.status_code, duration_ms, attempt, extra=fields
            )
        elif failure is not None:
            fields["error"] = failure.code
            cause = failure.cause
            reason = "" if cause is None else f" ({type(cause).__name__}: {cause})" if str(cause) else f" ({cause!r})"
            self._log.error(
                "%s %s failed: %s%s after %dms (attempt %d)",
                method,
                path,
                failure.code,
                reason,
                duration_ms,
                attempt,
                extra=fields,
            )

    def _log_retry(
        self,
        method: str,
        path: str,
        response: httpx.Response | None,
        failure: NetworkError | None,
        delay: float,
        attempt: int,
    ) -> None:
        what = str(response.status_code) if response is not None else failure.code if failure is not None else "?"
        self._log.warning(
            "%s %s %s: retry in %dms (attempt %d)",
            method,
            path,
            what,
            round(delay * 1000),
            attempt,
            extra={"method": method, "path": path, "delay_ms": round(delay * 1000), "attempt": attempt},
        )

    def _outcome(self, response: httpx.Response) -> httpx.Response:
        """The answer of the last attempt, or its error raised."""
        if response.is_success:
            return response
        raise http_error_from(response, now=self._policy.now())


Sleep = Callable[[float], object]
"""The sync client's ``sleep`` option: waits the given seconds before a retry."""

AsyncSleep = Callable[[float], Awaitable[object]]
"""The async client's ``sleep`` option: a coroutine function that waits the given seconds."""

AuthOption = AccessTokenSource | httpx.Auth | None
"""The sync client's ``auth`` option: a sync token source, an :class:`httpx.Auth`, or ``None``."""

AsyncAuthOption = AsyncAccessTokenSource | AccessTokenSource | httpx.Auth | None
"""The async client's ``auth`` option: an async or a sync token source, an :class:`httpx.Auth`, or ``None``."""


def _check_sync_auth(auth: object, origin: str, log: RedactingLogger) -> httpx.Auth | None:
    """The :class:`httpx.Auth` the sync client sends with: ``auth`` itself, or :class:`TokenAuth` around a
    sync token source (an async one cannot be awaited there: ``INVALID_OPTIONS``)."""
    if auth is None or isinstance(auth, httpx.Auth):
        return auth
    get = getattr(auth, "get_access_token", None)
    if not callable(get):
        raise InvalidOptionsError("auth", "give a token source (with get_access_token()), an httpx.Auth, or None")
    if inspect.iscoroutinefunction(get):
        raise InvalidOptionsError("auth", "get_access_token() is async: use AsyncClient with an async token source")
    return TokenAuth(cast(AccessTokenSource, auth), origin=origin, logger=log)


def _check_async_auth(auth: object, origin: str, log: RedactingLogger) -> httpx.Auth | None:
    """The :class:`httpx.Auth` the async client sends with: ``auth`` itself, :class:`AsyncTokenAuth`
    around an async token source, or :class:`TokenAuth` around a sync one (called in a worker thread)."""
    if auth is None or isinstance(auth, httpx.Auth):
        return auth
    get = getattr(auth, "get_access_token", None)
    if not callable(get):
        raise InvalidOptionsError("auth", "give a token source (with get_access_token()), an httpx.Auth, or None")
    if inspect.iscoroutinefunction(get):
        return AsyncTokenAuth(cast(AsyncAccessTokenSource, auth), origin=origin, logger=log)
    return TokenAuth(cast(AccessTokenSource, auth), origin=origin, logger=log)


# Each client is loaded when first asked for (PEP 562), from the module that defines it: a user of one
# never loads the other. Loading them here at import would be circular (they build on _Base above).
_CLIENTS: Final[dict[str, str]] = {
    "AsyncClient": "._async.client",
    "Client": "._sync.client",
}


# PEP 562, hidden from type checkers: they read the imports above, so a misspelt name stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _CLIENTS, rehome=True)
