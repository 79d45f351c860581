package transport

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// script answers each request with the next of its steps: a status (and Retry-After), recording the
// bodies it got.
type script struct {
	mu     sync.Mutex
	steps  []func(w http.ResponseWriter)
	bodies []string
	calls  int
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, string(raw))
	step := s.steps[min(s.calls, len(s.steps)-1)]
	s.calls++
	s.mu.Unlock()
	step(w)
}

func status(code int, retryAfter string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(code)
	}
}

// waits records the waits instead of waiting (no timed assertions).
type waits struct {
	mu   sync.Mutex
	list []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.list = append(w.list, d)
	w.mu.Unlock()
	return ctx.Err()
}

func serve(t *testing.T, steps ...func(http.ResponseWriter)) (*script, *httptest.Server) {
	s := &script{steps: steps}
	server := httptest.NewServer(s)
	t.Cleanup(server.Close)
	return s, server
}

func client(t *testing.T, w *waits, opts ...Option) *http.Client {
	rt, err := Retry(nil, append([]Option{WithSleep(w.sleep), WithRandom(func() float64 { return 0.5 })}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: rt}
}

func TestAGetAnswered429IsSentAgainAfterItsRetryAfterSeconds(t *testing.T) {
	s, server := serve(t, status(429, "3"), status(200, ""))
	w := &waits{}
	response, err := client(t, w).Get(server.URL + "/api/v1/auth/user")
	if err != nil || response.StatusCode != 200 {
		t.Fatalf("%v %v", response, err)
	}
	if s.calls != 2 || len(w.list) != 1 || w.list[0] != 3*time.Second {
		t.Fatalf("calls %d, waits %v", s.calls, w.list)
	}
}

func TestARetryAfterDateIsWaitedUntil(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	_, server := serve(t, status(503, now.Add(7*time.Second).Format(http.TimeFormat)), status(200, ""))
	w := &waits{}
	response, err := client(t, w, WithClock(func() time.Time { return now })).Get(server.URL)
	if err != nil || response.StatusCode != 200 || len(w.list) != 1 || w.list[0] != 7*time.Second {
		t.Fatalf("%v %v %v", response, err, w.list)
	}
}

func TestWithoutRetryAfterTheBackoffDoublesWithJitterAndStopsAfterTheRetries(t *testing.T) {
	s, server := serve(t, status(500, ""))
	w := &waits{}
	response, err := client(t, w).Get(server.URL)
	if err != nil || response.StatusCode != 500 {
		t.Fatalf("the last answer must come back as it is: %v %v", response, err)
	}
	// d/2 + 0.5·d/2 with d = 300 ms, then 600 ms
	if s.calls != 3 || len(w.list) != 2 || w.list[0] != 225*time.Millisecond || w.list[1] != 450*time.Millisecond {
		t.Fatalf("calls %d, waits %v", s.calls, w.list)
	}
}

func TestTheBackoffIsCappedByTheMaxDelay(t *testing.T) {
	_, server := serve(t, status(503, ""))
	w := &waits{}
	_, _ = client(t, w, WithRetries(4), WithBaseDelay(time.Second), WithMaxDelay(2*time.Second)).Get(server.URL)
	want := []time.Duration{750 * time.Millisecond, 1500 * time.Millisecond, 1500 * time.Millisecond, 1500 * time.Millisecond}
	if len(w.list) != 4 {
		t.Fatalf("%v", w.list)
	}
	for i := range want {
		if w.list[i] != want[i] {
			t.Fatalf("%v", w.list)
		}
	}
}

func TestARetryAfterLongerThanTheMaxDelayReturnsTheAnswerAtOnce(t *testing.T) {
	s, server := serve(t, status(429, "3600"), status(200, ""))
	w := &waits{}
	response, err := client(t, w).Get(server.URL)
	if err != nil || response.StatusCode != 429 || s.calls != 1 || len(w.list) != 0 {
		t.Fatalf("%v %v calls %d", response, err, s.calls)
	}
}

func TestStatusesThatCannotSucceedLaterAndPostsAreNotSentAgain(t *testing.T) {
	for _, c := range []struct {
		method string
		code   int
	}{{"GET", 501}, {"GET", 505}, {"GET", 404}, {"POST", 503}, {"POST", 429}, {"PATCH", 500}} {
		s, server := serve(t, status(c.code, "1"), status(200, ""))
		w := &waits{}
		request, _ := http.NewRequest(c.method, server.URL, strings.NewReader("{}"))
		response, err := client(t, w).Do(request)
		if err != nil || response.StatusCode != c.code || s.calls != 1 {
			t.Errorf("%s answered %d: calls %d, %v", c.method, c.code, s.calls, err)
		}
	}
}

func TestAPutIsSentAgainWithItsWholeBody(t *testing.T) {
	s, server := serve(t, status(503, "0"), status(204, ""))
	w := &waits{}
	request, _ := http.NewRequest(http.MethodPut, server.URL, strings.NewReader(`{"name":"x"}`))
	response, err := client(t, w).Do(request)
	if err != nil || response.StatusCode != 204 || len(s.bodies) != 2 || s.bodies[1] != `{"name":"x"}` {
		t.Fatalf("%v %v %q", response, err, s.bodies)
	}
}

func TestABodyThatCannotBeReadAgainIsSentOnce(t *testing.T) {
	s, server := serve(t, status(503, "0"), status(204, ""))
	w := &waits{}
	request, _ := http.NewRequest(http.MethodPut, server.URL, io.NopCloser(strings.NewReader("stream")))
	request.GetBody = nil
	response, err := client(t, w).Do(request)
	if err != nil || response.StatusCode != 503 || s.calls != 1 {
		t.Fatalf("%v %v calls %d", response, err, s.calls)
	}
}

// refusedURL is a loopback address where nothing listens: its connections are refused.
func refusedURL(t *testing.T) string {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	address := listener.Addr().String()
	listener.Close()
	return "http://" + address + "/api/v1/auth/user?code=abc"
}

func TestARefusedConnectionIsRetriedThenFailsAsNetworkError(t *testing.T) {
	w := &waits{}
	request, _ := http.NewRequest(http.MethodPost, refusedURL(t), strings.NewReader("{}"))
	_, err := client(t, w).Do(request)
	var failure *Error
	if !errors.Is(err, ErrNetworkError) || !errors.As(err, &failure) {
		t.Fatalf("want NETWORK_ERROR, got %v", err)
	}
	// a POST whose connection was never opened never left: it is safe to send again
	if failure.Attempts != 3 || len(w.list) != 2 || failure.Path != "/api/v1/auth/user" {
		t.Fatalf("attempts %d, waits %v, path %q", failure.Attempts, w.list, failure.Path)
	}
	if strings.Contains(failure.Error(), "code=abc") {
		t.Fatalf("the query leaked: %v", failure) // (http.Client's own *url.Error prints the URL: Go's, not ours)
	}
	if !strings.Contains(failure.Error(), "connection refused") { // says why, as an Errorf chain would
		t.Fatalf("%q does not say why", failure)
	}
	var op *net.OpError
	if !errors.As(err, &op) {
		t.Fatalf("the cause's type should stay reachable: %v", err)
	}
}

func TestAPostWhoseConnectionBrokeAfterItLeftIsNotSentAgain(t *testing.T) {
	calls := 0
	broken := roundTripper(func(*http.Request) (*http.Response, error) {
		calls++
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}
	})
	w := &waits{}
	rt, _ := Retry(broken, WithSleep(w.sleep))
	request, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/x", strings.NewReader("{}"))
	_, err := rt.RoundTrip(request)
	if !errors.Is(err, ErrNetworkError) || calls != 1 {
		t.Fatalf("calls %d, %v", calls, err)
	}
	request, _ = http.NewRequest(http.MethodGet, "http://127.0.0.1:1/x", nil)
	calls = 0
	_, _ = rt.RoundTrip(request)
	if calls != 3 {
		t.Fatalf("an idempotent GET is sent again after any connection failure: calls %d", calls)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type kitError struct{}

func (kitError) Error() string     { return "SESSION_ENDED: sign in again" }
func (kitError) ErrorCode() string { return "SESSION_ENDED" }

func TestTheTokenManagersErrorsPassThroughUnchangedAndUnretried(t *testing.T) {
	calls := 0
	rt, _ := Retry(roundTripper(func(*http.Request) (*http.Response, error) { calls++; return nil, kitError{} }))
	request, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:1/x", nil)
	_, err := rt.RoundTrip(request)
	if _, ok := err.(kitError); !ok || calls != 1 {
		t.Fatalf("calls %d, %T %v", calls, err, err)
	}
}

func TestACancelledContextEndsTheWaitWithTheLastAnswer(t *testing.T) {
	s, server := serve(t, status(503, "5"), status(200, ""))
	ctx, cancel := context.WithCancel(context.Background())
	rt, _ := Retry(nil, WithSleep(func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() }))
	request, _ := http.NewRequestWithContext(ctx, http.MethodGet, server.URL, nil)
	response, err := rt.RoundTrip(request)
	if err != nil || response.StatusCode != 503 || s.calls != 1 {
		t.Fatalf("%v %v calls %d", response, err, s.calls)
	}
}

func TestACancelledRequestFailsAsAbortedAndIsNotRetried(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	request, _ := http.NewRequestWithContext(ctx, http.MethodGet, refusedURL(t), nil)
	_, err := client(t, &waits{}).Do(request)
	if !errors.Is(err, ErrAborted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
}

func TestOnRetryIsToldEachRetryWithoutTheRequest(t *testing.T) {
	_, server := serve(t, status(429, "1"), status(503, "2"), status(200, ""))
	var seen []RetryInfo
	response, err := client(t, &waits{}, WithOnRetry(func(i RetryInfo) { seen = append(seen, i) })).Get(server.URL + "/api/v1/x?state=s")
	if err != nil || response.StatusCode != 200 || len(seen) != 2 {
		t.Fatalf("%v %v", seen, err)
	}
	if seen[0].Attempt != 2 || seen[0].Status != 429 || seen[0].Delay != time.Second || seen[1].Attempt != 3 || seen[1].Path != "/api/v1/x" {
		t.Fatalf("%+v", seen)
	}
}

func TestInvalidOptionsAreRefusedWithTheirCode(t *testing.T) {
	for _, opt := range []Option{WithRetries(-1), WithBaseDelay(0), WithMaxDelay(-time.Second), WithRandom(nil), nil} {
		if _, err := New(nil, opt); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%v", err)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(1994, 11, 6, 8, 49, 17, 0, time.UTC)
	cases := map[string]struct {
		d  time.Duration
		ok bool
	}{
		"120":                            {120 * time.Second, true},
		" 0 ":                            {0, true},
		"Sun, 06 Nov 1994 08:49:37 GMT":  {20 * time.Second, true},
		"Sunday, 06-Nov-94 08:49:37 GMT": {20 * time.Second, true},
		"Sun Nov  6 08:49:37 1994":       {20 * time.Second, true},
		"Sun, 06 Nov 1994 08:00:00 GMT":  {0, true},
		"-5":                             {0, false},
		"5s":                             {0, false},
		"soon":                           {0, false},
		"":                               {0, false},
	}
	for value, want := range cases {
		if d, ok := ParseRetryAfter(value, now); d != want.d || ok != want.ok {
			t.Errorf("%q: %v %v", value, d, ok)
		}
	}
}
