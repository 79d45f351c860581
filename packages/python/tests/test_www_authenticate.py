"""The WWW-Authenticate parser: challenges and parameters as RFC 9110 §11.6.1 and RFC 6750 §3 write them."""

from __future__ import annotations

import pytest

from tenant_integration._www_authenticate import Challenge, bearer_challenge, parse_challenges


def test_reads_the_bearer_challenge_of_rfc_6750_section_3_example() -> None:
    header = 'Bearer realm="example", error="invalid_token", error_description="The access token expired"'
    assert bearer_challenge(header) == {
        "realm": "example",
        "error": "invalid_token",
        "error_description": "The access token expired",
    }


def test_reads_the_scope_of_an_insufficient_scope_challenge_with_several_names() -> None:
    header = 'Bearer error="insufficient_scope", scope="profile:read users:read"'
    assert bearer_challenge(header) == {"error": "insufficient_scope", "scope": "profile:read users:read"}


def test_a_comma_inside_a_quoted_string_does_not_split_the_challenge() -> None:
    assert parse_challenges('Basic realm="a, b", Bearer error="invalid_token"') == [
        Challenge("Basic", {"realm": "a, b"}),
        Challenge("Bearer", {"error": "invalid_token"}),
    ]


def test_unescapes_quoted_pairs_in_quoted_strings() -> None:
    challenge = bearer_challenge(r'Bearer realm="a \"quoted\" name", error_description="back\\slash"')
    assert challenge == {"realm": 'a "quoted" name', "error_description": "back\\slash"}


def test_reads_token_values_and_whitespace_around_the_equals_sign() -> None:
    assert bearer_challenge('Bearer error = insufficient_scope ,scope=\t"a b"') == {
        "error": "insufficient_scope",
        "scope": "a b",
    }


def test_the_scheme_is_case_insensitive_and_parameter_names_are_lower_cased() -> None:
    assert bearer_challenge('bEaReR Error="invalid_token"') == {"error": "invalid_token"}


def test_finds_the_bearer_challenge_after_another_scheme_with_a_token68() -> None:
    challenges = parse_challenges('Negotiate YWJjZA==, Bearer realm="api", scope="profile:read"')
    assert challenges == [
        Challenge("Negotiate", {}, token68="YWJjZA=="),
        Challenge("Bearer", {"realm": "api", "scope": "profile:read"}),
    ]


def test_a_later_challenge_parameters_do_not_leak_into_the_bearer_one() -> None:
    assert bearer_challenge('Bearer realm="api", Basic realm="other", error="x"') == {"realm": "api"}


def test_a_repeated_parameter_keeps_its_first_value() -> None:
    assert bearer_challenge('Bearer error="invalid_token", error="insufficient_scope"') == {"error": "invalid_token"}


def test_a_bearer_challenge_without_parameters_has_none() -> None:
    assert bearer_challenge("Bearer") == {}
    assert bearer_challenge('Basic realm="x", Bearer') == {}


def test_no_bearer_challenge_gives_none() -> None:
    assert bearer_challenge('Basic realm="x"') is None
    assert bearer_challenge("") is None
    assert bearer_challenge(None) is None


def test_an_unterminated_quoted_string_runs_to_the_end() -> None:
    assert bearer_challenge('Bearer error_description="cut short') == {"error_description": "cut short"}


@pytest.mark.parametrize(
    "header",
    ['"', "=", ",,,", 'Bearer ="x"', "Bearer realm=", "\u00e9 Bearer", 'Bearer scope="a', "Bearer a=b=c", "\\"],
)
def test_malformed_input_never_raises(header: str) -> None:
    parse_challenges(header)
    bearer_challenge(header)
