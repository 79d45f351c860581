"""What importing the package loads (issue 28): each public name is loaded on first use (PEP 562), so
``import tenant_integration`` loads none of the package's modules, the client loads without the
token manager, the file lock, asyncio or the package metadata, and the sync token manager without the
async one, the file lock or asyncio. Each check runs a fresh interpreter."""

from __future__ import annotations

import importlib
import importlib.metadata
import subprocess
import sys

import pytest

import tenant_integration


def loaded_after(statements: str) -> set[str]:
    """The modules a fresh interpreter has loaded after ``statements``."""
    code = f"import sys\n{statements}\nprint('\\n'.join(sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(result.stdout.split())


def test_importing_the_package_loads_none_of_its_modules_nor_httpx() -> None:
    loaded = loaded_after("import tenant_integration")
    # Only the loader of the lazy names (PEP 562) itself, which imports nothing of the package.
    assert sorted(name for name in loaded if name.startswith("tenant_integration.")) == [
        "tenant_integration._lazy_exports"
    ]
    assert "httpx" not in loaded
    assert "importlib.metadata" not in loaded


def test_a_sync_client_call_loads_no_token_manager_file_lock_asyncio_or_async_client() -> None:
    loaded = loaded_after(
        "import httpx\n"
        "from tenant_integration import Client, HttpError, RetryPolicy, TokenAuth\n"
        "class Static:\n"
        "    def get_access_token(self): return 'tok-1'\n"
        "answer = lambda request: httpx.Response(200, json={'id': 42})\n"
        "client = Client('https://acme.tenant.test', auth=Static(), transport=httpx.MockTransport(answer))\n"
        "assert client.get_user() == {'id': 42}"
    )
    assert "tenant_integration.client" in loaded
    unwanted = {
        "asyncio",
        "filelock",
        "importlib.metadata",
        "tenant_integration._async.client",
        "tenant_integration.storage",
        "tenant_integration.testing",
        "tenant_integration.token_manager",
    }
    assert sorted(loaded & unwanted) == []


def test_a_sync_token_manager_on_memory_storage_signs_in_and_refreshes_without_asyncio_or_the_file_lock() -> None:
    # Neither the async manager nor FileStorage's lock (filelock) is loaded for a user of the sync one.
    loaded = loaded_after(
        "import httpx\n"
        "from urllib.parse import parse_qs, urlsplit\n"
        "from tenant_integration import Client, MemoryStorage, TokenManager\n"
        "issued = iter(range(1, 10))\n"
        "def answer(request):\n"
        "    n = next(issued)\n"
        "    return httpx.Response(200, json={'access_token': f'at-{n}', 'refresh_token': f'rt-{n}',\n"
        "                                     'token_type': 'Bearer', 'expires_in': 900})\n"
        "clock = [1_000_000.0]\n"
        "manager = TokenManager('https://acme.tenant.test', 'demo', 'http://127.0.0.1:53682/callback',\n"
        "                       ['profile:read'], storage=MemoryStorage(), now=lambda: clock[0],\n"
        "                       transport=httpx.MockTransport(answer))\n"
        "state = parse_qs(urlsplit(manager.begin_authorization().url).query)['state'][0]\n"
        "manager.complete_authorization(f'http://127.0.0.1:53682/callback?code=c-1&state={state}')\n"
        "assert manager.get_access_token() == 'at-1'\n"
        "clock[0] += 900\n"
        "assert manager.get_access_token() == 'at-2'\n"
        "manager.close()"
    )
    assert "tenant_integration._sync.token_manager" in loaded
    unwanted = {
        "asyncio",
        "filelock",
        "tenant_integration._async.token_manager",
        "tenant_integration.storage._dir_lock",
        "tenant_integration.storage.file",
    }
    assert sorted(loaded & unwanted) == []


def test_the_pytest_plugin_loads_no_helper_until_a_fixture_is_used() -> None:
    # pytest loads the plugin in every session of every project that has the package installed.
    loaded = loaded_after("import tenant_integration.pytest_plugin")
    assert sorted(loaded & {"httpx", "tenant_integration.testing", "tenant_integration.client"}) == []


def test_every_exported_name_is_the_object_of_the_module_that_defines_it() -> None:
    from tenant_integration import client, client_errors, token_manager

    values = {name: getattr(tenant_integration, name) for name in tenant_integration.__all__}
    assert values["Client"] is client.Client
    assert values["HttpError"] is client_errors.HttpError
    assert values["TokenManager"] is token_manager.TokenManager
    assert set(tenant_integration.__all__) <= set(dir(tenant_integration))


def test_star_import_gives_every_exported_name() -> None:
    namespace: dict[str, object] = {}
    exec("from tenant_integration import *", namespace)  # noqa: S102 (a fixed statement)
    assert set(tenant_integration.__all__) <= set(namespace)


@pytest.mark.parametrize(
    "module", ["tenant_integration.client", "tenant_integration.storage", "tenant_integration.token_manager"]
)
def test_a_module_that_loads_its_names_on_first_use_still_gives_every_one_and_only_those(module: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from {module} import *", namespace)  # noqa: S102 (a fixed statement)
    loaded = importlib.import_module(module)
    assert set(loaded.__all__) <= set(namespace)
    assert set(loaded.__all__) <= set(dir(loaded))
    with pytest.raises(AttributeError, match="has no attribute 'Clinet'"):
        _ = loaded.Clinet


def test_a_name_the_package_does_not_export_is_an_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'Clinet'"):
        _ = tenant_integration.Clinet  # type: ignore[attr-defined]


def test_the_version_is_the_installed_distributions() -> None:
    assert tenant_integration.__version__ == importlib.metadata.version("tenant-integration")
