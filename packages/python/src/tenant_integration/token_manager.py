"""The token manager: PKCE sign-in, rotation-safe refresh, revocation and sign-out, on httpx.

:class:`TokenManager` (threads) and :class:`AsyncTokenManager` (asyncio) keep the promises of the
TypeScript manager (``packages/token-manager/src/token-manager.ts``) and share its records, keys and
locks, so a Python and a TypeScript process on one token file or one Redis stay signed in together:

- sign-in with PKCE S256 and a random, single-use ``state`` compared in constant time before any
  request (RFC 6749 §4.1, §10.12; RFC 7636);
- JSON token requests, as the contract's ``POST /oauth/token`` takes them;
- the access token refreshed at use time when it is within ``refresh_leeway`` of expiry (no timers),
  expiry counted from the local receive time and ``expires_in``;
- one refresh however many callers: within the process (one flight, started under a threading lock,
  or one asyncio task; the other threads or tasks wait for its outcome, failure included) and across
  processes through the storage's lock, whose holder re-reads the storage and refreshes only if the
  stored tokens are still not usable (RFC 9700 §4.14.2);
- rotated tokens written to the storage (which returns once they are durable) before they are handed
  out; ``invalid_grant`` ends the session, 5xx and network errors keep it; a refresh is retried only
  when its request cannot have reached the tenant (one that may have made the tenant rotate the
  refresh token is never sent again by the manager on its own);
- revocation (RFC 7009) and local sign-out; events; typed errors with stable codes that never
  carry a token, code, verifier or state, and a :mod:`logging` logger that never prints one.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import logging
import math
import os
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, overload
from urllib.parse import SplitResult, parse_qsl, quote, urlencode, urlsplit

import httpx

from ._base_url import tenant_origin
from ._generated.scopes import SCOPES
from ._redact import redact
from ._retry import parse_retry_after
from ._running_time import count_running_time
from ._token_record import (
    PendingRecord,
    TokenRecord,
    expires_at_ms,
    is_fresh,
    parse_json,
    parse_oauth_error,
    parse_pending,
    parse_record,
    parse_token_response,
    serialize,
    serialize_pending,
    supersedes,
)
from .errors import InvalidOptionsError
from .pkce import create_pkce_pair
from .state import create_state, states_equal
from .storage._dir_lock import is_gone
from .storage.base import Lock, TokenStorage
from .storage.memory import MemoryStorage
from .token_errors import (
    OAuthResponseError,
    SessionEndedError,
    TokenManagerError,
    TransientError,
    scrubbed,
)

__all__ = [
    "AsyncTokenManager",
    "AuthorizationRequest",
    "EventName",
    "SessionInfo",
    "SignedOut",
    "TokenManager",
]

T = TypeVar("T")

EventName = Literal["signed-in", "signed-out", "tokens-refreshed", "session-ended", "revoked", "storage-failed"]
"""The events of :meth:`TokenManager.on` (the TypeScript manager's, whose payloads add ``otherTab``):

- ``signed-in``: ``complete_authorization`` stored a new session; payload :class:`SessionInfo`.
- ``signed-out``: :meth:`TokenManager.sign_out` or :meth:`TokenManager.revoke` cleared the tokens;
  payload :class:`SignedOut` (``revoked`` tells which).
- ``tokens-refreshed``: new tokens were obtained with the refresh token and persisted; payload
  :class:`SessionInfo`.
- ``session-ended``: the refresh token was refused with ``invalid_grant`` and the tokens cleared;
  payload the :class:`~tenant_integration.token_errors.SessionEndedError`.
- ``revoked``: :meth:`TokenManager.revoke` succeeded and the tokens were cleared (``signed-out``
  follows); payload ``None``.
- ``storage-failed``: new tokens could not be written; they stay usable in this process and their
  write is retried on a later call, at most once a second; or the stored tokens were found unreadable
  (a corrupt file set aside, a value that is not a token record: no session). Payload the
  ``STORAGE_FAILED`` :class:`~tenant_integration.token_errors.TokenManagerError`.

No payload holds a token.
"""

_EVENTS: frozenset[str] = frozenset(
    ("signed-in", "signed-out", "tokens-refreshed", "session-ended", "revoked", "storage-failed")
)
_LOGGER_NAME = "tenant_integration.token_manager"
# After a failed write of new tokens, how long they are served from memory before the write is tried
# (and a failure reported) again: a storage that is down costs one attempt a second, not one per call.
_UNSAVED_RETRY_MS = 1000.0
# The exceptions after which a request cannot have reached the tenant: no connection was made.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
# Locks of the process, by name: the refresh lock when the storage brings none and no lock is given.
_PROCESS_LOCKS = MemoryStorage()
# How often a process that honours another's refresh intent reads the storage again.
_INTENT_POLL = 0.05
# Times the lock is taken again after it was found taken over before a refresh left.
_LOCK_TRIES = 3
# The longest wait before a refresh is sent again (the backoff's cap); a longer Retry-After is not waited.
_MAX_RETRY_DELAY = 10.0


class _LockLost(Exception):
    """Raised under the lock when it was found no longer this process's right before a refresh would
    leave: nothing was sent; the lock is taken again."""


class _IntentPending(Exception):
    """Raised under the lock when another process's live refresh intent names the refresh token this
    one would present: the lock is let go, and the storage watched until that refresh is stored."""

    def __init__(self, record_id: str | None, intent: _Intent) -> None:
        super().__init__(intent.describe())
        self.record_id = record_id
        self.fingerprint = intent.fingerprint
        self.holder_id = intent.holder
        self.holder = intent.describe()


#: Which intent holder a process waits on, and since when (monotonic seconds).
_Waited = tuple[str, float]


def _fingerprint(refresh_token: str) -> str:
    """The lowercase hex SHA-256 of a refresh token: names it in the intent without revealing it."""
    return hashlib.sha256(refresh_token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class _Intent:
    """The refresh intent (spec/token-store/, the TypeScript manager's ``Intent``): which refresh token
    (a fingerprint), which refresh (a random id), since when (``now()`` ms), and its holder's pid and host."""

    fingerprint: str
    holder: str
    since: int | float
    pid: int | None = None
    host: str | None = None

    def serialize(self) -> str:
        data: dict[str, object] = {"fingerprint": self.fingerprint, "holder": self.holder, "since": self.since}
        if self.pid is not None:
            data["pid"] = self.pid
        if self.host is not None:
            data["host"] = self.host
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False)

    @staticmethod
    def parse(raw: str | None) -> _Intent | None:
        data = parse_json(raw)
        fingerprint, holder, since = data.get("fingerprint"), data.get("holder"), data.get("since")
        if not isinstance(fingerprint, str) or not isinstance(holder, str):
            return None
        if isinstance(since, bool) or not isinstance(since, int | float):
            return None
        pid, host = data.get("pid"), data.get("host")
        return _Intent(
            fingerprint,
            holder,
            since,
            pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
            host if isinstance(host, str) else None,
        )

    def describe(self) -> str:
        if self.pid is None:
            return "another process"
        return f"process {self.pid} on {self.host or 'an unknown host'}"


@dataclass(frozen=True)
class SessionInfo:
    """What the manager tells about a session, without any token.

    Attributes:
        expires_at: when the access token expires, in ``now()`` seconds (local receive time + ``expires_in``).
        scope: the granted scopes as the tenant returned them, or ``None`` when it returned none.

    See RFC 6749 §5.1.
    """

    expires_at: float
    scope: str | None = None


@dataclass(frozen=True)
class SignedOut:
    """The payload of the ``signed-out`` event.

    Attributes:
        revoked: ``True`` after :meth:`TokenManager.revoke` (the tenant revoked the token, RFC 7009),
            ``False`` after a local :meth:`TokenManager.sign_out`.
    """

    revoked: bool


@dataclass(frozen=True)
class AuthorizationRequest:
    """The result of :meth:`TokenManager.begin_authorization`: where to send the browser.

    Attributes:
        url: the authorize URL with its seven parameters (RFC 6749 §4.1.1, RFC 7636 §4.3).
        state: the ``state`` it carries (kept, single use, by the manager: nothing to do with it).
        expires_at: when the pending sign-in expires, in ``now()`` seconds.
        scopes: the scopes asked for.
        redirect_uri: where the tenant sends the browser back.

    ``url`` and ``state`` are left out of ``repr``.
    """

    url: str = field(repr=False)
    state: str = field(repr=False)
    expires_at: float
    scopes: tuple[str, ...]
    redirect_uri: str


def _check_scopes(scopes: object, option: str) -> tuple[str, ...]:
    if isinstance(scopes, str) or not isinstance(scopes, Sequence | frozenset | set):
        raise InvalidOptionsError(option, "give a list of scope names, e.g. ['profile:read']")
    names = tuple(scopes)
    if not names:
        raise InvalidOptionsError(option, "give at least one scope, e.g. ['profile:read']")
    unknown = [name for name in names if name not in SCOPES]
    if unknown:
        raise InvalidOptionsError(
            option, f"{unknown[0]!r} is not a scope of the service; the scopes are {', '.join(sorted(SCOPES))}"
        )
    return names


def _target(parts: SplitResult) -> str:
    """Scheme, credentials, host, port and path of a URL in a normal form: what a callback must share
    with the redirect URI (RFC 6749 §3.1.2; RFC 9700 §4.4, mix-up)."""
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    netloc = f"[{host}]" if ":" in host else host
    if parts.username is not None:
        netloc = f"{parts.username}{':' + parts.password if parts.password is not None else ''}@{netloc}"
    port = parts.port
    if port is not None and port != {"http": 80, "https": 443}.get(scheme):
        netloc += f":{port}"
    path = parts.path or ("/" if scheme in ("http", "https") else "")
    return f"{scheme}://{netloc}{path}"


def _redirect_target(redirect_uri: object) -> str:
    if not isinstance(redirect_uri, str) or not redirect_uri:
        raise InvalidOptionsError("redirect_uri", "give the redirect URI registered for the client, as a string")
    try:
        parts = urlsplit(redirect_uri)
        target = _target(parts)
    except ValueError as e:
        raise InvalidOptionsError("redirect_uri", f"not a URL ({e})") from None
    if not parts.scheme or (parts.scheme.lower() in ("http", "https") and not parts.hostname):
        raise InvalidOptionsError("redirect_uri", "must be an absolute URL, exactly as registered for the client")
    if "#" in redirect_uri:
        raise InvalidOptionsError("redirect_uri", "must not have a fragment (RFC 6749 §3.1.2)")
    return target


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


class _Core:
    """What the two managers share: options, keys, state, the checks and the parsing (no I/O)."""

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
        intent_wait: float = 20.0,
    ) -> None:
        self._origin = tenant_origin(base_url)
        if not isinstance(client_id, str) or not client_id:
            raise InvalidOptionsError("client_id", "give the OAuth client identifier, a non-empty string")
        self._client_id = client_id
        self._redirect_target = _redirect_target(redirect_uri)
        self._redirect_uri = redirect_uri
        self._scopes = _check_scopes(scopes, "scopes")
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
        self._timeout = timeout
        self._storage: TokenStorage = storage if storage is not None else MemoryStorage()
        self._pending_storage: TokenStorage = pending_storage if pending_storage is not None else self._storage
        # The lock option wins, then the storage's own lock (file, Redis, memory), then the process's.
        own_lock = lock or getattr(self._storage, "lock", None)
        self._lock: Lock = own_lock or _PROCESS_LOCKS.lock
        # Refresh intents only where processes share the storage through a lock (file, Redis, a lock
        # given), as in the TypeScript manager; a MemoryStorage is one process's.
        self._intents = own_lock is not None and not isinstance(self._storage, MemoryStorage)
        self._intent_wait = _positive_number("intent_wait", intent_wait, zero=True)
        # The intent this manager stored and has not cleared yet (its refresh's tokens are not stored yet).
        self._own_intent: _Intent | None = None
        self._log = logger if logger is not None else logging.getLogger(_LOGGER_NAME)
        # Storage keys and the lock name, scoped by tenant origin and client: the TypeScript kit's.
        prefix = f"tenant-integration:{self._origin}:{client_id}:"
        self._tokens_key = prefix + "tokens"
        self._pending_key = prefix + "pending"
        self._lock_name = prefix + "lock"
        self._intent_key = prefix + "intent"

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

    def _forget(self, rejected_token: str) -> None:
        current = self._current
        if current is not None and current.access_token == rejected_token:
            self._rejected = rejected_token
            self._current = None

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
        if event not in _EVENTS:
            raise InvalidOptionsError("event", f"unknown event {event!r}; one of {', '.join(sorted(_EVENTS))}")
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

    # -- shared internals --------------------------------------------------------------------------

    def _emit(self, event: EventName, payload: object) -> None:
        with self._listeners_lock:
            listeners = list(self._listeners.get(event, []))
        for listener in listeners:
            try:
                listener(payload)
            except Exception:  # noqa: S112 (a listener's failure is its own)
                continue

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

    def _fast_token(self) -> str | None:
        """The current access token when it can be handed out without the lock, else ``None``."""
        current, unsaved = self._current, self._unsaved
        if current is None or not self._fresh(current):
            return None
        if unsaved is None or (current is unsaved and self._now_ms() < self._retry_write_after):
            return current.access_token
        return None

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

    def _held_unsaved(self) -> TokenRecord | None:
        unsaved = self._unsaved
        return unsaved if unsaved is not None and self._current is unsaved and self._fresh(unsaved) else None

    def _still_held(self) -> bool:
        """A fresh check that the refresh lock is still this process's (its ``is_held(name)``, which the
        file and Redis locks have); ``True`` for a lock that cannot tell. Storage I/O."""
        check = getattr(self._lock, "is_held", None)
        if not callable(check):
            return True
        try:
            return bool(check(self._lock_name))
        except Exception:
            return False

    def _make_intent(self, stored: TokenRecord) -> _Intent:
        return _Intent(
            _fingerprint(stored.refresh_token), create_state(), round(self._now_ms()), os.getpid(), socket.gethostname()
        )

    def _must_wait_for(self, intent: _Intent | None, stored: TokenRecord, waited: _Waited | None) -> bool:
        """Whether ``intent`` is another process's refresh with ``stored``'s refresh token, still to be
        waited for: not ours, its holder not known to have exited, younger than ``intent_wait`` and not
        waited on that long. Past that, the token is presented, and the log says so and why."""
        if intent is None or intent.fingerprint != _fingerprint(stored.refresh_token):
            return False
        own = self._own_intent
        if own is not None and own.holder == intent.holder:
            return False
        if intent.pid is not None and intent.host is not None and is_gone(intent.host, intent.pid):
            self._log.warning(
                "The refresh intent on this refresh token was left by %s, which has exited; presenting the token "
                "(if its request had reached the tenant, the tenant ends the session)",
                intent.describe(),
            )
            return False
        age = self._now_ms() - intent.since
        so_far = time.monotonic() - waited[1] if waited is not None and waited[0] == intent.holder else 0.0
        if age >= self._intent_wait * 1000 or so_far >= self._intent_wait:
            self._log.warning(
                "The refresh by %s with this refresh token was not stored within intent_wait (%g s); presenting "
                "the token (if that refresh had reached the tenant, the tenant ends the session)",
                intent.describe(),
                self._intent_wait,
            )
            return False
        return True

    def _intent_settled(self, pending: _IntentPending, waited: _Waited) -> bool:
        """One look at the storage while honouring ``pending``: ``True`` once there is something to
        decide again on (another record, the intent gone or another holder's, its holder exited, the
        bound passed). Storage I/O; a failing read also ends the wait (the next pass reports it)."""
        if time.monotonic() - waited[1] >= self._intent_wait:
            return True
        try:
            latest = parse_record(self._storage.get(self._tokens_key))
            intent = _Intent.parse(self._storage.get(self._intent_key))
        except Exception:
            return True
        if latest is None or latest.id != pending.record_id:
            return True
        if intent is None or intent.holder != pending.holder_id:
            return True
        gone = intent.pid is not None and intent.host is not None and is_gone(intent.host, intent.pid)
        return gone or self._now_ms() - intent.since >= self._intent_wait * 1000

    def _read_intent(self) -> _Intent | None:
        try:
            return _Intent.parse(self._storage.get(self._intent_key))
        except Exception:
            return None

    def _drop_intent(self, intent: _Intent | None) -> None:
        """Deletes the stored intent if it is still ``intent`` (another holder's is left alone). A failure
        leaves it behind: it holds the others back for at most ``intent_wait``. Storage I/O."""
        if intent is None:
            return
        if self._own_intent is intent:
            self._own_intent = None
        with contextlib.suppress(Exception):
            current = _Intent.parse(self._storage.get(self._intent_key))
            if current is not None and current.holder == intent.holder:
                self._storage.delete(self._intent_key)

    def _info(self, record: TokenRecord) -> SessionInfo:
        return SessionInfo(expires_at=expires_at_ms(record, self._now_ms()) / 1000, scope=record.scope)

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
            what = f"the value under {self._tokens_key} is not a token record; signing in replaces it"
            self._report_unreadable(what, None)
            raise TokenManagerError("NOT_SIGNED_IN", f"the stored tokens are unreadable: {what}")
        return record

    def _report_unreadable(self, what: str, cause: BaseException | None) -> None:
        """Stored tokens found unreadable: a warning and ``storage-failed`` (``STORAGE_FAILED``), so that
        a caller that only asks :meth:`is_signed_in` learns it too."""
        self._log.warning("The stored tokens were unreadable: %s", what)
        self._emit(
            "storage-failed",
            TokenManagerError("STORAGE_FAILED", f"the stored tokens were unreadable: {what}", cause=cause),
        )

    def _authorization(self, scopes: Sequence[str] | None) -> tuple[AuthorizationRequest, str]:
        """A new authorization request and its pending record (serialized)."""
        asked = self._scopes if scopes is None else _check_scopes(scopes, "scopes")
        pair = create_pkce_pair()
        state = create_state()
        expires_at = round(self._now_ms() + self._pending_lifetime_ms)
        pending = serialize_pending(PendingRecord(state=state, verifier=pair.verifier, expires_at=expires_at))
        query = urlencode(
            {
                "response_type": "code",
                "client_id": self._client_id,
                "redirect_uri": self._redirect_uri,
                "scope": " ".join(asked),
                "state": state,
                "code_challenge": pair.challenge,
                "code_challenge_method": "S256",
            },
            # Spaces as %20, not the form encoding's "+", which some servers read literally.
            quote_via=quote,
            safe="",
        )
        request = AuthorizationRequest(
            url=f"{self._origin}/oauth/authorize?{query}",
            state=state,
            expires_at=expires_at / 1000,
            scopes=asked,
            redirect_uri=self._redirect_uri,
        )
        return request, pending

    def _callback_params(self, callback_url: object) -> dict[str, str]:
        """The callback's query, checked before the pending sign-in is taken: a full URL at the redirect
        URI that repeats none of ``state``, ``code``, ``error``. Its value never enters a message."""
        problem = (
            "not a full URL: pass the whole URL the browser was sent back to (scheme, host, path and "
            "query), not only its query string"
        )
        if not isinstance(callback_url, str):
            raise TokenManagerError("INVALID_CALLBACK", problem)
        try:
            parts = urlsplit(callback_url)
            target = _target(parts)
        except ValueError:
            raise TokenManagerError("INVALID_CALLBACK", problem) from None
        if not parts.scheme or (parts.scheme.lower() in ("http", "https") and not parts.hostname):
            raise TokenManagerError("INVALID_CALLBACK", problem)
        # Mix-up defence: the answer must come back where this client asked for it.
        if target != self._redirect_target:
            raise TokenManagerError("INVALID_CALLBACK", "the callback is not at redirect_uri")
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        params: dict[str, str] = {}
        for name, value in pairs:
            if name in params and name in ("state", "code", "error"):
                # An ambiguous callback is refused rather than read last-one-wins.
                raise TokenManagerError("INVALID_CALLBACK", f"the callback repeats {name}")
            params.setdefault(name, value)
        return params

    def _checked_callback(self, raw: str | None, params: dict[str, str]) -> tuple[str, str]:
        """The code and verifier of a callback whose pending sign-in was taken: state present, equal
        (constant time), not expired; no ``error``; a ``code``. No request is sent before this."""
        pending = parse_pending(raw)
        if pending is None:
            raise TokenManagerError(
                "NO_PENDING_SIGN_IN", "no sign-in is pending (never begun, already used, or cleared)"
            )
        received = params.get("state")
        if received is None:
            raise TokenManagerError("STATE_MISSING", "the callback has no state")
        if not states_equal(received, pending.state):
            raise TokenManagerError("STATE_MISMATCH", "the callback's state is not the one of the pending sign-in")
        if self._now_ms() > pending.expires_at:
            raise TokenManagerError("STATE_EXPIRED", "the pending sign-in expired; begin it again")
        denied = parse_oauth_error(params)
        if denied is not None:
            error, description, uri = denied
            secrets = [pending.state, pending.verifier, params.get("code")]
            clean = None if description is None else redact(description, secrets)
            raise TokenManagerError(
                "AUTHORIZATION_DENIED",
                f"the tenant answered {error}{f' ({clean})' if clean else ''}",
                error=error,
                error_description=clean,
                error_uri=uri,
            )
        code = params.get("code")
        if not code:
            raise TokenManagerError("INVALID_CALLBACK", "the callback has no code")
        return code, pending.verifier

    def _exchange_body(self, code: str, verifier: str) -> dict[str, str]:
        return {
            "grant_type": "authorization_code",
            "client_id": self._client_id,
            "redirect_uri": self._redirect_uri,
            "code": code,
            "code_verifier": verifier,
        }

    def _answer(self, path: str, response: httpx.Response, secrets: list[str | None], attempt: int) -> str:
        """The text of a 2xx answer; every other answer as its typed error (RFC 6749 §5.2)."""
        status = response.status_code
        if 200 <= status < 300:
            return response.text
        if status == 429 or status >= 500:
            # A 503 says the tenant did not handle the request (RFC 9110 §15.6.4); for a 429 the kit assumes
            # so (RFC 6585 §4 does not say: see the README's "Paused processes"; were it handled, its
            # successor is lost with the answer and the next call would present this token anyway). So
            # that refresh may be sent again, as the TypeScript manager does. Any other 5xx may come
            # after the tenant rotated the token.
            retry_after = parse_retry_after(response.headers.get("retry-after"), float(self._now()))
            raise TransientError(status, attempt, sent=status not in (429, 503), retry_after=retry_after)
        fields = parse_oauth_error(parse_json(response.text)) if status >= 400 else None
        if fields is None:
            raise TokenManagerError("INVALID_RESPONSE", f"{path} answered HTTP {status} without an OAuth error body")
        error, description, uri = fields
        # A server may echo what it was sent; the error must not carry it.
        raise OAuthResponseError(
            status,
            redact(error, secrets),
            None if description is None else redact(description, secrets),
            None if uri is None else redact(uri, secrets),
        )

    def _record(self, text: str, origin: TokenRecord | None) -> TokenRecord:
        """The record of a token response; ``origin`` is the record a refresh started from."""
        # Expiry counts from the local receive time, so a skewed server clock does not matter.
        received_at = round(self._now_ms())
        # A refresh that did not rotate keeps the refresh token it was made with.
        fields = parse_token_response(parse_json(text), origin.refresh_token if origin else None)
        record_id = create_state()
        session: str | None
        if origin is None:
            session, seq = record_id, 0
        else:
            session, seq = origin.session or origin.id, (origin.seq or 0) + 1
        return TokenRecord(**fields, received_at=received_at, id=record_id, session=session, seq=seq)

    def _log_request(self, path: str, status: int | None, started: float, attempt: int) -> None:
        ms = round((time.perf_counter() - started) * 1000)
        if status is None:
            self._log.error("POST %s no answer %dms (attempt %d)", path, ms, attempt)
        else:
            self._log.info("POST %s %d %dms (attempt %d)", path, status, ms, attempt)

    def _transport_failure(self, error: Exception, secrets: list[str | None], attempt: int) -> TransientError:
        return TransientError(None, attempt, cause=scrubbed(error, secrets), sent=not isinstance(error, _NOT_SENT))

    def _retry_wait(self, error: TransientError, attempt: int) -> float | None:
        """Seconds to wait before the next refresh attempt, or ``None`` when the refresh is not retried:
        only a request that cannot have reached the tenant is sent again (the tenant may otherwise
        have rotated the refresh token, and sending it again would end the session)."""
        if error.sent or attempt >= self._attempts:
            return None
        why = "no connection" if error.status is None else f"HTTP {error.status}"
        delay: float
        if error.retry_after is not None:
            # The tenant said when (RFC 9110 §10.2.3), as the client's RetryPolicy honours it; a wait past
            # the cap ends the retries at once, the error saying when to try again (its retry_after).
            if error.retry_after > _MAX_RETRY_DELAY:
                self._log.warning(
                    "Refresh attempt %d failed (%s, Retry-After %g s, more than %g s); not retried",
                    attempt,
                    why,
                    error.retry_after,
                    _MAX_RETRY_DELAY,
                )
                return None
            delay = error.retry_after
        else:
            delay = min(self._retry_delay * 2.0 ** (attempt - 1), _MAX_RETRY_DELAY)
        self._log.warning("Refresh attempt %d failed (%s); retrying in %dms", attempt, why, round(delay * 1000))
        return delay

    def _session_ended(self, error: OAuthResponseError) -> SessionEndedError:
        return SessionEndedError(error.status, error.error, error.error_description, error.error_uri)

    def _revoke_body(self, token: str) -> str:
        return urlencode({"token": token, "token_type_hint": "access_token", "client_id": self._client_id})


