// Command bench measures the Go kit's per-call overhead for tools/bench/go.mjs (pnpm bench): a GET
// through the kit's client stack (transport.New over the token manager's Transport, default clock, a
// fresh token) against bare net/http with static Authorization and Accept headers set by a
// RoundTripper on a clone of the request (as the RoundTripper contract asks), the goal's baseline;
// the same kit without the armed token (armed.go: WithClock(time.Now), which is not armed), the row
// that says whether the goal needs it; and, for information, against golang.org/x/oauth2's Transport
// over a ReuseTokenSource, which reads the clock on every call to check the token's expiry. In
// process (a RoundTripper answering a prebuilt response, so only the layers are measured) and over
// loopback HTTP (an httptest server). Paired rounds, every contender in each, in a random order; the
// median per-call time of each, and the median of the rounds' ratios with their middle half and
// range (tools/bench/stats.mjs's paired), with the A/A (bare net/http against a second bare client in
// the same rounds). In process the clock is the process's CPU time (all its
// threads, the garbage collector's included) with one P: the layers cost CPU only, and CPU time does
// not count the time a busy machine keeps the process waiting. Over loopback it is the wall clock,
// what a caller waits. Prints one JSON object per line: {"metric", "value", "goal", "ratios",
// "aaRatios", "atMost", "aaLabel"} (judged by tools/bench/stats.mjs judgeRawRow), or "met": null
// for a row given for information; -row
// in-process (or loopback) measures one row alone; -row sessions measures the rows of a server acting
// for many users instead (sessions.go: memory per cached and per dropped session, judged here by
// their middle half, and a request for a user through Sessions against a manager built by hand).
// The same contenders as Go benchmarks:
// go test ./transport -run '^$' -bench BenchmarkTransport -benchmem.
// Never imported; not a test (speed is measured here, never asserted).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/tenant-integration/sdk/packages/go/internal/benchstack"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
	"github.com/tenant-integration/sdk/packages/go/transport"
	"golang.org/x/oauth2"
)

// tenant is where the in-process rows send: nothing listens there, the prebuilt answer replies.
const tenant = "http://127.0.0.1:9"

