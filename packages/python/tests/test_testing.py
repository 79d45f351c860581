"""The test helpers: a signed-in client in one line, on the sandbox's clock, against a real sandbox process."""

from __future__ import annotations

import os
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tenant_integration import TokenManager
from tenant_integration.testing import (
    SANDBOX_COMMAND_ENV,
    AsyncTestTenant,
    SandboxClient,
    SandboxClock,
    SandboxError,
    SandboxProcess,
    TestTenant,
    TestTenantError,
    create_test_tenant,
    follow_sandbox_clock,
    sandbox_command,
)

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[3]
SANDBOX = ["node", str(REPO / "packages" / "sandbox" / "dist" / "cli.js")]
PAST_EXPIRY = 16 * 60


def test_the_tenant_fixture_is_a_signed_in_client(tenant: TestTenant) -> None:
    assert tenant.manager.is_signed_in()
    assert tenant.client.get_user()["name"] == "Ada Lovelace"
    assert [(e["endpoint"], e["grantType"], e["outcome"]) for e in tenant.events()] == [
        ("token", "authorization_code", "ok")
    ]


def test_advance_moves_the_sandbox_and_the_manager_together_so_expiry_needs_no_waiting(tenant: TestTenant) -> None:
    first = tenant.manager.get_access_token()
    tenant.advance(PAST_EXPIRY)
    assert tenant.client.get_user()["name"] == "Ada Lovelace"
    assert tenant.manager.get_access_token() != first
    assert tenant.refresh_count() == 1


def test_before_the_leeway_the_token_is_kept(tenant: TestTenant) -> None:
    tenant.advance(10 * 60)
    tenant.client.get_user()
    assert tenant.refresh_count() == 0


@pytest.mark.tenant(sign_in=False)
def test_the_marker_passes_options_and_sign_in_can_come_later(tenant: TestTenant) -> None:
    assert not tenant.manager.is_signed_in()
    session = tenant.sign_in()
    assert session.scope == "profile:read"
    assert tenant.client.get_user()["id"] == 42


def test_signs_in_again_after_a_revoke(tenant: TestTenant) -> None:
    tenant.manager.revoke()
    assert not tenant.manager.is_signed_in()
    tenant.sign_in()
    assert tenant.client.get_user()["id"] == 42
    assert [e["endpoint"] for e in tenant.events()] == ["token", "revoke", "token"]


async def test_the_async_tenant_fixture_is_a_signed_in_async_client(async_tenant: AsyncTestTenant) -> None:
    assert (await async_tenant.client.get_user())["name"] == "Ada Lovelace"
    async_tenant.advance(PAST_EXPIRY)
    assert (await async_tenant.client.get_user())["id"] == 42
    assert async_tenant.refresh_count() == 1


@pytest.fixture(scope="module")
def restricted_sandbox() -> Iterator[SandboxProcess]:
    """A sandbox whose second client may ask for profile:read only."""
    clients = [
        SandboxClient(),
        SandboxClient(id="narrow", redirect_uris=("http://127.0.0.1:9/cb",), scopes=("profile:read",)),
    ]
    with SandboxProcess(command=SANDBOX, clients=clients) as sandbox:
        yield sandbox


def test_a_refused_sign_in_is_a_typed_error_saying_why(restricted_sandbox: SandboxProcess) -> None:
    with pytest.raises(TestTenantError) as caught:
        create_test_tenant(restricted_sandbox, client_id="narrow", scopes=["profile:read", "tickets:read"])
    assert caught.value.code == "SIGN_IN_FAILED"
    assert "HTTP 302" in str(caught.value)
    assert "tickets:read" in str(caught.value)


def test_an_unknown_client_id_is_refused_before_any_request(restricted_sandbox: SandboxProcess) -> None:
    with pytest.raises(SandboxError, match="no client 'nobody'"):
        create_test_tenant(restricted_sandbox, client_id="nobody")


def test_a_tenant_sees_only_the_events_since_it_was_made(restricted_sandbox: SandboxProcess) -> None:
    first = create_test_tenant(restricted_sandbox)
    try:
        restricted_sandbox.advance(PAST_EXPIRY)
        first.client.get_user()
        second = create_test_tenant(restricted_sandbox, client_id="narrow")
        try:
            assert [(e["clientId"], e["grantType"]) for e in second.events()] == [("narrow", "authorization_code")]
            assert (first.refresh_count(), second.refresh_count()) == (1, 0)
        finally:
            second.close()
    finally:
        first.close()


def test_a_manager_built_by_hand_on_the_sandbox_clock_agrees_with_the_sandbox(
    restricted_sandbox: SandboxProcess,
) -> None:
    manager = TokenManager(
        base_url=restricted_sandbox.url,
        client_id="test-integration",
        redirect_uri="http://127.0.0.1:53682/callback",
        scopes=["profile:read"],
        now=restricted_sandbox.clock.now,
    )
    from tenant_integration.testing import sign_in_through_sandbox

    session = sign_in_through_sandbox(manager)
    assert abs(session.expires_at - (restricted_sandbox.clock.now() + 15 * 60)) < 5


