package signinhttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/internal/tokenstoreschema"
	"github.com/tenant-integration/sdk/packages/go/signinhttp"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// tenant answers the code exchange with tokens of the user its code names (code-<user>).
type tenant struct {
	*httptest.Server
	exchanges atomic.Int32
	mu        sync.Mutex
	users     map[string]string
}

func newTenant(t *testing.T) *tenant {
	tn := &tenant{users: map[string]string{}}
	tn.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tn.mu.Lock()
		defer tn.mu.Unlock()
		if r.URL.Path == "/api/v1/auth/user" {
			fmt.Fprintf(w, `{"id":%q}`, tn.users[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")])
			return
		}
		tn.exchanges.Add(1)
		var body map[string]string
		_ = json.NewDecoder(r.Body).Decode(&body)
		user := strings.TrimPrefix(body["code"], "code-")
		access := fmt.Sprintf("at_%d_%s_secret", len(tn.users), user)
		tn.users[access] = user
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":%q,"refresh_token":"rt_%d_secret_refresh","token_type":"Bearer","expires_in":900}`, access, len(tn.users))
	}))
	t.Cleanup(tn.Close)
	return tn
}

// app is a server with its own login: the user is the "user" cookie's value.
type app struct {
	sessions *tokenmanager.Sessions
	handlers *signinhttp.Handlers
	errs     []error
	mu       sync.Mutex
}

func loggedIn(r *http.Request) (string, error) {
	cookie, err := r.Cookie("user")
	if err != nil {
		return "", errors.New("nobody is logged in")
	}
	return cookie.Value, nil
}

