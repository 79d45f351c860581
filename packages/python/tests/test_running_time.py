"""Issue 27, point 0, in one process and in milliseconds: the sync manager's read timeout counts only the
time the process ran. The real stop (SIGSTOP of a process with its refresh in flight) is
the conformance scenario ``spec/conformance/scenarios/paused-awaiting-answer.yaml``; here the stream's
clock is injected to stand for one.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpcore
import httpx
import pytest

from tenant_integration import RunningTimeTransport, TokenManager
from tenant_integration._running_time import _LATE, _SLICE, _RunningTimeBackend, _RunningTimeStream


class SilentStream(httpcore.NetworkStream):
    """A stream whose reads time out (advancing the fake clock by what they waited, plus a stop when
    told) until ``answer_after`` reads have been made."""

    def __init__(self, clock: list[float], answer_after: int, stop_at: int | None = None, stop: float = 0.0) -> None:
        self.clock = clock
        self.answer_after = answer_after
        self.stop_at = stop_at
        self.stop = stop
        self.waits: list[float | None] = []

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self.waits.append(timeout)
        if len(self.waits) > self.answer_after:
            return b"HTTP/1.1 200 OK\r\n"
        self.clock[0] += timeout or 0.0
        if len(self.waits) == self.stop_at:
            self.clock[0] += self.stop
        raise httpcore.ReadTimeout("timed out")


def stream_over(inner: SilentStream) -> _RunningTimeStream:
    return _RunningTimeStream(inner, clock=lambda: inner.clock[0])


def test_a_read_stopped_past_its_timeout_goes_on_waiting_for_what_is_left_of_it() -> None:
    # 2 s timeout; the process is stopped 13 s during its second slice; the answer comes on the 9th read.
    inner = SilentStream([0.0], answer_after=8, stop_at=2, stop=13.0)
    assert stream_over(inner).read(1024, timeout=2.0) == b"HTTP/1.1 200 OK\r\n"
    assert all(wait is not None and wait <= _SLICE for wait in inner.waits)


def test_a_read_that_ran_its_whole_timeout_times_out_and_a_short_stop_counts() -> None:
    inner = SilentStream([0.0], answer_after=1000)
    with pytest.raises(httpcore.ReadTimeout):
        stream_over(inner).read(1024, timeout=1.0)
    assert len(inner.waits) == round(1.0 / _SLICE)
    # A stop shorter than _LATE is not told apart from a slow machine: it counts.
    inner = SilentStream([0.0], answer_after=1000, stop_at=1, stop=_LATE / 2)
    with pytest.raises(httpcore.ReadTimeout):
        stream_over(inner).read(1024, timeout=1.0)
    assert len(inner.waits) < round(1.0 / _SLICE)


def test_a_read_without_timeout_is_handed_on_as_is() -> None:
    inner = SilentStream([0.0], answer_after=0)
    stream_over(inner).read(10, timeout=None)
    assert inner.waits == [None]


@pytest.fixture
def slow_server() -> Iterator[str]:
    """A loopback HTTP server that answers after 0.6 s."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with connection:
                connection.recv(65536)
                time.sleep(0.6)
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/"
    listener.close()
    thread.join(timeout=5)


def test_the_transport_reads_a_slow_answer_within_its_timeout_and_times_out_past_it(slow_server: str) -> None:
    with httpx.Client(transport=RunningTimeTransport(), timeout=2.0) as http:
        assert http.get(slow_server).text == "ok"
    with httpx.Client(transport=RunningTimeTransport(), timeout=0.3) as http, pytest.raises(httpx.ReadTimeout):
        http.get(slow_server)


def test_the_managers_own_transports_count_running_time_and_one_given_is_left_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The proxy the environment names gets its own transport (an httpx mount): it counts running time too.
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:3128")
    options: dict[str, Any] = {
        "base_url": "https://acme.tenant.test",
        "client_id": "c",
        "redirect_uri": "http://127.0.0.1:53682/callback",
        "scopes": ["profile:read"],
    }
    with TokenManager(**options) as manager:
        transports = [manager._http.client._transport, *manager._http.client._mounts.values()]
        assert len(transports) == 2
        for transport in transports:
            assert isinstance(transport, httpx.HTTPTransport)
            assert isinstance(transport._pool._network_backend, _RunningTimeBackend)
    given = httpx.HTTPTransport()
    with TokenManager(**options, transport=given):
        assert not isinstance(given._pool._network_backend, _RunningTimeBackend)
