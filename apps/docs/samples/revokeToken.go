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
		BaseURL:     "https://acme.tenant.test",
		ClientID:    "demo-integration",
		RedirectURI: "http://127.0.0.1:53682/callback",
		Scopes:      []scope.Scope{scope.ProfileRead},
	})
	if err != nil {
		return err
	}
	// Sign out at the tenant (RFC 7009): the token is revoked, then
	// the stored tokens are cleared. On failure the tokens are kept:
	// retry, or manager.SignOut(ctx) to forget them locally only.
	return manager.Revoke(ctx)
}
