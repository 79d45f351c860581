// Command quickstart signs in to a tenant from a terminal, prints the signed-in user and signs out.
//
//	quickstart          sign in if needed (the browser comes back to 127.0.0.1:53682), print the user
//	quickstart logout   revoke the session (RFC 7009) and forget the tokens
//
// As written it signs in to the sandbox tenant that `pnpm start` serves from a checkout of the SDK
// (http://127.0.0.1:4020, client demo-cli); TENANT_URL and CLIENT_ID name your tenant and client.
// The access token lives 15 minutes; the manager refreshes it when it is used, and the rotated
// refresh token in the file keeps the session alive across runs.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"

	"github.com/tenant-integration/sdk/packages/go/api"
	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/filestorage"
	"github.com/tenant-integration/sdk/packages/go/loopback"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
	"github.com/tenant-integration/sdk/packages/go/transport"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt) // Ctrl-C ends the wait
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err) // *tokenmanager.Error: a stable code and a message, never a token
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	// 0600 in a 0700 directory, written atomically and fsynced, locked across processes.
	storage, err := filestorage.New(setting("TOKEN_FILE", "~/.config/my-cli/tokens.json"))
	if err != nil {
		return err
	}
	manager, err := tokenmanager.New(tokenmanager.Config{
		BaseURL:     setting("TENANT_URL", "http://127.0.0.1:4020"), // https, or http to a loopback host
		ClientID:    setting("CLIENT_ID", "demo-cli"),
		RedirectURI: setting("REDIRECT_URI", "http://127.0.0.1:53682/callback"), // registered, exactly
		Scopes:      []scope.Scope{scope.ProfileRead},
	}, tokenmanager.WithStorage(storage))
	if err != nil {
		return err
	}
	if len(args) > 0 && args[0] == "logout" {
		return manager.Revoke(ctx) // disconnects the integration, then clears the file
	}
	if signedIn, err := manager.IsSignedIn(ctx); err != nil {
		return err
	} else if !signedIn {
		// Listens on 127.0.0.1:53682, prints the address to open, receives the callback, checks the
		// state and exchanges the code with the PKCE verifier.
		if _, err := loopback.SignIn(ctx, manager); err != nil {
			return err
		}
	}
	// Retries (Retry-After, backoff) over the bearer layer, which sends the token (to the tenant only)
	// and Accept: application/json. Assumption (not in the service description): an expired or
	// revoked token is answered 401 (RFC 6750 §3.1); the layer then refreshes it and sends the
	// request once more.
	rt, err := transport.New(manager.Transport(nil))
	if err != nil {
		return err
	}
	client := &http.Client{Transport: rt}
	request, err := http.NewRequestWithContext(ctx, http.MethodGet, manager.BaseURL()+"/api/v1/auth/user", nil)
	if err != nil {
		return err
	}
	response, err := client.Do(request)
	if err != nil {
		return err
	}
	defer response.Body.Close()
	if response.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /api/v1/auth/user answered %s", response.Status)
	}
	var user api.User // an open JSON object: the service description does not list its fields
	if err := json.NewDecoder(io.LimitReader(response.Body, 1<<20)).Decode(&user); err != nil {
		return err
	}
	printed, _ := json.Marshal(user)
	fmt.Printf("Signed in as %s\n", printed)
	return nil
}

// setting is an environment variable, or the default.
func setting(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}
