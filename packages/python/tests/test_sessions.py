"""Sessions and AsyncSessions: a server acting for many users (DESIGN-39 S4, S5; spec/token-store/README.md,
"Sessions"). Every call names its session; sign-ins are bound to the browser that began them; managers
are cached, dropped when idle or past the bound, never while in use or holding unwritten tokens; one
HTTP client serves them all."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from fake_tenant import BASE_URL, CLIENT_ID, LIFETIME, REDIRECT_URI, Clock, FakeTenant
from tenant_integration import AsyncSessions, MemoryStorage, Sessions, SignIn, TokenManagerError
from tenant_integration._binding import binding_hash
from tenant_integration._names import pending_name
from tenant_integration.storage.file import FileStorage


def make(tenant: FakeTenant, clock: Clock, **options: Any) -> Sessions:
    return Sessions(
        BASE_URL, CLIENT_ID, REDIRECT_URI, ["profile:read"], now=clock, transport=tenant.transport, **options
    )


def signed_in(sessions: Sessions, tenant: FakeTenant, session_id: str) -> None:
    sign_in = sessions.begin_sign_in(session_id)
    sessions.complete_sign_in(tenant.approve(sign_in.url), binding=sign_in.binding, session_id=session_id)


def test_two_users_sign_in_at_once_and_each_session_holds_its_own_tokens() -> None:
    tenant, clock = FakeTenant(), Clock(time.time())
    storage = MemoryStorage()
    sessions = make(tenant, clock, storage=storage)
    ada, bob = sessions.begin_sign_in("ada"), sessions.begin_sign_in("bob")
    done_bob = sessions.complete_sign_in(tenant.approve(bob.url), binding=bob.binding)
    done_ada = sessions.complete_sign_in(tenant.approve(ada.url), binding=ada.binding, session_id="ada")
    assert (done_ada.session_id, done_bob.session_id) == ("ada", "bob")
    assert sessions.get_access_token("ada") != sessions.get_access_token("bob")
    assert storage.get(f"tenant-integration:{BASE_URL}:{CLIENT_ID}:ada:tokens") is not None
    assert storage.get(f"tenant-integration:{BASE_URL}:{CLIENT_ID}:tokens") is None
    assert sessions.is_signed_in("ada")
    assert not sessions.is_signed_in("carol")
    sessions.sign_out("bob")
    assert not sessions.is_signed_in("bob")
    sessions.revoke("ada")
    assert not sessions.is_signed_in("ada")
    assert [r.path for r in tenant.requests].count("/oauth/revoke") == 1


def test_a_sign_in_is_bound_to_the_browser_the_given_binding_names_by_its_hash_only() -> None:
    tenant, clock = FakeTenant(), Clock(time.time())
    storage = MemoryStorage()
    sessions = make(tenant, clock, storage=storage)
    fresh = sessions.begin_sign_in("ada")
    assert len(fresh.binding) == 43
    given = sessions.begin_sign_in("ada", binding="app-session-7f3a9c2e")
    assert given.binding == "app-session-7f3a9c2e"
    raw = storage.get(pending_name(BASE_URL, CLIENT_ID, tenant_state(given)))
    assert raw is not None
    assert binding_hash("app-session-7f3a9c2e") in raw
    assert "app-session-7f3a9c2e" not in raw
    assert "binding" not in repr(given)
    assert given.url not in repr(given)


def tenant_state(sign_in: SignIn) -> str:
    return httpx.URL(sign_in.url).params["state"]


@pytest.mark.parametrize("brought", [None, "", "__79_Pv6-fj39vX08_Lx8O_u7ezr6uno5-bl5OPi4eA"])
def test_a_callback_replayed_in_another_browser_is_refused_before_any_exchange_and_used_up(
    brought: str | None,
) -> None:
    tenant, clock = FakeTenant(), Clock(time.time())
    sessions = make(tenant, clock)
    sign_in = sessions.begin_sign_in("ada")
    callback = tenant.approve(sign_in.url)
    with pytest.raises(TokenManagerError) as caught:
        sessions.complete_sign_in(callback, binding=brought)
    assert caught.value.code == "STATE_MISMATCH"
    assert "another browser" in str(caught.value)
    with pytest.raises(TokenManagerError) as again:
        sessions.complete_sign_in(callback, binding=sign_in.binding)
    assert again.value.code == "NO_PENDING_SIGN_IN"
    assert tenant.requests == []


def test_a_sign_in_begun_for_another_session_or_by_a_plain_manager_is_refused() -> None:
    tenant, clock = FakeTenant(), Clock(time.time())
    sessions = make(tenant, clock)
    sign_in = sessions.begin_sign_in("bob")
    with pytest.raises(TokenManagerError) as other:
        sessions.complete_sign_in(tenant.approve(sign_in.url), binding=sign_in.binding, session_id="ada")
    assert other.value.code == "STATE_MISMATCH"
    assert "another session" in str(other.value)
    # A session's sign-in bound to a browser is refused to a manager's complete_authorization.
    sign_in = sessions.begin_sign_in("bob")
    with pytest.raises(TokenManagerError) as unbound:
        sessions.manager("bob").complete_authorization(tenant.approve(sign_in.url))
    assert unbound.value.code == "STATE_MISMATCH"
    assert tenant.requests == []


@pytest.mark.parametrize("call", ["manager", "begin_sign_in", "is_signed_in", "revoke", "sign_out", "token_source"])
def test_every_call_refuses_an_invalid_session_id_before_anything_is_written(call: str) -> None:
    storage = MemoryStorage()
    sessions = make(FakeTenant(), Clock(), storage=storage)
    with pytest.raises(TokenManagerError) as caught:
        getattr(sessions, call)("a:b")
    assert caught.value.code == "INVALID_SESSION_ID"
    assert storage._data == {}
    assert sessions.cached == 0


def test_a_manager_is_cached_and_the_least_recently_used_dropped_past_the_bound() -> None:
    sessions = make(FakeTenant(), Clock(), max_cached=2)
    a = sessions.manager("a")
    assert sessions.manager("a") is a
    b = sessions.manager("b")
    sessions.manager("a")
    sessions.manager("c")
    assert sessions.cached == 2
    assert sessions.manager("a") is a
    assert sessions.manager("b") is not b


def test_an_idle_manager_is_dropped_when_another_is_asked_for() -> None:
    sessions = make(FakeTenant(), Clock(), max_idle=0.05)
    a = sessions.manager("a")
    time.sleep(0.06)
    sessions.manager("b")
    assert sessions.cached == 1
    assert sessions.manager("a") is not a


def test_a_manager_with_a_refresh_under_way_is_never_dropped() -> None:
    tenant, clock = FakeTenant(), Clock(time.time())
    sessions = make(tenant, clock, max_cached=1)
    signed_in(sessions, tenant, "ada")
    ada = sessions.manager("ada")
    clock.advance(LIFETIME + 1)
    tenant.hold = threading.Event()
    refresh = threading.Thread(target=ada.get_access_token)
    refresh.start()
    try:
        assert tenant.held.wait(5)
        sessions.manager("bob")
        sessions.manager("carol")
        assert sessions.manager("ada") is ada
    finally:
        tenant.hold.set()
        refresh.join()
    sessions.manager("dave")
    assert sessions.manager("ada") is not ada
    assert tenant.refreshes == 1


class Failing(MemoryStorage):
    """A memory storage whose writes of tokens fail while ``failing``."""

    failing = False

    def set(self, key: str, value: str) -> None:
        if self.failing and key.endswith(":tokens"):
            raise OSError("disk full")
        super().set(key, value)


def test_a_manager_holding_tokens_it_could_not_write_is_kept_until_they_are_written() -> None:
    tenant, clock = FakeTenant(), Clock(time.time())
    storage = Failing()
    sessions = make(tenant, clock, storage=storage, max_cached=1)
    signed_in(sessions, tenant, "ada")
    ada = sessions.manager("ada")
    clock.advance(LIFETIME + 1)
    storage.failing = True
    ada.get_access_token()  # refreshed; the write failed: kept in memory
    sessions.manager("bob")
    assert sessions.manager("ada") is ada
    storage.failing = False
    clock.advance(1.5)
    ada.get_access_token()  # written now
    sessions.manager("bob")
    assert sessions.manager("ada") is not ada


def test_every_sessions_manager_shares_one_http_client_and_one_storage() -> None:
    storage = MemoryStorage()
    sessions = make(FakeTenant(), Clock(), storage=storage)
    managers = [sessions.manager(str(n)) for n in range(3)]
    assert {id(m._http) for m in managers} == {id(sessions._http)}
    assert {id(m._storage) for m in managers} == {id(storage)}
    assert not any(m._owns_http for m in managers)


def test_a_sessions_client_sends_that_sessions_token_through_one_shared_http_client() -> None:
    tenant, clock = FakeTenant(), Clock(time.time())
    sessions = make(tenant, clock)
    for user in ("ada", "bob"):
        signed_in(sessions, tenant, user)
    sent: list[str] = []

    def record(request: httpx.Request) -> httpx.Response:
        sent.append(request.headers["authorization"])
        return tenant.handle(request)

    sessions._transport = httpx.MockTransport(record)
    ada, bob = sessions.client("ada"), sessions.client("bob")
    ada.request("GET", "/api/v1/auth/user")
    bob.request("GET", "/api/v1/auth/user")
    assert sent == [f"Bearer {sessions.get_access_token('ada')}", f"Bearer {sessions.get_access_token('bob')}"]
    assert ada._http is bob._http
    sessions.close()


def test_options_are_checked_at_construction() -> None:
    for option in ({"max_cached": 0}, {"max_idle": 0}, {"max_cached": True}):
        with pytest.raises(Exception, match="INVALID_OPTIONS"):
            make(FakeTenant(), Clock(), **option)
    with pytest.raises(Exception, match="INVALID_OPTIONS"):
        Sessions(BASE_URL, "", REDIRECT_URI, ["profile:read"])


async def test_async_sessions_sign_two_users_in_at_once_and_refresh_each_once() -> None:
    tenant, clock = FakeTenant(), Clock(time.time())
    async with AsyncSessions(
        BASE_URL, CLIENT_ID, REDIRECT_URI, ["profile:read"], now=clock, transport=tenant.async_transport
    ) as sessions:
        starts = await asyncio.gather(*(sessions.begin_sign_in(user) for user in ("ada", "bob")))
        done = await asyncio.gather(
            *(sessions.complete_sign_in(tenant.approve(s.url), binding=s.binding) for s in reversed(starts))
        )
        assert [d.session_id for d in done] == ["bob", "ada"]
        clock.advance(LIFETIME + 1)
        tokens = await asyncio.gather(*(sessions.get_access_token(user) for user in ("ada", "bob") * 5))
        assert len(set(tokens)) == 2
        assert tenant.refreshes == 2
        client = sessions.client("ada")
        await client.request("GET", "/api/v1/auth/user")


class CountingIntents(FileStorage):
    """A token file counting the writes of refresh intents (a holder's beats rewrite its intent)."""

    intent_writes = 0

    def set(self, key: str, value: str) -> None:
        if key.endswith(":intent"):
            self.intent_writes += 1
        super().set(key, value)


def test_closing_the_sessions_stops_the_beats_of_every_cached_managers_refresh(tmp_path: Path) -> None:
    """A server shutting down closes its sessions: the beats of a session's refresh under way stop
    with them (its intent is left to the others' watch), as a closed manager's do."""
    tenant, clock = FakeTenant(), Clock(time.time())
    storage = CountingIntents(tmp_path / "tokens.json")
    sessions = make(tenant, clock, storage=storage, intent_wait=0.2)
    signed_in(sessions, tenant, "ada")
    clock.advance(LIFETIME + 1)
    tenant.hold = threading.Event()

    def call() -> None:
        # Its request may fail once the shared connections close: only the beats are looked at.
        with contextlib.suppress(Exception):
            sessions.manager("ada").get_access_token()

    refresh = threading.Thread(target=call)
    refresh.start()
    try:
        assert tenant.held.wait(5)
        deadline = time.monotonic() + 10
        while storage.intent_writes < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert storage.intent_writes >= 2  # it beats
        sessions.close()
        writes = storage.intent_writes
        time.sleep(0.3)  # six beat intervals
        assert storage.intent_writes == writes
    finally:
        tenant.hold.set()
        refresh.join(timeout=30)
