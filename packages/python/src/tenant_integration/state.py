"""The ``state`` parameter: random, single use, compared in constant time.

See RFC 6749 §10.12 (CSRF), §4.1.1; RFC 9700 §2.1.
"""

from __future__ import annotations

import hmac
import secrets

__all__ = ["create_state", "states_equal"]


def create_state() -> str:
    """A new ``state`` of 256 random bits from the OS CSPRNG (43 base64url characters).

    The same form as the TypeScript kit's ``createState`` (which also names token records by it).

    Example:
        >>> len(create_state()), create_state() != create_state()
        (43, True)

    See RFC 6749 §10.12.
    """
    return secrets.token_urlsafe(32)


def states_equal(received: str, stored: str) -> bool:
    """True only when ``received`` equals ``stored``, compared in time that does not depend on where
    they differ (:func:`hmac.compare_digest` on their UTF-8 bytes).

    Example:
        >>> states_equal("abc", "abc"), states_equal("abc", "abd")
        (True, False)

    See RFC 6749 §10.12.
    """
    return hmac.compare_digest(received.encode("utf-8"), stored.encode("utf-8"))
