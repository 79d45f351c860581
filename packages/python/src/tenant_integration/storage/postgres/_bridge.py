"""How the public storage and lock run the I/O flows: those of ``_sync/`` as plain calls, those of
``_async/`` (on an ``AsyncConnectionPool``) on the event loop the pool runs on, from the calling thread.

The token managers call a storage from a thread, never on the event loop (``AsyncTokenManager`` runs
storage calls in a worker thread, and holds the lock from a thread of its own): such a thread hands each
coroutine to the pool's loop (``asyncio.run_coroutine_threadsafe``) and waits for its outcome, while the
loop, free meanwhile, runs it. Called on the pool's loop itself, it would wait for itself: refused.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

__all__ = ["Runner", "direct", "on_loop"]

T = TypeVar("T")

Runner = Callable[..., Any]
"""``runner(function, *args)``: ``function(*args)``'s outcome, run as its flavour needs."""


def direct(function: Callable[..., T], *args: Any) -> T:
    """A flow of ``_sync/``: a plain call."""
    return function(*args)


def on_loop(loop: asyncio.AbstractEventLoop) -> Runner:
    """A runner of ``_async/`` flows on ``loop``, for calls from other threads."""

    import asyncio  # loaded already: the pool's loop runs

    def run(function: Callable[..., Coroutine[Any, Any, T]], *args: Any) -> T:
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            raise RuntimeError(
                "a PostgresStorage on an AsyncConnectionPool was called on the pool's own event loop, where it "
                "would wait for itself: the token managers call it from a worker thread; do so too "
                "(await asyncio.to_thread(storage.get, key))"
            )
        if loop.is_closed() or not loop.is_running():
            raise RuntimeError(
                "the event loop of the AsyncConnectionPool given to PostgresStorage is not running: the storage "
                "runs its statements on it"
            )
        return asyncio.run_coroutine_threadsafe(function(*args), loop).result()

    return run
