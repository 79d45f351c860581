from tenant_integration import Client, ForbiddenError, TokenManager

base_url = "https://acme.tenant.example"
manager = TokenManager(
    base_url=base_url,
    client_id="demo-integration",
    redirect_uri="http://127.0.0.1:53682/callback",
    scopes=["profile:read"],
)

# The bearer token goes only to the tenant; a 401 is refreshed
# once and the call repeated.
with Client(base_url=base_url, auth=manager) as client:
    try:
        user = client.get_user()
        print(user)
    except ForbiddenError as error:
        print("needs one of", ", ".join(error.missing_scopes))
