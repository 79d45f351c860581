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

What to do with a request is decided once, for both classes and both kinds of httpx client, by one
generator (:meth:`_BearerAuth._flow`, httpx's ``Auth.auth_flow`` model): it yields the request to send,
or a command for the token source (:data:`_GET_TOKEN`, :class:`_Refresh`), and receives the answer or the
outcome. The sync and async flows httpx calls only carry the commands out, each its own way.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import AsyncGenerator, Generator
from typing import Any, Final, Protocol, cast

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


class _GetToken:
    """The command "this request goes to the tenant": read its body (so it can be sent again after a
    401) and get the token source's current token, which the flow receives as it came."""

    def __repr__(self) -> str:
        return "<get token>"


_GET_TOKEN: Final = _GetToken()


class _Refresh:
    """The command "the tenant answered 401 to ``rejected``": call the source's
    ``on_unauthorized(rejected)``, then get a token again, which the flow receives as it came."""

    __slots__ = ("rejected",)

    def __init__(self, rejected: str) -> None:
        self.rejected = rejected

    def __repr__(self) -> str:
        return "<refresh after a 401>"


#: What the flow yields: a request to send (it receives the answer) or a command (it receives its outcome).
_Step = httpx.Request | _GetToken | _Refresh


def _streamed(request: httpx.Request) -> bool:
    """Whether ``request``'s body is a stream, to be read into memory before it is sent, so that it can
    be sent again after a 401; a body given as content or JSON (or none) is in memory already."""
    return not isinstance(request.stream, httpx.ByteStream)


class _BearerAuth(httpx.Auth):
    """What both classes share: the tenant's origin, the check of a request's URL, the log, and the flow
    of a request (:meth:`_flow`), which each class's ``sync_auth_flow`` and ``async_auth_flow`` drive.

    Each driver is httpx's own loop (``Auth.sync_auth_flow`` running ``auth_flow``) with the two
    commands carried out in place: a driver shared through a callback would add a call to every request.
    """

    # The body is read before the first send (the drivers read it with the first token), so the request
    # can be sent again after a 401.
    requires_request_body = True
    _source: object

    def __init__(self, source: object, origin: str, logger: logging.Logger | RedactingLogger | None) -> None:
        if not callable(getattr(source, "get_access_token", None)):
            raise InvalidOptionsError("auth", "the token source needs a get_access_token() method")
        self._source = source
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

    def _flow(self, request: httpx.Request) -> Generator[_Step, Any, None]:
        """The decisions for one request, written once: add the token, send, and after a 401 refresh
        through the source and send once more if the token differs (RFC 6750 §2.1, §5.2; RFC 6749 §6).

        Yields the request to send (and receives its answer), or a command that the driver carries out
        (and receives its outcome); an exception of a command is thrown in here, where it is logged."""
        if not self.applies_to(request.url):
            yield request
            return
        token = self._authorize(request, (yield _GET_TOKEN))
        response = yield request
        if response.status_code != 401 or not callable(getattr(self._source, "on_unauthorized", None)):
            return
        self._note(logging.INFO, request, " 401: refreshing the token through the token source")
        try:
            fresh = _checked((yield _Refresh(token)))
        except BaseException as failure:
            self._note(logging.WARNING, request, f": the token source gave no new token ({type(failure).__name__})")
            raise
        if fresh == token:
            self._note(logging.WARNING, request, " 401: the token source has no new token; returning the 401")
            return
        self._note(logging.INFO, request, ": token refreshed, sending again")
        self._authorize(request, fresh)
        yield request

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

    _source: AccessTokenSource

    def __init__(
        self,
        source: AccessTokenSource,
        *,
        origin: str,
        logger: logging.Logger | RedactingLogger | None = None,
    ) -> None:
        if inspect.iscoroutinefunction(getattr(source, "get_access_token", None)):
            raise InvalidOptionsError("auth", "get_access_token() is async: use AsyncTokenAuth (or AsyncClient)")
        super().__init__(source, origin, logger)

    def _refreshed(self, rejected: str) -> object:
        """``on_unauthorized(rejected)``, then the source's token (blocking: a refresh may run)."""
        cast(RefreshableTokenSource, self._source).on_unauthorized(rejected)
        return self._source.get_access_token()

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Adds the token, sends, and after a 401 refreshes and sends once more (RFC 6750 §2.1, RFC 6749 §6):
        carries out :meth:`_flow` in an :class:`httpx.Client`."""
        flow = self._flow(request)
        try:
            step = next(flow)
            while True:
                if isinstance(step, httpx.Request):
                    outcome: object = yield step
                else:
                    try:
                        if isinstance(step, _Refresh):
                            outcome = self._refreshed(step.rejected)
                        else:
                            if _streamed(request):
                                request.read()
                            outcome = self._source.get_access_token()
                    except BaseException as failure:
                        step = flow.throw(failure)
                        continue
                step = flow.send(outcome)
        except StopIteration:
            return

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        """The same as :meth:`sync_auth_flow` in an :class:`httpx.AsyncClient`, the source called in a
        worker thread (:func:`asyncio.to_thread`), so a refresh does not block the event loop."""
        import asyncio  # loaded already by the running event loop; not at import, for sync users

        flow = self._flow(request)
        try:
            step = next(flow)
            while True:
                if isinstance(step, httpx.Request):
                    outcome: object = yield step
                else:
                    try:
                        if isinstance(step, _Refresh):
                            outcome = await asyncio.to_thread(self._refreshed, step.rejected)
                        else:
                            if _streamed(request):
                                await request.aread()
                            outcome = await asyncio.to_thread(self._source.get_access_token)
                    except BaseException as failure:
                        step = flow.throw(failure)
                        continue
                step = flow.send(outcome)
        except StopIteration:
            return


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

    _source: AsyncAccessTokenSource

    def __init__(
        self,
        source: AsyncAccessTokenSource,
        *,
        origin: str,
        logger: logging.Logger | RedactingLogger | None = None,
    ) -> None:
        super().__init__(source, origin, logger)

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Refuses: an async token source needs :class:`httpx.AsyncClient` (use :class:`TokenAuth` with a
        sync source in :class:`httpx.Client`)."""
        raise InvalidOptionsError(
            "auth", "AsyncTokenAuth needs httpx.AsyncClient; with httpx.Client use TokenAuth and a sync token source"
        )

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        """Adds the token, sends, and after a 401 refreshes and sends once more (RFC 6750 §2.1, RFC 6749 §6):
        carries out :meth:`_flow` in an :class:`httpx.AsyncClient`."""
        flow = self._flow(request)
        try:
            step = next(flow)
            while True:
                if isinstance(step, httpx.Request):
                    outcome: object = yield step
                else:
                    try:
                        if isinstance(step, _Refresh):
                            await cast(AsyncRefreshableTokenSource, self._source).on_unauthorized(step.rejected)
                        elif _streamed(request):
                            await request.aread()
                        outcome = await self._source.get_access_token()
                    except BaseException as failure:
                        step = flow.throw(failure)
                        continue
                step = flow.send(outcome)
        except StopIteration:
            return
