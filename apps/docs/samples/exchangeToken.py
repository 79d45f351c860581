from datetime import UTC, datetime

from tenant_integration import TokenManager

manager = TokenManager(
    base_url="https://acme.tenant.test",
    client_id="demo-integration",
    redirect_uri="http://127.0.0.1:53682/callback",
    scopes=["profile:read"],
)


# grant_type=authorization_code: the browser came back to the
# redirect URI. The state is checked first, then the code is
# exchanged with the PKCE verifier and the tokens are stored.
def on_callback(callback_url: str) -> None:
    session = manager.complete_authorization(callback_url)
    until = datetime.fromtimestamp(session.expires_at, UTC)
    print(f"signed in until {until:%H:%M} UTC with {session.scope}")


# grant_type=refresh_token: a valid access token, refreshed first
# when it is about to expire. The rotated refresh token is stored
# before the new access token is used; one refresh at a time.
def access_token() -> str:
    return manager.get_access_token()