func newApp(t *testing.T, tn *tenant, redirect string, opts ...tokenmanager.Option) *app {
	sessions, err := tokenmanager.NewSessions(tokenmanager.Config{BaseURL: tn.URL, ClientID: "demo", RedirectURI: redirect,
		Scopes: []scope.Scope{scope.ProfileRead}}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	a := &app{sessions: sessions}
	a.handlers, err = signinhttp.New(sessions, signinhttp.Options{SessionOf: loggedIn, AfterSignIn: "/home",
		OnError: func(_ *http.Request, err error) { a.mu.Lock(); a.errs = append(a.errs, err); a.mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// browser is a cookie jar of its own.
type browser map[string]string

func (b browser) do(t *testing.T, handler http.Handler, method, target string) *http.Response {
	t.Helper()
	request := httptest.NewRequest(method, target, nil)
	for name, value := range b {
		request.AddCookie(&http.Cookie{Name: name, Value: value})
	}
	recorder := httptest.NewRecorder()
	handler.ServeHTTP(recorder, request)
	response := recorder.Result()
	for _, cookie := range response.Cookies() {
		b[cookie.Name] = cookie.Value
	}
	return response
}

// start begins a sign-in in the browser, and returns the callback URL the tenant would send it to
// for its user.
func start(t *testing.T, a *app, b browser, user string) string {
	t.Helper()
	response := b.do(t, a.handlers.Start, http.MethodPost, "http://app.test/connect")
	if response.StatusCode != http.StatusSeeOther {
		body, _ := io.ReadAll(response.Body)
		t.Fatalf("start: %d %s", response.StatusCode, body)
	}
	authorize, _ := url.Parse(response.Header.Get("Location"))
	return a.sessions.RedirectURI() + "?code=code-" + user + "&state=" + url.QueryEscape(authorize.Query().Get("state"))
}

func TestTheStartHandlerSetsTheBindingCookieOfTheSharedVectors(t *testing.T) {
	tn := newTenant(t)
	for _, v := range tokenstoreschema.ReadVectors(t).Cookies {
		a := newApp(t, tn, v.RedirectURI, tokenmanager.WithPendingLifetime(time.Duration(v.PendingLifetimeMs)*time.Millisecond))
		response := browser{"user": "ada"}.do(t, a.handlers.Start, http.MethodGet, "http://app.test/connect")
		cookies := response.Cookies()
		if len(cookies) != 1 {
			t.Fatalf("%s: cookies %v", v.RedirectURI, cookies)
		}
		c := cookies[0]
		if c.Name != v.Name || c.Path != v.Path || c.MaxAge != v.MaxAge || c.HttpOnly != v.HTTPOnly || c.Secure != v.Secure ||
			c.SameSite != http.SameSiteLaxMode || v.SameSite != "Lax" || len(c.Value) != 43 || c.Domain != "" {
			t.Errorf("%s: %s", v.RedirectURI, c.String())
		}
		if response.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: Cache-Control %q", v.RedirectURI, response.Header.Get("Cache-Control"))
		}
	}
}

func TestAValidBindingCookieIsReusedAndAnyOtherValueReplaced(t *testing.T) {
	tn := newTenant(t)
	a := newApp(t, tn, "http://127.0.0.1:8080/callback")
	for _, v := range tokenstoreschema.ReadVectors(t).BindingCookieValues {
		b := browser{"user": "ada", "tenant-signin": v.Value}
		b.do(t, a.handlers.Start, http.MethodPost, "http://app.test/connect")
		if reused := b["tenant-signin"] == v.Value; reused != v.Valid {
			t.Errorf("%q reused: %v", v.Value, reused)
		}
	}
}

func TestTwoTabsOfOneBrowserBothCompleteAndTheSessionIsTheLoggedInUsers(t *testing.T) {
	tn := newTenant(t)
	a := newApp(t, tn, "http://127.0.0.1:8080/callback")
	b := browser{"user": "ada"}
	first, second := start(t, a, b, "ada-tenant-1"), start(t, a, b, "ada-tenant-2")
	for _, callback := range []string{second, first} {
		response := b.do(t, a.handlers.Callback, http.MethodGet, callback)
		if response.StatusCode != http.StatusSeeOther || response.Header.Get("Location") != "/home" {
			body, _ := io.ReadAll(response.Body)
			t.Fatalf("callback: %d %s %v", response.StatusCode, body, a.errs)
		}
	}
	client, _ := a.sessions.Client("ada")
	response, err := client.Get(tn.URL + "/api/v1/auth/user")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(response.Body)
	if string(body) != `{"id":"ada-tenant-1"}` {
		t.Fatalf("ada's session: %s", body)
	}
}

func TestACallbackReplayedInAnotherBrowserIsRefusedBeforeAnyExchange(t *testing.T) {
	tn := newTenant(t)
	a := newApp(t, tn, "http://127.0.0.1:8080/callback")
	attacker := browser{"user": "mallory"}
	for _, victim := range []browser{{"user": "ada"}, {"user": "ada", "tenant-signin": tokenmanager.NewBinding()}, {"user": "mallory"}} {
		callback := start(t, a, attacker, "mallory-tenant")
		response := victim.do(t, a.handlers.Callback, http.MethodGet, callback)
		body, _ := io.ReadAll(response.Body)
		if response.StatusCode != http.StatusBadRequest || strings.Contains(string(body), "state=") || strings.Contains(string(body), "code-") {
			t.Fatalf("%d %s", response.StatusCode, body)
		}
	}
	if tn.exchanges.Load() != 0 {
		t.Fatalf("%d exchanges", tn.exchanges.Load())
	}
	if len(a.errs) != 3 {
		t.Fatalf("OnError got %v", a.errs)
	}
	for _, err := range a.errs {
		if !errors.Is(err, tokenmanager.ErrStateMismatch) || !strings.Contains(err.Error(), "another browser") {
			t.Fatalf("OnError got %v", err)
		}
	}
	if signedIn, _ := a.sessions.IsSignedIn(context.Background(), "ada"); signedIn {
		t.Fatal("the victim's session holds the attacker's account")
	}
}

// One browser, whose app login changed between the start and the callback.
func TestACallbackIsRefusedWhenTheLoggedInUserIsNotTheOneWhoStartedIt(t *testing.T) {
	tn := newTenant(t)
	a := newApp(t, tn, "http://127.0.0.1:8080/callback")
	b := browser{"user": "ada"}
	callback := start(t, a, b, "ada-tenant")
	b["user"] = "grace"
	if response := b.do(t, a.handlers.Callback, http.MethodGet, callback); response.StatusCode != http.StatusBadRequest {
		t.Fatalf("%d", response.StatusCode)
	}
	delete(b, "user")
	callback = start(t, a, browser{"user": "ada", "tenant-signin": b["tenant-signin"]}, "ada-tenant")
	if response := b.do(t, a.handlers.Callback, http.MethodGet, callback); response.StatusCode != http.StatusUnauthorized {
		t.Fatalf("logged out: %d", response.StatusCode)
	}
	if tn.exchanges.Load() != 0 {
		t.Fatalf("%d exchanges", tn.exchanges.Load())
	}
}

func TestTheSessionIsNeverTakenFromTheQuery(t *testing.T) {
	tn := newTenant(t)
	a := newApp(t, tn, "http://127.0.0.1:8080/callback")
	b := browser{"user": "ada"}
	response := b.do(t, a.handlers.Start, http.MethodGet, "http://app.test/connect?session=grace&sessionId=grace")
	authorize, _ := url.Parse(response.Header.Get("Location"))
	callback := a.sessions.RedirectURI() + "?code=code-x&state=" + url.QueryEscape(authorize.Query().Get("state")) + "&session=grace"
	b.do(t, a.handlers.Callback, http.MethodGet, callback)
	ada, _ := a.sessions.IsSignedIn(context.Background(), "ada")
	grace, _ := a.sessions.IsSignedIn(context.Background(), "grace")
	if !ada || grace {
		t.Fatalf("ada %v, grace %v", ada, grace)
	}
}

func TestStartWithoutALoggedInUserIsUnauthorizedAndStoresNothing(t *testing.T) {
	tn := newTenant(t)
	storage := tokenmanager.NewMemoryStorage()
	a := newApp(t, tn, "http://127.0.0.1:8080/callback", tokenmanager.WithStorage(storage))
	response := browser{}.do(t, a.handlers.Start, http.MethodPost, "http://app.test/connect")
	if response.StatusCode != http.StatusUnauthorized || len(response.Cookies()) != 0 {
		t.Fatalf("%d %v", response.StatusCode, response.Cookies())
	}
	response = browser{"user": "a:b"}.do(t, a.handlers.Start, http.MethodPost, "http://app.test/connect")
	if response.StatusCode != http.StatusBadRequest || len(a.errs) != 2 || !errors.Is(a.errs[1], tokenmanager.ErrInvalidSessionID) {
		t.Fatalf("a bad id: %d %v", response.StatusCode, a.errs)
	}
	if response := (browser{"user": "ada"}).do(t, a.handlers.Start, http.MethodPut, "http://app.test/connect"); response.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("PUT: %d", response.StatusCode)
	}
	if value, ok, _ := storage.Get(context.Background(), "anything"); ok || value != "" {
		t.Fatal("written")
	}
}

// Behind a proxy: the callback URL is the configured redirect URI, whatever Host and X-Forwarded-*
// say, and the callback answers only at its path.
func TestTheCallbackURLIsTheConfiguredRedirectURINeverTheRequestsHost(t *testing.T) {
	tn := newTenant(t)
	a := newApp(t, tn, "https://app.example.org/tenant/callback")
	b := browser{"user": "ada"}
	callback := start(t, a, b, "ada-tenant")
	query := callback[strings.Index(callback, "?"):]
	request := httptest.NewRequest(http.MethodGet, "http://10.0.0.7:8080/tenant/callback"+query, nil)
	request.Header.Set("X-Forwarded-Host", "evil.example")
	request.Header.Set("X-Forwarded-Proto", "http")
	request.AddCookie(&http.Cookie{Name: "user", Value: "ada"})
	request.AddCookie(&http.Cookie{Name: signinhttp.CookieName, Value: b[signinhttp.CookieName]})
	recorder := httptest.NewRecorder()
	a.handlers.Callback.ServeHTTP(recorder, request)
	if recorder.Code != http.StatusSeeOther {
		t.Fatalf("%d %s %v", recorder.Code, recorder.Body, a.errs)
	}
	if response := b.do(t, a.handlers.Callback, http.MethodGet, "https://app.example.org/other"+query); response.StatusCode != http.StatusNotFound {
		t.Fatalf("another path: %d", response.StatusCode)
	}
}

func TestNewRefusesWhatWouldFailLater(t *testing.T) {
	tn := newTenant(t)
	a := newApp(t, tn, "http://127.0.0.1:8080/callback")
	if _, err := signinhttp.New(nil, signinhttp.Options{SessionOf: loggedIn}); !errors.Is(err, tokenmanager.ErrInvalidOptions) {
		t.Errorf("no sessions: %v", err)
	}
	if _, err := signinhttp.New(a.sessions, signinhttp.Options{}); !errors.Is(err, tokenmanager.ErrInvalidOptions) {
		t.Errorf("no SessionOf: %v", err)
	}
}
