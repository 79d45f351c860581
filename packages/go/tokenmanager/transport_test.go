package tokenmanager

// The bearer layer (Transport): which requests get the token and which token, the Accept header,
// the 401 replay and what a caller gets when no token can be had. Its per-call cost, alone and in
// the stack, is measured in ../transport/bench_test.go (BenchmarkTransportBearer, BenchmarkTransportKit).

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
)

// sent records the Authorization and Accept headers of every request that reaches it, by URL, and
// answers 200.
type sent struct {
	mu      sync.Mutex
	headers map[string]string
	accepts map[string][]string
}

func (s *sent) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.headers == nil {
		s.headers = map[string]string{}
	}
	if s.accepts == nil {
		s.accepts = map[string][]string{}
	}
	s.headers[r.URL.String()] = r.Header.Get("Authorization")
	s.accepts[r.URL.String()] = r.Header.Values("Accept")
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
}

// tokenEndpoint answers any token request with the same fresh token, without a network.
type tokenEndpoint struct{}

func (tokenEndpoint) RoundTrip(r *http.Request) (*http.Response, error) {
	body := `{"access_token":"at_https_0123456789","refresh_token":"rt_https_0123456789","token_type":"Bearer","expires_in":3600}`
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
}

// signedInAt is a manager of the tenant at origin (default clock), signed in through tokenEndpoint.
func signedInAt(tb testing.TB, origin string) *Manager {
	tb.Helper()
	m, err := New(Config{BaseURL: origin, ClientID: "c", RedirectURI: "http://127.0.0.1:53682/callback", Scopes: []scope.Scope{scope.ProfileRead}},
		WithHTTPClient(&http.Client{Transport: tokenEndpoint{}}))
	if err != nil {
		tb.Fatal(err)
	}
	request, err := m.BeginAuthorization(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	authorize, _ := url.Parse(request.URL)
	callback := "http://127.0.0.1:53682/callback?code=the-code-0123456789&state=" + url.QueryEscape(authorize.Query().Get("state"))
	if _, err := m.CompleteAuthorization(context.Background(), callback); err != nil {
		tb.Fatal(err)
	}
	return m
}

func TestTheTransportSendsTheTokenToTheTenantsOriginHoweverItIsSpelledAndNowhereElse(t *testing.T) {
	network := &sent{}
	client := &http.Client{Transport: signedInAt(t, "https://acme.tenant.test").Transport(network)}
	for target, want := range map[string]string{
		"https://acme.tenant.test/api/v1/auth/user":      "Bearer at_https_0123456789",
		"https://ACME.Tenant.TEST/api/v1/auth/user":      "Bearer at_https_0123456789", // host names are case-insensitive
		"HTTPS://acme.tenant.test/api/v1/auth/user":      "Bearer at_https_0123456789",
		"https://acme.tenant.test:443/api/v1/auth/user":  "Bearer at_https_0123456789", // the default port
		"http://acme.tenant.test/api/v1/auth/user":       "",                           // another scheme
		"https://acme.tenant.test:8443/api/v1/auth/user": "",                           // another port
		"https://acme.tenant.test.evil.test/api":         "",                           // a longer host
		"https://acme.tenant.test@evil.test/api":         "",                           // user info, another host
		"https://evil.test/api":                          "",
	} {
		request, err := http.NewRequest(http.MethodGet, target, nil)
		if err != nil {
			t.Fatal(err)
		}
		response, err := client.Do(request)
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		_ = response.Body.Close()
		// (net/http itself turns user info into Basic credentials: only the bearer token matters here.)
		if got := network.headers[request.URL.String()]; strings.HasPrefix(got, "Bearer ") != (want != "") || (want != "" && got != want) {
			t.Errorf("%s: Authorization %q, want %q", target, got, want)
		}
		if request.Header.Get("Authorization") != "" {
			t.Errorf("%s: the caller's request was changed", target)
		}
	}
}

func TestTheTransportSendsTheCurrentTokenAfterARefresh(t *testing.T) {
	tn := newTenant(t)
	m, c := newManager(t, tn, nil)
	signIn(t, m)
	network := &sent{}
	client := &http.Client{Transport: m.Transport(network)}
	target := tn.URL + "/api/v1/auth/user"
	for _, want := range []string{"Bearer at_0001_secret_access", "Bearer at_0001_secret_access", "Bearer at_0002_secret_access", "Bearer at_0002_secret_access"} {
		response, err := client.Get(target)
		if err != nil {
			t.Fatal(err)
		}
		_ = response.Body.Close()
		if got := network.headers[target]; got != want {
			t.Fatalf("Authorization %q, want %q", got, want)
		}
		if want == "Bearer at_0001_secret_access" {
			c.Advance(7*time.Minute + 1*time.Second) // twice: within the 60 s leeway of the 15 min lifetime
		}
	}
	if tn.refreshes.Load() != 1 {
		t.Fatalf("%d refreshes, want 1", tn.refreshes.Load())
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

// The service description requires Accept: application/json on GET /api/v1/auth/user; the bearer
// layer adds it to the tenant's requests that name no Accept, and leaves a caller's own alone.
func TestTheTransportAsksForJSONUnlessTheRequestNamesWhatItAccepts(t *testing.T) {
	network := &sent{}
	client := &http.Client{Transport: signedInAt(t, "https://acme.tenant.test").Transport(network)}
	for _, c := range []struct {
		target, accept string
		want           []string
	}{
		{"https://acme.tenant.test/api/v1/auth/user", "", []string{"application/json"}},
		{"https://acme.tenant.test/api/v1/files/1", "application/octet-stream", []string{"application/octet-stream"}},
		{"https://elsewhere.test/api", "", nil}, // not the tenant: untouched
	} {
		request, err := http.NewRequest(http.MethodGet, c.target, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.accept != "" {
			request.Header.Set("Accept", c.accept)
		}
		response, err := client.Do(request)
		if err != nil {
			t.Fatal(err)
		}
		_ = response.Body.Close()
		if got := network.accepts[c.target]; strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: Accept %q, want %q", c.target, got, c.want)
		}
		if c.accept == "" && request.Header.Get("Accept") != "" {
			t.Errorf("%s: the caller's request was changed", c.target)
		}
	}
}

// A session that ended behind a 401 (the refresh answered invalid_grant) reaches an http.Client
// caller as the manager's error, as x/oauth2's Transport returns its TokenSource's error: not as a
// 401 with a nil error that the next call turns into NOT_SIGNED_IN.
func TestASessionEndedBehindA401ReachesTheCallerAsErrSessionEnded(t *testing.T) {
	tn := newTenant(t)
	m, _ := newManager(t, tn, nil)
	signIn(t, m)
	tn.mu.Lock()
	clear(tn.live) // the tenant revoked the session: the refresh token is refused
	tn.answer = func(w http.ResponseWriter) bool {
		if tn.requests.Load() == 1+1 { // after the sign-in's exchange: the API call
			w.WriteHeader(http.StatusUnauthorized)
			return true
		}
		return false
	}
	tn.mu.Unlock()
	client := &http.Client{Transport: m.Transport(nil)}
	response, err := client.Get(tn.URL + "/api/v1/auth/user")
	if response != nil {
		_ = response.Body.Close()
	}
	if !errors.Is(err, ErrSessionEnded) || response != nil {
		t.Fatalf("got %v and %v, want the SESSION_ENDED error and no response", response, err)
	}
	var failure *Error
	if !errors.As(err, &failure) || failure.OAuthError != "invalid_grant" {
		t.Fatalf("errors.As found %#v, want the *Error with invalid_grant", failure)
	}
}

// closeCounter is a request body that counts its Close calls.
type closeCounter struct {
	io.Reader
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return nil }

func TestARequestWithoutATokenFailsWithNotSignedInAndItsBodyClosed(t *testing.T) {
	tn := newTenant(t)
	m, _ := newManager(t, tn, nil)
	body := &closeCounter{Reader: strings.NewReader("{}")}
	request, _ := http.NewRequest(http.MethodPost, tn.URL+"/api/v1/things", body)
	_, err := m.Transport(nil).RoundTrip(request)
	if !errors.Is(err, ErrNotSignedIn) || body.closed != 1 {
		t.Fatalf("got %v with the body closed %d times, want NOT_SIGNED_IN and the body closed once", err, body.closed)
	}
}
