"""The token manager's rules for a paused lock holder (issue 21), in one process: the refresh intent in
the TypeScript manager's format, honoured until this process has itself watched it for ``intent_wait``
with the storage answering (decision D1: a failed read or a pause ends a watch, the intent's age is not
used); nothing sent under a lock found lost or over a record that changed. The same rules across real
processes, signals and outages are the repository's conformance scenarios
(spec/conformance/scenarios/holder-*.yaml, *-outage-past-intent-wait.yaml).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # no stubs in the pinned venv

from fake_tenant import BASE_URL, CLIENT_ID, LIFETIME, REDIRECT_URI, Clock, FakeTenant, manager_of, signed_in_to
from tenant_integration import AsyncTokenManager, TokenManager
from tenant_integration._refresh_intent import WATCH_GAP, Intent, Watch, beat_interval, must_wait_for, watch_intent
from tenant_integration._token_record import TokenRecord
from tenant_integration.storage.file import FileStorage
from tenant_integration.token_errors import TokenManagerError, TransientError

T = TypeVar("T")
INTENT_SCHEMA = Path(__file__).resolve().parents[3] / "spec" / "token-store" / "intent-record.schema.json"
TOKENS = f"tenant-integration:{BASE_URL}:{CLIENT_ID}:tokens"
INTENT = f"tenant-integration:{BASE_URL}:{CLIENT_ID}:intent"


@pytest.fixture
def tenant() -> FakeTenant:
    return FakeTenant()


@pytest.fixture
def clock() -> Clock:
    return Clock()


def make(tenant: FakeTenant, clock: Clock, storage: Any, **options: Any) -> TokenManager:
    return manager_of(tenant, now=clock, storage=storage, **options)


def signed_in(tenant: FakeTenant, clock: Clock, storage: Any, **options: Any) -> TokenManager:
    return signed_in_to(tenant, now=clock, storage=storage, **options)


def refresh_token_of(storage: FileStorage) -> str:
    raw = storage.get(TOKENS)
    assert raw is not None
    token: str = json.loads(raw)["refresh_token"]
    return token


def intent_on(storage: FileStorage, *, pid: int, since_ms: float, holder: str = "ts-holder") -> str:
    """An intent as the TypeScript manager writes it, on the stored refresh token."""
    fingerprint = hashlib.sha256(refresh_token_of(storage).encode()).hexdigest()
    raw = json.dumps(
        {
            "fingerprint": fingerprint,
            "holder": holder,
            "since": round(since_ms),
            "pid": pid,
            "host": socket.gethostname(),
        },
        separators=(",", ":"),
    )
    storage.set(INTENT, raw)
    return raw


def exited_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_a_refresh_stores_its_intent_in_the_typescript_format_before_its_request_leaves_and_deletes_it_once_stored(
    tenant: FakeTenant, clock: Clock, tmp_path: Path
) -> None:
    storage = FileStorage(tmp_path / "tokens.json")
    manager = signed_in(tenant, clock, storage)
    old_refresh_token = refresh_token_of(storage)
    clock.advance(LIFETIME + 1)
    tenant.hold = threading.Event()
    worker = threading.Thread(target=manager.get_access_token)
    worker.start()
    try:
        assert tenant.held.wait(timeout=30)
        raw = storage.get(INTENT)
    finally:
        tenant.hold.set()
        worker.join()

    assert raw is not None
    intent = json.loads(raw)
    assert list(intent) == ["fingerprint", "holder", "since", "pid", "host"]
    assert intent["fingerprint"] == hashlib.sha256(old_refresh_token.encode()).hexdigest()
    assert old_refresh_token not in raw
    assert (intent["pid"], intent["host"], intent["since"]) == (
        os.getpid(),
        socket.gethostname(),
        round(clock() * 1000),
    )
    assert raw == json.dumps(intent, separators=(",", ":"))
    assert [e.message for e in Draft202012Validator(json.loads(INTENT_SCHEMA.read_text())).iter_errors(intent)] == []
    assert storage.get(INTENT) is None
    assert tenant.refreshes == 1


def test_a_live_intent_of_another_process_on_the_same_refresh_token_is_waited_for_and_its_refresh_used(
    tenant: FakeTenant, clock: Clock, tmp_path: Path
) -> None:
    path = tmp_path / "tokens.json"
    storage = FileStorage(path)
    waiter = signed_in(tenant, clock, storage)
    clock.advance(LIFETIME + 1)
    # The holder: alive on this host (this test's parent process), its refresh in flight.
    intent_on(storage, pid=os.getppid(), since_ms=clock() * 1000)
    outcome: list[str] = []
    worker = threading.Thread(target=lambda: outcome.append(waiter.get_access_token()))
    worker.start()
    # The holder's refresh lands: another manager on the file, told not to wait, refreshes and stores it.
    other = make(tenant, clock, FileStorage(path), intent_wait=0)
    token = other.get_access_token()
    worker.join(timeout=30)

    assert outcome == [token]
    assert tenant.refreshes == 1


def test_after_intent_wait_the_token_is_presented_with_a_warning_saying_what_may_follow(
    tenant: FakeTenant, clock: Clock, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    storage = FileStorage(tmp_path / "tokens.json")
    manager = signed_in(tenant, clock, storage, intent_wait=0.2)
    clock.advance(LIFETIME + 1)
    intent_on(storage, pid=os.getppid(), since_ms=clock() * 1000)

    with caplog.at_level(logging.WARNING, logger="tenant_integration.token_manager"):
        manager.get_access_token()

    assert tenant.refreshes == 1
    assert any(
        "was not stored while this process watched it for intent_wait (0.2 s) with the storage answering (the "
        "intent is 0 s old); presenting the token (if that refresh had reached the tenant, the tenant ends the "
        "session)" in r.getMessage()
        for r in caplog.records
    )
    # Replaced by this manager's own intent before its request, deleted once its tokens were stored.
    assert storage.get(INTENT) is None


class Outage:
    """A FileStorage whose every read and write fails while ``down`` is set (a network disk, a Redis)."""

    def __init__(self, inner: FileStorage) -> None:
        self._inner = inner
        self.lock = inner.lock
        self.down = False

    def _check(self) -> None:
        if self.down:
            raise OSError("the storage does not answer")

    def get(self, key: str) -> str | None:
        self._check()
        return self._inner.get(key)

    def set(self, key: str, value: str) -> None:
        self._check()
        self._inner.set(key, value)

    def delete(self, key: str) -> None:
        self._check()
        self._inner.delete(key)


def waiting(manager: TokenManager) -> tuple[threading.Thread, list[object]]:
    """``manager.get_access_token()`` in a thread of its own; the list gets its token or its error."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(manager.get_access_token())
        except Exception as e:
            outcome.append(e)

    worker = threading.Thread(target=run)
    worker.start()
    return worker, outcome


