"""Token endpoint requests without I/O: build each request, process each answer (oauth4webapi's pairs).

The manager (:mod:`tenant_integration._async.token_manager`, and the sync one generated from it) holds
the state and sends; everything it decides about what goes out and what came back is here, written
once for both:

- :func:`exchange_request` / :func:`refresh_request` / :func:`revoke_request` build the three requests
  (JSON for ``POST /oauth/token`` as the contract takes it; a form for ``POST /oauth/revoke``, RFC 7009 §2.1);
- :func:`process_answer` turns an answer into its text or its typed error (RFC 6749 §5.2);
- :func:`process_token_response` turns a token response into the record to store (RFC 6749 §5.1, §6);
- :func:`transport_failure` turns an httpx failure into :class:`TransientError`, telling whether the
  request can have reached the tenant.

The TypeScript kit's counterpart is ``packages/token-manager/src/token-response.ts`` and the request
code of its manager. Nothing here holds a token beyond the request it builds; no error carries one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from urllib.parse import urlencode

import httpx

from ._redact import redact
from ._retry import parse_retry_after
from ._token_record import TokenRecord, parse_json, parse_oauth_error, parse_token_response
from .state import create_state
from .token_errors import OAuthResponseError, TokenManagerError, TransientError, scrubbed

__all__ = [
    "TokenRequest",
    "exchange_request",
    "process_answer",
    "process_token_response",
    "refresh_request",
    "revoke_request",
    "transport_failure",
]

# The exceptions after which a request cannot have reached the tenant: no connection was made.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
_TOKEN_HEADERS = {"Accept": "application/json", "Content-Type": "application/json"}
_REVOKE_HEADERS = {"Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded"}


@dataclass(frozen=True)
class TokenRequest:
    """One request to the tenant's OAuth endpoints: its path, body and headers, and the secrets it
    carries (never to appear in an error, a log line or a ``repr``)."""

    path: str
    body: bytes | str = field(repr=False)
    headers: dict[str, str]
    secrets: tuple[str, ...] = field(repr=False)


def _json(body: dict[str, str]) -> bytes:
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def exchange_request(client_id: str, redirect_uri: str, code: str, verifier: str) -> TokenRequest:
    """The authorization code grant with its PKCE verifier (RFC 6749 §4.1.3, RFC 7636 §4.5)."""
    body = {
        "grant_type": "authorization_code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code": code,
        "code_verifier": verifier,
    }
    return TokenRequest("/oauth/token", _json(body), _TOKEN_HEADERS, (code, verifier))


def refresh_request(client_id: str, stored: TokenRecord) -> TokenRequest:
    """The refresh token grant with ``stored``'s refresh token (RFC 6749 §6)."""
    body = {"grant_type": "refresh_token", "refresh_token": stored.refresh_token, "client_id": client_id}
    return TokenRequest("/oauth/token", _json(body), _TOKEN_HEADERS, (stored.access_token, stored.refresh_token))


def revoke_request(client_id: str, token: str) -> TokenRequest:
    """The revocation of an access token: a form body with ``client_id``, as RFC 7009 §2.1 and the
    contract take it."""
    body = urlencode({"token": token, "token_type_hint": "access_token", "client_id": client_id})
    return TokenRequest("/oauth/revoke", body, _REVOKE_HEADERS, (token,))


def process_answer(
    request: TokenRequest, response: httpx.Response, secrets: list[str | None], attempt: int, now: float
) -> str:
    """The text of a 2xx answer; every other answer as its typed error (RFC 6749 §5.2).

    ``secrets`` are every token, code and verifier in play (an error must carry none of them), ``now``
    the manager's clock in seconds (for a ``Retry-After`` date).

    Raises:
        TransientError: 429 or 5xx (``sent`` false for 429 and 503: the tenant did not handle it).
        OAuthResponseError: an RFC 6749 §5.2 error body, echoes of ``secrets`` redacted.
        TokenManagerError: ``INVALID_RESPONSE`` for any other answer.
    """
    status = response.status_code
    if 200 <= status < 300:
        return response.text
    if status == 429 or status >= 500:
        # A 503 says the tenant did not handle the request (RFC 9110 §15.6.4); for a 429 the kit assumes
        # so (RFC 6585 §4 does not say: see the README's "Paused processes"; were it handled, its
        # successor is lost with the answer and the next call would present this token anyway). So
        # that refresh may be sent again, as the TypeScript manager does. Any other 5xx may come
        # after the tenant rotated the token.
        retry_after = parse_retry_after(response.headers.get("retry-after"), now)
        raise TransientError(status, attempt, sent=status not in (429, 503), retry_after=retry_after)
    fields = parse_oauth_error(parse_json(response.text)) if status >= 400 else None
    if fields is None:
        raise TokenManagerError(
            "INVALID_RESPONSE", f"{request.path} answered HTTP {status} without an OAuth error body"
        )
    error, description, uri = fields
    # A server may echo what it was sent; the error must not carry it.
    raise OAuthResponseError(
        status,
        redact(error, secrets),
        None if description is None else redact(description, secrets),
        None if uri is None else redact(uri, secrets),
    )


def process_token_response(text: str, origin: TokenRecord | None, now_ms: float) -> TokenRecord:
    """The record to store for a token response; ``origin`` is the record a refresh started from
    (``None`` for a sign-in). Expiry counts from the local receive time, ``now_ms``, so a skewed server
    clock does not matter; a refresh that did not rotate keeps the refresh token it was made with.

    Raises:
        TokenManagerError: ``INVALID_RESPONSE`` naming the first invalid field, never its value.

    See RFC 6749 §5.1, §6.
    """
    fields = parse_token_response(parse_json(text), origin.refresh_token if origin else None)
    record_id = create_state()
    session, seq = (record_id, 0) if origin is None else (origin.session, origin.seq + 1)
    return TokenRecord(**fields, received_at=round(now_ms), id=record_id, session=session, seq=seq)


def transport_failure(error: Exception, secrets: list[str | None], attempt: int) -> TransientError:
    """The :class:`TransientError` of a request that got no answer; ``sent`` false when no connection
    was made (the only failure after which a refresh can be sent again safely)."""
    return TransientError(None, attempt, cause=scrubbed(error, secrets), sent=not isinstance(error, _NOT_SENT))
