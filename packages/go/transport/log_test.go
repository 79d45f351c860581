package transport

import (
	"bytes"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

const (
	tokenCanary = "at_CANARY/tok+en=0123456789"
	codeCanary  = "code_CANARY_0123456789"
	stateCanary = "state_CANARY_0123456789"
)

// canaryForms are the ways a canary may be printed: raw, URL-encoded (both cases), base64.
func canaryForms(secret string) []string {
	return []string{secret, url.QueryEscape(secret), strings.ToLower(url.QueryEscape(secret)), url.PathEscape(secret),
		base64.StdEncoding.EncodeToString([]byte(secret)), base64.RawURLEncoding.EncodeToString([]byte(secret))}
}

func assertNoCanary(t *testing.T, text string) {
	t.Helper()
	for _, secret := range []string{tokenCanary, codeCanary, stateCanary} {
		for _, form := range canaryForms(secret) {
			if strings.Contains(text, form) {
				t.Fatalf("the log holds %q:\n%s", form, text)
			}
		}
	}
}

func canaryRequest(t *testing.T, base string) *http.Request {
	request, err := http.NewRequest(http.MethodGet, base+"/api/v1/auth/user?code="+url.QueryEscape(codeCanary)+"&state="+stateCanary, nil)
	if err != nil {
		t.Fatal(err)
	}
	request.Header.Set("Authorization", "Bearer "+tokenCanary)
	return request
}

func TestLogLinesNameTheAttemptButNeverATokenCodeOrState(t *testing.T) {
	_, server := serve(t, status(503, "0"), status(200, ""))
	var out bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	rt, err := New(nil, WithLogger(logger), WithSleep((&waits{}).sleep))
	if err != nil {
		t.Fatal(err)
	}
	response, err := rt.RoundTrip(canaryRequest(t, server.URL))
	if err != nil || response.StatusCode != 200 {
		t.Fatalf("%v %v", response, err)
	}
	text := out.String()
	for _, want := range []string{`"msg":"GET /api/v1/auth/user 503`, `"attempt":1`, `GET /api/v1/auth/user 503: retry in 0s`, `"status":200`, `"attempt":2`} {
		if !strings.Contains(text, want) {
			t.Errorf("no %s in\n%s", want, text)
		}
	}
	assertNoCanary(t, text)
}

func TestAFailureThatEchoesTheTokenIsLoggedScrubbed(t *testing.T) {
	// a transport whose error text holds the token raw, URL-encoded and in base64, and the query
	echo := roundTripper(func(r *http.Request) (*http.Response, error) {
		token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		return nil, errors.New("proxy refused " + r.URL.String() + " with " + token + " / " + url.QueryEscape(token) +
			" / " + base64.StdEncoding.EncodeToString([]byte(token)) + " / Authorization: Bearer " + token)
	})
	var out bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	rt, _ := New(echo, WithLogger(logger), WithSleep((&waits{}).sleep))
	_, err := rt.RoundTrip(canaryRequest(t, "http://127.0.0.1:9"))
	if !errors.Is(err, ErrNetworkError) {
		t.Fatalf("%v", err)
	}
	if !strings.Contains(out.String(), "failed: NETWORK_ERROR") {
		t.Fatalf("no failure line:\n%s", out.String())
	}
	assertNoCanary(t, out.String())
}

func TestTheErrorOfAFailureHoldsNoSecret(t *testing.T) {
	echo := roundTripper(func(r *http.Request) (*http.Response, error) {
		return nil, errors.New("refused " + r.URL.String() + " " + r.Header.Get("Authorization"))
	})
	rt, _ := Retry(Log(echo, nil), WithRetries(0))
	_, err := rt.RoundTrip(canaryRequest(t, "http://127.0.0.1:9"))
	var failure *Error
	if !errors.As(err, &failure) {
		t.Fatalf("%v", err)
	}
	assertNoCanary(t, err.Error()+" "+errors.Unwrap(err).Error())
}

func TestALoggerBelowErrorCostsNothingAndWritesNothing(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer server.Close()
	var out bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelError + 4}))
	response, err := (&http.Client{Transport: Log(nil, logger)}).Get(server.URL)
	if err != nil || response.StatusCode != 200 || out.Len() != 0 {
		t.Fatalf("%v %q", err, out.String())
	}
}

// roundTripFunc is a RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Regression (issue 30 point 7): a logger that keeps warnings only builds no line for an answer.
func TestALoggerAboveInfoBuildsNothingForAnAnswer(t *testing.T) {
	var out bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn}))
	answer := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
	})
	request, _ := http.NewRequest(http.MethodGet, "https://acme.tenant.test/api/v1/auth/user", nil)
	layer, direct := Log(answer, logger), Log(answer, nil) // nil: no layer, answer itself
	bare := testing.AllocsPerRun(100, func() { _, _ = direct.RoundTrip(request) })
	logged := testing.AllocsPerRun(100, func() { _, _ = layer.RoundTrip(request) })
	if logged != bare || out.Len() != 0 {
		t.Fatalf("%v allocations per answered request with the layer, %v without; wrote %q", logged, bare, out.String())
	}
}

// Regression (issue 30 point 7): New without WithLogger must not pay a logging layer on every call.
func TestALoggerThatWritesNothingAddsNoLayer(t *testing.T) {
	for _, logger := range []*slog.Logger{nil, slog.New(slog.DiscardHandler)} {
		if Log(http.DefaultTransport, logger) != http.DefaultTransport {
			t.Fatalf("Log(next, %v) wrapped next", logger)
		}
	}
	if _, layered := Log(http.DefaultTransport, slog.Default()).(*logging); !layered {
		t.Fatal("a logger that writes got no layer")
	}
}
