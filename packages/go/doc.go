// Package tenantintegration is the Go SDK of the Tenant Integration Service. The code lives in its
// packages:
//
//   - tokenmanager: OAuth 2.0 Authorization Code + PKCE sign-in, rotation-safe refresh, revocation;
//     an oauth2.TokenSource and an http.RoundTripper for the user's *http.Client;
//   - transport: retries (Retry-After, backoff with jitter) and log/slog logging as RoundTripper layers;
//   - loopback: the RFC 8252 loopback sign-in of a command-line tool;
//   - filestorage: a token file shared by the processes of one machine (and by the TypeScript and
//     Python kits);
//   - redisstorage: the tokens and the refresh lock on Redis, shared with the other kits;
//   - tenanttest: the sandbox tenant for tests, and a signed-in manager and client in one call;
//   - api: the types and scopes generated from the contract (do not edit; run go generate ./...).
//
// examples/quickstart is the README's quick start. Released with tags packages/go/vX.Y.Z.
package tenantintegration

//go:generate go run ./internal/cmd/generate
