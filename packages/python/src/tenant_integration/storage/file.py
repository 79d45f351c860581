"""A token storage in one JSON file, shared safely by the processes of one machine, Python and
TypeScript alike: the same file, the same lock directories as ``fileStorage`` of
``@tenant-integration/token-manager/node``.

See RFC 6749 §10.3 (tokens kept confidential), RFC 8252 (native apps), RFC 9700 §4.14.2 (rotation).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import re
import secrets
import stat
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TypeVar

from .._names import is_pending_name, session_lock_hash
from .._token_record import pending_expired
from ..errors import InvalidOptionsError
from ._dir_lock import Held, errno_name, hold
from .base import Lock
from .errors import FileStorageError

__all__ = ["FileStorage"]

T = TypeVar("T")

#: Symlinks followed before giving up, as the kernel's own limit (ELOOP).
_MAX_LINKS = 40
#: The temporary files of writers (``<file>.<12 hex>.tmp``), removed when a killed writer left one.
_LEFTOVER = re.compile(r"^[0-9a-f]{12}\.tmp$")

# Paths and modes only, never a stored value.
_log = logging.getLogger("tenant_integration.storage.file")


def _decode(text: str) -> tuple[dict[str, str] | None, str | None]:
    """The data of a token file's text, or what is wrong with it (not a JSON object of strings)."""
    if not text.strip():
        return None, "empty"

    def no_constant(name: str) -> object:
        raise ValueError(name)

    try:
        # NaN and Infinity are not JSON (JSON.parse refuses them too).
        data = json.loads(text, parse_constant=no_constant)
    except (ValueError, RecursionError):
        # The parser's message quotes the text, which may hold tokens: say only what is wrong.
        return None, "not valid JSON"
    if not isinstance(data, dict):
        return None, "not a JSON object"
    if not all(isinstance(v, str) for v in data.values()):
        return None, "not a JSON object of strings"
    return data, None


def _problem(text: str) -> str | None:
    """What is wrong with the text of a token file, or ``None`` when it is a JSON object of strings."""
    return _decode(text)[1]


class _Change:
    """One change of the file's data waiting for a rewrite: whether it ran, and the error that kept it
    from being durable."""

    __slots__ = ("change", "error", "finished")

    def __init__(self, change: Callable[[dict[str, str]], bool]) -> None:
        self.change = change
        self.error: BaseException | None = None
        self.finished = False


