package tokenmanager

// The bearer layer's armed token (armed.go), with the default clock: the wall clock is played by a
// test clock that counts its reads, and the monotonic clock by timers fired by hand. With an injected
// clock nothing is armed: TestTheTransportSendsTheCurrentTokenAfterARefresh (transport_test.go).

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
)

// countingClock is a wall clock that can jump and counts how often it is read.
type countingClock struct {
	clock
	reads int
}

func (c *countingClock) Now() time.Time {
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	return c.clock.Now()
}

func (c *countingClock) Reads() int { c.mu.Lock(); defer c.mu.Unlock(); return c.reads }

// handTimers stands for the monotonic clock: a timer fires only when the test says its deadline came.
type handTimers struct {
	mu     sync.Mutex
	timers []*handTimer
}

type handTimer struct {
	after   time.Duration
	fire    func()
	stopped bool
}

func (h *handTimers) afterFunc(d time.Duration, f func()) func() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	timer := &handTimer{after: d, fire: f}
	h.timers = append(h.timers, timer)
	return func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		was := !timer.stopped
		timer.stopped = true
		return was
	}
}

// fireAll fires every timer not stopped: their deadlines came on the monotonic clock.
func (h *handTimers) fireAll() {
	h.mu.Lock()
	var due []*handTimer
	for _, timer := range h.timers {
		if !timer.stopped {
			timer.stopped = true
			due = append(due, timer)
		}
	}
	h.mu.Unlock()
	for _, timer := range due {
		timer.fire()
	}
}

func (h *handTimers) live() []*handTimer {
	h.mu.Lock()
	defer h.mu.Unlock()
	var live []*handTimer
	for _, timer := range h.timers {
		if !timer.stopped {
			live = append(live, timer)
		}
	}
	return live
}

