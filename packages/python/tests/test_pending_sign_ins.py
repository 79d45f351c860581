"""Pending sign-ins by state and session ids (spec/token-store/README.md, "Sessions"), on every storage
of the kit: any number of sign-ins in flight, each found by its state, taken once (atomically, by
``take``), dropped once expired (``set_expiring``); a manager with a session id keeps its records under
its own names and lock, and completes only its own sign-ins."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from fake_tenant import BASE_URL, CLIENT_ID, LIFETIME, REDIRECT_URI, Clock, FakeTenant
from tenant_integration import MemoryStorage, TenantIntegrationError, TokenManager, TokenManagerError
from tenant_integration._binding import binding_hash
from tenant_integration._names import pending_name
from tenant_integration.storage.file import FileStorage
from tenant_integration.storage.redis import RedisStorage

STATE = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
VERIFIER = STATE + "-verifier-of-fifty-nine"


def record(expires_at_ms: float, **extra: str) -> str:
    fields = {"state": STATE, "verifier": VERIFIER, "expiresAt": round(expires_at_ms), **extra}
    return json.dumps(fields, separators=(",", ":"))


@pytest.fixture(params=["memory", "file", "redis"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "memory":
        yield MemoryStorage()
    elif request.param == "file":
        yield FileStorage(tmp_path / "tokens.json")
    else:
        import secrets

        client = redis.Redis.from_url(request.getfixturevalue("redis_url"), socket_timeout=5)
        yield RedisStorage(client, prefix=f"test-{secrets.token_hex(4)}:")
        client.close()


def make(tenant: FakeTenant, clock: Clock, storage: Any, **options: Any) -> TokenManager:
    return TokenManager(
        BASE_URL,
        CLIENT_ID,
        REDIRECT_URI,
        ["profile:read"],
        storage=storage,
        now=clock,
        transport=tenant.transport,
        **options,
    )


def test_two_tabs_sign_in_at_once_and_both_complete_in_reverse_order(storage: Any) -> None:
    tenant, clock = FakeTenant(), Clock(time.time())
    manager = make(tenant, clock, storage)
    first, second = manager.begin_authorization(), manager.begin_authorization()
    manager.complete_authorization(tenant.approve(second.url))
    manager.complete_authorization(tenant.approve(first.url))
    assert len(tenant.grants("authorization_code")) == 2
    assert storage.get(pending_name(BASE_URL, CLIENT_ID, first.state)) is None
    assert storage.get(pending_name(BASE_URL, CLIENT_ID, second.state)) is None


def test_of_concurrent_takes_of_one_pending_sign_in_at_most_one_gets_it(storage: Any) -> None:
    name = pending_name(BASE_URL, CLIENT_ID, STATE)
    for _ in range(3):
        storage.set_expiring(name, record(time.time() * 1000 + 60_000), 60)
        barrier = threading.Barrier(6)
        taken: list[str | None] = []

        def take(barrier: threading.Barrier = barrier, taken: list[str | None] = taken) -> None:
            barrier.wait()
            taken.append(storage.take(name))

        threads = [threading.Thread(target=take) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len([value for value in taken if value is not None]) == 1
        assert taken.count(None) == 5
    assert storage.take(name) is None


def test_a_session_managers_records_are_its_own_and_other_sessions_are_untouched(storage: Any) -> None:
    tenant, clock = FakeTenant(), Clock(time.time())
    ada = make(tenant, clock, storage, session_id="ada@example.org")
    bob = make(tenant, clock, storage, session_id="auth0|bob")
    plain = make(tenant, clock, storage)
    for manager in (ada, bob):
        manager.complete_authorization(tenant.approve(manager.begin_authorization().url))
    assert storage.get(f"tenant-integration:{BASE_URL}:{CLIENT_ID}:ada@example.org:tokens") is not None
    assert storage.get(f"tenant-integration:{BASE_URL}:{CLIENT_ID}:auth0|bob:tokens") is not None
    assert not plain.is_signed_in()
    assert ada.get_access_token() != bob.get_access_token()
    bob.sign_out()
    assert ada.is_signed_in()
    assert not bob.is_signed_in()


def test_a_manager_completes_only_its_own_sessions_sign_ins(storage: Any) -> None:
    tenant, clock = FakeTenant(), Clock(time.time())
    ada = make(tenant, clock, storage, session_id="ada")
    bob = make(tenant, clock, storage, session_id="bob")
    plain = make(tenant, clock, storage)
    for taker, begun in ((bob, ada), (plain, ada), (ada, plain)):
        callback = tenant.approve(begun.begin_authorization().url)
        with pytest.raises(TokenManagerError) as caught:
            taker.complete_authorization(callback)
        assert caught.value.code == "STATE_MISMATCH"
        assert "another session" in str(caught.value)
        # Used up: the callback cannot be replayed at the right manager.
        with pytest.raises(TokenManagerError) as again:
            begun.complete_authorization(callback)
        assert again.value.code == "NO_PENDING_SIGN_IN"
    assert tenant.requests == []


def test_a_sign_in_bound_to_a_browser_is_refused_to_a_callback_without_its_binding(storage: Any) -> None:
    tenant, clock = FakeTenant(), Clock(time.time())
    manager = make(tenant, clock, storage)
    name = pending_name(BASE_URL, CLIENT_ID, STATE)
    storage.set_expiring(name, record(clock() * 1000 + 60_000, browser=binding_hash("b" * 43)), 60)
    with pytest.raises(TokenManagerError) as caught:
        manager.complete_authorization(f"{REDIRECT_URI}?code=c&state={STATE}")
    assert caught.value.code == "STATE_MISMATCH"
    assert "another browser" in str(caught.value)
    assert storage.get(name) is None
    assert tenant.requests == []


def test_an_invalid_session_id_is_refused_before_anything_is_written(storage: Any) -> None:
    with pytest.raises(TokenManagerError) as caught:
        make(FakeTenant(), Clock(), storage, session_id="42}")
    assert caught.value.code == "INVALID_SESSION_ID"
    assert '"}" at character 3' in str(caught.value)


def test_memory_drops_an_expired_pending_sign_in_when_read_and_when_it_writes() -> None:
    storage = MemoryStorage()
    storage.set_expiring("a", "1", 0.05)
    storage.set_expiring("b", "2", 0.05)
    time.sleep(0.06)
    assert storage.get("a") is None
    storage.set_expiring("c", "3", 60)
    assert storage._data == {"c": "3"}
    storage.set("c", "kept")
    time.sleep(0.01)
    assert storage.take("c") == "kept"


def test_a_token_file_drops_expired_and_invalid_pending_sign_ins_on_each_write(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    storage = FileStorage(path)
    now = time.time() * 1000
    expired = pending_name(BASE_URL, CLIENT_ID, "x" * 43)
    live = pending_name(BASE_URL, CLIENT_ID, STATE)
    invalid = pending_name(BASE_URL, CLIENT_ID, "y" * 43)
    path.write_text(
        json.dumps({expired: record(now - 1), live: record(now + 60_000), invalid: "{}", "other": "kept"}), "utf-8"
    )
    storage.set("tenant-integration:x:tokens", "t")
    assert set(json.loads(path.read_text("utf-8"))) == {live, "other", "tenant-integration:x:tokens"}


def test_redis_writes_a_pending_sign_in_with_its_lifetime_and_takes_it_with_getdel(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url, socket_timeout=5)
    storage = RedisStorage(client, prefix="pending-test:")
    name = pending_name(BASE_URL, CLIENT_ID, STATE)
    key = f"pending-test:tenant-integration:{{{BASE_URL}:{CLIENT_ID}}}:pending:13d31e961a1ad8ec2f16b10c4c982e08"
    storage.set_expiring(name, "v", 600)
    assert 599_000 < int(client.pttl(key)) <= 600_000
    storage.set_expiring(name, "v", 0.05)
    time.sleep(0.1)
    assert client.exists(key) == 0
    storage.set_expiring(name, "v", 60)
    storage._no_getdel = True  # a server before Redis 6.2: the script does GET and DEL
    assert storage.take(name) == "v"
    assert client.exists(key) == 0
    client.close()


class Plain:
    """A storage of the app's own with neither set_expiring nor take."""

    lock = None

    def __init__(self) -> None:
        self.data: dict[str, str] = {}

    def get(self, key: str) -> str | None:
        return self.data.get(key)

    def set(self, key: str, value: str) -> None:
        self.data[key] = value

    def delete(self, key: str) -> None:
        self.data.pop(key, None)


