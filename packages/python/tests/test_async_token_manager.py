"""AsyncTokenManager keeps the same promises on asyncio: tasks share one refresh, storage calls run in
worker threads, the storage's lock is held by a thread of its own while the refresh runs on the loop."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from fake_tenant import BASE_URL, CLIENT_ID, LIFETIME, REDIRECT_URI, Clock, FakeTenant
from tenant_integration import (
    AsyncTokenManager,
    MemoryStorage,
    SessionEndedError,
    SessionInfo,
    TokenManagerError,
    TransientError,
)
from tenant_integration.storage.file import FileStorage
from tenant_integration.testing import SandboxProcess

TOKENS = f"tenant-integration:{BASE_URL}:{CLIENT_ID}:tokens"
PAST_EXPIRY = LIFETIME + 1


def make(tenant: FakeTenant, clock: Clock, **options: Any) -> AsyncTokenManager:
    return AsyncTokenManager(
        **{
            "base_url": BASE_URL,
            "client_id": CLIENT_ID,
            "redirect_uri": REDIRECT_URI,
            "scopes": ["profile:read"],
            "now": clock,
            "transport": tenant.async_transport,
            "retry_delay": 0,
            **options,
        }
    )


async def signed_in(tenant: FakeTenant, clock: Clock, **options: Any) -> AsyncTokenManager:
    manager = make(tenant, clock, **options)
    request = await manager.begin_authorization()
    await manager.complete_authorization(tenant.approve(request.url))
    return manager


@pytest.fixture
def tenant() -> FakeTenant:
    return FakeTenant()


@pytest.fixture
def clock() -> Clock:
    return Clock()


async def test_signs_in_and_hands_out_the_token_with_no_further_request(tenant: FakeTenant, clock: Clock) -> None:
    manager = await signed_in(tenant, clock)
    assert await manager.is_signed_in()
    assert await manager.get_session() == SessionInfo(expires_at=clock() + LIFETIME, scope="profile:read")
    assert (await manager.get_access_token()).startswith("at-")
    assert [r.grant for r in tenant.requests] == ["authorization_code"]
    await manager.aclose()


def no_lock(name: str, task: Callable[[], Any]) -> Any:
    """A storage lock that locks nothing: what is left is the manager's own single flight."""
    return task()


@pytest.mark.parametrize("lock", [None, no_lock], ids=["the storage's lock", "no storage lock"])
async def test_twenty_tasks_on_an_expired_token_make_exactly_one_refresh_and_all_get_the_new_token(
    lock: Callable[[str, Callable[[], Any]], Any] | None, tenant: FakeTenant, clock: Clock
) -> None:
    manager = await signed_in(tenant, clock, lock=lock)
    clock.advance(PAST_EXPIRY)
    tokens = await asyncio.gather(*(manager.get_access_token() for _ in range(20)))
    assert len(set(tokens)) == 1
    assert tenant.refreshes == 1


async def test_twenty_tasks_of_managers_on_one_token_file_make_one_refresh_through_the_files_lock(
    tenant: FakeTenant, clock: Clock, tmp_path: Path
) -> None:
    path = tmp_path / "tokens.json"
    await signed_in(tenant, clock, storage=FileStorage(path))
    managers = [make(tenant, clock, storage=FileStorage(path)) for _ in range(4)]
    clock.advance(PAST_EXPIRY)
    tokens = await asyncio.gather(*(m.get_access_token() for m in managers * 5))
    assert len(set(tokens)) == 1
    assert tenant.refreshes == 1
    assert json.loads(json.loads(path.read_text())[TOKENS])["access_token"] == tokens[0]


async def test_a_cancelled_caller_does_not_cancel_the_refresh_the_others_wait_for(
    tenant: FakeTenant, clock: Clock
) -> None:
    manager = await signed_in(tenant, clock)
    clock.advance(PAST_EXPIRY)
    tenant.hold = threading.Event()
    impatient = asyncio.ensure_future(manager.get_access_token())
    patient = asyncio.ensure_future(manager.get_access_token())
    await asyncio.to_thread(tenant.held.wait, 30)
    impatient.cancel()
    tenant.hold.set()
    assert (await patient).startswith("at-")
    assert impatient.cancelled()
    assert tenant.refreshes == 1


