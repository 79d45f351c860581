"""The generated folder (``tenant_integration._generated``) against the contract it comes from.

The scope names, the operations table and the staleness check of ``scripts/generate.py`` (what ``pnpm lint`` runs).
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, get_args

import pytest

from tenant_integration._generated import models, operations
from tenant_integration._generated.scopes import SCOPE_DESCRIPTIONS, SCOPES, Scope

PACKAGE_DIR = Path(__file__).resolve().parent.parent
GENERATED = PACKAGE_DIR / "src" / "tenant_integration" / "_generated"
SCRIPT = PACKAGE_DIR / "scripts" / "generate.py"
CONTRACT_PATH = PACKAGE_DIR.parent.parent / "spec" / "dist" / "openapi.json"
STDLIB_MODULES = {"__future__", "typing", "collections.abc", "dataclasses", "types"}


@pytest.fixture(scope="module")
def contract() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(CONTRACT_PATH.read_text(encoding="utf-8"))
    return loaded


def contract_scopes(contract: dict[str, Any]) -> dict[str, str]:
    scopes: dict[str, str] = contract["components"]["securitySchemes"]["tenantOAuth"]["flows"]["authorizationCode"][
        "scopes"
    ]
    return scopes


def run_generate(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, cwd=PACKAGE_DIR, check=False
    )


def committed_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "_generated"
    shutil.copytree(GENERATED, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


class TestScopes:
    def test_lists_the_37_scopes_of_the_contract_in_its_order(self, contract: dict[str, Any]) -> None:
        assert list(SCOPE_DESCRIPTIONS) == list(contract_scopes(contract))
        assert len(SCOPES) == 37

    def test_the_literal_type_and_the_frozenset_hold_the_same_names(self) -> None:
        assert get_args(Scope) == tuple(SCOPE_DESCRIPTIONS)
        assert frozenset(get_args(Scope)) == SCOPES
        assert isinstance(SCOPES, frozenset)

    def test_describes_each_scope_as_the_contract_does(self, contract: dict[str, Any]) -> None:
        assert dict(SCOPE_DESCRIPTIONS) == contract_scopes(contract)

    def test_a_name_outside_the_list_is_not_a_scope(self) -> None:
        assert "profile:read" in SCOPES
        assert "profile:admin" not in SCOPES
        assert "Profile:read" not in SCOPES


class TestOperations:
    def test_has_one_entry_per_operation_of_the_contract(self, contract: dict[str, Any]) -> None:
        expected = {
            operation["operationId"]: (method.upper(), path)
            for path, item in contract["paths"].items()
            for method, operation in item.items()
            if isinstance(operation, dict) and "operationId" in operation
        }
        assert {op_id: (op.method, op.path) for op_id, op in operations.OPERATIONS.items()} == expected

    def test_carries_security_content_types_and_statuses_as_the_contract_does(self, contract: dict[str, Any]) -> None:
        for op in operations.OPERATIONS.values():
            source = contract["paths"][op.path][op.method.lower()]
            assert op.requires_token == (source["security"] != [])
            assert op.scopes == tuple(
                scope for requirement in source["security"] for scope in requirement["tenantOAuth"]
            )
            assert op.request_content_types == tuple(source.get("requestBody", {}).get("content", {}))
            assert op.response_statuses == tuple(int(status) for status in source["responses"])

    def test_the_user_route_requires_profile_read_and_the_oauth_endpoints_are_public(self) -> None:
        assert operations.GET_AUTHENTICATED_USER.scopes == ("profile:read",)
        assert operations.GET_AUTHENTICATED_USER.requires_token
        assert not operations.EXCHANGE_TOKEN.requires_token
        assert operations.EXCHANGE_TOKEN.request_content_types == ("application/json",)

    def test_operation_constants_are_immutable(self) -> None:
        with pytest.raises(AttributeError):
            operations.AUTHORIZE.path = "/elsewhere"  # type: ignore[misc]
        with pytest.raises(TypeError):
            operations.OPERATIONS["authorize"] = operations.AUTHORIZE  # type: ignore[index]


class TestModels:
    def test_a_model_per_component_schema(self, contract: dict[str, Any]) -> None:
        for name in contract["components"]["schemas"]:
            assert hasattr(models, name), name

    def test_token_response_requires_what_the_contract_requires(self, contract: dict[str, Any]) -> None:
        schema = contract["components"]["schemas"]["TokenResponse"]
        assert models.TokenResponse.__required_keys__ == frozenset(schema["required"])

    def test_open_objects_are_maps_so_any_field_can_be_read(self) -> None:
        user: models.User = {"id": "u-1", "name": "Ada"}
        assert user["name"] == "Ada"


def contract_marks(node: Any, at: str = "#") -> list[tuple[str, str]]:
    """Every ``x-assumption`` of the contract with the JSON pointer of the object carrying it."""
    found: list[tuple[str, str]] = []
    if isinstance(node, list):
        for i, item in enumerate(node):
            found += contract_marks(item, f"{at}/{i}")
    elif isinstance(node, dict):
        if isinstance(node.get("x-assumption"), str):
            found.append((at, node["x-assumption"]))
        for key, value in node.items():
            found += contract_marks(value, f"{at}/{key.replace('~', '~0').replace('/', '~1')}")
    return found


def docstrings(path: Path) -> list[str]:
    """Every string statement of a module (docstrings of the module, classes, aliases and fields), squashed."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        " ".join(node.value.value.split())
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    ]


