"""The shared format of sessions (spec/token-store/README.md, "Sessions"), read from the test vectors
every kit's tests read (spec/token-store/vectors/sessions.json), so that the kits cannot drift apart:
the session id rule and its message, the names, Redis keys and lock directories of a scope, the
pending keys, the pending records as written and read, and the browser binding's rule."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tenant_integration import TokenManager, TokenManagerError
from tenant_integration._binding import binding_hash, check_binding, is_binding_cookie
from tenant_integration._names import ScopeNames, is_pending_name, pending_key, pending_name, session_lock_hash
from tenant_integration._session_id import check_session_id
from tenant_integration._token_record import PendingRecord, parse_pending, serialize_pending
from tenant_integration.storage.redis._keys import redis_key

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[3] / "spec" / "token-store" / "vectors" / "sessions.json").read_text("utf-8")
)


def ids(cases: list[dict[str, Any]], key: str = "note") -> list[str]:
    return [str(case.get(key)) for case in cases]


@pytest.mark.parametrize("case", VECTORS["sessionIds"]["valid"], ids=ids(VECTORS["sessionIds"]["valid"]))
def test_a_session_id_within_the_rule_is_taken_as_it_is(case: dict[str, Any]) -> None:
    assert check_session_id(case["id"]) == case["id"]


@pytest.mark.parametrize("case", VECTORS["sessionIds"]["invalid"], ids=ids(VECTORS["sessionIds"]["invalid"]))
def test_a_session_id_outside_the_rule_is_refused_with_the_shared_message(case: dict[str, Any]) -> None:
    with pytest.raises(TokenManagerError) as raised:
        check_session_id(case["id"])
    assert raised.value.code == case["code"]
    assert str(raised.value) == f"{case['code']}: {case['message']}"


@pytest.mark.parametrize("value", [42, None, b"42", ["42"]], ids=["int", "None", "bytes", "list"])
def test_a_session_id_that_is_not_a_string_is_refused(value: object) -> None:
    with pytest.raises(TokenManagerError) as raised:
        check_session_id(value)
    assert raised.value.code == "INVALID_SESSION_ID"


@pytest.mark.parametrize("case", VECTORS["scopes"], ids=[f"{c['clientId']}:{c['session']}" for c in VECTORS["scopes"]])
def test_a_scope_has_the_shared_names_redis_keys_and_lock_directories(case: dict[str, Any], tmp_path: Path) -> None:
    names = ScopeNames.of(case["origin"], case["clientId"], case["session"])
    assert names.scope == case["scope"]
    assert {"tokens": names.tokens, "intent": names.intent, "lock": names.lock} == case["names"]
    assert {kind: redis_key(case["prefix"], name) for kind, name in case["names"].items()} == case["redisKeys"]
    assert redis_key(case["prefix"], names.lock) + ":released" == case["channel"]
    refresh = case["fileLocks"]["refresh"]
    if case["session"] is None:
        assert refresh == case["file"] + ".refresh.lock"
    else:
        assert refresh == f"{case['file']}.{session_lock_hash(names.lock)}.refresh.lock"


@pytest.mark.parametrize("case", VECTORS["scopes"], ids=[f"{c['clientId']}:{c['session']}" for c in VECTORS["scopes"]])
def test_a_manager_keeps_its_records_under_its_scope_names(case: dict[str, Any]) -> None:
    manager = TokenManager(
        case["origin"], case["clientId"], "http://127.0.0.1:1/callback", ["profile:read"], session_id=case["session"]
    )
    assert (manager._tokens_key, manager._intent_key, manager._lock_name) == (
        case["names"]["tokens"],
        case["names"]["intent"],
        case["names"]["lock"],
    )
    assert manager.session_id == case["session"]


def test_a_session_refresh_lock_is_the_directory_the_vectors_name(tmp_path: Path) -> None:
    from tenant_integration.storage.file import FileStorage

    case = next(c for c in VECTORS["scopes"] if c["session"] == "42")
    file = tmp_path / "tokens.json"
    seen: list[bool] = []
    directory = str(file) + case["fileLocks"]["refresh"].removeprefix(case["file"])
    FileStorage(file).session_lock(case["names"]["lock"], lambda: seen.append(os.path.isdir(directory)))
    assert seen == [True]
    assert not os.path.exists(str(file) + ".refresh.lock")


@pytest.mark.parametrize("case", VECTORS["pending"], ids=ids(VECTORS["pending"], "key"))
def test_a_pending_sign_in_is_named_by_its_state_hash(case: dict[str, Any]) -> None:
    assert pending_key(case["state"]) == case["key"]
    name = pending_name(case["origin"], case["clientId"], case["state"])
    assert name == case["name"]
    assert is_pending_name(name)
    assert redis_key(case["prefix"], name) == case["redisKey"]
    assert case["state"] not in name


@pytest.mark.parametrize("case", VECTORS["scopes"], ids=[f"{c['clientId']}:{c['session']}" for c in VECTORS["scopes"]])
def test_no_scope_name_reads_as_a_pending_sign_in(case: dict[str, Any]) -> None:
    assert not any(is_pending_name(name) for name in case["names"].values())


@pytest.mark.parametrize("case", VECTORS["pendingRecords"], ids=ids(VECTORS["pendingRecords"]))
def test_a_pending_record_is_written_and_read_as_every_kit_does(case: dict[str, Any]) -> None:
    parsed = parse_pending(case["text"])
    if not case["valid"]:
        assert parsed is None
        return
    record = case["record"]
    assert parsed == PendingRecord(
        state=record["state"],
        verifier=record["verifier"],
        expires_at=record["expiresAt"],
        session_id=record.get("sessionId"),
        browser=record.get("browser"),
    )
    assert serialize_pending(parsed) == case["text"]


@pytest.mark.parametrize("case", VECTORS["bindings"], ids=ids(VECTORS["bindings"]))
def test_a_binding_is_kept_as_its_sha256(case: dict[str, Any]) -> None:
    assert binding_hash(case["binding"]) == case["browser"]


@pytest.mark.parametrize("case", VECTORS["bindingChecks"], ids=ids(VECTORS["bindingChecks"]))
def test_the_callback_brings_the_binding_of_the_browser_that_began_it(case: dict[str, Any]) -> None:
    if case["outcome"] == "accept":
        check_binding(case["browser"], case["binding"])
        return
    with pytest.raises(TokenManagerError) as raised:
        check_binding(case["browser"], case["binding"])
    assert raised.value.code == case["outcome"]
    assert "another browser" in str(raised.value)


@pytest.mark.parametrize("case", VECTORS["bindingCookieValues"], ids=ids(VECTORS["bindingCookieValues"], "value"))
def test_only_a_cookie_of_the_binding_form_is_reused(case: dict[str, Any]) -> None:
    assert is_binding_cookie(case["value"]) is case["valid"]
