"""The Python of the reference's guides (spec/openapi.yaml) runs as a reader would run it, against the sandbox.
The quick start's snippet (``### In Python``): the first run signs in through the loopback redirect and prints
the user, the second run reads the token file and prints the user without opening a browser. The web server of
"A server acting for many users": two users of the app connect their tenant accounts at once and each is shown
their own."""

from __future__ import annotations

import re
import runpy
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from wsgiref.util import setup_testing_defaults

import httpx

from tenant_integration.testing import SandboxClient, SandboxProcess
from test_packaging import Reader, free_port

REPO = Path(__file__).resolve().parents[3]
SANDBOX = ["node", str(REPO / "packages" / "sandbox" / "dist" / "cli.js")]
GUIDE_TENANT = "http://127.0.0.1:4020"
GUIDE_REDIRECT = "http://127.0.0.1:53682/callback"


def python_snippet() -> str:
    """The first ``python`` block under ``### In Python`` of the quick start, unindented."""
    text = (REPO / "spec" / "openapi.yaml").read_text()
    section = text[text.index("    ### In Python") :]
    block = re.search(r"```python\n(.*?)\n\s*```", section, re.DOTALL)
    assert block is not None, "the quick start has no Python block under '### In Python'"
    return "\n".join(line.removeprefix("    ") for line in block.group(1).splitlines()) + "\n"


def test_the_guides_python_snippet_signs_in_once_and_keeps_its_tokens_between_runs(tmp_path: Path) -> None:
    snippet = python_snippet()
    assert f'"{GUIDE_TENANT}"' in snippet
    assert f'"{GUIDE_REDIRECT}"' in snippet
    redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
    with SandboxProcess(
        command=SANDBOX, clients=[SandboxClient(id="demo-cli", redirect_uris=(redirect_uri,))]
    ) as sandbox:
        program = tmp_path / "guide.py"
        program.write_text(snippet.replace(GUIDE_TENANT, sandbox.url).replace(GUIDE_REDIRECT, redirect_uri))
        reader = Reader.make(tmp_path)
        first = reader.run(Path(sys.executable), program)
        assert len(first.opened) == 1
        assert "Ada Lovelace" in first.stdout
        second = reader.run(Path(sys.executable), program)
        assert second.opened == []
        assert "Ada Lovelace" in second.stdout
        assert (reader.home / ".config" / "my-cli" / "tokens.json").stat().st_mode & 0o777 == 0o600
        assert sandbox.refresh_count() == 0


# The names "A server acting for many users" gives its server, which the test replaces.
MANY_USERS_TENANT = "https://acme.tenant.test"
MANY_USERS_REDIRECT = "https://app.example.org/tenant/callback"
MANY_USERS_FILE = "/var/lib/my-web-app/tokens.json"
#: The redirect URI the sandbox registers for the guide's client: never served (the test calls the app).
LOOPBACK_REDIRECT = "http://127.0.0.1:8090/tenant/callback"


def many_users_snippet() -> str:
    """The ``python`` block of the guide "A server acting for many users", unindented."""
    text = (REPO / "spec" / "openapi.yaml").read_text()
    start = text.index("    ## A server acting for many users\n")
    guide = text[start : text.index("\n    ## ", start + 1)]
    block = re.search(r"```python\n(.*?)\n\s*```", guide, re.DOTALL)
    assert block is not None, "the guide has no Python block"
    return "\n".join(line.removeprefix("    ") for line in block.group(1).splitlines()) + "\n"


def wsgi(
    app: Callable[..., Iterable[bytes]],
    method: str,
    path: str,
    *,
    user: str | None = None,
    query: str = "",
    cookie: str | None = None,
) -> tuple[str, dict[str, str], str]:
    """One request to a WSGI app, as the app's login middleware would pass it on: its status, headers
    (lowercase names) and body."""
    environ: dict[str, Any] = {"REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": query}
    setup_testing_defaults(environ)
    if user is not None:
        environ["myapp.user"] = user
    if cookie is not None:
        environ["HTTP_COOKIE"] = cookie
    answer: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], *_: object) -> None:
        answer.update(status=status, headers={name.lower(): value for name, value in headers})

    body = b"".join(app(environ, start_response)).decode()
    return answer["status"], answer["headers"], body


def test_the_many_users_guides_server_shows_each_user_their_own_tenant_account(tmp_path: Path) -> None:
    snippet = many_users_snippet()
    for fixed in (MANY_USERS_TENANT, MANY_USERS_REDIRECT, MANY_USERS_FILE):
        assert f'"{fixed}"' in snippet
    clients = [SandboxClient(id="my-web-app", redirect_uris=(LOOPBACK_REDIRECT,))]
    with SandboxProcess(command=SANDBOX, clients=clients) as sandbox:
        source = (
            snippet.replace(MANY_USERS_TENANT, sandbox.url)
            .replace(MANY_USERS_REDIRECT, LOOPBACK_REDIRECT)
            .replace(MANY_USERS_FILE, str(tmp_path / "tokens.json"))
        )
        program = tmp_path / "guide.py"
        program.write_text(source)
        guide = runpy.run_path(str(program), run_name="guide")  # not __main__: the test serves the app itself
        app = guide["app"]
        try:
            # Two users of the app connect at once (sandbox users 42 and 43), each in a browser of their own.
            users = {"ada@example.org": ("42", "Ada Lovelace"), "1000001": ("43", "Grace Hopper")}
            callbacks: dict[str, tuple[str, str]] = {}
            for user, (tenant_user, _) in users.items():
                status, headers, _ = wsgi(app, "POST", "/tenant/connect", user=user)
                assert status.startswith("303"), status
                assert headers["location"].startswith(f"{sandbox.url}/oauth/authorize?")
                cookie = headers["set-cookie"].split(";")[0]
                assert cookie.startswith("tenant-signin=")
                with httpx.Client(trust_env=False) as browser:
                    approved = browser.get(f"{headers['location']}&sandbox_user={tenant_user}")
                callbacks[user] = (urlsplit(approved.headers["location"]).query, cookie)
            # Grace's callback brought by Ada's browser completes nothing.
            query, _ = callbacks["1000001"]
            status, _, _ = wsgi(
                app, "GET", "/tenant/callback", user="1000001", query=query, cookie=callbacks["ada@example.org"][1]
            )
            assert status.startswith("400"), status
            status, _, body = wsgi(app, "GET", "/", user="1000001")
            assert status.startswith("409"), (status, body)
            # Ada's callback completes; Grace connects again, and both are shown their own account.
            query, cookie = callbacks["ada@example.org"]
            status, headers, _ = wsgi(
                app, "GET", "/tenant/callback", user="ada@example.org", query=query, cookie=cookie
            )
            assert status.startswith("303"), status
            status, headers, _ = wsgi(app, "POST", "/tenant/connect", user="1000001")
            with httpx.Client(trust_env=False) as browser:
                approved = browser.get(f"{headers['location']}&sandbox_user=43")
            cookie = headers["set-cookie"].split(";")[0]
            query = urlsplit(approved.headers["location"]).query
            status, _, _ = wsgi(app, "GET", "/tenant/callback", user="1000001", query=query, cookie=cookie)
            assert status.startswith("303"), status
            for user, (_, name) in users.items():
                assert wsgi(app, "GET", "/", user=user) == (
                    "200 OK",
                    {"content-type": "text/plain; charset=utf-8"},
                    f"Your tenant account: {name}",
                )
            assert wsgi(app, "GET", "/", user="never.connected")[0].startswith("409")
            assert wsgi(app, "GET", "/")[0].startswith("401")
        finally:
            guide["sessions"].close()
