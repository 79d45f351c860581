package tokenmanager

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/tenant-integration/sdk/packages/go/internal/procid"
)

// Intent beats (D7; spec/token-store/README.md, "Paused processes"): a holder that lives rewrites its
// intent with a new since every min(1 s, intent wait / 4) until it deletes it, never over another
// holder's intent; a waiter's watch restarts at each beat, so it waits for a holder that lives
// however slowly the tenant answers.

func TestABeatOfTheHolderRestartsTheWaitersWatch(t *testing.T) {
	m, tn, storage, mono, stored := expiredWithIntent(t, 0, os.Getpid(), procid.Host())
	reads := 0
	storage.hooks(func(key string) error {
		if key != m.intentKey {
			return nil
		}
		reads++
		mono.Advance(100 * time.Millisecond)
		switch {
		case reads == 35: // 3.4 s of watching, more than three intent waits: the holder stores
			holderStores(m, storage, stored)
		case reads%5 == 0: // the holder beats every 0.5 s
			raw, _, _ := storage.inner.Get(context.Background(), m.intentKey)
			intent := parseIntent(raw, true)
			intent.Since++
			_ = storage.inner.Set(context.Background(), m.intentKey, marshal(intent))
		}
		return nil
	}, nil)
	token, err := m.AccessToken(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if token != "at_from_the_holder" || tn.refreshes.Load() != 0 {
		t.Fatalf("the waiter presented the refresh token of a holder that beat every 0.5 s (token %q, %d refreshes after %d reads), want it to wait for the holder's tokens", token, tn.refreshes.Load(), reads)
	}
}

// storedIntent reads the intent under the manager's intent key (nil: none).
func storedIntent(t *testing.T, m *Manager, storage *sharedStorage) *intentRecord {
	t.Helper()
	raw, present, err := storage.inner.Get(context.Background(), m.intentKey)
	if err != nil {
		t.Fatal(err)
	}
	return parseIntent(raw, present)
}

// slowRefresh signs a manager in on a shared storage (intent wait 200 ms: a beat every 50 ms), lets
// its token expire and starts a refresh the tenant holds until release is closed; it returns once
// the request reached the tenant, and the refresh's result on done; release lets the tenant answer.
func slowRefresh(t *testing.T) (m *Manager, storage *sharedStorage, release func(), done chan error) {
	t.Helper()
	tn := newTenant(t)
	storage = &sharedStorage{inner: NewMemoryStorage()}
	m, wall := newManager(t, tn, nil, WithStorage(storage), WithLock(&ProcessLock{}), WithIntentWait(200*time.Millisecond))
	signIn(t, m)
	wall.Advance(20 * time.Minute)
	arrived, answer, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	var once sync.Once
	release = func() { once.Do(func() { close(answer) }) }
	t.Cleanup(release) // a failed test lets the tenant answer
	tn.hold = func(string) { close(arrived); <-answer }
	go func() { _, err := m.AccessToken(context.Background()); done <- err }()
	select {
	case <-arrived:
	case err := <-done:
		t.Fatalf("the refresh ended before it reached the tenant: %v", err)
	}
	return m, storage, release, done
}

func TestTheHolderBeatsWhileTheTenantIsSlowAndNeverOverAnotherHoldersIntent(t *testing.T) {
	m, storage, release, done := slowRefresh(t)
	first := storedIntent(t, m, storage)
	time.Sleep(300 * time.Millisecond) // six beats
	beaten := storedIntent(t, m, storage)
	if first == nil || beaten == nil || beaten.Holder != first.Holder || beaten.Since <= first.Since {
		t.Fatalf("the intent was not beaten while the request was in flight: %+v, then %+v", first, beaten)
	}
	if beaten.Fingerprint != first.Fingerprint || beaten.Pid != first.Pid || beaten.Host != first.Host {
		t.Fatalf("a beat changed more than the since: %+v, then %+v", first, beaten)
	}
	// Another process took the lock and stored its own intent, right before a beat reads it: no beat
	// may overwrite it.
	other := intentRecord{Fingerprint: first.Fingerprint, Holder: "the-other-refresh", Since: 1, Pid: 4242, Host: "another-host.invalid"}
	replaced := make(chan struct{})
	storage.hooks(func(key string) error {
		if key == m.intentKey {
			storage.hooks(nil, nil)
			_ = storage.inner.Set(context.Background(), m.intentKey, marshal(other))
			close(replaced)
		}
		return nil
	}, nil)
	<-replaced
	time.Sleep(300 * time.Millisecond)
	if after := storedIntent(t, m, storage); after == nil || *after != other {
		t.Fatalf("a beat overwrote another holder's intent %+v with %+v", other, after)
	}
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestBeatsStopWhenTheIntentIsDeleted(t *testing.T) {
	m, storage, release, done := slowRefresh(t)
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if intent := storedIntent(t, m, storage); intent != nil {
		t.Fatalf("the intent %+v outlived the refresh", intent)
	}
	writes := 0
	storage.hooks(nil, func(key string) {
		if key == m.intentKey {
			writes++
		}
	})
	time.Sleep(300 * time.Millisecond) // six beat intervals
	storage.hooks(nil, nil)
	if intent := storedIntent(t, m, storage); intent != nil || writes != 0 {
		t.Fatalf("after the intent was deleted, %d beats wrote it again (%+v)", writes, intent)
	}
}

func TestAnIntentWaitOfNanosecondsBeatsEveryMillisecondAndNeverPanics(t *testing.T) {
	m := &Manager{settings: &settings{o: options{intentWait: 3 * time.Nanosecond}}}
	if got := m.beatInterval(); got != time.Millisecond {
		t.Fatalf("beat interval %v for an intent wait of 3 ns, want 1ms", got)
	}
	m.o.intentWait = time.Minute
	if got := m.beatInterval(); got != time.Second {
		t.Fatalf("beat interval %v for an intent wait of 1 min, want 1s", got)
	}
}

func TestTheEndOfARefreshNeverWaitsForABeatWhoseStorageReadHangs(t *testing.T) {
	m, storage, release, done := slowRefresh(t)
	hung, unhang := make(chan struct{}), make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(unhang) }) })
	var hanging sync.Once
	storage.hooks(func(key string) error {
		if key != m.intentKey {
			return nil
		}
		first := false
		hanging.Do(func() { first = true })
		if first { // the next beat's read: the node stopped answering
			close(hung)
			select {
			case <-unhang:
			case <-time.After(10 * time.Second):
			}
		}
		return nil
	}, nil)
	<-hung
	release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the refresh waited for a beat whose storage read hangs, want it to end without it")
	}
	writes := 0
	storage.hooks(nil, func(key string) {
		if key == m.intentKey {
			writes++
		}
	})
	once.Do(func() { close(unhang) })
	time.Sleep(300 * time.Millisecond) // the abandoned beat's read answers
	storage.hooks(nil, nil)
	if intent := storedIntent(t, m, storage); intent != nil || writes != 0 {
		t.Fatalf("the abandoned beat wrote the deleted intent again (%d writes, %+v)", writes, intent)
	}
}

