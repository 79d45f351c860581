package tokenmanager

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxBody bounds what is read of an answer of the token endpoint.
const maxBody = 1 << 20

// post sends a token or revocation request and returns the text of a 2xx answer; every other
// answer as its *Error (RFC 6749 §5.2). The timeout counts only the time this process ran.
func (m *Manager) post(ctx context.Context, path, body, contentType string, secrets []string, attempt int) (string, error) {
	started := time.Now()
	status, text, header, err := m.within(ctx, path, body, contentType)
	elapsed := time.Since(started).Milliseconds()
	if err != nil {
		m.log.Error("POST "+path+" no answer", "ms", elapsed, "attempt", attempt, "why", redact(errorKind(err), m.known(secrets...)))
		return "", transientError(0, attempt, !notSent(err), 0, scrub(err, m.known(secrets...)))
	}
	m.log.Info("POST "+path, "status", status, "ms", elapsed, "attempt", attempt)
	if status >= 200 && status < 300 {
		return text, nil
	}
	if status == http.StatusTooManyRequests || status >= 500 {
		// 429 and 503 say the tenant did not handle the request (RFC 6585 §4, RFC 9110 §15.6.4): the
		// refresh token it carried is unused, so it may be sent again. Any other 5xx may come after
		// the tenant rotated the token.
		sent := status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable
		return "", transientError(status, attempt, sent, retryAfter(header.Get("Retry-After"), m.o.now()), nil)
	}
	if status >= 400 {
		if fields, ok := parseOAuthError(parseObject(text)); ok {
			all := m.known(secrets...)
			fields.Error, fields.Description, fields.URI = redact(fields.Error, all), redact(fields.Description, all), redact(fields.URI, all)
			return "", oauthError(status, fields)
		}
	}
	return "", newError(CodeInvalidResponse, "%s answered HTTP %d without an OAuth error body", path, status)
}

type answer struct {
	status int
	text   string
	header http.Header
	err    error
}

// within sends the request and reads the answer, bounded by the request timeout counted in time the
// process ran: a tick that comes far later than asked means the process was stopped (SIGSTOP, a
// suspended machine, a debugger); that time is not the tenant's, and the tick only waits again, so
// that an answer that arrived meanwhile is read.
func (m *Manager) within(ctx context.Context, path, body, contentType string) (int, string, http.Header, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	request, err := http.NewRequestWithContext(ctx, http.MethodPost, m.origin+path, strings.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	request.Header.Set("Accept", "application/json")
	request.Header.Set("Content-Type", contentType)
	done := make(chan answer, 1)
	go func() {
		response, err := m.http.Do(request)
		if err != nil {
			done <- answer{err: err}
			return
		}
		defer response.Body.Close()
		raw, err := io.ReadAll(io.LimitReader(response.Body, maxBody))
		done <- answer{status: response.StatusCode, text: string(raw), header: response.Header, err: err}
	}()
	timeout := m.o.requestTimeout
	step := min(timeout, 250*time.Millisecond)
	var ran time.Duration
	last := time.Now()
	for {
		timer := time.NewTimer(min(step, timeout-ran))
		select {
		case a := <-done:
			timer.Stop()
			return a.status, a.text, a.header, a.err
		case <-ctx.Done():
			timer.Stop()
			return 0, "", nil, ctx.Err()
		case at := <-timer.C:
			gap := at.Sub(last)
			last = at
			if gap > step+time.Second {
				continue // stopped meanwhile: not the tenant's time
			}
			ran += gap
			if ran >= timeout {
				return 0, "", nil, errTimeout
			}
		}
	}
}

var errTimeout = errors.New("no answer within the request timeout")

// notSent: the request cannot have reached the tenant (no connection could be made).
func notSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// errorKind is the kind of a transport error, for logs (never the request).
func errorKind(err error) string {
	switch {
	case errors.Is(err, errTimeout):
		return "timeout"
	case notSent(err):
		return "no connection"
	default:
		return "connection failed"
	}
}

// retryAfter parses a Retry-After header: seconds or an HTTP date (RFC 9110 §10.2.3); 0 without one.
func retryAfter(value string, now time.Time) time.Duration {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0
	}
	if seconds, err := strconv.Atoi(value); err == nil && seconds >= 0 {
		return time.Duration(seconds) * time.Second
	}
	if at, err := http.ParseTime(value); err == nil && at.After(now) {
		return at.Sub(now)
	}
	return 0
}