// armingManager is a manager with the default clock (so the bearer layer arms its token), whose
// wall clock and timers the test controls, signed in at tn.
func armingManager(t *testing.T, tn *tenant) (*Manager, *countingClock, *handTimers) {
	m, err := New(Config{BaseURL: tn.URL, ClientID: "c", RedirectURI: "http://127.0.0.1:53682/callback", Scopes: []scope.Scope{scope.ProfileRead}},
		WithRetryDelay(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if !m.arms {
		t.Fatal("a manager with the default clock does not arm its token")
	}
	c, timers := &countingClock{clock: clock{now: time.Now()}}, &handTimers{}
	m.o.now, m.afterFunc = c.Now, timers.afterFunc
	signIn(t, m)
	return m, c, timers
}

// apiServer is the tenant's API: it answers 401 to the tokens the test says have expired, else 200,
// and records every Authorization header in order.
type apiServer struct {
	mu      sync.Mutex
	expired map[string]bool
	seen    []string
}

func (a *apiServer) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	header := r.Header.Get("Authorization")
	a.seen = append(a.seen, header)
	status := http.StatusOK
	if a.expired[strings.TrimPrefix(header, "Bearer ")] {
		status = http.StatusUnauthorized
	}
	return &http.Response{StatusCode: status, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
}

func (a *apiServer) expire(token string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.expired == nil {
		a.expired = map[string]bool{}
	}
	a.expired[token] = true
}

func (a *apiServer) headers() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

func send(t *testing.T, client *http.Client, method, target string, body io.Reader) int {
	t.Helper()
	request, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	response, err := client.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	_ = response.Body.Close()
	return response.StatusCode
}

func TestTheArmedTokenGoesWithoutAClockReadUntilItsDeadlineThenARefreshedOneGoesWithout401(t *testing.T) {
	tn := newTenant(t)
	m, c, timers := armingManager(t, tn)
	api := &apiServer{}
	client := &http.Client{Transport: m.Transport(api)}
	target := tn.URL + "/api/v1/auth/user"
	send(t, client, http.MethodGet, target, nil)
	live := timers.live()
	// Fresh for its 15 min lifetime less the 60 s leeway, counted from its receipt (ms-rounded).
	if len(live) != 1 || live[0].after <= 14*time.Minute-time.Second || live[0].after > 14*time.Minute {
		t.Fatalf("armed timers %v, want one at 14 min", live)
	}
	reads := c.Reads()
	for range 3 {
		send(t, client, http.MethodGet, target, nil)
	}
	if c.Reads() != reads {
		t.Fatalf("the armed token's requests read the wall clock %d times", c.Reads()-reads)
	}
	c.Advance(14*time.Minute + time.Second)
	timers.fireAll() // the deadline came on the monotonic clock too
	if status := send(t, client, http.MethodGet, target, nil); status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	got := api.headers()
	if last := got[len(got)-1]; last != "Bearer at_0002_secret_access" || len(got) != 5 || tn.refreshes.Load() != 1 {
		t.Fatalf("headers %q, %d refreshes; want the refreshed token sent at once after the deadline", got, tn.refreshes.Load())
	}
}

func TestAfterTheWallClockJumpsPastExpiryTheTenantsRefusalRefreshesAndReplaysOnce(t *testing.T) {
	// A suspended machine: the wall clock runs on, the monotonic clock (the armed token's timer) stops.
	tn := newTenant(t)
	m, c, timers := armingManager(t, tn)
	api := &apiServer{}
	client := &http.Client{Transport: m.Transport(api)}
	target := tn.URL + "/api/v1/auth/user"
	send(t, client, http.MethodGet, target, nil)
	c.Advance(2 * time.Hour)
	api.expire("at_0001_secret_access")
	if len(timers.live()) != 1 {
		t.Fatal("the token was not armed")
	}
	if status := send(t, client, http.MethodGet, target, nil); status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	// The armed token goes once and is refused (401); the request is then sent again with a
	// refreshed token, and only one refresh is made.
	got := api.headers()
	if len(got) != 3 || got[1] != "Bearer at_0001_secret_access" || got[2] != "Bearer at_0002_secret_access" || tn.refreshes.Load() != 1 {
		t.Fatalf("headers %q, %d refreshes; want the refused token replaced once", got, tn.refreshes.Load())
	}
}

func TestARequestWhoseBodyCannotBeSentAgainNeverTakesTheArmedToken(t *testing.T) {
	tn := newTenant(t)
	m, c, _ := armingManager(t, tn)
	api := &apiServer{}
	client := &http.Client{Transport: m.Transport(api)}
	send(t, client, http.MethodGet, tn.URL+"/api/v1/auth/user", nil) // arms at_0001
	c.Advance(2 * time.Hour)                                         // the wall clock jumps; the timer does not fire
	api.expire("at_0001_secret_access")
	// No GetBody: a 401 could not be answered by sending it again, so the freshness is checked first.
	body := io.NopCloser(strings.NewReader(`{"name":"Ada"}`))
	if status := send(t, client, http.MethodPost, tn.URL+"/api/v1/things", body); status != http.StatusOK {
		t.Fatalf("status %d: the expired armed token was sent with a body that cannot be sent again", status)
	}
	if got := api.headers(); got[len(got)-1] != "Bearer at_0002_secret_access" || len(got) != 2 {
		t.Fatalf("headers %q", got)
	}
}

func TestTheArmedTokenIsDroppedWhenTheSessionChanges(t *testing.T) {
	tn := newTenant(t)
	m, _, timers := armingManager(t, tn)
	api := &apiServer{}
	client := &http.Client{Transport: m.Transport(api)}
	target := tn.URL + "/api/v1/auth/user"
	send(t, client, http.MethodGet, target, nil) // arms at_0001
	if err := m.SignOut(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Get(target); !errors.Is(err, ErrNotSignedIn) {
		t.Fatalf("after sign-out: %v, want NOT_SIGNED_IN", err)
	}
	signIn(t, m) // at_0002
	send(t, client, http.MethodGet, target, nil)
	m.OnUnauthorized("at_0002_secret_access") // the user's own request was refused
	send(t, client, http.MethodGet, target, nil)
	want := []string{"Bearer at_0001_secret_access", "Bearer at_0002_secret_access", "Bearer at_0003_secret_access"}
	if got := api.headers(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("headers %q, want %q", got, want)
	}
	if live := timers.live(); len(live) != 1 {
		t.Fatalf("%d timers left running, want only the current token's", len(live))
	}
}
