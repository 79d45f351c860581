"""The token manager's promises, on threads, against an in-memory tenant behind httpx.MockTransport."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from fake_tenant import BASE_URL, CLIENT_ID, LIFETIME, REDIRECT_URI, Clock, FakeTenant
from tenant_integration import (
    InvalidOptionsError,
    MemoryStorage,
    OAuthResponseError,
    SessionEndedError,
    SessionInfo,
    SignedOut,
    TokenManager,
    TokenManagerError,
    TransientError,
)
from tenant_integration._names import pending_name
from tenant_integration.pkce import derive_code_challenge
from tenant_integration.storage.file import FileStorage

TOKENS = f"tenant-integration:{BASE_URL}:{CLIENT_ID}:tokens"


def pending_of(state: str) -> str:
    """The storage name of the pending sign-in of ``state`` (spec/token-store: by the SHA-256 of the state)."""
    return pending_name(BASE_URL, CLIENT_ID, state)


PAST_EXPIRY = LIFETIME + 1


def make(tenant: FakeTenant, clock: Clock, **options: Any) -> TokenManager:
    return TokenManager(
        **{
            "base_url": BASE_URL,
            "client_id": CLIENT_ID,
            "redirect_uri": REDIRECT_URI,
            "scopes": ["profile:read"],
            "now": clock,
            "transport": tenant.transport,
            "retry_delay": 0,
            **options,
        }
    )


def signed_in(tenant: FakeTenant, clock: Clock, **options: Any) -> TokenManager:
    manager = make(tenant, clock, **options)
    manager.complete_authorization(tenant.approve(manager.begin_authorization().url))
    return manager


def stored(storage: MemoryStorage) -> dict[str, Any]:
    raw = storage.get(TOKENS)
    assert raw is not None
    record: dict[str, Any] = json.loads(raw)
    return record


@pytest.fixture
def tenant() -> FakeTenant:
    return FakeTenant()


@pytest.fixture
def clock() -> Clock:
    return Clock()


# -- options ---------------------------------------------------------------------------------------


def test_a_base_url_with_a_path_is_refused_with_a_reason_saying_to_give_the_origin(clock: Clock) -> None:
    with pytest.raises(InvalidOptionsError) as caught:
        TokenManager(f"{BASE_URL}/api/v1", CLIENT_ID, REDIRECT_URI, ["profile:read"], now=clock)
    assert caught.value.code == "INVALID_OPTIONS"
    assert "'/api/v1'" in str(caught.value)
    assert "origin" in str(caught.value)


@pytest.mark.parametrize(
    ("option", "value", "reason"),
    [
        ("base_url", "http://acme.tenant.test", "http is allowed only to a loopback host"),
        ("base_url", f"{BASE_URL}?x=1", "query"),
        ("client_id", "", "client identifier"),
        ("redirect_uri", "/callback", "absolute URL"),
        ("redirect_uri", f"{REDIRECT_URI}#x", "fragment"),
        ("scopes", [], "at least one scope"),
        ("scopes", "profile:read", "a list of scope names"),
        ("scopes", ["profile:read", "profile:write"], "'profile:write' is not a scope of the service"),
        ("refresh_leeway", -1, "finite number"),
        ("timeout", 0, "finite number"),
    ],
)
def test_a_bad_option_is_refused_at_construction_naming_the_option_and_why(
    option: str, value: object, reason: str, clock: Clock
) -> None:
    options: dict[str, Any] = {
        "base_url": BASE_URL,
        "client_id": CLIENT_ID,
        "redirect_uri": REDIRECT_URI,
        "scopes": ["profile:read"],
        "now": clock,
        option: value,
    }
    with pytest.raises(InvalidOptionsError) as caught:
        TokenManager(**options)
    assert caught.value.option == option
    assert reason in str(caught.value)


# -- sign-in ---------------------------------------------------------------------------------------


def test_the_authorize_url_carries_the_seven_parameters_on_the_tenants_origin(tenant: FakeTenant, clock: Clock) -> None:
    manager = make(tenant, clock)
    request = manager.begin_authorization()
    assert request.url.startswith(f"{BASE_URL}/oauth/authorize?")
    query = {k: v[0] for k, v in parse_qs(urlsplit(request.url).query).items()}
    assert set(query) == {
        "response_type",
        "client_id",
        "redirect_uri",
        "scope",
        "state",
        "code_challenge",
        "code_challenge_method",
    }
    assert (query["response_type"], query["client_id"], query["redirect_uri"]) == ("code", CLIENT_ID, REDIRECT_URI)
    assert (query["scope"], query["code_challenge_method"], query["state"]) == ("profile:read", "S256", request.state)
    pending = json.loads(manager._pending_storage.get(pending_of(request.state)) or "")
    assert set(pending) == {"state", "verifier", "expiresAt"}
    assert pending["state"] == request.state
    assert derive_code_challenge(pending["verifier"]) == query["code_challenge"]
    assert pending["expiresAt"] == round((clock() + 600) * 1000)
    assert request.expires_at == clock() + 600
    assert "+" not in request.url


def test_every_sign_in_gets_a_new_state_and_verifier(tenant: FakeTenant, clock: Clock) -> None:
    manager = make(tenant, clock)
    first, second = manager.begin_authorization(), manager.begin_authorization()
    assert first.state != second.state
    assert (
        parse_qs(urlsplit(first.url).query)["code_challenge"] != parse_qs(urlsplit(second.url).query)["code_challenge"]
    )


def test_a_sign_in_may_ask_for_its_own_scopes_checked_against_the_contracts_list(
    tenant: FakeTenant, clock: Clock
) -> None:
    manager = make(tenant, clock)
    request = manager.begin_authorization(scopes=["tickets:read", "contacts:write"])
    assert parse_qs(urlsplit(request.url).query)["scope"] == ["tickets:read contacts:write"]
    assert "scope=tickets%3Aread%20contacts%3Awrite" in request.url
    assert request.scopes == ("tickets:read", "contacts:write")
    with pytest.raises(InvalidOptionsError, match="'tickets:delete' is not a scope"):
        manager.begin_authorization(scopes=["tickets:delete"])
    # The refused request replaced nothing: the earlier pending sign-in still completes.
    manager.complete_authorization(tenant.approve(request.url))
    assert manager.is_signed_in()


def test_the_code_is_exchanged_with_a_json_body_holding_the_verifier_and_no_secret(
    tenant: FakeTenant, clock: Clock
) -> None:
    manager = make(tenant, clock)
    request = manager.begin_authorization()
    session = manager.complete_authorization(tenant.approve(request.url))
    [exchange] = tenant.requests
    assert (exchange.path, exchange.content_type) == ("/oauth/token", "application/json")
    assert set(exchange.body) == {"grant_type", "client_id", "redirect_uri", "code", "code_verifier"}
    assert exchange.body["redirect_uri"] == REDIRECT_URI
    assert session == SessionInfo(expires_at=clock() + LIFETIME, scope="profile:read")
    assert manager.get_access_token() == "at-2-QwErTyUiOp"


def test_a_state_no_sign_in_was_begun_with_is_refused_before_any_request_and_takes_nothing(
    tenant: FakeTenant, clock: Clock
) -> None:
    manager = make(tenant, clock)
    callback = tenant.approve(manager.begin_authorization().url)
    state = parse_qs(urlsplit(callback).query)["state"][0]
    forged = callback.replace(state, state[:-1] + ("A" if state[-1] != "A" else "B"))
    with pytest.raises(TokenManagerError) as caught:
        manager.complete_authorization(forged)
    assert caught.value.code == "NO_PENDING_SIGN_IN"
    assert tenant.requests == []
    manager.complete_authorization(callback)
    assert manager.is_signed_in()


def test_a_record_under_the_states_key_with_another_state_is_a_mismatch_and_is_used_up(
    tenant: FakeTenant, clock: Clock
) -> None:
    storage = MemoryStorage()
    manager = make(tenant, clock, storage=storage)
    request = manager.begin_authorization()
    callback = tenant.approve(request.url)
    record = json.loads(storage.get(pending_of(request.state)) or "")
    storage.set(pending_of(request.state), json.dumps({**record, "state": "B" * 43}, separators=(",", ":")))
    with pytest.raises(TokenManagerError) as caught:
        manager.complete_authorization(callback)
    assert caught.value.code == "STATE_MISMATCH"
    assert storage.get(pending_of(request.state)) is None
    assert tenant.requests == []


def test_any_number_of_sign_ins_may_be_pending_and_each_completes_once_in_any_order(
    tenant: FakeTenant, clock: Clock
) -> None:
    manager = make(tenant, clock)
    callbacks = [tenant.approve(manager.begin_authorization().url) for _ in range(3)]
    for callback in reversed(callbacks):
        manager.complete_authorization(callback)
    assert len(tenant.grants("authorization_code")) == 3
    for callback in callbacks:
        with pytest.raises(TokenManagerError) as again:
            manager.complete_authorization(callback)
        assert again.value.code == "NO_PENDING_SIGN_IN"
    assert len(tenant.grants("authorization_code")) == 3


def test_a_callback_without_state_or_code_or_after_the_pending_lifetime_is_refused_without_a_request(
    tenant: FakeTenant, clock: Clock
) -> None:
    manager = make(tenant, clock)
    callback = tenant.approve(manager.begin_authorization().url)
    with pytest.raises(TokenManagerError) as missing:
        manager.complete_authorization(callback.split("&state=")[0])
    assert missing.value.code == "STATE_MISSING"

    callback = tenant.approve(manager.begin_authorization().url)
    clock.advance(601)
    with pytest.raises(TokenManagerError) as expired:
        manager.complete_authorization(callback)
    assert expired.value.code == "STATE_EXPIRED"

    request = manager.begin_authorization()
    with pytest.raises(TokenManagerError) as no_code:
        manager.complete_authorization(f"{REDIRECT_URI}?state={request.state}")
    assert no_code.value.code == "INVALID_CALLBACK"
    assert tenant.requests == []


@pytest.mark.parametrize(
    "partial",
    ["?code=abc&state=xyz", "code=abc&state=xyz", "/callback?code=abc&state=xyz", "127.0.0.1:53682/callback?code=a"],
)
def test_a_callback_that_is_not_a_full_url_is_refused_before_the_pending_sign_in_is_taken(
    partial: str, tenant: FakeTenant, clock: Clock
) -> None:
    manager = make(tenant, clock)
    request = manager.begin_authorization()
    with pytest.raises(TokenManagerError) as caught:
        manager.complete_authorization(partial)
    assert caught.value.code == "INVALID_CALLBACK"
    assert "full URL" in str(caught.value)
    # The pending sign-in is intact: the whole callback URL still signs in.
    manager.complete_authorization(tenant.approve(request.url))
    assert manager.is_signed_in()


def test_a_callback_repeating_its_state_is_refused_before_the_pending_sign_in_is_taken(
    tenant: FakeTenant, clock: Clock
) -> None:
    manager = make(tenant, clock)
    callback = tenant.approve(manager.begin_authorization().url)
    with pytest.raises(TokenManagerError) as caught:
        manager.complete_authorization(callback + "&state=again")
    assert caught.value.code == "INVALID_CALLBACK"
    manager.complete_authorization(callback)
    assert tenant.grants("authorization_code") != []


@pytest.mark.parametrize(
    "wrong",
    [
        lambda c: c.replace("53682", "53683"),
        lambda c: c.replace("/callback", "/other"),
        lambda c: c.replace("http://", "https://"),
        lambda c: c + "&code=again",
        lambda c: c + "&error=a&error=b",
    ],
    ids=["port", "path", "scheme", "code repeated", "error repeated"],
)
def test_a_callback_at_another_address_or_repeating_a_parameter_is_refused_and_uses_up_its_sign_in(
    wrong: Any, tenant: FakeTenant, clock: Clock
) -> None:
    manager = make(tenant, clock)
    callback = tenant.approve(manager.begin_authorization().url)
    with pytest.raises(TokenManagerError) as caught:
        manager.complete_authorization(wrong(callback))
    assert caught.value.code == "INVALID_CALLBACK"
    with pytest.raises(TokenManagerError) as again:
        manager.complete_authorization(callback)
    assert again.value.code == "NO_PENDING_SIGN_IN"
    assert tenant.requests == []


def test_a_callback_whose_address_differs_only_in_normal_form_is_accepted(tenant: FakeTenant, clock: Clock) -> None:
    manager = make(tenant, clock, redirect_uri="https://App.Example.org:443/cb")
    request = manager.begin_authorization()
    callback = tenant.approve(request.url, redirect_uri="https://app.example.org/cb")
    manager.complete_authorization(callback)
    assert tenant.grants("authorization_code")[0].body["redirect_uri"] == "https://App.Example.org:443/cb"


def test_an_error_from_the_authorization_response_is_typed_and_sends_nothing(tenant: FakeTenant, clock: Clock) -> None:
    manager = make(tenant, clock)
    callback = tenant.deny(manager.begin_authorization().url)
    with pytest.raises(TokenManagerError) as caught:
        manager.complete_authorization(callback)
    assert caught.value.code == "AUTHORIZATION_DENIED"
    assert (caught.value.error, caught.value.error_description) == ("access_denied", "no")
    assert "access_denied" in str(caught.value)
    assert tenant.requests == []


def test_a_refused_exchange_is_an_oauth_error_and_stores_nothing(tenant: FakeTenant, clock: Clock) -> None:
    manager = make(tenant, clock)
    callback = tenant.approve(manager.begin_authorization().url)
    tenant.script.append(lambda _: httpx.Response(400, json={"error": "invalid_grant", "error_description": "used"}))
    with pytest.raises(OAuthResponseError) as caught:
        manager.complete_authorization(callback)
    assert (caught.value.code, caught.value.status, caught.value.error) == ("OAUTH_ERROR", 400, "invalid_grant")
    assert not manager.is_signed_in()


def test_an_exchange_that_gets_no_answer_or_a_5xx_is_transient_and_the_single_use_code_is_not_sent_again(
    tenant: FakeTenant, clock: Clock
) -> None:
    manager = make(tenant, clock)
    tenant.script.append(lambda request: (_ for _ in ()).throw(httpx.ConnectError("refused", request=request)))
    with pytest.raises(TransientError) as caught:
        manager.complete_authorization(tenant.approve(manager.begin_authorization().url))
    assert (caught.value.status, caught.value.sent) == (None, False)
    tenant.script.append(lambda _: httpx.Response(503))
    with pytest.raises(TransientError) as unavailable:
        manager.complete_authorization(tenant.approve(manager.begin_authorization().url))
    assert unavailable.value.status == 503
    assert len(tenant.grants("authorization_code")) == 2


@pytest.mark.parametrize(
    ("answer", "field"),
    [
        (httpx.Response(200, text="<html>proxy</html>"), "access_token"),
        (httpx.Response(200, json={"access_token": "a", "token_type": "Bearer", "expires_in": 900}), "refresh_token"),
        (
            httpx.Response(200, json={"access_token": "a", "refresh_token": "r", "token_type": "mac", "expires_in": 9}),
            "token_type",
        ),
        (
            httpx.Response(
                200, json={"access_token": "a", "refresh_token": "r", "token_type": "Bearer", "expires_in": 0}
            ),
            "expires_in",
        ),
        (httpx.Response(302, headers={"Location": "https://elsewhere.test/"}), "HTTP 302"),
    ],
)
def test_an_answer_that_is_not_a_valid_token_response_is_invalid_response_naming_the_field(
    answer: httpx.Response, field: str, tenant: FakeTenant, clock: Clock
) -> None:
    manager = make(tenant, clock)
    tenant.script.append(lambda _: answer)
    with pytest.raises(TokenManagerError) as caught:
        manager.complete_authorization(tenant.approve(manager.begin_authorization().url))
    assert caught.value.code == "INVALID_RESPONSE"
    assert field in str(caught.value)
    assert not manager.is_signed_in()


def test_the_pending_sign_in_may_live_in_a_storage_of_its_own(tenant: FakeTenant, clock: Clock) -> None:
    tokens, pending = MemoryStorage(), MemoryStorage()
    manager = make(tenant, clock, storage=tokens, pending_storage=pending)
    request = manager.begin_authorization()
    assert pending.get(pending_of(request.state)) is not None
    assert tokens.get(pending_of(request.state)) is None
    manager.complete_authorization(tenant.approve(request.url))
    assert pending.get(pending_of(request.state)) is None
    assert tokens.get(TOKENS) is not None


# -- records ---------------------------------------------------------------------------------------


def test_the_stored_record_is_the_typescript_managers_record(tenant: FakeTenant, clock: Clock) -> None:
    storage = MemoryStorage()
    manager = signed_in(tenant, clock, storage=storage)
    first = stored(storage)
    assert list(first) == [
        "access_token",
        "refresh_token",
        "token_type",
        "expires_in",
        "scope",
        "received_at",
        "id",
        "session",
        "seq",
    ]
    assert first["received_at"] == round(clock() * 1000)
    assert (first["session"], first["seq"]) == (first["id"], 0)
    clock.advance(PAST_EXPIRY)
    manager.get_access_token()
    second = stored(storage)
    assert (second["session"], second["seq"]) == (first["id"], 1)
    assert second["id"] != first["id"]
    raw = storage.get(TOKENS)
    assert raw == json.dumps(second, separators=(",", ":"))


def test_a_record_written_by_the_typescript_manager_is_read_as_is(tenant: FakeTenant, clock: Clock) -> None:
    storage = MemoryStorage()
    # A record as JSON.stringify writes it in token-manager.ts, without scope (the tenant sent none).
    storage.set(
        TOKENS,
        '{"access_token":"ts-at","refresh_token":"ts-rt","token_type":"Bearer","expires_in":900,'
        f'"received_at":{round(clock() * 1000)},"id":"abc","session":"abc","seq":3}}',
    )
    manager = make(tenant, clock, storage=storage)
    assert manager.get_access_token() == "ts-at"
    assert manager.get_session() == SessionInfo(expires_at=clock() + 900, scope=None)
    assert tenant.requests == []


def test_an_unreadable_record_is_no_session(tenant: FakeTenant, clock: Clock) -> None:
    storage = MemoryStorage()
    storage.set(TOKENS, '{"access_token":"x"}')
    manager = make(tenant, clock, storage=storage)
    assert not manager.is_signed_in()
    with pytest.raises(TokenManagerError) as caught:
        manager.get_access_token()
    assert caught.value.code == "NOT_SIGNED_IN"


def test_a_corrupt_token_file_is_not_signed_in_with_the_storages_reason_as_cause(
    tenant: FakeTenant, clock: Clock, tmp_path: Path
) -> None:
    path = tmp_path / "tokens.json"
    path.write_text("{not json")
    path.chmod(0o600)
    manager = make(tenant, clock, storage=FileStorage(path))
    with pytest.raises(TokenManagerError) as caught:
        manager.get_access_token()
    assert caught.value.code == "NOT_SIGNED_IN"
    assert getattr(caught.value.cause, "code", None) == "FILE_CORRUPT"


# -- refresh ---------------------------------------------------------------------------------------


def test_a_fresh_token_is_handed_out_with_no_request_and_a_new_manager_reads_it_from_storage(
    tenant: FakeTenant, clock: Clock
) -> None:
    storage = MemoryStorage()
    manager = signed_in(tenant, clock, storage=storage)
    token = manager.get_access_token()
    other = make(tenant, clock, storage=storage)
    assert other.get_access_token() == token
    assert tenant.refreshes == 0


def test_the_token_is_refreshed_within_the_leeway_of_expiry_checked_at_use_time(
    tenant: FakeTenant, clock: Clock
) -> None:
    manager = signed_in(tenant, clock)
    first = manager.get_access_token()
    clock.advance(LIFETIME - 61)
    assert manager.get_access_token() == first
    clock.advance(2)
    assert manager.get_access_token() != first
    assert tenant.refreshes == 1


def test_the_leeway_is_configurable_and_at_most_half_the_lifetime(tenant: FakeTenant, clock: Clock) -> None:
    manager = signed_in(tenant, clock, refresh_leeway=10_000)
    first = manager.get_access_token()
    clock.advance(LIFETIME / 2 - 1)
    assert manager.get_access_token() == first
    clock.advance(2)
    assert manager.get_access_token() != first


def test_a_record_stamped_slightly_in_this_machines_future_is_not_expired_early(
    tenant: FakeTenant, clock: Clock
) -> None:
    storage = MemoryStorage()
    signed_in(tenant, clock, storage=storage)
    # Another machine, whose clock runs 30 s ahead, refreshed and stamped the record with its time.
    record = stored(storage)
    record["received_at"] += 30_000
    storage.set(TOKENS, json.dumps(record))
    behind = make(tenant, clock, storage=storage)
    # Read at once (the TypeScript rule, age < 0, would refresh here): it counts as received now...
    assert behind.get_access_token() == record["access_token"]
    # ...and, once this clock passes its stamp, ages from the stamp.
    clock.advance(30 + LIFETIME - 61)
    assert behind.get_access_token() == record["access_token"]
    assert tenant.refreshes == 0
    clock.advance(2)
    assert behind.get_access_token() != record["access_token"]
    assert tenant.refreshes == 1


def test_the_rotated_refresh_token_replaces_the_old_one_and_a_refresh_without_one_keeps_it(clock: Clock) -> None:
    storage = MemoryStorage()
    tenant = FakeTenant(rotate=False)
    manager = signed_in(tenant, clock, storage=storage)
    before = stored(storage)["refresh_token"]
    clock.advance(PAST_EXPIRY)
    manager.get_access_token()
    assert stored(storage)["refresh_token"] == before

    rotating = FakeTenant()
    storage = MemoryStorage()
    manager = signed_in(rotating, clock, storage=storage)
    before = stored(storage)["refresh_token"]
    clock.advance(PAST_EXPIRY)
    manager.get_access_token()
    assert stored(storage)["refresh_token"] not in (None, before)
    assert rotating.grants("refresh_token")[0].body == {
        "grant_type": "refresh_token",
        "refresh_token": before,
        "client_id": CLIENT_ID,
    }


def test_rotated_tokens_are_written_to_the_storage_before_they_are_handed_out(tenant: FakeTenant, clock: Clock) -> None:
    class GatedStorage(MemoryStorage):
        def __init__(self) -> None:
            super().__init__()
            self.gate: threading.Event | None = None
            self.entered = threading.Event()

        def set(self, key: str, value: str) -> None:
            if self.gate is not None and key == TOKENS:
                self.entered.set()
                self.gate.wait(timeout=30)
            super().set(key, value)

    storage = GatedStorage()
    manager = signed_in(tenant, clock, storage=storage)
    clock.advance(PAST_EXPIRY)
    storage.gate = threading.Event()
    handed: list[str] = []
    worker = threading.Thread(target=lambda: handed.append(manager.get_access_token()))
    worker.start()
    assert storage.entered.wait(timeout=30)
    # The write of the rotated tokens has begun and not returned: nothing is handed out yet.
    assert handed == []
    storage.gate.set()
    worker.join(timeout=30)
    assert handed == [stored(storage)["access_token"]]
    assert tenant.refreshes == 1


def no_lock(name: str, task: Callable[[], Any]) -> Any:
    """A storage lock that locks nothing: what is left is the manager's own single flight."""
    return task()


