"""Request timeouts that count only the time the process ran, for the token managers.

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
ended on time are charged to the budget (:class:`RunningTime`). This is the TypeScript kit's rule (a
timer tick that comes more than 1 s late only re-arms; ``spec/token-store/README.md`` step 6), the Go
kit's and ``AsyncTokenManager``'s (``within_running_time``), applied in two places:

- the manager's own transports (:func:`count_running_time`): at the one place a sync read can be
  resumed, httpcore's network stream, under the connection, so httpx's and httpcore's connection
  handling is unchanged. Only reads are sliced: a connect or a write that times out has not
  delivered a request the tenant could act on, and the manager already sends those again;
- a transport of the user's own (:class:`WithinRunningTime`), whose sockets the kit cannot reach (a
  proxy, mTLS, instrumentation): the request is sent and its answer read on a thread of its own,
  without a read timeout, and the caller waits for it in running time, as the async manager and the
  Go kit do.
"""

from __future__ import annotations

import ssl
import threading
import time
import typing
from collections.abc import Callable, Iterable
from typing import Any

import httpcore
import httpx

__all__ = ["RunningTime", "RunningTimeTransport", "WithinRunningTime", "count_running_time"]

_SLICE = 0.25
"""The longest single wait of a read, in seconds: how soon after waking a pause is noticed."""

_LATE = 1.0
"""A slice ending this much later than asked (seconds) was spent stopped, not waiting."""


class RunningTime:
    """A timeout of ``seconds`` of time this process ran, spent in waits of at most :data:`_SLICE`.

    A wait that ended without an answer is charged with the time it took, unless it ended more than
    :data:`_LATE` seconds later than asked: the process was stopped meanwhile (SIGSTOP, a suspended
    machine, a debugger), that time is not the tenant's, and the caller simply waits again, so that an
    answer that arrived meanwhile is read before the timeout counts on.

    Example:
        >>> budget = RunningTime(2.0)
        >>> wait = budget.next_wait()  # 0.25: wait that long for the answer, then, without one:
        >>> budget.expired_after(wait)
        False
    """

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._seconds = seconds
        self._ran = 0.0
        self._clock = clock
        self._last = clock()

    def next_wait(self) -> float:
        """How long the next wait may last: a slice, or what is left of the timeout."""
        return min(_SLICE, self._seconds - self._ran)

    def expired_after(self, wait: float) -> bool:
        """Charges a wait of ``wait`` seconds that ended without an answer; whether the timeout ran out."""
        at = self._clock()
        gap, self._last = at - self._last, at
        if gap > wait + _LATE:
            return False  # stopped meanwhile: not the tenant's time
        self._ran += gap
        return self._ran >= self._seconds


_SocketOption = tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]


class _RunningTimeStream(httpcore.NetworkStream):
    """A network stream whose reads charge their timeout only with the time the process ran."""

    def __init__(self, inner: httpcore.NetworkStream, clock: Callable[[], float] = time.monotonic) -> None:
        self._inner = inner
        self._clock = clock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if timeout is None:
            return self._inner.read(max_bytes, None)
        budget = RunningTime(timeout, self._clock)
        while True:
            wait = budget.next_wait()
            try:
                return self._inner.read(max_bytes, wait)
            except httpcore.ReadTimeout:
                # A socket timeout leaves the socket usable: unless the budget is spent, read on.
                if budget.expired_after(wait):
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


class WithinRunningTime(httpx.BaseTransport):
    """A transport of the user's own, its read timeout counted in time the process ran.

    The kit cannot reach the sockets of a transport it did not make (a proxy, mTLS, instrumentation
    wrapping one), so it bounds the whole request from outside, as ``AsyncTokenManager`` and the Go kit
    do: the request is sent, and its answer read whole, on a thread of its own with no read timeout,
    while the caller waits for it for the request's read timeout counted by :class:`RunningTime`. A
    process stopped while the answer is on its way reads it when it is continued. When the timeout
    runs out the caller gets :class:`httpx.ReadTimeout`, and the request is left to end on its thread
    (when the tenant answers or closes the connection; its answer is dropped), since a blocking call
    cannot be stopped from outside. Connect, write and pool timeouts are the transport's, as given.

    Example:
        >>> manager = TokenManager(..., transport=httpx.HTTPTransport(proxy="http://proxy:3128"))  # doctest: +SKIP
        >>> manager._http.client._transport  # doctest: +SKIP
        <tenant_integration._running_time.WithinRunningTime object at ...>
    """

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        timeout: dict[str, float | None] = request.extensions.get("timeout", {})
        seconds = timeout.get("read")
        if seconds is None:
            return self.inner.handle_request(request)
        request.extensions["timeout"] = {**timeout, "read": None}
        exchange = _Exchange(self.inner, request)
        budget = RunningTime(seconds)
        while not exchange.done.wait(wait := budget.next_wait()):
            if budget.expired_after(wait):
                raise httpx.ReadTimeout(f"no answer within {seconds:g} s", request=request)
        return exchange.result()

    def close(self) -> None:
        self.inner.close()


class _Exchange:
    """One request sent through ``transport``, and its answer read whole, on a daemon thread."""

    def __init__(self, transport: httpx.BaseTransport, request: httpx.Request) -> None:
        self.done = threading.Event()
        self._response: httpx.Response | None = None
        self._error: BaseException | None = None
        thread = threading.Thread(target=self._run, args=(transport, request), name="token request", daemon=True)
        thread.start()

    def _run(self, transport: httpx.BaseTransport, request: httpx.Request) -> None:
        try:
            response = transport.handle_request(request)
            try:
                # The body as sent (httpx decodes it for the caller), read from the stream itself: a
                # response built with its content (httpx.MockTransport's) counts as read already.
                assert isinstance(response.stream, httpx.SyncByteStream)
                body = b"".join(response.stream)
            finally:
                response.close()
            self._response = httpx.Response(
                response.status_code,
                headers=response.headers,
                stream=httpx.ByteStream(body),
                extensions=response.extensions,
            )
        except BaseException as e:
            self._error = e
        finally:
            self.done.set()

    def result(self) -> httpx.Response:
        """The answer, or what the transport raised (call once :attr:`done` is set)."""
        if self._error is not None:
            raise self._error
        assert self._response is not None
        return self._response
