"""What importing the package loads (issue 28): each public name is loaded on first use (PEP 562), so
``import tenant_integration`` loads none of the package's modules, and the client loads without the
token manager, the file lock, asyncio or the package metadata. Each check runs a fresh interpreter."""

from __future__ import annotations

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
    assert sorted(name for name in loaded if name.startswith("tenant_integration.")) == []
    assert "httpx" not in loaded
    assert "importlib.metadata" not in loaded


def test_a_sync_client_call_loads_neither_the_token_manager_nor_the_file_lock_nor_asyncio() -> None:
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
        "tenant_integration.storage",
        "tenant_integration.testing",
        "tenant_integration.token_manager",
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


def test_a_name_the_package_does_not_export_is_an_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'Clinet'"):
        _ = tenant_integration.Clinet  # type: ignore[attr-defined]


def test_the_version_is_the_installed_distributions() -> None:
    assert tenant_integration.__version__ == importlib.metadata.version("tenant-integration")