class SeenByAll(Clock):
    """A clock that notes which of the callers' threads read it. Every caller reads it on the way in
    (to decide whether its token is fresh), so once all have read it, all have decided to wait for a
    refresh: the refresh is held until then, so that no caller can come late and find it done."""

    def __init__(self, callers: int) -> None:
        super().__init__()
        self.callers = callers
        self.seen: set[int] = set()
        self.all_in = threading.Event()

    def __call__(self) -> float:
        if threading.current_thread().name.startswith("caller-"):
            self.seen.add(threading.get_ident())
            if len(self.seen) == self.callers:
                self.all_in.set()
        return super().__call__()


@pytest.mark.parametrize("lock", [None, no_lock], ids=["the storage's lock", "no storage lock"])
def test_twenty_threads_on_an_expired_token_make_exactly_one_refresh_and_all_get_the_new_token(
    lock: Callable[[str, Callable[[], Any]], Any] | None, tenant: FakeTenant
) -> None:
    clock = SeenByAll(callers=20)
    manager = signed_in(tenant, clock, lock=lock)
    clock.advance(PAST_EXPIRY)
    tenant.hold = clock.all_in
    results: list[str] = []
    errors: list[BaseException] = []

    def call() -> None:
        try:
            results.append(manager.get_access_token())
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=call, name=f"caller-{i}") for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert clock.all_in.is_set()
    assert errors == []
    assert len(results) == 20
    assert len(set(results)) == 1
    assert tenant.refreshes == 1


