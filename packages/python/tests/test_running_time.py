"""Issue 27, point 0, in one process and in milliseconds: the sync manager's read timeout counts only the
time the process ran. The real stop (SIGSTOP of a process with its refresh in flight) is
the conformance scenario ``spec/conformance/scenarios/paused-awaiting-answer.yaml``; here the stream's
clock is injected to stand for one.
"""

from __future__ import annotations

import gzip
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpcore
import httpx
import pytest

from tenant_integration import RunningTimeTransport, TokenManager
from tenant_integration._running_time import (
    _LATE,
    _SLICE,
    RunningTime,
    WithinRunningTime,
    _RunningTimeBackend,
    _RunningTimeStream,
)


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
    # One given is not changed behind the user's back: it is wrapped, and waited for in running time.
    given = httpx.HTTPTransport()
    with TokenManager(**options, transport=given) as manager:
        assert not isinstance(given._pool._network_backend, _RunningTimeBackend)
        wrapper = manager._http.client._transport
        assert isinstance(wrapper, WithinRunningTime)
        assert wrapper.inner is given


def test_the_running_time_budget_does_not_count_a_wait_that_ended_far_too_late() -> None:
    clock = [0.0]
    budget = RunningTime(1.0, clock=lambda: clock[0])
    clock[0] += 0.25
    assert not budget.expired_after(0.25)
    clock[0] += 0.25 + _LATE + 13.0  # stopped 13 s during the wait: not charged
    assert not budget.expired_after(0.25)
    for _ in range(2):
        clock[0] += 0.25
        assert not budget.expired_after(0.25)
    clock[0] += 0.25
    assert budget.expired_after(0.25)


class Held(httpx.BaseTransport):
    """A transport of the user's own that answers once released, recording the timeouts it was given."""

    def __init__(self, answer: httpx.Response | Exception) -> None:
        self.answer = answer
        self.release = threading.Event()
        self.timeouts: list[dict[str, float | None]] = []
        self.closed = False

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.timeouts.append(request.extensions["timeout"])
        self.release.wait(10)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def close(self) -> None:
        self.closed = True


def test_a_transport_given_is_waited_for_in_running_time_and_times_out_after_its_read_timeout() -> None:
    held = Held(httpx.Response(200, text="late"))
    with httpx.Client(transport=WithinRunningTime(held), timeout=httpx.Timeout(5.0, read=0.3)) as http:
        started = time.monotonic()
        with pytest.raises(httpx.ReadTimeout, match=r"no answer within 0\.3 s"):
            http.post("http://tenant.test/oauth/token")
        assert 0.3 <= time.monotonic() - started < 3
        held.release.set()
    # The transport reads without a timeout of its own (its socket's would count a pause); the rest are its.
    assert held.timeouts == [{"connect": 5.0, "read": None, "write": 5.0, "pool": 5.0}]
    assert held.closed


def test_a_transport_given_answers_as_sent_and_its_errors_reach_the_caller() -> None:
    body = gzip.compress(b'{"access_token":"at"}')
    answer = httpx.Response(200, headers={"Content-Encoding": "gzip"}, content=body)
    held = Held(answer)
    held.release.set()
    with httpx.Client(transport=WithinRunningTime(held), timeout=2.0) as http:
        assert http.post("http://tenant.test/oauth/token").json() == {"access_token": "at"}
    refused = Held(httpx.ConnectError("refused"))
    refused.release.set()
    with httpx.Client(transport=WithinRunningTime(refused), timeout=2.0) as http, pytest.raises(httpx.ConnectError):
        http.post("http://tenant.test/oauth/token")
