"""The loopback sign-in of command-line tools (RFC 8252 §7.3), against the sandbox tenant as a process:
the registered redirect URI's fixed port, one callback, the browser told how it ended, clear errors."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tenant_integration import AsyncTokenManager, InvalidOptionsError, TokenManager, TokenManagerError
from tenant_integration.loopback import (
    LoopbackError,
    LoopbackServer,
    sign_in_with_loopback,
    sign_in_with_loopback_async,
)
from tenant_integration.testing import SandboxClient, SandboxProcess

SANDBOX = ["node", str(Path(__file__).resolve().parents[3] / "packages" / "sandbox" / "dist" / "cli.js")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


PORT = free_port()
REDIRECT_URI = f"http://127.0.0.1:{PORT}/callback"


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxProcess]:
    clients = [
        SandboxClient(id="cli", redirect_uris=(REDIRECT_URI,)),
        SandboxClient(id="narrow", redirect_uris=(REDIRECT_URI,), scopes=("profile:read",)),
    ]
    with SandboxProcess(command=SANDBOX, clients=clients) as running:
        yield running


class Browser:
    """Plays the browser: follows the authorize URL to the callback in a thread, keeps the page it got."""

    def __init__(self) -> None:
        self.page: httpx.Response | None = None
        self.opened: list[str] = []
        self._thread: threading.Thread | None = None

    def __call__(self, url: str) -> bool:
        self.opened.append(url)

        def visit() -> None:
            with httpx.Client(trust_env=False, timeout=30) as http:
                answer = http.get(url)
                assert answer.status_code == 302
                self.page = http.get(answer.headers["location"])

        self._thread = threading.Thread(target=visit)
        self._thread.start()
        return True

    def join(self) -> httpx.Response:
        assert self._thread is not None
        self._thread.join(timeout=30)
        assert self.page is not None
        return self.page


def manager(
    sandbox: SandboxProcess, client_id: str = "cli", scopes: tuple[str, ...] = ("profile:read",)
) -> TokenManager:
    return TokenManager(sandbox.url, client_id, REDIRECT_URI, list(scopes), now=sandbox.clock.now)


def test_signs_in_through_the_registered_port_and_tells_the_browser_it_succeeded(sandbox: SandboxProcess) -> None:
    m = manager(sandbox)
    browser = Browser()
    session = sign_in_with_loopback(m, open_browser=browser, timeout=30)
    page = browser.join()
    assert (page.status_code, page.headers["cache-control"]) == (200, "no-store")
    assert "Signed in" in page.text
    assert session.scope == "profile:read"
    assert m.is_signed_in()
    assert browser.opened[0].startswith(f"{sandbox.url}/oauth/authorize?")
    # The port is free again: a second sign-in binds it.
    with LoopbackServer(REDIRECT_URI) as server:
        assert server.redirect_uri == REDIRECT_URI
        assert server.port == PORT


async def test_the_async_manager_signs_in_the_same_way(sandbox: SandboxProcess) -> None:
    m = AsyncTokenManager(sandbox.url, "cli", REDIRECT_URI, ["profile:read"], now=sandbox.clock.now)
    browser = Browser()
    await sign_in_with_loopback_async(m, open_browser=browser, timeout=30)
    assert browser.join().status_code == 200
    assert await m.is_signed_in()


def test_a_denied_sign_in_is_typed_and_the_browser_page_says_it_failed(sandbox: SandboxProcess) -> None:
    m = manager(sandbox, "narrow", ("profile:read", "tickets:read"))
    browser = Browser()
    with pytest.raises(TokenManagerError) as caught:
        sign_in_with_loopback(m, open_browser=browser, timeout=30)
    assert caught.value.code == "AUTHORIZATION_DENIED"
    page = browser.join()
    assert page.status_code == 400
    assert "Sign-in failed: AUTHORIZATION_DENIED" in page.text
    assert not m.is_signed_in()


def test_a_busy_port_is_a_typed_error_naming_the_port() -> None:
    port = free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        with pytest.raises(TokenManagerError) as caught:
            LoopbackServer(f"http://127.0.0.1:{port}/callback")
    assert caught.value.code == "CALLBACK_PORT_IN_USE"
    assert isinstance(caught.value, LoopbackError)
    assert caught.value.port == port
    assert f"port {port}" in str(caught.value)


def test_no_callback_in_time_says_what_to_check_at_the_tenant(sandbox: SandboxProcess) -> None:
    m = manager(sandbox)
    opened: list[str] = []

    def browser_that_stops_at_the_tenant(url: str) -> bool:
        opened.append(url)
        return True

    with pytest.raises(TokenManagerError) as caught:
        sign_in_with_loopback(m, open_browser=browser_that_stops_at_the_tenant, timeout=0.2)
    assert caught.value.code == "CALLBACK_TIMEOUT"  # issue 27, point 5: it was INVALID_CALLBACK
    assert isinstance(caught.value, LoopbackError)
    message = str(caught.value)
    assert "within 0.2 s" in message
    assert REDIRECT_URI in message
    assert f"port {PORT}" in message
    assert "registered" in message
    assert len(opened) == 1


def browser_that_waits_for_the_page(url: str) -> bool:
    """An ``open_browser`` that makes the whole round trip before it returns (a headless browser, a test
    helper): the authorize URL, then the callback, and the page it ends on."""
    with httpx.Client(trust_env=False, timeout=10) as http:
        answer = http.get(url)
        assert answer.status_code == 302
        page = http.get(answer.headers["location"])
    assert page.status_code == 200, page.text
    assert "Signed in" in page.text
    return True


def test_an_open_browser_that_completes_the_round_trip_before_returning_signs_in_at_once_and_quietly(
    sandbox: SandboxProcess, capfd: pytest.CaptureFixture[str]
) -> None:
    """Issue 27, point 5: the callback waited for the sign-in's outcome while the sign-in waited for
    open_browser to return: stalled until the browser gave up, then "Open this address" printed and a
    BrokenPipeError traceback from the server, although the sign-in succeeded."""
    m = manager(sandbox)
    started = time.monotonic()
    session = sign_in_with_loopback(m, open_browser=browser_that_waits_for_the_page, timeout=30)
    assert time.monotonic() - started < 5
    assert session.scope == "profile:read"
    printed = capfd.readouterr()
    assert "Open this address" not in printed.err
    assert "Traceback" not in printed.err


async def test_the_async_sign_in_does_not_stall_on_such_a_browser_either(
    sandbox: SandboxProcess, capfd: pytest.CaptureFixture[str]
) -> None:
    m = AsyncTokenManager(sandbox.url, "cli", REDIRECT_URI, ["profile:read"], now=sandbox.clock.now)
    started = time.monotonic()
    await sign_in_with_loopback_async(m, open_browser=browser_that_waits_for_the_page, timeout=30)
    assert time.monotonic() - started < 5
    assert "Open this address" not in capfd.readouterr().err


def test_a_browser_that_hangs_up_before_the_page_leaves_no_traceback(capfd: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    with LoopbackServer(f"http://127.0.0.1:{port}/cb") as server:
        with socket.create_connection(("127.0.0.1", port)) as browser:
            browser.sendall(b"GET /cb?code=c&state=s HTTP/1.1\r\nHost: x\r\n\r\n")
            assert server.wait(timeout=10).endswith("/cb?code=c&state=s")
            browser.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # a reset
        time.sleep(0.1)
        server.respond(None)
    assert "Traceback" not in capfd.readouterr().err


def test_only_the_first_get_of_the_redirect_path_is_the_callback() -> None:
    port = free_port()
    with LoopbackServer(f"http://127.0.0.1:{port}/cb") as server, httpx.Client(trust_env=False, timeout=10) as http:
        assert http.get(f"http://127.0.0.1:{port}/favicon.ico").status_code == 404
        answers: list[httpx.Response] = []
        visit = threading.Thread(target=lambda: answers.append(http.get(f"http://127.0.0.1:{port}/cb?code=c&state=s")))
        visit.start()
        callback = server.wait(timeout=10)
        # The Host header is not trusted: the URL is the redirect URI's origin and the request's path.
        assert callback == f"http://127.0.0.1:{port}/cb?code=c&state=s"
        with httpx.Client(trust_env=False, timeout=10) as other:
            assert other.get(f"http://127.0.0.1:{port}/cb?code=x&state=y").status_code == 404
        server.respond(None)
        visit.join(timeout=10)
        assert answers[0].status_code == 200


def test_when_no_browser_opens_the_address_is_printed(
    sandbox: SandboxProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    m = manager(sandbox)
    with pytest.raises(TokenManagerError):
        sign_in_with_loopback(m, open_browser=lambda url: False, timeout=0.1)
    printed = capsys.readouterr().err
    assert "Open this address in a browser to sign in:" in printed
    assert f"{sandbox.url}/oauth/authorize?" in printed


@pytest.mark.parametrize(
    "redirect_uri",
    ["https://127.0.0.1:8080/cb", "http://example.org:8080/cb", "http://127.0.0.1/cb", "myapp:/callback"],
)
def test_a_redirect_uri_that_is_not_loopback_with_a_port_is_refused(redirect_uri: str) -> None:
    with pytest.raises(InvalidOptionsError) as caught:
        LoopbackServer(redirect_uri)
    assert "127.0.0.1:<port>" in str(caught.value)


def test_a_redirect_uri_the_tenant_does_not_know_fails_at_once_before_the_browser_opens(
    sandbox: SandboxProcess,
) -> None:
    unregistered = f"http://127.0.0.1:{free_port()}/callback"
    m = TokenManager(sandbox.url, "cli", unregistered, ["profile:read"], now=sandbox.clock.now)
    opened: list[str] = []

    def browser(url: str) -> bool:
        opened.append(url)
        return True

    with pytest.raises(LoopbackError) as caught:
        sign_in_with_loopback(m, open_browser=browser, timeout=30)
    assert (caught.value.code, caught.value.status) == ("REDIRECT_URI_REFUSED", 400)
    assert unregistered in str(caught.value)
    assert "registered for client cli" in str(caught.value)
    assert opened == []


def test_the_check_tells_nothing_from_a_redirect_a_5xx_or_no_answer() -> None:
    url = "https://acme.tenant.test/oauth/authorize?client_id=c&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcb&state=s"
    seen: list[httpx.Request] = []
    for answer in (302, 500, 404):

        def handler(request: httpx.Request, status: int = answer) -> httpx.Response:
            seen.append(request)
            return httpx.Response(status, headers={"Location": "http://127.0.0.1:1/cb?error=invalid_request"})

        with LoopbackServer(f"http://127.0.0.1:{free_port()}/cb") as server:
            server.check_redirect(url, transport=httpx.MockTransport(handler))
    # Only client_id and redirect_uri are sent: nothing that could be approved.
    assert {tuple(sorted(r.url.params.keys())) for r in seen} == {("client_id", "redirect_uri")}

    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with LoopbackServer(f"http://127.0.0.1:{free_port()}/cb") as server:
        server.check_redirect(url, transport=httpx.MockTransport(down))


def test_port_0_binds_a_free_port_whose_redirect_uri_is_readable_but_a_sign_in_needs_the_registered_one(
    sandbox: SandboxProcess,
) -> None:
    with LoopbackServer("http://127.0.0.1:0/cb?x=1") as server, httpx.Client(trust_env=False, timeout=10) as http:
        assert server.port != 0
        assert server.redirect_uri == f"http://127.0.0.1:{server.port}/cb?x=1"
        visit = threading.Thread(target=lambda: http.get(f"http://127.0.0.1:{server.port}/cb?code=c&state=s"))
        visit.start()
        assert server.wait(timeout=10) == f"http://127.0.0.1:{server.port}/cb?code=c&state=s"
        server.respond(None)
        visit.join(timeout=10)
    m = TokenManager(sandbox.url, "cli", "http://127.0.0.1:0/callback", ["profile:read"], now=sandbox.clock.now)
    with pytest.raises(InvalidOptionsError, match="port 0 cannot be registered"):
        sign_in_with_loopback(m, open_browser=lambda url: True, timeout=1)
