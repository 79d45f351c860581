package main

import (
	"context"
	"fmt"
	"os"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/filestorage"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	storage, err := filestorage.New("~/.config/my-cli/tokens.json")
	if err != nil {
		return err
	}
	manager, err := tokenmanager.New(tokenmanager.Config{
		// The sandbox of `pnpm start`; a real tenant:
		// https://<tenant_host>
		BaseURL:     "http://127.0.0.1:4020",
		ClientID:    "demo-cli",
		RedirectURI: "http://127.0.0.1:53682/callback",
		Scopes:      []scope.Scope{scope.ProfileRead},
	}, tokenmanager.WithStorage(storage))
	if err != nil {
		return err
	}
	ok, err := manager.IsSignedIn(ctx)
	if err != nil {
		return err
	}
	if !ok {
		fmt.Println("Not signed in: there is nothing to revoke.")
		return nil
	}
	// Sign out at the tenant: the stored access token is revoked
	// (its request shape is assumed, RFC 7009 §2.1), which
	// disconnects the integration, then both tokens are cleared.
	// On failure they are kept: retry, or manager.SignOut(ctx) to
	// forget them here only.
	if err := manager.Revoke(ctx); err != nil {
		return err
	}
	fmt.Println("Signed out: the access token is revoked.")
	return nil
}
