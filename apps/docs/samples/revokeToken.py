from pathlib import Path

from tenant_integration import FileStorage, TokenManager

with TokenManager(
    # the sandbox of `pnpm start`; a real tenant: https://<tenant_host>
    base_url="http://127.0.0.1:4020",
    client_id="demo-cli",
    redirect_uri="http://127.0.0.1:53682/callback",
    scopes=["profile:read"],
    storage=FileStorage(Path.home() / ".config/my-cli/tokens.json"),
) as manager:
    # Sign out at the tenant: the stored access token is revoked
    # (its request shape is assumed, RFC 7009 §2.1), which
    # disconnects the integration, then both tokens are cleared. On
    # failure they are kept: retry, or manager.sign_out() to forget
    # them here only.
    if manager.is_signed_in():
        manager.revoke()
        print("Signed out: the access token is revoked.")
    else:
        print("Not signed in: there is nothing to revoke.")
