"""The session id of a server acting for many users (``spec/token-store/README.md``, "The session id"):
the app's own id of its user or connection, checked by one rule in every kit, with one message.

The Go kit's ``internal/sessionid``; the TypeScript kit's ``session-id.ts``.
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import Any

from .token_errors import TokenManagerError

__all__ = ["MAX_SESSION_ID_LENGTH", "Log", "SessionLog", "check_session_id", "session_id_problem", "shown_id"]

#: What the managers write their lines to: a logger, or a session's :class:`SessionLog` over it.
Log = logging.Logger | logging.LoggerAdapter[logging.Logger]

#: The longest session id, in characters.
MAX_SESSION_ID_LENGTH = 128
#: What ends every ``INVALID_SESSION_ID`` message: the rule, and what to do with another id.
_RULE = "a session id is 1 to 128 characters from A-Z a-z 0-9 - . _ ~ @ + = | (hash or encode any other id)"
_ALLOWED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~@+=|")
#: How many characters of a bad id a message shows.
_SHOWN = 16


def _show(character: str) -> str:
    """``character`` as itself when it is printable ASCII other than ``"`` and ``\\``, else ``\\u{X}``."""
    if "!" <= character <= "~" and character not in '"\\':
        return character
    return f"\\u{{{ord(character):X}}}"


def shown_id(session_id: str) -> str:
    """The id's first 16 characters, escaped, then ``...`` when it has more: what a message may show."""
    head = "".join(_show(c) for c in session_id[:_SHOWN])
    return head + "..." if len(session_id) > _SHOWN else head


def session_id_problem(session_id: str) -> str | None:
    """Why ``session_id`` is not a session id, ``None`` when it is one: empty; the first character not
    allowed (counted in code points, from 1); more than 128 characters."""
    if session_id == "":
        return "it is empty"
    for position, character in enumerate(session_id, 1):
        if character not in _ALLOWED:
            return f'"{_show(character)}" at character {position} is not allowed'
    if len(session_id) > MAX_SESSION_ID_LENGTH:
        return f"it is {len(session_id)} characters long"
    return None


def check_session_id(session_id: object) -> str:
    """``session_id`` when it is a session id: 1 to 128 characters from ``A-Z a-z 0-9 - . _ ~ @ + = |``
    (RFC 3986's unreserved characters, plus ``@ + = |``), so that UUIDs, integers, e-mail addresses and
    ``auth0|123``-style subjects fit. Ids are compared exactly (``Ada`` and ``ada`` are two sessions).

    Raises:
        TokenManagerError: ``INVALID_SESSION_ID`` for anything else (empty, longer, ``:``, ``{``, ``}``,
            ``/``, ``%``, spaces, control characters, non-ASCII, a value that is not a ``str``), whose
            message names the rule and shows at most the id's first 16 characters, escaped. An app with
            other ids hashes or encodes them (``base64url(SHA-256(id))``).

    Example:
        >>> check_session_id("auth0|64f1c2a9e1b7")
        'auth0|64f1c2a9e1b7'
        >>> check_session_id("a:b")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        tenant_integration.token_errors.TokenManagerError: INVALID_SESSION_ID: invalid session id "a:b": ":" at ...
    """
    if not isinstance(session_id, str):
        raise TokenManagerError(
            "INVALID_SESSION_ID", f"a session id is a string, not {type(session_id).__name__}; {_RULE}"
        )
    problem = session_id_problem(session_id)
    if problem is not None:
        message = f'invalid session id "{shown_id(session_id)}": {problem}; {_RULE}'
        raise TokenManagerError("INVALID_SESSION_ID", message)
    return session_id


class SessionLog(logging.LoggerAdapter[logging.Logger]):
    """The log of a session's manager: every record carries ``session_id`` (as an ``extra`` field), only
    when the logger writes debug records. The id is not a secret, but it may be personal data (an e-mail
    address), so no other level shows it (``spec/token-store/README.md``, "Logs")."""

    def __init__(self, logger: logging.Logger, session_id: str) -> None:
        super().__init__(logger, {"session_id": session_id})

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, MutableMapping[str, Any]]:
        if self.logger.isEnabledFor(logging.DEBUG):
            kwargs["extra"] = {**(self.extra or {}), **kwargs.get("extra", {})}
        return msg, kwargs
