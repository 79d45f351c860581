package loopback_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/loopback"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// SignIn listens on the port of the manager's loopback redirect URI, shows the authorize URL
// (WithOpenBrowser, else it prints it), waits for the browser to come back and completes the
// sign-in. Here an httptest server plays the tenant, which approves at once, and an http.Get plays
// the browser.
func ExampleSignIn() {
	tenant := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/oauth/authorize": // approve: back to the redirect URI with a code and the state
			query := r.URL.Query()
			back := query.Get("redirect_uri") + "?code=the-code&state=" + query.Get("state")
			if query.Get("state") == "" { // the redirect check asks without a state: no approval
				back = query.Get("redirect_uri") + "?error=invalid_request"
			}
			http.Redirect(w, r, back, http.StatusFound)
		case "/oauth/token":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"access_token":"at_example","refresh_token":"rt_example","token_type":"Bearer","expires_in":900}`)
		}
	}))
	defer tenant.Close()

	manager, err := tokenmanager.New(tokenmanager.Config{
		BaseURL:     tenant.URL,
		ClientID:    "my-cli",
		RedirectURI: fmt.Sprintf("http://127.0.0.1:%d/callback", freePort()), // the port registered with the tenant
		Scopes:      []scope.Scope{scope.ProfileRead},
	})
	if err != nil {
		panic(err)
	}
	pages := make(chan string, 1)
	browser := func(authorizeURL string) error { // runs in a goroutine of its own
		response, err := http.Get(authorizeURL) // follows the tenant's redirect to the loopback server
		if err != nil {
			return err
		}
		defer response.Body.Close()
		page, _ := io.ReadAll(response.Body)
		pages <- string(page)
		return nil
	}
	if _, err := loopback.SignIn(context.Background(), manager, loopback.WithOpenBrowser(browser)); err != nil {
		panic(err) // CALLBACK_PORT_IN_USE, REDIRECT_URI_REFUSED, TRANSIENT, CALLBACK_TIMEOUT…
	}
	signedIn, _ := manager.IsSignedIn(context.Background())
	fmt.Println("signed in:", signedIn)
	fmt.Println("the browser shows:", <-pages)
	// Output:
	// signed in: true
	// the browser shows: Signed in. You can close this window and return to the terminal.
}

// freePort is a loopback port nothing listens on (a real client registers a fixed one).
func freePort() int {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer listener.Close()
	return listener.Addr().(*net.TCPAddr).Port
}