def test_a_storage_without_the_capabilities_falls_back_and_says_so_once(caplog: pytest.LogCaptureFixture) -> None:
    tenant, clock = FakeTenant(), Clock(time.time())
    storage = Plain()
    manager = make(tenant, clock, storage)
    with caplog.at_level(logging.WARNING, logger="tenant_integration"):
        requests = [manager.begin_authorization() for _ in range(2)]
        manager.complete_authorization(tenant.approve(requests[1].url))
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert "no set_expiring" in warnings[0]
    assert "not atomic" in warnings[1]
    assert list(storage.data) == [pending_name(BASE_URL, CLIENT_ID, requests[0].state), manager._tokens_key]


def test_one_sessions_file_refresh_lock_never_waits_for_anothers(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path / "tokens.json", lock_timeout=0.5)
    tenant, clock = FakeTenant(), Clock(time.time())
    ada = make(tenant, clock, storage, session_id="ada")
    bob = make(tenant, clock, storage, session_id="bob")
    for manager in (ada, bob):
        manager.complete_authorization(tenant.approve(manager.begin_authorization().url))
    clock.advance(LIFETIME + 1)
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        def held() -> None:
            holding.set()
            release.wait(10)

        storage.session_lock(ada._lock_name, held)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert holding.wait(5)
        bob.get_access_token()  # would be LOCK_TIMEOUT behind ada's lock
        assert tenant.refreshes == 1
        with pytest.raises(TenantIntegrationError) as caught:
            ada.get_access_token()
        assert caught.value.code == "LOCK_TIMEOUT"
    finally:
        release.set()
        holder.join()
    ada.get_access_token()
    assert tenant.refreshes == 2


