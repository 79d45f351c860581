"""Secrets are removed from printed text in every form a token takes."""

from __future__ import annotations

from tenant_integration._redact import redact

SECRET = "rt/Ab+cd ef~gh"


def test_removes_the_raw_percent_encoded_form_plus_and_json_forms() -> None:
    printed = " | ".join(
        [
            SECRET,
            "rt%2FAb%2Bcd%20ef~gh",
            "rt%2fAb%2bcd%20ef~gh",
            "rt%2FAb%2Bcd+ef~gh",
            '"rt\\/Ab+cd ef~gh"'.replace("\\/", "/"),
        ]
    )
    out = redact(printed, [SECRET])
    assert "Ab" not in out
    assert out.count("[redacted]") == 5


def test_leaves_text_without_secrets_and_ignores_absent_ones() -> None:
    assert redact("nothing to hide", [None, "", "another-secret"]) == "nothing to hide"
