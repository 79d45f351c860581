"""The records the Python manager writes validate against the shared JSON Schemas of spec/token-store/,
which the TypeScript manager's records are tested against too (token-record.schema.test.ts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # no stubs in the pinned venv

from fake_tenant import BASE_URL, CLIENT_ID, LIFETIME, REDIRECT_URI, Clock, FakeTenant
from tenant_integration import MemoryStorage, TokenManager
from tenant_integration._names import pending_name
from tenant_integration.storage.file import FileStorage

SCHEMAS = Path(__file__).resolve().parents[3] / "spec" / "token-store"
TOKENS = f"tenant-integration:{BASE_URL}:{CLIENT_ID}:tokens"


def validator(name: str) -> Draft202012Validator:
    schema = json.loads((SCHEMAS / name).read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def errors(name: str, instance: object) -> list[str]:
    return [error.message for error in validator(name).iter_errors(instance)]


def manager(tenant: FakeTenant, clock: Clock, storage: Any) -> TokenManager:
    return TokenManager(
        BASE_URL, CLIENT_ID, REDIRECT_URI, ["profile:read"], storage=storage, now=clock, transport=tenant.transport
    )


@pytest.mark.parametrize("tenant", [FakeTenant(), FakeTenant(rotate=False, scope=None)], ids=["rotating", "plain"])
def test_every_record_the_python_manager_writes_validates(tenant: FakeTenant) -> None:
    clock = Clock(1_800_000_000.123)
    storage = MemoryStorage()
    m = manager(tenant, clock, storage)
    request = m.begin_authorization()
    written = [("pending-record.schema.json", storage.get(pending_name(BASE_URL, CLIENT_ID, request.state)))]
    m.complete_authorization(tenant.approve(request.url))
    written.append(("token-record.schema.json", storage.get(TOKENS)))
    for _ in range(3):
        clock.advance(LIFETIME + 1.7)
        m.get_access_token()
        written.append(("token-record.schema.json", storage.get(TOKENS)))
    assert len({raw for _, raw in written}) == len(written)
    for schema, raw in written:
        assert raw is not None
        assert errors(schema, json.loads(raw)) == []


def test_a_token_file_written_by_the_python_manager_validates_with_each_of_its_records(tmp_path: Path) -> None:
    tenant, clock = FakeTenant(), Clock()
    path = tmp_path / "tokens.json"
    m = manager(tenant, clock, FileStorage(path))
    m.complete_authorization(tenant.approve(m.begin_authorization().url))
    request = m.begin_authorization()
    content = json.loads(path.read_text())
    assert errors("token-file.schema.json", content) == []
    assert errors("token-record.schema.json", json.loads(content[TOKENS])) == []
    pending = json.loads(content[pending_name(BASE_URL, CLIENT_ID, request.state)])
    assert errors("pending-record.schema.json", pending) == []


def test_the_schemas_refuse_what_no_manager_may_write() -> None:
    good = {
        "access_token": "at",
        "refresh_token": "rt",
        "token_type": "Bearer",
        "expires_in": 900,
        "received_at": 1,
        "id": "a" * 43,
        "session": "a" * 43,
        "seq": 0,
    }
    assert errors("token-record.schema.json", good) == []
    for bad in (
        {**good, "id_token": "x"},
        {k: v for k, v in good.items() if k != "refresh_token"},
        {**good, "token_type": "mac"},
        {**good, "expires_in": 0},
        {**good, "received_at": 1.5},
        {**good, "seq": -1},
        {**good, "access_token": "a\nb"},
        {**good, "scope": None},
    ):
        assert errors("token-record.schema.json", bad) != [], bad
    pending = {"state": "s" * 43, "verifier": "v" * 43, "expiresAt": 1}
    assert errors("pending-record.schema.json", pending) == []
    assert errors("pending-record.schema.json", {**pending, "verifier": "v" * 42}) != []
    server = {**pending, "sessionId": "auth0|64f1c2a9e1b7", "browser": "0" * 64}
    assert errors("pending-record.schema.json", server) == []
    assert errors("pending-record.schema.json", {**server, "sessionId": "a:b"}) != []
    assert errors("token-file.schema.json", {"other": "x"}) != []