def test_managers_sharing_a_storage_make_one_refresh_the_others_re_reading_it_under_its_lock(
    tenant: FakeTenant, clock: Clock
) -> None:
    storage = MemoryStorage()
    signed_in(tenant, clock, storage=storage)
    managers = [make(tenant, clock, storage=storage) for _ in range(5)]
    for manager in managers:
        manager.get_access_token()
    clock.advance(PAST_EXPIRY)
    results: list[str] = []
    threads = [threading.Thread(target=lambda m=m: results.append(m.get_access_token())) for m in managers * 4]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(results) == 20
    assert len(set(results)) == 1
    assert tenant.refreshes == 1


def test_a_refusal_of_the_token_by_the_api_causes_one_refresh_unless_storage_already_holds_another(
    tenant: FakeTenant, clock: Clock
) -> None:
    storage = MemoryStorage()
    manager = signed_in(tenant, clock, storage=storage)
    other = make(tenant, clock, storage=storage)
    token = manager.get_access_token()
    assert other.get_access_token() == token
    manager.on_unauthorized("not-the-current-token")
    assert manager.get_access_token() == token
    manager.on_unauthorized(token)
    manager.on_unauthorized(token)
    renewed = manager.get_access_token()
    assert renewed != token
    assert tenant.refreshes == 1
    # The other manager's 401 on the old token: storage already holds the new one, no refresh.
    other.on_unauthorized(token)
    assert other.get_access_token() == renewed
    assert tenant.refreshes == 1


