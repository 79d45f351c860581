"""Binding a sign-in to the browser that began it (``spec/token-store/README.md``, "Binding a sign-in
to its browser"; login CSRF, RFC 9700 §4.7.1, RFC 6749 §10.12): a server's pending sign-ins live in
one storage for every browser, so the state alone does not say which browser began one. The start
gives the browser a binding (a cookie, or the app's own value), the pending record keeps its SHA-256,
and the callback must bring the binding with that hash.

The Go kit's ``tokenmanager/binding.go``.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

from .token_errors import TokenManagerError

__all__ = ["binding_hash", "check_binding", "is_binding_cookie", "new_binding"]

#: A binding cookie's value that counts: 32 bytes in base64url without padding.
_COOKIE_VALUE = re.compile(r"[A-Za-z0-9_-]{43}")


def new_binding() -> str:
    """A new browser binding: 32 random bytes from the OS CSPRNG in base64url without padding (43
    characters), the value of the sign-in cookie.

    Example:
        >>> len(new_binding()), is_binding_cookie(new_binding())
        (43, True)
    """
    return secrets.token_urlsafe(32)


def is_binding_cookie(value: str | None) -> bool:
    """Whether a cookie's value is a binding a start reuses (43 base64url characters); any other
    value counts as no cookie."""
    return value is not None and _COOKIE_VALUE.fullmatch(value) is not None


def binding_hash(binding: str) -> str:
    """What a pending record keeps of a binding: SHA-256 of its UTF-8 bytes, 64 lowercase hex digits.
    The binding itself is never stored, logged or put in a URL.

    Example:
        >>> binding_hash("app-session-7f3a9c2e")
        '02770ca2cef0ea2deb942aefcf395d66ea162463a3b7b4524a76ab3c9bb978dd'
    """
    return hashlib.sha256(binding.encode("utf-8")).hexdigest()


def check_binding(browser: str | None, binding: str | None) -> None:
    """The refusal rule at the callback (step 6): ``STATE_MISMATCH`` when the record has ``browser`` and
    the callback brings no binding (``""`` counts as none) or one of another hash (compared in constant
    time); and when the callback brings a binding but the record has none (a server binds every sign-in
    it begins, so an unbound one is not its own). Neither: not checked (a CLI, a browser app).

    Raises:
        TokenManagerError: ``STATE_MISMATCH``, "the sign-in was started in another browser".
    """
    if not browser and not binding:
        return
    if not browser or not binding or not hmac.compare_digest(binding_hash(binding), browser):
        raise TokenManagerError("STATE_MISMATCH", "the sign-in was started in another browser")
