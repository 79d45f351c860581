"""Sign-in from a web backend: the "start sign-in" and "callback" handlers of a server acting for many
users (DESIGN-39 S6; ``spec/token-store/README.md``, "Binding a sign-in to its browser" and "Decisions
every kit follows"), as plain ASGI apps (Starlette, FastAPI, Quart, Litestar… mount them) and WSGI
apps (Flask, Django, any WSGI server), with no dependency. The Go kit's ``signinhttp``.

- **start** (GET or POST; 405 otherwise): the app's logged-in user (``session_of``, never the query
  string) is the session; 401 when nobody is logged in. It sets the binding cookie
  (``__Host-tenant-signin`` on https, ``tenant-signin`` on http; ``HttpOnly; SameSite=Lax; Path=/``,
  ``Secure`` on https, ``Max-Age`` the pending lifetime) with the value a valid cookie already had, or
  a new one, unless the app gives its own binding (``binding_of``), and redirects (303) to the tenant.
- **callback** (GET at the redirect URI's path only; 404 elsewhere): the callback URL is the
  configured redirect URI with the request's query (never rebuilt from ``Host`` or
  ``X-Forwarded-*``); the sign-in must have been begun in this browser and, unless ``any_session``,
  for the user logged in now; then 303 to ``after_sign_in``.
- Every answer has ``Cache-Control: no-store``, the callback's also ``Referrer-Policy: no-referrer``.
  Errors: 401 (nobody logged in), 503 for ``STORAGE_FAILED``, ``LOCK_TIMEOUT`` and ``TRANSIENT``
  (try later), 400 for any other refusal, each a short text holding no token, code, state or binding
  (a refusal of the kit's names its error code and, where a person can act on it, why: "the sign-in
  was started in another browser"), after ``on_error``.

Example (FastAPI, with Starlette's ``SessionMiddleware`` keeping the app's user):
    >>> handlers = AsgiSignIn(sessions, session_of=lambda scope: scope["session"].get("user_id"))  # doctest: +SKIP
    >>> app.add_route("/tenant/connect", handlers.start, methods=["POST"])  # doctest: +SKIP
    >>> app.add_route("/tenant/callback", handlers.callback)  # doctest: +SKIP

See RFC 6749 §4.1, §10.12; RFC 9700 §4.7.1; RFC 6265bis (cookie prefixes, SameSite).
"""

from __future__ import annotations

import contextlib
import inspect
import math
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from http.cookies import SimpleCookie
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ._binding import is_binding_cookie
from .errors import TenantIntegrationError
from .token_errors import TokenManagerError

if TYPE_CHECKING:
    from ._async.sessions import AsyncSessions
    from ._sync.sessions import Sessions

__all__ = ["AsgiApp", "AsgiSignIn", "WsgiSignIn"]

#: The codes of a refusal that may pass if tried later: 503.
_LATER = frozenset({"STORAGE_FAILED", "LOCK_TIMEOUT", "TRANSIENT"})
#: The short texts of the answers: none holds a token, code, state or binding.
_TEXTS = {
    400: "The sign-in could not be completed; start it again.",
    401: "Log in first.",
    404: "Not found.",
    405: "Method not allowed.",
    503: "The sign-in could not be completed now; try again in a moment.",
}

Request = Mapping[str, Any]
SessionOf = Callable[[Request], "str | Awaitable[str | None] | None"]
BindingOf = Callable[[Request], "str | Awaitable[str | None] | None"]
OnError = Callable[[BaseException, Request], object]


