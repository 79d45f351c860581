package tokenmanager_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// A server acting for many users keeps one session per user in one storage, each named by the
// app's own user id on every call. Here an httptest server plays the tenant (each code is its
// user's), and the example plays two browsers coming back to the redirect URI; on a web server,
// package signinhttp gives the start and the callback as http.Handlers.
func ExampleNewSessions() {
	tenant := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/oauth/token": // the code exchange: the code names the tenant's user
			raw, _ := io.ReadAll(r.Body)
			user := strings.Split(strings.Split(string(raw), `"code":"`)[1], `"`)[0]
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"access_token":"at_%s","refresh_token":"rt_%s","token_type":"Bearer","expires_in":900}`, user, user)
		case "/api/v1/auth/user":
			_, _ = fmt.Fprintf(w, `{"name":%q}`, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer at_"))
		}
	}))
	defer tenant.Close()

	sessions, err := tokenmanager.NewSessions(tokenmanager.Config{
		BaseURL:     tenant.URL,
		ClientID:    "my-web-app",
		RedirectURI: "https://app.example.org/tenant/callback",
		Scopes:      []scope.Scope{scope.ProfileRead},
	}) // tokens in memory; tokenmanager.WithStorage(filestorage or redisstorage) for several processes
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, user := range []string{"ada", "grace"} { // the app's own user ids
		signIn, err := sessions.BeginSignIn(ctx, user, "") // "": a new browser binding, in signIn.Binding
		if err != nil {
			panic(err)
		}
		authorize, _ := url.Parse(signIn.URL) // where the browser goes
		callback := signIn.RedirectURI + "?code=" + user + "&state=" + url.QueryEscape(authorize.Query().Get("state"))
		signedIn, err := sessions.CompleteSignIn(ctx, tokenmanager.Callback{URL: callback, Binding: signIn.Binding, SessionID: user})
		if err != nil {
			panic(err)
		}
		fmt.Println("signed in:", signedIn.SessionID)
	}
	for _, user := range []string{"grace", "ada"} {
		client, err := sessions.Client(user) // the session's *http.Client: its bearer token, refreshed as needed
		if err != nil {
			panic(err)
		}
		response, err := client.Get(tenant.URL + "/api/v1/auth/user")
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(response.Body)
		response.Body.Close()
		fmt.Println(user, "sees", string(body))
	}
	// Output:
	// signed in: ada
	// signed in: grace
	// grace sees {"name":"grace"}
	// ada sees {"name":"ada"}
}
