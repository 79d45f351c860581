"""PKCE (RFC 7636) and the state parameter (RFC 6749 §10.12)."""

from __future__ import annotations

import hmac
import re

import pytest

from tenant_integration import TokenManagerError, create_pkce_pair, derive_code_challenge
from tenant_integration.pkce import is_valid_verifier
from tenant_integration.state import create_state, states_equal

UNRESERVED = re.compile(r"[A-Za-z0-9\-._~]+")


def test_the_rfc_7636_appendix_b_verifier_gives_its_challenge() -> None:
    assert (
        derive_code_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    )


@pytest.mark.parametrize("length", [43, 64, 100, 128])
def test_a_pair_has_a_verifier_of_the_asked_length_in_the_unreserved_set_and_its_s256_challenge(length: int) -> None:
    pair = create_pkce_pair(length)
    assert len(pair.verifier) == length
    assert UNRESERVED.fullmatch(pair.verifier)
    assert (pair.method, pair.challenge) == ("S256", derive_code_challenge(pair.verifier))
    assert len(pair.challenge) == 43


def test_every_pair_is_new_and_its_repr_hides_the_verifier() -> None:
    first, second = create_pkce_pair(), create_pkce_pair()
    assert first.verifier != second.verifier
    assert first.verifier not in repr(first)
    assert first.challenge in repr(first)


@pytest.mark.parametrize("length", [42, 129, 0, 64.0, True])
def test_a_length_outside_43_to_128_is_invalid_verifier(length: object) -> None:
    with pytest.raises(TokenManagerError) as caught:
        create_pkce_pair(length)  # type: ignore[arg-type]
    assert caught.value.code == "INVALID_VERIFIER"


@pytest.mark.parametrize(
    "verifier",
    ["a" * 42, "a" * 129, "a" * 42 + "+", "a" * 42 + "/", "a" * 42 + "=", "a" * 42 + " ", "é" * 43, ""],
)
def test_a_bad_verifier_is_refused_with_a_typed_error_that_does_not_contain_it(verifier: str) -> None:
    assert not is_valid_verifier(verifier)
    with pytest.raises(TokenManagerError) as caught:
        derive_code_challenge(verifier)
    assert caught.value.code == "INVALID_VERIFIER"
    assert verifier not in str(caught.value) or verifier == ""


def test_every_unreserved_character_is_accepted_at_both_ends_of_the_length_range() -> None:
    assert is_valid_verifier("-._~" + "A" * 39)
    assert derive_code_challenge("~" * 128)


def test_a_state_is_256_random_bits_as_43_base64url_characters_never_repeated() -> None:
    states = {create_state() for _ in range(1000)}
    assert len(states) == 1000
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{43}", s) for s in states)


def test_states_are_compared_exactly_with_hmac_compare_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    stored = create_state()
    assert states_equal(stored, stored)
    assert not states_equal(stored[:-1] + ("A" if stored[-1] != "A" else "B"), stored)
    assert not states_equal(stored[:-1], stored)
    assert not states_equal("", stored)
    assert not states_equal("é", "e")
    assert len(calls) == 5