def test_invalid_grant_ends_the_session_clears_the_tokens_and_fires_session_ended_once(
    tenant: FakeTenant, clock: Clock
) -> None:
    storage = MemoryStorage()
    manager = signed_in(tenant, clock, storage=storage)
    ended: list[SessionEndedError] = []
    manager.on("session-ended", ended.append)
    clock.advance(PAST_EXPIRY)
    tenant.script.append(lambda _: httpx.Response(400, json={"error": "invalid_grant"}))
    with pytest.raises(SessionEndedError) as caught:
        manager.get_access_token()
    assert (caught.value.code, caught.value.status, caught.value.error) == ("SESSION_ENDED", 400, "invalid_grant")
    assert storage.get(TOKENS) is None
    assert not manager.is_signed_in()
    assert ended == [caught.value]
    with pytest.raises(TokenManagerError) as after:
        manager.get_access_token()
    assert after.value.code == "NOT_SIGNED_IN"
    assert tenant.refreshes == 1


def test_a_502_keeps_the_session_raises_transient_and_is_not_retried(tenant: FakeTenant, clock: Clock) -> None:
    storage = MemoryStorage()
    manager = signed_in(tenant, clock, storage=storage)
    before = storage.get(TOKENS)
    clock.advance(PAST_EXPIRY)
    tenant.script.append(lambda _: httpx.Response(502))
    with pytest.raises(TransientError) as caught:
        manager.get_access_token()
    assert (caught.value.code, caught.value.status, caught.value.attempts) == ("TRANSIENT", 502, 1)
    assert storage.get(TOKENS) == before
    assert tenant.refreshes == 1
    # The session goes on: the next call refreshes with the same refresh token, which is still valid.
    assert manager.get_access_token().startswith("at-")
    assert tenant.refreshes == 2


