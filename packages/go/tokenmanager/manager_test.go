package tokenmanager

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
	answer    func(w http.ResponseWriter) bool // a fault: true when it answered
	bodies    []string
}

func newTenant(t *testing.T) *tenant {
	tn := &tenant{live: map[string]bool{}}
	tn.Server = httptest.NewServer(http.HandlerFunc(tn.serve))
	t.Cleanup(tn.Close)
	return tn
}

func (tn *tenant) serve(w http.ResponseWriter, r *http.Request) {
	tn.requests.Add(1)
	raw, _ := io.ReadAll(r.Body)
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
	case "/oauth/token":
	default:
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("Content-Type") != "application/json" {
		w.WriteHeader(http.StatusUnsupportedMediaType)
		return
	}
	var body map[string]string
	_ = json.Unmarshal(raw, &body)
	if body["grant_type"] == "refresh_token" {
		tn.refreshes.Add(1)
		if !tn.live[body["refresh_token"]] {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
			return
		}
		delete(tn.live, body["refresh_token"])
	} else if body["code"] != "the-code-0123456789" || len(body["code_verifier"]) != 64 {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
		return
	}
	tn.issued++
	refresh := fmt.Sprintf("rt_%04d_secret_refresh", tn.issued)
	tn.live[refresh] = true
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"access_token":"at_%04d_secret_access","refresh_token":%q,"token_type":"Bearer","expires_in":900}`, tn.issued, refresh)
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
	m, err := New(Config{BaseURL: tn.URL, ClientID: "c", RedirectURI: "http://127.0.0.1:53682/callback", Scopes: []scope.Scope{scope.ProfileRead}}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return m, c
}

// callbackFor plays the tenant's authorize step: the redirect URI with the state and a code.
func callbackFor(t *testing.T, request *AuthorizationRequest) string {
	u, err := url.Parse(request.URL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("response_type") != "code" || q.Get("scope") != "profile:read" {
		t.Fatalf("authorize URL lacks a parameter: %v", q)
	}
	return "http://127.0.0.1:53682/callback?code=the-code-0123456789&state=" + url.QueryEscape(q.Get("state"))
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

func TestSignsInAndRefreshesOnceAfterExpiryOnTheInjectedClock(t *testing.T) {
	tn := newTenant(t)
	var logs bytes.Buffer
	m, c := newManager(t, tn, &logs)
	signIn(t, m)
	ctx := context.Background()
	first, err := m.AccessToken(ctx)
	if err != nil || first != "at_0001_secret_access" {
		t.Fatalf("token %q, %v", first, err)
	}
	c.Advance(14*time.Minute + time.Second) // within the 60 s leeway of the 15 min lifetime: refreshed
	second, err := m.AccessToken(ctx)
	if err != nil || second != "at_0002_secret_access" || tn.refreshes.Load() != 1 {
		t.Fatalf("token %q, %v, %d refreshes", second, err, tn.refreshes.Load())
	}
	if strings.Contains(logs.String(), "secret") || strings.Contains(logs.String(), "the-code") {
		t.Fatalf("a log line holds a secret:\n%s", logs.String())
	}
}

func TestTwentyGoroutinesAfterExpiryMakeOneRefresh(t *testing.T) {
	tn := newTenant(t)
	m, c := newManager(t, tn, nil)
	signIn(t, m)
	c.Advance(16 * time.Minute)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := m.AccessToken(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if tn.refreshes.Load() != 1 {
		t.Fatalf("%d refreshes", tn.refreshes.Load())
	}
}

func TestRejectsACallbackWhoseStateDiffersByOneCharacterBeforeAnyRequest(t *testing.T) {
	tn := newTenant(t)
	m, _ := newManager(t, tn, nil)
	request, _ := m.BeginAuthorization(context.Background())
	callback := callbackFor(t, request)
	last := callback[len(callback)-1]
	swapped := byte('A')
	if last == 'A' {
		swapped = 'B'
	}
	_, err := m.CompleteAuthorization(context.Background(), callback[:len(callback)-1]+string(swapped))
	if !errors.Is(err, ErrStateMismatch) || tn.requests.Load() != 0 {
		t.Fatalf("err %v, %d requests", err, tn.requests.Load())
	}
	// Single use: the pending sign-in is gone, even with the right state.
	if _, err := m.CompleteAuthorization(context.Background(), callback); !errors.Is(err, ErrNoPendingSignIn) {
		t.Fatalf("second use: %v", err)
	}
}

func TestRefusesACallbackAtAnotherURIBeforeTakingThePendingSignIn(t *testing.T) {
	tn := newTenant(t)
	m, _ := newManager(t, tn, nil)
	request, _ := m.BeginAuthorization(context.Background())
	callback := callbackFor(t, request)
	if _, err := m.CompleteAuthorization(context.Background(), strings.Replace(callback, "/callback", "/other", 1)); !errors.Is(err, ErrInvalidCallback) {
		t.Fatalf("err %v", err)
	}
	if _, err := m.CompleteAuthorization(context.Background(), callback); err != nil {
		t.Fatalf("the right callback after a wrong one: %v", err)
	}
}

func TestInvalidGrantEndsTheSessionAndClearsTheTokens(t *testing.T) {
	tn := newTenant(t)
	var events []EventKind
	m, c := newManager(t, tn, nil, WithOnChange(func(e Event) { events = append(events, e.Kind) }))
	signIn(t, m)
	tn.mu.Lock()
	tn.live = map[string]bool{} // the tenant revoked the family
	tn.mu.Unlock()
	c.Advance(16 * time.Minute)
	_, err := m.AccessToken(context.Background())
	var failure *Error
	if !errors.Is(err, ErrSessionEnded) || !errors.As(err, &failure) || failure.Status != 400 || failure.OAuthError != "invalid_grant" {
		t.Fatalf("err %#v", err)
	}
	if signedIn, _ := m.IsSignedIn(context.Background()); signedIn {
		t.Fatal("still signed in")
	}
	if events[len(events)-1] != EventSessionEnded {
		t.Fatalf("events %v", events)
	}
}

func TestA503IsRetriedAndA500KeepsTheTokensWithoutARetry(t *testing.T) {
	tn := newTenant(t)
	m, c := newManager(t, tn, nil)
	signIn(t, m)
	c.Advance(16 * time.Minute)
	failures := 1
	tn.mu.Lock()
	tn.answer = func(w http.ResponseWriter) bool {
		if failures == 0 {
			return false
		}
		failures--
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	}
	tn.mu.Unlock()
	if _, err := m.AccessToken(context.Background()); err != nil {
		t.Fatalf("after one 503: %v", err)
	}
	c.Advance(16 * time.Minute)
	tn.mu.Lock()
	before := tn.requests.Load()
	tn.answer = func(w http.ResponseWriter) bool { w.WriteHeader(http.StatusInternalServerError); return true }
	tn.mu.Unlock()
	_, err := m.AccessToken(context.Background())
	if !errors.Is(err, ErrTransient) || tn.requests.Load() != before+1 {
		t.Fatalf("err %v, %d requests", err, tn.requests.Load()-before)
	}
	if signedIn, _ := m.IsSignedIn(context.Background()); !signedIn {
		t.Fatal("the tokens were dropped")
	}
}

func TestRevokeSendsAFormAndClearsTheSession(t *testing.T) {
	tn := newTenant(t)
	m, _ := newManager(t, tn, nil)
	signIn(t, m)
	if err := m.Revoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	tn.mu.Lock()
	last := tn.bodies[len(tn.bodies)-1]
	tn.mu.Unlock()
	if !strings.Contains(last, "token_type_hint=access_token") || !strings.Contains(last, "client_id=c") {
		t.Fatalf("revoke body %q", last)
	}
	if _, err := m.AccessToken(context.Background()); !errors.Is(err, ErrNotSignedIn) {
		t.Fatalf("after revoke: %v", err)
	}
}

func TestTheTransportAddsTheTokenOnlyForTheTenantAndRetriesOnceAfter401(t *testing.T) {
	tn := newTenant(t)
	m, _ := newManager(t, tn, nil)
	signIn(t, m)
	var seen []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusOK)
	}))
	defer api.Close()
	client := &http.Client{Transport: m.Transport(nil)}
	response, err := client.Get(api.URL + "/elsewhere") // another origin: no token
	if err != nil {
		t.Fatal(err)
	}
	response.Body.Close()
	if seen[0] != "" {
		t.Fatal("the token went to another origin")
	}
	// 401 from the tenant: refreshed once and sent again.
	calls := 0
	tn.mu.Lock()
	tn.answer = func(w http.ResponseWriter) bool {
		calls++
		if calls == 1 {
			w.WriteHeader(http.StatusUnauthorized)
			return true
		}
		return false
	}
	tn.mu.Unlock()
	request, _ := http.NewRequest(http.MethodGet, tn.URL+"/oauth/revoke", nil)
	response, err = client.Do(request)
	if err != nil || response.StatusCode != 200 || tn.refreshes.Load() != 1 {
		t.Fatalf("status %v, err %v, %d refreshes", response, err, tn.refreshes.Load())
	}
	response.Body.Close()
	token, err := m.Token()
	if err != nil || token.AccessToken != "at_0002_secret_access" || token.TokenType != "Bearer" {
		t.Fatalf("oauth2 token %v, %v", token, err)
	}
}

func TestRecordsAreWrittenAsTheOtherKitsWriteThem(t *testing.T) {
	tn := newTenant(t)
	storage := NewMemoryStorage()
	m, _ := newManager(t, tn, nil, WithStorage(storage))
	signIn(t, m)
	raw, ok, _ := storage.Get(context.Background(), "tenant-integration:"+tn.URL+":c:tokens")
	if !ok {
		t.Fatal("no record")
	}
	keys := []string{`{"access_token":`, `,"refresh_token":`, `,"token_type":"Bearer","expires_in":900,"received_at":`, `,"id":`, `,"session":`, `,"seq":0}`}
	at := 0
	for _, key := range keys {
		i := strings.Index(raw[at:], key)
		if i < 0 {
			t.Fatalf("record %q lacks %q in order", strings.ReplaceAll(raw, "secret", "…"), key)
		}
		at += i + len(key)
	}
	record := parseRecord(raw, true)
	if record == nil || record.ID != record.Session || len(record.ID) != 43 {
		t.Fatal("record does not parse back")
	}
}

func TestInvalidOptionsAreRefused(t *testing.T) {
	for _, config := range []Config{
		{BaseURL: "http://acme.example", ClientID: "c", RedirectURI: "http://127.0.0.1/cb", Scopes: []scope.Scope{scope.ProfileRead}},
		{BaseURL: "https://acme.example/api/v1", ClientID: "c", RedirectURI: "http://127.0.0.1/cb", Scopes: []scope.Scope{scope.ProfileRead}},
		{BaseURL: "https://acme.example", ClientID: "c", RedirectURI: "http://127.0.0.1/cb", Scopes: []scope.Scope{"profile:write"}},
	} {
		if _, err := New(config); !errors.Is(err, ErrInvalidOptions) {
			t.Fatalf("%v: %v", config, err)
		}
	}
}

// oauth2.NewClient wraps a TokenSource in oauth2.ReuseTokenSource, which keeps a token until its
// Expiry and a zero Expiry forever: the manager's tokens must carry when it stops serving them.
func TestTokensCarryTheirExpirySoOAuth2ReuseTokenSourceAsksAgain(t *testing.T) {
	tn := newTenant(t)
	m, c := newManager(t, tn, nil)
	signIn(t, m)
	within := func(got time.Time, want time.Duration) {
		t.Helper()
		if left := time.Until(got); left > want+time.Second || left < want-5*time.Second {
			t.Fatalf("expiry in %v, want about %v", left, want)
		}
	}
	token, err := m.Token()
	if err != nil {
		t.Fatal(err)
	}
	within(token.Expiry, 14*time.Minute) // 15 min lifetime minus the 60 s leeway
	c.Advance(10 * time.Minute)
	if token, err = m.Token(); err != nil {
		t.Fatal(err)
	}
	within(token.Expiry, 4*time.Minute)
	if token.AccessToken != "at_0001_secret_access" || tn.refreshes.Load() != 0 {
		t.Fatalf("token %q after %d refreshes", token.AccessToken, tn.refreshes.Load())
	}
}
