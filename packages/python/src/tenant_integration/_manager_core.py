"""The state both token managers share, and everything they do with it that needs no ``await``.

:class:`ManagerCore` checks the options, derives the storage keys and the lock name (the TypeScript
kit's), holds the session state (the current record, the unwritten one, the rejected access token, the
sign-in generation, this process's refresh intent) and the listeners, and makes the decisions that
read only that state. Its blocking methods (marked so) read or write the storage for the steps of the
refresh protocol (``spec/token-store/README.md``); the async manager runs them in a worker thread.

The I/O flows (sign-in, refresh, revoke) are :class:`~._async.token_manager.AsyncTokenManager`'s,
written once; :class:`~._sync.token_manager.TokenManager` is generated from it.
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, overload

import httpx

from ._base_url import tenant_origin
from ._events import EVENTS, EventName, SessionInfo, SignedOut
from ._lock import LockLost, choose_lock, still_held, takes_until, wait_ended
from ._names import ScopeNames
from ._refresh_intent import (
    Intent,
    IntentBeat,
    IntentPending,
    Watch,
    beat_intent,
    beat_interval,
    drop_intent,
    intent_unwritable,
    is_storage_failure,
    must_wait_for,
    new_intent,
    settled,
    watch_intent,
    write_intent,
)
from ._session_id import Log, SessionLog, check_session_id
from ._sign_in import check_scopes, redirect_target
from ._token_record import TokenRecord, expires_at_ms, is_fresh, parse_record
from .errors import InvalidOptionsError
from .storage.base import Lock, TokenStorage
from .storage.memory import MemoryStorage
from .token_errors import SessionEndedError, TokenManagerError, scrubbed

__all__ = ["ManagerCore", "StoredFresh"]

_LOGGER_NAME = "tenant_integration.token_manager"


def _positive_number(option: str, value: object, *, zero: bool = False) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
        or (value == 0 and not zero)
    ):
        raise InvalidOptionsError(option, f"must be a finite number of seconds {'>= 0' if zero else '> 0'}")
    return float(value)


class ManagerCore:
    """What the two managers share: options, keys, state, listeners, and the decisions on them."""

    def __init__(
        self,
        base_url: str,
        client_id: str,
        redirect_uri: str,
        scopes: Sequence[str],
        *,
        storage: TokenStorage | None,
        pending_storage: TokenStorage | None,
        now: Callable[[], float],
        refresh_leeway: float,
        pending_lifetime: float,
        lock: Lock | None,
        timeout: float | httpx.Timeout | None,
        refresh_attempts: int,
        retry_delay: float,
        logger: logging.Logger | None,
        intent_wait: float,
        session_id: str | None = None,
    ) -> None:
        # Checked first: an id outside the rule is refused before anything is read or written.
        self._session_id = None if session_id is None else check_session_id(session_id)
        self._origin = tenant_origin(base_url)
        if not isinstance(client_id, str) or not client_id:
            raise InvalidOptionsError("client_id", "give the OAuth client identifier, a non-empty string")
        self._client_id = client_id
        self._redirect_target = redirect_target(redirect_uri)
        self._redirect_uri = redirect_uri
        self._scopes = check_scopes(scopes, "scopes")
        if not callable(now):
            raise InvalidOptionsError("now", "give a function returning seconds since the epoch, e.g. time.time")
        self._now = now
        self._leeway_ms = _positive_number("refresh_leeway", refresh_leeway, zero=True) * 1000
        self._pending_lifetime_ms = _positive_number("pending_lifetime", pending_lifetime) * 1000
        if isinstance(refresh_attempts, bool) or not isinstance(refresh_attempts, int) or refresh_attempts < 1:
            raise InvalidOptionsError("refresh_attempts", "must be an integer >= 1")
        self._attempts = refresh_attempts
        self._retry_delay = _positive_number("retry_delay", retry_delay, zero=True)
        if timeout is not None and not isinstance(timeout, httpx.Timeout):
            _positive_number("timeout", timeout)
        self._storage: TokenStorage = storage if storage is not None else MemoryStorage()
        self._pending_storage: TokenStorage = pending_storage if pending_storage is not None else self._storage
        # The lock option wins, then the storage's own lock (file, Redis, memory), then the process's;
        # refresh intents only where processes share the storage through it.
        self._lock, self._intents = choose_lock(lock, self._storage, session=session_id is not None)
        # Whether a wait for the lock ends once another process stored fresh tokens (issue 28).
        self._lock_until = self._intents and takes_until(self._lock)
        self._intent_wait = _positive_number("intent_wait", intent_wait, zero=True)
        # The intent this manager stored and has not cleared yet (its refresh's tokens are not stored yet).
        self._own_intent: Intent | None = None
        # The beats of that intent (D7), until it is dropped, or the manager closed or signed out.
        self._intent_beat: IntentBeat | None = None
        # Closed (close/aclose): no beat starts, no write of unsaved tokens is retried in the background.
        self._closed = False
        # Whether a background try of the write of unsaved tokens is armed (one at a time).
        self._retry_armed = False
        # This process's watch of another process's live intent (D1): it goes on while the storage
        # answers, and ends with a failed read or a pause; the wait for the intent is bounded by it.
        self._intent_watch: Watch | None = None
        self._watch_lock = threading.Lock()
        base_log = logger if logger is not None else logging.getLogger(_LOGGER_NAME)
        self._log: Log = base_log if self._session_id is None else SessionLog(base_log, self._session_id)
        # Storage keys and the lock name, scoped by tenant origin, client and session (spec/token-store).
        names = ScopeNames.of(self._origin, client_id, self._session_id)
        self._tokens_key = names.tokens
        self._lock_name = names.lock
        self._intent_key = names.intent
        # How many calls of the manager are under way (a Sessions never drops one in use).
        self._in_use = 0
        # The last value under the intent key found not to be an intent record (warned about once).
        self._foreign_intent: str | None = None

        self._current: TokenRecord | None = None
        # The access token an API refused (on_unauthorized): not handed out again.
        self._rejected: str | None = None
        # Tokens whose write failed: usable in this process, and written again on a later call.
        self._unsaved: TokenRecord | None = None
        # Until when (now() ms) unsaved tokens are served without trying their write again.
        self._retry_write_after = 0.0
        # Why the last write of new tokens failed, for the error that refuses to refresh from them.
        self._write_failure: TokenManagerError | None = None
        # Bumped by sign-in and sign-out, so that a refresh begun before cannot resurrect or overwrite tokens.
        self._generation = 0
        self._generation_lock = threading.Lock()
        self._listeners: dict[str, list[Callable[[Any], object]]] = {}
        self._listeners_lock = threading.Lock()

    # -- what a user reads -------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The tenant's origin, normalized (every request goes to it)."""
        return self._origin

    @property
    def client_id(self) -> str:
        """The OAuth client identifier."""
        return self._client_id

    @property
    def redirect_uri(self) -> str:
        """The redirect URI, exactly as given (and as sent to the tenant)."""
        return self._redirect_uri

    @property
    def scopes(self) -> tuple[str, ...]:
        """The scopes asked for by default."""
        return self._scopes

    @property
    def session_id(self) -> str | None:
        """The session id the manager keeps tokens under, ``None`` for a manager without one."""
        return self._session_id

    @overload
    def on(
        self, event: Literal["tokens-refreshed"], listener: Callable[[SessionInfo], object]
    ) -> Callable[[], None]: ...
    @overload
    def on(
        self, event: Literal["session-ended"], listener: Callable[[SessionEndedError], object]
    ) -> Callable[[], None]: ...
    @overload
    def on(self, event: Literal["signed-in"], listener: Callable[[SessionInfo], object]) -> Callable[[], None]: ...
    @overload
    def on(self, event: Literal["signed-out"], listener: Callable[[SignedOut], object]) -> Callable[[], None]: ...
    @overload
    def on(self, event: Literal["revoked"], listener: Callable[[None], object]) -> Callable[[], None]: ...
    @overload
    def on(
        self, event: Literal["storage-failed"], listener: Callable[[TokenManagerError], object]
    ) -> Callable[[], None]: ...
    def on(self, event: EventName, listener: Callable[[Any], object]) -> Callable[[], None]:
        """Subscribes ``listener`` to ``event`` (see :data:`EventName`); returns the function that
        unsubscribes it. Listeners run in the thread (or task) that caused the event; one that raises
        is ignored (the manager's state is already settled). No payload holds a token.

        Raises:
            InvalidOptionsError: for an unknown event name.

        Example:
            >>> off = manager.on("session-ended", lambda error: print("sign in again"))  # doctest: +SKIP
            >>> off()  # doctest: +SKIP

        See RFC 6749 §6 (refresh), RFC 7009 (revocation).
        """
        if event not in EVENTS:
            raise InvalidOptionsError("event", f"unknown event {event!r}; one of {', '.join(sorted(EVENTS))}")
        if not callable(listener):
            raise InvalidOptionsError("listener", "must be callable")
        with self._listeners_lock:
            self._listeners.setdefault(event, []).append(listener)

        return lambda: self.off(event, listener)

    def off(self, event: EventName, listener: Callable[[Any], object]) -> None:
        """Unsubscribes ``listener`` from ``event`` (as calling the function :meth:`on` returned)."""
        with self._listeners_lock:
            listeners = self._listeners.get(event, [])
            if listener in listeners:
                listeners.remove(listener)

    # -- state -------------------------------------------------------------------------------------

    def _emit(self, event: EventName, payload: object) -> None:
        with self._listeners_lock:
            listeners = list(self._listeners.get(event, []))
        for listener in listeners:
            try:
                listener(payload)
            except Exception:  # noqa: S112 (a listener's failure is its own)
                continue

    def _forget(self, rejected_token: str) -> None:
        current = self._current
        if current is not None and current.access_token == rejected_token:
            self._rejected = rejected_token
            self._current = None

    @contextlib.contextmanager
    def _using(self) -> Iterator[None]:
        """Counts a call of the manager while it runs: a :class:`~tenant_integration.Sessions` never
        drops a manager with a call or refresh under way."""
        with self._generation_lock:
            self._in_use += 1
        try:
            yield
        finally:
            with self._generation_lock:
                self._in_use -= 1

    def _droppable(self) -> bool:
        """No call under way, and no tokens whose write failed (they are written before it is dropped)."""
        return self._in_use == 0 and self._unsaved is None

    def _next_generation(self) -> None:
        """A sign-in or sign-out began: a refresh begun before it must not store its tokens."""
        with self._generation_lock:
            self._generation += 1

    def _now_ms(self) -> float:
        return float(self._now()) * 1000

    def _known(self, *extra: str | None) -> list[str | None]:
        """Every token, code and verifier in play, for scrubbing."""
        current, unsaved = self._current, self._unsaved
        return [
            *extra,
            current.access_token if current else None,
            current.refresh_token if current else None,
            unsaved.access_token if unsaved else None,
            unsaved.refresh_token if unsaved else None,
        ]

    def _fresh(self, record: TokenRecord) -> bool:
        return is_fresh(record, self._now_ms(), self._leeway_ms)

    def _info(self, record: TokenRecord) -> SessionInfo:
        return SessionInfo(expires_at=expires_at_ms(record, self._now_ms()) / 1000, scope=record.scope)

    def _fast_token(self) -> str | None:
        """The current access token when it can be handed out without the lock, else ``None``."""
        current, unsaved = self._current, self._unsaved
        if current is None or not self._fresh(current):
            return None
        if unsaved is None or (current is unsaved and self._now_ms() < self._retry_write_after):
            return current.access_token
        return None

    def _held_unsaved(self) -> TokenRecord | None:
        unsaved = self._unsaved
        return unsaved if unsaved is not None and self._current is unsaved and self._fresh(unsaved) else None

    def _refuse_to_refresh_unwritten(self, unsaved: TokenRecord) -> None:
        """Never refresh from tokens that are not stored (issue 27, as the TypeScript manager): the refresh
        would check storage for a record that can never appear there, and every further rotation would
        widen the gap between the tenant and what the other processes read. Once tokens whose write failed
        need a refresh and their write failed again, ``STORAGE_FAILED`` is raised at once, nothing sent;
        they stay kept, and are written, then refreshed from, once the storage takes them."""
        if self._unsaved is unsaved and (not self._fresh(unsaved) or unsaved.access_token == self._rejected):
            raise TokenManagerError(
                "STORAGE_FAILED",
                "the refreshed tokens cannot be written, so they are not refreshed again until they are",
                cause=self._write_failure.__cause__ if self._write_failure is not None else None,
            )

    def _log_request(self, path: str, status: int | None, started: float, attempt: int) -> None:
        ms = round((time.perf_counter() - started) * 1000)
        if status is None:
            self._log.error("POST %s no answer %dms (attempt %d)", path, ms, attempt)
        else:
            self._log.info("POST %s %d %dms (attempt %d)", path, status, ms, attempt)

    # -- reading the storage -----------------------------------------------------------------------

    def _storage_failed(self, error: BaseException, *secrets: str | None) -> TokenManagerError:
        return TokenManagerError(
            "STORAGE_FAILED", "the token storage failed (see cause)", cause=scrubbed(error, self._known(*secrets))
        )

    def _load_failed(self, error: BaseException) -> TokenManagerError:
        # A storage that found its data unreadable and set it aside (FileStorage's FILE_CORRUPT) has no
        # tokens now: that is no session, with the reason as the cause of NOT_SIGNED_IN. Said out loud
        # (issue 27): the file set aside may hold the only copy of a refresh token.
        if getattr(error, "reset", False) is True:
            cause = scrubbed(error, self._known())
            self._report_unreadable(str(cause), cause)
            return TokenManagerError("NOT_SIGNED_IN", "the stored tokens were unreadable (see cause)", cause=cause)
        return self._storage_failed(error)

    def _parse_stored(self, raw: str | None) -> TokenRecord | None:
        """The stored token record; ``None`` when there is none. A value that is not a token record
        (valid JSON of another shape, a hand edit) reads as no session, as the spec says, but is reported
        rather than taken for "no tokens": ``NOT_SIGNED_IN`` saying so, a warning, ``storage-failed``.
        It is left in place (a sign-in replaces it)."""
        record = parse_record(raw)
        if record is None and raw is not None:
            what = f"the value under {self._where(self._tokens_key)} is not a token record; signing in replaces it"
            self._report_unreadable(what, None)
            raise TokenManagerError("NOT_SIGNED_IN", f"the stored tokens are unreadable: {what}")
        return record

    def _where(self, key: str) -> str:
        """``key`` as a user finds it in the storage, for a message: what the storage's ``where`` says
        (``RedisStorage``: the Redis key, prefix and hash tag included), else the key itself."""
        where = getattr(self._storage, "where", None)
        found = where(key) if callable(where) else None
        return found if isinstance(found, str) else key

    def _report_unreadable(self, what: str, cause: BaseException | None) -> None:
        """Stored tokens found unreadable: a warning and ``storage-failed`` (``STORAGE_FAILED``), so that
        a caller that only asks ``is_signed_in`` learns it too."""
        self._log.warning("The stored tokens were unreadable: %s", what)
        self._emit(
            "storage-failed",
            TokenManagerError("STORAGE_FAILED", f"the stored tokens were unreadable: {what}", cause=cause),
        )

    def _read(self, key: str) -> str | None:
        """The stored value of ``key``; a storage that fails is :meth:`_load_failed`'s error. Blocking."""
        try:
            return self._storage.get(key)
        except Exception as e:
            failure = self._load_failed(e)
        raise failure  # outside the handler: the storage's error is no implicit context

    def _read_tokens(self) -> TokenRecord | None:
        """The stored token record (see :meth:`_parse_stored`). Blocking."""
        return self._parse_stored(self._read(self._tokens_key))

    def _fresh_in_storage(self) -> TokenRecord | None:
        """The stored record when it can be used as it is (fresh, not refused, no unwritten record of
        ours, no sign-in or sign-out meanwhile), made current; else ``None``. One read, nothing
        logged or reported: a failing or unreadable read is ``None``, and the pass under the lock
        reports it; but a storage that set its unreadable data aside (``reset``, FileStorage's
        ``FILE_CORRUPT``) raises that error, since no later read will meet it. Blocking."""
        before = self._generation
        try:
            stored = parse_record(self._storage.get(self._tokens_key))
        except Exception as e:
            if getattr(e, "reset", False) is True:
                raise
            return None
        if stored is None or not self._fresh(stored) or stored.access_token == self._rejected:
            return None
        with self._generation_lock:
            if before != self._generation or self._unsaved is not None:
                return None
            self._current = stored
        return stored

    def _read_first(self) -> TokenRecord | None:
        """Before the lock, where processes share the storage: fresh tokens another process stored,
        read without the lock (the same record read under it would be used as it is), so that a fleet
        released together after expiry does not pass the lock on one by one only to read them. ``None``
        when the lock must be taken: they must be refreshed, ours wait to be written, or there are
        none. Blocking."""
        if not self._intents or self._unsaved is not None:
            return None
        failure: TokenManagerError | None = None
        try:
            stored = self._fresh_in_storage()
        except Exception as e:
            failure = self._load_failed(e)
        if failure is not None:  # raised outside the handler: the storage's error is no implicit context
            raise failure
        if stored is not None:
            self._log.debug("Fresh tokens in storage; no lock needed")
        return stored

    def _wait_check(self) -> StoredFresh | None:
        """The ``until`` of a wait for the refresh lock, for a lock that takes one (else ``None``)."""
        return StoredFresh(self) if self._lock_until else None

    # -- the refresh protocol's steps (spec/token-store/README.md): blocking -----------------------

    def _watch(self, intent: Intent | None) -> Watch | None:
        """A successful read found ``intent`` (or none): the watch goes on, or starts anew (D1)."""
        with self._watch_lock:
            if intent is not None:
                self._intent_watch = watch_intent(self._intent_watch, intent)
            return self._intent_watch

    def _end_watch(self, error: BaseException | None = None) -> None:
        """A read of the storage failed (``error``, when given, is a storage failure): the watch ends,
        and the next read that finds the intent starts a new one from zero (D1)."""
        if error is None or is_storage_failure(error):
            with self._watch_lock:
                self._intent_watch = None

    def _must_wait_for(self, intent: Intent | None, stored: TokenRecord) -> bool:
        """Step 2: whether ``intent`` is another process's live refresh with ``stored``'s refresh token."""
        return must_wait_for(
            intent,
            stored,
            own=self._own_intent,
            watch=self._watch(intent),
            now_ms=self._now_ms(),
            intent_wait=self._intent_wait,
            log=self._log,
        )

    def _read_intent(self) -> Intent | None:
        """Step 2's read of the stored intent. A read that fails ends the watch (D1) and fails the refresh
        (``STORAGE_FAILED``): with the intent unknown, presenting the token could reuse one another
        process is rotating, and a value of another Redis type under the key (``WRONGTYPE``, another
        application's data) would be overwritten by this refresh's intent. A string that is not an intent
        record reads as absent, with a warning naming the key; this refresh's intent replaces it.
        Blocking."""
        try:
            raw = self._read(self._intent_key)
        except BaseException:
            self._end_watch()
            raise
        intent = Intent.parse(raw)
        if intent is None and raw is not None and raw != self._foreign_intent:
            self._foreign_intent = raw
            self._log.warning(
                "The value under %s is not a refresh intent record (this kit did not write it); it reads as no "
                "intent, and the next refresh intent replaces it",
                self._where(self._intent_key),
            )
        return intent

    def _intent_settled(self, pending: IntentPending) -> bool:
        """One look at the storage while honouring ``pending`` (the watch goes on with it): ``True`` once
        there is something to decide again on. A failing read ends the watch and the wait (the next pass
        under the lock reports it). Blocking."""
        try:
            latest = parse_record(self._storage.get(self._tokens_key))
            intent = Intent.parse(self._storage.get(self._intent_key))
        except Exception:
            self._end_watch()
            return True
        return settled(pending, self._watch(intent), latest, intent, intent_wait=self._intent_wait)

    def _start_intent(self, stored: TokenRecord) -> Intent | None:
        """Steps 3 and 4: checks the lock is still ours (a holder taken over while paused must not
        replace the new holder's intent), then stores the refresh intent; ``None`` when intents are not
        used. No intent, no send (D6): an intent that cannot be stored raises ``STORAGE_FAILED`` saying
        so and why (the storage's error, scrubbed, as the cause), and nothing is sent. Blocking."""
        if not self._intents:
            return None
        if not still_held(self._lock, self._lock_name):
            raise LockLost
        intent = new_intent(stored, self._now_ms())
        try:
            write_intent(self._storage, self._intent_key, intent, self._log)
        except Exception as e:
            cause = scrubbed(e, self._known(stored.refresh_token))
            failure = TokenManagerError("STORAGE_FAILED", intent_unwritable(cause), cause=cause)
        else:
            self._own_intent = intent
            self._start_beats(intent)
            return intent
        raise failure  # outside the handler: the storage's error is no implicit context

    def _check_before_sending(self, stored: TokenRecord, intent: Intent | None) -> TokenRecord | None:
        """Step 5, right before a refresh request leaves: the stored record is still the one read (else
        that record, or ``None`` when gone, is returned to decide again with) and the lock is still
        this process's own (else :class:`LockLost`, nothing sent). Blocking."""
        if stored is not self._unsaved:
            try:
                latest = self._read_tokens()
            except BaseException:
                self._drop_intent(intent)
                raise
            if latest is None or latest.id != stored.id:
                self._drop_intent(intent)
                self._log.info("The stored tokens changed before the refresh left; using them")
                return latest
        if not still_held(self._lock, self._lock_name):
            self._drop_intent(intent)
            raise LockLost
        return stored

    def _start_beats(self, intent: Intent) -> None:
        """Starts the beats of ``intent``, just stored by this process (D7); none once closed."""
        self._stop_beats()
        if self._closed:
            return
        self._intent_beat = IntentBeat(
            lambda beats: beat_intent(self._storage, self._intent_key, intent, self._now_ms(), self._log, beats),
            beat_interval(self._intent_wait),
        )

    def _drop_intent(self, intent: Intent | None) -> None:
        """Step 7: deletes this process's intent once its refresh is settled, its beats stopped first (a
        beat's read under way is not waited for: its storage command may hang, and it writes nothing once
        it answers; a beat's write under way is). Blocking."""
        if intent is None:
            return
        if self._own_intent is intent:
            self._own_intent = None
            self._stop_beats()
        drop_intent(self._storage, self._intent_key, intent)

    def _stop_beats(self) -> None:
        """Stops the beats of this process's intent, if any (it stays stored: dropped at the end of its
        refresh, or, after a close or a sign-out, given up by a waiter's watch, D1)."""
        beats, self._intent_beat = self._intent_beat, None
        if beats is not None:
            beats.stop()

    def _close_background(self) -> None:
        """Closing: the beats stop, none starts, and no write of unsaved tokens is retried in the
        background; the intent stays stored, and a waiter gives it up once it has watched it for
        ``intent_wait`` without a beat (D1, D7)."""
        self._closed = True
        self._stop_beats()


