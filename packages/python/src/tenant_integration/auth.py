"""Bearer tokens on requests: the token source protocols and the :class:`httpx.Auth` that applies them.

The client knows nothing of OAuth flows: it asks a *token source* for a current access token before
each request to the tenant, and tells it when the tenant rejected one. The token managers
(:class:`~tenant_integration.TokenManager`, :class:`~tenant_integration.AsyncTokenManager`) are token
sources; so is any object with a ``get_access_token()`` method (a static token).

:class:`TokenAuth` and :class:`AsyncTokenAuth` are :class:`httpx.Auth` classes, so users with their
own httpx client plug them in::

    http = httpx.Client(auth=TokenAuth(manager, origin="https://acme.tenant.example"))

They send ``Authorization: Bearer <token>`` (RFC 6750 §2.1) only to the tenant's origin, never to
another host (RFC 6750 §5.2, §5.3), and answer a 401 by calling ``on_unauthorized(token)``, asking for a
token again and sending the request once more, body included, if the token differs (RFC 6749 §6).
Redirects: the SDK's client never follows one (it sends with ``follow_redirects=False``), so no token
follows a redirect. On your own httpx client keep ``follow_redirects=False`` (httpx's default) for the
same guarantee: when it is on, httpx itself drops the header on a redirect to another origin (and these
classes never add it there), but keeps it on a redirect within the tenant's origin.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import AsyncGenerator, Generator
from typing import Protocol

import httpx

from ._base_url import tenant_origin
from ._log import RedactingLogger
from .client_errors import InvalidTokenError
from .errors import InvalidOptionsError

__all__ = [
    "AccessTokenSource",
    "AsyncAccessTokenSource",
    "AsyncRefreshableTokenSource",
    "AsyncTokenAuth",
    "RefreshableTokenSource",
    "TokenAuth",
]

# RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


class AccessTokenSource(Protocol):
    """Anything that gives a current access token, e.g. a static token.

    Example:
        >>> class StaticToken:
        ...     def __init__(self, token: str) -> None:
        ...         self._token = token
        ...     def get_access_token(self) -> str:
        ...         return self._token
    """

    def get_access_token(self) -> str:
        """A current access token (RFC 6750 §2.1); called before every request to the tenant. Should be
        cheap when a valid token is cached. Whatever it raises reaches the caller unchanged."""
        ...


class RefreshableTokenSource(AccessTokenSource, Protocol):
    """A token source that can be told the tenant rejected a token (the token managers).

    After a 401 to ``rejected_token``, :meth:`on_unauthorized` forgets it (refreshing on the next
    :meth:`get_access_token`, unless the storage already holds a different token, e.g. another process
    refreshed, RFC 6749 §6). It raises the manager's typed error when the session is gone.
    """

    def on_unauthorized(self, rejected_token: str) -> None:
        """The tenant answered 401 to ``rejected_token``: forget it."""
        ...


class AsyncAccessTokenSource(Protocol):
    """The async twin of :class:`AccessTokenSource`."""

    async def get_access_token(self) -> str:
        """A current access token (RFC 6750 §2.1)."""
        ...


class AsyncRefreshableTokenSource(AsyncAccessTokenSource, Protocol):
    """The async twin of :class:`RefreshableTokenSource` (:class:`~tenant_integration.AsyncTokenManager`)."""

    async def on_unauthorized(self, rejected_token: str) -> None:
        """The tenant answered 401 to ``rejected_token``: forget it."""
        ...


def _checked(token: object) -> str:
    if not isinstance(token, str) or _B64TOKEN.fullmatch(token) is None:
        raise InvalidTokenError()
    return token


class _BearerAuth(httpx.Auth):
    """What both classes share: the tenant's origin, the check of a request's URL, the log."""

    # httpx reads the body before the flow starts, so the request can be sent again after a 401.
    requires_request_body = True

    def __init__(self, origin: str, logger: logging.Logger | RedactingLogger | None) -> None:
        self.origin = tenant_origin(origin, "origin")
        self._last_token: str | None = None
        url = httpx.URL(self.origin)
        self._target = (url.scheme, url.raw_host, url.port)
        if logger is None or isinstance(logger, RedactingLogger):
            self._log = logger
        else:
            self._log = RedactingLogger(logger)

    def applies_to(self, url: httpx.URL) -> bool:
        """Whether a request to ``url`` gets the token: same scheme, host and port as the tenant's origin
        (RFC 6454 §4), compared on httpx's normalized URL (lower-case host, IDNA, default port left out)."""
        return (url.scheme, url.raw_host, url.port) == self._target

    def _authorize(self, request: httpx.Request, token: object) -> str:
        """Puts ``token`` on ``request`` as its bearer token and returns it. A token other than the last
        one is first checked (RFC 6750 §2.1, else :class:`InvalidTokenError`) and told to the log, which
        scrubs it from every line; the same token again (the common case) needs neither twice."""
        checked = self._last_token
        if checked is None or token is not checked:
            checked = _checked(token)
            if self._log is not None:
                self._log.remember(checked)
            self._last_token = checked
        request.headers["Authorization"] = f"Bearer {checked}"
        return checked

    def _note(self, level: int, request: httpx.Request, message: str) -> None:
        if self._log is not None and self._log.isEnabledFor(level):
            self._log.log(
                level,
                "%s %s%s",
                request.method,
                request.url.path,
                message,
                extra={"method": request.method, "path": request.url.path},
            )


