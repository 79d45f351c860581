package tokenmanager_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// A manager signs in with the authorization code and PKCE (RFC 6749 §4.1, RFC 7636), then its
// Transport sends the bearer token, and Accept: application/json, to the tenant's API. Here an
// httptest server plays the tenant, and the example plays the browser that comes back to the
// redirect URI.
func ExampleNew() {
	tenant := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/oauth/token": // the code exchange
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"access_token":"at_example","refresh_token":"rt_example","token_type":"Bearer","expires_in":900}`)
		case "/api/v1/auth/user":
			fmt.Println("the API got", r.Header.Get("Authorization"), "and Accept", r.Header.Get("Accept"))
			_, _ = io.WriteString(w, `{"name":"Ada"}`)
		}
	}))
	defer tenant.Close()

	manager, err := tokenmanager.New(tokenmanager.Config{
		BaseURL:     tenant.URL, // https, or http to a loopback host
		ClientID:    "my-cli",
		RedirectURI: "http://127.0.0.1:53682/callback",
		Scopes:      []scope.Scope{scope.ProfileRead},
	}) // tokens in memory; tokenmanager.WithStorage(filestorage or redisstorage) to share them
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_, err = manager.AccessToken(ctx)
	fmt.Println("before sign-in:", errors.Is(err, tokenmanager.ErrNotSignedIn))

	request, err := manager.BeginAuthorization(ctx) // request.URL is where the browser goes
	if err != nil {
		panic(err)
	}
	// The tenant approves and sends the browser back with a code and the state (loopback.SignIn
	// does this part for a command-line tool).
	authorize, _ := url.Parse(request.URL)
	callback := request.RedirectURI + "?code=the-code&state=" + url.QueryEscape(authorize.Query().Get("state"))
	if _, err := manager.CompleteAuthorization(ctx, callback); err != nil {
		panic(err)
	}

	client := &http.Client{Transport: manager.Transport(nil)}
	response, err := client.Get(manager.BaseURL() + "/api/v1/auth/user")
	if err != nil {
		panic(err)
	}
	defer response.Body.Close()
	fmt.Println(response.Status)
	// Output:
	// before sign-in: true
	// the API got Bearer at_example and Accept application/json
	// 200 OK
}
