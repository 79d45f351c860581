"""The conformance flow of tools/conformance/src/flow.mjs, run by the Python SDK against the same sandbox.

The same checks, in the same order, as every JavaScript runtime runs them: the RFC 7636 Appendix B
vector, the verifier lengths and the rejection of a 42-character verifier, then one session through
the public API exactly as a user writes it (the package's names, a token manager on the default
memory storage and a client on it): sign-in (authorize, callback with the unchanged state, code
exchange), the user call, one transparent refresh once the access token is 15 minutes old (exactly
one refresh grant at the tenant), and revoke, after which the old access token gets 401. Once with
``TokenManager`` and ``Client``, once with ``AsyncTokenManager`` and ``AsyncClient``.

The sandbox is a real process (the ``tenant_sandbox`` fixture); the manager's clock follows its test
clock, moved with ``POST /__sandbox/clock``.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tenant_integration import AsyncClient, AsyncTokenManager, Client, TokenManager, UnauthorizedError
from tenant_integration.pkce import create_pkce_pair, derive_code_challenge
from tenant_integration.testing import SandboxProcess

CLIENT_ID = "test-integration"
REDIRECT_URI = "http://127.0.0.1:53682/callback"
VERIFIER_CHARACTERS = re.compile(r"^[A-Za-z0-9\-._~]+$")


class StaticToken:
    """A token source holding one token and nothing else (no refresh): the old token after a revoke."""

    def __init__(self, token: str) -> None:
        self._token = token

    def get_access_token(self) -> str:
        return self._token


class AsyncStaticToken:
    """The same for the async client."""

    def __init__(self, token: str) -> None:
        self._token = token

    async def get_access_token(self) -> str:
        return self._token


def authorize(url: str) -> str:
    """Plays the browser at the authorize endpoint: the sandbox auto-approves with a 302 to the callback."""
    with httpx.Client(trust_env=False, follow_redirects=False) as browser:
        answer = browser.get(url)
    assert answer.status_code == 302, f"authorize answered {answer.status_code}"
    return answer.headers["location"]


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def test_rfc_7636_appendix_b_the_verifier_gives_its_challenge() -> None:
    assert (
        derive_code_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    )


@pytest.mark.parametrize("length", [43, 64, 128])
def test_a_pkce_pair_has_a_verifier_of_43_to_128_characters_and_its_s256_challenge(length: int) -> None:
    pair = create_pkce_pair(length=length)
    assert pair.method == "S256"
    assert len(pair.verifier) == length
    assert VERIFIER_CHARACTERS.match(pair.verifier)
    assert pair.challenge == derive_code_challenge(pair.verifier)


def test_a_42_character_verifier_is_rejected_with_a_typed_error() -> None:
    with pytest.raises(Exception) as caught:  # noqa: PT011 (the check is on the error's code below)
        derive_code_challenge("a" * 42)
    assert isinstance(getattr(caught.value, "code", None), str)


def test_the_flow_with_the_sync_client(tenant_sandbox: SandboxProcess) -> None:
    base_url = tenant_sandbox.url
    manager = TokenManager(
        base_url=base_url,
        client_id=CLIENT_ID,
        redirect_uri=REDIRECT_URI,
        scopes=["profile:read"],
        now=tenant_sandbox.clock.now,
    )
    client = Client(base_url=base_url, auth=manager)

    # Signs in: authorize, callback with the unchanged state, code exchange.
    request = manager.begin_authorization()
    sent = query(request.url)
    assert request.url.startswith(f"{base_url}/"), "authorize URL on another host"
    assert sent["code_challenge_method"] == "S256"
    callback = authorize(request.url)
    assert query(callback)["state"] == sent["state"], "state changed"
    manager.complete_authorization(callback)

    # Reads the user with the bearer token.
    assert isinstance(client.get_user(), dict)

    # Refreshes transparently once the access token is 15 minutes old: exactly one refresh.
    before = tenant_sandbox.refresh_count()
    tenant_sandbox.advance(16 * 60)
    assert isinstance(client.get_user(), dict)
    assert tenant_sandbox.refresh_count() == before + 1

    # Revokes, after which the old access token gets 401.
    token = manager.get_access_token()
    manager.revoke()
    with Client(base_url=base_url, auth=StaticToken(token)) as old, pytest.raises(UnauthorizedError) as caught:
        old.get_user()
    assert caught.value.status == 401
    client.close()


async def test_the_flow_with_the_async_client(tenant_sandbox: SandboxProcess) -> None:
    base_url = tenant_sandbox.url
    manager = AsyncTokenManager(
        base_url=base_url,
        client_id=CLIENT_ID,
        redirect_uri=REDIRECT_URI,
        scopes=["profile:read"],
        now=tenant_sandbox.clock.now,
    )
    client = AsyncClient(base_url=base_url, auth=manager)

    request = await manager.begin_authorization()
    sent = query(request.url)
    assert request.url.startswith(f"{base_url}/"), "authorize URL on another host"
    assert sent["code_challenge_method"] == "S256"
    callback = authorize(request.url)
    assert query(callback)["state"] == sent["state"], "state changed"
    await manager.complete_authorization(callback)

    assert isinstance(await client.get_user(), dict)

    before = tenant_sandbox.refresh_count()
    tenant_sandbox.advance(16 * 60)
    assert isinstance(await client.get_user(), dict)
    assert tenant_sandbox.refresh_count() == before + 1

    token = await manager.get_access_token()
    await manager.revoke()
    async with AsyncClient(base_url=base_url, auth=AsyncStaticToken(token)) as old:
        with pytest.raises(UnauthorizedError) as caught:
            await old.get_user()
    assert caught.value.status == 401
    await client.aclose()
