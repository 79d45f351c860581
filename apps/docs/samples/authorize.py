from datetime import UTC, datetime
from pathlib import Path

from tenant_integration import FileStorage, TokenManager
from tenant_integration.loopback import sign_in_with_loopback

with TokenManager(
    # the sandbox of `pnpm start`; a real tenant: https://<tenant_host>
    base_url="http://127.0.0.1:4020",
    client_id="demo-cli",
    # registered for the client exactly, port included:
    redirect_uri="http://127.0.0.1:53682/callback",
    scopes=["profile:read"],
    # 0600; shared with the other samples and kits:
    storage=FileStorage(Path.home() / ".config/my-cli/tokens.json"),
) as manager:
    # The authorize URL (a fresh state, a PKCE S256 challenge, RFC
    # 7636) opens in the browser, or is printed; a one-shot server
    # on the redirect URI's port takes the callback, whose state is
    # compared exactly before the code is exchanged (exchangeToken)
    # and the tokens stored.
    session = sign_in_with_loopback(manager)
    until = datetime.fromtimestamp(session.expires_at, UTC)
    print(f"Signed in; the access token expires at {until:%H:%M} UTC")
