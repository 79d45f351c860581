package main

// The rows of a server acting for many users (tokenmanager.Sessions, issue 39): the memory of each
// cached session and of each dropped one, and the cost of a request for a user through
// Sessions.Client against building that user's manager by hand (tokenmanager.New with
// WithSessionID and its Transport), as a server without Sessions would. In process: one tenant
// RoundTripper answers the code exchanges and the API calls without a network.

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/internal/benchstack"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// sessionsCount is how many sessions the rows keep.
const sessionsCount = 1000

// tenantTransport answers the code exchange with new tokens each time and the API with a user.
type tenantTransport struct{ issued atomic.Int64 }

func (t *tenantTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	body := benchstack.User
	if r.URL.Path == "/oauth/token" {
		n := t.issued.Add(1)
		body = fmt.Sprintf(`{"access_token":"at_bench_%020d","refresh_token":"rt_bench_%020d","token_type":"Bearer","expires_in":3600,"scope":"profile:read"}`, n, n)
	}
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)), Request: r}, nil
}

var sessionsConfig = tokenmanager.Config{BaseURL: tenant, ClientID: "bench", RedirectURI: "https://app.example.org/callback",
	Scopes: []scope.Scope{scope.ProfileRead}}

// sessionID is the id of session i: an e-mail address, as many apps' user ids are.
func sessionID(i int) string { return fmt.Sprintf("user%06d@example.org", i) }

// signedInStorage is a memory storage holding n signed-in sessions, signed in through a Sessions
// that is then dropped.
func signedInStorage(n int, rt http.RoundTripper) *tokenmanager.MemoryStorage {
	storage := tokenmanager.NewMemoryStorage()
	sessions, err := tokenmanager.NewSessions(sessionsConfig, tokenmanager.WithStorage(storage), tokenmanager.WithHTTPClient(&http.Client{Transport: rt}))
	must(err)
	ctx := context.Background()
	for i := range n {
		signIn, err := sessions.BeginSignIn(ctx, sessionID(i), "")
		must(err)
		authorize, _ := url.Parse(signIn.URL)
		callback := signIn.RedirectURI + "?code=bench-code&state=" + url.QueryEscape(authorize.Query().Get("state"))
		_, err = sessions.CompleteSignIn(ctx, tokenmanager.Callback{URL: callback, Binding: signIn.Binding})
		must(err)
	}
	return storage
}

// heapBytes is the live heap after two collections.
func heapBytes() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc)
}

// get sends GET /api/v1/auth/user with client and reads the answer.
func get(client *http.Client) {
	response, err := client.Get(tenant + "/api/v1/auth/user")
	must(err)
	_, _ = io.Copy(io.Discard, response.Body)
	_ = response.Body.Close()
	if response.StatusCode != 200 {
		must(fmt.Errorf("status %d", response.StatusCode))
	}
}

