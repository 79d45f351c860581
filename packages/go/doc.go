// Package tenantintegration is the Go SDK of the Tenant Integration Service. The code lives in its
// packages:
//
//   - tokenmanager: OAuth 2.0 Authorization Code + PKCE sign-in, rotation-safe refresh, revocation;
//     an oauth2.TokenSource and an http.RoundTripper for the user's *http.Client;
//   - filestorage: a token file shared by the processes of one machine (and by the TypeScript and
//     Python kits);
//   - api: the types and scopes generated from the contract (do not edit; run go generate ./...).
package tenantintegration

//go:generate go run ./internal/cmd/generate
