package main

import (
	"context"
	"fmt"
	"os"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/filestorage"
	"github.com/tenant-integration/sdk/packages/go/loopback"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	// 0600; shared with the other samples and kits.
	storage, err := filestorage.New("~/.config/my-cli/tokens.json")
	if err != nil {
		return err
	}
	manager, err := tokenmanager.New(tokenmanager.Config{
		// The sandbox of `pnpm start`; a real tenant:
		// https://<tenant_host>
		BaseURL:  "http://127.0.0.1:4020",
		ClientID: "demo-cli",
		// Registered for the client exactly, port included:
		RedirectURI: "http://127.0.0.1:53682/callback",
		Scopes:      []scope.Scope{scope.ProfileRead},
	}, tokenmanager.WithStorage(storage))
	if err != nil {
		return err
	}
	// The authorize URL (a fresh state, a PKCE S256 challenge, RFC
	// 7636) is printed to open in a browser; a one-shot server on
	// the redirect URI's port takes the callback, whose state is
	// compared exactly before the code is exchanged
	// (exchangeToken) and the tokens stored.
	session, err := loopback.SignIn(ctx, manager)
	if err != nil {
		return err
	}
	until := session.ExpiresAt.UTC().Format("15:04 UTC")
	fmt.Println("Signed in; the access token expires at", until)
	return nil
}
