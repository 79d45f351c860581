package transport

// The errors of the transport layers, the TypeScript client's codes (packages/client/src/errors.ts)
// and the Python client's (client_errors.py):
//
//	*Error
//	├── INVALID_OPTIONS                 a bad option of Retry or New
//	├── NETWORK_ERROR (Attempts)        no answer: connection refused or reset, DNS, TLS
//	├── TIMEOUT (Attempts)              the request's context deadline passed
//	└── ABORTED (Attempts)              the request's context was cancelled
//
// HTTP statuses are never errors here: a RoundTripper returns the last response, whatever its status.
// The token manager's errors (NOT_SIGNED_IN, SESSION_ENDED…, from its Transport) pass through
// unchanged. No message holds a token: causes are scrubbed.

import (
	"context"
	"errors"
	"fmt"

	"github.com/tenant-integration/sdk/packages/go/internal/errtext"
	"github.com/tenant-integration/sdk/packages/go/internal/redact"
)

// Code is the stable code of an *Error.
type Code string

// The codes.
const (
	CodeInvalidOptions Code = "INVALID_OPTIONS"
	CodeNetworkError   Code = "NETWORK_ERROR"
	CodeTimeout        Code = "TIMEOUT"
	CodeAborted        Code = "ABORTED"
)

// Error is a failure of the transport layers. Its message names the method and the path, never the
// query (it may hold a code or a state) nor a token.
type Error struct {
	Code    Code
	Message string
	// Method and Path (without the query) of the request.
	Method, Path string
	// Attempts is how many times the request was sent.
	Attempts int
	// Err is the cause (context.Canceled and context.DeadlineExceeded as they are; any other cause a
	// scrubbed copy).
	Err error
}

// Error is "CODE: message: cause", the cause's own (scrubbed) text included, as fmt.Errorf("…: %w")
// chains print it: "NETWORK_ERROR: GET /api/v1/auth/user failed (3 attempts): dial tcp
// 127.0.0.1:4020: connect: connection refused".
func (e *Error) Error() string { return errtext.Text(string(e.Code), e.Message, e.Err) }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the code as a string.
func (e *Error) ErrorCode() string { return string(e.Code) }

// Is matches the sentinels by code: errors.Is(err, transport.ErrNetworkError).
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code && t.Message == "" && t.Err == nil
}

// Sentinels for errors.Is.
var (
	ErrInvalidOptions = &Error{Code: CodeInvalidOptions}
	ErrNetworkError   = &Error{Code: CodeNetworkError}
	ErrTimeout        = &Error{Code: CodeTimeout}
	ErrAborted        = &Error{Code: CodeAborted}
)

func invalidOption(name, why string) error {
	return &Error{Code: CodeInvalidOptions, Message: name + ": " + why}
}

// coded is an error of the kit (tokenmanager.Error, Error): not a failed connection.
type coded interface{ ErrorCode() string }

func isKitError(err error) bool {
	var c coded
	return errors.As(err, &c)
}

// failure is the *Error of a request that got no answer.
func failure(method, path string, attempts int, err error, secrets []string) *Error {
	code, verb := CodeNetworkError, "failed"
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		code, verb = CodeTimeout, "timed out"
	case errors.Is(err, context.Canceled):
		code, verb = CodeAborted, "was cancelled"
	}
	cause := err
	if code == CodeNetworkError {
		cause = &scrubbed{text: redact.Scrub(err.Error(), secrets), kind: err}
	}
	plural := "attempts"
	if attempts == 1 {
		plural = "attempt"
	}
	return &Error{Code: code, Message: fmt.Sprintf("%s %s %s (%d %s)", method, path, verb, attempts, plural),
		Method: method, Path: path, Attempts: attempts, Err: cause}
}

// scrubbed stands for a cause whose text may have held a secret: its scrubbed message.
// errors.As still finds the original's type (a *net.OpError, say) through As.
type scrubbed struct {
	text string
	kind error
}

func (s *scrubbed) Error() string { return s.text }

// As lets errors.As(err, &opErr) reach the original cause's type, for branching; printing it is
// the caller's choice.
func (s *scrubbed) As(target any) bool { return errors.As(s.kind, target) }
