"""The names of a manager's records and lock (``spec/token-store/README.md``, "Names and keys"): a
scope ``<origin>:<client_id>`` without a session id, ``<origin>:<client_id>:<session>`` with one;
each pending sign-in under a name of its own, found by the SHA-256 of its state.

The Go kit's ``tokenmanager/names.go``; the TypeScript kit's ``names.ts``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

__all__ = ["ScopeNames", "is_pending_name", "pending_key", "pending_name", "session_lock_hash"]

#: The end of a pending sign-in's name: ``:pending:`` and the 32 lowercase hex digits of its key.
_PENDING_END = re.compile(r":pending:[0-9a-f]{32}\Z")


@dataclass(frozen=True)
class ScopeNames:
    """The names of one scope's records: ``tenant-integration:<scope>:<kind>``."""

    scope: str
    tokens: str
    intent: str
    lock: str

    @classmethod
    def of(cls, origin: str, client_id: str, session_id: str | None) -> ScopeNames:
        """The names of the scope of ``origin``, ``client_id`` and ``session_id`` (``None``: no session).

        Example:
            >>> ScopeNames.of("https://acme.tenant.test", "demo", "42").tokens
            'tenant-integration:https://acme.tenant.test:demo:42:tokens'
        """
        scope = f"{origin}:{client_id}" if session_id is None else f"{origin}:{client_id}:{session_id}"
        base = f"tenant-integration:{scope}:"
        return cls(scope=scope, tokens=base + "tokens", intent=base + "intent", lock=base + "lock")


def pending_key(state: str) -> str:
    """The first 32 lowercase hex digits of SHA-256 of ``state``'s UTF-8 bytes: the state itself never
    appears in a name, a key or a log.

    Example:
        >>> pending_key("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        '13d31e961a1ad8ec2f16b10c4c982e08'
    """
    return hashlib.sha256(state.encode("utf-8")).hexdigest()[:32]


def pending_name(origin: str, client_id: str, state: str) -> str:
    """The name of the pending sign-in of ``state``: ``tenant-integration:<origin>:<client_id>:pending:<key>``."""
    return f"tenant-integration:{origin}:{client_id}:pending:{pending_key(state)}"


def is_pending_name(name: str) -> bool:
    """Whether a storage name is a pending sign-in's (it ends in ``:pending:`` and 32 hex digits)."""
    return name.startswith("tenant-integration:") and _PENDING_END.search(name) is not None


def session_lock_hash(lock_name: str) -> str:
    """``<h>`` of a session's file lock directory ``<file>.<h>.refresh.lock``: the first 16 lowercase
    hex digits of SHA-256 of the session's lock name (UTF-8).

    Example:
        >>> session_lock_hash("tenant-integration:https://acme.tenant.test:demo:42:lock")
        '3495d7a3d1e0e80f'
    """
    return hashlib.sha256(lock_name.encode("utf-8")).hexdigest()[:16]