async def _within_running_time(request: Awaitable[T], seconds: float | None) -> T:
    """Awaits ``request`` for at most ``seconds`` of time this process ran, then raises
    :class:`httpx.ReadTimeout`. A tick that comes far later than asked means the process was stopped
    (SIGSTOP, a suspended machine, a debugger): that time is not the tenant's, and the tick only waits
    again, so that an answer that arrived meanwhile is read before the timeout counts on (asyncio would
    otherwise run the expired timer in the same turn as the data, and drop the answer).
    """
    if seconds is None:
        return await request
    task = asyncio.ensure_future(request)
    step = min(seconds, 0.25)
    ran = 0.0
    last = time.monotonic()
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=min(step, max(seconds - ran, 0.0)))
            if done:
                return task.result()
            at = time.monotonic()
            gap, last = at - last, at
            if gap > step + 1.0:
                continue
            ran += gap
            if ran >= seconds:
                raise httpx.ReadTimeout(f"no answer within {seconds:g} s")
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


def _json(body: dict[str, str]) -> bytes:
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


_TOKEN_HEADERS = {"Accept": "application/json", "Content-Type": "application/json"}
_REVOKE_HEADERS = {"Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded"}


class _Flight:
    """One pass under the refresh lock (a storage read, and a refresh when still needed) whose outcome,
    token or error, every concurrent caller of the process shares."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.token: str | None = None
        self.error: BaseException | None = None


class TokenManager(_Core):
    """Signs in with PKCE, keeps the tokens in a storage, refreshes them rotation-safely, revokes them.

    Its :meth:`get_access_token` and :meth:`on_unauthorized` make it a token source for
    :class:`~tenant_integration.Client`. Safe to share between threads.

    Args:
        base_url: the tenant's origin, e.g. ``https://acme.tenant.test`` (https, or http to loopback);
            a path such as ``/api/v1`` is refused: the manager adds ``/oauth/...`` itself.
        client_id: the OAuth client identifier.
        redirect_uri: the redirect URI registered for the client, exactly as registered.
        scopes: the scopes to ask for (names of the contract's list, at least one).
        storage: where the tokens live (default: a new :class:`~tenant_integration.MemoryStorage`).
            A storage shared across processes brings its lock (``FileStorage``, ``RedisStorage``).
        pending_storage: where the pending sign-in lives (default: ``storage``).
        now: the clock, seconds since the epoch (default :func:`time.time`).
        refresh_leeway: refresh when the access token expires within this many seconds (default 60,
            at most half its lifetime).
        pending_lifetime: how long a pending sign-in stays valid, in seconds (default 600).
        lock: the lock around a refresh (default: the storage's ``lock``, else one of the process).
        transport: the httpx transport of the token requests (tests pass ``httpx.MockTransport``).
        timeout: the timeout of each request, in seconds or as ``httpx.Timeout`` (default 10 s). Its
            read timeout counts only the time the process ran: a process stopped while it waits for an
            answer (SIGSTOP, a debugger) goes on waiting when it wakes, for what is left of it. With a
            ``transport`` of yours, that holds when it is, or sends through, a
            :class:`~tenant_integration.RunningTimeTransport`.
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

    Raises:
        InvalidOptionsError: ``INVALID_OPTIONS`` for a bad option, with a message saying why.

    Example:
        >>> manager = TokenManager(  # doctest: +SKIP
        ...     base_url="https://acme.tenant.test",
        ...     client_id="demo-integration",
        ...     redirect_uri="http://127.0.0.1:53682/callback",
        ...     scopes=["profile:read"],
        ...     storage=FileStorage("~/.config/demo/tokens.json"),
        ... )
        >>> request = manager.begin_authorization()  # doctest: +SKIP
        >>> manager.complete_authorization(callback_url)  # doctest: +SKIP
        >>> manager.get_access_token()  # doctest: +SKIP

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
        transport: httpx.BaseTransport | None = None,
        timeout: float | httpx.Timeout | None = 10.0,
        refresh_attempts: int = 3,
        retry_delay: float = 0.3,
        logger: logging.Logger | None = None,
        intent_wait: float = 20.0,
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
        )
        if transport is not None and not isinstance(transport, httpx.BaseTransport):
            raise InvalidOptionsError(
                "transport", "must be an httpx.BaseTransport (AsyncTokenManager takes async ones)"
            )
        self._http = httpx.Client(transport=transport, timeout=timeout, follow_redirects=False)
        if transport is None:
            # Its own transports (the default one, and those of the proxies the environment names) read
            # with a timeout that counts only the time the process ran (see _running_time.py).
            for own in (self._http._transport, *self._http._mounts.values()):
                if isinstance(own, httpx.HTTPTransport):
                    count_running_time(own)
        self._mutex = threading.Lock()
        self._inflight: _Flight | None = None

    # -- sign-in -----------------------------------------------------------------------------------

    def begin_authorization(self, scopes: Sequence[str] | None = None) -> AuthorizationRequest:
        """Creates a PKCE pair and a state, stores them as the one pending sign-in (replacing any
        earlier one), and returns the authorize URL to send the browser to.

        Args:
            scopes: the scopes of this sign-in (default: the manager's ``scopes``), names of the contract.

        Raises:
            InvalidOptionsError: for a scope not in the contract's list.
            TokenManagerError: ``STORAGE_FAILED`` when the pending sign-in cannot be stored.

        See RFC 6749 §4.1.1, RFC 7636 §4.3.
        """
        request, pending = self._authorization(scopes)
        try:
            self._pending_storage.set(self._pending_key, pending)
        except Exception as e:
            error = self._storage_failed(e)
        else:
            return request
        raise error

    def complete_authorization(self, callback_url: str) -> SessionInfo:
        """Checks the callback, takes the pending sign-in (single use), checks ``state`` in constant
        time, exchanges the ``code`` at ``POST /oauth/token`` (JSON, with the PKCE verifier) and stores
        the tokens.

        A callback that is not a full URL at the redirect URI (e.g. only ``?code=...&state=...``) is refused
        before the pending sign-in is taken, so the right URL can still be passed.

        Raises:
            TokenManagerError: ``INVALID_CALLBACK``, ``NO_PENDING_SIGN_IN``, ``STATE_MISSING``,
                ``STATE_MISMATCH``, ``STATE_EXPIRED``, ``AUTHORIZATION_DENIED`` with no request sent;
                ``INVALID_RESPONSE``; ``STORAGE_FAILED`` (after the exchange, the tokens stay usable
                in this process and are written again on the next ``get_access_token``).
            OAuthResponseError: the tenant refused the exchange (e.g. ``invalid_grant``).
            TransientError: network error, 429 or 5xx (the single-use code is not retried).

        See RFC 6749 §3.1.2, §4.1.2, §4.1.3, §10.12; RFC 7636 §4.5; RFC 9700 §4.4.
        """
        params = self._callback_params(callback_url)
        # Take the pending sign-in before the state check, so that it is used at most once whatever happens.
        failure: BaseException | None = None
        raw: str | None = None
        try:
            raw = self._pending_storage.get(self._pending_key)
            if raw is not None:
                self._pending_storage.delete(self._pending_key)
        except Exception as e:
            failure = self._storage_failed(e)
        if failure is not None:
            raise failure
        code, verifier = self._checked_callback(raw, params)
        with self._mutex:
            self._generation += 1
        body = self._exchange_body(code, verifier)
        record = self._record(self._post("/oauth/token", _json(body), _TOKEN_HEADERS, [code, verifier], 1), None)
        session = self._commit(record)
        self._log.info("Signed in; the access token expires at %s", session.expires_at)
        self._emit("signed-in", session)
        return session

    # -- tokens ------------------------------------------------------------------------------------

    def get_access_token(self) -> str:
        """Returns a valid access token, refreshing it (once, however many threads ask) when it is within
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
        with self._mutex:
            flight = self._inflight
            owner = flight is None
            if flight is None:
                flight = self._inflight = _Flight()
        if not owner:
            flight.done.wait()
            if flight.error is not None:
                raise flight.error
            assert flight.token is not None
            return flight.token
        try:
            flight.token = self._fly()
            return flight.token
        except BaseException as e:
            flight.error = e
            raise
        finally:
            with self._mutex:
                self._inflight = None
            flight.done.set()

    def on_unauthorized(self, rejected_token: str) -> None:
        """Marks the current access token unusable when it equals ``rejected_token`` (an API answered
        401), so that the next :meth:`get_access_token` re-reads the storage and, unless it holds another
        token (another process refreshed), refreshes. Concurrent 401s cause one refresh. No I/O.

        See RFC 6750 §3.1 (``invalid_token``).
        """
        self._forget(rejected_token)

    def _fly(self) -> str:
        held = self._held_unsaved()
        self._log.debug("Waiting for the refresh lock")
        if held is None:
            return self._under_lock()
        try:
            return self._under_lock()
        except Exception as e:
            return self._serve_unsaved(e, held)

    def _under_lock(self) -> str:
        """:meth:`_obtain` under the refresh lock; the lock taken again when it was found lost before a
        refresh left, and let go while another process's refresh intent is honoured."""
        tries = 0
        waited: _Waited | None = None
        while True:
            try:
                return self._lock(self._lock_name, functools.partial(self._obtain, waited=waited))
            except _LockLost:
                tries += 1
                self._log.warning(
                    "The refresh lock was taken over while this process held it (paused?); nothing was sent; "
                    "taking the lock again"
                )
                if tries >= _LOCK_TRIES:
                    raise TransientError(None, 0, sent=False) from None
            except _IntentPending as pending:
                if waited is None or waited[0] != pending.holder_id:
                    # The bound runs per holder: a new refresh with the same token is waited for anew.
                    waited = (pending.holder_id, time.monotonic())
                    self._log.info(
                        "Waiting for the refresh by %s with the same refresh token to be stored", pending.holder
                    )
                while not self._intent_settled(pending, waited):
                    time.sleep(_INTENT_POLL)

    def _retry_write_later(self) -> None:
        """After a failed write of fresh tokens on a shared storage, tries it again in a second even if no
        call comes: the storage may have come back with the old record (Redis restarted from its
        append-only file), and the others, honouring this process's intent, wait for exactly this write."""
        if not self._intents:
            return

        def retry() -> None:
            unsaved = self._unsaved
            if unsaved is not None and self._current is unsaved and self._fresh(unsaved):
                with contextlib.suppress(Exception):
                    self.get_access_token()

        timer = threading.Timer(_UNSAVED_RETRY_MS / 1000 + 0.01, retry)
        timer.daemon = True
        timer.start()

    def _serve_unsaved(self, error: Exception, held: TokenRecord) -> str:
        """Tokens whose write failed and that are still fresh, when retrying the write cannot even run
        (the storage or its lock unreachable): the tenant holds them as current, so failing the call
        would only make the one process that holds them unable to use them."""
        if self._current is not held or self._unsaved is not held or not self._fresh(held):
            raise error
        failure = self._storage_failed(error)
        self._retry_write_after = self._now_ms() + _UNSAVED_RETRY_MS
        self._log.warning("The tokens could not be written again (storage or lock unavailable); they stay in use")
        self._emit("storage-failed", failure)
        self._retry_write_later()
        return held.access_token

    def _load(self) -> TokenRecord | None:
        failure: TokenManagerError | None = None
        try:
            raw = self._storage.get(self._tokens_key)
        except Exception as e:
            failure = self._load_failed(e)
        if failure is not None:
            raise failure
        return self._parse_stored(raw)

    def _obtain(self, again: bool = False, waited: _Waited | None = None) -> str:
        """Runs under the lock: re-reads the storage, and refreshes only if what it finds is not usable
        and no other process's live refresh intent names its refresh token."""
        self._log.debug("Refresh lock taken; reading the tokens from storage")
        unsaved = self._unsaved
        stored: TokenRecord | None
        if unsaved is not None:
            # Storage is read first: another process may have stored newer tokens meanwhile (or the write
            # went through after all); ours is written again only over a record it supersedes.
            try:
                stored = self._load()
            except TokenManagerError:
                stored = None
            if stored is not None and supersedes(stored, unsaved):
                self._unsaved = None
            else:
                self._commit_or_report(unsaved)
                stored = unsaved
                self._refuse_to_refresh_unwritten(unsaved)
            if self._unsaved is None:
                # Written (or superseded): this process's intent on the old token has done its job.
                self._drop_intent(self._own_intent)
        else:
            stored = self._load()
        if stored is None:
            raise TokenManagerError("NOT_SIGNED_IN", "there are no tokens; sign in first")
        if not self._fresh(stored) or stored.access_token == self._rejected:
            if self._intents and stored is not self._unsaved:
                intent = self._read_intent()
                if intent is not None and self._must_wait_for(intent, stored, waited):
                    raise _IntentPending(stored.id, intent)
            return self._refresh(stored, again)
        self._current = stored
        return stored.access_token

    def _check_before_sending(self, stored: TokenRecord, intent: _Intent | None) -> TokenRecord | None:
        """The last checks, right before a refresh request leaves: the stored record is still the one
        read (else that record, or ``None`` when gone, is returned to decide again with) and the lock is
        still this process's own (else :class:`_LockLost`, nothing sent)."""
        if stored is not self._unsaved:
            try:
                latest = self._load()
            except BaseException:
                self._drop_intent(intent)
                raise
            if latest is None or latest.id != stored.id:
                self._drop_intent(intent)
                self._log.info("The stored tokens changed before the refresh left; using them")
                return latest
        if not self._still_held():
            self._drop_intent(intent)
            raise _LockLost
        return stored

    def _post(
        self, path: str, body: bytes | str, headers: dict[str, str], secrets: list[str | None], attempt: int
    ) -> str:
        started = time.perf_counter()
        failure: TransientError | None = None
        try:
            response = self._http.post(self._origin + path, content=body, headers=headers)
        except Exception as e:
            failure = self._transport_failure(e, self._known(*secrets), attempt)
        if failure is not None:
            self._log_request(path, None, started, attempt)
            raise failure
        self._log_request(path, response.status_code, started, attempt)
        return self._answer(path, response, self._known(*secrets), attempt)

    def _commit(self, record: TokenRecord) -> SessionInfo:
        """Persists the tokens and makes them current. When the write fails they are current all the same
        (kept as unsaved, written again on the next call) and ``STORAGE_FAILED`` is raised."""
        self._current = self._unsaved = record
        failure: TokenManagerError | None = None
        try:
            self._storage.set(self._tokens_key, serialize(record))
        except Exception as e:
            failure = self._storage_failed(e)
        if failure is not None:
            raise failure
        if self._unsaved is record:
            self._unsaved = None
        return self._info(record)

    def _commit_or_report(self, record: TokenRecord) -> SessionInfo | None:
        try:
            return self._commit(record)
        except TokenManagerError as e:
            self._write_failure = e
            self._retry_write_after = self._now_ms() + _UNSAVED_RETRY_MS
            self._emit("storage-failed", e)
            self._retry_write_later()
            return None

    def _write_intent(self, stored: TokenRecord) -> _Intent | None:
        """Checks the lock is still ours (a holder taken over while paused must not replace the new
        holder's intent), then stores the refresh intent; ``None`` when it cannot be stored (a full disk:
        the refresh goes on under the lock alone)."""
        if not self._intents:
            return None
        if not self._still_held():
            raise _LockLost
        intent = self._make_intent(stored)
        try:
            self._storage.set(self._intent_key, intent.serialize())
        except Exception:
            self._log.warning("The refresh intent could not be stored; refreshing under the lock alone")
            return None
        self._own_intent = intent
        return intent

    def _refresh(self, stored: TokenRecord, again: bool) -> str:
        generation = self._generation
        intent = self._write_intent(stored)
        self._log.info("Refresh started")
        body = {"grant_type": "refresh_token", "refresh_token": stored.refresh_token, "client_id": self._client_id}
        secrets: list[str | None] = [stored.access_token, stored.refresh_token]
        attempt = 1
        while True:
            try:
                if self._intents:
                    checked = self._check_before_sending(stored, intent)
                    if checked is not stored:
                        return self._obtain(again)
                text = self._post("/oauth/token", _json(body), _TOKEN_HEADERS, secrets, attempt)
                record = self._record(text, stored)
                break
            except TransientError as e:
                delay = self._retry_wait(e, attempt)
                if delay is None:
                    self._drop_intent(intent)
                    raise
                time.sleep(delay)
                attempt += 1
            except OAuthResponseError as e:
                self._drop_intent(intent)
                if e.error != "invalid_grant":
                    raise
                return self._after_invalid_grant(e, stored, again, generation)
            except TokenManagerError:
                self._drop_intent(intent)
                raise
        if generation != self._generation:
            self._drop_intent(intent)
            raise TokenManagerError("NOT_SIGNED_IN", "signed in or out while the refresh ran; its tokens are dropped")
        info = self._commit_or_report(record)
        if info is not None:
            # Stored: the intent has done its job. Kept while the write fails, so that the others do not
            # present the old token while this process writes the new one again.
            self._drop_intent(intent)
            self._log.info("Refresh finished; the access token expires at %s", info.expires_at)
            self._emit("tokens-refreshed", info)
        else:
            self._log.warning("Refresh finished, but the tokens could not be stored; the write is retried later")
        return record.access_token

    def _after_invalid_grant(self, error: OAuthResponseError, stored: TokenRecord, again: bool, generation: int) -> str:
        # Another process may have rotated the token meanwhile: try the newest one once before giving up.
        # A storage that cannot be read leaves that unknown: the session is not ended (which would delete
        # the record for every process), and the read failure reaches the caller.
        latest: TokenRecord | None = None
        if not again:
            try:
                latest = self._load()
            except TokenManagerError as read_error:
                if read_error.code != "NOT_SIGNED_IN":
                    raise
        if latest is not None and latest.refresh_token != stored.refresh_token:
            return self._obtain(again=True)
        ended = self._session_ended(error)
        if generation == self._generation:
            self._log.warning("Session ended (invalid_grant)")
            with contextlib.suppress(TokenManagerError):  # the session is over whether or not the delete succeeds
                self._clear()
            self._emit("session-ended", ended)
        raise ended

    def _clear(self) -> None:
        with self._mutex:
            self._generation += 1
        self._current = self._unsaved = None
        failure: TokenManagerError | None = None
        try:
            self._storage.delete(self._tokens_key)
        except Exception as e:
            failure = self._storage_failed(e)
        if failure is not None:
            raise failure

    # -- session -----------------------------------------------------------------------------------

    def is_signed_in(self) -> bool:
        """True when the storage holds tokens (perhaps expired: a refresh may still work), with no
        request. Tokens whose write failed count too.

        Raises:
            TokenManagerError: ``STORAGE_FAILED`` when the storage cannot be read.

        See RFC 6749 §6.
        """
        return self.get_session() is not None

    def get_session(self) -> SessionInfo | None:
        """The session's expiry and scope from the storage, with no request; ``None`` without tokens.

        Raises:
            TokenManagerError: ``STORAGE_FAILED`` when the storage cannot be read.

        See RFC 6749 §5.1.
        """
        if self._unsaved is not None:
            return self._info(self._unsaved)
        try:
            record = self._load()
        except TokenManagerError as e:
            if e.code == "NOT_SIGNED_IN":
                return None
            raise
        return None if record is None else self._info(record)

    def revoke(self) -> None:
        """Revokes the current access token at ``POST /oauth/revoke`` (a form body with ``client_id``, as
        RFC 7009 §2.1 and the contract take it), which disconnects the integration; then clears the
        tokens and fires ``revoked``. An expired access token is refreshed first. Without a session it
        only clears. On failure the tokens are kept.

        Raises:
            OAuthResponseError, TransientError: the tenant refused or did not answer; tokens kept.
            TokenManagerError: ``INVALID_RESPONSE``, ``STORAGE_FAILED``.

        See RFC 7009 §2.1, §2.2.
        """
        try:
            token = self.get_access_token()
        except TokenManagerError as e:
            if e.code in ("NOT_SIGNED_IN", "SESSION_ENDED"):
                self.sign_out()
                return
            raise
        self._post("/oauth/revoke", self._revoke_body(token), _REVOKE_HEADERS, [token], 1)
        self._clear()
        self._log.info("Revoked")
        self._emit("revoked", None)
        self._emit("signed-out", SignedOut(revoked=True))

    def sign_out(self) -> None:
        """Forgets the tokens locally (deletes them from the storage), with no request.

        Raises:
            TokenManagerError: ``STORAGE_FAILED``.

        See RFC 6749 §10.3.
        """
        self._clear()
        self._emit("signed-out", SignedOut(revoked=False))

    def close(self) -> None:
        """Closes the HTTP connections (and the ``transport`` given)."""
        self._http.close()

    def __enter__(self) -> TokenManager:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"TokenManager(base_url={self._origin!r}, client_id={self._client_id!r})"


class AsyncTokenManager(_Core):
    """:class:`TokenManager` on asyncio: the same options (``transport`` an ``httpx.AsyncBaseTransport``),
    the same promises, ``async`` methods. Storage calls run in a worker thread
    (:func:`asyncio.to_thread`), the storage's lock in a thread of its own while the refresh runs on
    the event loop; concurrent tasks wait for one shared refresh.

    Its :meth:`get_access_token` and :meth:`on_unauthorized` make it a token source for
    :class:`~tenant_integration.AsyncClient`.

    Raises:
        InvalidOptionsError: ``INVALID_OPTIONS`` for a bad option, with a message saying why.

    Example:
        >>> manager = AsyncTokenManager(url, "demo", uri, ["profile:read"])  # doctest: +SKIP
        >>> token = await manager.get_access_token()  # doctest: +SKIP

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
        )
        if transport is not None and not isinstance(transport, httpx.AsyncBaseTransport):
            raise InvalidOptionsError("transport", "must be an httpx.AsyncBaseTransport (TokenManager takes sync ones)")
        self._transport = transport
        self._http: httpx.AsyncClient | None = None
        self._http_loop: asyncio.AbstractEventLoop | None = None
        self._inflight: asyncio.Task[str] | None = None

    def _client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        # Connections belong to the event loop that opened them: a manager used from a new loop (a new
        # asyncio.run, a test's own loop) gets a client of its own there.
        if self._http is None or self._http_loop is not loop:
            self._http = httpx.AsyncClient(transport=self._transport, timeout=self._timeout, follow_redirects=False)
            self._http_loop = loop
        return self._http

    async def _store(self, op: Callable[..., T], *args: str) -> T:
        return await asyncio.to_thread(op, *args)

    # -- sign-in -----------------------------------------------------------------------------------

    async def begin_authorization(self, scopes: Sequence[str] | None = None) -> AuthorizationRequest:
        """:meth:`TokenManager.begin_authorization` on asyncio. See RFC 6749 §4.1.1, RFC 7636 §4.3."""
        request, pending = self._authorization(scopes)
        try:
            await self._store(self._pending_storage.set, self._pending_key, pending)
        except Exception as e:
            error = self._storage_failed(e)
        else:
            return request
        raise error

    async def complete_authorization(self, callback_url: str) -> SessionInfo:
        """:meth:`TokenManager.complete_authorization` on asyncio.

        See RFC 6749 §3.1.2, §4.1.2, §4.1.3, §10.12; RFC 7636 §4.5; RFC 9700 §4.4.
        """
        params = self._callback_params(callback_url)
        failure: BaseException | None = None
        raw: str | None = None
        try:
            raw = await self._store(self._pending_storage.get, self._pending_key)
            if raw is not None:
                await self._store(self._pending_storage.delete, self._pending_key)
        except Exception as e:
            failure = self._storage_failed(e)
        if failure is not None:
            raise failure
        code, verifier = self._checked_callback(raw, params)
        self._generation += 1
        body = self._exchange_body(code, verifier)
        text = await self._post("/oauth/token", _json(body), _TOKEN_HEADERS, [code, verifier], 1)
        session = await self._commit(self._record(text, None))
        self._log.info("Signed in; the access token expires at %s", session.expires_at)
        self._emit("signed-in", session)
        return session

    # -- tokens ------------------------------------------------------------------------------------

    async def get_access_token(self) -> str:
        """:meth:`TokenManager.get_access_token` on asyncio: concurrent tasks share one refresh.

        See RFC 6749 §6; RFC 9700 §4.14.2.
        """
        token = self._fast_token()
        if token is not None:
            return token
        flight = self._inflight
        if flight is None or flight.get_loop() is not asyncio.get_running_loop():
            flight = self._inflight = asyncio.ensure_future(self._fly())

            def landed(done: asyncio.Task[str]) -> None:
                if self._inflight is done:
                    self._inflight = None
                if not done.cancelled():
                    done.exception()  # retrieved here; every waiter re-raises it

            flight.add_done_callback(landed)
        # A waiter that is cancelled does not cancel the refresh the others wait for.
        return await asyncio.shield(flight)

    async def on_unauthorized(self, rejected_token: str) -> None:
        """:meth:`TokenManager.on_unauthorized` as a coroutine (the async token source protocol). No I/O.

        See RFC 6750 §3.1 (``invalid_token``).
        """
        self._forget(rejected_token)

    async def _fly(self) -> str:
        held = self._held_unsaved()
        self._log.debug("Waiting for the refresh lock")
        if held is None:
            return await self._under_lock()
        try:
            return await self._under_lock()
        except Exception as e:
            if self._current is not held or self._unsaved is not held or not self._fresh(held):
                raise
            failure = self._storage_failed(e)
            self._retry_write_after = self._now_ms() + _UNSAVED_RETRY_MS
            self._log.warning("The tokens could not be written again (storage or lock unavailable); they stay in use")
            self._emit("storage-failed", failure)
            self._retry_write_later()
            return held.access_token

    async def _under_lock(self) -> str:
        """:meth:`TokenManager._under_lock` on asyncio."""
        tries = 0
        waited: _Waited | None = None
        while True:
            try:
                return await self._locked(functools.partial(self._obtain, waited=waited))
            except _LockLost:
                tries += 1
                self._log.warning(
                    "The refresh lock was taken over while this process held it (paused?); nothing was sent; "
                    "taking the lock again"
                )
                if tries >= _LOCK_TRIES:
                    raise TransientError(None, 0, sent=False) from None
            except _IntentPending as pending:
                if waited is None or waited[0] != pending.holder_id:
                    # The bound runs per holder: a new refresh with the same token is waited for anew.
                    waited = (pending.holder_id, time.monotonic())
                    self._log.info(
                        "Waiting for the refresh by %s with the same refresh token to be stored", pending.holder
                    )
                # Polling a storage (file or Redis) that has no change notification.
                while not await asyncio.to_thread(self._intent_settled, pending, waited):  # noqa: ASYNC110
                    await asyncio.sleep(_INTENT_POLL)

    def _retry_write_later(self) -> None:
        """:meth:`TokenManager._retry_write_later` on the running event loop."""
        if not self._intents:
            return
        loop = asyncio.get_running_loop()

        def retry() -> None:
            unsaved = self._unsaved
            if unsaved is not None and self._current is unsaved and self._fresh(unsaved):
                task = loop.create_task(self.get_access_token())
                task.add_done_callback(lambda t: t.cancelled() or t.exception())

        loop.call_later(_UNSAVED_RETRY_MS / 1000 + 0.01, retry)

    async def _locked(self, task: Callable[[], Awaitable[T]]) -> T:
        """Runs ``task`` on the event loop while a thread of its own holds the storage's lock (the lock
        protocol is synchronous, and a file lock belongs to the thread that took it)."""
        loop = asyncio.get_running_loop()
        entered: asyncio.Future[None] = loop.create_future()
        finished: asyncio.Future[None] = loop.create_future()
        finished.add_done_callback(lambda f: f.cancelled() or f.exception())
        release = threading.Event()

        def settle(future: asyncio.Future[None], error: BaseException | None) -> None:
            if future.done():
                return
            if error is None:
                future.set_result(None)
            else:
                future.set_exception(error)

        def tell(future: asyncio.Future[None], error: BaseException | None) -> None:
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                loop.call_soon_threadsafe(settle, future, error)

        def hold() -> None:
            tell(entered, None)
            release.wait()

        def run() -> None:
            try:
                self._lock(self._lock_name, hold)
            except BaseException as e:
                tell(entered, e)
                tell(finished, e)
            else:
                tell(finished, None)

        threading.Thread(target=run, name="tenant-integration-refresh-lock", daemon=True).start()
        try:
            await entered
            result = await task()
        finally:
            release.set()
        await finished
        return result

    async def _load(self) -> TokenRecord | None:
        failure: TokenManagerError | None = None
        try:
            raw = await self._store(self._storage.get, self._tokens_key)
        except Exception as e:
            failure = self._load_failed(e)
        if failure is not None:
            raise failure
        return self._parse_stored(raw)

    async def _obtain(self, again: bool = False, waited: _Waited | None = None) -> str:
        self._log.debug("Refresh lock taken; reading the tokens from storage")
        unsaved = self._unsaved
        stored: TokenRecord | None
        if unsaved is not None:
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
                await asyncio.to_thread(self._drop_intent, self._own_intent)
        else:
            stored = await self._load()
        if stored is None:
            raise TokenManagerError("NOT_SIGNED_IN", "there are no tokens; sign in first")
        if not self._fresh(stored) or stored.access_token == self._rejected:
            if self._intents and stored is not self._unsaved:
                intent = await asyncio.to_thread(self._read_intent)
                if intent is not None and self._must_wait_for(intent, stored, waited):
                    raise _IntentPending(stored.id, intent)
            return await self._refresh(stored, again)
        self._current = stored
        return stored.access_token

    async def _post(
        self, path: str, body: bytes | str, headers: dict[str, str], secrets: list[str | None], attempt: int
    ) -> str:
        started = time.perf_counter()
        failure: TransientError | None = None
        # The read timeout counts only time this process ran (see _within_running_time); httpx keeps
        # the connect, write and pool timeouts.
        timeout = httpx.Timeout(self._timeout)
        try:
            response = await _within_running_time(
                self._client().post(
                    self._origin + path,
                    content=body,
                    headers=headers,
                    timeout=httpx.Timeout(connect=timeout.connect, read=None, write=timeout.write, pool=timeout.pool),
                ),
                timeout.read,
            )
        except Exception as e:
            failure = self._transport_failure(e, self._known(*secrets), attempt)
        if failure is not None:
            self._log_request(path, None, started, attempt)
            raise failure
        self._log_request(path, response.status_code, started, attempt)
        return self._answer(path, response, self._known(*secrets), attempt)

    async def _commit(self, record: TokenRecord) -> SessionInfo:
        self._current = self._unsaved = record
        failure: TokenManagerError | None = None
        try:
            await self._store(self._storage.set, self._tokens_key, serialize(record))
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
            self._retry_write_after = self._now_ms() + _UNSAVED_RETRY_MS
            self._emit("storage-failed", e)
            self._retry_write_later()
            return None

    def _write_intent(self, stored: TokenRecord) -> _Intent | None:
        """:meth:`TokenManager._write_intent` (storage I/O, run in a worker thread)."""
        if not self._intents:
            return None
        if not self._still_held():
            raise _LockLost
        intent = self._make_intent(stored)
        try:
            self._storage.set(self._intent_key, intent.serialize())
        except Exception:
            self._log.warning("The refresh intent could not be stored; refreshing under the lock alone")
            return None
        self._own_intent = intent
        return intent

    def _check_before_sending(self, stored: TokenRecord, intent: _Intent | None) -> TokenRecord | None:
        """:meth:`TokenManager._check_before_sending` (storage I/O, run in a worker thread)."""
        if stored is not self._unsaved:
            try:
                raw = self._storage.get(self._tokens_key)
            except Exception as e:
                self._drop_intent(intent)
                raise self._load_failed(e) from None
            try:
                latest = self._parse_stored(raw)
            except TokenManagerError:
                self._drop_intent(intent)
                raise
            if latest is None or latest.id != stored.id:
                self._drop_intent(intent)
                self._log.info("The stored tokens changed before the refresh left; using them")
                return latest
        if not self._still_held():
            self._drop_intent(intent)
            raise _LockLost
        return stored

    async def _refresh(self, stored: TokenRecord, again: bool) -> str:
        generation = self._generation
        intent = await asyncio.to_thread(self._write_intent, stored)
        self._log.info("Refresh started")
        body = {"grant_type": "refresh_token", "refresh_token": stored.refresh_token, "client_id": self._client_id}
        secrets: list[str | None] = [stored.access_token, stored.refresh_token]
        attempt = 1
        while True:
            try:
                if self._intents:
                    checked = await asyncio.to_thread(self._check_before_sending, stored, intent)
                    if checked is not stored:
                        return await self._obtain(again)
                text = await self._post("/oauth/token", _json(body), _TOKEN_HEADERS, secrets, attempt)
                record = self._record(text, stored)
                break
            except TransientError as e:
                delay = self._retry_wait(e, attempt)
                if delay is None:
                    await asyncio.to_thread(self._drop_intent, intent)
                    raise
                await asyncio.sleep(delay)
                attempt += 1
            except OAuthResponseError as e:
                await asyncio.to_thread(self._drop_intent, intent)
                if e.error != "invalid_grant":
                    raise
                return await self._after_invalid_grant(e, stored, again, generation)
            except TokenManagerError:
                await asyncio.to_thread(self._drop_intent, intent)
                raise
        if generation != self._generation:
            await asyncio.to_thread(self._drop_intent, intent)
            raise TokenManagerError("NOT_SIGNED_IN", "signed in or out while the refresh ran; its tokens are dropped")
        info = await self._commit_or_report(record)
        if info is not None:
            await asyncio.to_thread(self._drop_intent, intent)
            self._log.info("Refresh finished; the access token expires at %s", info.expires_at)
            self._emit("tokens-refreshed", info)
        else:
            self._log.warning("Refresh finished, but the tokens could not be stored; the write is retried later")
        return record.access_token

    async def _after_invalid_grant(
        self, error: OAuthResponseError, stored: TokenRecord, again: bool, generation: int
    ) -> str:
        latest: TokenRecord | None = None
        if not again:
            try:
                latest = await self._load()
            except TokenManagerError as read_error:
                if read_error.code != "NOT_SIGNED_IN":
                    raise
        if latest is not None and latest.refresh_token != stored.refresh_token:
            return await self._obtain(again=True)
        ended = self._session_ended(error)
        if generation == self._generation:
            self._log.warning("Session ended (invalid_grant)")
            with contextlib.suppress(TokenManagerError):
                await self._clear()
            self._emit("session-ended", ended)
        raise ended

    async def _clear(self) -> None:
        self._generation += 1
        self._current = self._unsaved = None
        failure: TokenManagerError | None = None
        try:
            await self._store(self._storage.delete, self._tokens_key)
        except Exception as e:
            failure = self._storage_failed(e)
        if failure is not None:
            raise failure

    # -- session -----------------------------------------------------------------------------------

    async def is_signed_in(self) -> bool:
        """:meth:`TokenManager.is_signed_in` on asyncio (the storage read in a worker thread). See RFC 6749 §6."""
        return await self.get_session() is not None

    async def get_session(self) -> SessionInfo | None:
        """:meth:`TokenManager.get_session` on asyncio. See RFC 6749 §5.1."""
        if self._unsaved is not None:
            return self._info(self._unsaved)
        try:
            record = await self._load()
        except TokenManagerError as e:
            if e.code == "NOT_SIGNED_IN":
                return None
            raise
        return None if record is None else self._info(record)

    async def revoke(self) -> None:
        """:meth:`TokenManager.revoke` on asyncio. See RFC 7009 §2.1, §2.2."""
        try:
            token = await self.get_access_token()
        except TokenManagerError as e:
            if e.code in ("NOT_SIGNED_IN", "SESSION_ENDED"):
                await self.sign_out()
                return
            raise
        await self._post("/oauth/revoke", self._revoke_body(token), _REVOKE_HEADERS, [token], 1)
        await self._clear()
        self._log.info("Revoked")
        self._emit("revoked", None)
        self._emit("signed-out", SignedOut(revoked=True))

    async def sign_out(self) -> None:
        """:meth:`TokenManager.sign_out` on asyncio. See RFC 6749 §10.3."""
        await self._clear()
        self._emit("signed-out", SignedOut(revoked=False))

    async def aclose(self) -> None:
        """Closes the HTTP connections (and the ``transport`` given)."""
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def __aenter__(self) -> AsyncTokenManager:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"AsyncTokenManager(base_url={self._origin!r}, client_id={self._client_id!r})"
