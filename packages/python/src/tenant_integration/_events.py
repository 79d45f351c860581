"""What the token manager tells its listeners and callers: the event names and the payloads that hold
no token (:class:`SessionInfo`, :class:`SignedOut`). Exported from :mod:`tenant_integration.token_manager`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["EVENTS", "EventName", "SessionInfo", "SignedOut"]

EventName = Literal["signed-in", "signed-out", "tokens-refreshed", "session-ended", "revoked", "storage-failed"]
"""The events of :meth:`TokenManager.on` (the TypeScript manager's, whose payloads add ``otherTab``):

- ``signed-in``: ``complete_authorization`` stored a new session; payload :class:`SessionInfo`.
- ``signed-out``: :meth:`TokenManager.sign_out` or :meth:`TokenManager.revoke` cleared the tokens;
  payload :class:`SignedOut` (``revoked`` tells which).
- ``tokens-refreshed``: new tokens were obtained with the refresh token and persisted; payload
  :class:`SessionInfo`.
- ``session-ended``: the refresh token was refused with ``invalid_grant`` and the tokens cleared;
  payload the :class:`~tenant_integration.token_errors.SessionEndedError`.
- ``revoked``: :meth:`TokenManager.revoke` succeeded and the tokens were cleared (``signed-out``
  follows); payload ``None``.
- ``storage-failed``: new tokens could not be written; they stay usable in this process and their
  write is retried on a later call, at most once a second; or the stored tokens were found unreadable
  (a corrupt file set aside, a value that is not a token record: no session). Payload the
  ``STORAGE_FAILED`` :class:`~tenant_integration.token_errors.TokenManagerError`.

No payload holds a token.
"""

EVENTS: frozenset[str] = frozenset(
    ("signed-in", "signed-out", "tokens-refreshed", "session-ended", "revoked", "storage-failed")
)


@dataclass(frozen=True)
class SessionInfo:
    """What the manager tells about a session, without any token.

    Attributes:
        expires_at: when the access token expires, in ``now()`` seconds (local receive time + ``expires_in``).
        scope: the granted scopes as the tenant returned them, or ``None`` when it returned none.

    See RFC 6749 §5.1.
    """

    expires_at: float
    scope: str | None = None


@dataclass(frozen=True)
class SignedOut:
    """The payload of the ``signed-out`` event.

    Attributes:
        revoked: ``True`` after :meth:`TokenManager.revoke` (the tenant revoked the token, RFC 7009),
            ``False`` after a local :meth:`TokenManager.sign_out`.
    """

    revoked: bool