class StoredFresh:
    """The ``until`` check of one wait for the refresh lock (the Redis and file locks call it at each
    wake-up of their wait): ``True`` once another process stored tokens this one can use as they are,
    kept in :attr:`found`, so the wait ends and they are served instead of each waiter taking the lock
    in turn. One storage read per call, nothing else (no intent, no lock check, no log line): the
    lock's own wake-ups and polls pace it. It never raises (the lock's protocol): a storage that set
    its unreadable data aside ends the wait too, the error kept in :attr:`unreadable` for the caller."""

    def __init__(self, core: ManagerCore) -> None:
        self._core = core
        self.found: TokenRecord | None = None
        self.unreadable: Exception | None = None

    def __call__(self) -> bool:
        try:
            self.found = self._core._fresh_in_storage()
        except Exception as e:
            self.unreadable = e
            return True
        return self.found is not None

    def served(self, error: Exception) -> TokenRecord | None:
        """After the lock raised ``error``: the tokens to serve when it ended the wait because this
        check found them (``None`` otherwise: ``error`` is the caller's); ``NOT_SIGNED_IN`` with the
        storage's reason when it ended the wait on data set aside as unreadable."""
        if not wait_ended(error):
            return None
        if self.unreadable is not None:
            raise self._core._load_failed(self.unreadable) from None
        return self.found
