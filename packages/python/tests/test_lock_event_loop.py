"""Holding the refresh lock from asyncio (``_lock.hold_for_event_loop``): a wait that ends after its
caller was cancelled leaves nothing for asyncio to report on the user's stderr."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from tenant_integration._lock import hold_for_event_loop

T = TypeVar("T")


class WaitEnded(Exception):
    code = "LOCK_WAIT_ENDED"


def test_a_wait_that_ends_after_its_caller_was_cancelled_is_not_reported_as_unretrieved() -> None:
    reported: list[dict[str, Any]] = []
    release = threading.Event()

    def lock(name: str, task: Callable[[], T]) -> T:
        # The wait for another holder: it ends (LockWaitEnded) only after the caller has gone.
        release.wait(5)
        raise WaitEnded(name)

    async def task() -> str:
        return "never runs"

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _loop, context: reported.append(context))
        waiting = asyncio.ensure_future(hold_for_event_loop(lock, "tenant-integration:x:lock", task))
        await asyncio.sleep(0.05)
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        release.set()
        # The lock's thread settles the futures through the loop: give it the turns it needs.
        for _ in range(50):
            await asyncio.sleep(0.01)
        gc.collect()
        await asyncio.sleep(0)

    asyncio.run(scenario())
    gc.collect()
    assert [c.get("message") for c in reported] == []
