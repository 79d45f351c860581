package tokenmanager

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tenant-integration/sdk/packages/go/internal/pendingrecord"
)

func begin(t *testing.T, m *Manager) *AuthorizationRequest {
	t.Helper()
	request, err := m.BeginAuthorization(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return request
}

// stateOf is the state of an authorize URL.
func stateOf(t *testing.T, request *AuthorizationRequest) string {
	u, err := url.Parse(request.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("state")
}

// Two tabs, or a double click on "Connect": each sign-in has its own pending record.
func TestTwoSignInsBegunOnOneManagerBothCompleteInEitherOrder(t *testing.T) {
	tn := newTenant(t)
	m, _ := newManager(t, tn, nil)
	first, second := begin(t, m), begin(t, m)
	ctx := context.Background()
	if _, err := m.CompleteAuthorization(ctx, callbackAs(t, second, "second")); err != nil {
		t.Fatalf("the later sign-in: %v", err)
	}
	if _, err := m.CompleteAuthorization(ctx, callbackAs(t, first, "first")); err != nil {
		t.Fatalf("the earlier sign-in, completed last: %v", err)
	}
	token, err := m.AccessToken(ctx)
	if err != nil || tn.userOf(token) != "first" {
		t.Fatalf("the session is the last completed one's: %q of %q, %v", token, tn.userOf(token), err)
	}
}

func TestACallbackWhoseStateNoSignInHasIsNoPendingSignInAndLeavesTheOthers(t *testing.T) {
	tn := newTenant(t)
	m, _ := newManager(t, tn, nil)
	request := begin(t, m)
	callback := callbackFor(t, request)
	swapped := byte('A')
	if callback[len(callback)-1] == 'A' {
		swapped = 'B'
	}
	_, err := m.CompleteAuthorization(context.Background(), callback[:len(callback)-1]+string(swapped))
	if !errors.Is(err, ErrNoPendingSignIn) || tn.requests.Load() != 0 {
		t.Fatalf("err %v, %d requests", err, tn.requests.Load())
	}
	if _, err := m.CompleteAuthorization(context.Background(), callback); err != nil {
		t.Fatalf("the sign-in of the right state: %v", err)
	}
	// Single use: the pending sign-in is gone.
	if _, err := m.CompleteAuthorization(context.Background(), callback); !errors.Is(err, ErrNoPendingSignIn) {
		t.Fatalf("second use: %v", err)
	}
}

// The 128-bit key finds the record; the state itself is still compared (in constant time).
func TestARecordOfAnotherStateUnderTheCallbacksKeyIsStateMismatchBeforeAnyRequest(t *testing.T) {
	tn := newTenant(t)
	storage := NewMemoryStorage()
	m, _ := newManager(t, tn, nil, WithStorage(storage))
	request := begin(t, m)
	state := stateOf(t, request)
	name := m.pending.name(state)
	other := strings.Repeat("B", 43)
	record := pendingrecord.Record{State: other, Verifier: strings.Repeat("v", 64), ExpiresAt: time.Now().Add(time.Hour).UnixMilli()}
	storage.data[name] = record.Text()
	if _, err := m.CompleteAuthorization(context.Background(), callbackFor(t, request)); !errors.Is(err, ErrStateMismatch) || tn.requests.Load() != 0 {
		t.Fatalf("err %v, %d requests", err, tn.requests.Load())
	}
}

// The pending sign-in is taken before any check but the state's: a callback at another URI uses it up.
func TestACallbackAtAnotherURIIsInvalidCallbackAndUsesThePendingSignInUp(t *testing.T) {
	tn := newTenant(t)
	m, _ := newManager(t, tn, nil)
	callback := callbackFor(t, begin(t, m))
	if _, err := m.CompleteAuthorization(context.Background(), strings.Replace(callback, "/callback", "/other", 1)); !errors.Is(err, ErrInvalidCallback) {
		t.Fatalf("err %v", err)
	}
	if _, err := m.CompleteAuthorization(context.Background(), callback); !errors.Is(err, ErrNoPendingSignIn) {
		t.Fatalf("the right callback after a wrong one: %v", err)
	}
	if tn.requests.Load() != 0 {
		t.Fatalf("%d requests", tn.requests.Load())
	}
}

func TestACallbackWithoutOneStateTakesNothing(t *testing.T) {
	tn := newTenant(t)
	m, _ := newManager(t, tn, nil)
	callback := callbackFor(t, begin(t, m))
	state := callback[strings.Index(callback, "state="):]
	for _, c := range []struct {
		url  string
		want error
	}{
		{"/callback?code=x&" + state, ErrInvalidCallback},                                    // not a full URL
		{"http://127.0.0.1:53682/callback?code=the-code-0123456789", ErrStateMissing},        // no state
		{"http://127.0.0.1:53682/callback?code=the-code-0123456789&state=", ErrStateMissing}, // an empty one
		{callback + "&" + state, ErrInvalidCallback},                                         // repeated
		{"http://127.0.0.1:53682/callback?code=%zz&" + state, ErrInvalidCallback},            // unreadable query
		{"http://127.0.0.1:53682/callback?code=a&code=b&" + state + "x", ErrInvalidCallback}, // another state's key: nothing of ours taken
	} {
		if _, err := m.CompleteAuthorization(context.Background(), c.url); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.url, err, c.want)
		}
	}
	if _, err := m.CompleteAuthorization(context.Background(), callback); err != nil {
		t.Fatalf("the pending sign-in was taken: %v", err)
	}
}

