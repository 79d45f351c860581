"""The stored records of the token manager, in the TypeScript manager's format (``spec/token-store/``).

The token record is the token response's own fields (``access_token``, ``refresh_token``,
``token_type``, ``expires_in``, ``scope``) plus ``received_at`` (local receive time, ms since the
epoch), ``id`` (random, names the record), ``session`` (the id of the sign-in's record it descends
from) and ``seq`` (refreshes since that sign-in). The pending record is ``{state, verifier,
expiresAt[, sessionId][, browser]}``. Both are JSON strings written exactly as ``JSON.stringify`` writes them in
``packages/token-manager/src/token-manager.ts``, so a Python and a TypeScript process share them.

Records never leave the manager: nothing here is exported from the package.

See RFC 6749 §5.1, §6, §10.4; RFC 7636 §4.1.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from .token_errors import TokenManagerError

__all__ = [
    "PendingRecord",
    "TokenRecord",
    "expires_at_ms",
    "is_fresh",
    "parse_json",
    "parse_oauth_error",
    "parse_pending",
    "parse_record",
    "parse_token_response",
    "pending_expired",
    "serialize",
    "serialize_pending",
    "supersedes",
]

# RFC 6749 Appendix A.12/A.13: tokens are 1*VSCHAR (%x20-7E), so they are safe in a header and in JSON.
_VSCHAR = re.compile(r"[\x20-\x7e]+")
# pending-record.schema.json's fields and patterns.
_PENDING_FIELDS = frozenset({"state", "verifier", "expiresAt", "sessionId", "browser"})
_STATE = re.compile(r"[A-Za-z0-9_-]{43}")
_VERIFIER = re.compile(r"[A-Za-z0-9._~-]{43,128}")
_SESSION_ID = re.compile(r"[A-Za-z0-9\-._~@+=|]{1,128}")
_BROWSER = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class TokenRecord:
    """One stored token record. Its ``repr`` shows no token (RFC 6749 §10.3, §10.4)."""

    access_token: str = field(repr=False)
    refresh_token: str = field(repr=False)
    token_type: str
    expires_in: int | float
    scope: str | None
    received_at: int | float
    id: str
    session: str
    seq: int


@dataclass(frozen=True)
class PendingRecord:
    """A pending sign-in: its state, its PKCE verifier, when it expires (ms since the epoch), and for a
    server the session id its tokens go to and the SHA-256 of its browser binding. No secret in ``repr``."""

    state: str = field(repr=False)
    verifier: str = field(repr=False)
    expires_at: int
    session_id: str | None = None
    browser: str | None = None


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def parse_json(text: object) -> dict[str, Any]:
    """A JSON text parsed as an object; ``{}`` for anything else (absent, not JSON, not an object)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str):
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def parse_token_response(fields: dict[str, Any], previous_refresh_token: str | None = None) -> dict[str, Any]:
    """Validates a token response (or a stored record) and returns its five fields, nothing else, so an
    unexpected field (an ``id_token``) is never stored.

    ``previous_refresh_token`` is kept when a refresh response has no ``refresh_token`` field (it did
    not rotate); a field present with any value, even ``null``, replaces it (and must be valid).

    Raises:
        TokenManagerError: ``INVALID_RESPONSE`` naming the first invalid field, never its value.

    See RFC 6749 §5.1, §6.
    """
    merged = {"refresh_token": previous_refresh_token, **fields}
    checks: dict[str, Callable[[Any], bool]] = {
        "access_token": lambda v: isinstance(v, str) and _VSCHAR.fullmatch(v) is not None,
        "refresh_token": lambda v: isinstance(v, str) and _VSCHAR.fullmatch(v) is not None,
        "token_type": lambda v: isinstance(v, str) and v.lower() == "bearer",
        "expires_in": lambda v: _is_number(v) and v > 0,
        "scope": lambda v: (v is None and "scope" not in merged) or isinstance(v, str),
    }
    parsed: dict[str, Any] = {}
    for name, check in checks.items():
        value = merged.get(name)
        if not check(value):
            raise TokenManagerError("INVALID_RESPONSE", f"the token response's {name} is missing or invalid")
        parsed[name] = value
    return parsed


def parse_oauth_error(fields: dict[str, Any]) -> tuple[str, str | None, str | None] | None:
    """``(error, error_description, error_uri)`` of an RFC 6749 §5.2 error body or §4.1.2.1 callback,
    or ``None`` when ``fields`` has no non-empty string ``error``."""
    error = fields.get("error")
    if not isinstance(error, str) or not error:
        return None
    description = fields.get("error_description")
    uri = fields.get("error_uri")
    return error, description if isinstance(description, str) else None, uri if isinstance(uri, str) else None


