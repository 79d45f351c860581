// Package benchstack is what the Go kit's speed is measured on, written once for the two places
// that measure it: the rows of pnpm bench (internal/cmd/bench) and the Go benchmarks of the same
// contenders (transport/bench_test.go). A prebuilt answer without a network, the bare net/http
// baseline, and a token manager signed in on an in-memory token endpoint. Used by no package of the
// kit.
package benchstack

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// User is the body of every prebuilt answer.
const User = `{"id":"u-1","name":"Ada"}`

// Bearer is the Authorization header of the baseline, the kit's token as the token endpoint hands
// it out.
const Bearer = "Bearer at_bench_0123456789"

// Prebuilt answers every request with the same 200 without a network, so only the layers above it
// are measured.
type Prebuilt struct{}

// RoundTrip answers r with User.
func (Prebuilt) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(User)),
		ContentLength: int64(len(User)), Request: r}, nil
}

// StaticHeader is what an application without the kit writes, the baseline: a fixed bearer token on
// every request, and the Accept header the service description requires of its API calls (the
// kit's bearer layer sets both), set on a clone of the request as the RoundTripper contract asks
// (as golang.org/x/oauth2's Transport does).
type StaticHeader struct {
	Next  http.RoundTripper
	Value string
}

// RoundTrip sends a clone of r with the two headers set.
func (s StaticHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	clone := r.Clone(r.Context())
	clone.Header.Set("Authorization", s.Value)
	clone.Header.Set("Accept", "application/json")
	return s.Next.RoundTrip(clone)
}

// tokenEndpoint answers the sign-in's code exchange with a token fresh for an hour.
type tokenEndpoint struct{}

func (tokenEndpoint) RoundTrip(r *http.Request) (*http.Response, error) {
	body := `{"access_token":"at_bench_0123456789","refresh_token":"rt_bench_0123456789","token_type":"Bearer","expires_in":3600}`
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
}

// SignedIn is a token manager of the tenant at origin, signed in through tokenEndpoint, so that it
// holds a fresh token; opts come after the kit's HTTP client option.
func SignedIn(origin string, opts ...tokenmanager.Option) (*tokenmanager.Manager, error) {
	redirect := "http://127.0.0.1:53682/callback"
	config := tokenmanager.Config{BaseURL: origin, ClientID: "bench", RedirectURI: redirect, Scopes: []scope.Scope{scope.ProfileRead}}
	options := append([]tokenmanager.Option{tokenmanager.WithHTTPClient(&http.Client{Transport: tokenEndpoint{}})}, opts...)
	m, err := tokenmanager.New(config, options...)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	request, err := m.BeginAuthorization(ctx)
	if err != nil {
		return nil, err
	}
	authorize, err := url.Parse(request.URL)
	if err != nil {
		return nil, err
	}
	callback := redirect + "?code=bench-code-0123&state=" + url.QueryEscape(authorize.Query().Get("state"))
	if _, err := m.CompleteAuthorization(ctx, callback); err != nil {
		return nil, err
	}
	return m, nil
}
