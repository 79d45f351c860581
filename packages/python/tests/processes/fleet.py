"""Starts and drives worker processes (worker.py: the Python SDK as an app uses it, its own token manager
and a ``FileStorage`` or ``RedisStorage``) that speak one JSON object per line, for the single-process
pause tests. Fleets of processes, Python and TypeScript mixed, are the conformance suite's
(spec/conformance/, tools/conformance).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tenant_integration import TokenManager
from tenant_integration.storage.base import TokenStorage
from tenant_integration.testing import SandboxClient, SandboxProcess, sign_in_through_sandbox

REPO = Path(__file__).resolve().parents[4]
PYTHON_WORKER = Path(__file__).with_name("worker.py")
#: The repository's built sandbox, started by path (as the TypeScript process tests do).
SANDBOX_COMMAND = ["node", str(REPO / "packages" / "sandbox" / "dist" / "cli.js")]
CLIENT_ID = "fleet"
REDIRECT_URI = "http://127.0.0.1:53682/callback"
#: One second past the sandbox's 15-minute access token.
EXPIRY_SECONDS = 15 * 60 + 1
DEMO_USER_ID = 42

Message = dict[str, Any]


def start_sandbox() -> SandboxProcess:
    """The repository's sandbox on a free loopback port, with the ``fleet`` client registered."""
    return SandboxProcess(command=SANDBOX_COMMAND, clients=[SandboxClient(id=CLIENT_ID, redirect_uris=(REDIRECT_URI,))])


def sign_in(sandbox: SandboxProcess, storage: TokenStorage) -> None:
    """Signs in once, from this process, into ``storage``, which the fleet then shares."""
    manager = TokenManager(
        base_url=sandbox.url,
        client_id=CLIENT_ID,
        redirect_uri=REDIRECT_URI,
        scopes=["profile:read"],
        storage=storage,
        now=sandbox.clock.now,
    )
    sign_in_through_sandbox(manager)


class Member:
    """One worker process; its stdout lines are parsed and queued by a thread until :meth:`next` takes them."""

    def __init__(self, env: Mapping[str, str]) -> None:
        command = [sys.executable, str(PYTHON_WORKER)]
        self.process = subprocess.Popen(
            command,
            env={**os.environ, **env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self.pid = self.process.pid
        self._messages: queue.Queue[Message | None] = queue.Queue()
        self._stderr: list[str] = []
        self._readers = [
            threading.Thread(target=self._read, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._messages.put(json.loads(line))
        self._messages.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._stderr.append(line)

    def describe(self) -> str:
        """The pid, exit status and standard error, for a failure message."""
        return f"worker {self.pid} (exit {self.process.poll()}): {''.join(self._stderr)[-2000:]}"

    def next(self, timeout: float = 120.0) -> Message:
        """The next message; raises when the process exits or says nothing for ``timeout`` seconds."""
        try:
            message = self._messages.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"said nothing for {timeout:g} s: {self.describe()}") from None
        if message is None:
            self._messages.put(None)
            self.process.wait()
            raise AssertionError(f"exited: {self.describe()}")
        return message

    def send(self, command: Message) -> None:
        """Writes one command line to its stdin."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()

    def go_command(self, offset_ms: int) -> Message:
        """The command that moves its clock to ``offset_ms`` and has it get a token and the user."""
        return {"go": offset_ms}

    def result(self, message: Message) -> Message:
        """Its answer to a go command: ``ok``, ``status``, ``code``, ``refreshed``…"""
        result: Message = message["result"]
        return result

    def expect_ready(self) -> None:
        """Waits for its ready line (it has then fetched a token and the user once)."""
        message = self.next()
        if not message.get("ready"):
            raise AssertionError(f"not ready: {message} {self.describe()}")

    def close_pipes(self) -> None:
        """Once it has exited: lets the readers drain its output, then closes the pipes."""
        for reader in self._readers:
            reader.join(timeout=10)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(BrokenPipeError):
                    stream.close()

    def kill(self, sig: signal.Signals = signal.SIGKILL) -> None:
        """Sends ``sig`` unless it has exited."""
        if self.process.poll() is None:
            self.process.send_signal(sig)

    def wait(self) -> int:
        """Waits for it to exit; returns its return code (negative: killed by that signal)."""
        return self.process.wait()


def again(members: Sequence[Member]) -> list[Message]:
    """Has every member get a token and the user again, with no clock change."""
    for member in members:
        member.send({"again": True})
    return [member.result(member.next()) for member in members]


def stop_fleet(members: Sequence[Member]) -> None:
    """Asks every member to exit, kills what remains after 10 s, waits."""
    for member in members:
        if member.process.poll() is not None:
            continue
        try:
            member.send({"exit": True})
            if member.process.stdin is not None:
                member.process.stdin.close()
        except (BrokenPipeError, OSError):
            pass
    for member in members:
        try:
            member.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            member.kill()
            member.process.wait()
        member.close_pipes()


def refresh_outcomes(sandbox: SandboxProcess, after: int) -> list[str]:
    """The refresh grants the sandbox saw after event ``after``: ``"ok"``, or the error and its detail."""
    return [
        e["outcome"] if e["outcome"] == "ok" else f"{e['outcome']} {e['detail']}"
        for e in sandbox.events(after=after)
        if e["grantType"] == "refresh_token"
    ]


def expire(sandbox: SandboxProcess) -> int:
    """Moves the sandbox's clock one second past the access token's lifetime; returns the clock offset in ms,
    which every worker then sets as its own."""
    sandbox.advance(EXPIRY_SECONDS)
    return round(sandbox.clock.offset_seconds * 1000)
