"""Sign-in without I/O: the authorize URL and its pending record, and the checks of the callback.

The manager stores the pending record, takes it back when the callback comes, and exchanges the code
(:func:`~._token_request.exchange_request`); every decision in between is here:

- :func:`authorization`: a PKCE S256 pair and a random, single-use ``state``; the URL with its seven
  parameters (RFC 6749 §4.1.1, RFC 7636 §4.3);
- :func:`callback_state`: the callback is a full URL with one ``state`` (steps 1 and 2 of
  ``spec/token-store/README.md``, "The callback"), whose pending sign-in is then taken by its key;
- :func:`callback_params`: at the redirect URI (RFC 9700 §4.4, mix-up), repeating neither ``code``
  nor ``error`` (step 3, after the take: the sign-in is used up whatever follows);
- :func:`checked_callback`: a pending sign-in, its ``state`` equal in constant time (RFC 6749
  §10.12), its browser binding (RFC 9700 §4.7.1), its session, not expired; no ``error``
  (§4.1.2.1); a ``code`` (steps 4 to 9). No request is sent before this.

The TypeScript kit's counterpart is ``packages/token-manager/src/sign-in.ts``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import SplitResult, parse_qsl, quote, urlencode, urlsplit

from ._binding import check_binding
from ._events import SessionInfo
from ._generated.scopes import SCOPES
from ._redact import redact
from ._token_record import PendingRecord, parse_oauth_error, serialize_pending
from .errors import InvalidOptionsError
from .pkce import create_pkce_pair
from .state import create_state, states_equal
from .token_errors import TokenManagerError

__all__ = [
    "AuthorizationRequest",
    "SignIn",
    "SignedIn",
    "authorization",
    "callback_params",
    "callback_state",
    "check_scopes",
    "checked_callback",
    "redirect_target",
]


@dataclass(frozen=True)
class AuthorizationRequest:
    """The result of :meth:`TokenManager.begin_authorization`: where to send the browser.

    Attributes:
        url: the authorize URL with its seven parameters (RFC 6749 §4.1.1, RFC 7636 §4.3).
        state: the ``state`` it carries (kept, single use, by the manager: nothing to do with it).
        expires_at: when the pending sign-in expires, in ``now()`` seconds.
        scopes: the scopes asked for.
        redirect_uri: where the tenant sends the browser back.

    ``url`` and ``state`` are left out of ``repr``.
    """

    url: str = field(repr=False)
    state: str = field(repr=False)
    expires_at: float
    scopes: tuple[str, ...]
    redirect_uri: str


@dataclass(frozen=True)
class SignIn:
    """A sign-in begun for a session (:meth:`Sessions.begin_sign_in`): where to send the browser,
    and the binding that browser must bring to the callback (the value of the sign-in cookie).

    Attributes:
        url: the authorize URL (it carries the state).
        binding: the browser binding: the one given, or a new one (32 random bytes, base64url).
        session_id: the session the tokens will be stored under.
        expires_at: when the pending sign-in expires, in ``now()`` seconds.

    ``url`` and ``binding`` are left out of ``repr``.
    """

    url: str = field(repr=False)
    binding: str = field(repr=False)
    session_id: str
    expires_at: float


@dataclass(frozen=True)
class SignedIn:
    """A completed sign-in (:meth:`Sessions.complete_sign_in`): whose session, and its expiry and scope."""

    session_id: str
    info: SessionInfo


def check_scopes(scopes: object, option: str) -> tuple[str, ...]:
    """``scopes`` as a tuple of the contract's scope names.

    Raises:
        InvalidOptionsError: not a list, empty, or naming a scope the service does not have.
    """
    if isinstance(scopes, str) or not isinstance(scopes, Sequence | frozenset | set):
        raise InvalidOptionsError(option, "give a list of scope names, e.g. ['profile:read']")
    names = tuple(scopes)
    if not names:
        raise InvalidOptionsError(option, "give at least one scope, e.g. ['profile:read']")
    unknown = [name for name in names if name not in SCOPES]
    if unknown:
        raise InvalidOptionsError(
            option, f"{unknown[0]!r} is not a scope of the service; the scopes are {', '.join(sorted(SCOPES))}"
        )
    return names


def _target(parts: SplitResult) -> str:
    """Scheme, credentials, host, port and path of a URL in a normal form: what a callback must share
    with the redirect URI (RFC 6749 §3.1.2; RFC 9700 §4.4, mix-up)."""
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    netloc = f"[{host}]" if ":" in host else host
    if parts.username is not None:
        netloc = f"{parts.username}{':' + parts.password if parts.password is not None else ''}@{netloc}"
    port = parts.port
    if port is not None and port != {"http": 80, "https": 443}.get(scheme):
        netloc += f":{port}"
    path = parts.path or ("/" if scheme in ("http", "https") else "")
    return f"{scheme}://{netloc}{path}"


def redirect_target(redirect_uri: object) -> str:
    """The normal form of the redirect URI, which every callback must share.

    Raises:
        InvalidOptionsError: not an absolute URL, or one with a fragment (RFC 6749 §3.1.2).
    """
    if not isinstance(redirect_uri, str) or not redirect_uri:
        raise InvalidOptionsError("redirect_uri", "give the redirect URI registered for the client, as a string")
    try:
        parts = urlsplit(redirect_uri)
        target = _target(parts)
    except ValueError as e:
        raise InvalidOptionsError("redirect_uri", f"not a URL ({e})") from None
    if not parts.scheme or (parts.scheme.lower() in ("http", "https") and not parts.hostname):
        raise InvalidOptionsError("redirect_uri", "must be an absolute URL, exactly as registered for the client")
    if "#" in redirect_uri:
        raise InvalidOptionsError("redirect_uri", "must not have a fragment (RFC 6749 §3.1.2)")
    return target


def authorization(
    origin: str,
    client_id: str,
    redirect_uri: str,
    scopes: tuple[str, ...],
    expires_at_ms: float,
    *,
    session_id: str | None = None,
    browser: str | None = None,
) -> tuple[AuthorizationRequest, str]:
    """A new authorization request and its pending record (serialized), valid until ``expires_at_ms``,
    for ``session_id`` and bound to the browser whose binding's hash is ``browser`` (when given)."""
    pair = create_pkce_pair()
    state = create_state()
    expires_at = round(expires_at_ms)
    record = PendingRecord(
        state=state, verifier=pair.verifier, expires_at=expires_at, session_id=session_id, browser=browser
    )
    pending = serialize_pending(record)
    query = urlencode(
        {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "scope": " ".join(scopes),
            "state": state,
            "code_challenge": pair.challenge,
            "code_challenge_method": "S256",
        },
        # Spaces as %20, not the form encoding's "+", which some servers read literally.
        quote_via=quote,
        safe="",
    )
    request = AuthorizationRequest(
        url=f"{origin}/oauth/authorize?{query}",
        state=state,
        expires_at=expires_at / 1000,
        scopes=scopes,
        redirect_uri=redirect_uri,
    )
    return request, pending


