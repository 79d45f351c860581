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
   (packages/token-manager/src/node/file-lock.ts, ``removeStale``). A TypeScript process knows only
   this directory, so a Python holder must hold it too. No Python library speaks this protocol
   (proper-lockfile is Node-only, and filelock's ``SoftFileLock`` is a file, not a directory, with
   no mtime refresh), so this part is written here, step for step as proper-lockfile and
   ``removeStale`` do it; it is the compatibility layer, not the lock Python relies on.

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
import threading
import time
from collections.abc import Iterator

import filelock

from .errors import FileStorageError

__all__ = ["hold", "touch_interval"]

#: Errors of ``mkdir``/``open`` that mean "no lock can be made here", not "someone holds it".
_CANNOT_CREATE = frozenset({errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT})

_local_locks: dict[str, threading.Lock] = {}
_local_guard = threading.Lock()


def errno_name(error: OSError) -> str:
    """The symbolic errno of ``error`` (``"EACCES"``), for messages that name it."""
    return errno.errorcode.get(error.errno or 0, "error")


def touch_interval(stale_after: float) -> float:
    """How often a holder touches its lock directory: a quarter of the stale time, at least 1 s (proper-lockfile's)."""
    return max(stale_after / 4, 1.0)


def _local(path: str) -> threading.Lock:
    with _local_guard:
        return _local_locks.setdefault(path, threading.Lock())


def _timeout(lock_path: str, timeout: float) -> FileStorageError:
    return FileStorageError(
        "LOCK_TIMEOUT", f"the lock {lock_path} stayed held by another process for {timeout:g} s", path=lock_path
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

    As file-lock.ts's ``removeStale``: two waiters that both saw the lock as stale must not remove it
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
        if not still_orphan and stat.st_mtime >= time.time() - stale_after:
            return False
        with contextlib.suppress(FileNotFoundError):
            os.rmdir(lock_path)
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

    def release(self) -> None:
        self._stop.set()
        self._thread.join()
        if self.compromised:
            return
        with contextlib.suppress(OSError):
            if _identity(os.stat(self.lock_path)) == self.identity:
                os.rmdir(self.lock_path)
        if self.record is not None:
            self.record.write(None)


def _take_directory(
    lock_path: str, stale_after: float, deadline: float, timeout: float, record: _Record | None
) -> _Toucher | None:
    """Takes the lock directory (waiting, taking over a stale or orphaned one); ``None`` if none can be made."""
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
        if (is_orphan or stat.st_mtime < time.time() - stale_after) and _remove_stale(
            lock_path, stale_after, orphan=orphan if is_orphan else None
        ):
            continue
        if time.monotonic() >= deadline:
            raise _timeout(lock_path, timeout)
        # Randomized, so waiters do not move in step (10 to 50 ms, as file-lock.ts).
        time.sleep(random.uniform(0.01, 0.05))  # noqa: S311 - jitter, not a secret


@contextlib.contextmanager
def _kernel_lock(path: str, deadline: float, timeout: float, lock_path: str) -> Iterator[_Record | None]:
    """Holds ``filelock.FileLock(path)``; yields its record, or ``None`` when no lock file can be made here."""
    lock = filelock.FileLock(
        path, timeout=max(deadline - time.monotonic(), 0), mode=0o600, poll_interval=0.01, thread_local=False
    )
    try:
        lock.acquire()
    except filelock.Timeout as e:
        raise _timeout(lock_path, timeout) from e
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


@contextlib.contextmanager
def hold(base: str, *, stale_after: float, timeout: float) -> Iterator[None]:
    """Holds the lock ``base`` across threads and processes, Python and TypeScript alike.

    In order: this process's lock for ``base``, the kernel lock ``<base>.flock``, the directory
    ``<base>.lock`` (see the module's documentation). The whole wait is bounded by ``timeout`` seconds.

    Raises:
        FileStorageError: ``LOCK_TIMEOUT`` (naming the lock) when the wait runs out; ``IO_FAILED`` when
            taking it fails otherwise (with the errno).

    Example:
        >>> import tempfile, os
        >>> base = os.path.join(tempfile.mkdtemp(), "tokens.json.refresh")
        >>> with hold(base, stale_after=10, timeout=5):
        ...     os.path.isdir(base + ".lock")
        True
    """
    lock_path = base + ".lock"
    deadline = time.monotonic() + timeout
    local = _local(base)
    if not local.acquire(timeout=max(deadline - time.monotonic(), 0)):
        raise _timeout(lock_path, timeout)
    try:
        with _kernel_lock(base + ".flock", deadline, timeout, lock_path) as record:
            toucher = _take_directory(lock_path, stale_after, deadline, timeout, record)
            try:
                yield
            finally:
                if toucher is not None:
                    toucher.release()
    finally:
        local.release()
