"""The few places where the async and the sync token manager differ, each written for both (httpcore's
``_synchronization.py`` and ``_backends``): the rest of the manager is written once, async, and the
sync manager is generated from it (``scripts/unasync.py``), which renames ``AsyncBackend`` to
``SyncBackend`` and ``AsyncFlight`` to ``Flight``. The client, generated the same way, takes its
default wait before a retry from here too (``AsyncBackend.sleep`` / ``SyncBackend.sleep``).

- :class:`AsyncBackend` / :class:`SyncBackend`: a blocking storage call (a worker thread / a plain
  call), a pause, the refresh lock around a task, a call a little later (a loop timer / a timer thread);
- :class:`AsyncFlight` / :class:`Flight`: one refresh shared by every concurrent caller of the process
  (one asyncio task / one thread, the others waiting on an event), its failure included.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

    from .storage.base import Lock

__all__ = ["AsyncBackend", "AsyncFlight", "Flight", "SyncBackend"]

T = TypeVar("T")


class AsyncBackend:
    """The async manager's I/O primitives."""

    @staticmethod
    async def run_blocking(function: Callable[..., T], *args: Any) -> T:
        """Runs a blocking (storage) call in a worker thread, off the event loop."""
        import asyncio  # loaded already by the running event loop; not at import, for sync users

        return await asyncio.to_thread(function, *args)

    @staticmethod
    async def sleep(seconds: float) -> None:
        import asyncio  # loaded already by the running event loop; not at import, for sync users

        await asyncio.sleep(seconds)

    @staticmethod
    async def locked(
        lock: Lock, name: str, task: Callable[[], Awaitable[T]], until: Callable[[], bool] | None = None
    ) -> T:
        """Runs ``task`` on the event loop while a thread of its own holds the lock; ``until`` (called
        in that thread) may end the wait for it (see :func:`~._lock.locked`)."""
        from ._lock import hold_for_event_loop  # not at import: this module stays free of the storages

        return await hold_for_event_loop(lock, name, task, until)

    @staticmethod
    def call_later(seconds: float, task: Callable[[], Coroutine[Any, Any, object]]) -> None:
        """Starts ``task`` in ``seconds`` on the running event loop, even if nothing else runs."""
        import asyncio  # loaded already by the running event loop; not at import, for sync users

        loop = asyncio.get_running_loop()

        def start() -> None:
            started = loop.create_task(task())
            started.add_done_callback(lambda t: t.cancelled() or t.exception())

        loop.call_later(seconds, start)


class SyncBackend:
    """The sync manager's I/O primitives: the same calls, blocking."""

    @staticmethod
    def run_blocking(function: Callable[..., T], *args: Any) -> T:
        return function(*args)

    @staticmethod
    def sleep(seconds: float) -> None:
        time.sleep(seconds)

    @staticmethod
    def locked(lock: Lock, name: str, task: Callable[[], T], until: Callable[[], bool] | None = None) -> T:
        from ._lock import locked  # not at import: this module stays free of the storages

        return locked(lock, name, task, until)

    @staticmethod
    def call_later(seconds: float, task: Callable[[], object]) -> None:
        """Calls ``task`` in ``seconds`` from a daemon timer thread, even if no call comes."""
        timer = threading.Timer(seconds, task)
        timer.daemon = True
        timer.start()


class AsyncFlight:
    """One refresh task whose outcome every concurrent task of the event loop shares."""

    def __init__(self) -> None:
        self._task: asyncio.Task[str] | None = None

    async def join(self, fly: Callable[[], Awaitable[str]]) -> str:
        """Awaits the refresh under way, or starts ``fly`` as it. A waiter that is cancelled does not
        cancel the refresh the others wait for."""
        import asyncio  # loaded already by the running event loop; not at import, for sync users

        task = self._task
        if task is None or task.get_loop() is not asyncio.get_running_loop():
            task = self._task = asyncio.ensure_future(fly())

            def landed(done: asyncio.Task[str]) -> None:
                if self._task is done:
                    self._task = None
                if not done.cancelled():
                    done.exception()  # retrieved here; every waiter re-raises it

            task.add_done_callback(landed)
        return await asyncio.shield(task)


class _Outcome:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.token: str | None = None
        self.error: BaseException | None = None


class Flight:
    """One refresh, run by the first thread that asks, whose outcome the other threads wait for."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._outcome: _Outcome | None = None

    def join(self, fly: Callable[[], str]) -> str:
        """Waits for the refresh under way, or runs ``fly`` as it."""
        with self._mutex:
            outcome = self._outcome
            owner = outcome is None
            if outcome is None:
                outcome = self._outcome = _Outcome()
        if not owner:
            outcome.done.wait()
            if outcome.error is not None:
                raise outcome.error
            assert outcome.token is not None
            return outcome.token
        try:
            outcome.token = fly()
            return outcome.token
        except BaseException as e:
            outcome.error = e
            raise
        finally:
            with self._mutex:
                self._outcome = None
            outcome.done.set()
