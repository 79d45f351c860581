"""The Python code samples of the docs site (``apps/docs/samples/<operationId>.py``, shown beside the TypeScript ones as
``x-codeSamples`` on every operation of the reference): one per operation of the contract, valid Python, importing
only what ``tenant_integration`` exports (and the standard library), and clean under ``mypy --strict`` against the
package's sources, so a renamed method or option fails here before a reader meets it.
"""

from __future__ import annotations

import ast
import importlib
import json
import shutil
import sys
from pathlib import Path

import pytest
from mypy import api as mypy_api

import tenant_integration

PACKAGE = Path(__file__).resolve().parents[1]
REPO = PACKAGE.parents[1]
SAMPLES = REPO / "apps" / "docs" / "samples"
CONTRACT = REPO / "spec" / "dist" / "openapi.json"
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def operation_ids() -> list[str]:
    """Every operationId of the bundled contract, in its order."""
    contract = json.loads(CONTRACT.read_text(encoding="utf-8"))
    return [
        item[method]["operationId"] for item in contract["paths"].values() for method in HTTP_METHODS if method in item
    ]


def python_samples() -> dict[str, str]:
    """Each Python sample's source, by operationId (the file's stem)."""
    return {path.stem: path.read_text(encoding="utf-8") for path in sorted(SAMPLES.glob("*.py"))}


def imported_names(source: str) -> list[tuple[str, str | None]]:
    """``(module, name)`` for every import of ``source`` (``name`` is None for ``import module``)."""
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "a sample imports relatively"
            found += [(node.module or "", alias.name) for alias in node.names]
    return found


def mypy_strict(files: list[Path], cache: Path) -> tuple[int, str]:
    """``mypy --strict`` on ``files`` with the package's sources on the path; (exit status, report)."""
    stdout, stderr, status = mypy_api.run(
        [
            "--strict",
            "--python-version",
            "3.11",
            "--no-error-summary",
            "--show-error-codes",
            "--cache-dir",
            str(cache),
            "--config-file",
            "",
            *map(str, files),
        ]
    )
    return status, stdout + stderr


def test_every_operation_of_the_contract_has_a_python_sample_and_no_sample_names_another() -> None:
    assert sorted(python_samples()) == sorted(operation_ids())


@pytest.mark.parametrize("operation_id", sorted(python_samples()))
def test_the_sample_is_valid_python(operation_id: str) -> None:
    source = python_samples()[operation_id]
    compile(source, f"apps/docs/samples/{operation_id}.py", "exec")


@pytest.mark.parametrize("operation_id", sorted(python_samples()))
def test_the_sample_imports_only_what_the_package_exports_and_the_standard_library(operation_id: str) -> None:
    imports = imported_names(python_samples()[operation_id])
    for module, name in imports:
        check_import(module, name)
    assert any(module == "tenant_integration" for module, _ in imports)


def check_import(module: str, name: str | None) -> None:
    """What a sample may import: a name ``tenant_integration`` or one of its public modules
    (``tenant_integration.loopback``) exports, or the standard library."""
    if module == "tenant_integration":
        assert name in tenant_integration.__all__, f"{name} is not exported by tenant_integration"
    elif module.startswith("tenant_integration."):
        assert not any(part.startswith("_") for part in module.split(".")), f"{module} is private"
        assert name in importlib.import_module(module).__all__, f"{name} is not exported by {module}"
    else:
        assert module.split(".")[0] in sys.stdlib_module_names, f"{module} is neither the package nor stdlib"


def test_a_sample_importing_a_private_module_or_an_unexported_name_is_refused() -> None:
    with pytest.raises(AssertionError, match="private"):
        check_import("tenant_integration._sign_in", "callback_params")
    with pytest.raises(AssertionError, match="not exported"):
        check_import("tenant_integration.loopback", "LoopbackServerInternals")
    check_import("tenant_integration.loopback", "sign_in_with_loopback")


def test_the_samples_type_check_under_mypy_strict_and_a_broken_one_would_not(tmp_path: Path) -> None:
    work = tmp_path / "samples"
    work.mkdir()
    files = [Path(shutil.copy(path, work / f"{path.stem}.py")) for path in sorted(SAMPLES.glob("*.py"))]
    # A sample calling a method the client does not have: mypy must name it, and nothing else.
    broken = work / "broken_sample.py"
    broken.write_text(python_samples()["getAuthenticatedUser"].replace("client.get_user()", "client.get_users()"))
    assert broken.read_text() != python_samples()["getAuthenticatedUser"]
    status, report = mypy_strict([*files, broken], tmp_path / "mypy-cache")
    errors = [line for line in report.splitlines() if ": error:" in line]
    assert status == 1, report
    assert errors, report
    assert all(line.startswith(str(broken)) for line in errors), report
    assert any("get_users" in line for line in errors), report
