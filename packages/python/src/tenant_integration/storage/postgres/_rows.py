"""The row of each record name: split into session id and kind after the storage's tenant origin and
client id (``spec/token-store/README.md``, "Rows"; the TypeScript kit's ``rows.ts``). No I/O.

A client id may hold ``:`` (``urn:app:1``), so a name alone does not say where the client id ends and
the session id begins: a storage is made for one origin and client id, the manager's, and splits each
name after ``tenant-integration:<origin>:<client_id>:``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..._base_url import tenant_origin
from ..errors import PostgresStorageError, PostgresStorageOptionsError

__all__ = ["Row", "Scope"]

_SESSION_ID = re.compile(r"[A-Za-z0-9\-._~@+=|]{1,128}")
_PENDING_BY_STATE = re.compile(r"pending:[0-9a-f]{32}")


def _quote(text: str) -> str:
    """``text`` as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


@dataclass(frozen=True)
class Row:
    """The primary key of a record's row."""

    origin: str
    client_id: str
    session: str
    kind: str

    def params(self) -> tuple[str, str, str, str]:
        """The key as the statements' first four parameters: session, origin, client id, kind (the
        primary key's order)."""
        return (self.session, self.origin, self.client_id, self.kind)

    def describe(self, table: str) -> str:
        """The row as a condition a user can paste into a query, never its value.

        Example:
            >>> Row("https://acme.tenant.test", "demo", "42", "tokens").describe("records")
            "records (origin, client_id, session, kind) = ('https://acme.tenant.test', 'demo', '42', 'tokens')"
        """
        values = ", ".join(_quote(v) for v in (self.origin, self.client_id, self.session, self.kind))
        return f"{table} (origin, client_id, session, kind) = ({values})"


@dataclass(frozen=True)
class Scope:
    """The tenant origin and client id a storage is made for: the manager's."""

    origin: str
    client_id: str

    @classmethod
    def of(cls, base_url: str, client_id: str) -> Scope:
        """The scope of the manager's ``base_url`` and ``client_id``.

        Raises:
            PostgresStorageOptionsError: ``INVALID_OPTIONS`` for a ``base_url`` the manager would refuse,
                or an empty ``client_id``.
        """
        try:
            origin = tenant_origin(base_url)
        except Exception as e:
            raise PostgresStorageOptionsError("base_url", f"must be the manager's base_url ({e})") from None
        if not isinstance(client_id, str) or not client_id:
            raise PostgresStorageOptionsError("client_id", "must be the manager's client_id, a non-empty string")
        return cls(origin, client_id)

    def row(self, name: str) -> Row:
        """The row of the manager's name ``name``.

        Raises:
            PostgresStorageError: ``UNKNOWN_NAME`` for a name of another tenant or client, a lock's, or
                anything the manager does not store.

        Example:
            >>> Scope("https://acme.tenant.test", "demo").row("tenant-integration:https://acme.tenant.test:demo:42:tokens")
            Row(origin='https://acme.tenant.test', client_id='demo', session='42', kind='tokens')
        """
        prefix = f"tenant-integration:{self.origin}:{self.client_id}:"
        if not name.startswith(prefix):
            raise PostgresStorageError(
                "UNKNOWN_NAME",
                f"{name!r} is not a record of {self.origin} and client {self.client_id!r}, the tenant and client "
                "this storage was made for: give PostgresStorage the manager's own base_url and client_id",
            )
        tail = name[len(prefix) :]
        if tail in ("tokens", "intent", "pending") or _PENDING_BY_STATE.fullmatch(tail):
            return Row(self.origin, self.client_id, "", tail)
        session, colon, kind = tail.rpartition(":")
        if colon and _SESSION_ID.fullmatch(session) and kind in ("tokens", "intent"):
            return Row(self.origin, self.client_id, session, kind)
        raise PostgresStorageError(
            "UNKNOWN_NAME",
            f"{name!r} is not a record of the token manager's (tokens, intent or a pending sign-in, of "
            f"{self.origin} and client {self.client_id!r})",
        )
