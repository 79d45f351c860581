"""Fixtures shared by the Python SDK's tests."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    import redis

    from postgres_server import PostgresServer

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def tenant_sandbox_command() -> list[str]:
    """The repository's built sandbox (packages/sandbox/dist/cli.js) for the plugin's ``tenant`` fixtures,
    started by path as the TypeScript process tests start it."""
    return ["node", str(REPO / "packages" / "sandbox" / "dist" / "cli.js")]


# -- Redis: a real redis-server (Debian's), on a free loopback port, stopped by its pid --------------


class RedisServer:
    """A ``redis-server`` process of its own on a free loopback port, without persistence unless ``dir``
    is given (then an append-only file there, fsynced at every write, so a restart keeps the data)."""

    def __init__(self, dir: Path | None = None) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            if os.environ.get("CI") == "true":
                pytest.fail("redis-server is not installed (CI installs Debian's redis-server)")
            pytest.skip("redis-server is not installed (apt-get install redis-server)")
        self._binary = binary
        self._dir = dir
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port: int = s.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        """Starts the server (again, on the same port) and waits until it answers PING."""
        persistence = (
            ["--appendonly", "no"] if self._dir is None else ["--appendonly", "yes", "--appendfsync", "always"]
        )
        args = [self._binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", *persistence]
        if self._dir is not None:
            args += ["--dir", str(self._dir)]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                stderr = self.process.stderr.read().decode() if self.process.stderr else ""
                raise RuntimeError(f"redis-server did not start on port {self.port}: {stderr}")
            time.sleep(0.02)

    def stop(self) -> None:
        """Stops the server by its pid (SIGTERM; an append-only file is fsynced at every write anyway)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        if self.process is not None and self.process.stderr is not None:
            self.process.stderr.close()
        self.process = None


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """The URL of a real redis-server started for this test session (``--save '' --appendonly no``).

    Skips outside CI when redis-server is missing; fails in CI (``CI=true``). Tests share it: give
    each test its own key prefix, or flush what you wrote.
    """
    server = RedisServer()
    yield server.url
    server.stop()


@pytest.fixture
def redis_servers() -> Iterator[Callable[..., RedisServer]]:
    """Starts redis-servers of the test's own (``redis_servers(dir=tmp_path)`` for one that keeps its
    data across :meth:`RedisServer.stop` and :meth:`RedisServer.start`); all are stopped after the test."""
    started: list[RedisServer] = []

    def start(dir: Path | None = None) -> RedisServer:
        server = RedisServer(dir)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    """A client of the session's redis-server, with the ``socket_timeout`` the storage requires."""
    import redis

    connection = redis.Redis.from_url(redis_url, socket_timeout=5)
    yield connection
    connection.close()


@pytest.fixture
def redis_prefix() -> str:
    """A key prefix of the test's own: the tests share one redis-server."""
    return f"test-{secrets.token_hex(4)}:"


# -- PostgreSQL: a real server (Debian's), on a free loopback port, stopped by its pid ---------------


def _postgres_bin() -> Path:
    """Debian's PostgreSQL; skipped outside CI when absent, a failure in CI (``CI=true``)."""
    from postgres_server import find_postgres

    bin_dir = find_postgres()
    if bin_dir is None:
        if os.environ.get("CI") == "true":
            pytest.fail("PostgreSQL is not installed (CI installs Debian's postgresql)")
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql, or POSTGRES_BIN_DIR)")
    return bin_dir


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The URL of a real PostgreSQL started for this test session (a fresh cluster, about 3 s).

    Skips outside CI when PostgreSQL is missing; fails in CI (``CI=true``). Tests share it: give each
    test its own table (``postgres_table``).
    """
    from postgres_server import PostgresServer

    server = PostgresServer(_postgres_bin())
    yield server.url
    server.close()


@pytest.fixture
def postgres_servers() -> Iterator[Callable[..., PostgresServer]]:
    """Starts PostgreSQL servers of the test's own (to stop, kill, hang or restart); all are closed after
    the test."""
    from postgres_server import PostgresServer

    started: list[PostgresServer] = []

    def start(**settings: str) -> PostgresServer:
        server = PostgresServer(_postgres_bin(), settings=settings)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


@pytest.fixture
def postgres_table() -> str:
    """A table name of the test's own: the tests share one server."""
    return f"t_{secrets.token_hex(6)}"
