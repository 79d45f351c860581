"""The SDK's logging: a :class:`logging.LoggerAdapter` that never lets a secret through.

The client writes one line per HTTP attempt, retry and refresh, built from the method, the path
without its query, the status, a duration and error codes: by construction no token, code, verifier
or state. The adapter is the second line of defence (RFC 6750 §5.3, RFC 6749 §10.3, RFC 7636 §7.1):
every line, its arguments and its ``extra`` fields are rendered first, then scrubbed of

- the secrets it was told about (the tokens the client sent), in every printed form
  (:func:`tenant_integration._redact.secret_forms`: raw, percent-encoded, form-encoded, JSON-escaped)
  and in base64 (standard and URL-safe, with or without padding);
- whatever follows ``Bearer``/``Basic``, and the values of ``access_token``, ``refresh_token``,
  ``code``, ``code_verifier``, ``state`` and similar keys (``key=value`` and JSON ``"key": "value"``),
  which covers secrets it was never told about.

An exception passed with ``exc_info`` is written as its type and scrubbed message, never as a
traceback (whose frames may show a token).

The package's root logger ``tenant_integration`` gets a :class:`logging.NullHandler`, as libraries
should: nothing is printed unless the application configures logging.
"""

from __future__ import annotations

import base64
import logging
import re
import sys
import threading
from collections import deque
from collections.abc import Iterable, Mapping, MutableMapping
from typing import Any

from ._redact import REDACTED, redact

__all__ = ["CLIENT_LOGGER_NAME", "RedactingLogger", "scrub", "secret_variants"]

CLIENT_LOGGER_NAME = "tenant_integration.client"
"""The client's default logger."""

logging.getLogger("tenant_integration").addHandler(logging.NullHandler())

# Whatever follows an HTTP authentication scheme that carries credentials (RFC 6750 §2.1, RFC 7617 §2).
_CREDENTIALS = re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9\-._~+/%]+=*")
# The value of a key that names a secret, as key=value (query, form, text) or "key": "value" (JSON).
_SECRET_KEYS = re.compile(
    r"(?i)(?<![\w-])(access_token|refresh_token|id_token|token|code|code_verifier|state|client_secret|password)"
    r"(\"?\s*[=:]\s*\"?)([^\s&\",;}]+)"
)
# How many of the last tokens sent are remembered for scrubbing.
_REMEMBERED = 8


def secret_variants(secret: str) -> list[str]:
    """``secret`` and its base64 forms (standard and URL-safe, padded and not), for :func:`redact`,
    which adds the percent-, form- and JSON-encoded forms of each."""
    raw = secret.encode()
    standard = base64.b64encode(raw).decode()
    urlsafe = base64.urlsafe_b64encode(raw).decode()
    return [secret, standard, standard.rstrip("="), urlsafe, urlsafe.rstrip("=")]


def scrub(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` without the given secrets (every form, base64 included) and without the values of
    credential headers and secret-named keys.

    Example:
        >>> scrub("sent Authorization: Bearer abc.def and state=xyz123", [])
        'sent Authorization: Bearer [redacted] and state=[redacted]'
    """
    variants = [v for s in secrets if s for v in secret_variants(s)]
    if variants:
        text = redact(text, variants)
    text = _CREDENTIALS.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    return _SECRET_KEYS.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)


class RedactingLogger(logging.LoggerAdapter[logging.Logger]):
    """A :class:`logging.LoggerAdapter` over ``logger`` whose every line is scrubbed by :func:`scrub`.

    :meth:`remember` tells it a secret (the client does so for each token it sends); the last few are
    kept for scrubbing, so a line mentioning one, in any form, shows ``[redacted]`` instead
    (RFC 6750 §5.3: tokens must not leak through logs).

    Example:
        >>> log = RedactingLogger(logging.getLogger("example"))
        >>> log.remember("tok-0123456789")
    """

    def __init__(self, logger: logging.Logger) -> None:
        super().__init__(logger, None)
        self._secrets: deque[str] = deque(maxlen=_REMEMBERED)
        self._lock = threading.Lock()

    def remember(self, secret: str) -> None:
        """Adds ``secret`` to those scrubbed from every line (the last few are kept)."""
        with self._lock:
            if secret not in self._secrets:
                self._secrets.append(secret)

    def _scrub(self, text: str) -> str:
        with self._lock:
            secrets = list(self._secrets)
        return scrub(text, secrets)

    def log(self, level: int, msg: object, *args: object, **kwargs: Any) -> None:
        """Renders the line (``msg % args``), scrubs it, its ``extra`` values and any ``exc_info``, and
        hands it to the logger; does nothing below the logger's level."""
        if not self.isEnabledFor(level):
            return
        text = str(msg) % args if args else str(msg)
        exc_info = kwargs.pop("exc_info", None)
        if exc_info:
            # True (as logger.exception passes), an exception, or a sys.exc_info() tuple.
            error = sys.exc_info()[1] if exc_info is True else exc_info[1] if isinstance(exc_info, tuple) else exc_info
            if isinstance(error, BaseException):
                text += f" ({type(error).__name__}: {error})"
        kwargs.pop("stack_info", None)
        extra = kwargs.pop("extra", None)
        scrubbed_extra: MutableMapping[str, object] | None = None
        if isinstance(extra, Mapping):
            scrubbed_extra = {
                key: self._scrub(value) if isinstance(value, str) else value for key, value in extra.items()
            }
        # stacklevel 2: the line is attributed to the adapter's caller, not to this method (logging's own
        # frames, debug() and the like, are not counted).
        self.logger.log(level, self._scrub(text), extra=scrubbed_extra, stacklevel=kwargs.pop("stacklevel", 2))
