"""Removal of secrets from text: every form a token may take when it is printed.

A token, code, verifier or state may appear raw, percent-encoded (upper or lower case, ``+`` or
``%20`` for spaces), JSON-escaped or cut short in an error message or a body a server echoed. Every
form is replaced by ``[redacted]`` (RFC 6749 §10.3, §10.4; RFC 6750 §5.3).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

__all__ = ["REDACTED", "redact", "secret_forms"]

REDACTED = "[redacted]"
# Shorter values are not treated as secrets: redacting them would garble ordinary text.
_MIN_SECRET = 8


def secret_forms(secret: str) -> set[str]:
    """The printed forms of ``secret``: raw, percent-encoded (both cases, both space styles), JSON-escaped."""
    forms = {secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]}
    forms |= {re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), f) for f in list(forms)}
    return {f for f in forms if len(f) >= _MIN_SECRET}


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """Returns ``text`` with every form of every secret replaced by ``[redacted]``.

    Example:
        >>> redact("refresh_token=rt%2Fabcdefgh failed", ["rt/abcdefgh"])
        'refresh_token=[redacted] failed'
    """
    forms: set[str] = set()
    for secret in secrets:
        if secret:
            forms |= secret_forms(secret)
    # Longest first, so that a form containing another is replaced whole.
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, REDACTED)
    return text