@pytest.mark.parametrize("status", [429, 503])
def test_a_refresh_answered_429_or_503_was_not_handled_and_is_retried_with_the_same_refresh_token(
    tenant: FakeTenant, clock: Clock, status: int
) -> None:
    manager = signed_in(tenant, clock)
    clock.advance(PAST_EXPIRY)
    tenant.script.append(lambda _: httpx.Response(status))
    assert manager.get_access_token().startswith("at-")
    presented = [grant.body.get("refresh_token") for grant in tenant.grants("refresh_token")]
    assert len(presented) == 2
    assert presented[0] == presented[1]


def test_a_refresh_answered_429_with_retry_after_is_sent_again_after_that_delay_not_the_backoff(
    tenant: FakeTenant, clock: Clock
) -> None:
    """Issue 27, point 1: ``Retry-After: 1`` was retried after the 0.3 s backoff, hitting the token endpoint
    again before the tenant asked."""
    manager = signed_in(tenant, clock, retry_delay=0.3)
    clock.advance(PAST_EXPIRY)
    tenant.script.append(lambda _: httpx.Response(429, headers={"Retry-After": "1"}))
    started = time.monotonic()
    assert manager.get_access_token().startswith("at-")
    assert time.monotonic() - started >= 0.95
    assert tenant.refreshes == 2


