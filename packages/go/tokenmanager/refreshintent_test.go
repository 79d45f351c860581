package tokenmanager

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/tenant-integration/sdk/packages/go/internal/procid"
)

// The refresh intent's watch (spec/token-store/README.md, "Paused processes", step 2): a waiter gives
// up on a live holder only after it has itself watched the intent for the intent wait, with every
// read of the storage answering and no two reads of it more than a second apart. The intent's age is
// never a reason: after an outage longer than the intent wait, the holder is still writing its tokens.

// sharedStorage is a storage shared "with other processes" (so the manager writes intents) whose
// reads the test watches: onGet runs before each read, under the test's lock, and may fail it.
type sharedStorage struct {
	inner *MemoryStorage
	mu    sync.Mutex
	onGet func(key string) error
	onSet func(key string)
}

func (s *sharedStorage) Get(ctx context.Context, key string) (string, bool, error) {
	s.mu.Lock()
	hook := s.onGet
	s.mu.Unlock()
	if hook != nil {
		if err := hook(key); err != nil {
			return "", false, err
		}
	}
	return s.inner.Get(ctx, key)
}

func (s *sharedStorage) Set(ctx context.Context, key, value string) error {
	s.mu.Lock()
	hook := s.onSet
	s.mu.Unlock()
	if hook != nil {
		hook(key)
	}
	return s.inner.Set(ctx, key, value)
}

func (s *sharedStorage) Delete(ctx context.Context, key string) error {
	return s.inner.Delete(ctx, key)
}

