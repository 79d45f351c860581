# Sign out (RFC 7009): revoke the current access token, then forget
# both tokens. A form body, as RFC 7009 has it (JSON works too).
ACCESS_TOKEN="<ACCESS_TOKEN>"
curl -sS --fail-with-body https://acme.tenant.test/oauth/revoke \
  --data-urlencode "token=$ACCESS_TOKEN" \
  --data-urlencode "token_type_hint=access_token" \
  --data-urlencode "client_id=demo-integration" \
  -w '%{http_code}\n'
