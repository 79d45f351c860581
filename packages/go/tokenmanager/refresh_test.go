package tokenmanager

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
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
