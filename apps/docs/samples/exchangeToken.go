// Package signin completes the sign-in and hands out access tokens.
package signin

import (
	"context"
	"fmt"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// NewManager makes the token manager of the integration.
func NewManager() (*tokenmanager.Manager, error) {
	return tokenmanager.New(tokenmanager.Config{
		BaseURL:     "https://acme.tenant.test",
		ClientID:    "demo-integration",
		RedirectURI: "http://127.0.0.1:53682/callback",
		Scopes:      []scope.Scope{scope.ProfileRead},
	})
}

// OnCallback is grant_type=authorization_code: the browser came
// back to the redirect URI. The state is checked first, then the
// code is exchanged with the PKCE verifier and the tokens stored.
func OnCallback(
	ctx context.Context, m *tokenmanager.Manager, callbackURL string,
) error {
	session, err := m.CompleteAuthorization(ctx, callbackURL)
	if err != nil {
		return err // STATE_MISMATCH, AUTHORIZATION_DENIED, ...
	}
	until := session.ExpiresAt.UTC().Format("15:04 UTC")
	fmt.Printf("signed in until %s with %s\n", until, session.Scope)
	return nil
}

// AccessToken is grant_type=refresh_token: a valid access token,
// refreshed first when it is about to expire. The rotated refresh
// token is stored before the new access token is used; one
// refresh at a time, however many goroutines ask.
func AccessToken(
	ctx context.Context, m *tokenmanager.Manager,
) (string, error) {
	return m.AccessToken(ctx)
}
