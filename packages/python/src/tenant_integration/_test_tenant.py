"""A token manager and a client signed in to the sandbox, sharing its clock: the test tenant.

:func:`create_test_tenant` (and :func:`create_async_test_tenant`) sign a token manager in through the
sandbox's auto-approve and put a client on it, as ``createTestTenant`` does for TypeScript
(``@tenant-integration/sandbox/testing``). The sandbox process itself is
:mod:`tenant_integration._sandbox`; users import both from :mod:`tenant_integration.testing`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx

from ._sandbox import SandboxClient, SandboxError, SandboxEvent, SandboxProcess
from .errors import TenantIntegrationError

if TYPE_CHECKING:
    from ._generated.scopes import Scope
    from .client import AsyncClient, Client
    from .storage.base import TokenStorage
    from .token_manager import AsyncTokenManager, SessionInfo, TokenManager

__all__ = [
    "AsyncTestTenant",
    "TestTenant",
    "TestTenantError",
    "create_async_test_tenant",
    "create_test_tenant",
    "sign_in_through_sandbox",
]


class TestTenantError(TenantIntegrationError):
    """The test tenant could not sign in: the sandbox did not answer the authorization request with a
    redirect carrying a code (e.g. a scope the client may not ask for). ``code`` is ``"SIGN_IN_FAILED"``;
    the message says what the sandbox answered (its ``error_description``), never a code or token.

    See RFC 6749 §4.1.2.1 (the authorization error response).
    """

    __test__ = False  # not a test class, whatever pytest's naming rule says

    def __init__(self, message: str, *, cause: BaseException | None = None) -> None:
        super().__init__("SIGN_IN_FAILED", message, cause=cause)


def _callback_from(authorize_url: str) -> str:
    """Plays the browser at the authorize endpoint: the sandbox auto-approves with a 302 to the callback."""
    try:
        with httpx.Client(trust_env=False, follow_redirects=False, timeout=10.0) as browser:
            answer = browser.get(authorize_url)
    except httpx.HTTPError as error:
        raise TestTenantError(f"the sandbox did not answer the authorization request: {error}", cause=error) from error
    location: str | None = answer.headers.get("location")
    callback = urljoin(authorize_url, location) if location else None
    query = parse_qs(urlsplit(callback).query) if callback else {}
    if answer.status_code != 302 or "code" not in query:
        reason = (query.get("error_description") or query.get("error") or [answer.text[:300]])[0]
        raise TestTenantError(f"the sandbox did not approve the sign-in (HTTP {answer.status_code}): {reason}")
    assert callback is not None
    return callback


def sign_in_through_sandbox(manager: TokenManager) -> SessionInfo:
    """Signs ``manager`` in through the auto-approve of the sandbox at its ``base_url``:
    ``begin_authorization``, the authorize URL answered with a 302 whose ``Location`` is the callback,
    then ``complete_authorization`` (the state check and the code exchange with the PKCE verifier).

    Raises:
        TestTenantError: ``SIGN_IN_FAILED`` when the sandbox does not approve (the message says why).
        TenantIntegrationError: what ``complete_authorization`` raises.

    See RFC 6749 §4.1; RFC 7636 §4.
    """
    request = manager.begin_authorization()
    return manager.complete_authorization(_callback_from(request.url))


async def _sign_in_async(manager: AsyncTokenManager) -> SessionInfo:
    request = await _maybe_await(manager.begin_authorization())
    session: SessionInfo = await _maybe_await(manager.complete_authorization(_callback_from(request.url)))
    return session


async def _maybe_await(value: Awaitable[Any] | Any) -> Any:
    return await value if inspect.isawaitable(value) else value


@dataclass
class TestTenant:
    """A token manager signed in to the sandbox and a client on it, sharing the sandbox's clock
    (what :func:`create_test_tenant` returns; the ``tenant`` pytest fixture).

    ``events()`` and ``refresh_count()`` count only what happened since the tenant was made, so
    several tenants may share one sandbox (the pytest fixture shares one per session).

    Example:
        >>> tenant.advance(16 * 60)  # doctest: +SKIP
        >>> tenant.client.get_user().get("name")  # doctest: +SKIP
        'Ada Lovelace'
        >>> tenant.refresh_count()  # doctest: +SKIP
        1
    """

    __test__ = False

    sandbox: SandboxProcess
    manager: TokenManager
    client: Client
    client_id: str
    redirect_uri: str
    since: int = field(default=0)

    @property
    def base_url(self) -> str:
        """The sandbox's URL, the base URL of the manager and the client."""
        return self.sandbox.url

    def advance(self, seconds: float) -> float:
        """Moves the one shared clock (the sandbox's tokens and the manager's ``now``) forward; returns
        the new time in seconds since the epoch. Raises as :meth:`SandboxProcess.advance`."""
        return self.sandbox.advance(seconds)

    def events(self) -> list[SandboxEvent]:
        """The sandbox's token and revoke events since this tenant was made, oldest first."""
        return self.sandbox.events(after=self.since)

    def refresh_count(self) -> int:
        """How many refreshes succeeded since this tenant was made (RFC 6749 §6)."""
        return self.sandbox.refresh_count(after=self.since)

    def sign_in(self) -> SessionInfo:
        """Signs the manager in again (after ``revoke()``, ``sign_out()`` or an ended session).

        Raises:
            TestTenantError: ``SIGN_IN_FAILED`` when the sandbox does not approve.
        """
        return sign_in_through_sandbox(self.manager)

    def close(self) -> None:
        """Closes the client's connections (the sandbox stays up: it may serve other tenants)."""
        self.client.close()


