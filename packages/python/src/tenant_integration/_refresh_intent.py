"""The refresh intent record and its rules (``spec/token-store/README.md``, "Paused processes", issue 21).

Right before its refresh request leaves, a manager stores an intent under ``…:intent``: the SHA-256 of
the refresh token it presents, a random id of this refresh (``holder``), since when, and its pid and
host. Another process about to present the same refresh token waits (outside the lock) until that
refresh is stored, its holder is seen to have exited, or it has itself watched the intent for
``intent_wait`` without a break (decision D1): a process paused mid-refresh never makes another present
a refresh token that was already rotated away, and an outage of the storage never counts as waiting
(a failed read ends a watch, as do two reads more than :data:`WATCH_GAP` apart). The intent's
``since`` is logged, never used to give up on it: its age measures an outage as well as the holder.

The decisions are pure (:func:`watch_intent`, :func:`must_wait_for`, :func:`settled`); the storage
functions are blocking (the async manager runs them in a worker thread). The TypeScript kit's
``refresh-intent.ts`` speaks the same record and the same rule.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ._process_identity import is_gone, this_host
from ._session_id import Log
from ._token_record import TokenRecord, parse_json
from .state import create_state
from .storage.base import TokenStorage

__all__ = [
    "INTENT_POLL",
    "WATCH_GAP",
    "Intent",
    "IntentBeat",
    "IntentPending",
    "Watch",
    "beat_intent",
    "beat_interval",
    "drop_intent",
    "fingerprint",
    "intent_unwritable",
    "is_storage_failure",
    "must_wait_for",
    "new_intent",
    "settled",
    "watch_intent",
    "write_intent",
]

# How often a process that honours another's refresh intent reads the storage again (seconds).
INTENT_POLL = 0.05

#: How far apart (monotonic seconds) two successful reads of an intent may be and still belong to one
#: watch (D1): more means this process was paused, or was not asking.
WATCH_GAP = 1.0


@dataclass
class Watch:
    """This process's watch of one intent (D1): whose, since when it has read it without a break, and
    when last (monotonic seconds); ``beat`` is the intent's own ``since`` as last read, whose change
    (the holder beat, D7) restarts the watch."""

    holder: str
    since: float
    last: float
    beat: int | float | None = None

    def watched(self) -> float:
        """How long the intent has been watched without a break, in seconds."""
        return self.last - self.since


def watch_intent(current: Watch | None, intent: Intent, now: float | None = None) -> Watch:
    """A successful read of the storage found ``intent``: the watch of its holder goes on, or a new one
    starts from zero (another holder, no watch, the last read more than :data:`WATCH_GAP` ago, or a
    beat: the same holder with another ``since``, D7). ``since`` is only compared with the one read
    before, never with a clock."""
    now = time.monotonic() if now is None else now
    if (
        current is not None
        and current.holder == intent.holder
        and current.beat == intent.since
        and now - current.last <= WATCH_GAP
    ):
        current.last = now
        return current
    return Watch(intent.holder, now, now, intent.since)


def is_storage_failure(error: BaseException) -> bool:
    """Whether ``error`` says the storage (or its lock) could not be reached: ``STORAGE_FAILED``, or a
    file's own ``IO_FAILED``. Such a failure ends a watch (D1)."""
    return getattr(error, "code", None) in ("STORAGE_FAILED", "IO_FAILED")


def fingerprint(refresh_token: str) -> str:
    """The lowercase hex SHA-256 of a refresh token: names it in the intent without revealing it."""
    return hashlib.sha256(refresh_token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Intent:
    """The refresh intent (``intent-record.schema.json``): which refresh token (a fingerprint), which
    refresh (a random id), since when (``now()`` ms), and its holder's pid and host."""

    fingerprint: str
    holder: str
    since: int | float
    pid: int | None = None
    host: str | None = None

    def serialize(self) -> str:
        """The record as the TypeScript manager writes it: that key order, no spaces."""
        data: dict[str, object] = {"fingerprint": self.fingerprint, "holder": self.holder, "since": self.since}
        if self.pid is not None:
            data["pid"] = self.pid
        if self.host is not None:
            data["host"] = self.host
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False)

    @staticmethod
    def parse(raw: str | None) -> Intent | None:
        """The stored intent; ``None`` when absent or not an intent record."""
        data = parse_json(raw)
        fingerprint, holder, since = data.get("fingerprint"), data.get("holder"), data.get("since")
        if not isinstance(fingerprint, str) or not isinstance(holder, str):
            return None
        if isinstance(since, bool) or not isinstance(since, int | float):
            return None
        pid, host = data.get("pid"), data.get("host")
        return Intent(
            fingerprint,
            holder,
            since,
            pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
            host if isinstance(host, str) else None,
        )

    def describe(self) -> str:
        """Who holds it, for a log line: ``process <pid> on <host>``."""
        if self.pid is None:
            return "another process"
        return f"process {self.pid} on {self.host or 'an unknown host'}"

    def holder_gone(self) -> bool:
        """Whether its holder is a process of this host that has exited."""
        return self.pid is not None and self.host is not None and is_gone(self.host, self.pid)


