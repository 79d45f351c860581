// Command example-go-server is a tiny web app whose users each connect their own tenant account: a
// server acting for many users with the Go kit (tokenmanager.Sessions and signinhttp). It has a
// login of its own (pick a user name), a "Connect your tenant account" button, and a page showing
// GET /api/v1/auth/user of the tenant account connected by whoever is logged in.
//
//	PORT          the port to listen on, on 127.0.0.1 (default 8090)
//	TENANT_URL    the tenant (default http://127.0.0.1:4020, the sandbox `pnpm start` serves)
//	CLIENT_ID     the OAuth client (default demo-server)
//	REDIRECT_URI  the redirect URI registered for it (default http://127.0.0.1:<PORT>/callback)
//	TOKEN_FILE    keep the sessions in this token file (several processes may share it)
//	REDIS_URL     or in Redis, e.g. redis://127.0.0.1:6379/0 (several machines)
//
// Without TOKEN_FILE or REDIS_URL the sessions live in memory. Each of the app's users is one session
// of the kit, named by the user's name: every call names it, so no user is ever served another's
// tokens. Nothing here is the kit's own security model beyond the sign-in: the app's login takes a
// name without a password, as a demo.
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/filestorage"
	"github.com/tenant-integration/sdk/packages/go/redisstorage"
	"github.com/tenant-integration/sdk/packages/go/signinhttp"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

func main() {
	if err := run(); err != nil {
		slog.Error("example-go-server stopped", "error", err)
		os.Exit(1)
	}
}

