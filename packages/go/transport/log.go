package transport

// The transport's logging: one log/slog line per attempt, built from the method, the path without
// its query, the status (or the error code), the duration and the attempt number: by construction no
// token, authorization code, verifier or state (the query may hold a code and a state; headers are
// never logged). An error's text is scrubbed (internal/redact) before it is written: the token the
// request carried in every printed form (raw, percent-encoded, base64) and the values of
// credential schemes and secret-named keys. See RFC 6750 §5.3; RFC 6749 §10.3.

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/tenant-integration/sdk/packages/go/internal/redact"
)

// Log returns next (nil: http.DefaultTransport) wrapped in a layer that writes one line per request
// to logger (nil: nothing): Info "GET /api/v1/auth/user 200 12ms (attempt 1)" with the attributes
// method, path, status, duration_ms, attempt; Error for a request that got no answer, with its code.
// Put it below Retry (New does), so that each attempt is a line of its own. With no logger, or one
// whose handler is slog.DiscardHandler, there is nothing to write and next is returned as it is.
//
//	client := &http.Client{Transport: transport.Log(manager.Transport(nil), slog.Default())}
func Log(next http.RoundTripper, logger *slog.Logger) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	if logger == nil || logger.Handler() == slog.DiscardHandler {
		return next // no layer: New without WithLogger pays nothing for logging
	}
	return &logging{next: next, log: logger}
}

type logging struct {
	next http.RoundTripper
	log  *slog.Logger
}

func (l *logging) RoundTrip(request *http.Request) (*http.Response, error) {
	ctx := request.Context()
	if !l.log.Enabled(ctx, slog.LevelError) { // no line of this layer would be written: no clock read
		return l.next.RoundTrip(request)
	}
	started := time.Now()
	response, err := l.next.RoundTrip(request)
	if err == nil && !l.log.Enabled(ctx, slog.LevelInfo) {
		return response, nil // an answer's line is Info: nothing built for a logger above it
	}
	elapsed := time.Since(started).Milliseconds()
	method, path, attempt := request.Method, request.URL.Path, attemptOf(ctx)
	common := []slog.Attr{slog.String("method", method), slog.String("path", path),
		slog.Int64("duration_ms", elapsed), slog.Int("attempt", attempt)}
	suffix := " " + strconv.FormatInt(elapsed, 10) + "ms (attempt " + strconv.Itoa(attempt) + ")"
	if err != nil {
		var code string
		var c coded
		if errors.As(err, &c) {
			code = c.ErrorCode()
		} else {
			code = string(failure(method, path, attempt, err, nil).Code)
		}
		why := redact.Scrub(err.Error(), []string{bearerOf(request)})
		l.log.LogAttrs(ctx, slog.LevelError, method+" "+path+" failed: "+code+suffix,
			append(common, slog.String("error", code), slog.String("why", why))...)
		return response, err
	}
	l.log.LogAttrs(ctx, slog.LevelInfo, method+" "+path+" "+strconv.Itoa(response.StatusCode)+suffix,
		append(common, slog.Int("status", response.StatusCode))...)
	return response, nil
}