class IntentPending(Exception):
    """Raised under the lock when another process's live refresh intent names the refresh token this
    one would present: the lock is let go, and the storage watched until that refresh is stored."""

    def __init__(self, record_id: str, intent: Intent) -> None:
        super().__init__(intent.describe())
        self.record_id = record_id
        self.intent = intent


def new_intent(stored: TokenRecord, now_ms: float) -> Intent:
    """The intent of a refresh about to present ``stored``'s refresh token."""
    return Intent(fingerprint(stored.refresh_token), create_state(), round(now_ms), os.getpid(), this_host())


def must_wait_for(
    intent: Intent | None,
    stored: TokenRecord,
    *,
    own: Intent | None,
    watch: Watch | None,
    now_ms: float,
    intent_wait: float,
    log: Log,
) -> bool:
    """Whether ``intent`` is another process's refresh with ``stored``'s refresh token, still to be
    waited for: not ``own``, its holder not known to have exited, and not yet watched by this process
    (``watch``, after the read that found it: :func:`watch_intent`) for ``intent_wait`` seconds without
    a break. Past that, the token is presented, and the log says so and why. The intent's age is only
    logged (D1)."""
    if intent is None or intent.fingerprint != fingerprint(stored.refresh_token):
        return False
    if own is not None and own.holder == intent.holder:
        return False
    if intent.holder_gone():
        log.warning(
            "The refresh intent on this refresh token was left by %s, which has exited; presenting the token "
            "(if its request had reached the tenant, the tenant ends the session)",
            intent.describe(),
        )
        return False
    if watch is not None and watch.holder == intent.holder and watch.watched() >= intent_wait:
        log.warning(
            "The refresh by %s with this refresh token was not stored while this process watched it for "
            "intent_wait (%g s) with the storage answering (the intent is %d s old); presenting the token (if "
            "that refresh had reached the tenant, the tenant ends the session)",
            intent.describe(),
            intent_wait,
            max(0, round((now_ms - intent.since) / 1000)),
        )
        return False
    return True


def settled(
    pending: IntentPending,
    watch: Watch | None,
    latest: TokenRecord | None,
    intent: Intent | None,
    *,
    intent_wait: float,
) -> bool:
    """Whether, honouring ``pending``, there is something to decide again on: another record (or none),
    the intent gone or another holder's, its holder exited, or this process has watched it (``watch``,
    after this poll's read) for ``intent_wait`` seconds without a break."""
    if latest is None or latest.id != pending.record_id:
        return True
    if intent is None or intent.holder != pending.intent.holder:
        return True
    if intent.holder_gone():
        return True
    return watch is not None and watch.holder == intent.holder and watch.watched() >= intent_wait


def write_intent(storage: TokenStorage, key: str, intent: Intent, log: Log) -> None:
    """Stores ``intent`` (step 4). No intent, no send (decision D6): a storage that fails to store it
    (any error, or a write not confirmed, such as a command timeout) raises that error, and the refresh
    is not sent: under the lock alone, a rotation whose tokens could not be written either would be
    known only to this process, and another, finding no intent, would present the rotated-away token.
    An intent the storage may still apply later is deleted again where it can be. Blocking."""
    try:
        storage.set(key, intent.serialize())
    except Exception:
        log.warning(
            "The refresh intent could not be stored; the refresh is not sent (no intent, no send), and the next "
            "call tries again"
        )
        drop_intent(storage, key, intent)
        raise


