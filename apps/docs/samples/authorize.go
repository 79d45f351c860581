package main

import (
	"context"
	"fmt"
	"os"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	manager, err := tokenmanager.New(tokenmanager.Config{
		BaseURL:  "https://acme.tenant.test",
		ClientID: "demo-integration",
		// exactly as registered:
		RedirectURI: "http://127.0.0.1:53682/callback",
		Scopes:      []scope.Scope{scope.ProfileRead},
	})
	if err != nil {
		return err
	}
	// The authorize URL with a fresh state and a PKCE S256 challenge
	// (RFC 7636); the verifier and the state are kept as the pending
	// sign-in. Send the person's browser there.
	request, err := manager.BeginAuthorization(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("Open this URL to sign in:\n%s\n", request.URL)
	return nil
}
