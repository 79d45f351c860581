"""pytest fixtures for testing an integration against the sandbox tenant: a signed-in client in one line.

Installed with the package (a ``pytest11`` entry point), so nothing needs importing::

    def test_reads_the_user(tenant):
        assert tenant.client.get_user().get("name") == "Ada Lovelace"  # the sandbox's demo user

    def test_refreshes_after_15_minutes(tenant):
        tenant.advance(16 * 60)            # the sandbox's clock and the manager's, together
        tenant.client.get_user()           # refreshed first, after expiry: the sandbox accepts it
        assert tenant.refresh_count() == 1

    @pytest.mark.tenant(scopes=["profile:read", "tickets:read"])
    def test_with_more_scopes(tenant): ...

Fixtures:

- ``tenant``: a :class:`~tenant_integration.testing.TestTenant`, new for each test: a token manager
  signed in to the sandbox and a client on it, on the sandbox's clock. The ``tenant`` marker passes
  its keyword arguments to :func:`~tenant_integration.testing.create_test_tenant` (``scopes``,
  ``sign_in``, ``storage``, ``client_id``, ``manager_options``, ``client_options``).
- ``async_tenant``: the same on asyncio (an ``AsyncTokenManager`` and an ``AsyncClient``); needs
  pytest-asyncio (``pip install pytest-asyncio``).
- ``tenant_sandbox``: the :class:`~tenant_integration.testing.SandboxProcess`, one per test session
  (tenants share it; each one's ``events()`` and ``refresh_count()`` count only its own time).
- ``tenant_sandbox_command`` (override it in a ``conftest.py``), ``tenant_sandbox_clients`` and
  ``tenant_sandbox_args``: how the sandbox is started. The command defaults to ``--tenant-sandbox-command``,
  then as :func:`~tenant_integration.testing.sandbox_command` finds it (``TENANT_SANDBOX_COMMAND``,
  ``node_modules/.bin/tenant-sandbox``, ``tenant-sandbox`` on the ``PATH``).

The sandbox is a Node.js program (npm ``@tenant-integration/sandbox``): Node.js 20 or newer is needed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pytest

# pytest loads this plugin in every session of every project where the package is installed: the
# helpers (httpx, subprocess, the token manager) are imported by the fixtures that use them, not here.
if TYPE_CHECKING:
    from .testing import AsyncTestTenant, SandboxClient, SandboxProcess, TestTenant

__all__ = [
    "tenant",
    "tenant_sandbox",
    "tenant_sandbox_args",
    "tenant_sandbox_clients",
    "tenant_sandbox_command",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    """Adds ``--tenant-sandbox-command`` (the command that starts the sandbox, split like a shell would)."""
    parser.addoption(
        "--tenant-sandbox-command",
        default=None,
        help="the command that starts the sandbox tenant (default: TENANT_SANDBOX_COMMAND, "
        "node_modules/.bin/tenant-sandbox, then tenant-sandbox on the PATH)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Registers the ``tenant`` marker."""
    config.addinivalue_line(
        "markers",
        "tenant(**options): options of the tenant and async_tenant fixtures, as create_test_tenant takes "
        "them (scopes=[...], sign_in=False, storage=..., client_id=..., manager_options={...}, client_options={...})",
    )


@pytest.fixture(scope="session")
def tenant_sandbox_command(pytestconfig: pytest.Config) -> Sequence[str] | str | None:
    """The command that starts the sandbox; ``None`` lets
    :func:`~tenant_integration.testing.sandbox_command` find it."""
    option: str | None = pytestconfig.getoption("--tenant-sandbox-command")
    return option


@pytest.fixture(scope="session")
def tenant_sandbox_clients() -> Sequence[SandboxClient]:
    """The OAuth clients the session's sandbox registers (default: one, ``test-integration``)."""
    from .testing import SandboxClient

    return (SandboxClient(),)


@pytest.fixture(scope="session")
def tenant_sandbox_args() -> Sequence[str]:
    """More options for the sandbox (e.g. ``["--rotation-grace", "30"]``); none by default."""
    return ()


@pytest.fixture(scope="session")
def tenant_sandbox(
    tenant_sandbox_command: Sequence[str] | str | None,
    tenant_sandbox_clients: Sequence[SandboxClient],
    tenant_sandbox_args: Sequence[str],
) -> Iterator[SandboxProcess]:
    """The sandbox tenant of the test session, started on first use and stopped at the end.

    Raises :class:`~tenant_integration.testing.SandboxError` when it cannot be started.
    """
    from .testing import SandboxProcess

    with SandboxProcess(
        command=tenant_sandbox_command, clients=tenant_sandbox_clients, args=tenant_sandbox_args
    ) as sandbox:
        yield sandbox


def _options(request: pytest.FixtureRequest) -> dict[str, Any]:
    marker = request.node.get_closest_marker("tenant")
    return dict(marker.kwargs) if marker is not None else {}


@pytest.fixture
def tenant(tenant_sandbox: SandboxProcess, request: pytest.FixtureRequest) -> Iterator[TestTenant]:
    """A token manager signed in to the session's sandbox and a client on it, sharing its clock.

    Raises :class:`~tenant_integration.testing.TestTenantError` (``SIGN_IN_FAILED``) when the sandbox
    does not approve the sign-in (e.g. a scope the client may not ask for).

    See RFC 6749 §4.1 (sign-in), §6 (refresh).
    """
    from .testing import create_test_tenant

    made = create_test_tenant(tenant_sandbox, **_options(request))
    try:
        yield made
    finally:
        made.close()


try:
    import pytest_asyncio
except ImportError:  # pragma: no cover - only without pytest-asyncio

    @pytest.fixture(name="async_tenant")
    def _async_tenant_needs_pytest_asyncio() -> None:
        """Needs pytest-asyncio."""
        pytest.fail("the async_tenant fixture needs pytest-asyncio: pip install pytest-asyncio")

else:

    @pytest_asyncio.fixture(name="async_tenant")
    async def _async_tenant(
        tenant_sandbox: SandboxProcess, request: pytest.FixtureRequest
    ) -> AsyncIterator[AsyncTestTenant]:
        """The ``tenant`` fixture on asyncio: an ``AsyncTokenManager`` signed in and an ``AsyncClient``.

        Raises :class:`~tenant_integration.testing.TestTenantError` as ``tenant`` does.
        """
        from .testing import create_async_test_tenant

        made = await create_async_test_tenant(tenant_sandbox, **_options(request))
        try:
            yield made
        finally:
            await made.aclose()