def intent_unwritable(cause: BaseException) -> str:
    """The message of a refresh refused because its intent could not be written (D6), the same in every
    kit: ``STORAGE_FAILED: the refresh intent could not be written (<why>), so the refresh was not sent;
    the stored tokens are unchanged and the next call tries again``, where ``<why>`` is the cause's own
    message, as every kit words it: without the class name of a scrubbed stand-in or the code of an SDK
    error (both stay on ``cause``)."""
    why = str(cause)
    for label in (getattr(cause, "kind", None), getattr(cause, "code", None)):
        if isinstance(label, str) and why.startswith(label + ": "):
            why = why[len(label) + 2 :]
    return (
        f"the refresh intent could not be written ({why}), so the refresh was not sent; the stored tokens are "
        "unchanged and the next call tries again"
    )


def drop_intent(storage: TokenStorage, key: str, intent: Intent) -> None:
    """Deletes the stored intent if it is still ``intent`` (another holder's is left alone). A failure
    leaves it behind: it holds the others back for at most ``intent_wait``. Blocking."""
    with contextlib.suppress(Exception):
        current = Intent.parse(storage.get(key))
        if current is not None and current.holder == intent.holder:
            storage.delete(key)


def beat_interval(intent_wait: float) -> float:
    """How often a holder rewrites its intent (D7): every second, or a quarter of ``intent_wait`` when
    that is shorter, and at least every millisecond, as every kit (seconds)."""
    return max(0.001, min(1.0, intent_wait / 4))


def beat_intent(
    storage: TokenStorage,
    key: str,
    intent: Intent,
    now_ms: float,
    log: Log,
    beats: IntentBeat | None = None,
) -> None:
    """One beat (D7): rewrites the stored intent with a new ``since`` (``max(now_ms, stored since +
    1)``, every other field unchanged) only while it is still ``intent``'s holder's: read, compare the
    holder, write, as :func:`drop_intent` does. Another holder's intent is never overwritten; a beat
    that fails or finds another holder is no error (a debug line; the next beat tries again). The write
    goes through ``beats`` (:meth:`IntentBeat.write`): none is sent once they are stopped, so a beat
    whose read answers after its intent was dropped (the read hung) writes nothing. Blocking."""
    try:
        current = Intent.parse(storage.get(key))
        if current is None or current.holder != intent.holder:
            log.debug("The stored refresh intent is no longer this process's; it is not beaten")
            return
        since = max(round(now_ms), current.since + 1)
        record = Intent(intent.fingerprint, intent.holder, since, intent.pid, intent.host)
        if beats is None:
            storage.set(key, record.serialize())
        elif not beats.write(lambda: storage.set(key, record.serialize())):
            log.debug("The refresh intent was dropped while its beat read it; it is not beaten")
    except Exception as e:  # a failed beat is no error: the next one tries again
        log.debug("The beat of the refresh intent failed (%s); the next beat tries again", type(e).__name__)


class IntentBeat:
    """This process's beats of its own stored intent (D7; ``spec/token-store/README.md``, "Paused
    processes"): from the moment the intent is stored until it is deleted, a daemon thread rewrites it
    every :func:`beat_interval` (monotonic) with a new ``since``, so that a waiter, whose watch restarts
    at each beat, waits for a holder that runs however slowly the tenant answers. The beats go on while
    the request is in flight, during retry pauses and while unsaved tokens are written again; one
    thread serves the sync and the async manager alike (the storage calls are blocking). ``beat`` is
    given this object, whose :meth:`write` its write goes through."""

    def __init__(self, beat: Callable[[IntentBeat], None], interval: float) -> None:
        self._stop = threading.Event()
        # Held while a beat's write is sent: stop() waits for that write alone, never for a read.
        self._writing = threading.Lock()
        self._thread = threading.Thread(target=self._run, args=(beat, interval), name="intent-beat", daemon=True)
        self._thread.start()

    def _run(self, beat: Callable[[IntentBeat], None], interval: float) -> None:
        while not self._stop.wait(interval):
            beat(self)

    def write(self, send: Callable[[], None]) -> bool:
        """Sends a beat's write (``send``) unless the beats are stopped; whether it was sent."""
        with self._writing:
            if self._stop.is_set():
                return False
            send()
            return True

    def stop(self) -> None:
        """Stops the beats: once it returns, no beat's write is under way or will be sent. A beat whose
        read is under way is not waited for (its storage command may hang for the storage's whole
        command timeout: a Redis node that stopped answering); it writes nothing once the read answers.
        A write under way is waited for, within the storage's command timeout."""
        self._stop.set()
        if self._thread is not threading.current_thread():
            with self._writing:
                pass
