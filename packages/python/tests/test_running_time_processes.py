"""Issue 36, point 3, with a real process: a sync ``TokenManager`` stopped (SIGSTOP) while its refresh
answer is on the way, past its request timeout, reads that answer when it is continued, whichever
transport it sends through: its own, an ``httpx.HTTPTransport`` of the user's (a proxy, mTLS), or a
transport of the user's wrapping one (instrumentation). The tenant rotates strictly: an answer
dropped at a timeout would leave the process presenting the rotated-away refresh token next, and the
session would be revoked. The multi-process form is the conformance scenario
``spec/conformance/scenarios/paused-awaiting-answer.yaml`` (default transport only).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

REQUEST_TIMEOUT = 2.0
STOPPED_AFTER = 0.3
STOPPED_FOR = 3.0
#: After the request arrived: when the process has been continued, past its request timeout in wall time.
ANSWERED_AFTER = 3.5

CHILD = """
import json, sys, time
import httpx
from tenant_integration import TokenManager, TokenManagerError

class Instrumented(httpx.BaseTransport):
    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.headers["X-Instrumented"] = "yes"
        return self.inner.handle_request(request)

url, kind, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
transport = {"default": None, "httpx.HTTPTransport": httpx.HTTPTransport(), "instrumented": Instrumented()}[kind]
skew = [0.0]
redirect = "http://127.0.0.1:53682/callback"
manager = TokenManager(url, "paused", redirect, ["profile:read"], transport=transport, timeout=timeout,
                       now=lambda: time.time() + skew[0])
state = manager.begin_authorization().state
manager.complete_authorization(f"{redirect}?code=the-code&state={state}")
skew[0] = 3600.0  # the access token has expired: the next call refreshes
try:
    print(json.dumps({"token": manager.get_access_token()}), flush=True)
except TokenManagerError as e:
    print(json.dumps({"error": e.code}), flush=True)
"""


class Tenant(ThreadingHTTPServer):
    """The token endpoint, rotating strictly: the code gives ``at-1``/``rt-1``; ``rt-1`` gives
    ``at-2``/``rt-2`` once, after holding its answer ``ANSWERED_AFTER`` seconds; a rotated-away refresh
    token is ``invalid_grant``."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), TokenEndpoint)
        self.refresh_arrived = threading.Event()
        self.grants: list[str] = []
        self.current = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class TokenEndpoint(BaseHTTPRequestHandler):
    server: Tenant

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        tenant = self.server
        tenant.grants.append(body["grant_type"])
        if body["grant_type"] == "authorization_code":
            tenant.current = "rt-1"
            self._answer(
                200, {"access_token": "at-1", "refresh_token": "rt-1", "token_type": "Bearer", "expires_in": 900}
            )
            return
        if body.get("refresh_token") != tenant.current:
            self._answer(400, {"error": "invalid_grant", "error_description": "the refresh token was rotated away"})
            return
        tenant.current = "rt-2"  # rotated as the request arrives: an answer dropped now ends the session
        tenant.refresh_arrived.set()
        time.sleep(ANSWERED_AFTER)
        self._answer(200, {"access_token": "at-2", "refresh_token": "rt-2", "token_type": "Bearer", "expires_in": 900})

    def _answer(self, status: int, body: dict[str, object]) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def tenant() -> Iterator[Tenant]:
    server = Tenant()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("kind", ["default", "httpx.HTTPTransport", "instrumented"])
def test_a_process_stopped_past_its_timeout_while_its_refresh_answer_comes_reads_the_answer(
    tenant: Tenant, kind: str
) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, tenant.url, kind, str(REQUEST_TIMEOUT)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert tenant.refresh_arrived.wait(30), "the process never sent its refresh"
        time.sleep(STOPPED_AFTER)
        os.kill(child.pid, signal.SIGSTOP)
        time.sleep(STOPPED_FOR)  # the request timeout passes in wall time while the process is stopped
        os.kill(child.pid, signal.SIGCONT)
        out, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGCONT)
            child.kill()
            child.wait()
    assert json.loads(out.strip().splitlines()[-1]) == {"token": "at-2"}, err
    assert tenant.grants == ["authorization_code", "refresh_token"]
