"""The client's I/O: building, sending and retrying a call, the operations, closing.

Written once: ``_async/client.py`` is the source, ``_sync/client.py`` is generated from it by
``scripts/unasync.py`` (awaits dropped, the ``Async`` prefix of names removed, the async backend and
auth check swapped for the sync ones), and the package's lint fails when the two drift. What needs no
I/O (the options, the URL of a call, the retry decision, the log lines) is written once, in
``_Base`` of :mod:`tenant_integration.client`, which also makes both clients public under its name.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Self

import httpx

from .._generated import models
from .._generated.operations import GET_AUTHENTICATED_USER, Operation
from .._retry import RetryPolicy
from .._synchronization import AsyncBackend
from ..auth import _BearerAuth
from ..client import (
    _DEFAULT_RETRIES,
    _UNSET,
    AsyncAuthOption,
    AsyncSleep,
    TimeoutOption,
    _api_path,
    _Base,
    _check_async_auth,
    _json_object,
    _Unset,
)
from ..client_errors import NetworkError, network_error_from, sent_tokens, url_without_query
from ..errors import InvalidOptionsError

__all__ = ["AsyncClient"]


class AsyncClient(_Base):
    """The client of one tenant, on :class:`httpx.AsyncClient`: typed methods for the contract's API
    operations, plus :meth:`request` for ``/api/v1`` routes the contract does not list yet.

    The async client (asyncio: its methods are coroutines) and the sync one (blocking) take the same
    options and keep the same promises; each takes the httpx client, transport, token source and
    ``sleep`` of its own kind.

    Args:
        base_url: the tenant's origin, e.g. ``https://acme.tenant.example``: https, or http to a loopback
            host (the local sandbox); no path (``/api/v1`` is added by the client), query or fragment
            (RFC 6749 §3.1, RFC 6750 §5.3).
        auth: a token source (the :class:`~tenant_integration.AsyncTokenManager`, or any object with
            ``get_access_token()``, see :mod:`tenant_integration.auth`), an :class:`httpx.Auth` of your
            own, or ``None`` to send no token. The async client also takes a sync token source (the
            sync token manager, a static token) and calls it in a worker thread; the sync client
            refuses an async one.
        timeout: seconds, an :class:`httpx.Timeout`, or ``None`` for none. Default :data:`DEFAULT_TIMEOUT`
            (10 s connect, 30 s per read/write/pool wait); with ``http_client``, that client's own.
        retries: a :class:`RetryPolicy`, a number of retries, or ``None``/``0`` for none. Default
            ``RetryPolicy()``: 2 retries, 0.3 s base backoff, 10 s cap.
        logger: a :class:`logging.Logger`. Default ``logging.getLogger("tenant_integration.client")``.
            INFO: one line per attempt; WARNING: retries; ERROR: failed connections. No line holds a token.
        transport: an :class:`httpx.AsyncBaseTransport` for the client's own httpx client (tests pass an
            :class:`httpx.MockTransport`).
        headers: headers sent with every request, over the default ``Accept: application/json``.
        http_client: an :class:`httpx.AsyncClient` of yours to send with (its proxies, certificates,
            event hooks). The client never follows redirects on it, passes ``auth`` per request, and
            does not close it.
        sleep: how to wait before a retry, called with the seconds (tests inject one). Default: a plain
            pause (:func:`asyncio.sleep` in the async client, :func:`time.sleep` in the sync one).

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
        auth: AsyncAuthOption = None,
        timeout: TimeoutOption | _Unset = _UNSET,
        retries: RetryPolicy | int | None = _DEFAULT_RETRIES,
        logger: logging.Logger | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        sleep: AsyncSleep = AsyncBackend.sleep,
    ) -> None:
        if http_client is not None and not isinstance(http_client, httpx.AsyncClient):
            raise InvalidOptionsError(
                "http_client", "give an httpx.AsyncClient (the sync and the async client each take their own kind)"
            )
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
        timeout: TimeoutOption | _Unset = _UNSET,
    ) -> httpx.Response:
        """Sends ``method path`` under ``/api/v1`` of the tenant with the client's auth, retries and
        timeout, and returns the 2xx answer (read). For routes the contract does not list yet.

        Args:
            method: the HTTP method, e.g. ``"GET"``.
            path: the path from the origin, under ``/api/v1`` (e.g. ``/api/v1/auth/user``), with a query
                if you like; ``params`` adds more.
            params, json, content, data, headers: as in :meth:`httpx.AsyncClient.request` (``content``
                only as str or bytes, so the body can be sent again after a 401 or a retry).
            timeout: this call's timeout (httpx's, per phase), over the client's.

        Raises:
            PathOutsideApiError: the path is not under ``/api/v1`` (nothing is sent).
            HttpError: a non-2xx answer, as its subclass (:class:`~tenant_integration.UnauthorizedError`,
                :class:`~tenant_integration.ForbiddenError`, :class:`~tenant_integration.RateLimitError`,
                :class:`~tenant_integration.ServerError`); a 3xx is raised too, never followed.
            NetworkError: no answer (:class:`~tenant_integration.NetworkTimeoutError` after a timeout).

        Example:
            >>> response = await client.request("GET", "/api/v1/auth/user")  # doctest: +SKIP
            >>> response.json()  # doctest: +SKIP
        """
        options = self._build_options(params, json, content, data, headers, timeout)
        return await self._send(method.upper(), f"{self._origin}{_api_path(path)}", options)

    async def _call(
        self, operation: Operation, timeout: TimeoutOption | _Unset, headers: Mapping[str, str] | None
    ) -> httpx.Response:
        options = self._build_options(None, None, None, None, headers, timeout)
        return await self._send(operation.method, f"{self._origin}{operation.path}", options)

    async def get_authenticated_user(
        self, *, timeout: TimeoutOption | _Unset = _UNSET, headers: Mapping[str, str] | None = None
    ) -> models.User:
        """``GET /api/v1/auth/user`` (``getAuthenticatedUser``): the user the access token was issued for,
        as the JSON object the tenant sends (its fields are not fixed by the contract).

        ``timeout`` and ``headers`` apply to this call only, over the client's (see also :meth:`with_options`).

        Raises:
            UnauthorizedError: 401 after the one refresh-and-retry (that an expired or revoked token is answered
                401 is the contract's assumption, RFC 6750 §3.1).
            ForbiddenError: 403, the token lacks the route's scope (service description §5.9). That scope is
                ``profile:read`` by the contract's assumption (the description's quick start requests it), and
                ``missing_scopes`` is what the challenge names (assumed: RFC 6750 §3, §3.1).
            HttpError, NetworkError: as :meth:`request`; InvalidResponseError: a 2xx body that is not a
                JSON object.

        Example:
            >>> user = await client.get_authenticated_user()  # doctest: +SKIP
            >>> user.get("name")  # doctest: +SKIP
            'Ada Lovelace'

            The record's fields are not shown in the service description: read the ones you need with
            ``.get()`` (the sandbox's demo user has ``id``, ``name``, ``email`` and ``locale``).
        """
        return _json_object(await self._call(GET_AUTHENTICATED_USER, timeout, headers))

    #: The same as :meth:`get_authenticated_user` (``GET /api/v1/auth/user``), by its short name.
    get_user = get_authenticated_user

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
                # A user's httpx.Auth (or the http_client's): scrub what it sent from any line to come.
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
            # Raised outside the except block: the error's __context__ is not httpx's (which holds the request).
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
