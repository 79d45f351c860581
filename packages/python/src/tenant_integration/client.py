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
"""

from __future__ import annotations

import copy
import inspect
import logging
import math
import posixpath
import time
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import Any, Final, Self, cast
from urllib.parse import unquote, urlsplit

import httpx

from ._base_url import tenant_origin
from ._generated import models
from ._generated.operations import GET_AUTHENTICATED_USER, Operation
from ._log import CLIENT_LOGGER_NAME, RedactingLogger
from ._retry import IDEMPOTENT_METHODS, RetryPolicy, is_retryable_status, retry_policy
from .auth import AccessTokenSource, AsyncAccessTokenSource, AsyncTokenAuth, TokenAuth, _BearerAuth
from .client_errors import (
    InvalidResponseError,
    NetworkError,
    PathOutsideApiError,
    http_error_from,
    network_error_from,
    sent_tokens,
    url_without_query,
)
from .errors import InvalidOptionsError

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
        return {"headers": self._headers, "timeout": self._timeout}

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
        per_call = _timeout(timeout, "timeout (per request)")
        chosen = self._request_timeout if isinstance(per_call, _Unset) else per_call
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


def _check_sync_auth(auth: object, origin: str, log: RedactingLogger) -> httpx.Auth | None:
    if auth is None or isinstance(auth, httpx.Auth):
        return auth
    get = getattr(auth, "get_access_token", None)
    if not callable(get):
        raise InvalidOptionsError("auth", "give a token source (with get_access_token()), an httpx.Auth, or None")
    if inspect.iscoroutinefunction(get):
        raise InvalidOptionsError("auth", "get_access_token() is async: use AsyncClient with an async token source")
    return TokenAuth(cast(AccessTokenSource, auth), origin=origin, logger=log)


class Client(_Base):
    """The sync client of one tenant: typed methods for the contract's API operations, on :class:`httpx.Client`.

    Args:
        base_url: the tenant's origin, e.g. ``https://acme.tenant.example``: https, or http to a loopback
            host (the local sandbox); no path (``/api/v1`` is added by the client), query or fragment
            (RFC 6749 §3.1, RFC 6750 §5.3).
        auth: a token source (the :class:`~tenant_integration.TokenManager`, or any object with
            ``get_access_token()``, see :mod:`tenant_integration.auth`), an :class:`httpx.Auth` of your
            own, or ``None`` to send no token.
        timeout: seconds, an :class:`httpx.Timeout`, or ``None`` for none. Default :data:`DEFAULT_TIMEOUT`
            (10 s connect, 30 s per read/write/pool wait); with ``http_client``, that client's own.
        retries: a :class:`RetryPolicy`, a number of retries, or ``None``/``0`` for none. Default
            ``RetryPolicy()``: 2 retries, 0.3 s base backoff, 10 s cap.
        logger: a :class:`logging.Logger`. Default ``logging.getLogger("tenant_integration.client")``.
            INFO: one line per attempt; WARNING: retries; ERROR: failed connections. No line holds a token.
        transport: an :class:`httpx.BaseTransport` for the client's own httpx client (tests pass an
            :class:`httpx.MockTransport`).
        headers: headers sent with every request, over the default ``Accept: application/json``.
        http_client: an :class:`httpx.Client` of yours to send with (its proxies, certificates, event
            hooks). The client never follows redirects on it, passes ``auth`` per request, and does not
            close it.
        sleep: how to wait before a retry, in seconds (tests inject one). Default :func:`time.sleep`.

    Raises:
        InvalidOptionsError: ``INVALID_OPTIONS`` for a bad option; the message names it and says why.

    Example:
        >>> with Client(base_url="https://acme.tenant.example", auth=manager) as client:  # doctest: +SKIP
        ...     user = client.get_user()
    """

    def __init__(
        self,
        base_url: str,
        *,
        auth: AccessTokenSource | httpx.Auth | None = None,
        timeout: TimeoutOption | _Unset = _UNSET,
        retries: RetryPolicy | int | None = _DEFAULT_RETRIES,
        logger: logging.Logger | None = None,
        transport: httpx.BaseTransport | None = None,
        headers: Mapping[str, str] | None = None,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], object] = time.sleep,
    ) -> None:
        if http_client is not None and not isinstance(http_client, httpx.Client):
            raise InvalidOptionsError("http_client", "give an httpx.Client (AsyncClient takes an httpx.AsyncClient)")
        if http_client is not None and transport is not None:
            raise InvalidOptionsError("transport", "give either transport or http_client (it has its own transport)")
        self._configure(base_url, timeout, retries, logger, headers)
        own_options = self._http_options(http_client)
        self._auth = _check_sync_auth(auth, self._origin, self._log)
        self._sleep = sleep
        self._owns_http = http_client is None
        self._http = http_client if http_client is not None else httpx.Client(transport=transport, **own_options)

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Any = None,
        json: Any = None,
        content: str | bytes | None = None,
        data: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: TimeoutOption | _Unset = _UNSET,
    ) -> httpx.Response:
        """Sends ``method path`` under ``/api/v1`` of the tenant with the client's auth, retries and
        timeout, and returns the 2xx answer (read). For routes the contract does not list yet.

        Args:
            method: the HTTP method, e.g. ``"GET"``.
            path: the path from the origin, under ``/api/v1`` (e.g. ``/api/v1/auth/user``), with a query
                if you like; ``params`` adds more.
            params, json, content, data, headers: as in :meth:`httpx.Client.request` (``content`` only as
                str or bytes, so the body can be sent again after a 401 or a retry).
            timeout: this call's timeout, over the client's.

        Raises:
            PathOutsideApiError: the path is not under ``/api/v1`` (nothing is sent).
            HttpError: a non-2xx answer, as its subclass (:class:`~tenant_integration.UnauthorizedError`,
                :class:`~tenant_integration.ForbiddenError`, :class:`~tenant_integration.RateLimitError`,
                :class:`~tenant_integration.ServerError`); a 3xx is raised too, never followed.
            NetworkError: no answer (:class:`~tenant_integration.NetworkTimeoutError` after a timeout).

        Example:
            >>> client.request("GET", "/api/v1/auth/user").json()  # doctest: +SKIP
        """
        options = self._build_options(params, json, content, data, headers, timeout)
        return self._send(method.upper(), f"{self._origin}{_api_path(path)}", options)

    def _call(
        self, operation: Operation, timeout: TimeoutOption | _Unset, headers: Mapping[str, str] | None
    ) -> httpx.Response:
        options = self._build_options(None, None, None, None, headers, timeout)
        return self._send(operation.method, f"{self._origin}{operation.path}", options)

    def get_authenticated_user(
        self, *, timeout: TimeoutOption | _Unset = _UNSET, headers: Mapping[str, str] | None = None
    ) -> models.User:
        """``GET /api/v1/auth/user`` (``getAuthenticatedUser``): the user the access token was issued for,
        as the JSON object the tenant sends (its fields are not fixed by the contract).

        ``timeout`` and ``headers`` apply to this call only, over the client's (see also :meth:`with_options`).

        Raises:
            UnauthorizedError: 401 after the one refresh-and-retry (RFC 6750 §3.1).
            ForbiddenError: 403, the token lacks ``profile:read`` (``missing_scopes``, RFC 6750 §3.1).
            HttpError, NetworkError: as :meth:`request`; InvalidResponseError: a 2xx body that is not a
                JSON object.

        Example:
            >>> client.get_authenticated_user()["id"]  # doctest: +SKIP
            42
        """
        return _json_object(self._call(GET_AUTHENTICATED_USER, timeout, headers))

    def get_user(
        self, *, timeout: TimeoutOption | _Unset = _UNSET, headers: Mapping[str, str] | None = None
    ) -> models.User:
        """The same as :meth:`get_authenticated_user` (``GET /api/v1/auth/user``), by its short name."""
        return self.get_authenticated_user(timeout=timeout, headers=headers)

    def _send(self, method: str, url: str, options: dict[str, Any]) -> httpx.Response:
        auth: Any = self._auth if self._auth is not None or self._owns_http else httpx.USE_CLIENT_DEFAULT
        attempt = 1
        while True:
            request = self._http.build_request(method, url, **options)
            started = time.perf_counter()
            response: httpx.Response | None = None
            failure: NetworkError | None = None
            try:
                response = self._http.send(request, auth=auth, follow_redirects=False)
            except httpx.RequestError as error:
                failure = network_error_from(error, method=method, url=url_without_query(request.url))
            if failure is not None or self._log.isEnabledFor(logging.INFO):  # ERROR lines show at WARNING too
                self._log_outcome(method, request.url.path, response, failure, attempt, started)
            if response is not None and not isinstance(self._auth, _BearerAuth):
                # A user's httpx.Auth (or the http_client's): scrub what it sent from any line to come.
                for token in sent_tokens(response):
                    self._log.remember(token)
            delay = self._retry_delay(method, response, failure, attempt - 1)
            if delay is None:
                break
            attempt += 1
            self._log_retry(method, request.url.path, response, failure, delay, attempt)
            if response is not None:
                response.close()
            self._sleep(delay)
        if failure is not None:
            # Raised outside the except block: the error's __context__ is not httpx's (which holds the request).
            raise failure
        assert response is not None
        return self._outcome(response)

    def close(self) -> None:
        """Closes the client's own connections (an ``http_client`` you gave stays open)."""
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client(base_url={self._origin!r})"


