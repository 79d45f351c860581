package loopback

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	return listener.Addr().(*net.TCPAddr).Port
}

// tenant is a fake tenant: an authorize endpoint that shows an error page for an unregistered
// redirect URI and otherwise redirects back with a code and the state, and a token endpoint.
func tenant(t *testing.T, registered string) string {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/oauth/authorize":
			q := r.URL.Query()
			if q.Get("client_id") != "cli" || q.Get("redirect_uri") != registered {
				http.Error(w, "unknown redirect URI", http.StatusBadRequest)
				return
			}
			back := q.Get("redirect_uri") + "?code=the-code-0123456789&state=" + url.QueryEscape(q.Get("state"))
			if q.Get("state") == "" {
				back = q.Get("redirect_uri") + "?error=invalid_request"
			}
			http.Redirect(w, r, back, http.StatusFound)
		case "/oauth/token":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"access_token":"at_0123456789","refresh_token":"rt_0123456789","token_type":"Bearer","expires_in":900}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(server.Close)
	return server.URL
}

func manager(t *testing.T, base, redirect string) *tokenmanager.Manager {
	m, err := tokenmanager.New(tokenmanager.Config{BaseURL: base, ClientID: "cli", RedirectURI: redirect, Scopes: []scope.Scope{scope.ProfileRead}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// browser follows the authorize URL to the callback like a browser, and records the last page.
type browser struct {
	mu     sync.Mutex
	status int
	page   string
	opened int
}

func (b *browser) open(authorizeURL string) error {
	b.mu.Lock()
	b.opened++
	b.mu.Unlock()
	response, err := http.Get(authorizeURL)
	if err != nil {
		return err
	}
	defer response.Body.Close()
	raw, _ := io.ReadAll(response.Body)
	b.mu.Lock()
	b.status, b.page = response.StatusCode, string(raw)
	b.mu.Unlock()
	return nil
}

func (b *browser) last() (int, string, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.status, b.page, b.opened
}

func TestSignInReceivesTheCallbackCompletesAndTellsTheBrowser(t *testing.T) {
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", freePort(t))
	m := manager(t, tenant(t, redirect), redirect)
	b := &browser{}
	session, err := SignIn(context.Background(), m, WithOpenBrowser(b.open))
	if err != nil {
		t.Fatal(err)
	}
	if session.ExpiresAt.IsZero() {
		t.Fatal("no session")
	}
	if token, err := m.AccessToken(context.Background()); err != nil || token != "at_0123456789" {
		t.Fatalf("%q %v", token, err)
	}
	// the page is written before SignIn returns; the browser reads it right after
	deadline := time.Now().Add(5 * time.Second)
	for status, _, _ := b.last(); status == 0 && time.Now().Before(deadline); status, _, _ = b.last() {
		time.Sleep(10 * time.Millisecond)
	}
	if status, page, _ := b.last(); status != 200 || !strings.Contains(page, "Signed in") {
		t.Fatalf("the browser saw %d %q", status, page)
	}
	// the port is free again
	server, err := Listen(redirect)
	if err != nil {
		t.Fatalf("the port was not freed: %v", err)
	}
	server.Close()
}

func TestWithoutABrowserTheURLIsPrinted(t *testing.T) {
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", freePort(t))
	m := manager(t, tenant(t, redirect), redirect)
	var out bytes.Buffer
	var mu sync.Mutex
	printed := make(chan struct{})
	var once sync.Once
	writer := writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		out.Write(p)
		if strings.Count(out.String(), "\n") >= 2 {
			once.Do(func() { close(printed) })
		}
		return len(p), nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-printed
		mu.Lock()
		lines := strings.Split(out.String(), "\n")
		mu.Unlock()
		_ = (&browser{}).open(lines[1])
	}()
	defer cancel()
	if _, err := SignIn(ctx, m, WithOutput(writer)); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "Open this address in a browser to sign in:\n") {
		t.Fatalf("%q", out.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestABusyPortIsCallbackPortInUseNamingThePort(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", port)
	_, err = SignIn(context.Background(), manager(t, tenant(t, redirect), redirect))
	var failure *tokenmanager.Error
	if !errors.Is(err, tokenmanager.ErrCallbackPortInUse) || !errors.As(err, &failure) || failure.Port != port {
		t.Fatalf("%v", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprint(port)) {
		t.Fatalf("the message should name the port: %v", err)
	}
}

func TestAnUnregisteredRedirectURIIsRefusedBeforeTheBrowserOpens(t *testing.T) {
	registered := fmt.Sprintf("http://127.0.0.1:%d/callback", freePort(t))
	other := fmt.Sprintf("http://127.0.0.1:%d/callback", freePort(t))
	b := &browser{}
	_, err := SignIn(context.Background(), manager(t, tenant(t, registered), other), WithOpenBrowser(b.open))
	var failure *tokenmanager.Error
	if !errors.Is(err, tokenmanager.ErrRedirectURIRefused) || !errors.As(err, &failure) || failure.Status != 400 {
		t.Fatalf("%v", err)
	}
	if _, _, opened := b.last(); opened != 0 {
		t.Fatal("the browser was opened")
	}
}

func TestNoCallbackInTimeIsCallbackTimeout(t *testing.T) {
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", freePort(t))
	_, err := SignIn(context.Background(), manager(t, tenant(t, redirect), redirect),
		WithOpenBrowser(func(string) error { return nil }), WithTimeout(20*time.Millisecond))
	if !errors.Is(err, tokenmanager.ErrCallbackTimeout) || !strings.Contains(err.Error(), redirect) {
		t.Fatalf("%v", err)
	}
}

func TestCancellingTheContextEndsTheWaitAndFreesThePort(t *testing.T) {
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", freePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	_, err := SignIn(ctx, manager(t, tenant(t, redirect), redirect), WithOpenBrowser(func(string) error { cancel(); return nil }))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
	server, err := Listen(redirect)
	if err != nil {
		t.Fatalf("the port was not freed: %v", err)
	}
	server.Close()
}

func TestACallbackWithAnotherStateFailsAndTheBrowserIsToldSo(t *testing.T) {
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", freePort(t))
	m := manager(t, tenant(t, redirect), redirect)
	b := &browser{}
	forged := func(authorizeURL string) error {
		return b.open(redirect + "?code=x&state=another-state-0123456789")
	}
	_, err := SignIn(context.Background(), m, WithOpenBrowser(forged))
	// Pending sign-ins are found by their state: another state finds none.
	if !errors.Is(err, tokenmanager.ErrNoPendingSignIn) {
		t.Fatalf("%v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for status, _, _ := b.last(); status == 0 && time.Now().Before(deadline); status, _, _ = b.last() {
		time.Sleep(10 * time.Millisecond)
	}
	if status, page, _ := b.last(); status != 400 || !strings.Contains(page, "NO_PENDING_SIGN_IN") || strings.Contains(page, "another-state") {
		t.Fatalf("%d %q", status, page)
	}
}

func TestOnlyTheFirstGetOfTheRedirectPathIsTheCallback(t *testing.T) {
	server, err := Listen("http://127.0.0.1:0/callback")
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	if !strings.HasPrefix(server.RedirectURI, "http://127.0.0.1:") || server.Port == 0 {
		t.Fatalf("%q", server.RedirectURI)
	}
	origin := strings.TrimSuffix(server.RedirectURI, "/callback")
	response, _ := http.Get(origin + "/favicon.ico")
	response.Body.Close()
	if response.StatusCode != 404 {
		t.Fatalf("%d", response.StatusCode)
	}
	go func() { _ = (&browser{}).open(server.RedirectURI + "?code=c&state=s") }()
	callback, err := server.Wait(context.Background(), 5*time.Second)
	if err != nil || callback != server.RedirectURI+"?code=c&state=s" {
		t.Fatalf("%q %v", callback, err)
	}
	response, _ = http.Get(server.RedirectURI + "?code=again")
	response.Body.Close()
	if response.StatusCode != 404 {
		t.Fatalf("a second callback was taken: %d", response.StatusCode)
	}
	server.Respond("")
}

func TestOnlyLoopbackRedirectURIsWithARegisteredPort(t *testing.T) {
	for _, redirect := range []string{"https://127.0.0.1:8080/cb", "http://example.com:8080/cb", "http://127.0.0.1/cb"} {
		if _, err := Listen(redirect); !errors.Is(err, tokenmanager.ErrInvalidOptions) {
			t.Errorf("%s: %v", redirect, err)
		}
	}
	redirect := "http://127.0.0.1:0/callback"
	if _, err := SignIn(context.Background(), manager(t, "http://127.0.0.1:1", redirect)); !errors.Is(err, tokenmanager.ErrInvalidOptions) {
		t.Fatalf("port 0 cannot be registered: %v", err)
	}
}

func TestATenantThatCannotBeReachedFailsAtOnceInsteadOfWaitingForTheCallback(t *testing.T) {
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", freePort(t))
	nowhere := fmt.Sprintf("http://127.0.0.1:%d", freePort(t)) // nothing listens there
	// A guard, not a measure: a sign-in that waited for its callback would end here with
	// context.DeadlineExceeded instead of the tenant's fault.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opened := false
	_, err := SignIn(ctx, manager(t, nowhere, redirect), WithOpenBrowser(func(string) error { opened = true; return nil }),
		WithTimeout(5*time.Minute))
	var failure *tokenmanager.Error
	if !errors.Is(err, tokenmanager.ErrTransient) || !errors.As(err, &failure) {
		t.Fatalf("got %v, want TRANSIENT at once", err)
	}
	if !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), strings.TrimPrefix(nowhere, "http://")) || opened {
		t.Fatalf("%q (browser opened: %v): want the tenant's address and why, before any browser", err, opened)
	}
}

func TestANilManagerOrOptionIsInvalidOptionsNotAPanic(t *testing.T) {
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", freePort(t))
	for name, call := range map[string]func() error{
		"nil manager":        func() error { _, err := SignIn(context.Background(), nil); return err },
		"zero-value manager": func() error { _, err := SignIn(context.Background(), &tokenmanager.Manager{}); return err },
		"nil option": func() error {
			_, err := SignIn(context.Background(), manager(t, tenant(t, redirect), redirect), nil)
			return err
		},
	} {
		if err := call(); !errors.Is(err, tokenmanager.ErrInvalidOptions) {
			t.Errorf("%s: got %v, want INVALID_OPTIONS", name, err)
		}
	}
}
