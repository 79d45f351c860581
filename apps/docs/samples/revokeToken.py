from tenant_integration import TokenManager

manager = TokenManager(
    base_url="https://acme.tenant.test",
    client_id="demo-integration",
    redirect_uri="http://127.0.0.1:53682/callback",
    scopes=["profile:read"],
)

# Sign out at the tenant (RFC 7009): the token is revoked, then
# the stored tokens are cleared. On failure the tokens are kept:
# retry, or manager.sign_out() to forget them locally only.
manager.revoke()
