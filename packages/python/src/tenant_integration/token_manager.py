"""The token manager: PKCE sign-in, rotation-safe refresh, revocation and sign-out, on httpx.

:class:`TokenManager` (threads) and :class:`AsyncTokenManager` (asyncio) keep the promises of the
TypeScript manager (``packages/token-manager/src/token-manager.ts``) and share its records, keys and
locks, so a Python and a TypeScript process on one token file or one Redis stay signed in together:

- sign-in with PKCE S256 and a random, single-use ``state`` compared in constant time before any
  request (RFC 6749 §4.1, §10.12; RFC 7636);
- JSON token requests, as the contract's ``POST /oauth/token`` takes them;
- the access token refreshed at use time when it is within ``refresh_leeway`` of expiry (no timers),
  expiry counted from the local receive time and ``expires_in``;
- one refresh however many callers: within the process (one flight, started under a threading lock,
  or one asyncio task; the other threads or tasks wait for its outcome, failure included) and across
  processes through the storage's lock, whose holder re-reads the storage and refreshes only if the
  stored tokens are still not usable (RFC 9700 §4.14.2);
- rotated tokens written to the storage (which returns once they are durable) before they are handed
  out; ``invalid_grant`` ends the session, 5xx and network errors keep it; a refresh is retried only
  when its request cannot have reached the tenant (one that may have made the tenant rotate the
  refresh token is never sent again by the manager on its own);
- revocation (RFC 7009) and local sign-out; events; typed errors with stable codes that never
  carry a token, code, verifier or state, and a :mod:`logging` logger that never prints one.

The code is laid out by concern, with the same module names as the TypeScript and Go kits: the I/O
flows are written once, async (``_async/token_manager.py``), and the sync manager is generated from
them (``_sync/token_manager.py``, by ``scripts/unasync.py``); the decisions they share need no I/O
(``_manager_core``, ``_sign_in``, ``_refresh``, ``_refresh_intent``, ``_token_request``,
``_token_record``, ``_lock``). This module is the public face of it all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ._events import EventName, SessionInfo, SignedOut
from ._lazy_exports import lazy_exports
from ._sign_in import AuthorizationRequest, SignedIn, SignIn

if TYPE_CHECKING:  # what type checkers see; at run time, __getattr__ below loads each manager on first use
    from ._async.sessions import AsyncSessions
    from ._async.token_manager import AsyncTokenManager
    from ._sync.sessions import Sessions
    from ._sync.token_manager import TokenManager

__all__ = [
    "AsyncSessions",
    "AsyncTokenManager",
    "AuthorizationRequest",
    "EventName",
    "SessionInfo",
    "Sessions",
    "SignIn",
    "SignedIn",
    "SignedOut",
    "TokenManager",
]

# Each manager is loaded when first asked for (PEP 562): a user of the sync one never loads the async
# one, nor the other way round.
_MANAGERS: Final[dict[str, str]] = {
    "AsyncTokenManager": "._async.token_manager",
    "TokenManager": "._sync.token_manager",
    "AsyncSessions": "._async.sessions",
    "Sessions": "._sync.sessions",
}


# PEP 562, hidden from type checkers: they read the imports above.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _MANAGERS, rehome=True)

# Documented, printed and pickled under the module users import them from.
for _exported in (AuthorizationRequest, SessionInfo, SignedIn, SignIn, SignedOut):
    _exported.__module__ = __name__
del _exported