func run() error {
	port := env("PORT", "8090")
	sessions, err := tokenmanager.NewSessions(tokenmanager.Config{
		BaseURL:     env("TENANT_URL", "http://127.0.0.1:4020"),
		ClientID:    env("CLIENT_ID", "demo-server"),
		RedirectURI: env("REDIRECT_URI", "http://127.0.0.1:"+port+"/callback"),
		Scopes:      []scope.Scope{scope.ProfileRead},
	}, tokenmanager.WithStorage(storage()), tokenmanager.WithLogger(slog.Default()))
	if err != nil {
		return err
	}
	a := &app{sessions: sessions, logins: map[string]string{}, tenant: env("TENANT_URL", "http://127.0.0.1:4020")}
	signIn, err := signinhttp.New(sessions, signinhttp.Options{
		SessionOf: a.userOf, // the app's logged-in user names the session, never the request's query
		OnError: func(r *http.Request, err error) {
			slog.Warn("tenant sign-in refused", "path", r.URL.Path, "error", err)
		},
	})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", a.home)
	mux.HandleFunc("POST /login", a.login)
	mux.HandleFunc("POST /logout", a.logout)
	mux.Handle("POST /connect", signIn.Start)
	mux.Handle("GET /callback", signIn.Callback)
	mux.HandleFunc("POST /disconnect", a.disconnect)
	server := &http.Server{Addr: "127.0.0.1:" + port, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()
	fmt.Printf("example-go-server listening on http://127.0.0.1:%s\n", port)
	if err := server.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func env(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}

// storage is where the sessions live: a token file, Redis, or memory.
func storage() tokenmanager.Storage {
	if path := os.Getenv("TOKEN_FILE"); path != "" {
		file, err := filestorage.New(path)
		if err != nil {
			panic(err)
		}
		return file
	}
	if address := os.Getenv("REDIS_URL"); address != "" {
		options, err := redis.ParseURL(address)
		if err != nil {
			panic(err)
		}
		store, err := redisstorage.New(redis.NewClient(options), redisstorage.WithPrefix("example-go-server:"))
		if err != nil {
			panic(err)
		}
		return store
	}
	return tokenmanager.NewMemoryStorage()
}

// app is the web app: its own login (a cookie naming a server-side login), and its pages.
type app struct {
	sessions *tokenmanager.Sessions
	tenant   string
	mu       sync.Mutex
	logins   map[string]string // the app's login cookie value → the user's name
}

// loginCookie holds the app's own login: a random value naming a login kept on the server.
const loginCookie = "app-login"

// userName is the form of a user's name here: it is the session id of the user's tenant account,
// so it must fit the kit's rule (tokenmanager.CheckSessionID), which this stricter one does.
var userName = regexp.MustCompile(`^[a-z0-9]{1,32}$`)

// userOf is the logged-in user of the request: signinhttp's SessionOf.
func (a *app) userOf(r *http.Request) (string, error) {
	cookie, err := r.Cookie(loginCookie)
	if err != nil {
		return "", errors.New("not logged in to the app")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if user, ok := a.logins[cookie.Value]; ok {
		return user, nil
	}
	return "", errors.New("not logged in to the app")
}

func (a *app) login(w http.ResponseWriter, r *http.Request) {
	name := r.PostFormValue("user")
	if !userName.MatchString(name) {
		http.Error(w, "a user name is 1 to 32 lowercase letters and digits", http.StatusBadRequest)
		return
	}
	random := make([]byte, 32)
	_, _ = rand.Read(random)
	value := base64.RawURLEncoding.EncodeToString(random)
	a.mu.Lock()
	a.logins[value] = name
	a.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (a *app) logout(w http.ResponseWriter, r *http.Request) {
	if cookie, err := r.Cookie(loginCookie); err == nil {
		a.mu.Lock()
		delete(a.logins, cookie.Value)
		a.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Path: "/", MaxAge: -1})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// disconnect revokes the logged-in user's tenant session (RFC 7009) and forgets it.
func (a *app) disconnect(w http.ResponseWriter, r *http.Request) {
	user, err := a.userOf(r)
	if err != nil {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if err := a.sessions.Revoke(r.Context(), user); err != nil {
		slog.Warn("revocation failed", "error", err)
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// page is what the home page shows.
type page struct {
	User       string // the app's logged-in user, "" when none
	Connected  bool
	TenantUser string // GET /api/v1/auth/user of the user's tenant account, as JSON
	Problem    string
}

func (a *app) home(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	var p page
	if user, err := a.userOf(r); err == nil {
		p.User = user
		p.Connected, p.TenantUser, p.Problem = a.tenantUser(r.Context(), user)
	}
	if err := home.Execute(w, p); err != nil {
		slog.Error("rendering the page", "error", err)
	}
}

// tenantUser asks the tenant who the user's connected account is, through the user's own session.
func (a *app) tenantUser(ctx context.Context, user string) (connected bool, record, problem string) {
	if signedIn, err := a.sessions.IsSignedIn(ctx, user); err != nil || !signedIn {
		return false, "", ""
	}
	client, err := a.sessions.Client(user)
	if err != nil {
		return false, "", err.Error()
	}
	request, _ := http.NewRequestWithContext(ctx, http.MethodGet, a.tenant+"/api/v1/auth/user", nil)
	response, err := client.Do(request)
	if errors.Is(err, tokenmanager.ErrSessionEnded) || errors.Is(err, tokenmanager.ErrNotSignedIn) {
		return false, "", "the tenant session ended: connect again"
	}
	if err != nil {
		return true, "", err.Error()
	}
	defer response.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(response.Body, 1<<16))
	if response.StatusCode != http.StatusOK {
		return true, "", fmt.Sprintf("the tenant answered %s", response.Status)
	}
	var pretty any
	if json.Unmarshal(body, &pretty) == nil {
		indented, _ := json.MarshalIndent(pretty, "", "  ")
		body = indented
	}
	return true, string(body), ""
}

var home = template.Must(template.New("home").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Example Go server</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}pre{background:#f4f4f4;padding:1rem}</style>
</head>
<body>
<h1>Example Go server</h1>
{{if not .User}}
<form method="post" action="/login">
  <p><label for="user">User name</label> <input id="user" name="user" data-testid="login-name" pattern="[a-z0-9]{1,32}" required></p>
  <button type="submit" data-testid="login">Log in</button>
</form>
{{else}}
<p>Logged in to this app as <strong data-testid="app-user">{{.User}}</strong>.</p>
{{if .Problem}}<p data-testid="problem">{{.Problem}}</p>{{end}}
{{if .Connected}}
<p>Your tenant account:</p>
<pre data-testid="tenant-user">{{.TenantUser}}</pre>
<form method="post" action="/disconnect"><button type="submit" data-testid="disconnect">Disconnect your tenant account</button></form>
{{else}}
<form method="post" action="/connect"><button type="submit" data-testid="connect">Connect your tenant account</button></form>
{{end}}
<form method="post" action="/logout"><button type="submit" data-testid="logout">Log out</button></form>
{{end}}
</body>
</html>
`))
