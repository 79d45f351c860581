from tenant_integration import TokenManager

manager = TokenManager(
    base_url="https://acme.tenant.test",
    client_id="demo-integration",
    # exactly as registered:
    redirect_uri="http://127.0.0.1:53682/callback",
    scopes=["profile:read"],
)

# The authorize URL with a fresh state and a PKCE S256 challenge
# (RFC 7636); the verifier and the state are kept as the pending
# sign-in. Send the person's browser there.
request = manager.begin_authorization()
print(f"Open this URL to sign in:\n{request.url}")
