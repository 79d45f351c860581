"""Retry-After (RFC 9110 §10.2.3) and the backoff policy, as the TypeScript client computes them."""

from __future__ import annotations

import pytest

from tenant_integration import InvalidOptionsError, RetryPolicy
from tenant_integration._retry import is_retryable_status, parse_retry_after, retry_policy

# Sun, 06 Nov 1994 08:49:37 GMT (RFC 9110 §5.6.7's example) as seconds since the epoch.
EXAMPLE_DATE = 784111777.0


def test_reads_delay_seconds() -> None:
    assert parse_retry_after("120", 0.0) == 120.0
    assert parse_retry_after(" 0 ", 0.0) == 0.0


@pytest.mark.parametrize(
    "value",
    ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994 GMT"],
)
def test_reads_the_http_date_forms_as_seconds_from_now(value: str) -> None:
    assert parse_retry_after(value, EXAMPLE_DATE - 20) == pytest.approx(20.0)


def test_a_date_in_the_past_means_now() -> None:
    assert parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", EXAMPLE_DATE + 3600) == 0.0


@pytest.mark.parametrize("value", [None, "", "-5", "1.5", "5s", "soon", "1e3", "Sun, 99 Nov 1994 99:99:99 GMT", "٣"])
def test_anything_else_is_unreadable(value: str | None) -> None:
    assert parse_retry_after(value, 0.0) is None


def test_retryable_statuses_are_429_and_5xx_but_501_and_505() -> None:
    assert [s for s in (400, 401, 404, 429, 500, 501, 502, 503, 504, 505, 599) if is_retryable_status(s)] == [
        429,
        500,
        502,
        503,
        504,
        599,
    ]


def test_the_backoff_doubles_with_jitter_between_half_and_all_of_it() -> None:
    low = RetryPolicy(retries=5, base_delay=0.5, max_delay=100.0, random=lambda: 0.0)
    middle = RetryPolicy(retries=5, base_delay=0.5, max_delay=100.0, random=lambda: 0.5)
    assert [low.delay(i, None) for i in range(4)] == [0.25, 0.5, 1.0, 2.0]
    assert [middle.delay(i, None) for i in range(4)] == [0.375, 0.75, 1.5, 3.0]


def test_the_backoff_is_capped_at_max_delay() -> None:
    policy = RetryPolicy(retries=10, base_delay=1.0, max_delay=4.0, random=lambda: 0.5)
    assert [policy.delay(i, None) for i in range(2, 7)] == [3.0, 3.0, 3.0, 3.0, 3.0]


def test_retry_after_replaces_the_backoff() -> None:
    policy = RetryPolicy(retries=2, random=lambda: 0.5, now=lambda: EXAMPLE_DATE - 7)
    assert policy.delay(0, "4") == 4.0
    assert policy.delay(1, "Sun, 06 Nov 1994 08:49:37 GMT") == pytest.approx(7.0)


def test_a_retry_after_longer_than_the_cap_stops_the_retries() -> None:
    assert RetryPolicy(retries=3, max_delay=10.0).delay(0, "11") is None


def test_no_delay_once_the_retries_are_used_up() -> None:
    policy = RetryPolicy(retries=2)
    assert policy.delay(1, "1") == 1.0
    assert policy.delay(2, "1") is None
    assert RetryPolicy(retries=0).delay(0, None) is None


def test_the_option_takes_a_policy_a_number_or_none() -> None:
    policy = RetryPolicy(retries=4)
    assert retry_policy(policy) is policy
    assert retry_policy(3).retries == 3
    assert retry_policy(None).retries == 0


@pytest.mark.parametrize(
    ("make", "option"),
    [
        (lambda: RetryPolicy(retries=-1), "retries"),
        (lambda: RetryPolicy(base_delay=0), "retries.base_delay"),
        (lambda: RetryPolicy(max_delay=float("inf")), "retries.max_delay"),
        (lambda: retry_policy(True), "retries"),
        (lambda: retry_policy("2"), "retries"),  # type: ignore[arg-type]
    ],
)
def test_a_bad_policy_is_an_invalid_options_error_naming_the_option(make: object, option: str) -> None:
    with pytest.raises(InvalidOptionsError) as caught:
        make()  # type: ignore[operator]
    assert caught.value.option == option
