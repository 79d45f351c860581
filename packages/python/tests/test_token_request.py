"""Token endpoint requests without I/O: what each request carries, what each answer means, when a
failed refresh is sent again. No manager, no transport: the functions both managers call."""

from __future__ import annotations

import json
import logging

import httpx
import pytest

from tenant_integration._refresh import retry_wait
from tenant_integration._token_record import TokenRecord
from tenant_integration._token_request import (
    process_answer,
    process_token_response,
    refresh_request,
    revoke_request,
    transport_failure,
)
from tenant_integration.token_errors import OAuthResponseError, TokenManagerError, TransientError

LOG = logging.getLogger("test_token_request")
STORED = TokenRecord(
    access_token="at-old-QwErTy",
    refresh_token="rt-old-QwErTy",
    token_type="Bearer",
    expires_in=900,
    scope="profile:read",
    received_at=1_000,
    id="r1",
    session="s1",
    seq=4,
)


def test_a_refresh_request_is_json_with_the_refresh_token_and_client_id_and_names_both_tokens_secret() -> None:
    request = refresh_request("demo", STORED)
    assert (request.path, request.headers["Content-Type"]) == ("/oauth/token", "application/json")
    assert json.loads(request.body) == {
        "grant_type": "refresh_token",
        "refresh_token": "rt-old-QwErTy",
        "client_id": "demo",
    }
    assert set(request.secrets) == {"at-old-QwErTy", "rt-old-QwErTy"}
    assert "QwErTy" not in repr(request)


def test_a_revocation_is_a_form_with_the_access_token_hint_and_client_id() -> None:
    request = revoke_request("demo", "at-old-QwErTy")
    assert (request.path, request.headers["Content-Type"]) == ("/oauth/revoke", "application/x-www-form-urlencoded")
    assert request.body == "token=at-old-QwErTy&token_type_hint=access_token&client_id=demo"


@pytest.mark.parametrize(("status", "sent"), [(429, False), (503, False), (500, True), (502, True)])
def test_429_and_503_were_not_handled_by_the_tenant_and_other_5xx_may_have_been(status: int, sent: bool) -> None:
    answer = httpx.Response(status, headers={"Retry-After": "2"})
    with pytest.raises(TransientError) as caught:
        process_answer(refresh_request("demo", STORED), answer, [], 1, now=0.0)
    assert (caught.value.status, caught.value.sent, caught.value.retry_after) == (status, sent, 2.0)


def test_an_oauth_error_that_echoes_the_refresh_token_carries_it_redacted() -> None:
    answer = httpx.Response(400, json={"error": "invalid_grant", "error_description": "rt-old-QwErTy is revoked"})
    with pytest.raises(OAuthResponseError) as caught:
        process_answer(refresh_request("demo", STORED), answer, ["rt-old-QwErTy"], 1, now=0.0)
    assert caught.value.error == "invalid_grant"
    assert "QwErTy" not in str(caught.value)
    assert "QwErTy" not in (caught.value.error_description or "")


def test_an_error_answer_without_an_oauth_body_is_an_invalid_response() -> None:
    with pytest.raises(TokenManagerError, match="HTTP 404 without an OAuth error body") as caught:
        process_answer(refresh_request("demo", STORED), httpx.Response(404, text="<html>"), [], 1, now=0.0)
    assert caught.value.code == "INVALID_RESPONSE"


def test_a_refresh_that_did_not_rotate_keeps_the_refresh_token_and_is_the_next_record_of_the_session() -> None:
    text = json.dumps({"access_token": "at-new", "token_type": "Bearer", "expires_in": 600})
    record = process_token_response(text, STORED, now_ms=2_000.4)
    assert (record.refresh_token, record.session, record.seq, record.received_at) == ("rt-old-QwErTy", "s1", 5, 2_000)
    assert record.id not in ("r1", "s1")


def test_a_sign_in_starts_a_session_named_by_its_own_record() -> None:
    text = json.dumps({"access_token": "at", "refresh_token": "rt", "token_type": "Bearer", "expires_in": 600})
    record = process_token_response(text, None, now_ms=1.0)
    assert (record.session, record.seq) == (record.id, 0)


def test_only_a_request_that_never_connected_may_be_sent_again() -> None:
    refused = transport_failure(httpx.ConnectError("refused"), [], 1)
    timed_out = transport_failure(httpx.ReadTimeout("no answer"), [], 1)
    assert (refused.sent, timed_out.sent) == (False, True)
    assert retry_wait(refused, 1, attempts=3, retry_delay=0.3, log=LOG) == pytest.approx(0.3)
    assert retry_wait(refused, 2, attempts=3, retry_delay=0.3, log=LOG) == pytest.approx(0.6)
    assert retry_wait(refused, 3, attempts=3, retry_delay=0.3, log=LOG) is None
    assert retry_wait(timed_out, 1, attempts=3, retry_delay=0.3, log=LOG) is None


def test_retry_after_is_waited_instead_of_the_backoff_unless_it_is_past_the_cap() -> None:
    assert retry_wait(TransientError(429, 1, sent=False, retry_after=1.0), 1, attempts=3, retry_delay=5, log=LOG) == 1.0
    assert (
        retry_wait(TransientError(429, 1, sent=False, retry_after=30.0), 1, attempts=3, retry_delay=0, log=LOG) is None
    )
