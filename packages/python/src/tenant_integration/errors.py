"""The root of every error the SDK raises, and the error of a bad option.

Every error is an :class:`Exception` subclass with a stable ``code`` (a string a caller may branch on),
a message that says why, and the underlying error as ``__cause__`` (also readable as ``cause``). No
error carries a token, an authorization code, a PKCE verifier or a state in its message, its
attributes or its cause (RFC 6749 §10.3, §10.4, §10.5; RFC 7636 §7.1).
"""

from __future__ import annotations

__all__ = ["InvalidOptionsError", "TenantIntegrationError"]


class TenantIntegrationError(Exception):
    """Base class of every error of the SDK.

    Attributes:
        code: a stable, upper-case identifier of what went wrong (e.g. ``"INVALID_OPTIONS"``).
        cause: the error that caused this one (the same object as ``__cause__``), or ``None``.

    Example:
        >>> try:
        ...     raise TenantIntegrationError("EXAMPLE", "what went wrong")
        ... except TenantIntegrationError as e:
        ...     (e.code, str(e))
        ('EXAMPLE', 'EXAMPLE: what went wrong')
    """

    code: str

    def __init__(self, code: str, message: str = "", *, cause: BaseException | None = None) -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code
        if cause is not None:
            self.__cause__ = cause

    @property
    def cause(self) -> BaseException | None:
        """The error that caused this one, as ``__cause__``."""
        return self.__cause__

    @property
    def name(self) -> str:
        """The class name, as ``Error.name`` in the TypeScript kit."""
        return type(self).__name__


class InvalidOptionsError(TenantIntegrationError):
    """An option given to a constructor is invalid; the message names the option and says why.

    Raised at construction, before any request, by the client and the token manager alike (the same
    reasons in both, e.g. for a ``base_url`` with a path).
    """

    def __init__(self, option: str, reason: str, *, cause: BaseException | None = None) -> None:
        super().__init__("INVALID_OPTIONS", f"{option}: {reason}", cause=cause)
        self.option = option
