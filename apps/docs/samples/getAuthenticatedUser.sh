# Sign in first (authorize, then exchangeToken): this is the
# access_token of the last token response.
ACCESS_TOKEN="<ACCESS_TOKEN>"
curl -sS --fail-with-body https://acme.tenant.test/api/v1/auth/user \
  -H "Authorization: Bearer $ACCESS_TOKEN" \
  -H "Accept: application/json"
