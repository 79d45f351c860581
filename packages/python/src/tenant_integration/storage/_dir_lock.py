"""The cross-process lock of :class:`~tenant_integration.storage.FileStorage`: a kernel lock for Python
processes, and inside it the lock directory that the TypeScript kit's ``fileStorage`` uses.

Two parts, each for a reason:

1. ``filelock.FileLock("<base>.flock")`` (the maintained ``filelock`` library: ``flock(2)``) excludes
   the Python processes. The kernel drops it when its holder dies, even by ``SIGKILL``, so a Python
   waiter is never blocked by a dead Python holder, and there is no staleness to guess.
2. ``<base>.lock``, a directory, excludes the TypeScript processes. They take it with
   proper-lockfile (https://github.com/moxystudio/node-proper-lockfile): an atomic ``mkdir``, whose
   mtime the live holder touches every ``max(stale/4, 1 s)``; a directory older than ``stale`` is
   abandoned and taken over, through a ``<base>.lock.steal`` gate directory
   (packages/token-manager/src/node/dir-lock.ts, ``removeStale``). A TypeScript process knows only
   this directory, so a Python holder must hold it too. No Python library speaks this protocol
   (proper-lockfile is Node-only, and filelock's ``SoftFileLock`` is a file, not a directory, with
   no mtime refresh), so this part is written here, step for step as proper-lockfile and
   ``removeStale`` do it; it is the compatibility layer, not the lock Python relies on.

Every holder, Python or TypeScript, names itself in the directory's owner file ``owner``: one line of
JSON, ``{"pid":<int>,"host":"<host name>","id":"<random hex>","since":<ms since epoch>}``, the
TypeScript kit's format byte for byte (packages/token-manager/src/node/dir-lock.ts, ``OWNER_FILE``).
A reader of the directory alone (proper-lockfile) still sees the directory as the lock. The owner
decides what a waiter may do with a lock whose mtime is old: a holder on this host that is alive
(paused with ``SIGSTOP``, a suspended laptop) is never taken over, the wait ends in ``LOCK_TIMEOUT``
naming it; one that has exited (``kill(pid, 0)`` fails with ``ESRCH``) is taken over at once, however
fresh the mtime. Only without an owner file, or with a holder on another host (a network disk), does
the mtime decide, after ``stale_after``.

A Python holder killed by ``SIGKILL`` leaves its directory behind. The next Python holder (it has the
kernel lock, so it knows no Python process holds the directory) recognises it: every holder records
the directory's inode and last mtime in the ``.flock`` file while it holds it, and clears the record
on release, so a directory matching the record is a dead Python holder's and is taken over at once
(through the same steal gate). A TypeScript process cannot read the record and takes it over once it
is stale, as it would a dead TypeScript holder's.

When the lock files cannot be created at all (a read-only directory, a full disk), the task runs under
this process's own lock only, as the TypeScript kit does: the process keeps working, and the write
that follows reports the fault.

See RFC 9700 §4.14.2 (refresh token rotation: one refresh at a time).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import random
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import filelock

from .._process_identity import is_gone, this_host
from .errors import FileStorageError, LockWaitEnded

__all__ = ["CHANGE_EVERY", "OWNER_FILE", "UNTIL_EVERY", "Held", "LockOwner", "hold", "read_owner", "touch_interval"]

#: The owner file inside a lock directory (the TypeScript kit's ``OWNER_FILE``).
OWNER_FILE = "owner"

#: Errors of ``mkdir``/``open`` that mean "no lock can be made here", not "someone holds it".
_CANNOT_CREATE = frozenset({errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT})

#: Seconds between two calls of a wait's ``until`` check (issue 28): often enough that waiters stop
#: soon after another process stored fresh tokens, seldom enough that 20 waiters do not flood the disk.
UNTIL_EVERY = 0.05
#: Seconds between two looks at the guarded file (one ``stat``) while a wait with ``until`` lasts: the
#: check is asked as soon as the file was replaced (another process wrote it: fresh tokens, or its
#: refresh intent), not at its next :data:`UNTIL_EVERY`, as the TypeScript lock wakes on a change of
#: the file (``fs.watch``). A ``stat`` costs little; it is the read and parse of ``until`` that would.
CHANGE_EVERY = 0.01

_local_locks: dict[str, threading.Lock] = {}
_local_guard = threading.Lock()

#: Lock directories this process held and could not remove when it let them go (the disk did not
#: answer: a network disk, an unplugged drive), by path: the owner id it wrote. A live owner is never
#: taken over, so nobody else may remove them: this process does, once the disk answers again (a retry
#: each second, and at once before it takes the same lock again). As dir-lock.ts's ``leftBehind``.
_left_behind: dict[str, str] = {}
_left_behind_guard = threading.Lock()
#: Seconds between two tries of a lock directory left behind.
_LEFT_BEHIND_RETRY = 1.0
_left_behind_timer: threading.Timer | None = None


def errno_name(error: OSError) -> str:
    """The symbolic errno of ``error`` (``"EACCES"``), for messages that name it."""
    return errno.errorcode.get(error.errno or 0, "error")


def touch_interval(stale_after: float) -> float:
    """How often a holder touches its lock directory: a quarter of the stale time, at least 1 s (proper-lockfile's)."""
    return max(stale_after / 4, 1.0)


@dataclass(frozen=True)
class LockOwner:
    """The holder a lock directory names in its owner file: pid, host name, a random id, since (ms)."""

    pid: int
    host: str
    id: str
    since: int | float


def read_owner(lock_path: str) -> LockOwner | None:
    """The owner file of ``lock_path``; ``None`` when absent or unreadable (a holder killed between its
    ``mkdir`` and the file's write, or a writer that keeps none, such as proper-lockfile alone)."""
    try:
        with open(os.path.join(lock_path, OWNER_FILE), "rb") as handle:
            data = json.loads(handle.read(4096))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    pid, host, owner_id, since = data.get("pid"), data.get("host"), data.get("id"), data.get("since")
    if (
        isinstance(pid, int)
        and not isinstance(pid, bool)
        and isinstance(host, str)
        and isinstance(owner_id, str)
        and isinstance(since, int | float)
        and not isinstance(since, bool)
    ):
        return LockOwner(pid=pid, host=host, id=owner_id, since=since)
    return None


def _write_owner(lock_path: str) -> LockOwner | None:
    """Writes this process's owner file into the directory it just made; ``None`` when it cannot (the
    lock then works by its mtime alone, as before owner files)."""
    me = LockOwner(pid=os.getpid(), host=this_host(), id=secrets.token_hex(16), since=round(time.time() * 1000))
    text = json.dumps({"pid": me.pid, "host": me.host, "id": me.id, "since": me.since}, separators=(",", ":"))
    path = os.path.join(lock_path, OWNER_FILE)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        return None
    try:
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
    except OSError:
        # A full disk makes the file but not its content (ENOSPC). Left empty, it would keep the
        # directory from being removed on release (issue 27: every later access waited stale_after).
        with contextlib.suppress(OSError):
            os.unlink(path)
        return None
    return me


def _remove_lock(lock_path: str) -> None:
    """Removes a lock directory and its owner file (either may be gone already)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(lock_path, OWNER_FILE))
    with contextlib.suppress(FileNotFoundError):
        os.rmdir(lock_path)


def _owner_id_now(lock_path: str) -> str | None:
    """The owner id in ``lock_path``'s owner file as it is; ``None`` when absent or not a record. Raises
    the ``OSError`` of a disk that does not answer."""
    try:
        with open(os.path.join(lock_path, OWNER_FILE), "rb") as handle:
            data = json.loads(handle.read(4096))
    except FileNotFoundError:
        return None
    except ValueError:
        return None
    owner_id = data.get("id") if isinstance(data, dict) else None
    return owner_id if isinstance(owner_id, str) else None


def _remove_left_behind(lock_path: str) -> bool:
    """Removes the lock directory this process left behind at ``lock_path`` when it still names this
    process's owner id, and forgets it once it is gone or another's. Returns whether it is settled; a
    disk that still does not answer leaves it for the next try."""
    with _left_behind_guard:
        owner_id = _left_behind.get(lock_path)
    if owner_id is None:
        return True
    try:
        if _owner_id_now(lock_path) == owner_id:
            _remove_lock(lock_path)
    except OSError:
        return False
    with _left_behind_guard:
        _left_behind.pop(lock_path, None)
    return True


def _retry_left_behind() -> None:
    """Tries every lock directory left behind again in a second, until each is settled (a daemon timer)."""
    global _left_behind_timer  # one timer for the process, as dir-lock.ts's
    with _left_behind_guard:
        if _left_behind_timer is not None or not _left_behind:
            return

        def run() -> None:
            global _left_behind_timer
            with _left_behind_guard:
                _left_behind_timer = None
                paths = list(_left_behind)
            for path in paths:
                _remove_left_behind(path)
            _retry_left_behind()

        _left_behind_timer = threading.Timer(_LEFT_BEHIND_RETRY, run)
        _left_behind_timer.daemon = True
        _left_behind_timer.start()


def _leave_behind(lock_path: str, owner_id: str) -> None:
    """Remembers a lock directory this process could not remove, to remove it once the disk answers."""
    with _left_behind_guard:
        _left_behind[lock_path] = owner_id
    _retry_left_behind()


def _may_take_over(stat: os.stat_result, owner: LockOwner | None, stale_after: float) -> bool:
    """The owner decides first: gone → yes at once; alive on this host → never. Without an owner, or
    with one on another host, the mtime decides."""
    if owner is not None and is_gone(owner.host, owner.pid):
        return True
    if owner is not None and owner.host == this_host():
        return False
    return stat.st_mtime < time.time() - stale_after


def _describe_holder(lock_path: str) -> str:
    owner = read_owner(lock_path)
    if owner is None:
        return "another process"
    if owner.host != this_host():
        return f"process {owner.pid} on host {owner.host}"
    try:
        quiet = max(0, round((time.time() - os.stat(lock_path).st_mtime) * 1000))
    except OSError:
        quiet = 0
    return (
        f"process {owner.pid} on this host, which is alive but has not updated the lock for {quiet} ms "
        "(stopped or paused? it is not taken over while it lives)"
    )


def _local(path: str) -> threading.Lock:
    with _local_guard:
        return _local_locks.setdefault(path, threading.Lock())


def _file_identity(path: str) -> tuple[int, int, int, int] | None:
    """What changes when ``path`` is replaced or written (device, inode, mtime, size); ``None`` when absent."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_size)


def _acquire_until(
    acquire: Callable[[float], bool],
    deadline: float,
    until: Callable[[], bool] | None,
    lock_path: str,
    guarded: str | None = None,
) -> bool:
    """``acquire(timeout)`` until it succeeds or ``deadline`` passes (``False``); without ``until`` one
    call, with it calls of at most :data:`UNTIL_EVERY` seconds (:data:`CHANGE_EVERY` with a ``guarded``
    file), ``until`` asked every :data:`UNTIL_EVERY` seconds and as soon as ``guarded`` changed."""
    seen = _file_identity(guarded) if until is not None and guarded is not None else None
    asked = time.monotonic()
    between_looks = UNTIL_EVERY if guarded is None else CHANGE_EVERY
    while True:
        left = max(deadline - time.monotonic(), 0)
        if acquire(left if until is None else min(left, between_looks)):
            return True
        now = time.monotonic()
        if now >= deadline:
            return False
        if until is None:
            continue
        if guarded is not None:
            identity = _file_identity(guarded)
            changed, seen = identity != seen, identity
            if not changed and now - asked < UNTIL_EVERY:
                continue
        asked = now
        if until():
            raise LockWaitEnded(lock_path)


def _timeout(lock_path: str, timeout: float) -> FileStorageError:
    return FileStorageError(
        "LOCK_TIMEOUT",
        f"the lock {lock_path} stayed held for {timeout:g} s by {_describe_holder(lock_path)}",
        path=lock_path,
    )


def _identity(stat: os.stat_result) -> tuple[int, int, int]:
    return (stat.st_dev, stat.st_ino, stat.st_mtime_ns)


class _Record:
    """The ``.flock`` file's note of the directory its (Python) holder holds: ``{"dev","ino","mtime_ns"}``."""

    def __init__(self, path: str) -> None:
        self._fd = os.open(path, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))

    def read(self) -> tuple[int, int, int] | None:
        try:
            data = json.loads(os.pread(self._fd, 256, 0) or b"null")
            return (int(data["dev"]), int(data["ino"]), int(data["mtime_ns"]))
        except (ValueError, TypeError, KeyError, OSError):
            return None

    def write(self, identity: tuple[int, int, int] | None) -> None:
        # Best effort: a record that is not written only leaves the directory to the stale rule.
        with contextlib.suppress(OSError):
            if identity is None:
                os.ftruncate(self._fd, 0)
            else:
                text = json.dumps({"dev": identity[0], "ino": identity[1], "mtime_ns": identity[2]}).encode()
                os.ftruncate(self._fd, 0)
                os.pwrite(self._fd, text, 0)

    def close(self) -> None:
        os.close(self._fd)


