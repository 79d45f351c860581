package tokenmanager

// Retry-After (RFC 9110 §10.2.3; the TypeScript kit's retry-after.ts).

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

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
