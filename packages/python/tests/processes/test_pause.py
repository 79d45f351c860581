"""Issue 21 for the Python SDK, in one process: a process paused with its refresh in flight keeps its
session, and a lock directory whose holder is paused on this host is waited for while one whose
holder exited is taken at once. Real processes (tests/processes/worker.py), real signals, and the
sandbox tenant with strict rotation (a rotated-away refresh token presented again revokes the family).

Fleets whose holder pauses or dies at each point of the refresh, on a token file and on Redis, Python
alone and mixed with TypeScript, are scenarios of the conformance suite (spec/conformance/, run by
``pnpm test`` in tools/conformance).

The geometry is kept small to bound CI time: a 2 s stale bound, a 3 s pause, a 2 s request timeout
(shorter than the pause) and a 6 s intent wait. The pause is the test's orchestration, never an
assertion.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tenant_integration.storage.errors import FileStorageError
from tenant_integration.storage.file import FileStorage
from tenant_integration.testing import SandboxProcess

from .fleet import (
    CLIENT_ID,
    DEMO_USER_ID,
    REDIRECT_URI,
    Member,
    Message,
    again,
    expire,
    refresh_outcomes,
    sign_in,
    stop_fleet,
)

PAUSE_S = 3.0
SMALL_SCALE = {
    "STALE_S": "2",
    "LEASE_MS": "2000",
    "REQUEST_TIMEOUT_S": "2",
    "INTENT_WAIT_S": "6",
}


def base_env(sandbox: SandboxProcess) -> dict[str, str]:
    return {
        "TENANT_URL": sandbox.url,
        "CLIENT_ID": CLIENT_ID,
        "REDIRECT_URI": REDIRECT_URI,
        "CLOCK_OFFSET_MS": str(round(sandbox.clock.offset_seconds * 1000)),
        **SMALL_SCALE,
    }


def slow_next_token_answer(sandbox: SandboxProcess) -> None:
    """The tenant answers the next token request 1 s late (after rotating), so a holder paused 0.2 s
    after sending is stopped while it waits, and the answer arrives during its pause."""
    response = httpx.post(
        f"{sandbox.url}/__sandbox/faults",
        json={"route": "/oauth/token", "kind": "slow", "delayMs": 1000, "count": 1},
        trust_env=False,
    )
    assert response.status_code < 300, response.text


def result_of(member: Member) -> Message:
    """The member's next result, skipping its other messages."""
    while True:
        message = member.next(timeout=90)
        if "result" in message:
            return member.result(message)


def wait_stopped(member: Member) -> None:
    """Waits until the member has actually stopped itself (state T in /proc): it says where it pauses
    just before its SIGSTOP, and a SIGCONT sent in between would be lost."""
    deadline = time.monotonic() + 30
    while Path(f"/proc/{member.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "T":
        assert time.monotonic() < deadline, f"never stopped: {member.describe()}"
        time.sleep(0.01)


def worked(result: Message) -> bool:
    """Got the user with a 200 (a file-worker.mjs answer carries the status and the user's name only)."""
    return (
        result.get("ok") is True and result.get("status") == 200 and result.get("userId", DEMO_USER_ID) == DEMO_USER_ID
    )


@pytest.mark.parametrize("manager", ["TokenManager", "AsyncTokenManager"])
def test_a_single_process_paused_with_its_refresh_in_flight_keeps_its_session_when_the_answer_had_arrived(
    sandbox: SandboxProcess, tmp_path: Path, manager: str
) -> None:
    token_file = tmp_path / "tokens.json"
    sign_in(sandbox, FileStorage(token_file))
    env = {
        **base_env(sandbox),
        "STORAGE": "file",
        "TOKEN_FILE": str(token_file),
        "PAUSE": "in-flight",
        "ASYNC": "1" if manager == "AsyncTokenManager" else "0",
    }
    member = Member(env)
    try:
        member.expect_ready()
        seq = sandbox.last_seq()
        slow_next_token_answer(sandbox)
        member.send(member.go_command(expire(sandbox)))
        assert member.next(timeout=60) == {"paused": "in-flight"}
        wait_stopped(member)
        # Paused past its 2 s request timeout; the tenant's answer arrives 1 s into the pause.
        time.sleep(PAUSE_S)
        member.kill(signal.SIGCONT)
        result = result_of(member)

        assert worked(result), result
        assert result["refreshed"], result
        assert refresh_outcomes(sandbox, seq) == ["ok"]
        later = again([member])[0]
        assert worked(later), later
        assert not later["refreshed"], later
    finally:
        stop_fleet([member])


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
