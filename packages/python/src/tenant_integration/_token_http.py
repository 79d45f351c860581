"""How the token manager sends its requests: :class:`AsyncTokenHttp` (httpx.AsyncClient) and
:class:`TokenHttp` (httpx.Client), the one other place where the async and the sync manager differ
(see :mod:`._synchronization`).

Both keep the same promise: the read timeout counts only the time this process ran, so a process
stopped while it waits for an answer (SIGSTOP, a debugger) goes on waiting when it wakes, and reads an
answer that arrived meanwhile, whichever transport sends. The sync one gets it from its own transports,
and from :class:`~._running_time.WithinRunningTime` around a transport given (:mod:`._running_time`);
the async one from :func:`within_running_time`, since asyncio's timers see the pause.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable
from typing import TYPE_CHECKING, TypeVar

import httpx

from ._tls import shared_context
from .errors import InvalidOptionsError

if TYPE_CHECKING:
    import asyncio

__all__ = ["AsyncTokenHttp", "TokenHttp", "within_running_time"]

T = TypeVar("T")


async def within_running_time(request: Awaitable[T], seconds: float | None) -> T:
    """Awaits ``request`` for at most ``seconds`` of time this process ran, then raises
    :class:`httpx.ReadTimeout`. A tick that comes far later than asked means the process was stopped
    (SIGSTOP, a suspended machine, a debugger): that time is not the tenant's, and the tick only waits
    again, so that an answer that arrived meanwhile is read before the timeout counts on (asyncio would
    otherwise run the expired timer in the same turn as the data, and drop the answer).
    """
    import asyncio  # loaded already by the running event loop; not at import, for sync users

    # Not at import: it loads httpcore, which the client sending the request has loaded already.
    from ._running_time import RunningTime

    if seconds is None:
        return await request
    task = asyncio.ensure_future(request)
    budget = RunningTime(seconds)
    try:
        while True:
            wait = budget.next_wait()
            done, _ = await asyncio.wait({task}, timeout=wait)
            if done:
                return task.result()
            if budget.expired_after(wait):
                raise httpx.ReadTimeout(f"no answer within {seconds:g} s")
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


class AsyncTokenHttp:
    """The async manager's HTTP: one ``httpx.AsyncClient`` per event loop (connections belong to the
    loop that opened them: a manager used from a new ``asyncio.run`` gets a client of its own there)."""

    def __init__(self, transport: httpx.AsyncBaseTransport | None, timeout: float | httpx.Timeout | None) -> None:
        if transport is not None and not isinstance(transport, httpx.AsyncBaseTransport):
            raise InvalidOptionsError("transport", "must be an httpx.AsyncBaseTransport (TokenManager takes sync ones)")
        self._transport = transport
        self._timeout = timeout
        self.client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _client(self) -> httpx.AsyncClient:
        import asyncio  # loaded already by the running event loop; not at import, for sync users

        loop = asyncio.get_running_loop()
        if self.client is None or self._loop is not loop:
            self.client = httpx.AsyncClient(
                transport=self._transport, timeout=self._timeout, follow_redirects=False, verify=shared_context()
            )
            self._loop = loop
        return self.client

    async def post(self, url: str, content: bytes | str, headers: dict[str, str]) -> httpx.Response:
        # The read timeout counts only time this process ran; httpx keeps the connect, write and pool ones.
        timeout = httpx.Timeout(self._timeout)
        without_read = httpx.Timeout(connect=timeout.connect, read=None, write=timeout.write, pool=timeout.pool)
        request = self._client().post(url, content=content, headers=headers, timeout=without_read)
        return await within_running_time(request, timeout.read)

    async def aclose(self) -> None:
        """Closes the connections (and the ``transport`` given)."""
        if self.client is not None:
            await self.client.aclose()
            self.client = None


class TokenHttp:
    """The sync manager's HTTP: one ``httpx.Client``."""

    def __init__(self, transport: httpx.BaseTransport | None, timeout: float | httpx.Timeout | None) -> None:
        if transport is not None and not isinstance(transport, httpx.BaseTransport):
            raise InvalidOptionsError(
                "transport", "must be an httpx.BaseTransport (AsyncTokenManager takes async ones)"
            )
        # Imported here: it loads httpcore, which httpx.Client loads anyway, not at import.
        from ._running_time import WithinRunningTime, count_running_time

        # The read timeout counts only the time the process ran (see _running_time.py), whichever
        # transport sends: a transport given is wrapped; the client's own transports (the default one,
        # and those of the proxies the environment names) read in running time themselves.
        given = None if transport is None else WithinRunningTime(transport)
        self.client = httpx.Client(transport=given, timeout=timeout, follow_redirects=False, verify=shared_context())
        if transport is None:
            for own in (self.client._transport, *self.client._mounts.values()):
                if isinstance(own, httpx.HTTPTransport):
                    count_running_time(own)

    def post(self, url: str, content: bytes | str, headers: dict[str, str]) -> httpx.Response:
        return self.client.post(url, content=content, headers=headers)

    def close(self) -> None:
        """Closes the connections (and the ``transport`` given)."""
        self.client.close()
