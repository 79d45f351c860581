"""The sandbox tenant as a child process: started on a free loopback port, its test clock, its event log.

The sandbox (``tenant-sandbox``, the npm package ``@tenant-integration/sandbox``) is a local tenant of
the service that rotates refresh tokens like the real one. :class:`SandboxProcess` starts it with
auto-approve (the authorization request is answered at once with the redirect, no browser) and its
test clock (``POST /__sandbox/clock`` moves time forward); :func:`sandbox_command` finds the command
that starts it. The signed-in test tenant on top of it is :mod:`tenant_integration._test_tenant`;
users import both from :mod:`tenant_integration.testing`.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import queue
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypedDict, cast

import httpx

from .errors import TenantIntegrationError

__all__ = [
    "DEFAULT_CLIENT_ID",
    "DEFAULT_REDIRECT_URI",
    "SANDBOX_COMMAND_ENV",
    "FollowedSandboxClock",
    "SandboxClient",
    "SandboxClock",
    "SandboxError",
    "SandboxEvent",
    "SandboxProcess",
    "follow_sandbox_clock",
    "sandbox_command",
]

#: The environment variable naming the command that starts the sandbox (split like a shell would).
SANDBOX_COMMAND_ENV = "TENANT_SANDBOX_COMMAND"
#: The OAuth client a :class:`SandboxProcess` registers when given none (as ``createTestTenant``).
DEFAULT_CLIENT_ID = "test-integration"
#: Its redirect URI; nothing needs to listen there, the sandbox's redirect is read, never followed.
DEFAULT_REDIRECT_URI = "http://127.0.0.1:53682/callback"
#: How far the sandbox's clock moves in one call at most: ten years, as the sandbox's own bound.
MAX_ADVANCE_SECONDS = 10 * 365 * 24 * 60 * 60


class SandboxError(TenantIntegrationError):
    """The sandbox process could not be started or did not answer as expected.

    ``code`` is ``"SANDBOX_FAILED"``; the message says why (no command found, it exited, with the end of
    its standard error, or a test route answered with an error). It never holds a token.
    """

    def __init__(self, message: str, *, cause: BaseException | None = None) -> None:
        super().__init__("SANDBOX_FAILED", message, cause=cause)


class SandboxEvent(TypedDict):
    """One call to ``POST /oauth/token`` or ``POST /oauth/revoke`` as the sandbox logged it (no token values)."""

    seq: int
    """Increasing number, from 1."""
    time: str
    """Sandbox time of the call (ISO 8601), moved by the test clock."""
    endpoint: Literal["token", "revoke"]
    grantType: str | None
    """The ``grant_type`` sent to the token endpoint, e.g. ``"refresh_token"``, or ``None``."""
    clientId: str | None
    status: int
    """HTTP status of the answer."""
    outcome: str
    """``"ok"``, or the RFC 6749 §5.2 error code of the answer."""
    detail: str | None
    """Why, in a few words: ``"refresh_token_reused"``, ``"code_expired"``…"""


@dataclass(frozen=True)
class SandboxClient:
    """An OAuth client the sandbox registers at start (``--client id=…,redirect=…``).

    Attributes:
        id: the ``client_id``.
        redirect_uris: its redirect URIs, matched exactly (RFC 6749 §3.1.2); none may hold a comma or ``|``.
        scopes: the scopes it may ask for, or ``None`` for any scope of the contract.
    """

    id: str = DEFAULT_CLIENT_ID
    redirect_uris: tuple[str, ...] = (DEFAULT_REDIRECT_URI,)
    scopes: tuple[str, ...] | None = None

    def spec(self) -> str:
        """The ``--client`` argument of ``tenant-sandbox`` for this client."""
        parts = [f"id={self.id}", "redirect=" + "|".join(self.redirect_uris)]
        if self.scopes is not None:
            parts.append("scopes=" + "|".join(self.scopes))
        return ",".join(parts)


class SandboxClock:
    """The sandbox's test clock as this process sees it: the wall clock plus the sandbox's offset.

    Pass :meth:`now` as the token manager's ``now``: then :meth:`SandboxProcess.advance` moves the
    sandbox's tokens and the manager's idea of their expiry together, and a test reaches the
    15-minute expiry of an access token without waiting (``expires_in``, RFC 6749 §5.1).
    The offset only moves forward, as the sandbox's.

    Example:
        >>> clock = SandboxClock()
        >>> clock.set_offset(900.0)
        >>> round(clock.now() - time.time())
        900
    """

    def __init__(self, offset_seconds: float = 0.0, base: Callable[[], float] = time.time) -> None:
        self._offset = offset_seconds
        self._base = base

    @property
    def offset_seconds(self) -> float:
        """How far, in seconds, the sandbox's clock has been moved forward."""
        return self._offset

    def set_offset(self, offset_seconds: float) -> None:
        """Follows the sandbox's offset, as it reported it; never moves back.

        Raises:
            ValueError: when ``offset_seconds`` is not a finite number.
        """
        if not math.isfinite(offset_seconds):
            raise ValueError("offset_seconds must be a finite number")
        self._offset = max(self._offset, offset_seconds)

    def now(self) -> float:
        """The sandbox's current time, in seconds since the epoch (what the manager's ``now`` returns)."""
        return self._base() + self._offset

    def now_ms(self) -> int:
        """The same in whole milliseconds (the unit of the TypeScript kit's clocks and records)."""
        return round(self.now() * 1000)