func TestAClosedOrSignedOutManagerStopsBeatingAndLeavesItsIntentToTheWaitersWatch(t *testing.T) {
	for _, end := range []string{"Close", "SignOut"} {
		t.Run(end, func(t *testing.T) {
			m, storage, release, done := slowRefresh(t)
			var mu sync.Mutex
			writes := 0
			storage.hooks(nil, func(key string) {
				if key == m.intentKey {
					mu.Lock()
					writes++
					mu.Unlock()
				}
			})
			count := func() int { mu.Lock(); defer mu.Unlock(); return writes }
			for deadline := time.Now().Add(10 * time.Second); count() < 2 && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if count() < 2 {
				t.Fatal("the holder did not beat")
			}
			if end == "Close" {
				if err := m.Close(); err != nil {
					t.Fatal(err)
				}
			} else if err := m.SignOut(context.Background()); err != nil {
				t.Fatal(err)
			}
			before, left := count(), storedIntent(t, m, storage)
			time.Sleep(300 * time.Millisecond) // six beat intervals
			if after := count(); after != before || left == nil {
				t.Fatalf("after %s the holder beat %d times more (intent left: %+v), want none and the intent left for the waiters' watch", end, after-before, left)
			}
			storage.hooks(nil, nil)
			release()
			<-done
		})
	}
}
