package tokenmanager

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
)

// tenant is an httptest tenant with strict rotation: each refresh token is good once.
type tenant struct {
	*httptest.Server
	mu        sync.Mutex
	refreshes atomic.Int32
	requests  atomic.Int32
	issued    int
	live      map[string]bool
	users     map[string]string                // the user of each access and refresh token: the code's end
	answer    func(w http.ResponseWriter) bool // a fault: true when it answered
	bodies    []string
	hold      func(user string) // when set, called (without the lock) before a refresh of user's is answered
}

func newTenant(t *testing.T) *tenant {
	tn := &tenant{live: map[string]bool{}, users: map[string]string{}}
	tn.Server = httptest.NewServer(http.HandlerFunc(tn.serve))
	t.Cleanup(tn.Close)
	return tn
}

func (tn *tenant) serve(w http.ResponseWriter, r *http.Request) {
	tn.requests.Add(1)
	raw, _ := io.ReadAll(r.Body)
	var body map[string]string
	_ = json.Unmarshal(raw, &body)
	if hold := tn.hold; hold != nil && body["grant_type"] == "refresh_token" {
		tn.mu.Lock()
		user := tn.users[body["refresh_token"]]
		tn.mu.Unlock()
		hold(user)
	}
	tn.mu.Lock()
	defer tn.mu.Unlock()
	tn.bodies = append(tn.bodies, string(raw))
	if tn.answer != nil && tn.answer(w) {
		return
	}
	switch r.URL.Path {
	case "/oauth/revoke":
		w.WriteHeader(http.StatusOK)
		return
	case "/api/v1/auth/user":
		user, ok := tn.users[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = fmt.Fprintf(w, `{"id":%q}`, user)
		return
	case "/oauth/token":
	default:
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("Content-Type") != "application/json" {
		w.WriteHeader(http.StatusUnsupportedMediaType)
		return
	}
	var user string
	if body["grant_type"] == "refresh_token" {
		tn.refreshes.Add(1)
		if !tn.live[body["refresh_token"]] {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
			return
		}
		delete(tn.live, body["refresh_token"])
		user = tn.users[body["refresh_token"]]
	} else if !strings.HasPrefix(body["code"], "the-code-") || len(body["code_verifier"]) != 64 {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
		return
	} else {
		user = strings.TrimPrefix(body["code"], "the-code-")
	}
	tn.issued++
	access, refresh := fmt.Sprintf("at_%04d_secret_access", tn.issued), fmt.Sprintf("rt_%04d_secret_refresh", tn.issued)
	tn.live[refresh] = true
	tn.users[access], tn.users[refresh] = user, user
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"access_token":%q,"refresh_token":%q,"token_type":"Bearer","expires_in":900}`, access, refresh)
}

// userOf is the user the tenant issued token to ("" for a token it does not know).
func (tn *tenant) userOf(token string) string {
	tn.mu.Lock()
	defer tn.mu.Unlock()
	return tn.users[token]
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newManager(t *testing.T, tn *tenant, logs io.Writer, opts ...Option) (*Manager, *clock) {
	c := &clock{now: time.Now()}
	if logs == nil {
		logs = io.Discard
	}
	opts = append([]Option{WithClock(c.Now), WithRetryDelay(time.Millisecond),
		WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))}, opts...)
	m, err := New(testConfig(tn), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return m, c
}

// testScopes are the scopes of the tests' managers.
var testScopes = []scope.Scope{scope.ProfileRead}

// testConfig is the configuration of the tests' managers on tn.
func testConfig(tn *tenant) Config {
	return Config{BaseURL: tn.URL, ClientID: "c", RedirectURI: "http://127.0.0.1:53682/callback", Scopes: testScopes}
}

// callbackFor plays the tenant's authorize step: the redirect URI with the state and a code.
func callbackFor(t *testing.T, request *AuthorizationRequest) string {
	return callbackAs(t, request, "0123456789")
}

// callbackAs is callbackFor for a sign-in of the tenant's user: the tokens of its code are user's.
func callbackAs(t *testing.T, request *AuthorizationRequest, user string) string {
	u, err := url.Parse(request.URL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("response_type") != "code" || q.Get("scope") != "profile:read" {
		t.Fatalf("authorize URL lacks a parameter: %v", q)
	}
	return "http://127.0.0.1:53682/callback?code=the-code-" + user + "&state=" + url.QueryEscape(q.Get("state"))
}

func signIn(t *testing.T, m *Manager) {
	ctx := context.Background()
	request, err := m.BeginAuthorization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.CompleteAuthorization(ctx, callbackFor(t, request)); err != nil {
		t.Fatal(err)
	}
}