@dataclass(frozen=True)
class Answer:
    """An HTTP answer: status, headers, body."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes = b""


def cookie_name(redirect_uri: str) -> str:
    """The binding cookie's name: ``__Host-tenant-signin`` when the redirect URI is https, else
    ``tenant-signin`` (loopback development, where a cookie cannot be ``Secure``)."""
    return "__Host-tenant-signin" if urlsplit(redirect_uri).scheme.lower() == "https" else "tenant-signin"


def set_cookie(redirect_uri: str, binding: str, pending_lifetime: float) -> str:
    """The ``Set-Cookie`` value of the binding cookie."""
    secure = urlsplit(redirect_uri).scheme.lower() == "https"
    attributes = [
        f"{cookie_name(redirect_uri)}={binding}",
        "Path=/",
        f"Max-Age={math.ceil(pending_lifetime)}",
        "HttpOnly",
        "SameSite=Lax",
    ]
    if secure:
        attributes.append("Secure")
    return "; ".join(attributes)


def cookie_binding(cookie_header: str | None, redirect_uri: str) -> str | None:
    """The binding the request's ``Cookie`` header brings: the cookie's value when it has the binding's
    form (43 base64url characters), else ``None``."""
    if not cookie_header:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(cookie_header)
    except Exception:
        return None
    morsel = jar.get(cookie_name(redirect_uri))
    value = None if morsel is None else morsel.value
    return value if is_binding_cookie(value) else None


#: Why a sign-in was refused, in words for the browser, for the codes a person can act on (the Go
#: kit's ``signinhttp`` and the TypeScript kit's ``signInHandlers`` say the same).
_WHY = {
    "NO_PENDING_SIGN_IN": "it was already used, or has expired",
    "STATE_EXPIRED": "it expired",
    "INVALID_SESSION_ID": "the user's id cannot name a session",
}


def refused_text(error: BaseException) -> str | None:
    """The 400 answer's text for a refusal of the kit's: its code and why (``STATE_MISMATCH``'s own
    detail, "the sign-in was started in another browser", which holds no state, or the words of the
    code); ``None`` for any other error (the plain text)."""
    if not isinstance(error, TokenManagerError):
        return None
    message = str(error)
    why = _WHY.get(error.code)
    if error.code == "STATE_MISMATCH" and message.startswith("STATE_MISMATCH: "):
        why = message.removeprefix("STATE_MISMATCH: ")
    elif error.code == "AUTHORIZATION_DENIED" and error.error:
        why = f"access was not granted ({error.error})"
    return None if why is None else f"The sign-in could not be completed ({error.code}): {why}; start it again."


def _plain(status: int, extra: Iterable[tuple[str, str]] = (), text: str | None = None) -> Answer:
    headers = [("content-type", "text/plain; charset=utf-8"), ("cache-control", "no-store"), *extra]
    return Answer(status, headers, (text or _TEXTS[status]).encode())


def _redirect(location: str, extra: Iterable[tuple[str, str]] = ()) -> Answer:
    return Answer(303, [("location", location), ("cache-control", "no-store"), *extra])


def refusal(error: BaseException) -> int:
    """The status of a refused start or callback: 503 for a refusal that may pass later, else 400."""
    code = getattr(error, "code", None)
    return 503 if isinstance(error, TenantIntegrationError) and code in _LATER else 400


def _header(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> str | None:
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class _Options:
    """What both kinds of handlers are given."""

    def __init__(
        self,
        redirect_uri: str,
        pending_lifetime: float,
        *,
        session_of: SessionOf,
        binding_of: BindingOf | None,
        after_sign_in: str,
        any_session: bool,
        on_error: OnError | None,
    ) -> None:
        if not callable(session_of):
            raise TenantIntegrationError("INVALID_OPTIONS", "session_of: give a function of the request")
        self.redirect_uri = redirect_uri
        self.path = urlsplit(redirect_uri).path or "/"
        self.pending_lifetime = pending_lifetime
        self.session_of = session_of
        self.binding_of = binding_of
        self.after_sign_in = after_sign_in
        self.any_session = any_session
        self.on_error = on_error

    def failed(self, error: BaseException, request: Request, extra: Iterable[tuple[str, str]] = ()) -> Answer:
        if self.on_error is not None:
            with contextlib.suppress(Exception):  # the hook's failure is its own; the answer stays short
                self.on_error(error, request)
        status = refusal(error)
        return _plain(status, extra, refused_text(error) if status == 400 else None)

    def callback_url(self, query: str) -> str:
        """The configured redirect URI without its query, with the request's query."""
        base = self.redirect_uri.split("#", 1)[0].split("?", 1)[0]
        return f"{base}?{query}" if query else base


