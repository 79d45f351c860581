// Command bench measures the Go kit's per-call overhead for tools/bench/go.mjs (pnpm bench): a GET
// through the kit's client stack (transport.New over the token manager's Transport, a fresh token)
// against bare net/http with a static Authorization header, in process (a RoundTripper answering a
// prebuilt response, so only the layers are measured) and over loopback HTTP (an httptest server).
// Paired rounds in alternating order; the median per-call time of each, and the median of the
// rounds' ratios with their spread. Prints one JSON object per line: {"metric", "value", "goal", "met"}.
// Never imported; not a test (speed is measured here, never asserted).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
	"github.com/tenant-integration/sdk/packages/go/transport"
)

const (
	tenant = "http://127.0.0.1:9"
	user   = `{"id":"u-1","name":"Ada"}`
	rounds = 31
)

// prebuilt answers every request with the same 200 without a network.
type prebuilt struct{}

func (prebuilt) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(user)),
		ContentLength: int64(len(user)), Request: r}, nil
}

// staticHeader is what an application without the kit writes: a fixed bearer token on every request.
type staticHeader struct {
	next  http.RoundTripper
	value string
}

func (s staticHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	clone := r.Clone(r.Context())
	clone.Header.Set("Authorization", s.value)
	return s.next.RoundTrip(clone)
}

// tokenEndpoint answers the sign-in's code exchange, so that the manager holds a fresh token.
type tokenEndpoint struct{}

func (tokenEndpoint) RoundTrip(r *http.Request) (*http.Response, error) {
	body := `{"access_token":"at_bench_0123456789","refresh_token":"rt_bench_0123456789","token_type":"Bearer","expires_in":3600}`
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
}

func signedIn(origin string) *tokenmanager.Manager {
	redirect := "http://127.0.0.1:53682/callback"
	m, err := tokenmanager.New(tokenmanager.Config{BaseURL: origin, ClientID: "bench", RedirectURI: redirect, Scopes: []scope.Scope{scope.ProfileRead}},
		tokenmanager.WithHTTPClient(&http.Client{Transport: tokenEndpoint{}}))
	must(err)
	ctx := context.Background()
	request, err := m.BeginAuthorization(ctx)
	must(err)
	authorize, _ := url.Parse(request.URL)
	_, err = m.CompleteAuthorization(ctx, redirect+"?code=bench-code-0123&state="+url.QueryEscape(authorize.Query().Get("state")))
	must(err)
	return m
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// perCall is the mean time of one GET (body read and closed) over n calls.
func perCall(client *http.Client, target string, n int) time.Duration {
	start := time.Now()
	for range n {
		response, err := client.Get(target)
		must(err)
		_, _ = io.Copy(io.Discard, response.Body)
		_ = response.Body.Close()
		if response.StatusCode != 200 {
			must(fmt.Errorf("status %d", response.StatusCode))
		}
	}
	return time.Since(start) / time.Duration(n)
}

func median(values []float64) float64 {
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	return sorted[len(sorted)/2]
}

func row(metric, where string, base http.RoundTripper, origin string, n int) map[string]any {
	target := origin + "/api/v1/auth/user"
	manager := signedIn(origin)
	kit, err := transport.New(manager.Transport(base))
	must(err)
	contenders := map[string]*http.Client{
		"bare": {Transport: staticHeader{next: base, value: "Bearer at_bench_0123456789"}},
		"kit":  {Transport: kit},
	}
	for _, c := range contenders {
		perCall(c, target, n/4) // warm: connections, pools
	}
	times := map[string][]float64{}
	var ratios []float64
	for round := range rounds {
		order := []string{"bare", "kit"}
		if round%2 == 1 {
			order = []string{"kit", "bare"}
		}
		got := map[string]float64{}
		for _, name := range order {
			runtime.GC() // no batch pays for the other's garbage
			got[name] = float64(perCall(contenders[name], target, n).Nanoseconds())
			times[name] = append(times[name], got[name])
		}
		ratios = append(ratios, got["kit"]/got["bare"])
	}
	bare, kit2 := median(times["bare"]), median(times["kit"])
	// The median of the paired rounds' ratios: a busy machine slows both of a pair alike.
	overhead := (median(ratios) - 1) * 100
	slices.Sort(ratios)
	return map[string]any{
		"metric": metric,
		"value": fmt.Sprintf("%s: kit %.2f µs vs bare net/http %.2f µs per GET, %+.1f %% (median of %d paired rounds of %d calls; their ratios %.2f–%.2f)",
			where, kit2/1000, bare/1000, overhead, rounds, n, ratios[0], ratios[len(ratios)-1]),
		"goal": "≤ 5 % over bare net/http with a static header",
		"met":  overhead <= 5,
	}
}

func main() {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.Copy(w, bytes.NewReader([]byte(user)))
	}))
	defer server.Close()
	rows := []map[string]any{
		row("Go client per-call overhead, in process", "a RoundTripper answering a prebuilt response", prebuilt{}, tenant, 20000),
		row("Go client per-call overhead, over loopback", "an httptest server on 127.0.0.1", http.DefaultTransport, server.URL, 2000),
	}
	for _, r := range rows {
		line, _ := json.Marshal(r)
		fmt.Println(string(line))
	}
}