func (s *sharedStorage) hooks(onGet func(key string) error, onSet func(key string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onGet, s.onSet = onGet, onSet
}

const watchTestWait = time.Second

// expiredWithIntent signs a manager in on a shared storage, lets its access token expire, and
// stores another refresh's intent on its refresh token, written since ago by pid on host.
func expiredWithIntent(t *testing.T, since time.Duration, pid int, host string) (*Manager, *tenant, *sharedStorage, *clock, *tokenRecord) {
	t.Helper()
	tn := newTenant(t)
	storage := &sharedStorage{inner: NewMemoryStorage()}
	m, wall := newManager(t, tn, nil, WithStorage(storage), WithLock(&ProcessLock{}), WithIntentWait(watchTestWait))
	mono := &clock{now: time.Now()} // the watch's clock: it moves only when the test moves it
	m.monotonic = mono.Now
	signIn(t, m)
	wall.Advance(20 * time.Minute)
	raw, _, _ := storage.inner.Get(context.Background(), m.tokensKey)
	stored := parseRecord(raw, true)
	intent := intentRecord{Fingerprint: fingerprint(stored.RefreshToken), Holder: "the-other-refresh",
		Since: float64(wall.Now().Add(-since).UnixMilli()), Pid: pid, Host: host}
	if err := storage.inner.Set(context.Background(), m.intentKey, marshal(intent)); err != nil {
		t.Fatal(err)
	}
	return m, tn, storage, mono, stored
}

// holderStores plays the intent's holder finishing: its rotated tokens stored, its intent deleted.
// It runs in the manager's goroutine, so it reports nothing (a memory storage does not fail).
func holderStores(m *Manager, storage *sharedStorage, from *tokenRecord) {
	seq := from.seq() + 1
	rotated := &tokenRecord{AccessToken: "at_from_the_holder", RefreshToken: "rt_from_the_holder", TokenType: "Bearer",
		ExpiresIn: 900, ReceivedAt: float64(m.o.now().UnixMilli()), ID: newState(), Session: from.Session, Seq: &seq}
	_ = storage.inner.Set(context.Background(), m.tokensKey, rotated.serialize())
	_ = storage.inner.Delete(context.Background(), m.intentKey)
}

func TestAnIntentOlderThanTheIntentWaitIsWaitedForWhileItsHolderLives(t *testing.T) {
	// Written an hour ago (an outage longer than the intent wait) by a process of this host that lives.
	m, tn, storage, mono, stored := expiredWithIntent(t, time.Hour, os.Getpid(), procid.Host())
	reads := 0
	storage.hooks(func(key string) error {
		if key == m.intentKey {
			reads++
			mono.Advance(50 * time.Millisecond)
			if reads == 5 { // a quarter of the watch: the holder stores its rotated tokens
				holderStores(m, storage, stored)
			}
		}
		return nil
	}, nil)
	token, err := m.AccessToken(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if token != "at_from_the_holder" || tn.refreshes.Load() != 0 {
		t.Fatalf("the waiter presented the holder's refresh token (token %q, %d refreshes) instead of waiting for its tokens", token, tn.refreshes.Load())
	}
}

// watchLog records, on the watch's clock, each read of the intent and the moment the waiter wrote
// its own intent (it decided to present the token).
type watchLog struct {
	mu        sync.Mutex
	reads     []time.Time
	presented time.Time
}

func (w *watchLog) read(at time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reads = append(w.reads, at)
	return len(w.reads)
}

func (w *watchLog) present(at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.presented.IsZero() {
		w.presented = at
	}
}

// watched logs the reads of the intent and the waiter's own intent; each read moves the watch's clock
// by 100 ms, then at (given the read's number) may move it more or fail the read.
func watched(m *Manager, storage *sharedStorage, mono *clock, at func(read int) error) *watchLog {
	log := &watchLog{}
	storage.hooks(func(key string) error {
		if key != m.intentKey {
			return nil
		}
		mono.Advance(100 * time.Millisecond)
		return at(log.read(mono.Now()))
	}, func(key string) {
		if key == m.intentKey {
			log.present(mono.Now())
		}
	})
	return log
}

func TestAFailedReadDuringAWatchFailsTheCallAndTheNextWatchStartsFromZero(t *testing.T) {
	m, tn, storage, mono, _ := expiredWithIntent(t, time.Hour, os.Getpid(), procid.Host())
	log := watched(m, storage, mono, func(read int) error {
		if read == 8 { // 0.7 s into the watch
			return errors.New("connection refused")
		}
		return nil
	})
	_, err := m.AccessToken(context.Background())
	if !errors.Is(err, ErrStorageFailed) || tn.refreshes.Load() != 0 {
		t.Fatalf("a read failed while the intent was watched: got %v and %d refreshes, want STORAGE_FAILED and none", err, tn.refreshes.Load())
	}
	restart := mono.Now()
	if _, err := m.AccessToken(context.Background()); err != nil {
		t.Fatal(err)
	}
	if watched := log.presented.Sub(restart); watched < watchTestWait {
		t.Fatalf("the token was presented after %s of a new watch, want the whole intent wait (%s): the failed read ended the first watch", watched, watchTestWait)
	}
}

func TestTwoReadsOfTheIntentMoreThanASecondApartRestartTheWatch(t *testing.T) {
	m, _, storage, mono, _ := expiredWithIntent(t, time.Hour, os.Getpid(), procid.Host())
	var afterGap time.Time
	log := watched(m, storage, mono, func(read int) error {
		if read == 6 { // 0.5 s into the watch, this process was stopped for 1.5 s
			mono.Advance(1500 * time.Millisecond)
			afterGap = mono.Now()
		}
		return nil
	})
	if _, err := m.AccessToken(context.Background()); err != nil {
		t.Fatal(err)
	}
	if afterGap.IsZero() {
		t.Fatalf("the token was presented after %d reads of the intent, before the watch's first half ended", len(log.reads))
	}
	if watched := log.presented.Sub(afterGap); watched < watchTestWait {
		t.Fatalf("the token was presented %s after the gap, want the whole intent wait (%s) of a new watch", watched, watchTestWait)
	}
}

func TestAHolderOnAnotherHostIsGivenUpAfterOneWholeWatch(t *testing.T) {
	// A fresh intent (its age is no reason either way) by a process this host cannot see.
	m, tn, storage, mono, _ := expiredWithIntent(t, 0, 4242, "another-host.invalid")
	log := watched(m, storage, mono, func(int) error { return nil })
	if _, err := m.AccessToken(context.Background()); err != nil {
		t.Fatal(err)
	}
	first := log.reads[0]
	if watched := log.presented.Sub(first); watched < watchTestWait || tn.refreshes.Load() != 1 {
		t.Fatalf("presented after %s of watching with %d refreshes, want one refresh after the intent wait (%s)", watched, tn.refreshes.Load(), watchTestWait)
	}
}

func TestAnIntentWhoseHolderExitedOnThisHostIsGivenUpAtOnce(t *testing.T) {
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Skip("no true(1) to make an exited process:", err)
	}
	m, tn, storage, mono, _ := expiredWithIntent(t, 0, exited.Process.Pid, procid.Host())
	reads := 0
	storage.hooks(func(key string) error {
		if key == m.intentKey {
			reads++
			mono.Advance(100 * time.Millisecond)
		}
		return nil
	}, nil)
	if _, err := m.AccessToken(context.Background()); err != nil {
		t.Fatal(err)
	}
	if tn.refreshes.Load() != 1 || reads > 2 {
		t.Fatalf("%d refreshes after %d reads of the intent, want one refresh without a watch", tn.refreshes.Load(), reads)
	}
}

// No intent, no send (D6): a refresh whose intent the storage did not take is not sent.

// failingWrites is a storage shared with other processes whose writes of the keys in failing fail
// (a storage fault for those keys alone).
type failingWrites struct {
	inner   *MemoryStorage
	mu      sync.Mutex
	failing map[string]bool
	err     error // what a failing write returns; a plain "no space left on device" when nil
}

func (s *failingWrites) Get(ctx context.Context, key string) (string, bool, error) {
	return s.inner.Get(ctx, key)
}

func (s *failingWrites) Set(ctx context.Context, key, value string) error {
	s.mu.Lock()
	fails := s.failing[key]
	s.mu.Unlock()
	if fails && s.err != nil {
		return s.err
	}
	if fails {
		return errors.New("no space left on device")
	}
	return s.inner.Set(ctx, key, value)
}

func (s *failingWrites) Delete(ctx context.Context, key string) error {
	return s.inner.Delete(ctx, key)
}

func (s *failingWrites) fail(keys ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failing = map[string]bool{}
	for _, key := range keys {
		s.failing[key] = true
	}
}

const noIntentMessage = "STORAGE_FAILED: the refresh intent could not be written (no space left on device), so the refresh was not sent; the stored tokens are unchanged and the next call tries again"

func TestAnUnwritableIntentFailsTheRefreshWithStorageFailedAndNothingIsSent(t *testing.T) {
	tn := newTenant(t)
	storage := &failingWrites{inner: NewMemoryStorage()}
	m, c := newManager(t, tn, nil, WithStorage(storage), WithLock(&ProcessLock{}))
	signIn(t, m)
	before, _, _ := storage.inner.Get(context.Background(), m.tokensKey)
	storage.fail(m.intentKey)
	c.Advance(16 * time.Minute)
	_, err := m.AccessToken(context.Background())
	if !errors.Is(err, ErrStorageFailed) || err.Error() != noIntentMessage {
		t.Fatalf("got %v, want %q", err, noIntentMessage)
	}
	if n := tn.refreshes.Load(); n != 0 {
		t.Fatalf("%d refresh requests reached the tenant without an intent", n)
	}
	if after, _, _ := storage.inner.Get(context.Background(), m.tokensKey); after != before {
		t.Fatal("the stored tokens changed")
	}
	storage.fail()
	if _, err := m.AccessToken(context.Background()); err != nil || tn.refreshes.Load() != 1 {
		t.Fatalf("the next call did not refresh: %v, %d refreshes", err, tn.refreshes.Load())
	}
}

func TestAnUnwritableIntentsMessageQuotesAKitErrorOnceWithItsCodeAsGoErrorsPrint(t *testing.T) {
	tn := newTenant(t)
	full := &Error{Code: CodeIOFailed, Message: "cannot write the token file /data/tokens.json (ENOSPC)",
		Err: errors.New("write /data/tokens.json: no space left on device")}
	storage := &failingWrites{inner: NewMemoryStorage(), err: full}
	m, c := newManager(t, tn, nil, WithStorage(storage), WithLock(&ProcessLock{}))
	signIn(t, m)
	storage.fail(m.intentKey)
	c.Advance(16 * time.Minute)
	_, err := m.AccessToken(context.Background())
	want := "STORAGE_FAILED: the refresh intent could not be written (IO_FAILED: cannot write the token file /data/tokens.json (ENOSPC): write /data/tokens.json: no space left on device), so the refresh was not sent; the stored tokens are unchanged and the next call tries again"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	var cause *Error
	if !errors.As(errors.Unwrap(err), &cause) || cause.Code != CodeIOFailed {
		t.Fatalf("the cause lost its code: %v", errors.Unwrap(err))
	}
}

func TestTheIntentAndThenTheTokensUnwritableNoOtherProcessPresentsARotatedAwayToken(t *testing.T) {
	tn := newTenant(t)
	storage := &failingWrites{inner: NewMemoryStorage()}
	first, c := newManager(t, tn, nil, WithStorage(storage), WithLock(&ProcessLock{}))
	signIn(t, first)
	storage.fail(first.intentKey, first.tokensKey)
	c.Advance(16 * time.Minute)
	if _, err := first.AccessToken(context.Background()); !errors.Is(err, ErrStorageFailed) {
		t.Fatalf("got %v, want STORAGE_FAILED", err)
	}
	// The first process gives up (or dies); the storage answers again; another process calls.
	storage.fail()
	second, c2 := newManager(t, tn, nil, WithStorage(storage), WithLock(&ProcessLock{}))
	c2.Advance(16 * time.Minute)
	if _, err := second.AccessToken(context.Background()); err != nil {
		t.Fatalf("the other process lost the session: %v", err)
	}
	tn.mu.Lock()
	defer tn.mu.Unlock()
	presented := map[string]int{}
	for _, raw := range tn.bodies {
		var body map[string]string
		_ = json.Unmarshal([]byte(raw), &body)
		if body["grant_type"] == "refresh_token" {
			presented[body["refresh_token"]]++
		}
	}
	for _, n := range presented {
		if n > 1 {
			t.Fatalf("a refresh token was presented %d times: the tenant revokes the family", n)
		}
	}
}
