package tokenmanager

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/tenant-integration/sdk/packages/go/internal/tokenstoreschema"
)

func newSessions(t *testing.T, tn *tenant, opts ...Option) (*Sessions, *clock) {
	t.Helper()
	c := &clock{now: time.Now()}
	s, err := NewSessions(testConfig(tn), append([]Option{WithClock(c.Now), WithRetryDelay(time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// signInSession signs session id in as the tenant's user of the same name, through BeginSignIn and
// CompleteSignIn with the browser's binding.
func signInSession(t *testing.T, s *Sessions, id string) {
	t.Helper()
	ctx := context.Background()
	signIn, err := s.BeginSignIn(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	signedIn, err := s.CompleteSignIn(ctx, Callback{URL: callbackAs(t, &signIn.AuthorizationRequest, id), Binding: signIn.Binding})
	if err != nil || signedIn.SessionID != id {
		t.Fatalf("%s: %+v, %v", id, signedIn, err)
	}
}

// userSeen is what GET /api/v1/auth/user answers session id's client.
func userSeen(t *testing.T, s *Sessions, tn *tenant, id string) string {
	client, err := s.Client(id)
	if err != nil {
		t.Fatal(err)
	}
	response, err := client.Get(tn.URL + "/api/v1/auth/user")
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	body, _ := io.ReadAll(response.Body)
	return string(body)
}

func TestEverySessionIsSignedInAndServedAsItsOwnUserAfterExpiryWithOneRefreshEach(t *testing.T) {
	tn := newTenant(t)
	s, clock := newSessions(t, tn)
	ids := make([]string, 40)
	requests := make([]*SignIn, len(ids))
	for i := range ids {
		ids[i] = fmt.Sprintf("user-%d", i)
		var err error
		if requests[i], err = s.BeginSignIn(context.Background(), ids[i], ""); err != nil {
			t.Fatal(err)
		}
	}
	for i := len(ids) - 1; i >= 0; i-- { // completed in reverse order
		callback := Callback{URL: callbackAs(t, &requests[i].AuthorizationRequest, ids[i]), Binding: requests[i].Binding, SessionID: ids[i]}
		if _, err := s.CompleteSignIn(context.Background(), callback); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(16 * time.Minute)
	var wg sync.WaitGroup
	for _, id := range ids {
		for range 5 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if seen := userSeen(t, s, tn, id); seen != fmt.Sprintf(`{"id":%q}`, id) {
					t.Errorf("session %s saw %s", id, seen)
				}
			}()
		}
	}
	wg.Wait()
	if refreshes := tn.refreshes.Load(); refreshes != int32(len(ids)) {
		t.Fatalf("%d refreshes for %d sessions", refreshes, len(ids))
	}
}

// A refresh of one session that hangs at the tenant holds up no other session's.
func TestOneSessionsRefreshNeverWaitsForAnothers(t *testing.T) {
	tn := newTenant(t)
	s, clock := newSessions(t, tn)
	signInSession(t, s, "slow")
	signInSession(t, s, "fast")
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // before the tenant closes, also when the test fails
	tn.hold = func(user string) {
		if user == "slow" {
			<-release
		}
	}
	clock.Advance(16 * time.Minute)
	slow := make(chan error, 1)
	go func() {
		m, _ := s.Manager("slow")
		_, err := m.AccessToken(context.Background())
		slow <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for tn.refreshes.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // until the slow session's refresh is at the tenant
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, _ := s.Manager("fast")
	if _, err := m.AccessToken(ctx); err != nil {
		t.Fatalf("the other session's refresh waited: %v", err)
	}
	free()
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
}

func TestACallbackBroughtByAnotherBrowserIsRefusedBeforeAnyExchangeAndUsedUp(t *testing.T) {
	tn := newTenant(t)
	s, _ := newSessions(t, tn)
	ctx := context.Background()
	for _, other := range []string{NewBinding(), ""} {
		signIn, err := s.BeginSignIn(ctx, "ada", "")
		if err != nil {
			t.Fatal(err)
		}
		callback := Callback{URL: callbackFor(t, &signIn.AuthorizationRequest), Binding: other}
		if _, err := s.CompleteSignIn(ctx, callback); !errors.Is(err, ErrStateMismatch) || !strings.Contains(err.Error(), "another browser") {
			t.Fatalf("binding %q: %v", other, err)
		}
		callback.Binding = signIn.Binding
		if _, err := s.CompleteSignIn(ctx, callback); !errors.Is(err, ErrNoPendingSignIn) {
			t.Fatalf("the pending sign-in was not used up: %v", err)
		}
	}
	if tn.requests.Load() != 0 {
		t.Fatalf("%d requests", tn.requests.Load())
	}
}

func TestASignInIsCompletedOnlyForTheSessionThatBeganIt(t *testing.T) {
	tn := newTenant(t)
	storage := NewMemoryStorage()
	s, _ := newSessions(t, tn, WithStorage(storage))
	ctx := context.Background()
	signIn, _ := s.BeginSignIn(ctx, "ada", "")
	callback := Callback{URL: callbackFor(t, &signIn.AuthorizationRequest), Binding: signIn.Binding, SessionID: "grace"}
	if _, err := s.CompleteSignIn(ctx, callback); !errors.Is(err, ErrStateMismatch) || !strings.Contains(err.Error(), "another session") {
		t.Fatalf("another logged-in user: %v", err)
	}
	// A manager's own sign-in (no session) is not the server's.
	plain, _ := newManager(t, tn, nil, WithStorage(storage))
	request := begin(t, plain)
	if _, err := s.CompleteSignIn(ctx, Callback{URL: callbackFor(t, request)}); !errors.Is(err, ErrStateMismatch) {
		t.Fatalf("a sign-in without a session: %v", err)
	}
	if tn.requests.Load() != 0 {
		t.Fatalf("%d requests", tn.requests.Load())
	}
}

// An app's own binding (its server session's id) instead of a cookie.
func TestAnAppsOwnBindingBindsTheSignIn(t *testing.T) {
	tn := newTenant(t)
	s, _ := newSessions(t, tn)
	ctx := context.Background()
	signIn, err := s.BeginSignIn(ctx, "ada", "app-session-7f3a9c2e")
	if err != nil || signIn.Binding != "app-session-7f3a9c2e" {
		t.Fatalf("%v, %v", signIn, err)
	}
	if strings.Contains(signIn.String(), "app-session") || strings.Contains(signIn.String(), "state=") {
		t.Fatalf("String shows a secret: %s", signIn)
	}
	if _, err := s.CompleteSignIn(ctx, Callback{URL: callbackFor(t, &signIn.AuthorizationRequest), Binding: "app-session-7f3a9c2e"}); err != nil {
		t.Fatal(err)
	}
}

func TestNoSessionsCallTakesABadIDAndNothingIsWritten(t *testing.T) {
	tn := newTenant(t)
	storage := NewMemoryStorage()
	s, _ := newSessions(t, tn, WithStorage(storage))
	ctx := context.Background()
	vectors := tokenstoreschema.ReadVectors(t)
	for _, invalid := range vectors.SessionIDs.Invalid {
		id := invalid.ID
		_, errManager := s.Manager(id)
		_, errBegin := s.BeginSignIn(ctx, id, "")
		_, errComplete := s.CompleteSignIn(ctx, Callback{URL: "http://127.0.0.1:53682/callback?code=c&state=s", SessionID: id})
		if id == "" {
			errComplete = ErrInvalidSessionID // an empty Callback.SessionID asks for no check
		}
		_, errSignedIn := s.IsSignedIn(ctx, id)
		_, errClient := s.Client(id)
		_, errTransport := s.Transport(id)
		for i, err := range []error{errManager, errBegin, errComplete, errSignedIn, s.Revoke(ctx, id), s.SignOut(ctx, id), errClient, errTransport} {
			if !errors.Is(err, ErrInvalidSessionID) {
				t.Errorf("%s, call %d: %v", invalid.Note, i, err)
			}
		}
	}
	if len(storage.data) != 0 || tn.requests.Load() != 0 || s.Cached() != 0 {
		t.Fatalf("written %v, %d requests, %d cached", storage.data, tn.requests.Load(), s.Cached())
	}
}

func TestRevokeSignOutAndIsSignedInNameTheirSession(t *testing.T) {
	tn := newTenant(t)
	s, _ := newSessions(t, tn)
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c"} {
		signInSession(t, s, id)
	}
	if err := s.Revoke(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.SignOut(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{"a": false, "b": false, "c": true, "d": false} {
		if got, err := s.IsSignedIn(ctx, id); err != nil || got != want {
			t.Errorf("%s: signed in %v, %v", id, got, err)
		}
	}
	if !strings.Contains(strings.Join(tn.bodies, "\n"), "token_type_hint=access_token") {
		t.Fatal("no revocation was sent")
	}
}

func TestIdleManagersAreDroppedAndMadeAgainFromTheStorage(t *testing.T) {
	tn := newTenant(t)
	s, _ := newSessions(t, tn, WithMaxIdle(50*time.Millisecond))
	signInSession(t, s, "ada")
	first, _ := s.Manager("ada")
	waitFor(t, func() bool { return s.Cached() == 0 })
	again, _ := s.Manager("ada")
	if again == first {
		t.Fatal("the idle manager was kept")
	}
	if seen := userSeen(t, s, tn, "ada"); seen != `{"id":"ada"}` {
		t.Fatalf("after the drop: %s", seen)
	}
}

func TestPastMaxCachedTheLeastRecentlyUsedIdleManagerIsDroppedNeverOneInUse(t *testing.T) {
	tn := newTenant(t)
	s, _ := newSessions(t, tn, WithMaxCached(2))
	busy := s.acquire("busy")
	a, _ := s.Manager("a")
	b, _ := s.Manager("b")
	if s.Cached() != 2 {
		t.Fatalf("%d cached", s.Cached())
	}
	if kept, _ := s.Manager("busy"); kept != busy {
		t.Fatal("a manager in use was dropped")
	}
	if again, _ := s.Manager("a"); again == a {
		t.Fatal("the least recently used idle manager was kept")
	}
	busy.leave()
	_, _ = s.Manager("c")
	if kept, _ := s.Manager("b"); kept == b || s.Cached() != 2 {
		t.Fatalf("%d cached", s.Cached())
	}
}

// failingTokens fails every write of a tokens record while failing is set.
type failingTokens struct {
	*MemoryStorage
	mu      sync.Mutex
	failing bool
}

func (s *failingTokens) Set(ctx context.Context, key, value string) error {
	s.mu.Lock()
	failing := s.failing
	s.mu.Unlock()
	if failing && strings.HasSuffix(key, ":tokens") {
		return errors.New("disk full")
	}
	return s.MemoryStorage.Set(ctx, key, value)
}

func (s *failingTokens) fail(on bool) {
	s.mu.Lock()
	s.failing = on
	s.mu.Unlock()
}

func TestAnIdleManagerWithUnwrittenTokensIsKeptUntilTheyAreWritten(t *testing.T) {
	tn := newTenant(t)
	storage := &failingTokens{MemoryStorage: NewMemoryStorage()}
	s, clock := newSessions(t, tn, WithStorage(storage), WithLock(&ProcessLock{}), WithMaxIdle(30*time.Millisecond))
	signInSession(t, s, "ada")
	clock.Advance(16 * time.Minute)
	storage.fail(true)
	m, _ := s.Manager("ada")
	token, err := m.AccessToken(context.Background())
	if err != nil || tn.userOf(token) != "ada" {
		t.Fatalf("the refreshed token is served from memory: %v", err)
	}
	time.Sleep(200 * time.Millisecond) // several sweeps
	if s.Cached() != 1 {
		t.Fatal("a manager holding the only copy of rotated tokens was dropped")
	}
	storage.fail(false)
	waitFor(t, func() bool { return s.Cached() == 0 })
	stored, ok, _ := storage.Get(context.Background(), "tenant-integration:"+tn.URL+":c:ada:tokens")
	if !ok || !strings.Contains(stored, token) {
		t.Fatal("the tokens were not written before the manager was dropped")
	}
}

func TestEveryRecordOfASessionValidatesAgainstTheSharedSchemas(t *testing.T) {
	tn := newTenant(t)
	storage := &recordingStorage{MemoryStorage: NewMemoryStorage()}
	s, clock := newSessions(t, tn, WithStorage(storage), WithLock(&ProcessLock{}))
	signInSession(t, s, "auth0|64f1c2a9e1b7")
	clock.Advance(16 * time.Minute)
	if seen := userSeen(t, s, tn, "auth0|64f1c2a9e1b7"); !strings.Contains(seen, "auth0") {
		t.Fatal(seen)
	}
	kinds := map[string]int{}
	for _, write := range storage.writes {
		name := tokenstoreschema.ForKey(write[0])
		kinds[name]++
		if err := tokenstoreschema.Errors(t, name, write[1]); err != nil {
			t.Errorf("the %s written under %s: %v", name, write[0], err)
		}
		if name == tokenstoreschema.PendingRecord && (!strings.Contains(write[1], `"sessionId":"auth0|64f1c2a9e1b7"`) || !strings.Contains(write[1], `"browser":"`)) {
			t.Errorf("the pending record names no session or browser: %s", write[1])
		}
	}
	if kinds[tokenstoreschema.PendingRecord] != 1 || kinds[tokenstoreschema.TokenRecord] != 2 || kinds[tokenstoreschema.IntentRecord] != 1 {
		t.Fatalf("writes by schema %v", kinds)
	}
}

func TestSessionsAndManagersRefuseEachOthersOptions(t *testing.T) {
	tn := newTenant(t)
	if _, err := NewSessions(testConfig(tn), WithSessionID("a")); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("NewSessions with WithSessionID: %v", err)
	}
	for _, option := range []Option{WithMaxCached(10), WithMaxIdle(time.Minute)} {
		if _, err := New(testConfig(tn), option); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("New with a Sessions option: %v", err)
		}
	}
	if _, err := NewSessions(testConfig(tn), WithMaxCached(0)); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("WithMaxCached(0): %v", err)
	}
}

// Every session's requests go through the one transport of WithHTTPClient.
func TestEverySessionSharesTheOneHTTPClientsTransport(t *testing.T) {
	tn := newTenant(t)
	counting := &countingTransport{next: http.DefaultTransport}
	s, _ := newSessions(t, tn, WithHTTPClient(&http.Client{Transport: counting}))
	for _, id := range []string{"a", "b"} {
		signInSession(t, s, id)
		_ = userSeen(t, s, tn, id)
	}
	if got := counting.count(); got != 4 { // two code exchanges, two API calls
		t.Fatalf("%d requests through the shared transport", got)
	}
}

type countingTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	n    int
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.next.RoundTrip(r)
}

func (c *countingTransport) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func waitFor(t *testing.T, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !done(); {
		if time.Now().After(deadline) {
			t.Fatal("not within 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A dropped manager is garbage at once: nothing of it stays, not even the timer of its armed token
// (which would keep it until the token's freshness deadline, many minutes later).
func TestADroppedManagerIsLeftToTheGarbageCollector(t *testing.T) {
	tn := newTenant(t)
	s, err := NewSessions(testConfig(tn), WithMaxIdle(30*time.Millisecond)) // the default clock: tokens are armed
	if err != nil {
		t.Fatal(err)
	}
	signInSession(t, s, "ada")
	_ = userSeen(t, s, tn, "ada")
	m, _ := s.Manager("ada")
	if m.armed.Load() == nil {
		t.Fatal("the token was not armed: the test shows nothing")
	}
	gone := weak.Make(m)
	m = nil
	waitFor(t, func() bool { return s.Cached() == 0 })
	waitFor(t, func() bool { runtime.GC(); return gone.Value() == nil })
}
