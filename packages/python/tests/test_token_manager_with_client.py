"""The managers as the client's token source (the interface of the two): the bearer token comes from
the manager, a 401 makes it forget that token, and the one retry carries a refreshed one."""

from __future__ import annotations

from fake_tenant import BASE_URL, CLIENT_ID, REDIRECT_URI, Clock, FakeTenant
from tenant_integration import AsyncClient, AsyncTokenManager, Client, MemoryStorage, TokenManager


def test_a_401_makes_the_manager_refresh_once_and_the_client_retry_with_the_new_token() -> None:
    tenant, clock = FakeTenant(), Clock()
    manager = TokenManager(BASE_URL, CLIENT_ID, REDIRECT_URI, ["profile:read"], now=clock, transport=tenant.transport)
    manager.complete_authorization(tenant.approve(manager.begin_authorization().url))
    with Client(BASE_URL, auth=manager, transport=tenant.transport) as client:
        assert client.get_user()["id"] == 42
        # The tenant stops accepting the access token before its expiry (revoked on its side).
        tenant.accepted.discard(manager.get_access_token())
        assert client.get_user()["name"] == "Ada Lovelace"
    assert tenant.refreshes == 1


def test_a_401_seen_by_two_managers_on_one_storage_makes_one_refresh() -> None:
    tenant, clock = FakeTenant(), Clock()
    storage = MemoryStorage()
    first, second = (
        TokenManager(
            BASE_URL, CLIENT_ID, REDIRECT_URI, ["profile:read"], storage=storage, now=clock, transport=tenant.transport
        )
        for _ in range(2)
    )
    first.complete_authorization(tenant.approve(first.begin_authorization().url))
    with (
        Client(BASE_URL, auth=first, transport=tenant.transport) as a,
        Client(BASE_URL, auth=second, transport=tenant.transport) as b,
    ):
        assert a.get_user()["id"] == b.get_user()["id"] == 42
        tenant.accepted.discard(first.get_access_token())
        assert a.get_user()["id"] == 42
        # The second manager's 401 on the old token finds the new one in storage: no second refresh.
        assert b.get_user()["id"] == 42
    assert tenant.refreshes == 1


async def test_the_async_manager_is_the_async_clients_token_source() -> None:
    tenant, clock = FakeTenant(), Clock()
    manager = AsyncTokenManager(
        BASE_URL, CLIENT_ID, REDIRECT_URI, ["profile:read"], now=clock, transport=tenant.async_transport
    )
    await manager.complete_authorization(tenant.approve((await manager.begin_authorization()).url))
    async with AsyncClient(BASE_URL, auth=manager, transport=tenant.async_transport) as client:
        assert (await client.get_user())["id"] == 42
        tenant.accepted.discard(await manager.get_access_token())
        assert (await client.get_user())["id"] == 42
    assert tenant.refreshes == 1
