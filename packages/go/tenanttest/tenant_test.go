package tenanttest_test

// The kit against the real sandbox tenant (strict rotation, a test clock), started by tenanttest
// on a loopback port chosen at run time and stopped after. Skipped with -short.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/filestorage"
	"github.com/tenant-integration/sdk/packages/go/loopback"
	"github.com/tenant-integration/sdk/packages/go/tenanttest"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

func status(t *testing.T, client *http.Client, url string) int {
	t.Helper()
	response, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, response.Body)
	response.Body.Close()
	return response.StatusCode
}

func refreshes(t *testing.T, tenant *tenanttest.Tenant) int {
	t.Helper()
	n, err := tenant.RefreshCount()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestNewGivesASignedInClientOnTheSandboxClock(t *testing.T) {
	tenant := tenanttest.New(t)
	if got := status(t, tenant.Client, tenant.URL("/api/v1/auth/user")); got != 200 {
		t.Fatalf("user: %d", got)
	}
	tenant.Advance(t, 16*time.Minute)
	if got := status(t, tenant.Client, tenant.URL("/api/v1/auth/user")); got != 200 {
		t.Fatalf("user after the clock moved: %d", got)
	}
	if n := refreshes(t, tenant); n != 1 {
		t.Fatalf("%d refreshes after one expiry", n)
	}
}

func TestTenGoroutinesAfterExpiryMakeOneRefreshAndRevokeEndsTheSession(t *testing.T) {
	storage, err := filestorage.New(filepath.Join(t.TempDir(), "tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	tenant := tenanttest.New(t, tenanttest.WithManagerOptions(tokenmanager.WithStorage(storage)))
	tenant.Advance(t, 16*time.Minute)
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			response, err := tenant.Client.Get(tenant.URL("/api/v1/auth/user"))
			if err != nil || response.StatusCode != 200 {
				t.Errorf("user after expiry: %v %v", response, err)
				return
			}
			response.Body.Close()
		}()
	}
	wg.Wait()
	if n := refreshes(t, tenant); n != 1 {
		t.Fatalf("%d refreshes after one expiry", n)
	}
	ctx := context.Background()
	token, _ := tenant.Manager.AccessToken(ctx)
	if err := tenant.Manager.Revoke(ctx); err != nil {
		t.Fatal(err)
	}
	request, _ := http.NewRequest(http.MethodGet, tenant.URL("/api/v1/auth/user"), nil)
	request.Header.Set("Authorization", "Bearer "+token)
	response, err := http.DefaultClient.Do(request)
	if err != nil || response.StatusCode != 401 {
		t.Fatalf("the revoked token still works: %v", err)
	}
	response.Body.Close()
	if _, err := tenant.Manager.AccessToken(ctx); !errors.Is(err, tokenmanager.ErrNotSignedIn) {
		t.Fatalf("after revoke: %v", err)
	}
}

func TestTwoManagersOnOneTokenFileMakeOneRefresh(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	manager := func(sandbox *tenanttest.Sandbox, signIn bool) *tenanttest.Tenant {
		storage, err := filestorage.New(path)
		if err != nil {
			t.Fatal(err)
		}
		opts := []tenanttest.TenantOption{tenanttest.WithManagerOptions(tokenmanager.WithStorage(storage))}
		if !signIn {
			opts = append(opts, tenanttest.WithoutSignIn())
		}
		tenant, err := tenanttest.NewTenant(context.Background(), sandbox, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return tenant
	}
	sandbox := tenanttest.Start(t)
	a, b := manager(sandbox, true), manager(sandbox, false)
	if err := sandbox.Advance(16 * time.Minute); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, m := range []*tokenmanager.Manager{a.Manager, b.Manager, a.Manager, b.Manager} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := m.AccessToken(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := refreshes(t, a); n != 1 {
		t.Fatalf("%d refreshes", n)
	}
}

func TestASignInTheSandboxDoesNotApproveIsSignInFailed(t *testing.T) {
	sandbox := tenanttest.Start(t, tenanttest.WithClients(tenanttest.Client{ID: "narrow", RedirectURIs: []string{tenanttest.DefaultRedirectURI}, Scopes: []string{"profile:read"}}))
	_, err := tenanttest.NewTenant(context.Background(), sandbox, tenanttest.WithScopes(scope.All...))
	var failure *tenanttest.Error
	if !errors.As(err, &failure) || failure.Code != tenanttest.CodeSignInFailed {
		t.Fatalf("%v", err)
	}
}

func TestTheLoopbackSignInCompletesAgainstTheSandbox(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", listener.Addr().(*net.TCPAddr).Port)
	listener.Close()
	sandbox := tenanttest.Start(t, tenanttest.WithClients(tenanttest.Client{ID: "cli", RedirectURIs: []string{redirect}}))
	tenant, err := tenanttest.NewTenant(context.Background(), sandbox, tenanttest.WithoutSignIn())
	if err != nil {
		t.Fatal(err)
	}
	// the browser: follows the sandbox's auto-approve redirect to the loopback server
	var page string
	var mu sync.Mutex
	browser := func(url string) error {
		response, err := http.Get(url)
		if err != nil {
			return err
		}
		defer response.Body.Close()
		raw, _ := io.ReadAll(response.Body)
		mu.Lock()
		page = string(raw)
		mu.Unlock()
		return nil
	}
	if _, err := loopback.SignIn(context.Background(), tenant.Manager, loopback.WithOpenBrowser(browser)); err != nil {
		t.Fatal(err)
	}
	if got := status(t, tenant.Client, tenant.URL("/api/v1/auth/user")); got != 200 {
		t.Fatalf("user: %d", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		seen := page
		mu.Unlock()
		if strings.Contains(seen, "Signed in") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the browser saw %q", seen)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestAnUnregisteredLoopbackRedirectIsRefusedByTheSandbox(t *testing.T) {
	sandbox := tenanttest.Start(t) // registers only tenanttest.DefaultRedirectURI
	m, err := tokenmanager.New(tokenmanager.Config{BaseURL: sandbox.URL, ClientID: tenanttest.DefaultClientID,
		RedirectURI: "http://127.0.0.1:53999/elsewhere", Scopes: []scope.Scope{scope.ProfileRead}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = loopback.SignIn(context.Background(), m, loopback.WithOpenBrowser(func(string) error { return errors.New("no browser") }))
	if !errors.Is(err, tokenmanager.ErrRedirectURIRefused) {
		t.Fatalf("%v", err)
	}
}