def test_advance_refuses_a_negative_or_endless_jump(restricted_sandbox: SandboxProcess) -> None:
    for bad in (-1.0, float("nan"), float("inf"), 11 * 365 * 24 * 3600.0):
        with pytest.raises(ValueError, match="seconds must be a number from 0"):
            restricted_sandbox.advance(bad)


def test_the_clock_follows_the_offset_and_never_moves_back() -> None:
    clock = SandboxClock(base=lambda: 1_000.0)
    clock.set_offset(900.0)
    clock.set_offset(300.0)
    assert (clock.offset_seconds, clock.now(), clock.now_ms()) == (900.0, 1_900.0, 1_900_000)
    with pytest.raises(ValueError, match="finite"):
        clock.set_offset(float("nan"))


def test_the_command_comes_from_the_argument_then_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SANDBOX_COMMAND_ENV, "npx --yes --package @tenant-integration/sandbox tenant-sandbox")
    assert sandbox_command("node 'my dir/cli.js'") == ["node", "my dir/cli.js"]
    assert sandbox_command(["node", "cli.js"]) == ["node", "cli.js"]
    assert sandbox_command() == ["npx", "--yes", "--package", "@tenant-integration/sandbox", "tenant-sandbox"]


def test_the_command_is_then_found_in_node_modules_above_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "tenant-sandbox").write_text("#!/bin/sh\n")
    (bin_dir / "tenant-sandbox").chmod(0o755)
    (tmp_path / "src" / "deep").mkdir(parents=True)
    monkeypatch.delenv(SANDBOX_COMMAND_ENV, raising=False)
    monkeypatch.chdir(tmp_path / "src" / "deep")
    assert sandbox_command() == [str(bin_dir / "tenant-sandbox")]


def test_no_sandbox_anywhere_is_an_error_saying_how_to_get_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SANDBOX_COMMAND_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxError) as caught:
        sandbox_command()
    assert caught.value.code == "SANDBOX_FAILED"
    assert "npm install --save-dev @tenant-integration/sandbox" in str(caught.value)
    assert SANDBOX_COMMAND_ENV in str(caught.value)


def test_a_sandbox_that_cannot_start_is_an_error_with_its_message() -> None:
    # Bad arguments: the sandbox prints why on stderr and exits with code 2.
    with pytest.raises(SandboxError, match=r"exited with code 2.*--client id=x,redirect=: .*redirect"):
        SandboxProcess(command=SANDBOX, clients=[SandboxClient(id="x", redirect_uris=())])
    with pytest.raises(SandboxError, match="cannot start the sandbox"):
        SandboxProcess(command=["/nonexistent/tenant-sandbox"])


def test_one_line_in_a_fresh_project_gives_a_signed_in_client(pytester: pytest.Pytester) -> None:
    """The plugin is found through its entry point: no conftest, no import, only the fixture's name."""
    pytester.makepyfile(
        test_user=textwrap.dedent(
            """
            def test_reads_the_user(tenant):
                assert tenant.client.get_user()["name"] == "Ada Lovelace"

            def test_refreshes_after_15_minutes(tenant):
                tenant.advance(16 * 60)
                tenant.client.get_user()
                assert tenant.refresh_count() == 1
            """
        )
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", f"--tenant-sandbox-command={' '.join(SANDBOX)}", "-q"
    )
    result.assert_outcomes(passed=2)


def test_the_sandbox_is_stopped_when_closed() -> None:
    sandbox = SandboxProcess(command=SANDBOX)
    pid = sandbox.pid
    sandbox.close()
    sandbox.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_process_that_did_not_start_the_sandbox_follows_its_clock() -> None:
    """Here the process that moves the clock is this test, through the sandbox it started; the manager
    knows only the sandbox's URL, as a program under test or a worker of a fleet would."""
    with SandboxProcess(command=SANDBOX) as sandbox, follow_sandbox_clock(sandbox.url, interval=0.02) as clock:
        manager = TokenManager(
            base_url=sandbox.url,
            client_id="test-integration",
            redirect_uri="http://127.0.0.1:53682/callback",
            scopes=["profile:read"],
            now=clock.now,
        )
        from tenant_integration.testing import sign_in_through_sandbox

        sign_in_through_sandbox(manager)
        since = sandbox.last_seq()
        sandbox.advance(PAST_EXPIRY)  # another process moves the clock
        clock.sync()
        assert round(clock.now() - time.time()) == PAST_EXPIRY
        manager.get_access_token()  # past the 15 minutes on this process's clock too: refreshed
        assert sandbox.refresh_count(after=since) == 1

        sandbox.advance(3600)  # no sync: the background reads follow within a few intervals
        deadline = time.monotonic() + 10
        while round(clock.now() - time.time()) != PAST_EXPIRY + 3600 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert round(clock.now() - time.time()) == PAST_EXPIRY + 3600


def test_following_what_is_not_a_sandbox_with_its_test_clock_is_a_sandbox_error() -> None:
    with pytest.raises(SandboxError, match="clock"):
        follow_sandbox_clock("http://127.0.0.1:9")