def test_a_refresh_asked_to_wait_longer_than_10_s_is_not_retried_and_the_error_says_when_to_try_again(
    tenant: FakeTenant, clock: Clock
) -> None:
    manager = signed_in(tenant, clock)
    clock.advance(PAST_EXPIRY)
    tenant.script.append(lambda _: httpx.Response(429, headers={"Retry-After": "30"}))
    started = time.monotonic()
    with pytest.raises(TransientError) as caught:
        manager.get_access_token()
    assert time.monotonic() - started < 1
    assert (caught.value.status, caught.value.attempts, caught.value.retry_after) == (429, 1, 30.0)
    assert "retry after 30 s" in str(caught.value)
    assert tenant.refreshes == 1


def test_a_connection_that_fails_before_sending_is_retried_and_then_succeeds(tenant: FakeTenant, clock: Clock) -> None:
    manager = signed_in(tenant, clock)
    clock.advance(PAST_EXPIRY)
    for _ in range(2):
        tenant.script.append(lambda request: (_ for _ in ()).throw(httpx.ConnectError("refused", request=request)))
    assert manager.get_access_token().startswith("at-")
    assert tenant.refreshes == 3


def test_a_network_error_keeps_the_session_and_a_request_that_may_have_been_sent_is_not_retried(
    tenant: FakeTenant, clock: Clock
) -> None:
    storage = MemoryStorage()
    manager = signed_in(tenant, clock, storage=storage, refresh_attempts=3)
    before = storage.get(TOKENS)
    clock.advance(PAST_EXPIRY)
    for _ in range(3):
        tenant.script.append(lambda request: (_ for _ in ()).throw(httpx.ConnectError("refused", request=request)))
    with pytest.raises(TransientError) as never_connected:
        manager.get_access_token()
    assert (never_connected.value.status, never_connected.value.attempts, never_connected.value.sent) == (
        None,
        3,
        False,
    )
    assert tenant.refreshes == 3
    tenant.script.append(lambda request: (_ for _ in ()).throw(httpx.ReadTimeout("timed out", request=request)))
    with pytest.raises(TransientError) as timed_out:
        manager.get_access_token()
    assert (timed_out.value.attempts, timed_out.value.sent) == (1, True)
    assert tenant.refreshes == 4
    assert storage.get(TOKENS) == before


