# The sandbox of `pnpm start`; a real tenant: https://<tenant_host>
TENANT="http://127.0.0.1:4020"

# grant_type=authorization_code: the callback's code, with the
# verifier of authorize.sh (same shell) whose challenge went to
# /oauth/authorize. No client secret.
CODE="<CODE>"
curl -sS --fail-with-body "$TENANT/oauth/token" \
  -H "Content-Type: application/json" \
  -H "Accept: application/json" \
  --data @- <<JSON
{"grant_type": "authorization_code",
 "client_id": "demo-cli",
 "redirect_uri": "http://127.0.0.1:53682/callback",
 "code": "$CODE",
 "code_verifier": "$VERIFIER"}
JSON

# grant_type=refresh_token: before the access token expires. A new
# refresh_token in the answer replaces the old one: store it first.
REFRESH_TOKEN="<REFRESH_TOKEN>"
curl -sS --fail-with-body "$TENANT/oauth/token" \
  -H "Content-Type: application/json" \
  -H "Accept: application/json" \
  --data @- <<JSON
{"grant_type": "refresh_token",
 "client_id": "demo-cli",
 "refresh_token": "$REFRESH_TOKEN"}
JSON
