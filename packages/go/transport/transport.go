// Package transport holds the http.RoundTripper layers of the kit for the user's own *http.Client:
// Retry (Retry-After, backoff with jitter, the TypeScript and Python clients' policy and defaults)
// and Log (one log/slog line per attempt, never a token, code, verifier or state). New stacks both
// over the token manager's Transport:
//
//	rt, err := transport.New(manager.Transport(nil), transport.WithLogger(slog.Default()))
//	client := &http.Client{Transport: rt}
//
// Requests pass through the layers outside in (Retry, Log, the bearer layer, the network); answers
// come back inside out. The layers know nothing of OAuth: the token manager's Transport brings the
// token and the refresh after a 401 (Assumption (not in the service description): an expired or
// revoked token is answered 401, RFC 6750 §3.1).
package transport

import "net/http"

// New returns next (nil: http.DefaultTransport) wrapped in Retry (outermost) and Log, configured by
// opts (WithRetries(0) turns retries off; WithLogger sets the logger of both).
// Errors: INVALID_OPTIONS.
func New(next http.RoundTripper, opts ...Option) (http.RoundTripper, error) {
	o, err := build(opts)
	if err != nil {
		return nil, err
	}
	if next == nil {
		next = http.DefaultTransport
	}
	return &retrying{o: o, next: Log(next, o.logger)}, nil
}
