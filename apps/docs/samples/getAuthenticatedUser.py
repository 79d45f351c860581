from pathlib import Path

from tenant_integration import (
    Client,
    FileStorage,
    ForbiddenError,
    TokenManager,
)
from tenant_integration.loopback import sign_in_with_loopback

# the sandbox of `pnpm start`; a real tenant: https://<tenant_host>
base_url = "http://127.0.0.1:4020"
with TokenManager(
    base_url=base_url,
    client_id="demo-cli",
    redirect_uri="http://127.0.0.1:53682/callback",
    scopes=["profile:read"],
    storage=FileStorage(Path.home() / ".config/my-cli/tokens.json"),
) as manager:
    # Sign in first: without tokens the call fails with NOT_SIGNED_IN.
    if not manager.is_signed_in():
        sign_in_with_loopback(manager)

    # Bearer token and Accept: application/json, to the tenant only.
    # The token is refreshed before it expires; a 401 (an expired or
    # revoked token, assumed: RFC 6750 §3.1) makes the client
    # refresh once and repeat the call.
    with Client(base_url=base_url, auth=manager) as client:
        try:
            user = client.get_user()
            print(user)  # its fields are not shown: an open object
        except ForbiddenError as error:
            # The token lacks the route's scope (description §5.9);
            # the scopes the challenge names (assumed: RFC 6750 §3.1).
            print("needs one of", ", ".join(error.missing_scopes))