class AsgiSignIn:
    """The start and callback handlers of an :class:`~tenant_integration.AsyncSessions`, as ASGI apps
    (:attr:`start`, :attr:`callback`).

    Args:
        sessions: the server's :class:`~tenant_integration.AsyncSessions`.
        session_of: the app's logged-in user's session id from the ASGI ``scope`` (e.g.
            ``scope["session"]["user_id"]`` with Starlette's ``SessionMiddleware``, or ``scope["user"]``);
            ``None`` when nobody is logged in. May be a coroutine function.
        binding_of: the app's own binding from the ``scope`` (a value only this browser's requests
            carry, its server session's id), instead of the cookie; default: the cookie.
        after_sign_in: where the callback sends the browser once signed in (default ``/``).
        any_session: complete a sign-in for whichever session began it, not only the user logged in
            at the callback (for a login that does not reach the callback, e.g. a ``SameSite=Strict``
            cookie). Default ``False``.
        on_error: called with the error and the ``scope`` before an error answer.
    """

    def __init__(
        self,
        sessions: AsyncSessions,
        *,
        session_of: SessionOf,
        binding_of: BindingOf | None = None,
        after_sign_in: str = "/",
        any_session: bool = False,
        on_error: OnError | None = None,
    ) -> None:
        self._sessions = sessions
        self._o = _Options(
            sessions.redirect_uri,
            sessions.pending_lifetime,
            session_of=session_of,
            binding_of=binding_of,
            after_sign_in=after_sign_in,
            any_session=any_session,
            on_error=on_error,
        )
        #: ASGI app: begins a sign-in for the logged-in user and redirects to the tenant.
        self.start = AsgiApp(self._start)
        #: ASGI app: completes the sign-in of the callback and redirects to ``after_sign_in``.
        self.callback = AsgiApp(self._callback)

    async def _binding(self, scope: Request) -> str | None:
        if self._o.binding_of is not None:
            value: str | None = await _maybe_await(self._o.binding_of(scope))
            return value or None
        return cookie_binding(_header(scope.get("headers", []), b"cookie"), self._o.redirect_uri)

    async def _start(self, scope: Request) -> Answer:
        if scope.get("method") not in ("GET", "POST"):
            return _plain(405, [("allow", "GET, POST")])
        try:
            session_id = await _maybe_await(self._o.session_of(scope))
            if not session_id:
                return _plain(401)
            binding = await self._binding(scope)
            own = self._o.binding_of is not None
            sign_in = await self._sessions.begin_sign_in(session_id, binding=binding)
        except Exception as e:
            return self._o.failed(e, scope)
        cookie = (
            [] if own else [("set-cookie", set_cookie(self._o.redirect_uri, sign_in.binding, self._o.pending_lifetime))]
        )
        return _redirect(sign_in.url, cookie)

    async def _callback(self, scope: Request) -> Answer:
        referrer = [("referrer-policy", "no-referrer")]
        if scope.get("method") != "GET":
            return _plain(405, [("allow", "GET"), *referrer])
        path = str(scope.get("path", ""))
        # Mounted (Starlette, FastAPI): the path is the full one, or the part after root_path.
        if self._o.path not in (path, str(scope.get("root_path", "")) + path):
            return _plain(404, referrer)
        try:
            expected = None
            if not self._o.any_session:
                expected = await _maybe_await(self._o.session_of(scope))
                if not expected:
                    return _plain(401, referrer)
            query = bytes(scope.get("query_string", b"")).decode("latin-1")
            binding = await self._binding(scope)
            await self._sessions.complete_sign_in(self._o.callback_url(query), binding=binding, session_id=expected)
        except Exception as e:
            return self._o.failed(e, scope, referrer)
        return _redirect(self._o.after_sign_in, referrer)