def parse_record(raw: str | None) -> TokenRecord | None:
    """The stored token record, or ``None`` when it is absent or unreadable (no session): a record
    that does not validate against ``token-record.schema.json`` (``received_at``, ``id``, ``session``
    and ``seq`` included) is none."""
    record = parse_json(raw)
    try:
        fields = parse_token_response(record)
    except TokenManagerError:
        return None
    received_at, record_id = record.get("received_at"), record.get("id")
    session, seq = record.get("session"), record.get("seq")
    if not _is_number(received_at) or received_at < 0:
        return None
    if not isinstance(record_id, str) or not record_id or not isinstance(session, str) or not session:
        return None
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        return None
    return TokenRecord(**fields, received_at=received_at, id=record_id, session=session, seq=seq)


def serialize(record: TokenRecord) -> str:
    """The record as the TypeScript manager's ``JSON.stringify`` writes it: the same keys in the same
    order, ``scope`` left out when absent, no spaces."""
    data: dict[str, Any] = {
        "access_token": record.access_token,
        "refresh_token": record.refresh_token,
        "token_type": record.token_type,
        "expires_in": record.expires_in,
    }
    if record.scope is not None:
        data["scope"] = record.scope
    data["received_at"] = record.received_at
    data["id"] = record.id
    data["session"] = record.session
    data["seq"] = record.seq
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def _matches(pattern: re.Pattern[str], value: object) -> bool:
    return isinstance(value, str) and pattern.fullmatch(value) is not None


def parse_pending(raw: str | None) -> PendingRecord | None:
    """The pending sign-in, or ``None`` when absent or when it does not validate against
    ``pending-record.schema.json`` (an unknown field, a missing one, a value of another form)."""
    record = parse_json(raw)
    state, verifier, expires_at = record.get("state"), record.get("verifier"), record.get("expiresAt")
    session_id, browser = record.get("sessionId"), record.get("browser")
    if (
        not set(record) <= _PENDING_FIELDS
        or not _matches(_STATE, state)
        or not _matches(_VERIFIER, verifier)
        or not isinstance(expires_at, int)
        or isinstance(expires_at, bool)
        or expires_at < 0
        or ("sessionId" in record and not _matches(_SESSION_ID, session_id))
        or ("browser" in record and not _matches(_BROWSER, browser))
    ):
        return None
    return PendingRecord(
        state=str(state), verifier=str(verifier), expires_at=expires_at, session_id=session_id, browser=browser
    )


def serialize_pending(pending: PendingRecord) -> str:
    """The pending record as every kit writes it: ``{"state","verifier","expiresAt"}``, then
    ``"sessionId"`` and ``"browser"`` when there are any, in that order, without spaces."""
    data: dict[str, Any] = {"state": pending.state, "verifier": pending.verifier, "expiresAt": pending.expires_at}
    if pending.session_id is not None:
        data["sessionId"] = pending.session_id
    if pending.browser is not None:
        data["browser"] = pending.browser
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def pending_expired(raw: str, now_ms: float) -> bool:
    """Whether the value under a pending sign-in's name is to be dropped: it does not validate, or it
    expired by ``now_ms`` (a token file drops such entries on each write)."""
    pending = parse_pending(raw)
    return pending is None or pending.expires_at < now_ms


def _received_at(record: TokenRecord, now_ms: float) -> float:
    # A record another machine, whose clock runs a little ahead, stamped in this machine's future
    # counts as received now (the TypeScript manager's rule): it is not expired early.
    return min(record.received_at, now_ms)


def expires_at_ms(record: TokenRecord, now_ms: float) -> float:
    """When the access token expires: the local receive time (bounded by ``now_ms``) plus ``expires_in``
    seconds (RFC 6749 §5.1)."""
    return _received_at(record, now_ms) + record.expires_in * 1000


def is_fresh(record: TokenRecord, now_ms: float, leeway_ms: float) -> bool:
    """True while the access token is usable: younger than its lifetime minus the leeway (at most half
    the lifetime, so a short-lived token is not refreshed on every call).

    The receive time is bounded by the local clock: a record stamped in this machine's future counts as
    received now. One stamped further ahead than the token lives is not skew but a wrong clock (this
    one or the writer's): it is not fresh, and the refresh stamps the record with this clock.

    See RFC 6749 §5.1 (``expires_in``), §6.
    """
    lifetime = record.expires_in * 1000
    if record.received_at - now_ms > lifetime:
        return False
    return now_ms - _received_at(record, now_ms) < lifetime - min(leeway_ms, lifetime / 2)


def supersedes(stored: TokenRecord, ours: TokenRecord) -> bool:
    """Whether the stored record supersedes ``ours``, whose write failed: it is ours (the write went
    through after all), or a later record of the same session (another process refreshed from ours),
    whatever the clocks say. A record of another session supersedes a refresh of ours (storage has
    moved on since ours was read); between two sign-ins, the later wins. The TypeScript manager's rule.

    See RFC 9700 §4.14.2 (refresh token rotation).
    """
    if stored.id == ours.id:
        return True
    if stored.session == ours.session:
        return stored.seq >= ours.seq
    return ours.seq > 0 or stored.received_at >= ours.received_at
