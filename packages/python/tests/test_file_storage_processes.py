"""FileStorage across real processes, Python and Node, with real SIGKILLs: the refresh lock excludes
both kinds of process, a killed holder is taken over, a killed writer leaves a valid file, and keys
written at once by both kinds are all kept.

The Node processes are packages/token-manager/src/test-support/file-worker.mjs: the BUILT
``@tenant-integration/token-manager/node`` ``fileStorage``, as a command-line tool uses it. The Python
processes run this file as a script (``worker`` below), with ``FileStorage``. Both speak one JSON
object per line. A lock directory whose holder is paused or has exited is the last test. Fleets of managers
on one file, Python and TypeScript mixed, are the repository's conformance scenarios (spec/conformance).
"""

from __future__ import annotations

import functools
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import pytest

from tenant_integration.storage import _dir_lock
from tenant_integration.storage.errors import FileStorageError, LockWaitEnded
from tenant_integration.storage.file import FileStorage

REPO = Path(__file__).resolve().parents[3]
NODE_WORKER = REPO / "packages" / "token-manager" / "src" / "test-support" / "file-worker.mjs"
#: How long the answer to one command may take before the test fails (a hung process, not a timing check).
ANSWER_TIMEOUT = 60.0

Kind = Literal["python", "node"]


class Worker:
    """A worker process of either kind on one token file; stdout lines are queued by a thread."""

    def __init__(self, kind: Kind, file: Path, *, stale: float, lock_timeout: float = 30.0) -> None:
        self.kind = kind
        if kind == "python":
            options = {"stale_after": stale, "lock_timeout": lock_timeout}
            command = [sys.executable, __file__, str(file), json.dumps(options)]
        else:
            options = {"staleMs": int(stale * 1000), "lockTimeoutMs": int(lock_timeout * 1000)}
            # The tenant URL, client and redirect URI are unused by the storage commands.
            command = ["node", str(NODE_WORKER), "http://127.0.0.1:9", str(file), "c", "http://127.0.0.1:9/cb"]
            command.append(json.dumps(options))
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1
        )
        self._lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        ready = self.next()
        assert ready.get("ready") is True, ready
        self.pid: int = ready["pid"]

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(json.loads(line))
        self._lines.put(None)

    def next(self) -> dict[str, Any]:
        message = self._lines.get(timeout=ANSWER_TIMEOUT)
        if message is None:
            assert self.process.stderr is not None
            raise AssertionError(f"{self.kind} worker exited: {self.process.stderr.read()}")
        return message

    def send(self, command: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    started: list[Worker] = []
    yield started
    for w in started:
        w.close()


def start(started: list[Worker], kind: Kind, file: Path, **options: float) -> Worker:
    worker = Worker(kind, file, **options)
    started.append(worker)
    return worker


def holds(log: Path) -> list[tuple[int, int]]:
    """The log's ``in <pid>`` / ``out <pid>`` lines as (in, out) pairs of one pid; fails on any overlap."""
    lines = log.read_text().split()
    assert len(lines) % 4 == 0, lines
    result = []
    for i in range(0, len(lines), 4):
        word_in, pid_in, word_out, pid_out = lines[i : i + 4]
        assert (word_in, word_out) == ("in", "out"), lines
        assert pid_in == pid_out, f"two holders at once: {lines}"
        result.append((int(pid_in), int(pid_out)))
    return result


def test_two_python_processes_and_one_node_process_hold_the_refresh_lock_in_turns(
    tmp_path: Path, workers: list[Worker]
) -> None:
    file, log = tmp_path / "tokens.json", tmp_path / "log"
    fleet = [start(workers, kind, file, stale=10) for kind in ("python", "python", "node")]
    for _ in range(3):
        for w in fleet:
            w.send({"cmd": "hold-lock", "log": str(log), "ms": 100})
        for w in fleet:
            assert w.next() == {"held": True}
    held = holds(log)
    assert sorted(pid for pid, _ in held) == sorted([w.pid for w in fleet] * 3)


def test_a_python_holder_killed_with_sigkill_a_python_and_a_node_process_both_get_the_lock(
    tmp_path: Path, workers: list[Worker]
) -> None:
    file, log = tmp_path / "tokens.json", tmp_path / "log"
    holder = start(workers, "python", file, stale=2)
    # stale_after 60 s and lock_timeout 20 s: this process can only get the lock by recognising the dead
    # Python holder's directory (the kernel lock told it no Python process holds it), not by staleness.
    python = start(workers, "python", file, stale=60, lock_timeout=20)
    # The Node process knows only the directory: it takes it over once it is stale (2 s).
    node = start(workers, "node", file, stale=2, lock_timeout=20)
    holder.send({"cmd": "hold-lock", "log": str(log), "ms": 3_600_000})
    while not log.exists() or not log.read_text():
        time.sleep(0.01)
    holder.kill()
    assert (tmp_path / "tokens.json.refresh.lock").is_dir()  # left behind by the killed holder
    python.send({"cmd": "hold-lock", "log": str(log), "ms": 200})
    node.send({"cmd": "hold-lock", "log": str(log), "ms": 200})
    assert python.next() == {"held": True}
    assert node.next() == {"held": True}
    lines = log.read_text().split("\n", 1)
    assert lines[0] == f"in {holder.pid}"
    log.write_text(lines[1])
    assert sorted(pid for pid, _ in holds(log)) == sorted([python.pid, node.pid])
    assert not (tmp_path / "tokens.json.refresh.lock").exists()


def test_a_python_holder_killed_with_sigkill_is_taken_over_by_a_lone_node_process_once_stale(
    tmp_path: Path, workers: list[Worker]
) -> None:
    file, log = tmp_path / "tokens.json", tmp_path / "log"
    holder = start(workers, "python", file, stale=2)
    node = start(workers, "node", file, stale=2, lock_timeout=20)
    holder.send({"cmd": "hold-lock", "log": str(log), "ms": 3_600_000})
    while not log.exists() or not log.read_text():
        time.sleep(0.01)
    holder.kill()
    node.send({"cmd": "hold-lock", "log": str(log), "ms": 10})
    assert node.next() == {"held": True}
    assert log.read_text() == f"in {holder.pid}\nin {node.pid}\nout {node.pid}\n"


def test_a_node_holder_killed_with_sigkill_is_taken_over_by_python_once_stale(
    tmp_path: Path, workers: list[Worker]
) -> None:
    file, log = tmp_path / "tokens.json", tmp_path / "log"
    holder = start(workers, "node", file, stale=2)
    python = start(workers, "python", file, stale=2, lock_timeout=20)
    holder.send({"cmd": "hold-lock", "log": str(log), "ms": 3_600_000})
    while not log.exists() or not log.read_text():
        time.sleep(0.01)
    holder.kill()
    python.send({"cmd": "hold-lock", "log": str(log), "ms": 10})
    assert python.next() == {"held": True}
    assert log.read_text() == f"in {holder.pid}\nin {python.pid}\nout {python.pid}\n"


@pytest.mark.parametrize("first", ["python", "node"])
def test_a_live_holder_keeping_the_lock_past_stale_is_not_taken_over_by_the_other_kind(
    tmp_path: Path, workers: list[Worker], first: Kind
) -> None:
    file, log = tmp_path / "tokens.json", tmp_path / "log"
    second: Kind = "node" if first == "python" else "python"
    holder = start(workers, first, file, stale=2)
    waiter = start(workers, second, file, stale=2, lock_timeout=30)
    holder.send({"cmd": "hold-lock", "log": str(log), "ms": 5_000})
    while not log.exists() or not log.read_text():
        time.sleep(0.01)
    waiter.send({"cmd": "hold-lock", "log": str(log), "ms": 10})
    assert holder.next() == {"held": True}
    assert waiter.next() == {"held": True}
    assert holds(log) == [(holder.pid, holder.pid), (waiter.pid, waiter.pid)]


def test_processes_of_both_kinds_finding_a_stale_lock_at_once_take_it_over_one_at_a_time(
    tmp_path: Path, workers: list[Worker]
) -> None:
    file, log = tmp_path / "tokens.json", tmp_path / "log"
    lock = tmp_path / "tokens.json.refresh.lock"
    fleet = [start(workers, kind, file, stale=2) for kind in ("python", "node") * 3]
    lock.mkdir()
    old = time.time() - 10
    os.utime(lock, (old, old))
    for w in fleet:
        w.send({"cmd": "hold-lock", "log": str(log), "ms": 50})
    for w in fleet:
        assert w.next() == {"held": True}
    assert sorted(pid for pid, _ in holds(log)) == sorted(w.pid for w in fleet)


@pytest.mark.parametrize("kind", ["python", "node"])
def test_writers_killed_with_sigkill_mid_write_leave_a_valid_file_with_every_other_key(
    tmp_path: Path, workers: list[Worker], kind: Kind
) -> None:
    file = tmp_path / "tokens.json"
    start(workers, "python", file, stale=2).send({"cmd": "write", "key": "kept", "value": "yes"})
    assert workers[0].next() == {"written": "kept"}
    for round_ in range(5):
        writer = start(workers, kind, file, stale=2)
        writer.send({"cmd": "write-loop", "size": 200_000})
        assert writer.next() == {"looping": True}
        time.sleep(0.05 + round_ * 0.03)  # kill at different points of the loop; any point must be safe
        writer.kill()
        data = json.loads(file.read_text())
        assert data["kept"] == "yes"
        assert set(data) <= {"kept", "loop"}
    # The next writer removes the temporary files the killed ones left.
    start(workers, "python", file, stale=2).send({"cmd": "write", "key": "after", "value": "1"})
    assert workers[-1].next() == {"written": "after"}
    assert not list(tmp_path.glob("tokens.json.*.tmp"))


def test_keys_written_at_once_by_python_and_node_processes_are_all_kept(tmp_path: Path, workers: list[Worker]) -> None:
    file = tmp_path / "tokens.json"
    fleet = [start(workers, kind, file, stale=10) for kind in ("python", "node") * 6]
    for i, w in enumerate(fleet):
        w.send({"cmd": "write", "key": f"{w.kind}-{i}", "value": str(i)})
    for i, w in enumerate(fleet):
        assert w.next() == {"written": f"{w.kind}-{i}"}
    assert json.loads(file.read_text()) == {f"{w.kind}-{i}": str(i) for i, w in enumerate(fleet)}


def test_a_file_written_by_python_is_read_by_node_and_the_other_way_round(tmp_path: Path) -> None:
    file = tmp_path / "tokens.json"
    from tenant_integration.storage import FileStorage

    FileStorage(file).set("from-python", 'é ✓ "quoted"')
    script = (
        "import { fileStorage } from '@tenant-integration/token-manager/node';"
        "const s = fileStorage(process.argv[1]);"
        "const got = await s.get('from-python');"
        "await s.set('from-node', got + ' and back');"
        "console.log(JSON.stringify(got));"
    )
    node = subprocess.run(
        ["node", "--input-type=module", "-e", script, str(file)],
        cwd=REPO / "packages" / "token-manager",
        capture_output=True,
        text=True,
        check=True,
        timeout=ANSWER_TIMEOUT,
    )
    assert json.loads(node.stdout) == 'é ✓ "quoted"'
    assert FileStorage(file).get("from-node") == 'é ✓ "quoted" and back'


# -- the Python worker: this file run as a script ---------------------------------------------------


def test_a_wait_for_the_refresh_lock_asks_until_as_soon_as_the_token_file_is_replaced(
    tmp_path: Path, workers: list[Worker], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 28: while another process holds the refresh lock, a waiter looks at the token file (one
    ``stat``) between its tries and asks ``until`` once the file was replaced, as the TypeScript lock
    wakes on a change of the file, instead of only at its periodic check (moved out of this test's
    reach): a fleet waiting on a refresher stops waiting soon after the tokens were written. Before,
    this wait ran out (LOCK_TIMEOUT)."""
    monkeypatch.setattr(_dir_lock, "UNTIL_EVERY", 3600.0)
    file, log = tmp_path / "tokens.json", tmp_path / "log"
    holder = start(workers, "python", file, stale=60)
    holder.send({"cmd": "hold-lock", "log": str(log), "ms": 60_000})
    deadline = time.monotonic() + ANSWER_TIMEOUT
    while not (log.exists() and log.read_text().startswith("in ")):
        assert time.monotonic() < deadline, "the holder did not take the lock"
        time.sleep(0.01)
    stop = threading.Event()

    def another_process_writing() -> None:
        # Replaced again and again, so that a replacement comes after the waiter has looked once.
        writer, i = FileStorage(file), 0
        while not stop.wait(0.01):
            writer.set("tokens", str(i))
            i += 1

    thread = threading.Thread(target=another_process_writing, daemon=True)
    thread.start()
    asked: list[bool] = []
    ran: list[bool] = []

    def fresh_tokens_stored() -> bool:
        asked.append(True)
        return True

    waiting: Callable[..., Any] = FileStorage(file, lock_timeout=10).lock
    try:
        with pytest.raises(LockWaitEnded):
            waiting("refresh", lambda: ran.append(True), until=fresh_tokens_stored)
    finally:
        stop.set()
        thread.join(ANSWER_TIMEOUT)
    assert asked == [True]
    assert ran == []


def worker(file: str, options: dict[str, float]) -> None:
    """Reads one JSON command per line, as file-worker.mjs: hold-lock, write, write-loop."""
    from tenant_integration.storage import FileStorage

    def say(message: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    def hold(log: str, ms: float) -> None:
        with open(log, "a") as f:
            f.write(f"in {os.getpid()}\n")
        time.sleep(ms / 1000)
        with open(log, "a") as f:
            f.write(f"out {os.getpid()}\n")

    say({"ready": True, "pid": os.getpid()})
    for line in sys.stdin:
        command = json.loads(line)
        storage = FileStorage(file, **options)
        try:
            if command["cmd"] == "hold-lock":
                storage.lock("hold", functools.partial(hold, str(command["log"]), float(command["ms"])))
                say({"held": True})
            elif command["cmd"] == "write":
                storage.set(command["key"], command["value"])
                say({"written": command["key"]})
            elif command["cmd"] == "write-loop":
                say({"looping": True})
                i = 0
                while True:
                    storage.set("loop", str(i).ljust(command["size"], "x"))
                    i += 1
        except Exception as e:  # reported to the test, which fails on it
            say({"error": getattr(e, "code", "ERROR"), "message": str(e)})


if __name__ == "__main__":
    worker(sys.argv[1], json.loads(sys.argv[2]))


# -- the owner file: a paused holder on this host is waited for, a dead one taken over at once ---------


def start_directory_holder(lock: Path) -> subprocess.Popen[bytes]:
    """Another process that takes the lock directory as the TypeScript kit does (mkdir, then its owner
    file naming its pid and host), says so, and then holds it (it never touches it again)."""
    script = (
        "import json, os, socket, sys, time\n"
        f"lock = {str(lock)!r}\n"
        "os.mkdir(lock)\n"
        "owner = {'pid': os.getpid(), 'host': socket.gethostname(), 'id': 'their-id',\n"
        "         'since': int(time.time() * 1000)}\n"
        "open(os.path.join(lock, 'owner'), 'w').write(json.dumps(owner, separators=(',', ':')))\n"
        "print('held', flush=True)\n"
        "time.sleep(600)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    assert holder.stdout is not None
    assert holder.stdout.readline() == b"held\n"
    return holder


def test_a_lock_directory_whose_holder_is_paused_on_this_host_is_waited_for_and_one_that_exited_is_taken_at_once(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tokens.json"
    lock = tmp_path / "tokens.json.refresh.lock"
    holder = start_directory_holder(lock)
    try:
        holder.send_signal(signal.SIGSTOP)
        # Far past the stale bound: only the owner file says the holder lives.
        old = time.time() - 60
        os.utime(lock, (old, old))
        storage = FileStorage(path, stale_after=2, lock_timeout=1)
        with pytest.raises(FileStorageError) as caught:
            storage.lock("x", lambda: "taken")
        assert caught.value.code == "LOCK_TIMEOUT"
        assert f"by process {holder.pid} on this host, which is alive" in str(caught.value)
        assert json.loads((lock / "owner").read_text())["id"] == "their-id"

        holder.kill()
        holder.wait()
        # Fresh mtime, but its holder has exited (ESRCH): taken over at once, well within lock_timeout.
        os.utime(lock)
        assert FileStorage(path, stale_after=60, lock_timeout=5).lock("x", lambda: "taken") == "taken"
        assert not lock.exists()
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
