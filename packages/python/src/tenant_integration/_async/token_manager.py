"""The token manager's I/O flows: sign-in, refresh (the protocol of ``spec/token-store/README.md``),
revocation and sign-out, as the methods of the manager.

Written once: ``_async/token_manager.py`` is the source, ``_sync/token_manager.py`` is generated
from it by ``scripts/unasync.py`` (awaits dropped, the ``Async`` prefix of names removed, the async
backend swapped for the sync one), and the package's lint fails when the two drift. What is not I/O
lives in :mod:`.._manager_core` and the sans-I/O modules it names (``_sign_in``, ``_refresh``,
``_refresh_intent``, ``_token_request``, ``_lock``); why: ``CONTRIBUTING.md``.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Sequence

import httpx

from .._binding import binding_hash
from .._events import SessionInfo, SignedOut
from .._lock import LOCK_TRIES, LockLost
from .._manager_core import ManagerCore
from .._names import pending_name
from .._pending import put_pending, take_pending
from .._refresh import UNSAVED_RETRY_MS, needs_refresh, retry_wait
from .._refresh_intent import INTENT_POLL, Intent, IntentPending
from .._sign_in import (
    AuthorizationRequest,
    authorization,
    callback_params,
    callback_state,
    check_scopes,
    checked_callback,
)
from .._synchronization import AsyncBackend, AsyncFlight
from .._token_http import AsyncTokenHttp
from .._token_record import PendingRecord, TokenRecord, serialize, supersedes
from .._token_request import (
    TokenRequest,
    exchange_request,
    process_answer,
    process_token_response,
    refresh_request,
    revoke_request,
    transport_failure,
)
from ..storage.base import Lock, TokenStorage
from ..token_errors import OAuthResponseError, SessionEndedError, TokenManagerError, TransientError

__all__ = ["AsyncTokenManager"]


class AsyncTokenManager(ManagerCore):
    """Signs in with PKCE, keeps the tokens in a storage, refreshes them rotation-safely, revokes them.

    Its :meth:`get_access_token` and :meth:`on_unauthorized` make it a token source for
    :class:`~tenant_integration.AsyncClient`. Safe to share between the threads or tasks that use it:
    concurrent callers share one refresh.

    Args:
        base_url: the tenant's origin, e.g. ``https://acme.tenant.test`` (https, or http to loopback);
            a path such as ``/api/v1`` is refused: the manager adds ``/oauth/...`` itself.
        client_id: the OAuth client identifier.
        redirect_uri: the redirect URI registered for the client, exactly as registered.
        scopes: the scopes to ask for (names of the contract's list, at least one).
        storage: where the tokens live (default: a new :class:`~tenant_integration.MemoryStorage`).
            A storage shared across processes brings its lock (``FileStorage``, ``RedisStorage``).
        pending_storage: where the pending sign-ins live (default: ``storage``).
        now: the clock, seconds since the epoch (default :func:`time.time`).
        refresh_leeway: refresh when the access token expires within this many seconds (default 60,
            at most half its lifetime).
        pending_lifetime: how long a pending sign-in stays valid, in seconds (default 600).
        lock: the lock around a refresh (default: the storage's ``lock``, else one of the process).
        transport: the ``httpx.AsyncBaseTransport`` of the token requests (tests pass ``httpx.MockTransport``).
        timeout: the timeout of each request, in seconds or as ``httpx.Timeout`` (default 10 s). Its
            read timeout counts only the time the process ran: a process stopped while it waits for an
            answer (SIGSTOP, a debugger) goes on waiting when it wakes, for what is left of it, with
            any ``transport``: one of yours is waited for in running time from outside, the whole
            request within the read timeout.
        refresh_attempts: attempts of a refresh the tenant cannot have handled: no connection, or
            answered 429 or 503 (default 3; any other answer, or a request that may have been handled,
            is never retried).
        retry_delay: the first pause between those attempts, doubled each time (default 0.3 s, at most
            10 s). A 429 or 503 with ``Retry-After`` waits that long instead; one asking for more than
            10 s is not retried: :class:`~tenant_integration.TransientError` is raised at once, its
            ``retry_after`` saying when to try again.
        logger: the :class:`logging.Logger` to write to (default ``tenant_integration.token_manager``);
            no line carries a token, code, verifier, state, header value or body.
        intent_wait: with a storage that processes share (``FileStorage``, ``RedisStorage``, or a ``lock``
            given): how long a process that finds another's refresh intent on the refresh token it would
            present waits for that refresh to be stored before presenting the token itself, in seconds
            (default 20; see the README, "Paused processes").
        session_id: the session of a server acting for many users whose tokens this manager keeps
            (the app's id of its user or connection: 1 to 128 characters from ``A-Z a-z 0-9 - . _ ~ @
            + = |``; ``INVALID_SESSION_ID`` otherwise, before anything is read or written). Its records
            are ``tenant-integration:<origin>:<client_id>:<session_id>:…``, its refresh lock its own.
            Default ``None``: one session per storage, as before. A server uses
            :class:`~tenant_integration.AsyncSessions`, which makes these managers.

    On asyncio (the manager whose methods are coroutines), storage calls run in a worker thread, and a
    thread of its own holds the storage's lock while the refresh runs on the event loop.

    Raises:
        InvalidOptionsError: ``INVALID_OPTIONS`` for a bad option, with a message saying why.
        TokenManagerError: ``INVALID_SESSION_ID`` for a ``session_id`` outside the rule.

    Example:
        >>> manager = AsyncTokenManager(  # doctest: +SKIP
        ...     base_url="https://acme.tenant.test",
        ...     client_id="demo-integration",
        ...     redirect_uri="http://127.0.0.1:53682/callback",
        ...     scopes=["profile:read"],
        ...     storage=FileStorage("~/.config/demo/tokens.json"),
        ... )
        >>> request = await manager.begin_authorization()  # doctest: +SKIP
        >>> await manager.complete_authorization(callback_url)  # doctest: +SKIP
        >>> await manager.get_access_token()  # doctest: +SKIP

    See RFC 6749 §4.1, §6; RFC 7636; RFC 7009; RFC 9700 §4.14.
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
        session_id: str | None = None,
        _http: AsyncTokenHttp | None = None,
    ) -> None:
        super().__init__(
            base_url,
            client_id,
            redirect_uri,
            scopes,
            storage=storage,
            pending_storage=pending_storage,
            now=now,
            refresh_leeway=refresh_leeway,
            pending_lifetime=pending_lifetime,
            lock=lock,
            timeout=timeout,
            refresh_attempts=refresh_attempts,
            retry_delay=retry_delay,
            logger=logger,
            intent_wait=intent_wait,
            session_id=session_id,
        )
        # One HTTP client shared by every manager of an AsyncSessions (which closes it), else its own.
        self._owns_http = _http is None
        self._http = AsyncTokenHttp(transport, timeout) if _http is None else _http
        self._flight = AsyncFlight()

    # -- sign-in -----------------------------------------------------------------------------------

    async def begin_authorization(self, scopes: Sequence[str] | None = None) -> AuthorizationRequest:
        """Creates a PKCE pair and a state, stores them as a pending sign-in of its own (found at the
        callback by its state, so any number may be pending: two tabs, a double click), and returns the
        authorize URL to send the browser to. A manager with a ``session_id`` names it in the pending
        record, and completes only its own sign-ins.

        Args:
            scopes: the scopes of this sign-in (default: the manager's ``scopes``), names of the contract.

        Raises:
            InvalidOptionsError: for a scope not in the contract's list.
            TokenManagerError: ``STORAGE_FAILED`` when the pending sign-in cannot be stored.

        See RFC 6749 §4.1.1, RFC 7636 §4.3.
        """
        with self._using():
            return await self._begin(scopes, None)

    async def _begin(self, scopes: Sequence[str] | None, binding: str | None) -> AuthorizationRequest:
        """Stores a pending sign-in for this manager's session, bound to ``binding`` (when given: its
        hash is stored, never the binding), and returns its authorize URL."""
        asked = self._scopes if scopes is None else check_scopes(scopes, "scopes")
        expires_at = self._now_ms() + self._pending_lifetime_ms
        browser = None if binding is None else binding_hash(binding)
        request, pending = authorization(
            self._origin,
            self._client_id,
            self._redirect_uri,
            asked,
            expires_at,
            session_id=self._session_id,
            browser=browser,
        )
        name = pending_name(self._origin, self._client_id, request.state)
        lifetime = self._pending_lifetime_ms / 1000
        failure: TokenManagerError | None = None
        try:
            await AsyncBackend.run_blocking(put_pending, self._pending_storage, name, pending, lifetime, self._log)
        except Exception as e:
            failure = self._storage_failed(e)
        if failure is not None:
            raise failure
        return request

    async def complete_authorization(self, callback_url: str) -> SessionInfo:
        """Checks the callback, takes its pending sign-in (found by its state, single use), checks it,
        exchanges the ``code`` at ``POST /oauth/token`` (JSON, with the PKCE verifier) and stores the
        tokens. The checks, in the order of every kit (``spec/token-store/README.md``, "The callback"):
        a full URL (``INVALID_CALLBACK``) with a ``state`` (``STATE_MISSING``), before anything is taken;
        then, the pending sign-in taken (used up whatever follows): at the redirect URI
        (``INVALID_CALLBACK``), one pending (``NO_PENDING_SIGN_IN``), its state, browser and session
        (``STATE_MISMATCH``: a sign-in bound to a browser is completed only by
        :meth:`AsyncSessions.complete_sign_in`), not expired (``STATE_EXPIRED``), no ``error``
        (``AUTHORIZATION_DENIED``), a ``code`` (``INVALID_CALLBACK``).

        A callback that is not a full URL (e.g. only ``?code=...&state=...``) is refused before the
        pending sign-in is taken, so the right URL can still be passed.

        Raises:
            TokenManagerError: ``INVALID_CALLBACK``, ``NO_PENDING_SIGN_IN``, ``STATE_MISSING``,
                ``STATE_MISMATCH``, ``STATE_EXPIRED``, ``AUTHORIZATION_DENIED`` with no request sent;
                ``INVALID_RESPONSE``; ``STORAGE_FAILED`` (after the exchange, the tokens stay usable
                in this process and are written again on the next ``get_access_token``).
            OAuthResponseError: the tenant refused the exchange (e.g. ``invalid_grant``).
            TransientError: network error, 429 or 5xx (the single-use code is not retried).

        See RFC 6749 §3.1.2, §4.1.2, §4.1.3, §10.12; RFC 7636 §4.5; RFC 9700 §4.4.
        """
        with self._using():
            session_id = self._session_id
            code, pending = await self._take_callback(callback_url, None, lambda p: p.session_id == session_id)
            return await self._exchange(code, pending)

    async def _take_callback(
        self, callback_url: str, binding: str | None, ours: Callable[[PendingRecord], bool]
    ) -> tuple[str, PendingRecord]:
        """The callback's checks, its pending sign-in taken (by its state) after the state is read and
        before any other check; ``binding`` is what the callback's request brought."""
        parts, pairs, state = callback_state(callback_url)
        name = pending_name(self._origin, self._client_id, state)
        failure: TokenManagerError | None = None
        pending: PendingRecord | None = None
        try:
            pending = await AsyncBackend.run_blocking(take_pending, self._pending_storage, name, self._log)
        except Exception as e:
            failure = self._storage_failed(e, state)
        if failure is not None:
            raise failure
        params = callback_params(parts, pairs, self._redirect_target)
        return checked_callback(pending, params, state, binding, ours, self._now_ms())

    async def _exchange(self, code: str, pending: PendingRecord) -> SessionInfo:
        """Trades the callback's code for tokens (RFC 6749 §4.1.3, RFC 7636 §4.5) and stores them."""
        self._next_generation()
        text = await self._send(exchange_request(self._client_id, self._redirect_uri, code, pending.verifier), 1)
        session = await self._commit(process_token_response(text, None, self._now_ms()))
        self._log.info("Signed in; the access token expires at %s", session.expires_at)
        self._emit("signed-in", session)
        return session

    # -- tokens ------------------------------------------------------------------------------------

    async def get_access_token(self) -> str:
        """Returns a valid access token, refreshing it (once, however many callers ask) when it is within
        the leeway of expiry or was refused (:meth:`on_unauthorized`). The refresh runs under the
        storage's lock; its holder re-reads the storage and refreshes only if the stored tokens are
        still not usable. Rotated tokens are written before they are handed out; when that write fails
        they are handed out all the same (the tenant has rotated the refresh token) and reported with
        ``storage-failed``, and the write is retried on a later call, at most once a second.

        Raises:
            TokenManagerError: ``NOT_SIGNED_IN`` (no tokens; with the storage's reason as cause when its
                data was unreadable), ``INVALID_RESPONSE``, ``STORAGE_FAILED`` (reading failed).
            SessionEndedError: the refresh token was refused with ``invalid_grant``; tokens cleared.
            TransientError: network error, timeout, 429 or 5xx; tokens kept.
            OAuthResponseError: another RFC 6749 §5.2 error; tokens kept.
            TenantIntegrationError: what the lock raises (``LOCK_TIMEOUT`` of the file or Redis lock).

        See RFC 6749 §6; RFC 9700 §4.14.2.
        """
        token = self._fast_token()
        if token is not None:
            return token
        with self._using():
            try:
                return await self._flight.join(self._fly)
            except Exception as e:
                # A storage that could not be read or locked ends the watch of another refresh's intent (D1).
                self._end_watch(e)
                raise

    async def on_unauthorized(self, rejected_token: str) -> None:
        """Marks the current access token unusable when it equals ``rejected_token`` (an API answered
        401), so that the next :meth:`get_access_token` re-reads the storage and, unless it holds another
        token (another process refreshed), refreshes. Concurrent 401s cause one refresh. No I/O.

        See RFC 6750 §3.1 (``invalid_token``).
        """
        self._forget(rejected_token)

    async def _fly(self) -> str:
        """The one pass of the process, which every concurrent caller shares: the stored tokens read
        first, without the lock, and served when fresh; else the pass under the refresh lock."""
        held = self._held_unsaved()
        stored = await AsyncBackend.run_blocking(self._read_first)
        if stored is not None:
            return stored.access_token
        self._log.debug("Waiting for the refresh lock")
        if held is None:
            return await self._under_lock()
        try:
            return await self._under_lock()
        except Exception as e:
            return self._serve_unsaved(e, held)

    async def _under_lock(self) -> str:
        """:meth:`_obtain` under the refresh lock; the lock taken again when it was found lost before a
        refresh left, and let go while another process's refresh intent is honoured. A wait for the
        lock ends, for a lock that can end it, once another process stored fresh tokens: they are
        served, and the lock is not taken."""
        tries = 0
        # The holder last said to be waited for, so that the log says it once.
        announced: str | None = None
        while True:
            until = self._wait_check()
            try:
                return await AsyncBackend.locked(self._lock, self._lock_name, self._obtain, until)
            except LockLost:
                tries += 1
                self._log.warning(
                    "The refresh lock was taken over while this process held it (paused?); nothing was sent; "
                    "taking the lock again"
                )
                if tries >= LOCK_TRIES:
                    raise TransientError(None, 0, sent=False) from None
            except IntentPending as pending:
                if announced != pending.intent.holder:
                    announced = pending.intent.holder
                    self._log.info(
                        "Waiting for the refresh by %s with the same refresh token to be stored",
                        pending.intent.describe(),
                    )
                # Bounded by this process's watch of the intent, which every poll goes on with (D1).
                while not await AsyncBackend.run_blocking(self._intent_settled, pending):
                    await AsyncBackend.sleep(INTENT_POLL)
            except Exception as e:
                found = until.served(e) if until is not None else None
                if found is None:
                    raise
                self._log.debug("Fresh tokens stored by another process while waiting for the lock; using them")
                return found.access_token

    def _serve_unsaved(self, error: Exception, held: TokenRecord) -> str:
        """Tokens whose write failed and that are still fresh, when retrying the write cannot even run
        (the storage or its lock unreachable): the tenant holds them as current, so failing the call
        would only make the one process that holds them unable to use them."""
        if self._current is not held or self._unsaved is not held or not self._fresh(held):
            raise error
        failure = self._storage_failed(error)
        self._retry_write_after = self._now_ms() + UNSAVED_RETRY_MS
        self._log.warning("The tokens could not be written again (storage or lock unavailable); they stay in use")
        self._emit("storage-failed", failure)
        self._retry_write_later()
        return held.access_token

    def _retry_write_later(self) -> None:
        """After a failed write of fresh tokens on a shared storage, tries it again in a second even if no
        call comes: the storage may have come back with the old record (Redis restarted from its
        append-only file), and the others, honouring this process's intent, wait for exactly this write.
        Tried again every second until the tokens are stored, superseded or stale: a try may join a pass
        that was under way (the one whose write failed, still releasing its lock) and get its token
        without writing. One try at a time is armed; none once the manager is closed."""
        if not self._intents or self._closed or self._retry_armed:
            return
        self._retry_armed = True

        async def retry() -> None:
            self._retry_armed = False
            unsaved = self._held_unsaved()
            if self._closed or unsaved is None:
                return
            with contextlib.suppress(Exception):
                await self.get_access_token()
            if self._held_unsaved() is unsaved:
                self._retry_write_later()

        AsyncBackend.call_later(UNSAVED_RETRY_MS / 1000 + 0.01, retry)

    async def _load(self) -> TokenRecord | None:
        failure: TokenManagerError | None = None
        try:
            raw = await AsyncBackend.run_blocking(self._storage.get, self._tokens_key)
        except Exception as e:
            failure = self._load_failed(e)
        if failure is not None:
            raise failure
        return self._parse_stored(raw)

    async def _obtain(self, again: bool = False) -> str:
        """Runs under the lock: re-reads the storage, and refreshes only if what it finds is not usable
        and no other process's live refresh intent names its refresh token."""
        self._log.debug("Refresh lock taken; reading the tokens from storage")
        unsaved = self._unsaved
        stored = await self._load() if unsaved is None else await self._write_unsaved(unsaved)
        if stored is None:
            raise TokenManagerError("NOT_SIGNED_IN", "there are no tokens; sign in first")
        if needs_refresh(stored, self._rejected, self._now_ms(), self._leeway_ms):
            if self._intents and stored is not self._unsaved:
                intent = await AsyncBackend.run_blocking(self._read_intent)
                if intent is not None and self._must_wait_for(intent, stored):
                    raise IntentPending(stored.id, intent)
            return await self._refresh(stored, again)
        self._current = stored
        return stored.access_token

    async def _write_unsaved(self, unsaved: TokenRecord) -> TokenRecord | None:
        """Under the lock, tokens whose write failed: storage is read first (another process may have
        stored newer tokens meanwhile, or the write went through after all); ours are written again
        only over a record they supersede. Returns the record to go on with."""
        stored: TokenRecord | None
        try:
            stored = await self._load()
        except TokenManagerError:
            stored = None
        if stored is not None and supersedes(stored, unsaved):
            self._unsaved = None
        else:
            await self._commit_or_report(unsaved)
            stored = unsaved
            self._refuse_to_refresh_unwritten(unsaved)
        if self._unsaved is None:
            # Written (or superseded): this process's intent on the old token has done its job.
            await AsyncBackend.run_blocking(self._drop_intent, self._own_intent)
        return stored

    async def _refresh(self, stored: TokenRecord, again: bool) -> str:
        """Steps 3 to 7 of the refresh protocol with ``stored``'s refresh token; a request that cannot
        have reached the tenant is sent again (:func:`~.._refresh.retry_wait`), no other."""
        generation = self._generation
        intent = await AsyncBackend.run_blocking(self._start_intent, stored)
        self._log.info("Refresh started")
        request = refresh_request(self._client_id, stored)
        attempt = 1
        while True:
            try:
                if self._intents:
                    checked = await AsyncBackend.run_blocking(self._check_before_sending, stored, intent)
                    if checked is not stored:
                        return await self._obtain(again)
                text = await self._send(request, attempt)
                record = process_token_response(text, stored, self._now_ms())
                break
            except TransientError as e:
                delay = retry_wait(e, attempt, attempts=self._attempts, retry_delay=self._retry_delay, log=self._log)
                if delay is None:
                    await AsyncBackend.run_blocking(self._drop_intent, intent)
                    raise
                await AsyncBackend.sleep(delay)
                attempt += 1
            except OAuthResponseError as e:
                await AsyncBackend.run_blocking(self._drop_intent, intent)
                if e.error != "invalid_grant":
                    raise
                return await self._after_invalid_grant(e, stored, again, generation)
            except TokenManagerError:
                await AsyncBackend.run_blocking(self._drop_intent, intent)
                raise
        return await self._store_refreshed(record, intent, generation)

    async def _store_refreshed(self, record: TokenRecord, intent: Intent | None, generation: int) -> str:
        """Step 7: the refreshed tokens written, then the intent deleted; kept while the write fails, so
        that the others do not present the old token while this process writes the new one again."""
        if generation != self._generation:
            await AsyncBackend.run_blocking(self._drop_intent, intent)
            raise TokenManagerError("NOT_SIGNED_IN", "signed in or out while the refresh ran; its tokens are dropped")
        info = await self._commit_or_report(record)
        if info is not None:
            await AsyncBackend.run_blocking(self._drop_intent, intent)
            self._log.info("Refresh finished; the access token expires at %s", info.expires_at)
            self._emit("tokens-refreshed", info)
        else:
            self._log.warning("Refresh finished, but the tokens could not be stored; the write is retried later")
        return record.access_token

    async def _after_invalid_grant(
        self, error: OAuthResponseError, stored: TokenRecord, again: bool, generation: int
    ) -> str:
        # Another process may have rotated the token meanwhile: try the newest one once before giving up.
        # A storage that cannot be read leaves that unknown: the session is not ended (which would delete
        # the record for every process), and the read failure reaches the caller.
        latest: TokenRecord | None = None
        if not again:
            try:
                latest = await self._load()
            except TokenManagerError as read_error:
                if read_error.code != "NOT_SIGNED_IN":
                    raise
        if latest is not None and latest.refresh_token != stored.refresh_token:
            return await self._obtain(again=True)
        ended = SessionEndedError(error.status, error.error, error.error_description, error.error_uri)
        if generation == self._generation:
            self._log.warning("Session ended (invalid_grant)")
            with contextlib.suppress(TokenManagerError):  # the session is over whether or not the delete succeeds
                await self._clear()
            self._emit("session-ended", ended)
        raise ended

    # -- the storage and the tenant ----------------------------------------------------------------

    async def _send(self, request: TokenRequest, attempt: int) -> str:
        """Sends ``request``; the text of its 2xx answer, else its typed error (nothing carries a secret)."""
        started = time.perf_counter()
        secrets = self._known(*request.secrets)
        failure: TransientError | None = None
        try:
            response = await self._http.post(self._origin + request.path, request.body, request.headers)
        except Exception as e:
            failure = transport_failure(e, secrets, attempt)
        if failure is not None:
            self._log_request(request.path, None, started, attempt)
            raise failure
        self._log_request(request.path, response.status_code, started, attempt)
        return process_answer(request, response, secrets, attempt, float(self._now()))

    async def _commit(self, record: TokenRecord) -> SessionInfo:
        """Persists the tokens and makes them current. When the write fails they are current all the same
        (kept as unsaved, written again on the next call) and ``STORAGE_FAILED`` is raised."""
        self._current = self._unsaved = record
        failure: TokenManagerError | None = None
        try:
            await AsyncBackend.run_blocking(self._storage.set, self._tokens_key, serialize(record))
        except Exception as e:
            failure = self._storage_failed(e)
        if failure is not None:
            raise failure
        if self._unsaved is record:
            self._unsaved = None
        return self._info(record)

    async def _commit_or_report(self, record: TokenRecord) -> SessionInfo | None:
        try:
            return await self._commit(record)
        except TokenManagerError as e:
            self._write_failure = e
            self._retry_write_after = self._now_ms() + UNSAVED_RETRY_MS
            self._emit("storage-failed", e)
            self._retry_write_later()
            return None

    async def _clear(self) -> None:
        self._next_generation()
        self._current = self._unsaved = None
        # Signed out: this process's intent is beaten no more (a waiter's watch gives it up, D1).
        self._stop_beats()
        failure: TokenManagerError | None = None
        try:
            await AsyncBackend.run_blocking(self._storage.delete, self._tokens_key)
        except Exception as e:
            failure = self._storage_failed(e)
        if failure is not None:
            raise failure

    # -- session -----------------------------------------------------------------------------------

    async def is_signed_in(self) -> bool:
        """True when the storage holds tokens (perhaps expired: a refresh may still work), with no
        request. Tokens whose write failed count too.

        Raises:
            TokenManagerError: ``STORAGE_FAILED`` when the storage cannot be read.

        See RFC 6749 §6.
        """
        return await self.get_session() is not None

    async def get_session(self) -> SessionInfo | None:
        """The session's expiry and scope from the storage, with no request; ``None`` without tokens.

        Raises:
            TokenManagerError: ``STORAGE_FAILED`` when the storage cannot be read.

        See RFC 6749 §5.1.
        """
        if self._unsaved is not None:
            return self._info(self._unsaved)
        try:
            with self._using():
                record = await self._load()
        except TokenManagerError as e:
            if e.code == "NOT_SIGNED_IN":
                return None
            raise
        return None if record is None else self._info(record)

    async def revoke(self) -> None:
        """Revokes the current access token at ``POST /oauth/revoke`` (a form body with ``client_id``, as
        RFC 7009 §2.1 and the contract take it), which disconnects the integration; then clears the
        tokens and fires ``revoked``. An expired access token is refreshed first. Without a session it
        only clears. On failure the tokens are kept.

        Raises:
            OAuthResponseError, TransientError: the tenant refused or did not answer; tokens kept.
            TokenManagerError: ``INVALID_RESPONSE``, ``STORAGE_FAILED``.

        See RFC 7009 §2.1, §2.2.
        """
        with self._using():
            try:
                token = await self.get_access_token()
            except TokenManagerError as e:
                if e.code in ("NOT_SIGNED_IN", "SESSION_ENDED"):
                    await self.sign_out()
                    return
                raise
            await self._send(revoke_request(self._client_id, token), 1)
            await self._clear()
        self._log.info("Revoked")
        self._emit("revoked", None)
        self._emit("signed-out", SignedOut(revoked=True))

    async def sign_out(self) -> None:
        """Forgets the tokens locally (deletes them from the storage), with no request.

        Raises:
            TokenManagerError: ``STORAGE_FAILED``.

        See RFC 6749 §10.3.
        """
        with self._using():
            await self._clear()
        self._emit("signed-out", SignedOut(revoked=False))

    async def aclose(self) -> None:
        """Closes the HTTP connections (and the ``transport`` given); a manager of an
        :class:`AsyncSessions` leaves the shared ones to it. Its background work stops: the beats of
        its refresh intent (left stored: another process gives it up once it has watched it for
        ``intent_wait`` without a beat) and the retried write of tokens whose write failed."""
        self._close_background()
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncTokenManager:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        # The session id is left out: it may be personal data (an e-mail address).
        return f"AsyncTokenManager(base_url={self._origin!r}, client_id={self._client_id!r})"
