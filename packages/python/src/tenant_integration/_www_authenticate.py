"""Reading a ``WWW-Authenticate`` header: its challenges and their parameters.

The header is a comma-separated list of challenges (RFC 9110 §11.6.1)::

    challenge   = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
    auth-param  = token BWS "=" BWS ( token / quoted-string )

Commas separate both challenges and the parameters of one challenge, so a bare token (not followed
by ``=``) starts the next challenge. Quoted strings may hold commas and ``\\``-escapes (RFC 9110
§5.6.4). The Bearer challenge of RFC 6750 §3 carries ``realm``, ``scope``, ``error``,
``error_description`` and ``error_uri``. Malformed input never raises: what can be read is returned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Challenge", "bearer_challenge", "parse_challenges"]

# RFC 9110 §5.6.2: token = 1*tchar
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# RFC 9110 §11.2: token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_SPACE = " \t"


@dataclass(frozen=True, slots=True)
class Challenge:
    """One challenge of a ``WWW-Authenticate`` header (RFC 9110 §11.6.1).

    ``scheme`` is as written (compare it case-insensitively, RFC 9110 §11.1); ``params`` has lower-case
    names and unescaped values, the first value of a repeated name kept (RFC 9110 §11.2 forbids repeats);
    ``token68`` is set for a scheme followed by a token68 instead of parameters.
    """

    scheme: str
    params: dict[str, str] = field(default_factory=dict)
    token68: str | None = None


def _skip(text: str, i: int, chars: str) -> int:
    while i < len(text) and text[i] in chars:
        i += 1
    return i


def _quoted(text: str, i: int) -> tuple[str, int]:
    """The quoted-string starting at ``text[i] == '"'``, unescaped, and the index after it.

    An unterminated string runs to the end of the header.
    """
    out: list[str] = []
    i += 1
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
        elif c == '"':
            return "".join(out), i + 1
        else:
            out.append(c)
            i += 1
    return "".join(out), i


def parse_challenges(header: str | None) -> list[Challenge]:
    """Every challenge of a ``WWW-Authenticate`` value, in order (RFC 9110 §11.6.1).

    Several header lines are read as one value joined by commas (RFC 9110 §5.3).

    Example:
        >>> [c.scheme for c in parse_challenges('Basic realm="a, b", Bearer error="invalid_token"')]
        ['Basic', 'Bearer']
        >>> parse_challenges('Bearer scope="a b", error=insufficient_scope')[0].params
        {'scope': 'a b', 'error': 'insufficient_scope'}
    """
    text = header or ""
    challenges: list[Challenge] = []
    current: Challenge | None = None
    i = 0
    while i < len(text):
        i = _skip(text, i, _SPACE + ",")
        match = _TOKEN.match(text, i)
        if match is None:
            # Not a token (a stray quote, "=", a non-ASCII character): skip it.
            i += 1
            continue
        name, after = match.group(0), match.end()
        j = _skip(text, after, _SPACE)
        is_param = j < len(text) and text[j] == "=" and current is not None
        if is_param:
            k = _skip(text, j + 1, _SPACE)
            if k < len(text) and text[k] == '"':
                value, i = _quoted(text, k)
            else:
                value_match = _TOKEN.match(text, k)
                value = value_match.group(0) if value_match else ""
                i = value_match.end() if value_match else k
            assert current is not None
            current.params.setdefault(name.lower(), value)
            continue
        # A bare token: the scheme of the next challenge, maybe followed by a token68.
        current = Challenge(scheme=name)
        challenges.append(current)
        i = after
        if i < len(text) and text[i] in _SPACE:
            k = _skip(text, i, _SPACE)
            token68 = _TOKEN68.match(text, k)
            if token68 is not None:
                end = _skip(text, token68.end(), _SPACE)
                # "abc==" then the end or a comma is a token68; "realm=x" goes on as a parameter.
                if end >= len(text) or text[end] == ",":
                    # A token68 takes the whole challenge: what follows starts the next one.
                    challenges[-1] = Challenge(scheme=name, token68=token68.group(0))
                    current = None
                    i = end
    return challenges


def bearer_challenge(header: str | None) -> dict[str, str] | None:
    """The parameters of the first ``Bearer`` challenge of a ``WWW-Authenticate`` value, or ``None``.

    RFC 6750 §3: ``error`` is ``invalid_request``, ``invalid_token`` or ``insufficient_scope``
    (§3.1), and ``scope`` lists space-separated scope names (RFC 6749 §3.3).

    Example:
        >>> bearer_challenge('Bearer realm="api", error="insufficient_scope", scope="profile:read"')
        {'realm': 'api', 'error': 'insufficient_scope', 'scope': 'profile:read'}
        >>> bearer_challenge('Basic realm="x"') is None
        True
    """
    for challenge in parse_challenges(header):
        if challenge.scheme.lower() == "bearer":
            return challenge.params
    return None
