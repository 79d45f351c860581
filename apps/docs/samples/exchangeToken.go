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
	// grant_type=authorization_code: completing a sign-in exchanges
	// the callback's code with the PKCE verifier (no secret).
	if ok, err := manager.IsSignedIn(ctx); err != nil {
		return err
	} else if !ok {
		if _, err := loopback.SignIn(ctx, manager); err != nil {
			return err
		}
	}
	// grant_type=refresh_token: AccessToken refreshes first when
	// the access token is within a minute of its 15 minutes. A
	// rotated refresh token is stored before the new access token
	// is used, one refresh at a time among the processes sharing
	// the file.
	if _, err := manager.AccessToken(ctx); err != nil {
		return err
	}
	session, _, err := manager.Session(ctx)
	if err != nil {
		return err
	}
	until := session.ExpiresAt.UTC().Format("15:04 UTC")
	fmt.Println("The access token is valid until", until)
	return nil
}
