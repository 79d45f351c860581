"""A tiny web app whose users each connect their own tenant account: a server acting for many users with
the Python kit (``AsyncSessions`` and the ASGI sign-in handlers of ``tenant_integration.signin_http``), on
Starlette, served by uvicorn. It has a login of its own (pick a user name, no password: a demo), a
"Connect your tenant account" button, and a page showing ``GET /api/v1/auth/user`` of the tenant account
connected by whoever is logged in.

    PORT          the port to listen on, on 127.0.0.1 (default 8092)
    TENANT_URL    the tenant (default http://127.0.0.1:4020, the sandbox ``pnpm start`` serves)
    CLIENT_ID     the OAuth client (default demo-server)
    REDIRECT_URI  the redirect URI registered for it (default http://127.0.0.1:<PORT>/callback)
    TOKEN_FILE    keep the sessions in this token file (several processes may share it)

Without TOKEN_FILE the sessions live in memory. Each of the app's users is one session of the kit, named
by the user's name: every call names it, so no user is ever served another's tokens.

See RFC 6749 §4.1; RFC 9700 §4.7.1 (the sign-in is bound to the browser that began it).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from html import escape
from typing import Any
from urllib.parse import parse_qs, urlsplit

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from tenant_integration import AsyncSessions, FileStorage, HttpError, MemoryStorage, TenantIntegrationError
from tenant_integration.signin_http import AsgiSignIn

log = logging.getLogger("example-python-server")

#: The cookie of the app's own login: a random value naming a login kept on the server.
LOGIN_COOKIE = "app-login"


def valid_user_name(name: str) -> bool:
    """The form of a user's name here: 1 to 32 lowercase ASCII letters and digits. It is the session id of
    the user's tenant account, so it must fit the kit's rule (1 to 128 of ``A-Z a-z 0-9 - . _ ~ @ + = |``),
    which this stricter one does."""
    return 1 <= len(name) <= 32 and all(c in "abcdefghijklmnopqrstuvwxyz0123456789" for c in name)


@dataclass(frozen=True)
class Shown:
    """What the page shows of the logged-in user's tenant account."""

    connected: bool
    tenant_user: str = ""  # GET /api/v1/auth/user of the connected account, as indented JSON
    problem: str = ""  # why the account could not be shown


class App:
    """The web app on one :class:`AsyncSessions`: its own login (a cookie naming a login kept on the
    server) and its pages; the sign-in is the kit's :class:`AsgiSignIn`."""

    def __init__(self, sessions: AsyncSessions) -> None:
        self.sessions = sessions
        self.logins: dict[str, str] = {}  # login cookie value -> user name; a real app has its own
        self.sign_in = AsgiSignIn(
            sessions,
            session_of=self.user_of,  # the app's logged-in user names the session, never the query
            on_error=lambda error, _scope: log.warning("tenant sign-in refused: %s", error),
        )

    def user_of(self, scope: Mapping[str, Any]) -> str | None:
        """The logged-in user of a request (its ASGI scope), from the app's own login cookie."""
        login = Request(dict(scope)).cookies.get(LOGIN_COOKIE)
        return None if login is None else self.logins.get(login)

    async def home(self, request: Request) -> Response:
        user = self.user_of(request.scope)
        shown = None if user is None else await self.tenant_user(user)
        return HTMLResponse(page(user, shown), headers={"cache-control": "no-store"})

    async def tenant_user(self, user: str) -> Shown:
        """What the tenant says of the user's connected account: through the user's own session only."""
        if not await self.sessions.is_signed_in(user):
            return Shown(connected=False)
        try:
            record = await self.sessions.client(user).get_user()
        except HttpError as error:
            return Shown(connected=True, problem=f"the tenant answered {error.status}")
        except TenantIntegrationError as error:
            if error.code in ("NOT_SIGNED_IN", "SESSION_ENDED"):
                return Shown(connected=False, problem="the tenant session ended: connect again")
            return Shown(connected=True, problem=str(error))  # the kit's messages hold no token
        return Shown(connected=True, tenant_user=json.dumps(record, indent=2))

    async def log_in(self, request: Request) -> Response:
        """``POST /login``: logs the browser in as the form's user name (a demo: no password)."""
        name = parse_qs((await request.body()).decode("utf-8", "replace")).get("user", [""])[0]
        if not valid_user_name(name):
            return PlainTextResponse("A user name is 1 to 32 lowercase letters and digits.", status_code=400)
        login = secrets.token_urlsafe(32)
        self.logins[login] = name
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(LOGIN_COOKIE, login, path="/", httponly=True, samesite="lax")
        return response

    async def log_out(self, request: Request) -> Response:
        """``POST /logout``: forgets the browser's login (the tenant session stays, for the next login)."""
        login = request.cookies.get(LOGIN_COOKIE)
        if login is not None:
            self.logins.pop(login, None)
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(LOGIN_COOKIE, path="/")
        return response

    async def disconnect(self, request: Request) -> Response:
        """``POST /disconnect``: revokes the logged-in user's tenant session (RFC 7009) and forgets it."""
        user = self.user_of(request.scope)
        if user is not None:
            try:
                await self.sessions.revoke(user)
            except TenantIntegrationError as error:
                log.warning("revocation failed: %s", error)
        return RedirectResponse("/", status_code=303)

    def starlette(self) -> Starlette:
        """The Starlette app. The callback's route is the path of the sessions' redirect URI."""

        @asynccontextmanager
        async def lifespan(_app: Starlette) -> AsyncIterator[None]:
            yield
            await self.sessions.aclose()  # the shared HTTP connections

        return Starlette(
            routes=[
                Route("/", self.home),
                Route("/login", self.log_in, methods=["POST"]),
                Route("/logout", self.log_out, methods=["POST"]),
                Route("/connect", self.sign_in.start, methods=["POST"]),  # the binding cookie, then to the tenant
                Route(urlsplit(self.sessions.redirect_uri).path, self.sign_in.callback),  # checks, exchanges, stores
                Route("/disconnect", self.disconnect, methods=["POST"]),
            ],
            lifespan=lifespan,
        )