def test_a_live_intent_is_waited_for_however_old_it_is_its_since_is_not_used(
    tenant: FakeTenant, clock: Clock, tmp_path: Path
) -> None:
    # Written an hour ago (an outage of an hour, say) by a holder that lives: this test's parent process.
    path = tmp_path / "tokens.json"
    storage = FileStorage(path)
    waiter = signed_in(tenant, clock, storage, intent_wait=5)
    clock.advance(LIFETIME + 1)
    intent_on(storage, pid=os.getppid(), since_ms=clock() * 1000 - 3_600_000)
    worker, outcome = waiting(waiter)
    time.sleep(0.5)
    assert tenant.refreshes == 0
    # The holder's refresh lands (another manager stands for it), and the waiter uses it.
    token = make(tenant, clock, FileStorage(path), intent_wait=0).get_access_token()
    worker.join(timeout=30)

    assert outcome == [token]
    assert tenant.refreshes == 1


def test_a_failed_read_ends_the_watch_so_an_outage_past_intent_wait_is_waited_for_anew(
    tenant: FakeTenant, clock: Clock, tmp_path: Path
) -> None:
    storage = Outage(FileStorage(tmp_path / "tokens.json"))
    waiter = signed_in(tenant, clock, storage, intent_wait=0.8)
    clock.advance(LIFETIME + 1)
    intent_on(storage._inner, pid=os.getppid(), since_ms=clock() * 1000)
    worker, outcome = waiting(waiter)
    time.sleep(0.3)
    storage.down = True
    worker.join(timeout=30)
    assert [type(e) for e in outcome] == [TokenManagerError]
    assert getattr(outcome[0], "code", None) == "STORAGE_FAILED"
    # The storage answers again after longer than intent_wait; the holder still lives, its intent stays.
    clock.advance(5)
    storage.down = False
    worker, outcome = waiting(waiter)
    time.sleep(0.5)
    # Watched anew from the first read after the outage: not presented at once, nor at 0.8 s from the first.
    assert tenant.refreshes == 0
    worker.join(timeout=30)
    assert tenant.refreshes == 1


