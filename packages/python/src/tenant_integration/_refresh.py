"""The refresh's decisions without I/O (the flow that does the I/O is the manager's ``_refresh``).

- :func:`needs_refresh`: the stored access token is within the leeway of expiry, or was refused;
- :func:`retry_wait`: whether, and after how long, a refresh that failed is sent again;
- :data:`UNSAVED_RETRY_MS`: how long tokens whose write failed are served before the write is tried again.

The TypeScript kit's counterpart is ``packages/token-manager/src/refresh.ts``. The cross-process steps
(the lock, the refresh intent) are in :mod:`._lock` and :mod:`._refresh_intent`.

See RFC 6749 §6; RFC 9700 §4.14.2.
"""

from __future__ import annotations

from ._session_id import Log
from ._token_record import TokenRecord, is_fresh
from .token_errors import TransientError

__all__ = ["MAX_RETRY_DELAY", "UNSAVED_RETRY_MS", "needs_refresh", "retry_wait"]

# After a failed write of new tokens, how long they are served from memory before the write is tried
# (and a failure reported) again: a storage that is down costs one attempt a second, not one per call.
UNSAVED_RETRY_MS = 1000.0
# The longest wait before a refresh is sent again (the backoff's cap); a longer Retry-After is not waited.
MAX_RETRY_DELAY = 10.0


def needs_refresh(stored: TokenRecord, rejected: str | None, now_ms: float, leeway_ms: float) -> bool:
    """Whether ``stored``'s access token must be replaced: not fresh (within ``leeway_ms`` of expiry,
    see :func:`~._token_record.is_fresh`) or the one an API refused (``rejected``)."""
    return not is_fresh(stored, now_ms, leeway_ms) or stored.access_token == rejected


def retry_wait(error: TransientError, attempt: int, *, attempts: int, retry_delay: float, log: Log) -> float | None:
    """Seconds to wait before refresh attempt ``attempt + 1``, or ``None`` when the refresh is not
    retried: only a request that cannot have reached the tenant is sent again (the tenant may otherwise
    have rotated the refresh token, and sending it again would end the session), at most ``attempts``
    times, after ``Retry-After`` when the tenant said (RFC 9110 §10.2.3), else after a doubling backoff
    from ``retry_delay`` capped at :data:`MAX_RETRY_DELAY`."""
    if error.sent or attempt >= attempts:
        return None
    why = "no connection" if error.status is None else f"HTTP {error.status}"
    delay: float
    if error.retry_after is not None:
        # As the client's RetryPolicy honours it: a wait past the cap ends the retries at once, the
        # error saying when to try again (its retry_after).
        if error.retry_after > MAX_RETRY_DELAY:
            log.warning(
                "Refresh attempt %d failed (%s, Retry-After %g s, more than %g s); not retried",
                attempt,
                why,
                error.retry_after,
                MAX_RETRY_DELAY,
            )
            return None
        delay = error.retry_after
    else:
        delay = min(retry_delay * 2.0 ** (attempt - 1), MAX_RETRY_DELAY)
    log.warning("Refresh attempt %d failed (%s); retrying in %dms", attempt, why, round(delay * 1000))
    return delay