async def test_invalid_grant_ends_the_session_and_a_500_keeps_it(tenant: FakeTenant, clock: Clock) -> None:
    storage = MemoryStorage()
    manager = await signed_in(tenant, clock, storage=storage)
    ended: list[SessionEndedError] = []
    manager.on("session-ended", ended.append)
    clock.advance(PAST_EXPIRY)
    tenant.script.append(lambda _: httpx.Response(500))
    with pytest.raises(TransientError):
        await manager.get_access_token()
    assert storage.get(TOKENS) is not None
    tenant.script.append(lambda _: httpx.Response(400, json={"error": "invalid_grant"}))
    with pytest.raises(SessionEndedError):
        await manager.get_access_token()
    assert storage.get(TOKENS) is None
    assert len(ended) == 1
    assert not await manager.is_signed_in()


async def test_a_state_no_sign_in_was_begun_with_is_refused_before_any_request(
    tenant: FakeTenant, clock: Clock
) -> None:
    manager = make(tenant, clock)
    request = await manager.begin_authorization()
    callback = tenant.approve(request.url).replace(request.state, "x" * 43)
    with pytest.raises(TokenManagerError) as caught:
        await manager.complete_authorization(callback)
    assert caught.value.code == "NO_PENDING_SIGN_IN"
    assert tenant.requests == []


async def test_a_query_only_callback_is_refused_without_taking_the_pending_sign_in(
    tenant: FakeTenant, clock: Clock
) -> None:
    manager = make(tenant, clock)
    request = await manager.begin_authorization()
    callback = tenant.approve(request.url)
    with pytest.raises(TokenManagerError) as caught:
        await manager.complete_authorization("?" + callback.split("?", 1)[1])
    assert caught.value.code == "INVALID_CALLBACK"
    await manager.complete_authorization(callback)
    assert await manager.is_signed_in()


async def test_the_lock_timeout_of_a_held_storage_lock_reaches_the_caller(tenant: FakeTenant, clock: Clock) -> None:
    storage = MemoryStorage(lock_timeout=0.05)
    manager = await signed_in(tenant, clock, storage=storage)
    clock.advance(PAST_EXPIRY)
    holding, release = threading.Event(), threading.Event()

    def held() -> None:
        holding.set()
        release.wait(30)

    def hold() -> None:
        storage.lock(f"tenant-integration:{BASE_URL}:{CLIENT_ID}:lock", held)

    holder = threading.Thread(target=hold)
    holder.start()
    holding.wait(30)
    try:
        with pytest.raises(TokenManagerError) as caught:
            await manager.get_access_token()
        assert caught.value.code == "LOCK_TIMEOUT"
        assert tenant.refreshes == 0
    finally:
        release.set()
        holder.join(30)
    assert (await manager.get_access_token()).startswith("at-")


async def test_revoke_sends_the_form_then_clears_and_sign_out_needs_no_request(
    tenant: FakeTenant, clock: Clock
) -> None:
    storage = MemoryStorage()
    manager = await signed_in(tenant, clock, storage=storage)
    revoked: list[None] = []
    manager.on("revoked", revoked.append)
    await manager.revoke()
    assert tenant.requests[-1].path == "/oauth/revoke"
    assert tenant.requests[-1].content_type == "application/x-www-form-urlencoded"
    assert storage.get(TOKENS) is None
    assert revoked == [None]
    await signed_in(tenant, clock, storage=storage)
    count = len(tenant.requests)
    await manager.sign_out()
    assert storage.get(TOKENS) is None
    assert len(tenant.requests) == count


async def test_a_sync_transport_is_refused_with_a_reason(clock: Clock) -> None:
    from tenant_integration import InvalidOptionsError

    with pytest.raises(InvalidOptionsError, match="AsyncBaseTransport"):
        AsyncTokenManager(
            BASE_URL,
            CLIENT_ID,
            REDIRECT_URI,
            ["profile:read"],
            now=clock,
            transport=httpx.HTTPTransport(),  # type: ignore[arg-type]
        )


def test_a_manager_serves_one_event_loop_after_another_over_real_connections(tenant_sandbox: SandboxProcess) -> None:
    """Regression: connections opened in one loop were reused in the next, and every request failed."""
    manager = AsyncTokenManager(
        tenant_sandbox.url,
        "test-integration",
        "http://127.0.0.1:53682/callback",
        ["profile:read"],
        now=tenant_sandbox.clock.now,
    )
    before = tenant_sandbox.refresh_count()

    async def sign_in() -> None:
        request = await manager.begin_authorization()
        async with httpx.AsyncClient(trust_env=False) as browser:
            callback = (await browser.get(request.url)).headers["location"]
        await manager.complete_authorization(callback)

    asyncio.run(sign_in())
    tokens = []
    for _ in range(2):
        tenant_sandbox.advance(PAST_EXPIRY)
        tokens.append(asyncio.run(manager.get_access_token()))
    assert tokens[0] != tokens[1]
    assert tenant_sandbox.refresh_count() == before + 2