def _encode(data: dict[str, str]) -> bytes:
    """The file's bytes: compact JSON, as ``JSON.stringify`` writes it."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate cannot be UTF-8: escape it (JSON.stringify does the same).
        return json.dumps(data, separators=(",", ":")).encode("ascii")


def _sync_directory(directory: str) -> None:
    """Makes a rename durable (POSIX). Windows cannot open a directory, and its rename is durable as is."""
    if sys.platform == "win32":  # pragma: no cover
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _make_directories(directory: str) -> None:
    """Creates ``directory`` and its missing parents, each 0700 (``os.makedirs`` gives the mode to the last only)."""
    parent = os.path.dirname(directory)
    if parent != directory and not os.path.isdir(parent):
        _make_directories(parent)
    with contextlib.suppress(FileExistsError):
        os.mkdir(directory, 0o700)


def _drop_expired_pending(data: dict[str, str]) -> bool:
    """Drops every pending sign-in whose record expired by this clock or does not validate; whether
    any was dropped (``spec/token-store/README.md``, "Pending sign-ins by state")."""
    now_ms = time.time() * 1000
    dropped = [key for key, value in data.items() if is_pending_name(key) and pending_expired(value, now_ms)]
    for key in dropped:
        del data[key]
    return bool(dropped)


class _RefreshLock:
    """:attr:`FileStorage.lock`: the refresh lock, callable as a :class:`~tenant_integration.storage.Lock`,
    and able to say whether a task running under it still holds it."""

    def __init__(self, storage: FileStorage) -> None:
        self._storage = storage

    def __call__(self, name: str, task: Callable[[], T], *, until: Callable[[], bool] | None = None) -> T:
        """Runs ``task`` holding the file's refresh lock (see :attr:`FileStorage.lock`). ``until``, when
        given, is asked every 50 ms or so while the lock is waited for, and as soon as the token file
        was replaced (another process wrote it); when it returns ``True`` the wait ends without the
        lock (``LockWaitEnded``, code ``LOCK_WAIT_ENDED``) and ``task`` never runs, as with
        :class:`~tenant_integration.storage.redis.RedisLock`. See RFC 9700 §4.14.2."""
        return self._storage._refresh_lock(name, task, until)

    def is_held(self, name: str) -> bool:
        """Whether the refresh lock a task of this storage runs under is still its own: a fresh read of
        the lock directory's owner file, ``False`` once another process took it over (this one was
        frozen) or when no task holds it. See RFC 9700 §4.14.2."""
        held = self._storage._refresh_held.get("refresh")
        return held is not None and held.is_held()


class _SessionLock:
    """:attr:`FileStorage.session_lock`: the refresh lock of each session, by its lock name."""

    def __init__(self, storage: FileStorage) -> None:
        self._storage = storage

    def __call__(self, name: str, task: Callable[[], T]) -> T:
        """Runs ``task`` holding the refresh lock of the session whose lock name is ``name``
        (``<file>.<h>.refresh.flock`` and ``<file>.<h>.refresh.lock``). Polled alone: no ``until``
        and no watch of the file, which every session shares (``spec/token-store/README.md``,
        "Decisions every kit follows"). See RFC 9700 §4.14.2."""
        return self._storage._locked(_session_kind(name), lambda _file: task())

    def is_held(self, name: str) -> bool:
        """Whether the session lock ``name`` a task of this storage runs under is still its own."""
        held = self._storage._refresh_held.get(_session_kind(name))
        return held is not None and held.is_held()


def _session_kind(lock_name: str) -> str:
    """The lock directory's middle part of a session's refresh lock: ``<h>.refresh``."""
    return f"{session_lock_hash(lock_name)}.refresh"


class FileStorage:
    """Stores every key in one JSON file at ``path``, for the processes of one machine. Safe by default:

    - **One refresh among processes.** :attr:`lock` is the cross-process refresh lock, on by default:
      the token manager uses it unless given its own ``lock``, re-reads the file under it, and
      refreshes only if it still must. It is ``filelock.FileLock("<file>.refresh.flock")`` (a kernel
      lock, dropped when its holder dies) and, inside it, the lock directory ``<file>.refresh.lock``
      that the TypeScript kit's ``fileStorage`` takes, so Python and TypeScript processes exclude each
      other. The directory's owner file names its holder (pid and host): a holder on this machine
      that was killed is taken over at once, one that is alive (even paused, SIGSTOP) never; a live
      holder is waited for at most ``lock_timeout`` seconds, then ``LOCK_TIMEOUT`` names it.
    - **Writes that lose nothing.** Each ``set`` and ``delete`` reads, changes and writes the file
      under a second, short lock (``<file>.write.flock`` and ``<file>.write.lock``), so keys written
      by concurrent processes are all kept. A write goes to ``<file>.<random>.tmp``, is fsynced,
      renamed over the file with :func:`os.replace`, and the directory is fsynced: a crash leaves the
      old or the new file, durably. Temporary files left by killed writers are removed by the next.
    - **The same format as TypeScript**: one JSON object mapping each key to its string value
      (``spec/token-store/token-file.schema.json``).
    - **Symlinks** are followed (at most 40): the file they name is written and locked, the link stays.
    - **Modes.** Missing directories are created 0700 and the file 0600. A file others may read is
      tightened to 0600 on first access, with a warning that its tokens may have been read; if that
      fails (not its owner), it is refused (``FILE_UNSAFE``).
    - **Faults.** An empty, corrupt or foreign file (not a JSON object of strings) is moved aside to
      ``<file>.corrupt-<time>-<random>`` and reported once as ``FILE_CORRUPT`` with ``reset = True``,
      which the manager turns into ``NOT_SIGNED_IN``; a sign-in then writes a good file. A read-only
      directory gives ``IO_FAILED`` naming the file and the errno, and the file is left as it was.

    Args:
        path: the token file, e.g. ``~/.config/my-cli/tokens.json`` (``~`` is expanded).
        stale_after: seconds after which a lock directory whose holder stopped touching it is taken
            over, when its owner cannot be checked (no owner file, or a holder on another host of a
            network disk) (default 10, at least 2).
        lock_timeout: seconds to wait for a lock held by a live process before ``LOCK_TIMEOUT`` (default 30).

    Raises:
        InvalidOptionsError: at construction, for a duration that is not a finite number > 0.
        FileStorageError: from the methods and the lock: ``FILE_CORRUPT``, ``FILE_UNSAFE``,
            ``IO_FAILED``, ``LOCK_TIMEOUT``.

    Example:
        >>> import tempfile, os
        >>> storage = FileStorage(os.path.join(tempfile.mkdtemp(), "my-cli", "tokens.json"))
        >>> storage.set("k", "v")
        >>> storage.get("k")
        'v'
        >>> storage.lock("tenant-integration:https://acme.tenant.test:demo:lock", lambda: "held")
        'held'

    See RFC 6749 §10.3, RFC 9700 §4.14.2.
    """

    def __init__(self, path: str | os.PathLike[str], *, stale_after: float = 10.0, lock_timeout: float = 30.0) -> None:
        for name, value in (("stale_after", stale_after), ("lock_timeout", lock_timeout)):
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not (math.isfinite(value) and value > 0)
            ):
                raise InvalidOptionsError(name, "must be a finite number of seconds > 0")
        self._path = os.path.abspath(os.path.expanduser(os.fspath(path)))
        # proper-lockfile's floor, so that a live holder's touches (every quarter) always beat the stale time.
        self._stale_after = max(float(stale_after), 2.0)
        self._lock_timeout = float(lock_timeout)
        self._lock = _RefreshLock(self)
        self._session_lock = _SessionLock(self)
        # The refresh locks this instance holds now, by kind (``refresh``, ``<h>.refresh``): one holder
        # at a time per lock in a process.
        self._refresh_held: dict[str, Held] = {}
        # Changes gathered while a rewrite runs, written together by the next one (many sessions of one
        # process share one file: one rewrite per batch, not per change).
        self._changes: list[_Change] = []
        self._rewriting = False
        self._gather = threading.Condition()
        # The last text read and its data: a file shared by many sessions is read far more often than
        # it changes, and decoding it is most of a read (compared whole, never by size or time).
        self._decoded: tuple[str, dict[str, str]] | None = None

    @property
    def path(self) -> str:
        """The token file's path, absolute (the file a symlink there names is the one written)."""
        return self._path

    @property
    def lock(self) -> Lock:
        """The cross-process refresh lock (``<file>.refresh.flock`` and ``<file>.refresh.lock``).

        Whatever ``name`` is passed, it is the one lock of this file, as in the TypeScript kit. Its
        ``is_held(name)`` tells a task running under it whether the lock is still its own (the token
        manager asks right before a refresh request leaves).

        Raises:
            FileStorageError: ``LOCK_TIMEOUT`` after ``lock_timeout`` (naming the holder, and saying when
                it is alive but paused), ``IO_FAILED``; else what ``task`` raises.
        """
        return self._lock

    @property
    def session_lock(self) -> Lock:
        """The refresh lock of each session of a file shared by many sessions (a manager with a
        ``session_id`` uses it): ``<file>.<h>.refresh.flock`` and ``<file>.<h>.refresh.lock``, ``<h>``
        the first 16 hex digits of SHA-256 of the session's lock name (``spec/token-store/README.md``,
        "Locks"), so one session's refresh never waits for another's. The write lock stays one per file.

        Example:
            >>> import tempfile, os
            >>> storage = FileStorage(os.path.join(tempfile.mkdtemp(), "tokens.json"))
            >>> storage.session_lock("tenant-integration:https://acme.tenant.test:demo:42:lock", lambda: "held")
            'held'
        """
        return self._session_lock

    def _refresh_lock(self, name: str, task: Callable[[], T], until: Callable[[], bool] | None = None) -> T:
        return self._locked("refresh", lambda _file: task(), until)

    # -- the file ---------------------------------------------------------------------------------

    def _target(self) -> str:
        """Follows the path through symlinks to the file they name, which need not exist yet."""
        current = self._path
        for _ in range(_MAX_LINKS):
            try:
                info = os.lstat(current)
            except FileNotFoundError:
                return current
            except OSError as e:
                raise FileStorageError(
                    "IO_FAILED", f"cannot read the token file {current} ({errno_name(e)})", path=current, cause=e
                ) from e
            if not stat.S_ISLNK(info.st_mode):
                if not stat.S_ISREG(info.st_mode):
                    raise FileStorageError(
                        "FILE_UNSAFE", f"the token file {current} is not a regular file", path=current
                    )
                return current
            current = os.path.normpath(os.path.join(os.path.dirname(current), os.readlink(current)))
        raise FileStorageError("FILE_UNSAFE", f"the token file {self._path} is a loop of symlinks", path=self._path)

    def _locked(self, kind: str, task: Callable[[str], T], until: Callable[[], bool] | None = None) -> T:
        """Runs ``task(file)`` holding ``<file>.<kind>.flock`` and ``<file>.<kind>.lock`` beside the resolved file."""
        file = self._target()
        try:
            _make_directories(os.path.dirname(file))
        except OSError as e:
            raise FileStorageError(
                "IO_FAILED",
                f"cannot create the directory of the token file {file} ({errno_name(e)})",
                path=file,
                cause=e,
            ) from e
        # The token file is what the refresh lock guards: a waiter asks ``until`` as soon as it was replaced.
        guarded = file if kind == "refresh" else None
        with hold(
            f"{file}.{kind}", stale_after=self._stale_after, timeout=self._lock_timeout, until=until, guarded=guarded
        ) as held:
            if not kind.endswith("refresh"):
                return task(file)
            self._refresh_held[kind] = held
            try:
                return task(file)
            finally:
                self._refresh_held.pop(kind, None)

    def _read_text(self, file: str) -> str | None:
        """The file's text (tightening a loose mode first), or ``None`` when there is none."""
        try:
            mode = os.stat(file).st_mode
            if mode & 0o077:
                try:
                    os.chmod(file, 0o600)
                except OSError as e:
                    raise FileStorageError(
                        "FILE_UNSAFE",
                        f"the token file {file} may be read by others (mode {stat.S_IMODE(mode):04o}) "
                        "and cannot be tightened to 0600",
                        path=file,
                        cause=e,
                    ) from e
                # Tightened, but the tokens were exposed until now (issue 27): say so.
                _log.warning(
                    "the token file %s was readable by others (mode %04o); tightened to 0600. "
                    "The tokens in it may have been read: sign out and sign in again to replace them",
                    file,
                    stat.S_IMODE(mode),
                )
            with open(file, "rb") as handle:
                raw = handle.read()
        except FileNotFoundError:
            return None
        except OSError as e:
            raise FileStorageError(
                "IO_FAILED", f"cannot read the token file {file} ({errno_name(e)})", path=file, cause=e
            ) from e
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            # Not text at all: as corrupt as bad JSON (U+FFFD cannot be JSON's structure).
            return "\ufffd"

    def _set_aside(self, file: str, what: str) -> FileStorageError:
        """Moves an unreadable file aside (it may hold the only copy of a refresh token) and says so."""
        now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        moved_to = f"{file}.corrupt-{now.replace(':', '-').replace('.', '-')}-{secrets.token_hex(3)}"
        try:
            os.rename(file, moved_to)
        except FileNotFoundError:
            pass
        except OSError as e:
            raise FileStorageError(
                "IO_FAILED", f"cannot move the corrupt token file {file} aside ({errno_name(e)})", path=file, cause=e
            ) from e
        return FileStorageError(
            "FILE_CORRUPT",
            f"the token file {file} was {what}; moved aside to {moved_to}: sign in again",
            path=file,
            moved_to=moved_to,
            reset=True,
        )

    def _data_of(self, text: str) -> tuple[dict[str, str] | None, str | None]:
        """:func:`_decode` of ``text``, from the last decoded text when it is the same (not to be changed)."""
        last = self._decoded
        if last is not None and text == last[0]:
            return last[1], None
        data, what = _decode(text)
        if data is not None:
            self._decoded = (text, data)
        return data, what

    def _read_for_write(self, file: str) -> dict[str, str]:
        """The file's data (a copy to change), under the write lock; a corrupt file is moved aside and
        counts as empty."""
        text = self._read_text(file)
        if text is None:
            return {}
        data, what = self._data_of(text)
        if data is not None:
            return dict(data)
        self._set_aside(file, what or "unreadable")
        return {}

    def _write_durably(self, file: str, data: dict[str, str]) -> None:
        """Writes ``data``: temporary file, fsync, rename, fsync of the directory."""
        temp = f"{file}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            try:
                # The mode of open is masked by the umask; make sure.
                os.fchmod(fd, 0o600)
                view = memoryview(_encode(data))
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp, file)
        except OSError as e:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise FileStorageError(
                "IO_FAILED", f"cannot write the token file {file} ({errno_name(e)})", path=file, cause=e
            ) from e
        try:
            _sync_directory(os.path.dirname(file))
        except OSError as e:
            raise FileStorageError(
                "IO_FAILED",
                f"cannot make the write of the token file {file} durable ({errno_name(e)})",
                path=file,
                cause=e,
            ) from e

    def _remove_leftovers(self, file: str) -> None:
        """Removes the temporary files of writers killed mid-write (only a holder of the write lock writes one)."""
        directory, prefix = os.path.dirname(file), os.path.basename(file) + "."
        try:
            names = os.listdir(directory)
        except OSError:
            return
        for name in names:
            if name.startswith(prefix) and _LEFTOVER.match(name[len(prefix) :]):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(directory, name))

    def _update(self, change: Callable[[dict[str, str]], bool]) -> None:
        """Applies ``change`` to the file's data and writes it durably: the changes this process's
        threads make while a rewrite runs wait, and the next rewrite applies them all, in the order they
        came, each call returning once its change is durable (or raising what kept it from being so)."""
        entry = _Change(change)
        with self._gather:
            self._changes.append(entry)
            while self._rewriting and not entry.finished:
                self._gather.wait()
            if not entry.finished:
                self._rewriting = True
                batch, self._changes = self._changes, []
        if not entry.finished:
            try:
                self._rewrite(batch)
            finally:
                with self._gather:
                    for done in batch:
                        done.finished = True
                    self._rewriting = False
                    self._gather.notify_all()
        if entry.error is not None:
            raise entry.error

    def _rewrite(self, batch: list[_Change]) -> None:
        """One rewrite of the file under its write lock, with every change of ``batch`` applied."""

        def task(file: str) -> None:
            data = self._read_for_write(file)
            changed = False
            for entry in batch:
                try:
                    changed = entry.change(data) or changed
                except Exception as e:
                    entry.error = e
            if _drop_expired_pending(data) or changed:
                self._write_durably(file, data)
            # After the write, not before: a refresh's write is the crash window, kept as short as can be.
            self._remove_leftovers(file)

        try:
            self._locked("write", task)
        except BaseException as e:
            for entry in batch:
                entry.error = entry.error or e

    # -- TokenStorage -----------------------------------------------------------------------------

    def get(self, key: str) -> str | None:
        """The value of ``key``, or ``None`` when absent (or when there is no file yet).

        Raises:
            FileStorageError: ``FILE_CORRUPT`` (``reset`` is ``True``; the file was moved aside),
                ``FILE_UNSAFE``, ``IO_FAILED``, ``LOCK_TIMEOUT``.
        """
        text = self._read_text(self._target())
        if text is None:
            return None
        data, _ = self._data_of(text)
        if data is not None:
            return data.get(key)

        # Decide under the write lock, on a fresh read: another process may have replaced it meanwhile.
        def again(file: str) -> str | None:
            fresh = self._read_text(file)
            if fresh is None:
                return None
            what = _problem(fresh)
            if what is None:
                value: str | None = json.loads(fresh).get(key)
                return value
            raise self._set_aside(file, what)

        return self._locked("write", again)

    def set(self, key: str, value: str) -> None:
        """Stores ``value`` under ``key``, keeping every other key; durable when it returns.

        Raises:
            FileStorageError: ``IO_FAILED`` (e.g. a read-only directory: the file is left as it was),
                ``FILE_UNSAFE``, ``LOCK_TIMEOUT``.
        """

        def change(data: dict[str, str]) -> bool:
            data[key] = value
            return True

        self._update(change)

    def set_expiring(self, key: str, value: str, lifetime: float) -> None:
        """Stores a pending sign-in as :meth:`set` does. The file drops it on a later write once its
        record's ``expiresAt`` passed (every write drops the expired and invalid pending sign-ins: the
        file is rewritten whole anyway), so ``lifetime`` itself is not kept.

        Raises:
            FileStorageError: as :meth:`set`.
        """
        self.set(key, value)

    def take(self, key: str) -> str | None:
        """Returns the value of ``key`` and removes it, in one step under the write lock: of concurrent
        takes of one key, in any processes sharing the file, at most one returns it.

        Raises:
            FileStorageError: as :meth:`delete`.
        """
        taken: list[str] = []

        def change(data: dict[str, str]) -> bool:
            value = data.pop(key, None)
            if value is None:
                return False
            taken.append(value)
            return True

        self._update(change)
        return taken[0] if taken else None

    def delete(self, key: str) -> None:
        """Removes ``key``; does nothing (writes nothing) when it is absent.

        Raises:
            FileStorageError: ``IO_FAILED``, ``FILE_UNSAFE``, ``LOCK_TIMEOUT``.
        """

        def change(data: dict[str, str]) -> bool:
            if key not in data:
                return False
            del data[key]
            return True

        self._update(change)

    def __repr__(self) -> str:
        return f"FileStorage({self._path!r})"