_NOT_A_FULL_URL = (
    "not a full URL: pass the whole URL the browser was sent back to (scheme, host, path and "
    "query), not only its query string"
)


def callback_state(callback_url: object) -> tuple[SplitResult, list[tuple[str, str]], str]:
    """Steps 1 and 2 of the callback, before its pending sign-in is taken: a full URL (its parts and
    query pairs) with one non-empty ``state``, returned. Its value never enters a message.

    Raises:
        TokenManagerError: ``INVALID_CALLBACK`` (not a full URL, ``state`` repeated), ``STATE_MISSING``.
    """
    if not isinstance(callback_url, str):
        raise TokenManagerError("INVALID_CALLBACK", _NOT_A_FULL_URL)
    try:
        parts = urlsplit(callback_url)
        _target(parts)
    except ValueError:
        raise TokenManagerError("INVALID_CALLBACK", _NOT_A_FULL_URL) from None
    if not parts.scheme or (parts.scheme.lower() in ("http", "https") and not parts.hostname):
        raise TokenManagerError("INVALID_CALLBACK", _NOT_A_FULL_URL)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    states = [value for name, value in pairs if name == "state"]
    if not states or not states[0]:
        raise TokenManagerError("STATE_MISSING", "the callback has no state")
    if len(states) > 1:
        raise TokenManagerError("INVALID_CALLBACK", "the callback repeats state")
    return parts, pairs, states[0]


def callback_params(parts: SplitResult, pairs: list[tuple[str, str]], redirect_target: str) -> dict[str, str]:
    """Step 3, once the pending sign-in is taken: the callback is at the redirect URI
    (``redirect_target``) and repeats neither ``code`` nor ``error``; its query as a dict.

    Raises:
        TokenManagerError: ``INVALID_CALLBACK`` saying what is wrong.
    """
    # Mix-up defence: the answer must come back where this client asked for it.
    if _target(parts) != redirect_target:
        raise TokenManagerError("INVALID_CALLBACK", "the callback is not at redirect_uri")
    params: dict[str, str] = {}
    for name, value in pairs:
        if name in params and name in ("code", "error"):
            # An ambiguous callback is refused rather than read last-one-wins.
            raise TokenManagerError("INVALID_CALLBACK", f"the callback repeats {name}")
        params.setdefault(name, value)
    return params


def checked_callback(
    pending: PendingRecord | None,
    params: dict[str, str],
    state: str,
    binding: str | None,
    ours: Callable[[PendingRecord], bool],
    now_ms: float,
) -> tuple[str, PendingRecord]:
    """Steps 4 to 9 of a callback whose pending sign-in (``pending``) was taken by its ``state``: there
    is one; its state equal (constant time: it guards the 128-bit key); the browser ``binding`` the
    callback brought matches its ``browser``; it is ``ours`` (its session the caller's); not expired; no
    ``error``; a ``code``. Returns the code and the record.

    Raises:
        TokenManagerError: ``NO_PENDING_SIGN_IN``, ``STATE_MISMATCH``, ``STATE_EXPIRED``,
            ``AUTHORIZATION_DENIED``, ``INVALID_CALLBACK``.
    """
    if pending is None:
        raise TokenManagerError(
            "NO_PENDING_SIGN_IN",
            "no sign-in is pending for the callback's state (never begun with this storage, already used, or expired)",
        )
    if not states_equal(state, pending.state):
        raise TokenManagerError("STATE_MISMATCH", "the callback's state is not the one of the pending sign-in")
    check_binding(pending.browser, binding)
    if not ours(pending):
        raise TokenManagerError("STATE_MISMATCH", "the sign-in was started for another session")
    if now_ms > pending.expires_at:
        raise TokenManagerError("STATE_EXPIRED", "the pending sign-in expired; begin it again")
    denied = parse_oauth_error(params)
    if denied is not None:
        error, description, uri = denied
        secrets = [pending.state, pending.verifier, params.get("code")]
        clean = None if description is None else redact(description, secrets)
        raise TokenManagerError(
            "AUTHORIZATION_DENIED",
            f"the tenant answered {error}{f' ({clean})' if clean else ''}",
            error=error,
            error_description=clean,
            error_uri=uri,
        )
    code = params.get("code")
    if not code:
        raise TokenManagerError("INVALID_CALLBACK", "the callback has no code")
    return code, pending