def marked(assumption: str) -> str:
    return " ".join(f"Assumption (not in the service description): {assumption}".split())


class TestMarks:
    """Regression guard for issue 27: the generator copied ``description`` and dropped ``x-assumption``, so a hover
    on ``ExpiresIn``, ``TokenType``, ``OAuthError`` or ``RevocationRequest`` showed what is assumed as fact."""

    def test_the_label_is_the_one_of_the_docs_site_and_the_typescript_types(self) -> None:
        marks_module = (PACKAGE_DIR.parent.parent / "spec" / "marks.mjs").read_text(encoding="utf-8")
        assert 'export const ASSUMPTION_LABEL = "Assumption (not in the service description):";' in marks_module

    def test_every_schema_mark_is_in_a_model_docstring(self, contract: dict[str, Any]) -> None:
        marks = contract_marks(contract["components"]["schemas"], "#/components/schemas")
        assert len(marks) >= 15
        found = docstrings(GENERATED / "models.py")
        missing = [at for at, assumption in marks if not any(marked(assumption) in doc for doc in found)]
        assert missing == []

    def test_seconds_bearer_error_codes_and_revoke_fields_are_marked_where_a_hover_shows_them(self) -> None:
        tree = ast.parse((GENERATED / "models.py").read_text(encoding="utf-8"))
        body = tree.body
        for name in ("ExpiresIn", "TokenType", "OAuthError", "RevocationRequest"):
            index = next(
                i
                for i, node in enumerate(body)
                if (isinstance(node, ast.ClassDef) and node.name == name)
                or (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name)
            )
            node = body[index]
            doc = ast.get_docstring(node) if isinstance(node, ast.ClassDef) else ast.literal_eval(body[index + 1].value)  # type: ignore[attr-defined]
            assert "Assumption (not in the service description):" in (doc or ""), name

    def test_every_operation_and_response_mark_is_in_its_operation_docstring(self, contract: dict[str, Any]) -> None:
        found = docstrings(GENERATED / "operations.py")
        missing = []
        for path, item in contract["paths"].items():
            for method, operation in item.items():
                if not isinstance(operation, dict) or "operationId" not in operation:
                    continue
                targets = [operation]
                for response in operation.get("responses", {}).values():
                    ref = response.get("$ref", "")
                    targets.append(contract["components"]["responses"][ref.rsplit("/", 1)[1]] if ref else response)
                for target in targets:
                    assumption = target.get("x-assumption")
                    if isinstance(assumption, str) and not any(marked(assumption) in doc for doc in found):
                        missing.append(f"{method.upper()} {path}: {assumption[:60]}")
        assert missing == []

    def test_the_user_route_says_its_scope_is_assumed(self) -> None:
        doc = next(d for d in docstrings(GENERATED / "operations.py") if d.startswith("``GET /api/v1/auth/user``"))
        assert "Assumption (not in the service description): The exact scope check of this route is not shown" in doc