class TokenAuth(_BearerAuth):
    """An :class:`httpx.Auth` that sends a token source's bearer token to the tenant's origin only.

    For every request to ``origin`` (scheme, host and port equal) it adds ``Authorization: Bearer
    <token>`` (RFC 6750 §2.1); a request to any other host goes out untouched (RFC 6750 §5.2). On a 401
    it calls ``source.on_unauthorized(token)`` when the source has it, asks for a token again and, if the
    token differs, sends the request once more with its body (``requires_request_body``); the same token
    again means nothing new can be tried, and the 401 is returned. A second 401 is returned as is.

    Works with :class:`httpx.Client` and, calling the sync source in a worker thread
    (:func:`asyncio.to_thread`, so a refresh does not block the event loop), with
    :class:`httpx.AsyncClient`. For an async source use :class:`AsyncTokenAuth`.

    Args:
        source: an :class:`AccessTokenSource` or :class:`RefreshableTokenSource` (the token manager).
        origin: the tenant's origin, e.g. ``https://acme.tenant.example`` (checked as the client's
            ``base_url``: https, or http to a loopback host; no path).
        logger: where to log the refresh-and-retry (lines never hold a token). Default: none.

    Raises:
        InvalidOptionsError: ``INVALID_OPTIONS`` for a bad origin or a source without a sync
            ``get_access_token``.

    Example:
        >>> import httpx
        >>> auth = TokenAuth(manager, origin="https://acme.tenant.example")  # doctest: +SKIP
        >>> http = httpx.Client(auth=auth)  # doctest: +SKIP
    """

    def __init__(
        self,
        source: AccessTokenSource,
        *,
        origin: str,
        logger: logging.Logger | RedactingLogger | None = None,
    ) -> None:
        get = getattr(source, "get_access_token", None)
        if not callable(get):
            raise InvalidOptionsError("auth", "the token source needs a get_access_token() method")
        if inspect.iscoroutinefunction(get):
            raise InvalidOptionsError("auth", "get_access_token() is async: use AsyncTokenAuth (or AsyncClient)")
        super().__init__(origin, logger)
        self._source = source

    def _refresh(self, request: httpx.Request, rejected: str) -> str | None:
        """``on_unauthorized`` then a new token, or ``None`` when nothing new can be tried."""
        on_unauthorized = getattr(self._source, "on_unauthorized", None)
        if not callable(on_unauthorized):
            return None
        self._note(logging.INFO, request, " 401: refreshing the token through the token source")
        try:
            on_unauthorized(rejected)
            token = _checked(self._source.get_access_token())
        except BaseException as failure:
            self._note(logging.WARNING, request, f": the token source gave no new token ({type(failure).__name__})")
            raise
        return token

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Adds the token, sends, and after a 401 refreshes and sends once more (RFC 6750 §2.1, RFC 6749 §6)."""
        if not self.applies_to(request.url):
            yield request
            return
        request.read()
        token = self._authorize(request, self._source.get_access_token())
        response = yield request
        if response.status_code != 401:
            return
        fresh = self._refresh(request, token)
        if fresh is None or fresh == token:
            if fresh is not None:
                self._note(logging.WARNING, request, " 401: the token source has no new token; returning the 401")
            return
        self._note(logging.INFO, request, ": token refreshed, sending again")
        self._authorize(request, fresh)
        yield request

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        """The same as :meth:`sync_auth_flow` in an :class:`httpx.AsyncClient`, the source called in a thread."""
        import asyncio  # loaded already by the running event loop; not at import, for sync users

        if not self.applies_to(request.url):
            yield request
            return
        await request.aread()
        token = self._authorize(request, await asyncio.to_thread(self._source.get_access_token))
        response = yield request
        if response.status_code != 401:
            return
        fresh = await asyncio.to_thread(self._refresh, request, token)
        if fresh is None or fresh == token:
            if fresh is not None:
                self._note(logging.WARNING, request, " 401: the token source has no new token; returning the 401")
            return
        self._note(logging.INFO, request, ": token refreshed, sending again")
        self._authorize(request, fresh)
        yield request


class AsyncTokenAuth(_BearerAuth):
    """:class:`TokenAuth` for an async token source (:class:`~tenant_integration.AsyncTokenManager`), in an
    :class:`httpx.AsyncClient`: the same origin rule and the same one refresh-and-retry after a 401
    (RFC 6750 §2.1, §5.2; RFC 6749 §6).

    Used in a sync :class:`httpx.Client` it raises ``INVALID_OPTIONS`` at the first request: an async
    source cannot be awaited there.

    Args:
        source: an :class:`AsyncAccessTokenSource` or :class:`AsyncRefreshableTokenSource`.
        origin: the tenant's origin.
        logger: where to log the refresh-and-retry. Default: none.

    Example:
        >>> auth = AsyncTokenAuth(manager, origin="https://acme.tenant.example")  # doctest: +SKIP
        >>> http = httpx.AsyncClient(auth=auth)  # doctest: +SKIP
    """

    def __init__(
        self,
        source: AsyncAccessTokenSource,
        *,
        origin: str,
        logger: logging.Logger | RedactingLogger | None = None,
    ) -> None:
        get = getattr(source, "get_access_token", None)
        if not callable(get):
            raise InvalidOptionsError("auth", "the token source needs a get_access_token() method")
        super().__init__(origin, logger)
        self._source = source

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Refuses: an async token source needs :class:`httpx.AsyncClient` (use :class:`TokenAuth` with a
        sync source in :class:`httpx.Client`)."""
        raise InvalidOptionsError(
            "auth", "AsyncTokenAuth needs httpx.AsyncClient; with httpx.Client use TokenAuth and a sync token source"
        )
        yield request  # a generator, as httpx expects; never reached

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        """Adds the token, sends, and after a 401 refreshes and sends once more (RFC 6750 §2.1, RFC 6749 §6)."""
        if not self.applies_to(request.url):
            yield request
            return
        await request.aread()
        token = self._authorize(request, await self._source.get_access_token())
        response = yield request
        if response.status_code != 401:
            return
        on_unauthorized = getattr(self._source, "on_unauthorized", None)
        if not callable(on_unauthorized):
            return
        self._note(logging.INFO, request, " 401: refreshing the token through the token source")
        try:
            await on_unauthorized(token)
            fresh = _checked(await self._source.get_access_token())
        except BaseException as failure:
            self._note(logging.WARNING, request, f": the token source gave no new token ({type(failure).__name__})")
            raise
        if fresh == token:
            self._note(logging.WARNING, request, " 401: the token source has no new token; returning the 401")
            return
        self._note(logging.INFO, request, ": token refreshed, sending again")
        self._authorize(request, fresh)
        yield request