class AsgiApp:
    """One handler as an ASGI app: an object, not a function, so that Starlette's ``Route`` (and
    FastAPI's ``app.add_route``) serve it as an ASGI app rather than as a request endpoint."""

    def __init__(self, handle: Callable[[Request], Awaitable[Answer]]) -> None:
        self._handle = handle

    async def __call__(self, scope: Request, receive: Any, send: Any) -> None:
        answer = await self._handle(scope)
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in answer.headers]
        headers.append((b"content-length", str(len(answer.body)).encode()))
        await send({"type": "http.response.start", "status": answer.status, "headers": headers})
        await send({"type": "http.response.body", "body": answer.body})


_REASONS = {303: "See Other", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed"}


class WsgiSignIn:
    """The start and callback handlers of a :class:`~tenant_integration.Sessions`, as WSGI apps
    (:attr:`start`, :attr:`callback`): the sync variant of :class:`AsgiSignIn`, with the same options,
    each function taking the WSGI ``environ`` instead of the ASGI ``scope`` (no coroutine functions).
    """

    def __init__(
        self,
        sessions: Sessions,
        *,
        session_of: Callable[[Request], str | None],
        binding_of: Callable[[Request], str | None] | None = None,
        after_sign_in: str = "/",
        any_session: bool = False,
        on_error: OnError | None = None,
    ) -> None:
        self._sessions = sessions
        self._o = _Options(
            sessions.redirect_uri,
            sessions.pending_lifetime,
            session_of=session_of,
            binding_of=binding_of,
            after_sign_in=after_sign_in,
            any_session=any_session,
            on_error=on_error,
        )

    def _binding(self, environ: Request) -> str | None:
        if self._o.binding_of is not None:
            value: str | None = self._o.binding_of(environ)  # type: ignore[assignment]
            return value or None
        return cookie_binding(environ.get("HTTP_COOKIE"), self._o.redirect_uri)

    def start(self, environ: Request, start_response: Callable[..., object]) -> list[bytes]:
        """WSGI app: begins a sign-in for the logged-in user and redirects to the tenant."""
        return _respond(start_response, self._start(environ))

    def _start(self, environ: Request) -> Answer:
        if environ.get("REQUEST_METHOD") not in ("GET", "POST"):
            return _plain(405, [("allow", "GET, POST")])
        try:
            session_id = self._o.session_of(environ)
            if not session_id:
                return _plain(401)
            binding = self._binding(environ)
            own = self._o.binding_of is not None
            sign_in = self._sessions.begin_sign_in(session_id, binding=binding)  # type: ignore[arg-type]
        except Exception as e:
            return self._o.failed(e, environ)
        cookie = (
            [] if own else [("set-cookie", set_cookie(self._o.redirect_uri, sign_in.binding, self._o.pending_lifetime))]
        )
        return _redirect(sign_in.url, cookie)

    def callback(self, environ: Request, start_response: Callable[..., object]) -> list[bytes]:
        """WSGI app: completes the sign-in of the callback and redirects to ``after_sign_in``."""
        return _respond(start_response, self._callback(environ))

    def _callback(self, environ: Request) -> Answer:
        referrer = [("referrer-policy", "no-referrer")]
        if environ.get("REQUEST_METHOD") != "GET":
            return _plain(405, [("allow", "GET"), *referrer])
        path = (environ.get("SCRIPT_NAME", "") or "") + (environ.get("PATH_INFO", "") or "")
        if path != self._o.path:
            return _plain(404, referrer)
        try:
            expected = None
            if not self._o.any_session:
                expected = self._o.session_of(environ)
                if not expected:
                    return _plain(401, referrer)
            query = environ.get("QUERY_STRING", "") or ""
            binding = self._binding(environ)
            self._sessions.complete_sign_in(self._o.callback_url(query), binding=binding, session_id=expected)  # type: ignore[arg-type]
        except Exception as e:
            return self._o.failed(e, environ, referrer)
        return _redirect(self._o.after_sign_in, referrer)


def _respond(start_response: Callable[..., object], answer: Answer) -> list[bytes]:
    reason = _REASONS.get(answer.status, "Service Unavailable")
    start_response(f"{answer.status} {reason}", [*answer.headers, ("content-length", str(len(answer.body)))])
    return [answer.body]
