from datetime import UTC, datetime
from pathlib import Path

from tenant_integration import FileStorage, TokenManager
from tenant_integration.loopback import sign_in_with_loopback

with TokenManager(
    # the sandbox of `pnpm start`; a real tenant: https://<tenant_host>
    base_url="http://127.0.0.1:4020",
    client_id="demo-cli",
    redirect_uri="http://127.0.0.1:53682/callback",
    scopes=["profile:read"],
    storage=FileStorage(Path.home() / ".config/my-cli/tokens.json"),
) as manager:
    # grant_type=authorization_code: completing a sign-in exchanges
    # the callback's code with the PKCE verifier (no secret).
    if not manager.is_signed_in():
        sign_in_with_loopback(manager)

    # grant_type=refresh_token: get_access_token() refreshes first
    # when the access token is within a minute of its 15 minutes. A
    # rotated refresh token is stored before the new access token
    # is used, one refresh at a time among the processes sharing
    # the file.
    manager.get_access_token()
    session = manager.get_session()
    assert session is not None
    until = datetime.fromtimestamp(session.expires_at, UTC)
    print(f"The access token is valid until {until:%H:%M} UTC")