def test_another_oauth_error_keeps_the_tokens(tenant: FakeTenant, clock: Clock) -> None:
    storage = MemoryStorage()
    manager = signed_in(tenant, clock, storage=storage)
    before = storage.get(TOKENS)
    clock.advance(PAST_EXPIRY)
    tenant.script.append(lambda _: httpx.Response(400, json={"error": "invalid_request"}))
    with pytest.raises(OAuthResponseError) as caught:
        manager.get_access_token()
    assert (caught.value.code, caught.value.error) == ("OAUTH_ERROR", "invalid_request")
    assert storage.get(TOKENS) == before


def test_invalid_grant_after_another_process_rotated_takes_the_newer_record_instead_of_ending_the_session(
    tenant: FakeTenant, clock: Clock
) -> None:
    storage = MemoryStorage()
    manager = signed_in(tenant, clock, storage=storage)
    clock.advance(PAST_EXPIRY)
    stale = storage.get(TOKENS)

    def meanwhile(request: httpx.Request) -> httpx.Response:
        # Another process (without this storage's lock: a custom lock) refreshed and stored first.
        assert stale is not None
        record = json.loads(stale)
        record.update(access_token="at-other-ZxCvBnMq", refresh_token="rt-other-ZxCvBnMq", received_at=clock() * 1000)
        storage.set(TOKENS, json.dumps(record))
        return httpx.Response(400, json={"error": "invalid_grant"})

    tenant.script.append(meanwhile)
    assert manager.get_access_token() == "at-other-ZxCvBnMq"
    assert manager.is_signed_in()


def test_tokens_whose_write_fails_are_handed_out_reported_and_written_on_a_later_call_without_a_request(
    tenant: FakeTenant, clock: Clock
) -> None:
    class FlakyStorage(MemoryStorage):
        failing = False

        def set(self, key: str, value: str) -> None:
            if self.failing:
                raise OSError("disk full")
            super().set(key, value)

    storage = FlakyStorage()
    manager = signed_in(tenant, clock, storage=storage)
    failures: list[TokenManagerError] = []
    manager.on("storage-failed", failures.append)
    clock.advance(PAST_EXPIRY)
    storage.failing = True
    token = manager.get_access_token()
    assert [f.code for f in failures] == ["STORAGE_FAILED"]
    assert "disk full" in str(failures[0].cause)
    assert stored(storage)["access_token"] != token
    assert manager.get_access_token() == token
    storage.failing = False
    clock.advance(2)
    assert manager.get_access_token() == token
    assert stored(storage)["access_token"] == token
    assert tenant.refreshes == 1


def test_a_failing_storage_read_is_storage_failed(tenant: FakeTenant, clock: Clock) -> None:
    class Broken(MemoryStorage):
        def get(self, key: str) -> str | None:
            raise OSError("I/O error")

    manager = make(tenant, clock, storage=Broken())
    with pytest.raises(TokenManagerError) as caught:
        manager.get_access_token()
    assert caught.value.code == "STORAGE_FAILED"
    with pytest.raises(TokenManagerError):
        manager.is_signed_in()


def test_a_refresh_finishing_after_a_sign_out_does_not_bring_the_session_back(tenant: FakeTenant, clock: Clock) -> None:
    storage = MemoryStorage()
    manager = signed_in(tenant, clock, storage=storage, lock=lambda name, task: task())
    clock.advance(PAST_EXPIRY)
    tenant.hold = threading.Event()
    outcome: list[BaseException | str] = []

    def call() -> None:
        try:
            outcome.append(manager.get_access_token())
        except TokenManagerError as e:
            outcome.append(e)

    worker = threading.Thread(target=call)
    worker.start()
    assert tenant.held.wait(timeout=30)
    manager.sign_out()
    tenant.hold.set()
    worker.join(timeout=30)
    [error] = outcome
    assert isinstance(error, TokenManagerError)
    assert error.code == "NOT_SIGNED_IN"
    assert storage.get(TOKENS) is None


# -- session, revoke, sign-out, events -------------------------------------------------------------


def test_is_signed_in_and_get_session_read_the_storage_with_no_request(tenant: FakeTenant, clock: Clock) -> None:
    manager = make(tenant, clock)
    assert not manager.is_signed_in()
    assert manager.get_session() is None
    manager.complete_authorization(tenant.approve(manager.begin_authorization().url))
    count = len(tenant.requests)
    clock.advance(PAST_EXPIRY)
    assert manager.is_signed_in()
    assert manager.get_session() == SessionInfo(expires_at=clock() - 1, scope="profile:read")
    assert len(tenant.requests) == count


def test_revoke_sends_the_access_token_with_client_id_as_a_form_then_clears_and_fires_revoked(
    tenant: FakeTenant, clock: Clock
) -> None:
    storage = MemoryStorage()
    manager = signed_in(tenant, clock, storage=storage)
    revoked: list[None] = []
    manager.on("revoked", revoked.append)
    token = manager.get_access_token()
    manager.revoke()
    [sent] = [r for r in tenant.requests if r.path == "/oauth/revoke"]
    assert sent.content_type == "application/x-www-form-urlencoded"
    assert sent.body == {"token": token, "token_type_hint": "access_token", "client_id": CLIENT_ID}
    assert storage.get(TOKENS) is None
    assert revoked == [None]