class FollowedSandboxClock(SandboxClock):
    """The test clock of a sandbox this process did not start, followed by its URL: what
    :func:`follow_sandbox_clock` returns. :meth:`now` is the wall clock plus the sandbox's offset as
    last read; a daemon thread reads it every ``interval`` seconds, and :meth:`sync` reads it at once.
    :meth:`close` (or leaving the ``with`` block) stops the reads, not the sandbox.
    """

    def __init__(self, base_url: str, *, interval: float = 0.1, transport: httpx.BaseTransport | None = None) -> None:
        super().__init__()
        if not (interval > 0 and math.isfinite(interval)):
            raise ValueError(f"interval must be a positive number of seconds, not {interval!r}")
        self.url = base_url.rstrip("/")
        """The sandbox's base URL."""
        self._http = httpx.Client(base_url=self.url, trust_env=False, timeout=5.0, transport=transport)
        self._stop = threading.Event()
        self.sync()
        threading.Thread(target=self._follow, args=(interval,), daemon=True).start()

    def _follow(self, interval: float) -> None:
        while not self._stop.wait(interval):
            with contextlib.suppress(SandboxError):  # a failed read keeps the last offset; the next tries again
                self.sync()

    def sync(self) -> float:
        """Reads the sandbox's clock now (``GET /__sandbox/clock``); returns its offset in seconds.

        Raises:
            SandboxError: when the sandbox does not answer with its clock (not a sandbox, or one
                started without ``--test-clock``).
        """
        try:
            response = self._http.get("/__sandbox/clock")
            offset = response.json().get("offsetSeconds") if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError, AttributeError) as error:
            raise SandboxError(f"cannot read the clock of the sandbox at {self.url}: {error}", cause=error) from error
        if not isinstance(offset, (int, float)):
            raise SandboxError(
                f"GET {self.url}/__sandbox/clock answered HTTP {response.status_code} without a clock: "
                "is it the sandbox, started with --test-clock?"
            )
        self.set_offset(float(offset))
        return self.offset_seconds

    def close(self) -> None:
        """Stops the background reads; safe to call twice."""
        self._stop.set()
        self._http.close()

    def __enter__(self) -> FollowedSandboxClock:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


def follow_sandbox_clock(
    base_url: str, *, interval: float = 0.1, transport: httpx.BaseTransport | None = None
) -> FollowedSandboxClock:
    """Follows the test clock of a sandbox that another process started (a test runner,
    ``tenant-sandbox --test-clock`` in CI, the Go or TypeScript test kit), by its URL: the offset is
    read at once, every ``interval`` seconds in the background, and at each
    :meth:`FollowedSandboxClock.sync`, so every process's moves of the clock reach this one within an
    interval, or at once after ``sync()``. Give its ``now`` to the token manager under test. The same
    follower as the Go kit's ``tenanttest.FollowClock`` and the TypeScript kit's ``followSandboxClock``.

    Args:
        base_url: the sandbox's base URL, e.g. the ``TENANT_URL`` a test gave this process.
        interval: seconds between background reads (default 0.1).
        transport: the httpx transport of the reads (tests).

    Raises:
        SandboxError: when the sandbox does not answer with its clock.

    Example:
        >>> clock = follow_sandbox_clock(os.environ["TENANT_URL"])  # doctest: +SKIP
        >>> manager = TokenManager(base_url=clock.url, client_id="test-integration",  # doctest: +SKIP
        ...     redirect_uri="http://127.0.0.1:53682/callback", scopes=["profile:read"], now=clock.now)

    See RFC 6749 §4.2.2 (``expires_in``, which the test clock lets tests pass without waiting).
    """
    return FollowedSandboxClock(base_url, interval=interval, transport=transport)