def test_a_pause_of_the_waiter_ends_the_watch_reads_more_than_a_second_apart_are_two_watches(
    tenant: FakeTenant, clock: Clock, tmp_path: Path
) -> None:
    storage = FileStorage(tmp_path / "tokens.json")
    waiter = signed_in(tenant, clock, storage, intent_wait=1.5)
    clock.advance(LIFETIME + 1)
    intent_on(storage, pid=os.getppid(), since_ms=clock() * 1000)
    worker, _ = waiting(waiter)
    time.sleep(0.3)
    # This process stopped for 1.3 s (SIGSTOP, resumed by a helper), as a suspended laptop is.
    subprocess.Popen(["sh", "-c", f"sleep 1.3; kill -CONT {os.getpid()}"])
    os.kill(os.getpid(), signal.SIGSTOP)
    resumed = time.monotonic()
    time.sleep(1.0)
    # 2.3 s after the first read, 1 s after the pause: the first watch ended with the pause.
    assert tenant.refreshes == 0
    worker.join(timeout=30)
    assert tenant.refreshes == 1
    assert time.monotonic() - resumed >= 1.5


def intent(holder: str = "h") -> Intent:
    return Intent(hashlib.sha256(b"rt").hexdigest(), holder, 0, 1, "elsewhere")


def test_a_watch_goes_on_with_reads_at_most_watch_gap_apart_and_starts_anew_after_a_gap_or_for_another_holder() -> None:
    first = watch_intent(None, intent(), now=10.0)
    assert (first.since, first.last) == (10.0, 10.0)
    going_on = watch_intent(first, intent(), now=10.0 + WATCH_GAP)
    assert going_on is first
    assert going_on.watched() == WATCH_GAP
    late = 11.0 + 2 * WATCH_GAP
    assert watch_intent(first, intent(), now=late) == Watch("h", late, late, 0)
    assert watch_intent(first, intent("other"), now=11.5) == Watch("other", 11.5, 11.5, 0)


def test_an_intent_is_given_up_only_once_watched_for_intent_wait_never_by_its_age() -> None:
    record = TokenRecord("at", "rt", "Bearer", 900, None, 0, "r", "s", 0)

    def ask(watch: Watch, now_ms: float) -> bool:
        return must_wait_for(
            intent(), record, own=None, watch=watch, now_ms=now_ms, intent_wait=20, log=logging.getLogger("test")
        )

    # Watched 19.9 s of 20, the intent an hour old: still waited for.
    assert ask(Watch("h", 0, 19.9), now_ms=3_600_000) is True
    assert ask(Watch("h", 0, 20), now_ms=0) is False
    # A watch of another holder says nothing about this one.
    assert ask(Watch("other", 0, 60), now_ms=0) is True


