package transport_test

// The per-call cost of the kit's client stack, as the README configures it (transport.New over the
// token manager's Transport, default clock, a fresh token), against bare net/http with a static
// bearer header added by a RoundTripper that follows the RoundTripper contract (clones the request
// before setting the header, as golang.org/x/oauth2's Transport does). Both answer from a prebuilt
// response without a network, so only the layers are measured; the contenders are pnpm bench's
// (internal/benchstack). Rerun:
//
//	go test ./transport -run '^$' -bench BenchmarkTransport -benchmem
//
// pnpm bench (tools/bench/go.mjs, internal/cmd/bench) measures the same pair in paired rounds.

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/tenant-integration/sdk/packages/go/internal/benchstack"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
	"github.com/tenant-integration/sdk/packages/go/transport"
	"golang.org/x/oauth2"
)

const benchTenant = "https://acme.tenant.test"

func signedIn(b *testing.B) *tokenmanager.Manager {
	b.Helper()
	m, err := benchstack.SignedIn(benchTenant)
	if err != nil {
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
	get(b, &http.Client{Transport: benchstack.StaticHeader{Next: benchstack.Prebuilt{}, Value: benchstack.Bearer}})
}

// BenchmarkTransportOAuth2 is golang.org/x/oauth2's Transport over a ReuseTokenSource, which reads
// the clock on every call to check the token's expiry.
func BenchmarkTransportOAuth2(b *testing.B) {
	token := &oauth2.Token{AccessToken: "at_bench_0123456789", TokenType: "Bearer", Expiry: time.Now().Add(time.Hour)}
	get(b, &http.Client{Transport: &oauth2.Transport{Source: oauth2.ReuseTokenSource(token, oauth2.StaticTokenSource(token)), Base: benchstack.Prebuilt{}}})
}

// BenchmarkTransportKit is the kit's stack as the README builds it.
func BenchmarkTransportKit(b *testing.B) {
	rt, err := transport.New(signedIn(b).Transport(benchstack.Prebuilt{}))
	if err != nil {
		b.Fatal(err)
	}
	get(b, &http.Client{Transport: rt})
}

// BenchmarkTransportBearer is the token manager's Transport alone (no retry or log layer).
func BenchmarkTransportBearer(b *testing.B) {
	get(b, &http.Client{Transport: signedIn(b).Transport(benchstack.Prebuilt{})})
}

// BenchmarkTransportRetryLog is transport.New's layers alone over the baseline.
func BenchmarkTransportRetryLog(b *testing.B) {
	rt, err := transport.New(benchstack.StaticHeader{Next: benchstack.Prebuilt{}, Value: benchstack.Bearer})
	if err != nil {
		b.Fatal(err)
	}
	get(b, &http.Client{Transport: rt})
}
