// Command server is a web app whose users each connect their own tenant account: one
// tokenmanager.Sessions for the whole server, one session per user of the app, named by the user's
// id on every call. (apps/example-go-server in the SDK's repository is the whole app, tested in a
// browser.)
package main

import (
	"errors"
	"io"
	"log"
	"log/slog"
	"net/http"

	"github.com/redis/go-redis/v9"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/redisstorage"
	"github.com/tenant-integration/sdk/packages/go/signinhttp"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

const tenant = "https://acme.tenant.test"

func main() {
	storage, err := redisstorage.New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"}))
	if err != nil {
		log.Fatal(err)
	}
	sessions, err := tokenmanager.NewSessions(tokenmanager.Config{
		BaseURL:     tenant,
		ClientID:    "my-web-app",
		RedirectURI: "https://app.example.org/tenant/callback", // the public URL, behind any proxy
		Scopes:      []scope.Scope{scope.ProfileRead},
	}, tokenmanager.WithStorage(storage))
	if err != nil {
		log.Fatal(err)
	}
	signIn, err := signinhttp.New(sessions, signinhttp.Options{
		SessionOf: userID, // the app's logged-in user: never a value of the query
		OnError:   func(r *http.Request, err error) { slog.Warn("tenant sign-in refused", "error", err) },
	})
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("POST /tenant/connect", signIn.Start)    // a "Connect your tenant account" button
	http.Handle("GET /tenant/callback", signIn.Callback) // the RedirectURI's path
	http.HandleFunc("GET /tenant/user", func(w http.ResponseWriter, r *http.Request) {
		user, err := userID(r)
		if err != nil {
			http.Error(w, "log in first", http.StatusUnauthorized)
			return
		}
		client, err := sessions.Client(user) // this user's tokens, refreshed as needed
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		request, err := http.NewRequestWithContext(r.Context(), http.MethodGet, tenant+"/api/v1/auth/user", nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		response, err := client.Do(request)
		if errors.Is(err, tokenmanager.ErrNotSignedIn) || errors.Is(err, tokenmanager.ErrSessionEnded) {
			http.Error(w, "connect your tenant account", http.StatusConflict)
			return
		}
		if err != nil {
			http.Error(w, "the tenant did not answer", http.StatusBadGateway)
			return
		}
		defer response.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.Copy(w, response.Body)
	})
	log.Fatal(http.ListenAndServe("127.0.0.1:8090", nil))
}

// userID is the id of the app's logged-in user, from the app's own login (a signed cookie, a server
// session): an id of 1 to 128 characters from A-Z a-z 0-9 - . _ ~ @ + = | (tokenmanager.CheckSessionID).
func userID(r *http.Request) (string, error) {
	if user, ok := r.Context().Value(loggedIn{}).(string); ok { // set by the app's login middleware
		return user, nil
	}
	return "", errors.New("not logged in")
}

type loggedIn struct{}
