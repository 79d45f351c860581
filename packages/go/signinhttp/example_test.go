package signinhttp_test

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/signinhttp"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// The sign-in of a web app whose users each connect their own tenant account: Start for the
// "Connect" button, Callback at the redirect URI's path. The session id is the app's logged-in user,
// from the app's own login (here a cookie its login handler sets), never from the request's query.
func ExampleNew() {
	sessions, err := tokenmanager.NewSessions(tokenmanager.Config{
		BaseURL:     "https://acme.tenant.test",
		ClientID:    "my-web-app",
		RedirectURI: "https://app.example.org/tenant/callback",
		Scopes:      []scope.Scope{scope.ProfileRead},
	})
	if err != nil {
		panic(err)
	}
	handlers, err := signinhttp.New(sessions, signinhttp.Options{
		SessionOf: func(r *http.Request) (string, error) {
			cookie, err := r.Cookie("app-user") // the app's own login: sign it, or keep a server session
			if err != nil {
				return "", errors.New("not logged in")
			}
			return cookie.Value, nil
		},
		AfterSignIn: "/account",
		OnError:     func(r *http.Request, err error) { slog.Warn("tenant sign-in failed", "error", err) },
	})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /tenant/connect", handlers.Start)
	mux.Handle("GET /tenant/callback", handlers.Callback)
	fmt.Println("the binding cookie:", signinhttp.CookieName)
	// Output: the binding cookie: __Host-tenant-signin
}
