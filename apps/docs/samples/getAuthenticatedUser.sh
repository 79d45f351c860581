# The sandbox of `pnpm start`; a real tenant: https://<tenant_host>
TENANT="http://127.0.0.1:4020"

# Sign in first (authorize, then exchangeToken): this is the
# access_token of the last token response.
ACCESS_TOKEN="<ACCESS_TOKEN>"
curl -sS --fail-with-body "$TENANT/api/v1/auth/user" \
  -H "Authorization: Bearer $ACCESS_TOKEN" \
  -H "Accept: application/json"