def test_an_intent_whose_holder_has_exited_on_this_host_is_not_waited_for(
    tenant: FakeTenant, clock: Clock, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    storage = FileStorage(tmp_path / "tokens.json")
    manager = signed_in(tenant, clock, storage, intent_wait=600)
    clock.advance(LIFETIME + 1)
    pid = exited_pid()
    intent_on(storage, pid=pid, since_ms=clock() * 1000)

    with caplog.at_level(logging.WARNING, logger="tenant_integration.token_manager"):
        manager.get_access_token()

    assert tenant.refreshes == 1
    assert any(
        f"left by process {pid} on {socket.gethostname()}, which has exited" in r.getMessage() for r in caplog.records
    )


class FlakyHeldLock:
    """A lock that runs tasks in turn and answers ``is_held`` False the first ``lost`` times (a holder
    whose lock was taken over while it was paused)."""

    def __init__(self, lost: int) -> None:
        self._mutex = threading.Lock()
        self.lost = lost
        self.asked = 0

    def __call__(self, name: str, task: Callable[[], T]) -> T:
        with self._mutex:
            return task()

    def is_held(self, name: str) -> bool:
        self.asked += 1
        return self.asked > self.lost


def test_a_lock_found_lost_before_the_refresh_leaves_sends_nothing_and_is_taken_again(
    tenant: FakeTenant, clock: Clock, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lock = FlakyHeldLock(lost=1)
    storage = FileStorage(tmp_path / "tokens.json")
    manager = signed_in(tenant, clock, storage, lock=lock)
    clock.advance(LIFETIME + 1)

    with caplog.at_level(logging.WARNING, logger="tenant_integration.token_manager"):
        manager.get_access_token()

    assert tenant.refreshes == 1
    assert any(
        "taken over while this process held it (paused?); nothing was sent" in r.getMessage() for r in caplog.records
    )


def test_a_lock_lost_every_time_ends_in_a_transient_error_with_nothing_sent(
    tenant: FakeTenant, clock: Clock, tmp_path: Path
) -> None:
    storage = FileStorage(tmp_path / "tokens.json")
    manager = signed_in(tenant, clock, storage, lock=FlakyHeldLock(lost=100))
    clock.advance(LIFETIME + 1)

    with pytest.raises(TransientError) as caught:
        manager.get_access_token()

    assert caught.value.code == "TRANSIENT"
    assert tenant.refreshes == 0


class StoringWhileIntentIsWritten:
    """A FileStorage through which, as the intent is written, another process stores a refresh."""

    def __init__(self, inner: FileStorage, other: Callable[[], object]) -> None:
        self._inner = inner
        self._other = other
        self.lock = inner.lock

    def get(self, key: str) -> str | None:
        return self._inner.get(key)

    def set(self, key: str, value: str) -> None:
        if key == INTENT:
            self._other()
        self._inner.set(key, value)

    def delete(self, key: str) -> None:
        self._inner.delete(key)


def test_a_record_stored_by_another_process_before_the_refresh_leaves_is_used_and_nothing_is_sent(
    tenant: FakeTenant, clock: Clock, tmp_path: Path
) -> None:
    path = tmp_path / "tokens.json"
    signed_in(tenant, clock, FileStorage(path))
    clock.advance(LIFETIME + 1)
    # The other process locks nothing this test holds (it stands for a process that took the lock over).
    other = make(tenant, clock, FileStorage(path), lock=lambda name, task: task())
    tokens: list[str] = []
    manager = make(
        tenant, clock, StoringWhileIntentIsWritten(FileStorage(path), lambda: tokens.append(other.get_access_token()))
    )

    token = manager.get_access_token()

    assert tokens == [token]
    assert tenant.refreshes == 1


class FailingWrites:
    """A FileStorage whose writes of the keys in ``failing`` fail (a storage fault for those keys alone)."""

    def __init__(self, inner: FileStorage, failing: set[str]) -> None:
        self._inner = inner
        self.failing = failing
        self.lock = inner.lock

    def get(self, key: str) -> str | None:
        return self._inner.get(key)

    def set(self, key: str, value: str) -> None:
        if key in self.failing:
            raise OSError(28, "No space left on device")
        self._inner.set(key, value)

    def delete(self, key: str) -> None:
        self._inner.delete(key)


NO_INTENT_MESSAGE = (
    "STORAGE_FAILED: the refresh intent could not be written ([Errno 28] No space left on device), so the "
    "refresh was not sent; the stored tokens are unchanged and the next call tries again"
)


def test_no_intent_no_send_an_unwritable_intent_fails_the_refresh_with_storage_failed_and_nothing_is_sent(
    tenant: FakeTenant, clock: Clock, tmp_path: Path
) -> None:
    """Decision D6: the lock is released, nothing reaches the tenant, the stored tokens are untouched,
    and the next call tries again."""
    inner = FileStorage(tmp_path / "tokens.json")
    storage = FailingWrites(inner, {INTENT})
    manager = signed_in(tenant, clock, storage)
    stored = inner.get(TOKENS)
    clock.advance(LIFETIME + 1)
    with pytest.raises(TokenManagerError) as caught:
        manager.get_access_token()
    assert caught.value.code == "STORAGE_FAILED"
    assert str(caught.value) == NO_INTENT_MESSAGE
    assert str(caught.value.cause) == "OSError: [Errno 28] No space left on device"
    assert tenant.refreshes == 0
    assert inner.get(TOKENS) == stored
    assert inner.lock("refresh", lambda: "taken") == "taken"
    storage.failing.clear()
    manager.get_access_token()
    assert tenant.refreshes == 1


async def test_no_intent_no_send_in_the_async_manager_too(tenant: FakeTenant, clock: Clock, tmp_path: Path) -> None:
    inner = FileStorage(tmp_path / "tokens.json")
    signed_in(tenant, clock, inner)
    storage = FailingWrites(inner, {INTENT})
    manager = AsyncTokenManager(
        BASE_URL,
        CLIENT_ID,
        REDIRECT_URI,
        ["profile:read"],
        now=clock,
        storage=storage,
        transport=tenant.async_transport,
    )
    clock.advance(LIFETIME + 1)
    with pytest.raises(TokenManagerError) as caught:
        await manager.get_access_token()
    assert str(caught.value) == NO_INTENT_MESSAGE
    assert tenant.refreshes == 0


def test_the_intent_and_then_the_tokens_unwritable_another_process_never_presents_a_rotated_away_token(
    tenant: FakeTenant, clock: Clock, tmp_path: Path
) -> None:
    inner = FileStorage(tmp_path / "tokens.json")
    storage = FailingWrites(inner, set())
    first = signed_in(tenant, clock, storage)
    storage.failing.update({INTENT, TOKENS})
    clock.advance(LIFETIME + 1)
    with pytest.raises(TokenManagerError):
        first.get_access_token()
    # The first process gives up (or dies); the storage answers again; another process calls.
    storage.failing.clear()
    make(tenant, clock, FileStorage(tmp_path / "tokens.json")).get_access_token()
    presented = [sent.body["refresh_token"] for sent in tenant.grants("refresh_token")]
    assert len(presented) == len(set(presented)) == 1


# Intent beats (D7; spec/token-store/README.md, "Paused processes"): a holder that runs rewrites its
# intent with a new since every min(1 s, intent_wait / 4) until it deletes it, never over another
# holder's intent; a waiter's watch restarts at each beat.


def test_a_beat_of_the_holder_restarts_the_waiters_watch() -> None:
    def ask(watch: Watch, beaten: Intent) -> bool:
        return must_wait_for(
            beaten,
            TokenRecord("at", "rt", "Bearer", 900, None, 0, "r", "s", 0),
            own=None,
            watch=watch,
            now_ms=0,
            intent_wait=1.0,
            log=logging.getLogger("test"),
        )

    first = watch_intent(None, intent(), now=10.0)
    beaten = Intent(intent().fingerprint, "h", 1, 1, "elsewhere")  # the same holder, a new since
    watch = watch_intent(first, beaten, now=10.5)
    assert watch.watched() == 0
    # 1.2 s after the first read, 0.7 s after the beat: still waited for.
    assert ask(watch_intent(watch, beaten, now=11.2), beaten) is True
    assert ask(watch_intent(watch, beaten, now=11.5), beaten) is False


class CountingStorage(FileStorage):
    """A token file that counts the writes of the intent; ``after_intent_write`` runs after each (in the
    writer's thread, so nothing else of the writer's comes in between)."""

    intent_writes = 0
    after_intent_write: Callable[[], None] | None = None

    def set(self, key: str, value: str) -> None:
        super().set(key, value)
        if key == INTENT:
            self.intent_writes += 1
            if self.after_intent_write is not None:
                self.after_intent_write()


def held_refresh(
    tenant: FakeTenant, clock: Clock, storage: FileStorage
) -> tuple[TokenManager, threading.Thread, list[str], threading.Event]:
    """A refresh (intent_wait 0.2 s: a beat every 50 ms) whose request the tenant holds until
    ``tenant.hold`` is set; returns, once the request reached the tenant, its manager, the thread
    that waits for it, the token it got (once released) and the release."""
    manager = signed_in(tenant, clock, storage, intent_wait=0.2)
    clock.advance(LIFETIME + 1)
    release = tenant.hold = threading.Event()
    outcome: list[str] = []
    worker = threading.Thread(target=lambda: outcome.append(manager.get_access_token()))
    worker.start()
    assert tenant.held.wait(timeout=10)
    return manager, worker, outcome, release


def test_the_holder_beats_while_the_tenant_is_slow_and_never_over_another_holders_intent(
    tenant: FakeTenant, clock: Clock, tmp_path: Path
) -> None:
    storage = CountingStorage(tmp_path / "tokens.json")
    _, worker, outcome, release = held_refresh(tenant, clock, storage)
    try:
        first = Intent.parse(storage.get(INTENT))
        time.sleep(0.3)  # six beats
        beaten = Intent.parse(storage.get(INTENT))
        assert first is not None
        assert beaten is not None
        assert beaten.since > first.since
        assert (beaten.fingerprint, beaten.holder, beaten.pid, beaten.host) == (
            first.fingerprint,
            first.holder,
            first.pid,
            first.host,
        )
        # Right after a beat, another process took the lock and stored its own intent: no beat may
        # overwrite it.
        other = Intent(first.fingerprint, "the-other-refresh", 1, 4242, "another-host.invalid").serialize()
        replaced = threading.Event()

        def replace() -> None:
            storage.after_intent_write = None
            FileStorage.set(storage, INTENT, other)
            replaced.set()

        storage.after_intent_write = replace
        assert replaced.wait(timeout=5)
        time.sleep(0.3)
        assert storage.get(INTENT) == other
    finally:
        release.set()
        worker.join(timeout=30)
    assert len(outcome) == 1


def test_beats_stop_when_the_intent_is_deleted(tenant: FakeTenant, clock: Clock, tmp_path: Path) -> None:
    storage = CountingStorage(tmp_path / "tokens.json")
    _, worker, outcome, release = held_refresh(tenant, clock, storage)
    release.set()
    worker.join(timeout=30)
    assert len(outcome) == 1
    assert storage.get(INTENT) is None
    writes = storage.intent_writes
    time.sleep(0.3)  # six beat intervals
    assert storage.get(INTENT) is None
    assert storage.intent_writes == writes


class HangingBeats(CountingStorage):
    """A token file whose commands from the beat thread hang (a Redis node that stopped answering) once
    ``hang`` is set: the read is done, then its answer held back until ``unhang`` is set."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.hang = threading.Event()
        self.hung = threading.Event()
        self.unhang = threading.Event()

    def get(self, key: str) -> str | None:
        value = super().get(key)
        if self.hang.is_set() and threading.current_thread().name == "intent-beat":
            self.hung.set()
            self.unhang.wait(timeout=30)
        return value


def test_the_end_of_a_refresh_never_waits_for_a_beat_whose_storage_command_hangs(
    tenant: FakeTenant, clock: Clock, tmp_path: Path
) -> None:
    """A hung storage command bounds a call by the storage's own command timeout, never by a beat's:
    the intent is deleted while a beat's read still hangs, and that beat, once answered with the
    intent it read before, writes nothing."""
    storage = HangingBeats(tmp_path / "tokens.json")
    _, worker, outcome, release = held_refresh(tenant, clock, storage)
    try:
        storage.hang.set()
        assert storage.hung.wait(timeout=10)
        release.set()
        worker.join(timeout=10)
        assert not worker.is_alive()
        assert len(outcome) == 1
        assert storage.get(INTENT) is None
        writes = storage.intent_writes
    finally:
        storage.unhang.set()
        release.set()
        worker.join(timeout=30)
    time.sleep(0.3)  # the abandoned beat's read answers: six beat intervals
    assert storage.get(INTENT) is None
    assert storage.intent_writes == writes


@pytest.mark.parametrize("end", ["close", "sign_out"])
def test_a_closed_or_signed_out_manager_stops_beating_and_leaves_its_intent_to_the_waiters_watch(
    tenant: FakeTenant, clock: Clock, tmp_path: Path, end: str
) -> None:
    """Closing the manager (or signing out) stops its beats and its background retries: its intent,
    left in the storage, is given up by a waiter once watched for intent_wait without a beat (D1)."""
    storage = CountingStorage(tmp_path / "tokens.json")
    manager, worker, _, release = held_refresh(tenant, clock, storage)
    try:
        deadline = time.monotonic() + 10
        while storage.intent_writes < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert storage.intent_writes >= 2  # it beats
        getattr(manager, end)()
        writes = storage.intent_writes
        left = storage.get(INTENT)
        time.sleep(0.3)  # six beat intervals
        assert storage.intent_writes == writes
        assert storage.get(INTENT) == left
    finally:
        release.set()
        worker.join(timeout=30)


def test_a_holder_beats_every_second_or_a_quarter_of_a_shorter_intent_wait_and_at_most_every_millisecond() -> None:
    """Decision D7: the beat interval of every kit, so that a tiny intent wait never makes a busy loop."""
    assert beat_interval(60.0) == 1.0
    assert beat_interval(2.0) == 0.5
    assert beat_interval(0.000001) == 0.001
