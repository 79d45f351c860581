package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"

	"github.com/tenant-integration/sdk/packages/go/api"
	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/filestorage"
	"github.com/tenant-integration/sdk/packages/go/loopback"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// The sandbox of `pnpm start`; a real tenant: https://<tenant_host>
const baseURL = "http://127.0.0.1:4020"

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
		BaseURL:     baseURL,
		ClientID:    "demo-cli",
		RedirectURI: "http://127.0.0.1:53682/callback",
		Scopes:      []scope.Scope{scope.ProfileRead},
	}, tokenmanager.WithStorage(storage))
	if err != nil {
		return err
	}
	// Sign in first: without tokens the call fails with
	// NOT_SIGNED_IN. SignIn prints the URL to open, then waits for
	// the browser on the redirect URI's port.
	if ok, err := manager.IsSignedIn(ctx); err != nil {
		return err
	} else if !ok {
		if _, err := loopback.SignIn(ctx, manager); err != nil {
			return err
		}
	}

	// The bearer token goes to the tenant only, refreshed before it
	// expires; a 401 (an expired or revoked token, assumed: RFC 6750
	// §3.1) is refreshed once and the request sent again.
	client := &http.Client{Transport: manager.Transport(nil)}
	req, err := http.NewRequestWithContext(
		ctx, http.MethodGet, baseURL+"/api/v1/auth/user", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json") // description §4
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	switch res.StatusCode {
	case http.StatusOK:
		var user api.User // the description lists no fields
		err := json.NewDecoder(res.Body).Decode(&user)
		if err != nil {
			return err
		}
		fmt.Println(user)
		return nil
	case http.StatusForbidden:
		// The token lacks the route's scope (description §5.9);
		// the scope the challenge names (assumed: RFC 6750 §3.1).
		fmt.Println("needs", res.Header.Get("WWW-Authenticate"))
		return nil
	default:
		return fmt.Errorf("GET /api/v1/auth/user: %s", res.Status)
	}
}
