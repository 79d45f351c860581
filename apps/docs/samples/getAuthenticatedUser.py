from tenant_integration import Client, ForbiddenError, TokenManager

base_url = "https://acme.tenant.test"
manager = TokenManager(
    base_url=base_url,
    client_id="demo-integration",
    redirect_uri="http://127.0.0.1:53682/callback",
    scopes=["profile:read"],
)

# Sign in first: without tokens the call fails with NOT_SIGNED_IN.
# The browser comes back to the redirect URI; paste that URL here.
if not manager.is_signed_in():
    request = manager.begin_authorization()
    print(f"Open this URL to sign in:\n{request.url}")
    manager.complete_authorization(input("The URL it came back to: "))

# The bearer token goes only to the tenant; a 401 is refreshed
# once and the call repeated.
with Client(base_url=base_url, auth=manager) as client:
    try:
        user = client.get_user()
        print(user)
    except ForbiddenError as error:
        print("needs one of", ", ".join(error.missing_scopes))
