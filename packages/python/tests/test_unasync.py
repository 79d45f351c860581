"""The sync token manager and client (and the PostgreSQL storage's sync flows) are the async ones, generated
(scripts/unasync.py): never hand-written twins."""

from __future__ import annotations

import importlib.util
import inspect
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tenant_integration import AsyncClient, AsyncTokenManager, Client, TokenManager

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "unasync.py"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("unasync_script", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_check(unasync: ModuleType, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(sys, "argv", ["unasync.py", "--check"])
    result = unasync.main()
    assert isinstance(result, int)
    return result


def test_the_committed_sync_manager_is_exactly_what_the_generator_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_check(load_script(), monkeypatch) == 0


def test_a_hand_edit_of_the_sync_manager_fails_the_check_naming_the_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    unasync = load_script()
    edited = tmp_path / "_sync"
    shutil.copytree(unasync.TARGET, edited)
    path = edited / "token_manager.py"
    path.write_text(path.read_text().replace("intent_wait: float = 20.0", "intent_wait: float = 30.0"))
    monkeypatch.setattr(unasync, "TARGET", edited)
    assert run_check(unasync, monkeypatch) == 1
    assert "intent_wait: float = 30.0" in capsys.readouterr().err


def test_a_hand_edit_of_the_postgres_storages_sync_flows_fails_the_check_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    unasync = load_script()
    edited = tmp_path / "_sync"
    shutil.copytree(unasync.POSTGRES_TARGET, edited)
    path = edited / "lock.py"
    path.write_text(path.read_text().replace('self._step("SELECT 1")', 'self._step("SELECT 2")'))
    monkeypatch.setattr(unasync, "POSTGRES_TARGET", edited)
    assert run_check(unasync, monkeypatch) == 1
    assert 'self._step("SELECT 2")' in capsys.readouterr().err


@pytest.mark.parametrize("name", ["token_manager.py", "client.py"])
def test_the_generated_file_says_it_is_generated_and_from_what(name: str) -> None:
    first_line = (SCRIPT.parent.parent / f"src/tenant_integration/_sync/{name}").read_text().splitlines()[0]
    assert first_line.startswith(f"# Generated from src/tenant_integration/_async/{name}")
    assert "do not edit" in first_line


def public(cls: type) -> dict[str, bool]:
    """The public methods of ``cls`` (and its context manager entry), each with whether it is a coroutine."""
    names = [name for name in dir(cls) if not name.startswith("_") or name in ("__enter__", "__aenter__")]
    return {name: inspect.iscoroutinefunction(getattr(cls, name)) for name in names}


def test_both_clients_offer_the_same_methods_one_async_and_one_not() -> None:
    sync, async_ = public(Client), public(AsyncClient)
    renamed = {"aclose": "close", "__aenter__": "__enter__"}
    assert {renamed.get(name, name) for name in async_} == set(sync)
    assert not any(sync.values())
    assert async_["get_user"]
    assert async_["request"]
    assert not async_["with_options"]
    # Both are documented, printed and pickled as tenant_integration.client's.
    assert Client.__module__ == AsyncClient.__module__ == "tenant_integration.client"
    assert repr(Client("https://acme.tenant.test")) == "Client(base_url='https://acme.tenant.test')"


def test_both_managers_offer_the_same_methods_one_async_and_one_not() -> None:
    sync, async_ = public(TokenManager), public(AsyncTokenManager)
    renamed = {"aclose": "close", "__aenter__": "__enter__"}
    assert {renamed.get(name, name) for name in async_} == set(sync)
    assert not any(sync.values())
    assert async_["get_access_token"]
    assert async_["revoke"]
    assert not async_["on"]


def test_signing_in_and_refreshing_with_the_sync_manager_never_loads_asyncio() -> None:
    # The sync manager is plain blocking code: what only the async one needs is imported when it runs.
    code = (
        "import itertools, sys, httpx\n"
        "from tenant_integration import TokenManager\n"
        "issued = itertools.count(1)\n"
        "answer = lambda request: httpx.Response(200, json={'access_token': f'at{next(issued)}', "
        "'refresh_token': 'rt', 'token_type': 'Bearer', 'expires_in': 900})\n"
        "manager = TokenManager('https://acme.tenant.test', 'c', 'http://127.0.0.1:53682/cb', ['profile:read'], "
        "transport=httpx.MockTransport(answer))\n"
        "request = manager.begin_authorization()\n"
        "manager.complete_authorization(f'http://127.0.0.1:53682/cb?code=x&state={request.state}')\n"
        "manager.on_unauthorized(manager.get_access_token())\n"
        "assert manager.get_access_token() == 'at2'  # refreshed\n"
        "print('asyncio' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