@dataclass
class AsyncTestTenant:
    """:class:`TestTenant` on asyncio: an :class:`~tenant_integration.AsyncTokenManager` and an
    :class:`~tenant_integration.AsyncClient` (what :func:`create_async_test_tenant` returns)."""

    __test__ = False

    sandbox: SandboxProcess
    manager: AsyncTokenManager
    client: AsyncClient
    client_id: str
    redirect_uri: str
    since: int = field(default=0)

    @property
    def base_url(self) -> str:
        """The sandbox's URL, the base URL of the manager and the client."""
        return self.sandbox.url

    def advance(self, seconds: float) -> float:
        """Moves the one shared clock forward, as :meth:`TestTenant.advance`."""
        return self.sandbox.advance(seconds)

    def events(self) -> list[SandboxEvent]:
        """The sandbox's token and revoke events since this tenant was made, oldest first."""
        return self.sandbox.events(after=self.since)

    def refresh_count(self) -> int:
        """How many refreshes succeeded since this tenant was made (RFC 6749 §6)."""
        return self.sandbox.refresh_count(after=self.since)

    async def sign_in(self) -> SessionInfo:
        """Signs the manager in again. Raises :class:`TestTenantError` when the sandbox does not approve."""
        return await _sign_in_async(self.manager)

    async def aclose(self) -> None:
        """Closes the client's connections (the sandbox stays up)."""
        await self.client.aclose()


def _registered(sandbox: SandboxProcess, client_id: str | None) -> SandboxClient:
    if client_id is None:
        if not sandbox.clients:
            raise SandboxError("the sandbox has no registered client; start it with clients=[SandboxClient(...)]")
        return sandbox.clients[0]
    for registered in sandbox.clients:
        if registered.id == client_id:
            return registered
    raise SandboxError(f"the sandbox has no client {client_id!r}; its clients: {[c.id for c in sandbox.clients]}")


def _manager_arguments(
    sandbox: SandboxProcess,
    registered: SandboxClient,
    scopes: Sequence[Scope],
    storage: TokenStorage | None,
    manager_options: dict[str, Any] | None,
) -> dict[str, Any]:
    """The token manager's keyword arguments for a test tenant (sync and async alike): the caller's
    ``manager_options`` with the sandbox's URL, the registered client, the scopes and the sandbox's
    clock over them, and ``storage`` when given (else the manager's own, in memory)."""
    return {
        **(manager_options or {}),
        "base_url": sandbox.url,
        "client_id": registered.id,
        "redirect_uri": registered.redirect_uris[0],
        "scopes": list(scopes),
        "now": sandbox.clock.now,
        **({"storage": storage} if storage is not None else {}),
    }


def create_test_tenant(
    sandbox: SandboxProcess,
    *,
    scopes: Sequence[Scope] = ("profile:read",),
    client_id: str | None = None,
    storage: TokenStorage | None = None,
    sign_in: bool = True,
    manager_options: dict[str, Any] | None = None,
    client_options: dict[str, Any] | None = None,
) -> TestTenant:
    """A :class:`TestTenant` on ``sandbox``: a :class:`~tenant_integration.TokenManager` with the
    sandbox's clock (``now=sandbox.clock.now``) signed in through its auto-approve, and a
    :class:`~tenant_integration.Client` on that manager.

    Args:
        sandbox: a running :class:`SandboxProcess`.
        scopes: the scopes the manager asks for (default ``["profile:read"]``).
        client_id: which of the sandbox's clients to be (default its first).
        storage: the manager's storage (default: the manager's own, in memory).
        sign_in: sign in before returning (default ``True``); with ``False`` call ``tenant.sign_in()``.
        manager_options: more keyword arguments for the manager (``refresh_leeway``, ``logger``…).
        client_options: more keyword arguments for the client.

    Raises:
        TestTenantError: ``SIGN_IN_FAILED`` when the sandbox does not approve the sign-in.
        SandboxError: when ``client_id`` is not registered in the sandbox.

    See RFC 6749 §4.1 and §6; RFC 7636; RFC 7009.
    """
    from .client import Client
    from .token_manager import TokenManager

    registered = _registered(sandbox, client_id)
    since = sandbox.last_seq()
    manager = TokenManager(**_manager_arguments(sandbox, registered, scopes, storage, manager_options))
    client = Client(**{**(client_options or {}), "base_url": sandbox.url, "auth": manager})
    tenant = TestTenant(sandbox, manager, client, registered.id, registered.redirect_uris[0], since)
    if sign_in:
        try:
            tenant.sign_in()
        except BaseException:
            client.close()
            raise
    return tenant


async def create_async_test_tenant(
    sandbox: SandboxProcess,
    *,
    scopes: Sequence[Scope] = ("profile:read",),
    client_id: str | None = None,
    storage: TokenStorage | None = None,
    sign_in: bool = True,
    manager_options: dict[str, Any] | None = None,
    client_options: dict[str, Any] | None = None,
) -> AsyncTestTenant:
    """:func:`create_test_tenant` on asyncio: an :class:`~tenant_integration.AsyncTokenManager` and an
    :class:`~tenant_integration.AsyncClient`. Same arguments, same errors."""
    from .client import AsyncClient
    from .token_manager import AsyncTokenManager

    registered = _registered(sandbox, client_id)
    since = sandbox.last_seq()
    manager = AsyncTokenManager(**_manager_arguments(sandbox, registered, scopes, storage, manager_options))
    client = AsyncClient(**{**(client_options or {}), "base_url": sandbox.url, "auth": manager})
    tenant = AsyncTestTenant(sandbox, manager, client, registered.id, registered.redirect_uris[0], since)
    if sign_in:
        try:
            await tenant.sign_in()
        except BaseException:
            await client.aclose()
            raise
    return tenant