def _remove_stale(lock_path: str, stale_after: float, *, orphan: tuple[int, int, int] | None) -> bool:
    """Removes the lock directory if it is still stale (or still the orphan ``orphan``), holding the steal gate.

    As dir-lock.ts's ``removeStale``: two waiters that both saw the lock as stale must not remove it
    one after the other (the second removing the first's fresh lock). Returns whether the lock is gone.
    """
    gate = lock_path + ".steal"
    try:
        os.mkdir(gate)
    except FileExistsError:
        # A stealer killed inside its gate would block every takeover: the gate is stale after stale_after too.
        with contextlib.suppress(OSError):
            if os.stat(gate).st_mtime < time.time() - stale_after:
                os.rmdir(gate)
        return False
    try:
        try:
            stat = os.stat(lock_path)
        except FileNotFoundError:
            return True
        still_orphan = orphan is not None and _identity(stat) == orphan
        if not still_orphan and not _may_take_over(stat, read_owner(lock_path), stale_after):
            return False
        _remove_lock(lock_path)
        return True
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(gate)


class _Toucher:
    """Keeps a held lock directory fresh, as proper-lockfile's update timer: stat, check the mtime is
    still ours, set it to now. A changed or missing directory means it was taken over (this process
    was frozen past the stale time): touching stops, and the release leaves the new owner's lock alone.
    """

    def __init__(self, lock_path: str, stale_after: float, record: _Record | None) -> None:
        self.lock_path = lock_path
        self.stale_after = stale_after
        self.record = record
        # Written before the identity is taken: a file made in the directory changes its mtime.
        self.owner = _write_owner(lock_path)
        self.identity = _identity(os.stat(lock_path))
        self.compromised = False
        self._updated = time.monotonic()
        self._stop = threading.Event()
        if record is not None:
            record.write(self.identity)
        self._thread = threading.Thread(target=self._run, name=f"touch {lock_path}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        delay = touch_interval(self.stale_after)
        while not self._stop.wait(delay):
            delay = touch_interval(self.stale_after)
            try:
                if _identity(os.stat(self.lock_path)) != self.identity:
                    self.compromised = True
                    return
                os.utime(self.lock_path)
                identity = _identity(os.stat(self.lock_path))
            except FileNotFoundError:
                self.compromised = True
                return
            except OSError:
                if time.monotonic() - self._updated > self.stale_after:
                    self.compromised = True
                    return
                delay = 1.0
                continue
            self.identity = identity
            self._updated = time.monotonic()
            if self.record is not None:
                self.record.write(identity)

    def is_held(self) -> bool:
        """A fresh check that the directory is still this holder's: not seen taken over, and its owner
        file still names this holder (without an owner file of ours, the directory's identity)."""
        if self.compromised:
            return False
        if self.owner is not None:
            owner = read_owner(self.lock_path)
            return owner is not None and owner.id == self.owner.id
        try:
            return _identity(os.stat(self.lock_path))[:2] == self.identity[:2]
        except OSError:
            return False

    def release(self) -> None:
        self._stop.set()
        self._thread.join()
        # A directory taken over while this holder was frozen is the new owner's: left alone. With an
        # owner file, the file says whose it is (the mtime alone cannot, once the toucher gave up).
        try:
            if self.owner is not None:
                if _owner_id_now(self.lock_path) == self.owner.id:
                    _remove_lock(self.lock_path)
            elif not self.compromised and _identity(os.stat(self.lock_path)) == self.identity:
                _remove_lock(self.lock_path)
        except FileNotFoundError:
            pass
        except OSError:
            # The disk does not answer: the directory, ours, is removed once it does. The record stays,
            # so that the next Python holder takes it over as a dead holder's meanwhile.
            if self.owner is not None:
                _leave_behind(self.lock_path, self.owner.id)
            return
        if self.record is not None:
            self.record.write(None)


def _take_directory(
    lock_path: str,
    stale_after: float,
    deadline: float,
    timeout: float,
    record: _Record | None,
    until: Callable[[], bool] | None = None,
) -> _Toucher | None:
    """Takes the lock directory (waiting, taking over a stale or orphaned one); ``None`` if none can be made."""
    # A directory this process left behind here is removed first (it would wait for itself).
    _remove_left_behind(lock_path)
    while True:
        try:
            os.mkdir(lock_path)
            return _Toucher(lock_path, stale_after, record)
        except FileExistsError:
            pass
        except OSError as e:
            if e.errno in _CANNOT_CREATE:
                return None
            raise FileStorageError(
                "IO_FAILED", f"cannot take the lock {lock_path} ({errno_name(e)})", path=lock_path, cause=e
            ) from e
        try:
            stat = os.stat(lock_path)
        except FileNotFoundError:
            continue
        except OSError as e:
            raise FileStorageError(
                "IO_FAILED", f"cannot take the lock {lock_path} ({errno_name(e)})", path=lock_path, cause=e
            ) from e
        orphan = record.read() if record is not None else None
        is_orphan = orphan is not None and _identity(stat) == orphan
        if (is_orphan or _may_take_over(stat, read_owner(lock_path), stale_after)) and _remove_stale(
            lock_path, stale_after, orphan=orphan if is_orphan else None
        ):
            continue
        if time.monotonic() >= deadline:
            raise _timeout(lock_path, timeout)
        # Randomized, so waiters do not move in step (10 to 50 ms, as dir-lock.ts).
        time.sleep(random.uniform(0.01, 0.05))  # noqa: S311 - jitter, not a secret
        if until is not None and until():
            raise LockWaitEnded(lock_path)


@contextlib.contextmanager
def _kernel_lock(
    path: str,
    deadline: float,
    timeout: float,
    lock_path: str,
    until: Callable[[], bool] | None = None,
    guarded: str | None = None,
) -> Iterator[_Record | None]:
    """Holds ``filelock.FileLock(path)``; yields its record, or ``None`` when no lock file can be made here."""
    lock = filelock.FileLock(path, mode=0o600, poll_interval=0.01, thread_local=False)

    def acquire(seconds: float) -> bool:
        try:
            lock.acquire(timeout=seconds)
        except filelock.Timeout:
            return False
        return True

    try:
        if not _acquire_until(acquire, deadline, until, lock_path, guarded):
            raise _timeout(lock_path, timeout)
    except OSError as e:
        if e.errno in _CANNOT_CREATE or e.errno == errno.ENOSYS:
            yield None
            return
        raise FileStorageError("IO_FAILED", f"cannot take the lock {path} ({errno_name(e)})", path=path, cause=e) from e
    try:
        try:
            record: _Record | None = _Record(path)
        except OSError:
            record = None
        try:
            yield record
        finally:
            if record is not None:
                record.close()
    finally:
        lock.release()


class Held:
    """What :func:`hold` gives its block: whether the lock is still this block's own."""

    def __init__(self, toucher: _Toucher | None) -> None:
        self._toucher = toucher

    def is_held(self) -> bool:
        """A fresh check (a read of the owner file): ``False`` once the lock directory was taken over
        or removed while this process was frozen. ``True`` when no lock files could be made at all
        (the process's own lock is all there is, and it is held)."""
        return self._toucher is None or self._toucher.is_held()


@contextlib.contextmanager
def hold(
    base: str,
    *,
    stale_after: float,
    timeout: float,
    until: Callable[[], bool] | None = None,
    guarded: str | None = None,
) -> Iterator[Held]:
    """Holds the lock ``base`` across threads and processes, Python and TypeScript alike.

    In order: this process's lock for ``base``, the kernel lock ``<base>.flock``, the directory
    ``<base>.lock`` (see the module's documentation). The whole wait is bounded by ``timeout`` seconds;
    ``until``, when given, is called every :data:`UNTIL_EVERY` seconds or so while it lasts, and as
    soon as the file ``guarded`` (the token file, when given) was replaced while this process waits
    for the other threads or processes, and ends the wait when it returns ``True`` (``LockWaitEnded``,
    code ``LOCK_WAIT_ENDED``; the block never runs).

    Raises:
        FileStorageError: ``LOCK_TIMEOUT`` (naming the lock) when the wait runs out; ``IO_FAILED`` when
            taking it fails otherwise (with the errno).

    Example:
        >>> import tempfile, os
        >>> base = os.path.join(tempfile.mkdtemp(), "tokens.json.refresh")
        >>> with hold(base, stale_after=10, timeout=5) as held:
        ...     os.path.isdir(base + ".lock"), held.is_held()
        (True, True)
    """
    lock_path = base + ".lock"
    deadline = time.monotonic() + timeout
    local = _local(base)
    if not _acquire_until(lambda seconds: local.acquire(timeout=seconds), deadline, until, lock_path, guarded):
        raise _timeout(lock_path, timeout)
    try:
        with _kernel_lock(base + ".flock", deadline, timeout, lock_path, until, guarded) as record:
            toucher = _take_directory(lock_path, stale_after, deadline, timeout, record, until)
            try:
                yield Held(toucher)
            finally:
                if toucher is not None:
                    toucher.release()
    finally:
        local.release()
