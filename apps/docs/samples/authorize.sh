# The sandbox of `pnpm start`; a real tenant: https://<tenant_host>
TENANT="http://127.0.0.1:4020"

# PKCE (RFC 7636): a random verifier, kept for the exchange, and its
# S256 challenge; a random state, kept to compare on the callback.
VERIFIER="$(openssl rand -base64 48 | tr '+/' '-_' | tr -d '=')"
CHALLENGE="$(printf %s "$VERIFIER" | openssl dgst -sha256 -binary \
  | openssl base64 -A | tr '+/' '-_' | tr -d '=')"
STATE="$(openssl rand -hex 16)"

# The request the browser makes: open the printed URL and approve.
# The browser then goes to redirect_uri?code=...&state=...: copy
# the code from its address bar once state equals $STATE.
curl -sS --fail -G "$TENANT/oauth/authorize" \
  --data-urlencode "response_type=code" \
  --data-urlencode "client_id=demo-cli" \
  --data-urlencode "redirect_uri=http://127.0.0.1:53682/callback" \
  --data-urlencode "scope=profile:read" \
  --data-urlencode "state=$STATE" \
  --data-urlencode "code_challenge=$CHALLENGE" \
  --data-urlencode "code_challenge_method=S256" \
  -o /dev/null -w 'Open this URL to sign in:\n%{url_effective}\n'
echo "Then compare the returned state with: $STATE"