def debug_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("tenant_integration")]


def test_a_sessions_log_lines_carry_its_id_at_debug_level_only(caplog: pytest.LogCaptureFixture) -> None:
    tenant, clock = FakeTenant(), Clock(time.time())
    manager = make(tenant, clock, MemoryStorage(), session_id="ada@example.org")
    with caplog.at_level(logging.INFO, logger="tenant_integration"):
        manager.complete_authorization(tenant.approve(manager.begin_authorization().url))
    assert debug_records(caplog) != []
    assert all(not hasattr(r, "session_id") for r in debug_records(caplog))
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="tenant_integration"):
        manager.complete_authorization(tenant.approve(manager.begin_authorization().url))
    assert debug_records(caplog) != []
    assert all(getattr(r, "session_id", None) == "ada@example.org" for r in debug_records(caplog))


def test_a_token_file_gathers_the_changes_of_a_processs_threads_into_fewer_rewrites(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = FileStorage(tmp_path / "tokens.json")
    rewrites: list[int] = []
    write = storage._write_durably

    def counted(file: str, data: dict[str, str]) -> None:
        rewrites.append(len(data))
        time.sleep(0.01)  # a rewrite takes a while: the changes made meanwhile wait for the next one
        write(file, data)

    monkeypatch.setattr(storage, "_write_durably", counted)
    barrier = threading.Barrier(40)

    def change(n: int) -> None:
        barrier.wait()
        storage.set(f"tenant-integration:x:{n}:tokens", str(n))

    threads = [threading.Thread(target=change, args=(n,)) for n in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert {storage.get(f"tenant-integration:x:{n}:tokens") for n in range(40)} == {str(n) for n in range(40)}
    assert len(rewrites) < 40
    assert FileStorage(tmp_path / "tokens.json").get("tenant-integration:x:39:tokens") == "39"
