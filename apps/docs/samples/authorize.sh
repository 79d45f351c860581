# PKCE (RFC 7636): a random verifier, kept for the exchange, and its
# S256 challenge; a random state, kept to compare on the callback.
VERIFIER="$(openssl rand -base64 48 | tr '+/' '-_' | tr -d '=')"
CHALLENGE="$(printf %s "$VERIFIER" | openssl dgst -sha256 -binary \
  | openssl base64 -A | tr '+/' '-_' | tr -d '=')"
STATE="$(openssl rand -hex 16)"

# The request the browser makes. After approval the tenant sends it
# back to redirect_uri?code=...&state=... (the Location printed).
curl -sS -G https://acme.tenant.test/oauth/authorize \
  --data-urlencode "response_type=code" \
  --data-urlencode "client_id=demo-integration" \
  --data-urlencode "redirect_uri=http://127.0.0.1:53682/callback" \
  --data-urlencode "scope=profile:read" \
  --data-urlencode "state=$STATE" \
  --data-urlencode "code_challenge=$CHALLENGE" \
  --data-urlencode "code_challenge_method=S256" \
  -o /dev/null \
  -w 'open: %{url_effective}\n%{http_code} %{redirect_url}\n'