def _check_async_auth(auth: object, origin: str, log: RedactingLogger) -> httpx.Auth | None:
    if auth is None or isinstance(auth, httpx.Auth):
        return auth
    get = getattr(auth, "get_access_token", None)
    if not callable(get):
        raise InvalidOptionsError("auth", "give a token source (with get_access_token()), an httpx.Auth, or None")
    if inspect.iscoroutinefunction(get):
        return AsyncTokenAuth(cast(AsyncAccessTokenSource, auth), origin=origin, logger=log)
    # A sync source (a static token, the sync TokenManager): called in a worker thread.
    return TokenAuth(cast(AccessTokenSource, auth), origin=origin, logger=log)


async def _asyncio_sleep(seconds: float) -> None:
    """:func:`asyncio.sleep`, the async client's default wait before a retry. asyncio is imported here,
    where the running event loop has loaded it already: a user of the sync client never pays for it."""
    import asyncio

    await asyncio.sleep(seconds)


class AsyncClient(_Base):
    """The asyncio client of one tenant: :class:`Client`'s methods as coroutines, on :class:`httpx.AsyncClient`.

    The same options as :class:`Client`, except: ``auth`` may be an async token source
    (:class:`~tenant_integration.AsyncTokenManager`) or a sync one (called in a worker thread);
    ``transport`` is an :class:`httpx.AsyncBaseTransport`; ``http_client`` an :class:`httpx.AsyncClient`;
    ``sleep`` a coroutine function (default :func:`asyncio.sleep`). Close it with :meth:`aclose` or
    ``async with``.

    Raises:
        InvalidOptionsError: ``INVALID_OPTIONS`` for a bad option; the message names it and says why.

    Example:
        >>> async with AsyncClient(base_url="https://acme.tenant.example", auth=manager) as client:  # doctest: +SKIP
        ...     user = await client.get_user()
    """

    def __init__(
        self,
        base_url: str,
        *,
        auth: AsyncAccessTokenSource | AccessTokenSource | httpx.Auth | None = None,
        timeout: TimeoutOption | _Unset = _UNSET,
        retries: RetryPolicy | int | None = _DEFAULT_RETRIES,
        logger: logging.Logger | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        sleep: Callable[[float], Awaitable[object]] = _asyncio_sleep,
    ) -> None:
        if http_client is not None and not isinstance(http_client, httpx.AsyncClient):
            raise InvalidOptionsError("http_client", "give an httpx.AsyncClient (Client takes an httpx.Client)")
        if http_client is not None and transport is not None:
            raise InvalidOptionsError("transport", "give either transport or http_client (it has its own transport)")
        self._configure(base_url, timeout, retries, logger, headers)
        own_options = self._http_options(http_client)
        self._auth = _check_async_auth(auth, self._origin, self._log)
        self._sleep = sleep
        self._owns_http = http_client is None
        self._http = http_client if http_client is not None else httpx.AsyncClient(transport=transport, **own_options)

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Any = None,
        json: Any = None,
        content: str | bytes | None = None,
        data: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        # httpx's per-request timeout (its phases), as httpx.AsyncClient.request takes it; not an asyncio deadline.
        timeout: TimeoutOption | _Unset = _UNSET,  # noqa: ASYNC109
    ) -> httpx.Response:
        """:meth:`Client.request` as a coroutine: ``method path`` under ``/api/v1``, the 2xx answer (read).

        Raises:
            PathOutsideApiError, HttpError, NetworkError: as :meth:`Client.request`.
        """
        options = self._build_options(params, json, content, data, headers, timeout)
        return await self._send(method.upper(), f"{self._origin}{_api_path(path)}", options)

    async def _call(
        self,
        operation: Operation,
        timeout: TimeoutOption | _Unset,  # noqa: ASYNC109 (httpx's per-request timeout)
        headers: Mapping[str, str] | None,
    ) -> httpx.Response:
        options = self._build_options(None, None, None, None, headers, timeout)
        return await self._send(operation.method, f"{self._origin}{operation.path}", options)

    async def get_authenticated_user(
        self,
        *,
        timeout: TimeoutOption | _Unset = _UNSET,  # noqa: ASYNC109 (httpx's per-request timeout)
        headers: Mapping[str, str] | None = None,
    ) -> models.User:
        """``GET /api/v1/auth/user`` (``getAuthenticatedUser``): the user the access token was issued for.
        ``timeout`` and ``headers`` apply to this call only.

        Raises:
            UnauthorizedError, ForbiddenError, HttpError, NetworkError, InvalidResponseError: as
                :meth:`Client.get_authenticated_user` (RFC 6750 §3.1).
        """
        return _json_object(await self._call(GET_AUTHENTICATED_USER, timeout, headers))

    async def get_user(
        self,
        *,
        timeout: TimeoutOption | _Unset = _UNSET,  # noqa: ASYNC109 (httpx's per-request timeout)
        headers: Mapping[str, str] | None = None,
    ) -> models.User:
        """The same as :meth:`get_authenticated_user`, by its short name."""
        return await self.get_authenticated_user(timeout=timeout, headers=headers)

    async def _send(self, method: str, url: str, options: dict[str, Any]) -> httpx.Response:
        auth: Any = self._auth if self._auth is not None or self._owns_http else httpx.USE_CLIENT_DEFAULT
        attempt = 1
        while True:
            request = self._http.build_request(method, url, **options)
            started = time.perf_counter()
            response: httpx.Response | None = None
            failure: NetworkError | None = None
            try:
                response = await self._http.send(request, auth=auth, follow_redirects=False)
            except httpx.RequestError as error:
                failure = network_error_from(error, method=method, url=url_without_query(request.url))
            if failure is not None or self._log.isEnabledFor(logging.INFO):  # ERROR lines show at WARNING too
                self._log_outcome(method, request.url.path, response, failure, attempt, started)
            if response is not None and not isinstance(self._auth, _BearerAuth):
                for token in sent_tokens(response):
                    self._log.remember(token)
            delay = self._retry_delay(method, response, failure, attempt - 1)
            if delay is None:
                break
            attempt += 1
            self._log_retry(method, request.url.path, response, failure, delay, attempt)
            if response is not None:
                await response.aclose()
            await self._sleep(delay)
        if failure is not None:
            raise failure
        assert response is not None
        return self._outcome(response)

    async def aclose(self) -> None:
        """Closes the client's own connections (an ``http_client`` you gave stays open)."""
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"AsyncClient(base_url={self._origin!r})"