// memoryRound measures, on a storage of sessionsCount signed-in sessions: the heap that the cached
// managers add once each session made a request (its tokens read, its bearer layer made, its token
// armed), and what is left of them once the Sessions dropped every one as idle. Bytes per session.
func memoryRound() (cached, dropped float64) {
	rt := &tenantTransport{}
	storage := signedInStorage(sessionsCount, rt)
	const idle = 2 * time.Second
	sessions, err := tokenmanager.NewSessions(sessionsConfig, tokenmanager.WithStorage(storage),
		tokenmanager.WithHTTPClient(&http.Client{Transport: rt}), tokenmanager.WithMaxIdle(idle))
	must(err)
	for attempt := 0; ; attempt++ {
		base := heapBytes()
		started := time.Now()
		for i := range sessionsCount {
			client, err := sessions.Client(sessionID(i))
			must(err)
			get(client)
		}
		withCached := heapBytes()
		if sessions.Cached() == sessionsCount && time.Since(started) < idle/2 {
			cached = (withCached - base) / sessionsCount
			for sessions.Cached() > 0 {
				time.Sleep(100 * time.Millisecond)
			}
			dropped = (heapBytes() - base) / sessionsCount
			runtime.KeepAlive(sessions)
			runtime.KeepAlive(storage)
			return cached, dropped
		}
		if attempt == 5 {
			must(fmt.Errorf("the sessions were dropped while they were measured (a machine too busy?)"))
		}
		for sessions.Cached() > 0 { // too slow: measure again from nothing cached
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// memoryRows is the median of a few rounds of memoryRound, with their range.
func memoryRows(rounds int) []map[string]any {
	var cached, dropped []float64
	for range rounds {
		c, d := memoryRound()
		cached, dropped = append(cached, c), append(dropped, d)
	}
	const goal = 4096
	describe := func(values []float64, what string) string {
		return fmt.Sprintf("%.0f B per session %s (median of %d rounds of %d sessions, middle half %.0f–%.0f B, range %.0f–%.0f B; live heap after GC, Sessions on a memory storage, each session having made one request)",
			quantile(values, 0.5), what, rounds, sessionsCount, quantile(values, 0.25), quantile(values, 0.75), slices.Min(values), slices.Max(values))
	}
	// A figure, no comparison: judged by its middle half alone (no A/A applies), as stats.mjs judge does.
	met := quantile(cached, 0.75) <= goal
	verdict := map[bool]string{true: "met", false: "missed"}[met]
	return []map[string]any{
		{"metric": "Go memory per cached session (tokenmanager.Sessions)", "value": describe(cached, "while cached"),
			"goal": "≤ 4 KiB per cached session", "met": met, "verdict": verdict, "aa": "none"},
		{"metric": "Go memory per dropped session (tokenmanager.Sessions)", "value": describe(dropped, "left once dropped as idle"),
			"goal": "", "met": nil},
	}
}

// clientRows measures a request for a user, in paired rounds on the process's CPU time with one P:
// Sessions.Client(id) then the request, against building the user's manager by hand
// (tokenmanager.New with WithSessionID, its Transport, an *http.Client) then the request; and a
// second Sessions against the first, the A/A. All on one storage of sessionsCount signed-in
// sessions, the user changing at each call. The row carries its per-round ratios, which bench.mjs
// judges by the rule of stats.mjs with the A/A beside (no goal: a cost shown, not a target).
func clientRows(rounds, n int) []map[string]any {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	rt := &tenantTransport{}
	storage := signedInStorage(sessionsCount, rt)
	shared := &http.Client{Transport: rt}
	sessions, err := tokenmanager.NewSessions(sessionsConfig, tokenmanager.WithStorage(storage), tokenmanager.WithHTTPClient(shared))
	must(err)
	again, err := tokenmanager.NewSessions(sessionsConfig, tokenmanager.WithStorage(storage), tokenmanager.WithHTTPClient(shared))
	must(err)
	next := 0
	contenders := map[string]func(){
		"sessions": func() {
			client, err := sessions.Client(sessionID(next % sessionsCount))
			must(err)
			get(client)
		},
		"sessions again": func() {
			client, err := again.Client(sessionID(next % sessionsCount))
			must(err)
			get(client)
		},
		"by hand": func() {
			m, err := tokenmanager.New(sessionsConfig, tokenmanager.WithStorage(storage), tokenmanager.WithSessionID(sessionID(next%sessionsCount)),
				tokenmanager.WithHTTPClient(shared))
			must(err)
			get(&http.Client{Transport: m.Transport(rt)})
		},
	}
	order := []string{"sessions", "sessions again", "by hand"}
	perCall := func(name string) float64 {
		start := cpuTime()
		for range n {
			contenders[name]()
			next++
		}
		return float64((cpuTime() - start).Nanoseconds()) / float64(n)
	}
	for _, name := range order {
		for range sessionsCount / n { // warm: every session's manager cached, pools and caches filled
			perCall(name)
		}
	}
	times := map[string][]float64{}
	var ratios, aaRatios []float64
	for range rounds {
		rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		got := map[string]float64{}
		for _, name := range order {
			runtime.GC()
			got[name] = perCall(name)
			times[name] = append(times[name], got[name])
		}
		ratios = append(ratios, got["by hand"]/got["sessions"])
		aaRatios = append(aaRatios, got["sessions again"]/got["sessions"])
	}
	value := fmt.Sprintf("%s, %s: Sessions.Client(id) and a GET %.2f µs, a manager built by hand (New with WithSessionID, Transport) and a GET %.2f µs: by hand costs %.1f× (median of %d paired rounds of %d calls over %d users; ratios' middle half %.2f–%.2f, range %.2f–%.2f)",
		"a RoundTripper answering a prebuilt response", cpuTimeName, quantile(times["sessions"], 0.5)/1000, quantile(times["by hand"], 0.5)/1000,
		quantile(ratios, 0.5), rounds, n, sessionsCount, quantile(ratios, 0.25), quantile(ratios, 0.75), slices.Min(ratios), slices.Max(ratios))
	return []map[string]any{{"metric": "Go request for a user: a session's client against a manager built by hand", "value": value, "goal": "", "met": nil,
		"ratios": ratios, "aaRatios": aaRatios, "style": "times", "aaLabel": "a second Sessions against the first"}}
}

// sessionRows are the rows of a server acting for many users.
func sessionRows() []map[string]any {
	return append(memoryRows(5), clientRows(21, 500)...)
}
