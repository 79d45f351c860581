package tokenmanager

// The token endpoint's requests and how their answers are read (RFC 6749 §5; the TypeScript kit's
// token-request.ts, the Python kit's _token_request.py).

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
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
		all := m.known(secrets...)
		m.log.Error("POST "+path+" no answer", "ms", elapsed, "attempt", attempt, "why", redact(errorKind(err), all))
		return "", transientError(0, attempt, !notSent(err), 0, scrub(err, all))
	}
	m.log.Info("POST "+path, "status", status, "ms", elapsed, "attempt", attempt)
	if status >= 200 && status < 300 {
		return text, nil
	}
	if status == http.StatusTooManyRequests || status >= 500 {
		// A 503 says the server is unable to handle the request (RFC 9110 §15.6.4): the refresh token
		// it carried is unused, so it may be sent again. Assumption (not in the service description):
		// a 429 says so too. RFC 6585 §4 defines 429 only as too many requests in a given time, not
		// whether the request was processed; the kit assumes that a tenant limiting its token endpoint
		// refuses the request before handling the grant, where a rate limiter sits. Were it handled,
		// its answer brings no successor, and the next call would present this token anyway. Any
		// other 5xx may come after the tenant rotated the token.
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

// processTokenResponse makes the record of a token response (RFC 6749 §5.1), stamped with its
// receive time, a new id and its session's sequence; origin is the record a refresh started from.
func (m *Manager) processTokenResponse(text string, origin *tokenRecord) (*tokenRecord, error) {
	fields := parseObject(text)
	if fields == nil {
		return nil, newError(CodeInvalidResponse, "the token response is not a JSON object")
	}
	previous := ""
	if origin != nil {
		previous = origin.RefreshToken
	}
	record, err := tokenFields(fields, previous)
	if err != nil {
		return nil, err
	}
	record.ReceivedAt = math.Round(m.nowMs())
	record.ID = newState()
	seq := int64(0)
	record.Session = record.ID
	if origin != nil {
		if origin.Session != "" {
			record.Session = origin.Session
		} else {
			record.Session = origin.ID
		}
		seq = origin.seq() + 1
	}
	record.Seq = &seq
	return record, nil
}
