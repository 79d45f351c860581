"""Reads whose timeout counts only the time the process ran, for :class:`~tenant_integration.TokenManager`.

Why (issue 27): httpx's sync timeouts are socket timeouts. A blocking ``recv`` with a timeout is a
``poll`` whose deadline is fixed when the read starts; when the process is stopped (SIGSTOP, a
debugger, a frozen container) and continued, the kernel restarts that ``poll`` with the *same*
deadline. A process stopped past its deadline therefore times out the moment it wakes, unless the
answer happens to be there already, although it ran for a fraction of its timeout. For a refresh
that is the worst outcome: the tenant has rotated, the answer is dropped, and the next refresh
presents the old refresh token, which revokes the session.

How: the timeout is kept as a budget of running time, and each read waits in slices of at most
:data:`_SLICE` seconds. A slice that ends more than :data:`_LATE` seconds after it should have means
the process was stopped meanwhile: its time is not counted, and the read simply goes on (a socket
timeout leaves the socket usable, so nothing is lost and nothing is sent again). Only slices that
ended on time are charged to the budget. This is the TypeScript kit's rule (a timer tick that comes
more than 1 s late only re-arms; ``spec/token-store/README.md`` step 6) and ``AsyncTokenManager``'s
(``_within_running_time``), applied at the one place a sync read can be resumed: httpcore's network
stream, under the connection, so httpx's and httpcore's connection handling is unchanged.

Only reads are sliced: a connect or a write that times out has not delivered a request the tenant
could act on, and the manager already sends those again.
"""

from __future__ import annotations

import ssl
import time
import typing
from collections.abc import Callable, Iterable
from typing import Any

import httpcore
import httpx

__all__ = ["RunningTimeTransport", "count_running_time"]

_SLICE = 0.25
"""The longest single wait of a read, in seconds: how soon after waking a pause is noticed."""

_LATE = 1.0
"""A slice ending this much later than asked (seconds) was spent stopped, not waiting."""

_SocketOption = tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]


class _RunningTimeStream(httpcore.NetworkStream):
    """A network stream whose reads charge their timeout only with the time the process ran."""

    def __init__(self, inner: httpcore.NetworkStream, clock: Callable[[], float] = time.monotonic) -> None:
        self._inner = inner
        self._clock = clock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if timeout is None:
            return self._inner.read(max_bytes, None)
        ran = 0.0
        last = self._clock()
        while True:
            step = min(_SLICE, timeout - ran)
            try:
                return self._inner.read(max_bytes, step)
            except httpcore.ReadTimeout:
                at = self._clock()
                gap, last = at - last, at
                if gap > step + _LATE:
                    continue  # stopped meanwhile: not the tenant's time; read on
                ran += gap
                if ran >= timeout:
                    raise

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        return _RunningTimeStream(self._inner.start_tls(ssl_context, server_hostname, timeout), self._clock)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _RunningTimeBackend(httpcore.NetworkBackend):
    """httpcore's network backend, its streams wrapped in :class:`_RunningTimeStream`."""

    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self.inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[_SocketOption] | None = None,
    ) -> httpcore.NetworkStream:
        return _RunningTimeStream(self.inner.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[_SocketOption] | None = None
    ) -> httpcore.NetworkStream:
        return _RunningTimeStream(self.inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


def count_running_time(transport: httpx.HTTPTransport) -> None:
    """Makes ``transport``'s reads count only the time the process ran (in place; idempotent).

    httpx.HTTPTransport takes no network backend, so the one of its connection pool (httpx's
    ``_pool``, httpcore's ``_network_backend``, both stable across httpx 0.x and httpcore 1.x) is
    wrapped; ``tests/test_running_time.py`` fails if either moves.
    """
    pool = typing.cast(Any, transport)._pool
    if not isinstance(pool._network_backend, _RunningTimeBackend):
        pool._network_backend = _RunningTimeBackend(pool._network_backend)


class RunningTimeTransport(httpx.HTTPTransport):
    """:class:`httpx.HTTPTransport` (same arguments) whose read timeout counts only the time the
    process ran: an answer that arrives after a process stopped past its timeout (SIGSTOP, a debugger)
    and woken again is still read. The token manager's default transport is one.

    Wrap it, rather than a plain :class:`httpx.HTTPTransport`, in a transport of your own that you
    pass to :class:`~tenant_integration.TokenManager`, to keep that promise.

    Example:
        >>> class Tagged(httpx.BaseTransport):  # doctest: +SKIP
        ...     def __init__(self) -> None:
        ...         self._inner = RunningTimeTransport()
        ...     def handle_request(self, request: httpx.Request) -> httpx.Response:
        ...         request.headers["X-Tool"] = "my-cli"
        ...         return self._inner.handle_request(request)
        >>> manager = TokenManager(..., transport=Tagged())  # doctest: +SKIP
    """

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        count_running_time(self)
