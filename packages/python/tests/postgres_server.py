"""A throwaway PostgreSQL server for the tests (as ``tools/postgres`` is for the TypeScript ones, and
``conftest.RedisServer`` for Redis): a fresh cluster (``initdb``) in a temporary directory, started on a
free loopback port, stopped, killed, paused and restarted by its pids. Debian's PostgreSQL
(``/usr/lib/postgresql/<version>/bin``) unless ``POSTGRES_BIN_DIR`` names another. ``initdb`` and
``postgres`` refuse to run as root: a root process runs them as the ``postgres`` user (Debian's package
makes it), by the child's uid and gid, so the pid is the postmaster's own."""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

__all__ = ["PostgresServer", "find_postgres"]

#: What every server runs with: fsync off (a test loses nothing the OS has), a small footprint.
SETTINGS = {"listen_addresses": "127.0.0.1", "fsync": "off", "shared_buffers": "16MB", "max_connections": "100"}


def find_postgres() -> Path | None:
    """The directory of ``initdb`` and ``postgres``: ``POSTGRES_BIN_DIR``, else Debian's newest, else PATH."""
    candidates: list[Path] = []
    if os.environ.get("POSTGRES_BIN_DIR"):
        candidates.append(Path(os.environ["POSTGRES_BIN_DIR"]))
    else:
        debian = Path("/usr/lib/postgresql")
        if debian.is_dir():
            versions = sorted((p for p in debian.iterdir() if p.name.isdigit()), key=lambda p: -int(p.name))
            candidates += [p / "bin" for p in versions]
        on_path = shutil.which("postgres")
        if on_path:
            candidates.append(Path(on_path).parent)
    for bin_dir in candidates:
        if (bin_dir / "postgres").exists() and (bin_dir / "initdb").exists():
            return bin_dir
    return None


def _children(pid: int) -> list[int]:
    """The pids whose parent is ``pid`` (a postmaster's backends and workers), from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(stat[stat.rindex(")") + 2 :].split(" ")[1]) == pid:
            found.append(int(entry))
    return found


def _signal(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


class PostgresServer:
    """A PostgreSQL cluster of its own, running on 127.0.0.1 at ``port``; ``url`` for psycopg."""

    def __init__(self, bin_dir: Path, *, settings: dict[str, str] | None = None, data: Path | None = None) -> None:
        self._bin = bin_dir
        self._settings = {**SETTINGS, **(settings or {})}
        self._identity: dict[str, int] = {}
        if os.getuid() == 0:
            user = pwd.getpwnam("postgres")
            self._identity = {"user": user.pw_uid, "group": user.pw_gid}
        self.dir = Path(tempfile.mkdtemp(prefix="tenant-postgres-"))
        if self._identity:
            os.chown(self.dir, self._identity["user"], self._identity["group"])
        self.data = self.dir / "data"
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port: int = s.getsockname()[1]
        self.url = f"postgresql://tenant@127.0.0.1:{self.port}/postgres"
        self.process: subprocess.Popen[bytes] | None = None
        self._stopped: list[int] = []
        if data is None:
            args = ["-D", str(self.data), "-A", "trust", "-U", "tenant", "-E", "UTF8", "--locale=C", "--no-sync"]
            self._run(self._bin / "initdb", args)
        else:
            self.data = data
        self.start()

    def _run(self, program: Path, args: list[str]) -> None:
        result = subprocess.run([str(program), *args], capture_output=True, check=False, **self._identity)  # type: ignore[call-overload]
        if result.returncode != 0:
            raise RuntimeError(f"{program.name} failed: {result.stdout.decode()}{result.stderr.decode()}")

    def start(self) -> None:
        """Starts the server (again, on the same port) and waits until it accepts connections."""
        args = [str(self._bin / "postgres"), "-D", str(self.data), "-p", str(self.port), "-k", str(self.dir)]
        for name, value in self._settings.items():
            args += ["-c", f"{name}={value}"]
        log = open(self.dir / "log", "ab")  # noqa: SIM115 - the child writes it until it exits
        self.process = subprocess.Popen(args, stdout=log, stderr=log, **self._identity)  # type: ignore[call-overload]
        log.close()
        deadline = time.monotonic() + 30
        ready = re.compile(rb"database system is ready to accept (read-only )?connections")
        while not ready.search((self.dir / "log").read_bytes().split(b"starting PostgreSQL")[-1]):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"postgres did not start: {(self.dir / 'log').read_text()}")
            time.sleep(0.05)

    def _up(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        """A fast shutdown (SIGINT): open connections are ended, a checkpoint is written."""
        self.resume()
        if self._up():
            assert self.process is not None
            pids = [self.process.pid, *_children(self.process.pid)]
            self.process.send_signal(signal.SIGINT)
            self.process.wait(timeout=30)
            self._gone(pids)

    def kill(self) -> None:
        """Kills the postmaster and every backend at once (SIGKILL: no shutdown)."""
        if self._up():
            assert self.process is not None
            _signal([self.process.pid], signal.SIGSTOP)
            pids = [self.process.pid, *_children(self.process.pid), *self._stopped]
            _signal(pids, signal.SIGKILL)
            self.process.wait(timeout=30)
            self._gone(pids)
        self._stopped = []

    def restart(self) -> None:
        self.kill()
        self.start()

    def hang(self) -> None:
        """Stops (SIGSTOP) the postmaster and its backends: connections stay open, nothing answers."""
        if self._up():
            assert self.process is not None
            _signal([self.process.pid], signal.SIGSTOP)
            self._stopped = _children(self.process.pid)
            _signal(self._stopped, signal.SIGSTOP)

    def resume(self) -> None:
        pids = [*self._stopped, *([self.process.pid] if self._up() and self.process else [])]
        _signal(pids, signal.SIGCONT)
        self._stopped = []

    def standby(self) -> PostgresServer:
        """A hot standby of this server (``pg_basebackup -R``), started on a port of its own."""
        target = Path(tempfile.mkdtemp(prefix="tenant-postgres-standby-"))
        if self._identity:
            os.chown(target, self._identity["user"], self._identity["group"])
        args = [
            "-D",
            str(target / "data"),
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            "tenant",
            "-R",
            "-X",
            "stream",
        ]
        self._run(self._bin / "pg_basebackup", args)
        return PostgresServer(self._bin, settings=self._settings, data=target / "data")

    @staticmethod
    def _gone(pids: list[int]) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() and _state(pid) != "Z" for pid in pids):
            time.sleep(0.02)

    def close(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)
        if self.data.parent != self.dir:
            shutil.rmtree(self.data.parent, ignore_errors=True)


def _state(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "Z"
    return stat[stat.rindex(")") + 2]
