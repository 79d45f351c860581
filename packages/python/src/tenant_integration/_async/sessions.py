"""The sessions of a server acting for many users (``spec/token-store/README.md``, "Sessions"; issue 39):
one session per user or connection, each named by the app's own id on every call, its manager made on
demand and dropped when idle, so that memory stays bounded and the storage stays the truth.

Written once: ``_async/sessions.py`` is the source, ``_sync/sessions.py`` is generated from it by
``scripts/unasync.py``. The Go kit's ``tokenmanager/sessions.go``; the TypeScript kit's ``createSessions``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

import httpx

from .._binding import new_binding
from .._session_id import check_session_id
from .._sign_in import SignedIn, SignIn
from .._tls import shared_context
from .._token_http import AsyncTokenHttp
from .._token_record import PendingRecord
from ..client import DEFAULT_TIMEOUT
from ..errors import InvalidOptionsError
from ..storage.base import Lock, TokenStorage
from ..storage.memory import MemoryStorage
from .client import AsyncClient
from .token_manager import AsyncTokenManager

__all__ = ["AsyncSessions"]

#: The defaults of ``max_cached`` and ``max_idle`` (seconds).
DEFAULT_MAX_CACHED = 1000
DEFAULT_MAX_IDLE = 300.0


class _SessionTokenSource:
    """The token source of one session for a client: each call asks the sessions for the session's
    manager, so it may be kept for as long as the app likes while the manager behind it is dropped
    when idle and made again when needed."""

    def __init__(self, sessions: AsyncSessions, session_id: str) -> None:
        self._sessions = sessions
        self._session_id = session_id

    async def get_access_token(self) -> str:
        return await self._sessions.manager(self._session_id).get_access_token()

    async def on_unauthorized(self, rejected_token: str) -> None:
        await self._sessions.manager(self._session_id).on_unauthorized(rejected_token)


class AsyncSessions:
    """The sessions of a server acting for many users: a backend whose users each connect their own
    tenant account, a job runner acting for thousands of connections. One storage, one session per id
    the app chooses (its user's id, a connection row's id: 1 to 128 characters from ``A-Z a-z 0-9 - . _
    ~ @ + = |``, else ``INVALID_SESSION_ID``). Every call names the session: nothing here has a default
    session, so a server cannot hand one user's tokens to another by leaving the id out.

    Each session has its own records (``tenant-integration:<origin>:<client_id>:<id>:…``; on Redis one
    hash slot per session), its own refresh lock (one session's refresh never waits for another's) and
    single flight, and the promises of a :class:`AsyncTokenManager`: one refresh per session per expiry
    across tasks, threads, processes and the kits sharing the storage. Managers are made on demand and
    kept while used: one idle for ``max_idle`` seconds, or the least recently used past ``max_cached``,
    is dropped when another is asked for; never one with a call or refresh under way, nor one holding
    tokens whose write failed (kept until they are written). One HTTP client serves every session's
    token requests, and one every session's API client.

    A web server begins a sign-in with :meth:`begin_sign_in` and completes it with
    :meth:`complete_sign_in`, binding it to the browser that began it (RFC 9700 §4.7.1).

    Args:
        base_url, client_id, redirect_uri, scopes, storage, pending_storage, now, refresh_leeway,
            pending_lifetime, lock, transport, timeout, refresh_attempts, retry_delay, logger,
            intent_wait: as :class:`AsyncTokenManager`'s, shared by every session (``storage`` defaults
            to one :class:`~tenant_integration.MemoryStorage` for them all).
        max_cached: the most managers kept in memory (default 1 000).
        max_idle: seconds after which an unused manager is dropped (default 300).

    Raises:
        InvalidOptionsError: ``INVALID_OPTIONS`` for a bad option.

    Example:
        >>> sessions = AsyncSessions(  # doctest: +SKIP
        ...     "https://acme.tenant.test", "demo-integration", "https://app.example.org/tenant/callback",
        ...     ["profile:read"], storage=RedisStorage(redis.Redis.from_url(url, socket_timeout=5)),
        ... )
        >>> sign_in = await sessions.begin_sign_in(user.id, binding=cookie)  # doctest: +SKIP
        >>> done = await sessions.complete_sign_in(callback_url, binding=cookie, session_id=user.id)  # doctest: +SKIP
        >>> async with sessions.client(user.id) as client:  # doctest: +SKIP
        ...     me = await client.get_user()

    See RFC 6749 §4.1, §10.12; RFC 7636; RFC 9700 §4.7.1, §4.14.2.
    """

    def __init__(
        self,
        base_url: str,
        client_id: str,
        redirect_uri: str,
        scopes: Sequence[str],
        *,
        storage: TokenStorage | None = None,
        pending_storage: TokenStorage | None = None,
        now: Callable[[], float] = time.time,
        refresh_leeway: float = 60.0,
        pending_lifetime: float = 600.0,
        lock: Lock | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float | httpx.Timeout | None = 10.0,
        refresh_attempts: int = 3,
        retry_delay: float = 0.3,
        logger: logging.Logger | None = None,
        intent_wait: float = 20.0,
        max_cached: int = DEFAULT_MAX_CACHED,
        max_idle: float = DEFAULT_MAX_IDLE,
    ) -> None:
        if isinstance(max_cached, bool) or not isinstance(max_cached, int) or max_cached < 1:
            raise InvalidOptionsError("max_cached", "must be an integer >= 1")
        if isinstance(max_idle, bool) or not isinstance(max_idle, int | float) or not max_idle > 0:
            raise InvalidOptionsError("max_idle", "must be a number of seconds > 0")
        self._max_cached = max_cached
        self._max_idle = float(max_idle)
        self._transport = transport
        self._http = AsyncTokenHttp(transport, timeout)
        self._api_http: httpx.AsyncClient | None = None
        self._options: dict[str, object] = {
            "base_url": base_url,
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "scopes": scopes,
            "storage": storage if storage is not None else MemoryStorage(),
            "pending_storage": pending_storage,
            "now": now,
            "refresh_leeway": refresh_leeway,
            "pending_lifetime": pending_lifetime,
            "lock": lock,
            "timeout": timeout,
            "refresh_attempts": refresh_attempts,
            "retry_delay": retry_delay,
            "logger": logger,
            "intent_wait": intent_wait,
        }
        # The options are checked here, once; this manager (of no session) takes the callbacks' pending
        # sign-ins, which name their session only once taken.
        self._callbacks = AsyncTokenManager(**self._options, _http=self._http)  # type: ignore[arg-type]
        self._mutex = threading.Lock()
        # The cached managers, the least recently used first, each with when it was last asked for.
        self._cached: OrderedDict[str, tuple[AsyncTokenManager, float]] = OrderedDict()

    @property
    def base_url(self) -> str:
        """The tenant's origin, normalized."""
        return self._callbacks.base_url

    @property
    def redirect_uri(self) -> str:
        """The redirect URI, as given: the public callback URL (a handler rebuilds the callback URL from
        it, never from ``Host`` or ``X-Forwarded-*`` headers)."""
        return self._callbacks.redirect_uri

    @property
    def pending_lifetime(self) -> float:
        """How long a sign-in stays pending, in seconds."""
        return self._callbacks._pending_lifetime_ms / 1000

    @property
    def cached(self) -> int:
        """How many sessions' managers are in memory."""
        return len(self._cached)

    def manager(self, session_id: str) -> AsyncTokenManager:
        """The manager of ``session_id``, made on demand (nothing is read until it is used) and cached.
        Hold it for the call at hand and ask again for the next: a manager left idle is dropped, and
        asking costs a dict lookup. No I/O.

        Raises:
            TokenManagerError: ``INVALID_SESSION_ID``.
        """
        check_session_id(session_id)
        now = time.monotonic()
        with self._mutex:
            found = self._cached.get(session_id)
            if found is not None:
                self._cached[session_id] = (found[0], now)
                self._cached.move_to_end(session_id)
                return found[0]
            manager = AsyncTokenManager(**self._options, session_id=session_id, _http=self._http)  # type: ignore[arg-type]
            self._cached[session_id] = (manager, now)
            self._drop(now)
            return manager

    def _drop(self, now: float) -> None:
        """Drops the managers idle for ``max_idle``, and the least recently used past ``max_cached``,
        unless one is in use or holds tokens whose write failed; called with the mutex held."""
        excess = len(self._cached) - self._max_cached
        dropped: list[tuple[str, AsyncTokenManager]] = []
        # The least recently used first: once one is neither idle nor past the bound, none after it is.
        for session_id, (manager, used) in self._cached.items():
            if len(dropped) >= excess and now - used < self._max_idle:
                break
            if manager._droppable():
                dropped.append((session_id, manager))
        for session_id, manager in dropped:
            del self._cached[session_id]
            manager._log.debug("The session's manager is dropped from memory (the storage keeps its records)")

    async def begin_sign_in(
        self, session_id: str, *, binding: str | None = None, scopes: Sequence[str] | None = None
    ) -> SignIn:
        """Begins a sign-in for ``session_id``, bound to the browser that will bring ``binding`` to the
        callback: the value of a cookie of that browser, or the app's own value that only that
        browser's requests carry (its server session's id); ``None`` makes a new binding (returned).
        The pending sign-in is stored by its state with SHA-256(binding), never the binding itself; any
        number may be pending.

        Raises:
            TokenManagerError: ``INVALID_SESSION_ID``; ``STORAGE_FAILED``.
            InvalidOptionsError: a scope not in the contract's list.

        See RFC 6749 §4.1.1, §10.12; RFC 7636 §4.3; RFC 9700 §4.7.1.
        """
        manager = self.manager(session_id)
        chosen = binding or new_binding()
        with manager._using():
            request = await manager._begin(scopes, chosen)
        return SignIn(url=request.url, binding=chosen, session_id=session_id, expires_at=request.expires_at)

    async def complete_sign_in(
        self, callback_url: str, *, binding: str | None, session_id: str | None = None
    ) -> SignedIn:
        """Completes a sign-in begun with :meth:`begin_sign_in`: the checks of
        :meth:`AsyncTokenManager.complete_authorization`, in the same order, and two more before any
        exchange (``STATE_MISMATCH``): the callback brings ``binding``, that of the browser that began
        the sign-in; and the sign-in was begun for a session (for ``session_id``, when given: the app's
        user logged in on this browser now). The tokens are stored under the sign-in's session.

        Raises:
            TokenManagerError: those of ``complete_authorization``; ``INVALID_SESSION_ID`` for a bad
                ``session_id``.
            OAuthResponseError, TransientError: as ``complete_authorization``.

        See RFC 6749 §4.1.2, §10.12; RFC 9700 §4.7.1.
        """
        expected = None if session_id is None else check_session_id(session_id)

        def ours(pending: PendingRecord) -> bool:
            return pending.session_id is not None and (expected is None or pending.session_id == expected)

        code, pending = await self._callbacks._take_callback(callback_url, binding or None, ours)
        assert pending.session_id is not None  # ours() said so
        manager = self.manager(pending.session_id)
        with manager._using():
            info = await manager._exchange(code, pending)
        return SignedIn(session_id=pending.session_id, info=info)

    async def is_signed_in(self, session_id: str) -> bool:
        """Whether ``session_id`` has tokens in the storage (perhaps expired: a refresh may still work).

        Raises:
            TokenManagerError: ``INVALID_SESSION_ID``, ``STORAGE_FAILED``.
        """
        return await self.manager(session_id).is_signed_in()

    async def get_access_token(self, session_id: str) -> str:
        """A valid access token of ``session_id`` (:meth:`AsyncTokenManager.get_access_token`).

        Raises:
            TokenManagerError: ``INVALID_SESSION_ID``, and ``get_access_token``'s.
        """
        return await self.manager(session_id).get_access_token()

    async def revoke(self, session_id: str) -> None:
        """Revokes ``session_id`` at the tenant (RFC 7009; :meth:`AsyncTokenManager.revoke`) and clears
        its tokens.

        Raises:
            TokenManagerError: ``INVALID_SESSION_ID``, and ``revoke``'s.
        """
        await self.manager(session_id).revoke()

    async def sign_out(self, session_id: str) -> None:
        """Forgets ``session_id``'s tokens (deletes them from the storage), with no request.

        Raises:
            TokenManagerError: ``INVALID_SESSION_ID``, ``STORAGE_FAILED``.
        """
        await self.manager(session_id).sign_out()

    def token_source(self, session_id: str) -> _SessionTokenSource:
        """The token source of ``session_id`` for a client (``auth=``): each request asks for the
        session's manager, so it may be kept while the manager behind it is dropped and made again.

        Raises:
            TokenManagerError: ``INVALID_SESSION_ID``.
        """
        return _SessionTokenSource(self, check_session_id(session_id))

    def client(self, session_id: str, **options: object) -> AsyncClient:
        """An API client whose requests carry ``session_id``'s token (:meth:`token_source`), sending
        through one httpx client shared by every session's client (``http_client``; its connections
        stay open until :meth:`aclose`). ``options`` are :class:`AsyncClient`'s (``retries``,
        ``logger``, ``headers``…).

        Raises:
            TokenManagerError: ``INVALID_SESSION_ID``.
        """
        source = self.token_source(session_id)
        if self._api_http is None:
            self._api_http = httpx.AsyncClient(
                transport=self._transport, timeout=DEFAULT_TIMEOUT, follow_redirects=False, verify=shared_context()
            )
        return AsyncClient(self.base_url, auth=source, http_client=self._api_http, **options)  # type: ignore[arg-type]

    async def aclose(self) -> None:
        """Closes every cached session's manager (the beats of its refresh intent and the retried
        write of tokens whose write failed stop, as :meth:`AsyncTokenManager.aclose` says), then the
        shared HTTP connections (and the ``transport`` given)."""
        with self._mutex:
            managers = [manager for manager, _ in self._cached.values()]
        for manager in managers:
            await manager.aclose()
        await self._http.aclose()
        if self._api_http is not None:
            await self._api_http.aclose()
            self._api_http = None

    async def __aenter__(self) -> AsyncSessions:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return (
            f"AsyncSessions(base_url={self.base_url!r}, client_id={self._callbacks.client_id!r}, cached={self.cached})"
        )