class TestGeneratedFiles:
    def test_every_python_file_says_it_is_generated_and_how_to_regenerate(self) -> None:
        for path in GENERATED.glob("*.py"):
            head = path.read_text(encoding="utf-8")[:600]
            assert "GENERATED FILE: do not edit by hand" in head, path.name
            assert "spec/dist/openapi.json" in head, path.name
            assert "pnpm --filter @tenant-integration/python generate" in head, path.name

    def test_the_folder_readme_says_do_not_edit_and_the_command(self) -> None:
        readme = (GENERATED / "README.md").read_text(encoding="utf-8")
        assert "do not edit" in readme
        assert "pnpm --filter @tenant-integration/python generate" in readme

    def test_imports_only_the_standard_library_at_run_time(self) -> None:
        for path in GENERATED.glob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.level == 0:
                    assert node.module in STDLIB_MODULES, f"{path.name} imports {node.module}"
                elif isinstance(node, ast.Import):
                    raise AssertionError(f"{path.name} imports {[a.name for a in node.names]}")


class TestCheck:
    """``generate.py --check``, run by ``pnpm lint``."""

    def test_passes_on_the_committed_files(self, tmp_path: Path) -> None:
        result = run_generate("--check", "--out", committed_copy(tmp_path))
        assert result.returncode == 0, result.stderr
        assert "up to date" in result.stdout

    def test_fails_when_a_generated_file_was_edited(self, tmp_path: Path) -> None:
        copy = committed_copy(tmp_path)
        scopes = copy / "scopes.py"
        scopes.write_text(scopes.read_text(encoding="utf-8").replace('"users:write",', "", 1), encoding="utf-8")
        result = run_generate("--check", "--out", copy)
        assert result.returncode == 1
        assert "scopes.py differs from a fresh run" in result.stderr
        assert "pnpm --filter @tenant-integration/python generate" in result.stderr
        assert "models.py" not in result.stderr

    def test_fails_when_a_generated_file_is_missing(self, tmp_path: Path) -> None:
        copy = committed_copy(tmp_path)
        (copy / "operations.py").unlink()
        result = run_generate("--check", "--out", copy)
        assert result.returncode == 1
        assert "operations.py differs from a fresh run" in result.stderr

    def test_fails_when_hand_written_code_is_put_in_the_folder(self, tmp_path: Path) -> None:
        copy = committed_copy(tmp_path)
        (copy / "helpers.py").write_text("X = 1\n", encoding="utf-8")
        result = run_generate("--check", "--out", copy)
        assert result.returncode == 1
        assert "helpers.py is not generated" in result.stderr

    def test_fails_when_the_contract_gained_a_scope(self, tmp_path: Path, contract: dict[str, Any]) -> None:
        changed = json.loads(json.dumps(contract))
        contract_scopes(changed)["reports:read"] = "reports area: read"
        spec = tmp_path / "openapi.json"
        spec.write_text(json.dumps(changed), encoding="utf-8")
        result = run_generate("--check", "--spec", spec, "--out", committed_copy(tmp_path))
        assert result.returncode == 1
        assert "scopes.py differs" in result.stderr

    def test_writes_nothing(self, tmp_path: Path) -> None:
        copy = committed_copy(tmp_path)
        (copy / "models.py").write_text("# edited\n", encoding="utf-8")
        run_generate("--check", "--out", copy)
        assert (copy / "models.py").read_text(encoding="utf-8") == "# edited\n"

    def test_generate_then_check_passes_in_an_empty_folder(self, tmp_path: Path) -> None:
        out = tmp_path / "fresh"
        assert run_generate("--out", out).returncode == 0
        assert run_generate("--check", "--out", out).returncode == 0
        for path in GENERATED.iterdir():
            if path.is_file():
                assert (out / path.name).read_text(encoding="utf-8") == path.read_text(encoding="utf-8"), path.name
