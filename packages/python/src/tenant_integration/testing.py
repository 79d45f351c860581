"""Test helpers: the sandbox tenant as a process, its clock, and a signed-in test tenant in one call.

The sandbox (``tenant-sandbox``, the npm package ``@tenant-integration/sandbox``) is a local tenant of
the service that rotates refresh tokens like the real one. :class:`SandboxProcess` starts it on a free
loopback port with auto-approve (the authorization request is answered at once with the redirect,
no browser) and its test clock (``POST /__sandbox/clock`` moves time forward), and
:func:`create_test_tenant` gives a :class:`TestTenant`: a token manager signed in to it and a client
on that manager, both on the sandbox's clock, as ``createTestTenant`` does for TypeScript
(``@tenant-integration/sandbox/testing``). With pytest, the ``tenant`` fixture of
:mod:`tenant_integration.pytest_plugin` does all of it in one line.

Which command starts the sandbox, first match wins:

1. the ``command`` argument (a list of arguments, or a string split like a shell would);
2. the environment variable ``TENANT_SANDBOX_COMMAND``, e.g. ``node /path/to/sandbox/dist/cli.js`` or
   ``npx --yes --package @tenant-integration/sandbox tenant-sandbox``;
3. ``node_modules/.bin/tenant-sandbox`` in the current directory or one above it
   (``npm install --save-dev @tenant-integration/sandbox`` puts it there);
4. ``tenant-sandbox`` on the ``PATH`` (``npm install --global @tenant-integration/sandbox``).

A process that did not start the sandbox (a program under test, a worker of a fleet) follows its
test clock with :func:`follow_sandbox_clock`.

Node.js 20 or newer must be installed. Nothing here is for production: the sandbox approves every
sign-in and its clock can be moved.

This module is the public entry point of two jobs, each in its own module: running the sandbox
(:mod:`tenant_integration._sandbox`: :class:`SandboxProcess`, :class:`SandboxClock`,
:func:`sandbox_command`) and the signed-in test tenant on it (:mod:`tenant_integration._test_tenant`:
:func:`create_test_tenant`, :class:`TestTenant`).

Example:
    >>> from tenant_integration.testing import SandboxProcess, create_test_tenant
    >>> with SandboxProcess() as sandbox:  # doctest: +SKIP
    ...     tenant = create_test_tenant(sandbox)
    ...     tenant.advance(16 * 60)  # past the 15-minute access token
    ...     tenant.client.get_user()  # refreshed first, transparently
    ...     tenant.refresh_count()
    1
"""

from __future__ import annotations

from ._sandbox import (
    DEFAULT_CLIENT_ID,
    DEFAULT_REDIRECT_URI,
    SANDBOX_COMMAND_ENV,
    FollowedSandboxClock,
    SandboxClient,
    SandboxClock,
    SandboxError,
    SandboxEvent,
    SandboxProcess,
    follow_sandbox_clock,
    sandbox_command,
)
from ._test_tenant import (
    AsyncTestTenant,
    TestTenant,
    TestTenantError,
    create_async_test_tenant,
    create_test_tenant,
    sign_in_through_sandbox,
)

__all__ = [
    "DEFAULT_CLIENT_ID",
    "DEFAULT_REDIRECT_URI",
    "SANDBOX_COMMAND_ENV",
    "AsyncTestTenant",
    "FollowedSandboxClock",
    "SandboxClient",
    "SandboxClock",
    "SandboxError",
    "SandboxEvent",
    "SandboxProcess",
    "TestTenant",
    "TestTenantError",
    "create_async_test_tenant",
    "create_test_tenant",
    "follow_sandbox_clock",
    "sandbox_command",
    "sign_in_through_sandbox",
]
