"""Sign-in for command-line tools: the browser comes back to a one-shot server on the loopback interface.

RFC 8252 §7.3 describes the loopback redirect (``http://127.0.0.1:<port>/<path>``) and lets the
client pick any port at run time. This service compares the redirect URI *exactly* with a registered
one (service description §2: "must exactly match"), so the port cannot vary: the server binds the
port of the registered redirect URI, and a busy port is an error that names it. The loopback
interface only (RFC 8252 §8.3): nothing outside the machine can reach the server.
"""

from __future__ import annotations

import errno
import http.server
import queue
import socket
import sys
import threading
import webbrowser
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx

from ._base_url import is_loopback_host
from .errors import InvalidOptionsError
from .token_errors import TokenErrorCode, TokenManagerError

if TYPE_CHECKING:
    from .token_manager import AsyncTokenManager, SessionInfo, TokenManager

__all__ = ["LoopbackError", "LoopbackServer", "sign_in_with_loopback", "sign_in_with_loopback_async"]


class LoopbackError(TokenManagerError):
    """A loopback sign-in that cannot go on, with the TypeScript kit's codes:

    - ``CALLBACK_PORT_IN_USE``: another program listens on the redirect URI's port; ``port`` is set.
    - ``REDIRECT_URI_REFUSED``: the tenant answered the authorize request with an error page instead
      of redirecting back (the redirect URI, or the client id, is not registered); ``status`` is set.
    - ``CALLBACK_TIMEOUT``: no callback arrived within the wait (:meth:`LoopbackServer.wait`), as in
      the TypeScript kit's ``waitForCallback``.

    Example:
        >>> LoopbackError("CALLBACK_PORT_IN_USE", "port 53682 is in use", port=53682).port
        53682

    See RFC 8252 §7.3; RFC 6749 §4.1.2.1.
    """

    def __init__(
        self,
        code: TokenErrorCode,
        message: str,
        *,
        port: int | None = None,
        status: int | None = None,
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(code, message, cause=cause)
        self.port = port
        self.status = status


_DONE_PAGE = "Signed in. You can close this window and return to the terminal."
_FAILED_PAGE = "Sign-in failed: {reason}. Return to the terminal for details; you can close this window."


def _check(redirect_uri: str) -> tuple[str, int, str]:
    parts = urlsplit(redirect_uri)
    try:
        port = parts.port
    except ValueError:
        port = None
    host = (parts.hostname or "").lower()
    if parts.scheme != "http" or not is_loopback_host(host) or port is None:
        raise InvalidOptionsError(
            "redirect_uri",
            "a loopback sign-in needs http://127.0.0.1:<port>/<path> (or localhost, [::1]) with the port "
            "registered for the client (RFC 8252 §7.3)",
        )
    # localhost is served on 127.0.0.1 (RFC 8252 §8.3 recommends the address over the name).
    bind = "::1" if host == "::1" else "127.0.0.1" if host == "localhost" else host
    return bind, port, parts.path or "/"


class LoopbackServer:
    """A one-shot HTTP server on the loopback port of ``redirect_uri`` that waits for the authorization
    callback (RFC 8252 §7.3). Use it directly to drive the browser yourself, or through
    :func:`sign_in_with_loopback`.

    The first ``GET`` of the redirect URI's path is the callback; other requests get 404. The browser's
    request is held open until :meth:`respond` says how the sign-in ended, so its page tells the truth.

    Attributes:
        redirect_uri: the bound redirect URI: character for character the one given (the registered
            one: the tenant compares it exactly), or, when it asks for port 0 (tests against a sandbox
            whose client is registered after the server listens), with the port the system chose.
        port: the bound port.

    Raises:
        InvalidOptionsError: ``redirect_uri`` is not http to a loopback address with a port.
        LoopbackError: ``CALLBACK_PORT_IN_USE`` when the port is taken (``port`` and the message name it).

    Example:
        >>> with LoopbackServer("http://127.0.0.1:53682/callback") as server:  # doctest: +SKIP
        ...     webbrowser.open(manager.begin_authorization().url)
        ...     callback = server.wait(timeout=300)
        ...     server.respond(None)
    """

    def __init__(self, redirect_uri: str) -> None:
        bind, port, path = _check(redirect_uri)
        self.redirect_uri = redirect_uri
        self.port = port
        self._path = path
        self._callbacks: queue.Queue[str] = queue.Queue()
        self._outcome: queue.Queue[str | None] = queue.Queue()
        self._answered = threading.Event()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            # An idle connection (a browser's speculative one) is dropped after this many seconds.
            timeout = 30

            def do_GET(self) -> None:
                if urlsplit(self.path).path != owner._path or not owner._take():
                    self.send_error(404)
                    return
                owner._callbacks.put(owner._origin + self.path)
                try:
                    failure = owner._outcome.get(timeout=120)
                except queue.Empty:
                    failure = "no outcome"
                try:
                    self._answer(failure)
                except OSError:
                    pass  # the browser left before its page (closed, reset): nothing to tell it
                finally:
                    owner._answered.set()

            def _answer(self, failure: str | None) -> None:
                page = _DONE_PAGE if failure is None else _FAILED_PAGE.format(reason=failure)
                body = page.encode("utf-8")
                self.send_response(200 if failure is None else 400)
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                """Silent: the request line holds the code and the state."""

        family = socket.AF_INET6 if ":" in bind else socket.AF_INET

        class Server(http.server.ThreadingHTTPServer):
            address_family = family
            # SO_REUSEADDR: the connections of a sign-in just done (TIME_WAIT) do not keep the port; a
            # program listening on it still does (Linux and macOS refuse a second listener).
            allow_reuse_address = sys.platform != "win32"  # on Windows it would let another program share it
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                """Silent: a browser's connection that fails (reset, closed early) is not the sign-in's
                failure, and socketserver's default prints a traceback to the user's terminal."""

        self._taken = False
        self._take_lock = threading.Lock()
        try:
            self._server = Server((bind, port), Handler)
        except OSError as e:
            if e.errno == errno.EACCES:
                raise InvalidOptionsError(
                    "redirect_uri", f"this user may not listen on port {port} (below 1024 needs privileges)"
                ) from e
            if e.errno == errno.EADDRINUSE:
                raise LoopbackError(
                    "CALLBACK_PORT_IN_USE",
                    f"port {port} of {bind} is in use by another program (an earlier sign-in still waiting?). "
                    f"The sign-in must come back to exactly {redirect_uri}, the redirect URI registered with "
                    "the tenant: stop that program rather than choosing another port",
                    port=port,
                ) from None
            raise TokenManagerError("INVALID_CALLBACK", f"cannot listen on {bind} port {port}: {e.strerror}") from e
        self.port = int(self._server.server_address[1])
        if port == 0:
            given = urlsplit(redirect_uri)
            host = f"[{bind}]" if ":" in bind else bind
            redirect_uri = urlunsplit((given.scheme, f"{host}:{self.port}", given.path, given.query, ""))
            self.redirect_uri = redirect_uri
        # The callback's URL is the redirect URI's origin and the request's path and query: the Host
        # header is not trusted (another page may send any).
        given = urlsplit(redirect_uri)
        self._origin = f"{given.scheme}://{given.netloc}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="tenant-integration-loopback")
        self._thread.daemon = True
        self._thread.start()

    @property
    def called_back(self) -> bool:
        """Whether the callback has arrived."""
        return self._taken

    def _take(self) -> bool:
        with self._take_lock:
            if self._taken:
                return False
            self._taken = True
            return True

    def check_redirect(self, authorize_url: str, *, transport: httpx.BaseTransport | None = None) -> None:
        """Asks the tenant, before the browser goes there, whether it would send the browser back here:
        a GET of the authorize endpoint with only the request's ``client_id`` and ``redirect_uri`` (no
        state, no challenge: nothing can be approved). The kit assumes, from RFC 6749 §4.1.2.1 (the
        service description does not show the answer), that the tenant checks those two before it
        redirects anywhere and shows an error page when either is not registered; any other fault is
        redirected back. So a 4xx page means the redirect URI (or the client id) is not
        registered, and the sign-in fails at once instead of waiting for a callback that cannot come.
        A redirect, a login page, a 5xx or no answer tell nothing: the sign-in goes on.

        Raises:
            LoopbackError: ``REDIRECT_URI_REFUSED``, with the HTTP ``status``; the message says what to check.

        See RFC 6749 §3.1.2.4, §4.1.2.1.
        """
        asked = urlsplit(authorize_url)
        query = dict(parse_qsl(asked.query))
        client_id, redirect_uri = query.get("client_id", ""), query.get("redirect_uri", "")
        probe = urlunsplit(
            (
                asked.scheme,
                asked.netloc,
                asked.path,
                urlencode({"client_id": client_id, "redirect_uri": redirect_uri}),
                "",
            )
        )
        try:
            with httpx.Client(transport=transport, follow_redirects=False, timeout=10.0) as http:
                status = http.get(probe, headers={"Accept": "text/html"}).status_code
        except httpx.HTTPError:
            return  # unreachable: nothing learnt, the wait goes on
        # 404, 408 and 429 say nothing of the registration; a redirect, a login page or a 5xx neither.
        if not 400 <= status <= 499 or status in (404, 408, 429):
            return
        raise LoopbackError(
            "REDIRECT_URI_REFUSED",
            f"the tenant answered the authorize request with an error page (HTTP {status}) instead of "
            f"redirecting to {redirect_uri}: check that this redirect URI is registered for client "
            f"{client_id} exactly as written (scheme, host, port {self.port} and path), and the client id",
            status=status,
        )

    def wait(self, timeout: float = 300.0) -> str:
        """Waits for the callback and returns its full URL (pass it to ``complete_authorization``).

        Raises:
            LoopbackError: ``CALLBACK_TIMEOUT`` when none arrived within ``timeout`` seconds; the
                message says what to check when the browser stopped on an error page at the tenant.

        See RFC 8252 §7.3.
        """
        try:
            return self._callbacks.get(timeout=timeout)
        except queue.Empty:
            raise LoopbackError(
                "CALLBACK_TIMEOUT",
                f"no authorization callback arrived at {self.redirect_uri} within {timeout:g} s. If the "
                "browser shows an error page at the tenant instead, check that the client_id is registered "
                f"there with exactly this redirect URI (port {self.port} and path included) and that it may "
                "ask for the scopes requested.",
            ) from None

    def respond(self, failure: str | None) -> None:
        """Ends the browser's request: the success page, or the failure page with ``failure`` (a reason
        that holds no secret, e.g. an error code)."""
        self._outcome.put(failure)
        self._answered.wait(timeout=5)

    def close(self) -> None:
        """Stops the server and frees the port; safe to call twice."""
        self._outcome.put("the sign-in was stopped")
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> LoopbackServer:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


def _registered_port(redirect_uri: str) -> None:
    if _check(redirect_uri)[1] == 0:
        raise InvalidOptionsError(
            "redirect_uri",
            "port 0 cannot be registered with the tenant, which compares redirect URIs exactly: give the "
            "registered port (LoopbackServer takes port 0 for tests)",
        )


def _show(url: str, open_browser: Callable[[str], object], server: LoopbackServer) -> None:
    """Opens the browser in a thread of its own, so that the callback is taken while ``open_browser``
    runs: one that makes the whole round trip before it returns (a headless browser, a test helper)
    waits for the page, which waits for the sign-in's outcome. Prints the address when no browser
    opened, unless the callback came all the same."""

    def show() -> None:
        opened = False
        try:
            opened = bool(open_browser(url))
        except Exception:  # no browser: the address is shown instead
            opened = False
        if not opened and not server.called_back:
            # The user's own terminal: the address must be visited, and it holds no token.
            sys.stderr.write(f"Open this address in a browser to sign in:\n{url}\n")
            sys.stderr.flush()

    threading.Thread(target=show, name="tenant-integration-browser", daemon=True).start()


def _reason(error: BaseException) -> str:
    code = getattr(error, "code", None)
    detail = getattr(error, "error", None)
    return f"{code} ({detail})" if code and detail else str(code or type(error).__name__)


def sign_in_with_loopback(
    manager: TokenManager,
    *,
    open_browser: Callable[[str], object] = webbrowser.open,
    timeout: float = 300.0,
    check_transport: httpx.BaseTransport | None = None,
) -> SessionInfo:
    """Signs ``manager`` in from a command-line tool: listens on the registered loopback redirect URI's
    port, asks the tenant whether it knows that redirect URI (:meth:`LoopbackServer.check_redirect`),
    opens the authorize URL in the browser (or prints it when no browser opens), waits for one callback,
    completes the authorization and tells the browser how it ended.

    The manager's ``redirect_uri`` must be ``http://127.0.0.1:<port>/<path>`` (or ``localhost``,
    ``[::1]``) with the port registered for the client: this service compares redirect URIs exactly.

    Args:
        manager: the token manager to sign in.
        open_browser: opens a URL, returning whether it did (default :func:`webbrowser.open`). It runs
            in a thread of its own, so it may also make the whole round trip before it returns.
        timeout: seconds to wait for the callback (default 300).
        check_transport: the httpx transport of :meth:`LoopbackServer.check_redirect` (tests).

    Raises:
        InvalidOptionsError: the redirect URI is not a loopback one with a port.
        LoopbackError: ``CALLBACK_PORT_IN_USE`` (``port`` and the message name the port);
            ``REDIRECT_URI_REFUSED`` when the tenant shows its error page for the authorize request (the
            redirect URI or client id is not registered), found before the browser is opened.
        LoopbackError: ``CALLBACK_TIMEOUT`` when no callback arrived in time (the message says what
            to check at the tenant).
        TokenManagerError: what ``complete_authorization`` raises (``AUTHORIZATION_DENIED``,
            ``STATE_MISMATCH``...).

    Example:
        >>> session = sign_in_with_loopback(manager)  # doctest: +SKIP

    See RFC 8252 §7.3, §8.3; RFC 6749 §4.1; RFC 7636.
    """
    _registered_port(manager.redirect_uri)
    with LoopbackServer(manager.redirect_uri) as server:
        request = manager.begin_authorization()
        server.check_redirect(request.url, transport=check_transport)
        _show(request.url, open_browser, server)
        callback = server.wait(timeout)
        try:
            session = manager.complete_authorization(callback)
        except BaseException as e:
            server.respond(_reason(e))
            raise
        server.respond(None)
        return session


async def sign_in_with_loopback_async(
    manager: AsyncTokenManager,
    *,
    open_browser: Callable[[str], object] = webbrowser.open,
    timeout: float = 300.0,  # noqa: ASYNC109 (the callback wait runs in a thread, bounded by it)
    check_transport: httpx.BaseTransport | None = None,
) -> SessionInfo:
    """:func:`sign_in_with_loopback` for an :class:`~tenant_integration.AsyncTokenManager` (the wait
    runs in a worker thread). Same arguments, same errors.

    See RFC 8252 §7.3, §8.3; RFC 6749 §4.1; RFC 7636.
    """
    import asyncio

    _registered_port(manager.redirect_uri)
    server = await asyncio.to_thread(LoopbackServer, manager.redirect_uri)
    try:
        request = await manager.begin_authorization()
        await asyncio.to_thread(server.check_redirect, request.url, transport=check_transport)
        _show(request.url, open_browser, server)
        callback = await asyncio.to_thread(server.wait, timeout)
        try:
            session = await manager.complete_authorization(callback)
        except BaseException as e:
            server.respond(_reason(e))
            raise
        server.respond(None)
        return session
    finally:
        await asyncio.to_thread(server.close)
