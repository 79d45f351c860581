package transport_test

// The per-call cost of the kit's client stack, as the README configures it (transport.New over the
// token manager's Transport, default clock, a fresh token), against bare net/http with a static
// bearer header added by a RoundTripper that follows the RoundTripper contract (clones the request
// before setting the header, as golang.org/x/oauth2's Transport does). Both answer from a prebuilt
// response without a network, so only the layers are measured. Rerun:
//
//	go test ./transport -run '^$' -bench BenchmarkTransport -benchmem
//
// pnpm bench (tools/bench/go.mjs, internal/cmd/bench) measures the same pair in paired rounds.

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
	"github.com/tenant-integration/sdk/packages/go/transport"
	"golang.org/x/oauth2"
)

const benchTenant = "https://acme.tenant.test"

// prebuilt answers every request with the same 200 without a network.
type prebuilt struct{}

func (prebuilt) RoundTrip(r *http.Request) (*http.Response, error) {
	const user = `{"id":"u-1","name":"Ada"}`
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(user)),
		ContentLength: int64(len(user)), Request: r}, nil
}

// staticHeader is the bare net/http baseline: a fixed bearer token on every request.
type staticHeader struct {
	next  http.RoundTripper
	value string
}

func (s staticHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	clone := r.Clone(r.Context())
	clone.Header.Set("Authorization", s.value)
	return s.next.RoundTrip(clone)
}

// tokenEndpoint answers the sign-in's code exchange.
type tokenEndpoint struct{}

func (tokenEndpoint) RoundTrip(r *http.Request) (*http.Response, error) {
	body := `{"access_token":"at_bench_0123456789","refresh_token":"rt_bench_0123456789","token_type":"Bearer","expires_in":3600}`
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
}

func signedIn(b *testing.B) *tokenmanager.Manager {
	b.Helper()
	redirect := "http://127.0.0.1:53682/callback"
	m, err := tokenmanager.New(tokenmanager.Config{BaseURL: benchTenant, ClientID: "bench", RedirectURI: redirect, Scopes: []scope.Scope{scope.ProfileRead}},
		tokenmanager.WithHTTPClient(&http.Client{Transport: tokenEndpoint{}}))
	if err != nil {
		b.Fatal(err)
	}
	request, err := m.BeginAuthorization(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	authorize, _ := url.Parse(request.URL)
	if _, err := m.CompleteAuthorization(context.Background(), redirect+"?code=bench-code-0123&state="+url.QueryEscape(authorize.Query().Get("state"))); err != nil {
		b.Fatal(err)
	}
	return m
}

// get sends GETs through client for b.N iterations, reading and closing each body.
func get(b *testing.B, client *http.Client) {
	b.Helper()
	target := benchTenant + "/api/v1/auth/user"
	b.ReportAllocs()
	for b.Loop() {
		response, err := client.Get(target)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, response.Body)
		_ = response.Body.Close()
	}
}

// BenchmarkTransportBare is the baseline: net/http with a static header.
func BenchmarkTransportBare(b *testing.B) {
	get(b, &http.Client{Transport: staticHeader{next: prebuilt{}, value: "Bearer at_bench_0123456789"}})
}

// BenchmarkTransportOAuth2 is golang.org/x/oauth2's Transport over a ReuseTokenSource, which reads
// the clock on every call to check the token's expiry.
func BenchmarkTransportOAuth2(b *testing.B) {
	token := &oauth2.Token{AccessToken: "at_bench_0123456789", TokenType: "Bearer", Expiry: time.Now().Add(time.Hour)}
	get(b, &http.Client{Transport: &oauth2.Transport{Source: oauth2.ReuseTokenSource(token, oauth2.StaticTokenSource(token)), Base: prebuilt{}}})
}

// BenchmarkTransportKit is the kit's stack as the README builds it.
func BenchmarkTransportKit(b *testing.B) {
	rt, err := transport.New(signedIn(b).Transport(prebuilt{}))
	if err != nil {
		b.Fatal(err)
	}
	get(b, &http.Client{Transport: rt})
}

// BenchmarkTransportBearer is the token manager's Transport alone (no retry or log layer).
func BenchmarkTransportBearer(b *testing.B) {
	get(b, &http.Client{Transport: signedIn(b).Transport(prebuilt{})})
}

// BenchmarkTransportRetryLog is transport.New's layers alone over the baseline.
func BenchmarkTransportRetryLog(b *testing.B) {
	rt, err := transport.New(staticHeader{next: prebuilt{}, value: "Bearer at_bench_0123456789"})
	if err != nil {
		b.Fatal(err)
	}
	get(b, &http.Client{Transport: rt})
}