def _find_bin(start: Path) -> Path | None:
    for directory in (start, *start.parents):
        candidate = directory / "node_modules" / ".bin" / "tenant-sandbox"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def sandbox_command(command: Sequence[str] | str | None = None) -> list[str]:
    """The command that starts the sandbox, without its options: the first of ``command``, the
    ``TENANT_SANDBOX_COMMAND`` environment variable, ``node_modules/.bin/tenant-sandbox`` here or in
    a parent directory, ``tenant-sandbox`` on the ``PATH``.

    Raises:
        SandboxError: when none of them is there; the message says how to provide one.

    Example:
        >>> sandbox_command("node ./sandbox/dist/cli.js")
        ['node', './sandbox/dist/cli.js']
    """
    if isinstance(command, str):
        return shlex.split(command)
    if command is not None:
        return list(command)
    from_env = os.environ.get(SANDBOX_COMMAND_ENV, "").strip()
    if from_env:
        return shlex.split(from_env)
    found = _find_bin(Path.cwd())
    if found is not None:
        return [str(found)]
    on_path = shutil.which("tenant-sandbox")
    if on_path is not None:
        return [on_path]
    raise SandboxError(
        "cannot find the sandbox: install it with `npm install --save-dev @tenant-integration/sandbox` "
        f"(Node.js 20 or newer), or set {SANDBOX_COMMAND_ENV}, e.g. to "
        "'npx --yes --package @tenant-integration/sandbox tenant-sandbox'"
    )


