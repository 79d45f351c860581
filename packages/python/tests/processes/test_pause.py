"""Issue 21 for the Python SDK: a process that pauses while it holds the refresh lock must not end
everyone's session. Real processes (tests/processes/worker.py), real signals (the holder stops itself
with SIGSTOP at the point under test; the test sends SIGCONT), a real redis-server, and the sandbox
tenant with strict rotation (a rotated-away refresh token presented again revokes the family).

The issue's geometry (a 10 s stale bound or lease, a 13 s pause) is kept at a smaller scale to bound
CI time: a 2 s stale bound and lease, a 3 s pause, a 2 s request timeout (shorter than the pause) and
a 6 s intent wait (longer than the pause). The pause is the test's orchestration, never an assertion.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from tenant_integration.storage.errors import FileStorageError
from tenant_integration.storage.file import FileStorage
from tenant_integration.storage.redis import RedisStorage
from tenant_integration.testing import SandboxProcess

from .fleet import (
    CLIENT_ID,
    DEMO_USER_ID,
    REDIRECT_URI,
    Kind,
    Member,
    Message,
    again,
    expire,
    refresh_outcomes,
    release_together,
    sign_in,
    start_fleet,
    stop_fleet,
)

OTHERS = 4
TRIALS = 2
PAUSE_S = 3.0
SMALL_SCALE = {
    "STALE_S": "2",
    "LEASE_MS": "2000",
    "REQUEST_TIMEOUT_S": "2",
    "INTENT_WAIT_S": "6",
    # The same for the TypeScript workers (child.mjs).
    "REQUEST_TIMEOUT_MS": "2000",
    "INTENT_WAIT_MS": "6000",
}
PAUSE_POINTS = ["locked", "in-flight", "answered"]


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
        # A file-worker.mjs answers in a shape of its own (status or error), read by Member.result.
        if "result" in message or (member.kind == "node-file" and ("status" in message or "error" in message)):
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


def pause_trial(
    sandbox: SandboxProcess,
    env: Mapping[str, str],
    others: list[Member],
    where: str,
    label: str,
    victim_kind: Kind = "python",
) -> None:
    pause = {"PAUSE": where} if victim_kind == "python" else {"VICTIM": f"pause-{where}"}
    # On the sandbox's clock as it is now (earlier trials moved it).
    clock = {"CLOCK_OFFSET_MS": str(round(sandbox.clock.offset_seconds * 1000))}
    victim = Member(victim_kind, {**env, **pause, **clock})
    try:
        victim.expect_ready()
        seq = sandbox.last_seq()
        if where == "in-flight":
            slow_next_token_answer(sandbox)
        offset = expire(sandbox)
        victim.send(victim.go_command(offset))
        assert victim.next(timeout=60) == {"paused": where}, label
        wait_stopped(victim)
        for member in others:
            member.send(member.go_command(offset))
        time.sleep(PAUSE_S)
        victim.kill(signal.SIGCONT)
        results = [result_of(victim), *(result_of(member) for member in others)]

        assert [r for r in results if not worked(r)] == [], label
        assert refresh_outcomes(sandbox, seq) == ["ok"], label
        # A later call (same clock) works everywhere from the stored record, with no refresh.
        later = release_together([victim, *others], offset)
        assert [r for r in later if not worked(r) or r.get("refreshed")] == [], label
        assert refresh_outcomes(sandbox, seq) == ["ok"], label
    finally:
        stop_fleet([victim])


@pytest.mark.parametrize("where", PAUSE_POINTS)
def test_on_a_token_file_a_holder_paused_past_the_stale_bound_keeps_everyones_session(
    sandbox: SandboxProcess, tmp_path: Path, where: str
) -> None:
    token_file = tmp_path / "tokens.json"
    sign_in(sandbox, FileStorage(token_file))
    env = {**base_env(sandbox), "STORAGE": "file", "TOKEN_FILE": str(token_file)}
    others = start_fleet("python", OTHERS, env)
    try:
        for trial in range(1, TRIALS + 1):
            pause_trial(sandbox, env, others, where, f"{where}, trial {trial}")
    finally:
        stop_fleet(others)


@pytest.mark.parametrize("where", PAUSE_POINTS)
def test_on_redis_a_holder_paused_past_its_lease_keeps_everyones_session(
    sandbox: SandboxProcess, redis_url: str, where: str
) -> None:
    prefix = f"pause-{uuid.uuid4().hex[:8]}:"
    connection = redis.Redis.from_url(redis_url)
    try:
        sign_in(sandbox, RedisStorage(connection, prefix=prefix))
        env = {**base_env(sandbox), "STORAGE": "redis", "REDIS_URL": redis_url, "PREFIX": prefix}
        others = start_fleet("python", OTHERS, env)
        try:
            for trial in range(1, TRIALS + 1):
                pause_trial(sandbox, env, others, where, f"{where}, trial {trial}")
        finally:
            stop_fleet(others)
    finally:
        connection.close()


def test_python_and_typescript_processes_honour_each_others_owner_file_and_intent(
    sandbox: SandboxProcess, tmp_path: Path, redis_url: str
) -> None:
    # On a token file: a Python holder paused with its request in flight; TypeScript waiters (the BUILT
    # kit) see it alive in the lock directory's owner file and wait.
    token_file = tmp_path / "tokens.json"
    sign_in(sandbox, FileStorage(token_file))
    env = {**base_env(sandbox), "STORAGE": "file", "TOKEN_FILE": str(token_file)}
    argv = [sandbox.url, str(token_file), CLIENT_ID, REDIRECT_URI, json.dumps({"staleMs": 2000})]
    others = start_fleet("python", 2, env) + start_fleet("node-file", 2, {}, argv)
    try:
        pause_trial(sandbox, env, others, "in-flight", "token file, Python holder")
    finally:
        stop_fleet(others)

    # On Redis: a Python holder paused after the answer, TypeScript and Python waiters; then a TypeScript
    # holder paused after the answer, Python and TypeScript waiters: each honours the other's intent.
    prefix = f"pause-{uuid.uuid4().hex[:8]}:"
    connection = redis.Redis.from_url(redis_url)
    try:
        sign_in(sandbox, RedisStorage(connection, prefix=prefix))
        env = {**base_env(sandbox), "STORAGE": "redis", "REDIS_URL": redis_url, "PREFIX": prefix}
        others = start_fleet("python", 2, env) + start_fleet("node-redis", 2, env)
        try:
            pause_trial(sandbox, env, others, "answered", "Redis, Python holder")
            pause_trial(sandbox, env, others, "answered", "Redis, TypeScript holder", victim_kind="node-redis")
        finally:
            stop_fleet(others)
    finally:
        connection.close()


def test_on_redis_a_holder_paused_after_the_answer_for_longer_than_the_intent_wait_ends_the_session_as_documented(
    sandbox: SandboxProcess, redis_url: str
) -> None:
    prefix = f"pause-{uuid.uuid4().hex[:8]}:"
    connection = redis.Redis.from_url(redis_url)
    try:
        sign_in(sandbox, RedisStorage(connection, prefix=prefix))
        env = {
            **base_env(sandbox),
            "STORAGE": "redis",
            "REDIS_URL": redis_url,
            "PREFIX": prefix,
            "INTENT_WAIT_S": "1",
        }
        others = start_fleet("python", OTHERS, env)
        victim = Member("python", {**env, "PAUSE": "answered"})
        try:
            victim.expect_ready()
            seq = sandbox.last_seq()
            offset = expire(sandbox)
            victim.send(victim.go_command(offset))
            assert victim.next(timeout=60) == {"paused": "answered"}
            wait_stopped(victim)
            for member in others:
                member.send(member.go_command(offset))
            results = [result_of(member) for member in others]
            victim.kill(signal.SIGCONT)
            results.append(result_of(victim))

            # After the wait another process presented the token; the tenant revoked the family.
            assert refresh_outcomes(sandbox, seq)[:2] == ["ok", "invalid_grant refresh_token_reused"]
            assert [r for r in results if r.get("ok")] == []
            assert {r["code"] for r in results} <= {"SESSION_ENDED", "NOT_SIGNED_IN"}
            assert "SESSION_ENDED" in {r["code"] for r in results}
            later = again([victim, *others])
            assert [r["code"] for r in later] == ["NOT_SIGNED_IN"] * (OTHERS + 1)
        finally:
            stop_fleet([victim, *others])
    finally:
        connection.close()


def test_redis_with_an_append_only_file_killed_during_a_refresh_and_restarted_keeps_the_session(
    sandbox: SandboxProcess, redis_servers: Callable[..., Any], tmp_path: Path
) -> None:
    server = redis_servers(dir=tmp_path)
    prefix = f"aof-{uuid.uuid4().hex[:8]}:"
    connection = redis.Redis.from_url(server.url)
    sign_in(sandbox, RedisStorage(connection, prefix=prefix))
    connection.close()
    env = {**base_env(sandbox), "STORAGE": "redis", "REDIS_URL": server.url, "PREFIX": prefix}
    victim = Member("python", {**env, "PAUSE": "answered"})
    others: list[Member] = []
    try:
        victim.expect_ready()
        others = start_fleet("python", OTHERS, env)
        seq = sandbox.last_seq()
        offset = expire(sandbox)
        victim.send(victim.go_command(offset))
        # The tenant rotated the token; the holder has the answer and has not written it.
        assert victim.next(timeout=60) == {"paused": "answered"}
        wait_stopped(victim)
        assert server.process is not None
        server.process.kill()
        server.process.wait()
        server.stop()
        # Its write fails (Redis is down): it keeps the tokens in memory and gets the user.
        victim.kill(signal.SIGCONT)
        assert worked(result_of(victim))
        # Redis comes back from its append-only file: the old record, and the holder's intent.
        server.start()
        for member in others:
            member.send(member.go_command(offset))
        results = [result_of(member) for member in others]

        assert [r for r in results if not worked(r)] == []
        assert refresh_outcomes(sandbox, seq) == ["ok"]
        later = again([victim, *others])
        assert [r for r in later if not worked(r) or r["refreshed"]] == []
        assert refresh_outcomes(sandbox, seq) == ["ok"]
    finally:
        stop_fleet([victim, *others])


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
    member = Member("python", env)
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
