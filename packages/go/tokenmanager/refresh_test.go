package tokenmanager

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

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

// outageStorage is a storage shared with other processes whose writes fail while it is down.
type outageStorage struct {
	*MemoryStorage
	down atomic.Bool
}

func (s *outageStorage) Set(ctx context.Context, key, value string) error {
	if s.down.Load() {
		return errors.New("connection refused")
	}
	return s.MemoryStorage.Set(ctx, key, value)
}

// heldUpRelease is a lock whose release waits, while the storage is down, until it is back: a Redis
// client's command queue, or a hung server, holds the release up.
type heldUpRelease struct {
	storage *outageStorage
	back    chan struct{}
}

func (l *heldUpRelease) Do(ctx context.Context, _ string, task func(context.Context, Held) error) error {
	err := task(ctx, stillHeld{})
	if l.storage.down.Load() {
		<-l.back
	}
	return err
}

type stillHeld struct{}

func (stillHeld) IsHeld(context.Context) bool { return true }

func TestUnsavedTokensAreWrittenUnaskedOnceTheStorageAnswersEvenWhenARetryJoinedACallTheOutageHeldUp(t *testing.T) {
	// The others, honouring this process's intent, wait for exactly this write (issue 36).
	tn := newTenant(t)
	storage := &outageStorage{MemoryStorage: NewMemoryStorage()}
	lock := &heldUpRelease{storage: storage, back: make(chan struct{})}
	failed := make(chan struct{}, 8)
	m, c := newManager(t, tn, nil, WithStorage(storage), WithLock(lock), WithOnChange(func(e Event) {
		if e.Kind == EventStorageFailed {
			failed <- struct{}{}
		}
	}))
	signIn(t, m)
	c.Advance(16 * time.Minute)
	// The outage begins while the refresh is in flight, after its intent was written (before it,
	// nothing would be sent: no intent, no send, D6).
	tn.hold = func(string) { storage.down.Store(true) }
	held := make(chan string, 1)
	go func() {
		token, err := m.AccessToken(context.Background())
		if err != nil {
			t.Error(err)
		}
		held <- token
	}()
	<-failed
	c.Advance(2 * time.Second) // past the second during which unsaved tokens are served as they are
	// The first retry comes while the call still waits for its lock release: it joins that call.
	time.Sleep(1500 * time.Millisecond)
	storage.down.Store(false)
	close(lock.back)
	if token := <-held; token != "at_0002_secret_access" {
		t.Fatalf("the call got %q", token)
	}
	// No call comes; the next retry writes the tokens.
	time.Sleep(1500 * time.Millisecond)
	raw, present, _ := storage.MemoryStorage.Get(context.Background(), m.tokensKey)
	if stored := parseRecord(raw, present); stored == nil || stored.AccessToken != "at_0002_secret_access" || tn.refreshes.Load() != 1 {
		t.Fatalf("stored %+v after %d refreshes: the rotated tokens were never written without a call", stored, tn.refreshes.Load())
	}
}