class SandboxProcess:
    """The sandbox tenant as a child process on a free loopback port, with auto-approve and the test clock.

    Starts at once: ``tenant-sandbox --port 0 --auto-approve --test-clock --json --client …`` (the
    command is found by :func:`sandbox_command`), and reads the JSON line it prints to learn its
    ``url``. :meth:`close` (or leaving the ``with`` block) stops it with SIGTERM, then SIGKILL.

    Args:
        clients: the OAuth clients to register (default: ``test-integration`` with the redirect URI
            ``http://127.0.0.1:53682/callback``, any scope).
        command: the command that starts the sandbox (see :func:`sandbox_command`).
        args: more options for it, e.g. ``["--rotation-grace", "30"]``.
        startup_timeout: seconds to wait for its first line.

    Raises:
        SandboxError: when no command is found, or the process exits or stays silent before it listens.

    Example:
        >>> with SandboxProcess() as sandbox:  # doctest: +SKIP
        ...     sandbox.advance(901)
        ...     [e["grantType"] for e in sandbox.events()]
        []

    See RFC 8252 §7.3 (the sandbox listens on loopback only).
    """

    def __init__(
        self,
        *,
        clients: Sequence[SandboxClient] = (SandboxClient(),),
        command: Sequence[str] | str | None = None,
        args: Sequence[str] = (),
        startup_timeout: float = 30.0,
    ) -> None:
        argv = [*sandbox_command(command), "--port", "0", "--auto-approve", "--test-clock", "--json", *args]
        for registered in clients:
            argv += ["--client", registered.spec()]
        self.clients: tuple[SandboxClient, ...] = tuple(clients)
        """The OAuth clients it registered."""
        self.clock = SandboxClock()
        """Its test clock as seen from here; give ``clock.now`` to every token manager under test."""
        self._stderr: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        try:
            self._process = subprocess.Popen(  # noqa: S603 (the command is the test's own choice)
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
            )
        except OSError as error:
            raise SandboxError(f"cannot start the sandbox ({argv[0]}): {error.strerror}", cause=error) from error
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()
        try:
            first = self._lines.get(timeout=startup_timeout)
        except queue.Empty:
            self._stop()
            raise SandboxError(f"the sandbox printed nothing in {startup_timeout:g} s{self._stderr_tail()}") from None
        if first is None:
            self._process.wait()
            raise SandboxError(f"the sandbox exited with code {self._process.returncode}{self._stderr_tail()}")
        try:
            info = cast("dict[str, Any]", json.loads(first))
            self.url: str = str(info["url"])
            """Its base URL, e.g. ``http://127.0.0.1:41237``: the token manager's and client's ``base_url``."""
        except (ValueError, KeyError, TypeError) as error:
            self._stop()
            raise SandboxError(f"the sandbox's first line is not its JSON start line: {first[:200]!r}") from error
        self._http = httpx.Client(base_url=self.url, trust_env=False, timeout=10.0)
        self.sync_clock()

    def _pump_stdout(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _pump_stderr(self) -> None:
        assert self._process.stderr is not None
        for line in self._process.stderr:
            self._stderr.append(line)
            del self._stderr[:-50]

    def _stderr_tail(self) -> str:
        text = "".join(self._stderr[-20:]).strip()
        return f": {text}" if text else ""

    @property
    def pid(self) -> int:
        """The process id of the sandbox."""
        return self._process.pid

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as error:
            raise SandboxError(f"{method} {path}: {error}{self._stderr_tail()}", cause=error) from error
        if response.status_code >= 400:
            raise SandboxError(f"{method} {path} answered {response.status_code}: {response.text[:300]}")
        return response.json()

    def sync_clock(self) -> float:
        """Reads the sandbox's clock offset (``GET /__sandbox/clock``) into :attr:`clock`, in case
        another process moved it; returns the offset in seconds.

        Raises:
            SandboxError: when the sandbox does not answer.
        """
        body = self._call("GET", "/__sandbox/clock")
        self.clock.set_offset(float(body["offsetSeconds"]))
        return self.clock.offset_seconds

    def advance(self, seconds: float) -> float:
        """Moves the sandbox's clock forward by ``seconds`` (``POST /__sandbox/clock``), and
        :attr:`clock` with it; returns the new sandbox time in seconds since the epoch.

        Raises:
            ValueError: when ``seconds`` is negative, not finite or more than ten years.
            SandboxError: when the sandbox refuses or does not answer.
        """
        if not (0 <= seconds <= MAX_ADVANCE_SECONDS):
            raise ValueError(f"seconds must be a number from 0 to {MAX_ADVANCE_SECONDS}, not {seconds!r}")
        body = self._call("POST", "/__sandbox/clock", json={"advanceSeconds": seconds})
        self.clock.set_offset(float(body["offsetSeconds"]))
        return float(body["epochMs"]) / 1000

    def events(self, *, after: int = 0) -> list[SandboxEvent]:
        """The sandbox's token and revoke events with a ``seq`` above ``after``, oldest first (``GET
        /__sandbox/events``). They never hold a token value.

        Raises:
            SandboxError: when the sandbox does not answer.
        """
        body = self._call("GET", "/__sandbox/events")
        events = cast("list[SandboxEvent]", body["events"])
        return [event for event in events if event["seq"] > after]

    def last_seq(self) -> int:
        """The ``seq`` of the latest event (0 when none): pass it as ``after`` to see only what follows."""
        events = self.events()
        return events[-1]["seq"] if events else 0

    def refresh_count(self, *, after: int = 0) -> int:
        """How many refresh grants succeeded (``grant_type=refresh_token``, HTTP 200) after event ``after``.

        Raises:
            SandboxError: when the sandbox does not answer.

        See RFC 6749 §6.
        """
        return sum(1 for e in self.events(after=after) if e["grantType"] == "refresh_token" and e["status"] == 200)

    def clear_events(self) -> int:
        """Empties the event log (``DELETE /__sandbox/events``); returns how many events it held."""
        return int(self._call("DELETE", "/__sandbox/events")["cleared"])

    def _stop(self) -> None:
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    def close(self) -> None:
        """Stops the sandbox (SIGTERM, then SIGKILL after 5 s) and waits for it; safe to call twice."""
        http = getattr(self, "_http", None)
        if http is not None:
            http.close()
        self._stop()

    def __enter__(self) -> SandboxProcess:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
