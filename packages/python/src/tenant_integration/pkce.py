"""PKCE (RFC 7636): the code verifier, its S256 challenge, and their validation.

The verifier is the secret a public client proves the code with: it stays in the pending sign-in
until the exchange and never appears in a URL, a log line or an error (RFC 7636 §7.1).
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from dataclasses import dataclass, field
from typing import Literal

from .token_errors import TokenManagerError

__all__ = ["PkcePair", "create_pkce_pair", "derive_code_challenge", "is_valid_verifier"]

# RFC 7636 §4.1: code-verifier = 43*128unreserved, unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~".
_VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")


def _base64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class PkcePair:
    """A PKCE pair: keep ``verifier`` secret until the exchange; send ``challenge`` in the authorize URL.

    The verifier is left out of ``repr`` so that printing a pair does not show it.

    See RFC 7636 §4.1, §4.2.
    """

    verifier: str = field(repr=False)
    challenge: str
    method: Literal["S256"] = "S256"


def is_valid_verifier(verifier: object) -> bool:
    """True when ``verifier`` is 43 to 128 characters of ``A-Z a-z 0-9 - . _ ~`` (RFC 7636 §4.1).

    Example:
        >>> is_valid_verifier("a" * 43), is_valid_verifier("a" * 42), is_valid_verifier("a" * 42 + "+")
        (True, False, False)
    """
    return isinstance(verifier, str) and _VERIFIER.fullmatch(verifier) is not None


def create_pkce_pair(length: int = 64) -> PkcePair:
    """Creates a code verifier of ``length`` characters and its S256 challenge.

    The verifier is BASE64URL of ``ceil(length * 3 / 4)`` bytes from :mod:`secrets` (the OS CSPRNG),
    cut to ``length``: each character carries 6 uniformly random bits, so every one of the 64 base64url
    characters (a subset of the unreserved set) is equally likely, as RFC 7636 §4.1 recommends.

    Raises:
        TokenManagerError: ``INVALID_VERIFIER`` when ``length`` is not an integer from 43 to 128.

    Example:
        >>> pair = create_pkce_pair()
        >>> (len(pair.verifier), pair.method, pair.challenge == derive_code_challenge(pair.verifier))
        (64, 'S256', True)

    See RFC 7636 §4.1 (verifier), §4.2 (challenge); RFC 4648 §5 (base64url).
    """
    if isinstance(length, bool) or not isinstance(length, int) or not 43 <= length <= 128:
        raise TokenManagerError("INVALID_VERIFIER", "the verifier length must be an integer from 43 to 128")
    verifier = _base64url(secrets.token_bytes(-(-length * 3 // 4)))[:length]
    return PkcePair(verifier=verifier, challenge=derive_code_challenge(verifier))


def derive_code_challenge(verifier: str) -> str:
    """Computes the S256 challenge ``BASE64URL(SHA256(ASCII(verifier)))``.

    Raises:
        TokenManagerError: ``INVALID_VERIFIER`` when the verifier is not 43 to 128 characters of
            ``A-Z a-z 0-9 - . _ ~``. The error never contains the verifier.

    Example:
        >>> derive_code_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'

    See RFC 7636 §4.2, Appendix B.
    """
    if not is_valid_verifier(verifier):
        raise TokenManagerError(
            "INVALID_VERIFIER", "a PKCE verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636 §4.1)"
        )
    return _base64url(hashlib.sha256(verifier.encode("ascii")).digest())
