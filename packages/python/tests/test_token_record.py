"""The stored records, in the TypeScript manager's format: parsing, writing, freshness, the supersedes rule."""

from __future__ import annotations

import json

import pytest

from tenant_integration._token_record import (
    TokenRecord,
    is_fresh,
    parse_pending,
    parse_record,
    serialize,
    supersedes,
)

# Written by JSON.stringify in packages/token-manager/src/token-manager.ts (field order included).
TS_RECORD = (
    '{"access_token":"at","refresh_token":"rt","token_type":"Bearer","expires_in":900,"scope":"profile:read",'
    '"received_at":1800000000000,"id":"r2","session":"r1","seq":1}'
)


def record(**fields: object) -> TokenRecord:
    base: dict[str, object] = {
        "access_token": "at",
        "refresh_token": "rt",
        "token_type": "Bearer",
        "expires_in": 900,
        "scope": None,
        "received_at": 1_000_000,
        "id": "a",
        "session": "a",
        "seq": 0,
    }
    return TokenRecord(**{**base, **fields})  # type: ignore[arg-type]


def test_a_typescript_record_is_read_and_written_back_byte_for_byte() -> None:
    parsed = parse_record(TS_RECORD)
    assert parsed is not None
    assert (parsed.session, parsed.seq, parsed.received_at) == ("r1", 1, 1_800_000_000_000)
    assert serialize(parsed) == TS_RECORD


def test_a_record_without_scope_is_read_and_written_without_it() -> None:
    raw = (
        '{"access_token":"at","refresh_token":"rt","token_type":"bearer","expires_in":60,"received_at":5,'
        '"id":"x","session":"x","seq":0}'
    )
    parsed = parse_record(raw)
    assert parsed is not None
    assert parsed.scope is None
    assert serialize(parsed) == raw


@pytest.mark.parametrize("missing", ["received_at", "id", "session", "seq"])
def test_a_record_without_one_of_the_managers_fields_is_no_session(missing: str) -> None:
    # token-record.schema.json requires them: there are no records of earlier versions to read (never released).
    fields = json.loads(TS_RECORD)
    del fields[missing]
    assert parse_record(json.dumps(fields)) is None


@pytest.mark.parametrize(
    "raw",
    [
        None,
        "",
        "not json",
        "[]",
        '{"access_token":"at","token_type":"Bearer","expires_in":900}',
        '{"access_token":"at","refresh_token":"rt","token_type":"MAC","expires_in":900}',
        '{"access_token":"at","refresh_token":"rt","token_type":"Bearer","expires_in":-1}',
        '{"access_token":"at","refresh_token":"rt","token_type":"Bearer","expires_in":true}',
        '{"access_token":"a\\nb","refresh_token":"rt","token_type":"Bearer","expires_in":900}',
        '{"access_token":"at","refresh_token":"rt","token_type":"Bearer","expires_in":900,"scope":null}',
    ],
)
def test_an_absent_or_unreadable_record_is_no_session(raw: str | None) -> None:
    assert parse_record(raw) is None


def test_a_record_repr_shows_no_token() -> None:
    text = repr(record(access_token="secret-access-xyz", refresh_token="secret-refresh-xyz"))
    assert "secret" not in text


def test_a_pending_record_is_read_only_when_it_validates_against_its_schema() -> None:
    state, verifier = "s" * 43, "v" * 43
    pending = parse_pending(f'{{"state":"{state}","verifier":"{verifier}","expiresAt":12}}')
    assert pending is not None
    assert (pending.state, pending.verifier, pending.expires_at, pending.session_id) == (state, verifier, 12, None)
    assert parse_pending(f'{{"state":"{state}","verifier":"{verifier}"}}') is None
    assert parse_pending(f'{{"state":"s","verifier":"{verifier}","expiresAt":12}}') is None
    assert parse_pending(f'{{"state":"{state}","verifier":"{verifier}","expiresAt":12.5}}') is None
    assert parse_pending("garbage") is None


def test_freshness_counts_from_the_receive_time_bounded_by_the_local_clock() -> None:
    r = record(received_at=1_000_000, expires_in=900)
    assert is_fresh(r, 1_000_000 + 839_999, 60_000)
    assert not is_fresh(r, 1_000_000 + 840_000, 60_000)
    # Stamped in this machine's future: counts as received now...
    assert is_fresh(r, 1_000_000 - 5_000, 60_000)
    assert is_fresh(r, 1_000_000 - 900_000, 60_000)
    # ...unless further ahead than the token lives: a wrong clock, refreshed.
    assert not is_fresh(r, 1_000_000 - 900_001, 60_000)
    # The leeway is at most half the lifetime.
    short = record(received_at=0, expires_in=60)
    assert is_fresh(short, 29_999, 600_000)
    assert not is_fresh(short, 30_000, 600_000)


def test_a_stored_record_supersedes_ours_when_it_is_ours_or_later_in_the_same_session_whatever_the_clocks() -> None:
    ours = record(id="b", session="a", seq=1, received_at=2_000)
    assert supersedes(record(id="b", session="a", seq=1), ours)
    assert supersedes(record(id="c", session="a", seq=2, received_at=1), ours)
    assert not supersedes(record(id="z", session="a", seq=0, received_at=9_999), ours)
    # Another session: it wins over a refresh of ours; between two sign-ins, the later one wins.
    assert supersedes(record(id="x", session="x", seq=0, received_at=1), ours)
    sign_in = record(id="s", session="s", seq=0, received_at=2_000)
    assert supersedes(record(id="t", session="t", seq=0, received_at=2_000), sign_in)
    assert not supersedes(record(id="t", session="t", seq=0, received_at=1_999), sign_in)


def test_serialize_writes_compact_json_in_the_typescript_key_order() -> None:
    text = serialize(record(scope="profile:read"))
    assert list(json.loads(text)) == [
        "access_token",
        "refresh_token",
        "token_type",
        "expires_in",
        "scope",
        "received_at",
        "id",
        "session",
        "seq",
    ]
    assert " " not in text
