// Package sessionfleet is the test of tokenmanager.Sessions across real processes: several Go
// processes (the child command, built without the race detector so that its speed is a user's),
// each a Sessions over one token file or one redis-server, serve many sessions at once after their
// expiry, checked from the tenant's side (the sandbox's refresh-token ledger): one refresh per
// session per expiry, no refresh token presented twice, no session served another's user,
// adversarial session ids refused with nothing written, and a callback replayed from another
// browser refused before any exchange. What a child is given and answers is here; the fleet is in
// sessionfleet_test.go. For the module's tests only.
package sessionfleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/filestorage"
	"github.com/tenant-integration/sdk/packages/go/redisstorage"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// ChildEnv names the environment variable holding a child's configuration (JSON).
const ChildEnv = "SESSION_FLEET_CHILD"

// Child is what a process of the fleet is given.
type Child struct {
	Name        string            `json:"name"`
	Tenant      string            `json:"tenant"`
	ClientID    string            `json:"clientId"`
	RedirectURI string            `json:"redirectUri"`
	Storage     string            `json:"storage"` // file or redis
	Path        string            `json:"path"`
	Addr        string            `json:"addr"`
	Sessions    map[string]string `json:"sessions"` // session id → the sandbox user it signed in as
	Replay      string            `json:"replay"`   // a callback this process completes with a binding of its own
}

// Report is what a process of the fleet answers.
type Report struct {
	Served   int      `json:"served"`
	Failures []string `json:"failures"`
}

// NewSessions is the Sessions of a process on the storage the configuration names, on clock now.
func (c Child) NewSessions(now func() time.Time, client *http.Client) (*tokenmanager.Sessions, error) {
	var storage tokenmanager.Storage
	switch c.Storage {
	case "file":
		file, err := filestorage.New(c.Path)
		if err != nil {
			return nil, err
		}
		storage = file
	case "redis":
		store, err := redisstorage.New(redis.NewClient(&redis.Options{Addr: c.Addr, PoolSize: 64}))
		if err != nil {
			return nil, err
		}
		storage = store
	default:
		return nil, fmt.Errorf("no storage %q", c.Storage)
	}
	// A refresh whose answer does not come within the request timeout may have rotated the token, and
	// is not sent again (the documented loss of an answer lost, conformance's answer-lost): the
	// timeout is long here, so that a machine loaded by a thousand requests at once does not turn
	// this test of coordination into one of that loss.
	return tokenmanager.NewSessions(tokenmanager.Config{BaseURL: c.Tenant, ClientID: c.ClientID, RedirectURI: c.RedirectURI,
		Scopes: []scope.Scope{scope.ProfileRead}}, tokenmanager.WithStorage(storage), tokenmanager.WithClock(now),
		tokenmanager.WithHTTPClient(client), tokenmanager.WithRequestTimeout(time.Minute))
}

// Serve has every session's client ask GET /api/v1/auth/user at once, each checked to be its own
// user's; refuses the adversarial ids; completes the replayed callback with another browser's
// binding, which must be refused.
func (c Child) Serve(sessions *tokenmanager.Sessions) Report {
	var mu sync.Mutex
	var r Report
	fail := func(format string, args ...any) {
		mu.Lock()
		r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for id, user := range c.Sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seen, err := userOf(sessions, id, c.Tenant)
			switch {
			case err != nil:
				fail("%s: %v", id, err)
			case seen != user:
				fail("session %s was served user %s, not %s", id, seen, user)
			default:
				mu.Lock()
				r.Served++
				mu.Unlock()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		refuseAdversarialIDs(sessions, fail)
		if c.Replay != "" {
			_, err := sessions.CompleteSignIn(context.Background(), tokenmanager.Callback{URL: c.Replay, Binding: tokenmanager.NewBinding()})
			if !errors.Is(err, tokenmanager.ErrStateMismatch) {
				fail("a callback replayed in another browser: %v", err)
			}
		}
	}()
	wg.Wait()
	return r
}

// userOf is the id of the user GET /api/v1/auth/user answers session id's client.
func userOf(sessions *tokenmanager.Sessions, id, tenant string) (string, error) {
	client, err := sessions.Client(id)
	if err != nil {
		return "", err
	}
	response, err := client.Get(tenant + "/api/v1/auth/user")
	if err != nil {
		return "", err
	}
	defer response.Body.Close()
	var user struct {
		ID any `json:"id"`
	}
	if response.StatusCode != http.StatusOK || decodeJSON(response, &user) != nil {
		return "", fmt.Errorf("HTTP %d", response.StatusCode)
	}
	return fmt.Sprint(user.ID), nil
}

// Adversarial are ids a request could carry: each is refused, and nothing is written.
var Adversarial = []string{"", "a:b", "{1000}", "1000}", "../../etc/passwd", "a%3Ab", "ada lovelace", "x\r\nSET k v", "caf\u00e9", "*", strings.Repeat("9", 129)}

func refuseAdversarialIDs(sessions *tokenmanager.Sessions, fail func(string, ...any)) {
	ctx := context.Background()
	for _, id := range Adversarial {
		_, errManager := sessions.Manager(id)
		_, errBegin := sessions.BeginSignIn(ctx, id, "")
		_, errClient := sessions.Client(id)
		for _, err := range []error{errManager, errBegin, errClient, sessions.SignOut(ctx, id), sessions.Revoke(ctx, id)} {
			if !errors.Is(err, tokenmanager.ErrInvalidSessionID) {
				fail("the id %q was not refused: %v", id, err)
			}
		}
	}
}

// Actor names the process in the Sandbox-Actor header, which the sandbox's ledger records.
type Actor struct {
	Name string
	Next http.RoundTripper
}

// RoundTrip sends the request with the header, on a clone.
func (a Actor) RoundTrip(r *http.Request) (*http.Response, error) {
	clone := r.Clone(r.Context())
	clone.Header.Set("Sandbox-Actor", a.Name)
	return a.Next.RoundTrip(clone)
}

func decodeJSON(response *http.Response, into any) error {
	return json.NewDecoder(response.Body).Decode(into)
}