// signedIn is benchstack.SignedIn, ending the run on an error.
func signedIn(origin string, opts ...tokenmanager.Option) *tokenmanager.Manager {
	m, err := benchstack.SignedIn(origin, opts...)
	must(err)
	return m
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// clock reads a time: the process's CPU time (cpuTime) or the wall clock (wall).
type clock func() time.Duration

func wall() time.Duration { return time.Duration(time.Now().UnixNano()) }

// perCall is the mean time of one GET (body read and closed) over n calls, on clock.
func perCall(client *http.Client, target string, n int, now clock) time.Duration {
	start := now()
	for range n {
		response, err := client.Get(target)
		must(err)
		_, _ = io.Copy(io.Discard, response.Body)
		_ = response.Body.Close()
		if response.StatusCode != 200 {
			must(fmt.Errorf("status %d", response.StatusCode))
		}
	}
	return (now() - start) / time.Duration(n)
}

// quantile is the p quantile (0…1) of values, interpolated between the two nearest (stats.mjs).
func quantile(values []float64, p float64) float64 {
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	at := float64(len(sorted)-1) * p
	low, high := int(math.Floor(at)), int(math.Ceil(at))
	return sorted[low] + (sorted[high]-sorted[low])*(at-float64(low))
}

// where a row measures: its contenders' next layer, its target, its rounds and calls, its clock.
type where struct {
	metric, name string
	base         http.RoundTripper
	origin       string
	rounds, n    int
	clock        clock
	clockName    string
	procs        int // GOMAXPROCS while the row runs; 0 leaves it
}

// oauth2Transport is what a net/http user with a token that expires writes: golang.org/x/oauth2's
// Transport over a ReuseTokenSource, which reads the clock on every call to check the token's expiry.
func oauth2Transport(base http.RoundTripper) http.RoundTripper {
	token := &oauth2.Token{AccessToken: "at_bench_0123456789", TokenType: "Bearer", Expiry: time.Now().Add(time.Hour)}
	return &oauth2.Transport{Source: oauth2.ReuseTokenSource(token, oauth2.StaticTokenSource(token)), Base: base}
}

// rows measures the kit against bare net/http (the goal) and against golang.org/x/oauth2 (for
// information) in the same paired rounds, and returns one row for each comparison.
func rows(w where) []map[string]any {
	if w.procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(w.procs))
	}
	target := w.origin + "/api/v1/auth/user"
	// The kit as its README shows it: transport.New over the manager's Transport, default clock.
	kit, err := transport.New(signedIn(w.origin).Transport(w.base))
	must(err)
	// The same without the armed token (armed.go): WithClock(time.Now) is the default clock given
	// as an option, which the bearer layer does not arm, so every call asks AccessToken, which
	// checks the token's freshness on the clock.
	unarmed, err := transport.New(signedIn(w.origin, tokenmanager.WithClock(time.Now)).Transport(w.base))
	must(err)
	contenders := map[string]*http.Client{
		// net/http as its users write it for a fixed token: a RoundTripper that sets the headers on a
		// clone of the request, as the RoundTripper contract asks.
		"bare": {Transport: benchstack.StaticHeader{Next: w.base, Value: benchstack.Bearer}},
		// The A/A: the same bare client again, its own instance, in the same rounds: what the method
		// reports for no difference on this machine.
		"bare again": {Transport: benchstack.StaticHeader{Next: w.base, Value: benchstack.Bearer}},
		"oauth2":     {Transport: oauth2Transport(w.base)},
		"kit":        {Transport: kit},
		"unarmed":    {Transport: unarmed},
	}
	order := []string{"bare", "bare again", "oauth2", "kit", "unarmed"}
	for _, name := range order {
		perCall(contenders[name], target, w.n, w.clock) // warm: connections, pools, caches
	}
	times := map[string][]float64{}
	ratios := map[string][]float64{} // a contender's time over another's, one per round, by "kit/bare"…
	for range w.rounds {
		rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		got := map[string]float64{}
		for _, name := range order {
			runtime.GC() // no batch pays for another's garbage
			got[name] = float64(perCall(contenders[name], target, w.n, w.clock).Nanoseconds())
			times[name] = append(times[name], got[name])
		}
		for _, pair := range [][2]string{{"kit", "bare"}, {"unarmed", "bare"}, {"kit", "oauth2"}, {"bare again", "bare"}} {
			key := pair[0] + "/" + pair[1]
			ratios[key] = append(ratios[key], got[pair[0]]/got[pair[1]])
		}
	}
	// The median of the paired rounds' ratios: a busy machine slows both of a pair alike. The rows
	// carry their per-round ratios and the A/A's (bare against itself), and tools/bench judges them
	// by the rule every row follows (stats.mjs judgeRawRow): met only when the middle half lies
	// under the goal, noise when the A/A is wider than the distance to it.
	describe := func(one, oneName, other, otherName string) string {
		r := ratios[one+"/"+other]
		return fmt.Sprintf("%s, %s: %s %.2f µs vs %s %.2f µs per GET, %+.1f %% (median of %d paired rounds of %d calls in random order; ratios' middle half %.3f–%.3f, range %.2f–%.2f)",
			w.name, w.clockName, oneName, quantile(times[one], 0.5)/1000, otherName, quantile(times[other], 0.5)/1000, (quantile(r, 0.5)-1)*100,
			w.rounds, w.n, quantile(r, 0.25), quantile(r, 0.75), slices.Min(r), slices.Max(r))
	}
	const goal = "≤ 5 % over bare net/http with a static header"
	judged := func(metric, one, oneName string) map[string]any {
		return map[string]any{"metric": metric, "value": describe(one, oneName, "bare", "bare net/http"), "goal": goal,
			"ratios": ratios[one+"/bare"], "aaRatios": ratios["bare again/bare"], "atMost": 1.05, "aaLabel": "bare net/http against itself"}
	}
	return []map[string]any{
		judged(w.metric, "kit", "kit"),
		judged(w.metric+", without the armed token (armed.go)", "unarmed", "kit without the armed token"),
		{"metric": w.metric + ", against golang.org/x/oauth2", "value": describe("kit", "kit", "oauth2", "golang.org/x/oauth2's Transport"), "goal": "", "met": nil},
	}
}

func main() {
	only := flag.String("row", "all", "which rows to measure: in-process, loopback, all (both), or sessions")
	flag.Parse()
	if *only != "all" && *only != "in-process" && *only != "loopback" && *only != "sessions" {
		must(fmt.Errorf("-row: give in-process, loopback, all or sessions, not %q", *only))
	}
	if *only == "sessions" {
		for _, r := range sessionRows() {
			line, _ := json.Marshal(r)
			fmt.Println(string(line))
		}
		return
	}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.Copy(w, bytes.NewReader([]byte(benchstack.User)))
	}))
	defer server.Close()
	var out []map[string]any
	if *only != "loopback" {
		out = append(out, rows(where{metric: "Go client per-call overhead, in process", name: "a RoundTripper answering a prebuilt response",
			base: benchstack.Prebuilt{}, origin: tenant, rounds: 61, n: 5000, clock: cpuTime, clockName: cpuTimeName,
			// One P: an idle P would run the collector's idle-time workers, whose CPU time would land in
			// whichever batch they happen to run beside.
			procs: 1})...)
	}
	if *only != "in-process" {
		out = append(out, rows(where{metric: "Go client per-call overhead, over loopback", name: "an httptest server on 127.0.0.1",
			base: http.DefaultTransport, origin: server.URL, rounds: 61, n: 500, clock: wall, clockName: "wall clock"})...)
	}
	for _, r := range out {
		line, _ := json.Marshal(r)
		fmt.Println(string(line))
	}
}
