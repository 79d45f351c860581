"""The refresh lock, as the token manager uses it (the lock protocol is :class:`~.storage.base.Lock`).

- which lock: the ``lock`` option, else the storage's own (file, Redis, memory), else one of the
  process (:func:`choose_lock`);
- whether it is still this process's right before a refresh leaves (:func:`still_held`; a holder
  paused past its lease or stale time has lost it: :class:`LockLost`, nothing sent);
- whether its wait can end early (:func:`takes_until`: the Redis and file locks take an ``until``
  check, called at each wake-up of the wait; when it says so the wait ends with an error of code
  ``LOCK_WAIT_ENDED``, :func:`wait_ended`), so that waiters stop once another process stored fresh
  tokens instead of taking the lock one after another;
- holding it from asyncio (:func:`hold_for_event_loop`): the protocol is synchronous, and a file lock
  belongs to the thread that took it, so a thread of its own holds it while the refresh runs on the loop.

The TypeScript kit's counterpart is ``packages/token-manager/src/lock.ts``.
"""

from __future__ import annotations

import contextlib
import inspect
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from .storage.base import Lock, TokenStorage
from .storage.memory import MemoryStorage

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "LOCK_TRIES",
    "LockLost",
    "choose_lock",
    "hold_for_event_loop",
    "locked",
    "still_held",
    "takes_until",
    "wait_ended",
]

T = TypeVar("T")

# Times the lock is taken again after it was found taken over before a refresh left.
LOCK_TRIES = 3
# Locks of the process, by name: the refresh lock when the storage brings none and no lock is given.
_PROCESS_LOCKS = MemoryStorage()


class LockLost(Exception):
    """Raised under the lock when it was found no longer this process's right before a refresh would
    leave: nothing was sent; the lock is taken again."""


def choose_lock(lock: Lock | None, storage: TokenStorage, *, session: bool = False) -> tuple[Lock, bool]:
    """The refresh lock, and whether processes share the storage through it (then refresh intents are
    written, as in the TypeScript manager; a :class:`MemoryStorage` is one process's). A session's
    manager takes the storage's ``session_lock`` where it has one (a token file: one lock directory per
    session), else its ``lock``, which is by name already (memory, Redis)."""
    own = lock or (getattr(storage, "session_lock", None) if session else None) or getattr(storage, "lock", None)
    return own or _PROCESS_LOCKS.lock, own is not None and not isinstance(storage, MemoryStorage)


def takes_until(lock: Lock) -> bool:
    """Whether ``lock`` takes an ``until`` keyword (:class:`~.storage.redis.RedisLock` and
    :attr:`~.storage.file.FileStorage.lock` do): a wait that such a check can end early. A lock of the
    user's without one is called as the :class:`~.storage.base.Lock` protocol says."""
    try:
        parameter = inspect.signature(lock).parameters.get("until")
    except (TypeError, ValueError):
        return False
    return parameter is not None and parameter.kind in (parameter.KEYWORD_ONLY, parameter.POSITIONAL_OR_KEYWORD)


def wait_ended(error: BaseException) -> bool:
    """Whether ``error`` is a lock's "the wait ended because ``until`` said so" (code
    ``LOCK_WAIT_ENDED``, the TypeScript and Go kits' name): the task did not run."""
    return getattr(error, "code", None) == "LOCK_WAIT_ENDED"


def locked(lock: Lock, name: str, task: Callable[[], T], until: Callable[[], bool] | None) -> T:
    """``lock(name, task)``, with ``until`` passed when there is one."""
    if until is None:
        return lock(name, task)
    call: Callable[..., T] = lock
    return call(name, task, until=until)


def still_held(lock: Lock, name: str) -> bool:
    """A fresh check that the lock ``name`` is still this process's (its ``is_held(name)``, which the
    file and Redis locks have); ``True`` for a lock that cannot tell. Blocking (storage I/O)."""
    check = getattr(lock, "is_held", None)
    if not callable(check):
        return True
    try:
        return bool(check(name))
    except Exception:
        return False


async def hold_for_event_loop(
    lock: Lock, name: str, task: Callable[[], Awaitable[T]], until: Callable[[], bool] | None = None
) -> T:
    """Runs ``task`` on the event loop while a thread of its own holds ``lock`` ``name`` (waiting with
    ``until``, see :func:`locked`; it is called in that thread)."""
    import asyncio  # loaded already by the running event loop; not at import, for sync users

    loop = asyncio.get_running_loop()
    entered: asyncio.Future[None] = loop.create_future()
    finished: asyncio.Future[None] = loop.create_future()
    # `finished` may settle after its awaiting task was cancelled (never awaited then): its outcome is
    # read here so that asyncio does not report "Future exception was never retrieved". `entered` needs
    # no such reader: a cancelled awaiter cancels it, and a settled one is awaited.
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
            locked(lock, name, hold, until)
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
