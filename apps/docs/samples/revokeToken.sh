# The sandbox of `pnpm start`; a real tenant: https://<tenant_host>
TENANT="http://127.0.0.1:4020"

# Sign out: revoke the current access token, which disconnects the
# integration, then forget both tokens. The request is assumed (the
# description does not show it): RFC 7009 §2.1's form body, and
# the contract takes the same fields as JSON too.
ACCESS_TOKEN="<ACCESS_TOKEN>"
curl -sS --fail-with-body "$TENANT/oauth/revoke" \
  --data-urlencode "token=$ACCESS_TOKEN" \
  --data-urlencode "token_type_hint=access_token" \
  --data-urlencode "client_id=demo-cli" \
  -w '%{http_code}\n'