func TestAManagerCompletesOnlyTheSignInsOfItsOwnSession(t *testing.T) {
	tn := newTenant(t)
	storage := NewMemoryStorage()
	plain, _ := newManager(t, tn, nil, WithStorage(storage))
	ada, _ := newManager(t, tn, nil, WithStorage(storage), WithSessionID("ada"))
	grace, _ := newManager(t, tn, nil, WithStorage(storage), WithSessionID("grace"))
	ctx := context.Background()
	for _, c := range []struct{ begins, completes *Manager }{{ada, plain}, {plain, ada}, {ada, grace}} {
		_, err := c.completes.CompleteAuthorization(ctx, callbackFor(t, begin(t, c.begins)))
		if !errors.Is(err, ErrStateMismatch) || !strings.Contains(err.Error(), "another session") {
			t.Errorf("%q completing %q's sign-in: %v", c.completes.SessionID(), c.begins.SessionID(), err)
		}
	}
	if _, err := ada.CompleteAuthorization(ctx, callbackAs(t, begin(t, ada), "ada")); err != nil {
		t.Fatal(err)
	}
	if _, ok := storage.data["tenant-integration:"+tn.URL+":c:ada:tokens"]; !ok || tn.requests.Load() != 1 {
		t.Fatalf("the session's tokens are not under its name: %v, %d requests", storage.data, tn.requests.Load())
	}
}

func TestASignInBoundToABrowserIsNotCompletedByAManager(t *testing.T) {
	tn := newTenant(t)
	m, _ := newManager(t, tn, nil, WithSessionID("ada"))
	request, err := beginSignIn(context.Background(), m.settings, "ada", BindingHash(NewBinding()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.CompleteAuthorization(context.Background(), callbackFor(t, request)); !errors.Is(err, ErrStateMismatch) || tn.requests.Load() != 0 {
		t.Fatalf("err %v, %d requests", err, tn.requests.Load())
	}
}

func TestAPendingSignInPastItsLifetimeIsStateExpired(t *testing.T) {
	tn := newTenant(t)
	m, clock := newManager(t, tn, nil, WithPendingLifetime(time.Minute))
	request := begin(t, m)
	clock.Advance(time.Minute + time.Second)
	if _, err := m.CompleteAuthorization(context.Background(), callbackFor(t, request)); !errors.Is(err, ErrStateExpired) || tn.requests.Load() != 0 {
		t.Fatalf("err %v, %d requests", err, tn.requests.Load())
	}
}

// plainStorage offers only Get, Set and Delete: the fallback of spec/token-store ("What a storage offers").
type plainStorage struct{ memory *MemoryStorage }

func (s plainStorage) Get(ctx context.Context, key string) (string, bool, error) {
	return s.memory.Get(ctx, key)
}
func (s plainStorage) Set(ctx context.Context, key, value string) error {
	return s.memory.Set(ctx, key, value)
}
func (s plainStorage) Delete(ctx context.Context, key string) error { return s.memory.Delete(ctx, key) }

func TestAStorageWithoutSetExpiringOrTakeStillSignsInAndIsWarnedAboutOnce(t *testing.T) {
	tn := newTenant(t)
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	m, _ := newManager(t, tn, nil, WithStorage(plainStorage{NewMemoryStorage()}), WithLogger(logger))
	first, second := begin(t, m), begin(t, m)
	for _, request := range []*AuthorizationRequest{first, second} {
		if _, err := m.CompleteAuthorization(context.Background(), callbackFor(t, request)); err != nil {
			t.Fatal(err)
		}
	}
	for _, warning := range []string{"no SetExpiring", "no Take"} {
		if strings.Count(logs.String(), warning) != 1 {
			t.Errorf("%q warned %d times:\n%s", warning, strings.Count(logs.String(), warning), logs.String())
		}
	}
	if _, err := m.CompleteAuthorization(context.Background(), callbackFor(t, first)); !errors.Is(err, ErrNoPendingSignIn) {
		t.Fatalf("used twice: %v", err)
	}
}

// Of two callbacks of one state arriving at once, one exchanges the code: Take is atomic.
func TestOfConcurrentCallbacksOfOneStateOneExchangesTheCode(t *testing.T) {
	tn := newTenant(t)
	m, _ := newManager(t, tn, nil)
	callback := callbackFor(t, begin(t, m))
	var wg sync.WaitGroup
	var mu sync.Mutex
	completed := 0
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := m.CompleteAuthorization(context.Background(), callback); err == nil {
				mu.Lock()
				completed++
				mu.Unlock()
			} else if !errors.Is(err, ErrNoPendingSignIn) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if completed != 1 || tn.requests.Load() != 1 {
		t.Fatalf("%d completed, %d requests", completed, tn.requests.Load())
	}
}

func TestTheMemoryStorageDropsExpiredValuesWhenReadAndAtLaterWrites(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStorage()
	_ = s.SetExpiring(ctx, "short", "v", 20*time.Millisecond)
	_ = s.SetExpiring(ctx, "long", "v", time.Hour)
	_ = s.Set(ctx, "kept", "v")
	time.Sleep(40 * time.Millisecond)
	if _, ok, _ := s.Get(ctx, "short"); ok {
		t.Fatal("an expired value was read")
	}
	_ = s.SetExpiring(ctx, "again", "v", 20*time.Millisecond)
	time.Sleep(40 * time.Millisecond)
	_ = s.Set(ctx, "write", "v")
	if _, ok := s.data["again"]; ok || len(s.expiries) != 1 {
		t.Fatalf("a write left expired values: %v", s.data)
	}
	if value, ok, _ := s.Take(ctx, "long"); !ok || value != "v" {
		t.Fatal("Take did not return the value")
	}
	if _, ok, _ := s.Take(ctx, "long"); ok {
		t.Fatal("Take returned a value twice")
	}
	if _, ok, _ := s.Get(ctx, "kept"); !ok {
		t.Fatal("a value set without a lifetime was dropped")
	}
}