def test_revoke_keeps_the_tokens_when_refused(tenant: FakeTenant, clock: Clock) -> None:
    storage = MemoryStorage()
    manager = signed_in(tenant, clock, storage=storage)
    tenant.script.append(lambda _: httpx.Response(400, json={"error": "unsupported_token_type"}))
    with pytest.raises(OAuthResponseError):
        manager.revoke()
    assert manager.is_signed_in()
    assert tenant.requests[-1].path == "/oauth/revoke"


def test_revoke_refreshes_an_expired_token_first_and_revokes_the_new_one(tenant: FakeTenant, clock: Clock) -> None:
    manager = signed_in(tenant, clock)
    clock.advance(PAST_EXPIRY)
    manager.revoke()
    assert [r.path for r in tenant.requests][-2:] == ["/oauth/token", "/oauth/revoke"]
    assert tenant.requests[-1].body["token"] == "at-3-QwErTyUiOp"


def test_revoke_without_a_session_only_clears(tenant: FakeTenant, clock: Clock) -> None:
    manager = make(tenant, clock)
    manager.revoke()
    assert tenant.requests == []


def test_sign_out_forgets_the_tokens_without_a_request(tenant: FakeTenant, clock: Clock) -> None:
    storage = MemoryStorage()
    manager = signed_in(tenant, clock, storage=storage)
    count = len(tenant.requests)
    manager.sign_out()
    assert storage.get(TOKENS) is None
    assert not manager.is_signed_in()
    assert len(tenant.requests) == count


def test_listeners_get_the_expiry_unsubscribe_and_a_raising_one_changes_nothing(
    tenant: FakeTenant, clock: Clock
) -> None:
    manager = signed_in(tenant, clock)
    seen: list[SessionInfo] = []

    def broken(_: SessionInfo) -> None:
        raise RuntimeError("listener bug")

    manager.on("tokens-refreshed", broken)
    off = manager.on("tokens-refreshed", seen.append)
    clock.advance(PAST_EXPIRY)
    assert manager.get_access_token()
    assert seen == [SessionInfo(expires_at=clock() + LIFETIME, scope="profile:read")]
    off()
    clock.advance(PAST_EXPIRY)
    manager.get_access_token()
    assert len(seen) == 1
    with pytest.raises(InvalidOptionsError, match="unknown event"):
        manager.on("refreshed", seen.append)  # type: ignore[call-overload]


def test_a_custom_lock_is_used_around_every_refresh(tenant: FakeTenant, clock: Clock) -> None:
    names: list[str] = []

    def lock(name: str, task: Callable[[], Any]) -> Any:
        names.append(name)
        return task()

    manager = signed_in(tenant, clock, lock=lock)
    clock.advance(PAST_EXPIRY)
    manager.get_access_token()
    assert names == [f"tenant-integration:{BASE_URL}:{CLIENT_ID}:lock"]


def test_signed_in_and_signed_out_tell_the_sign_in_the_sign_out_and_the_revocation(
    tenant: FakeTenant, clock: Clock
) -> None:
    manager = make(tenant, clock)
    seen: list[tuple[str, object]] = []
    for event in ("signed-in", "signed-out", "revoked"):
        manager.on(event, lambda payload, event=event: seen.append((event, payload)))
    session = manager.complete_authorization(tenant.approve(manager.begin_authorization().url))
    manager.sign_out()
    manager.complete_authorization(tenant.approve(manager.begin_authorization().url))
    manager.revoke()
    assert seen == [
        ("signed-in", session),
        ("signed-out", SignedOut(revoked=False)),
        ("signed-in", session),
        ("revoked", None),
        ("signed-out", SignedOut(revoked=True)),
    ]


def test_unwritten_tokens_are_never_written_over_a_later_record_of_their_session_whatever_its_clock(
    tenant: FakeTenant, clock: Clock
) -> None:
    class FlakyStorage(MemoryStorage):
        failing = False
        refused = ""

        def set(self, key: str, value: str) -> None:
            if self.failing and key == TOKENS:
                self.refused = value
                raise OSError("disk full")
            super().set(key, value)

    storage = FlakyStorage()
    manager = make(tenant, clock, storage=storage)
    callback = tenant.approve(manager.begin_authorization().url)
    storage.failing = True
    with pytest.raises(TokenManagerError) as caught:
        manager.complete_authorization(callback)
    assert caught.value.code == "STORAGE_FAILED"
    unwritten = manager.get_access_token()  # the sign-in's tokens, kept in this process
    storage.failing = False
    # Another process refreshed from the sign-in's record (it got it some other way) and stored the next
    # record of the session, stamped by a clock a minute behind this one: older by the clocks.
    storage.set(
        TOKENS,
        json.dumps(
            {
                "access_token": "at-later-PoIuYtReWq",
                "refresh_token": "rt-later-PoIuYtReWq",
                "token_type": "Bearer",
                "expires_in": LIFETIME,
                "received_at": round((clock() - 60) * 1000),
                "id": "L" * 43,
                "session": json.loads(storage.refused)["session"],
                "seq": 1,
            }
        ),
    )
    clock.advance(2)  # past the pause before the write is tried again
    assert manager.get_access_token() == "at-later-PoIuYtReWq"
    assert stored(storage)["id"] == "L" * 43
    assert unwritten != "at-later-PoIuYtReWq"
    assert tenant.refreshes == 0