STYLE = "body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}"
STYLE += "pre{background:#f4f4f4;padding:1rem}"

LOGIN_FORM = """<form method="post" action="/login">
  <p><label for="user">User name</label>
  <input id="user" name="user" data-testid="login-name" pattern="[a-z0-9]{1,32}" required></p>
  <button type="submit" data-testid="login">Log in</button>
</form>"""


def account(user: str, shown: Shown) -> str:
    """The logged-in user's part of the page: their tenant account, or the button that connects it."""
    parts = [f'<p>Logged in to this app as <strong data-testid="app-user">{escape(user)}</strong>.</p>']
    if shown.problem:
        parts.append(f'<p data-testid="problem">{escape(shown.problem)}</p>')
    if shown.connected:
        parts.append("<p>Your tenant account:</p>")
        parts.append(f'<pre data-testid="tenant-user">{escape(shown.tenant_user)}</pre>')
        parts.append('<form method="post" action="/disconnect"><button type="submit" data-testid="disconnect">')
        parts.append("Disconnect your tenant account</button></form>")
    else:
        parts.append('<form method="post" action="/connect"><button type="submit" data-testid="connect">')
        parts.append("Connect your tenant account</button></form>")
    parts.append('<form method="post" action="/logout"><button type="submit" data-testid="logout">')
    parts.append("Log out</button></form>")
    return "\n".join(parts)


def page(user: str | None, shown: Shown | None) -> str:
    """The app's one page; every value in it is escaped. The ``data-testid``s are those the shared Chromium
    test of every kit's example server reads (tools/server-example-testing)."""
    body = LOGIN_FORM if user is None or shown is None else account(user, shown)
    return f"""<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Example Python server</title><style>{STYLE}</style></head>
<body>
<h1>Example Python server</h1>
{body}
</body>
</html>
"""


def main() -> None:
    """Makes the sessions from the environment and serves the app on 127.0.0.1 until SIGINT or SIGTERM."""
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    port = int(os.environ.get("PORT") or "8092")
    token_file = os.environ.get("TOKEN_FILE")
    # One sessions object for the whole server, one session per user of the app.
    sessions = AsyncSessions(
        base_url=os.environ.get("TENANT_URL") or "http://127.0.0.1:4020",
        client_id=os.environ.get("CLIENT_ID") or "demo-server",
        redirect_uri=os.environ.get("REDIRECT_URI") or f"http://127.0.0.1:{port}/callback",
        scopes=["profile:read"],
        storage=FileStorage(token_file) if token_file else MemoryStorage(),
    )
    # No access log: the callback's URL holds the authorization code and the state, which are never logged.
    uvicorn.run(App(sessions).starlette(), host="127.0.0.1", port=port, access_log=False)


if __name__ == "__main__":
    main()
