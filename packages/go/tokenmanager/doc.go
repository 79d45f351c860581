// Package tokenmanager signs in to a tenant of the Tenant Integration Service with OAuth 2.0
// Authorization Code + PKCE and keeps the session alive through refresh-token rotation, across
// goroutines and processes, with the records, keys and locks of the TypeScript and Python kits.
//
//   - sign-in with PKCE S256 and a random, single-use state compared in constant time before any
//     request (RFC 6749 §4.1, §10.12; RFC 7636);
//   - JSON token requests, as the contract's POST /oauth/token takes them;
//   - the access token refreshed at use time within the leeway of expiry (no timers), expiry counted
//     from the local receive time and expires_in, on an injectable clock;
//   - one refresh however many goroutines ask (one flight), and across processes through the
//     storage's lock, with the refresh intent of spec/token-store (paused and killed processes);
//   - rotated tokens written durably before they are handed out; invalid_grant ends the session,
//     5xx and network errors keep it (Assumption (not in the service description): the description
//     shows no OAuth error code; invalid_grant is RFC 6749 §5.2's for a refresh token that is
//     invalid, expired or revoked);
//   - revocation (RFC 7009), local sign-out, a change hook, *Error values with the kit's codes, and a
//     log/slog logger that never prints a secret.
//
// A *Manager is an oauth2.TokenSource (golang.org/x/oauth2) and gives an http.RoundTripper for the
// user's *http.Client (Transport).
package tokenmanager
