// Package sandboxtest runs the token manager against the real sandbox tenant
// (packages/sandbox/dist/cli.js, a Node process with strict rotation and a test clock), on a
// loopback port chosen at run time, and stops it after. Skipped with -short or without the built
// sandbox.
package sandboxtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/filestorage"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

const redirect = "http://127.0.0.1:53682/callback"

type sandbox struct {
	url    string
	mu     sync.Mutex
	offset time.Duration
}

func start(t *testing.T) *sandbox {
	if testing.Short() {
		t.Skip("-short: no real processes")
	}
	cli, _ := filepath.Abs("../../../sandbox/dist/cli.js")
	if _, err := os.Stat(cli); err != nil {
		t.Skip("the sandbox is not built (pnpm --filter @tenant-integration/sandbox build)")
	}
	cmd := exec.Command("node", cli, "--port", "0", "--json", "--auto-approve", "--test-clock", "--client", "id=c,redirect="+redirect)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Skip("node cannot start: " + err.Error())
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	var info struct{ URL string }
	if err != nil || json.Unmarshal([]byte(line), &info) != nil {
		t.Fatalf("the sandbox said %q", line)
	}
	return &sandbox{url: info.URL}
}

func (s *sandbox) now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Now().Add(s.offset)
}

func (s *sandbox) advance(t *testing.T, d time.Duration) {
	body, _ := json.Marshal(map[string]any{"advanceSeconds": d.Seconds()})
	response, err := http.Post(s.url+"/__sandbox/clock", "application/json", bytes.NewReader(body))
	if err != nil || response.StatusCode != 200 {
		t.Fatalf("clock: %v", err)
	}
	response.Body.Close()
	s.mu.Lock()
	s.offset += d
	s.mu.Unlock()
}

func (s *sandbox) refreshes(t *testing.T) int {
	response, err := http.Get(s.url + "/__sandbox/events")
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	var body struct{ Events []map[string]any }
	_ = json.NewDecoder(response.Body).Decode(&body)
	count := 0
	for _, event := range body.Events {
		raw, _ := json.Marshal(event)
		if strings.Contains(string(raw), "refresh_token") {
			count++
		}
	}
	return count
}

func signIn(t *testing.T, m *tokenmanager.Manager) {
	ctx := context.Background()
	request, err := m.BeginAuthorization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	response, err := client.Get(request.URL)
	if err != nil {
		t.Fatal(err)
	}
	response.Body.Close()
	base, _ := url.Parse(request.URL)
	callback, err := base.Parse(response.Header.Get("Location"))
	if err != nil || response.StatusCode/100 != 3 {
		t.Fatalf("authorize answered %d", response.StatusCode)
	}
	if _, err := m.CompleteAuthorization(ctx, callback.String()); err != nil {
		t.Fatal(err)
	}
}

func user(t *testing.T, client *http.Client, s *sandbox) int {
	response, err := client.Get(s.url + "/api/v1/auth/user")
	if err != nil {
		t.Fatal(err)
	}
	response.Body.Close()
	return response.StatusCode
}

func TestSignInRefreshAndRevokeAgainstTheSandbox(t *testing.T) {
	s := start(t)
	storage, _ := filestorage.New(filepath.Join(t.TempDir(), "tokens.json"))
	m, err := tokenmanager.New(tokenmanager.Config{BaseURL: s.url, ClientID: "c", RedirectURI: redirect, Scopes: []scope.Scope{scope.ProfileRead}},
		tokenmanager.WithStorage(storage), tokenmanager.WithClock(s.now))
	if err != nil {
		t.Fatal(err)
	}
	signIn(t, m)
	client := &http.Client{Transport: m.Transport(nil)}
	if status := user(t, client, s); status != 200 {
		t.Fatalf("user: %d", status)
	}
	s.advance(t, 16*time.Minute)
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if status := user(t, client, s); status != 200 {
				t.Errorf("user after expiry: %d", status)
			}
		}()
	}
	wg.Wait()
	if n := s.refreshes(t); n != 1 {
		t.Fatalf("%d refreshes after one expiry", n)
	}
	token, _ := m.AccessToken(context.Background())
	if err := m.Revoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	request, _ := http.NewRequest(http.MethodGet, s.url+"/api/v1/auth/user", nil)
	request.Header.Set("Authorization", "Bearer "+token)
	response, err := http.DefaultClient.Do(request)
	if err != nil || response.StatusCode != 401 {
		t.Fatalf("the revoked token still works: %v", err)
	}
	response.Body.Close()
	if _, err := m.AccessToken(context.Background()); !errors.Is(err, tokenmanager.ErrNotSignedIn) {
		t.Fatalf("after revoke: %v", err)
	}
}

func TestTwoManagersOnOneTokenFileMakeOneRefresh(t *testing.T) {
	s := start(t)
	path := filepath.Join(t.TempDir(), "tokens.json")
	make := func() *tokenmanager.Manager {
		storage, _ := filestorage.New(path)
		m, err := tokenmanager.New(tokenmanager.Config{BaseURL: s.url, ClientID: "c", RedirectURI: redirect, Scopes: []scope.Scope{scope.ProfileRead}},
			tokenmanager.WithStorage(storage), tokenmanager.WithClock(s.now))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b := make(), make()
	signIn(t, a)
	s.advance(t, 16*time.Minute)
	var wg sync.WaitGroup
	for _, m := range []*tokenmanager.Manager{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := m.AccessToken(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := s.refreshes(t); n != 1 {
		t.Fatalf("%d refreshes", n)
	}
}
