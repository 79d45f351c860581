"""When the client sends a request again: ``Retry-After``, exponential backoff with jitter, a cap.

The rules are the TypeScript client's (``packages/client/src/middleware/retry.ts``): an idempotent
request (RFC 9110 §9.2.2) answered 429 (RFC 6585 §4) or 5xx (but 501 and 505, which cannot succeed
later, RFC 9110 §15.6.2, §15.6.6), or whose connection failed, is sent again up to ``retries`` times.
The wait is the ``Retry-After`` delay (RFC 9110 §10.2.3) when the answer has one, else
``d/2 + random·d/2`` with ``d = min(max_delay, base_delay·2^n)``. A ``Retry-After`` longer than
``max_delay`` ends the retries: the answer is returned (raised as its error) at once.
"""

from __future__ import annotations

import math
import random as _random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime

from .errors import InvalidOptionsError

__all__ = ["IDEMPOTENT_METHODS", "RetryPolicy", "is_retryable_status", "parse_retry_after"]

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
"""Methods that are safe to send again (RFC 9110 §9.2.2). POST and PATCH are never retried."""


def is_retryable_status(status: int) -> bool:
    """429, and 5xx but 501 and 505 (which say the request can never succeed, RFC 9110 §15.6.2, §15.6.6)."""
    if status in (501, 505):
        return False
    return status == 429 or 500 <= status <= 599


def parse_retry_after(value: str | None, now: float) -> float | None:
    """A ``Retry-After`` value as a delay in seconds from ``now`` (seconds since the epoch), or ``None``.

    RFC 9110 §10.2.3: either delay-seconds (digits only) or an HTTP-date (§5.6.7: every form starts
    with a day name). A date in the past gives 0; anything else (empty, negative, ``"5s"``, a bare
    year) gives ``None``.

    Example:
        >>> parse_retry_after("120", 0.0)
        120.0
        >>> parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111757.0)
        20.0
        >>> parse_retry_after("soon", 0.0) is None
        True
    """
    text = (value or "").strip()
    if text.isascii() and text.isdigit():
        return float(int(text))
    # parsedate_to_datetime reads more than HTTP dates; an HTTP date starts with a day name.
    head = text.split(" ", 1)[0].rstrip(",")
    if not (text.isascii() and 3 <= len(head) <= 9 and head.isalpha()):
        return None
    try:
        at = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if at.tzinfo is None:
        # RFC 9110 §5.6.7: HTTP dates are in GMT; a recipient reads an obsolete form without zone as GMT.
        return None
    return max(0.0, at.timestamp() - now)


def _positive_seconds(option: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise InvalidOptionsError(option, "must be a positive, finite number of seconds")
    return float(value)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How the client sends a request again after 429, a retryable 5xx or a failed connection.

    Attributes:
        retries: how many times a request is sent again after the first attempt (so at most
            ``retries + 1`` attempts); ``0`` turns retries off. Default 2.
        base_delay: the backoff before the first retry, in seconds; it doubles on each retry. Default 0.3.
        max_delay: the cap on every wait, in seconds. A ``Retry-After`` longer than this ends the retries
            (the answer is raised at once as :class:`~tenant_integration.RateLimitError` or
            :class:`~tenant_integration.ServerError`). Default 10.
        random: a number in [0, 1) for the jitter (tests inject one). Default :func:`random.random`.
        now: the time in seconds since the epoch, to read a ``Retry-After`` date. Default :func:`time.time`.

    Only idempotent methods are retried (RFC 9110 §9.2.2), as in the TypeScript client; the wait is
    the ``Retry-After`` delay (RFC 9110 §10.2.3) or the jittered exponential backoff.

    Example:
        >>> RetryPolicy(retries=4, max_delay=30.0).retries
        4
    """

    retries: int = 2
    base_delay: float = 0.3
    max_delay: float = 10.0
    random: Callable[[], float] = field(default=_random.random, compare=False)
    now: Callable[[], float] = field(default=time.time, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise InvalidOptionsError("retries", "RetryPolicy.retries must be an integer of 0 or more")
        _positive_seconds("retries.base_delay", self.base_delay)
        _positive_seconds("retries.max_delay", self.max_delay)

    def delay(self, retry_index: int, retry_after: str | None) -> float | None:
        """The wait before retry number ``retry_index`` (0 for the first), or ``None`` to stop.

        ``retry_after`` is the answer's ``Retry-After`` header (``None`` for a failed connection or an
        answer without one). ``None`` is returned when the retries are used up or the server asks to
        wait longer than ``max_delay``.
        """
        if retry_index >= self.retries:
            return None
        asked = parse_retry_after(retry_after, self.now())
        if asked is not None:
            return asked if asked <= self.max_delay else None
        backoff = min(self.max_delay, self.base_delay * 2.0**retry_index)
        return backoff / 2 + self.random() * backoff / 2


def retry_policy(value: RetryPolicy | int | None) -> RetryPolicy:
    """The client's ``retries`` option as a policy: a :class:`RetryPolicy`, a number of retries, or
    ``None``/``0`` for none."""
    if value is None:
        return RetryPolicy(retries=0)
    if isinstance(value, RetryPolicy):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidOptionsError("retries", "give a RetryPolicy, a number of retries, or None for none")
    return RetryPolicy(retries=value)
