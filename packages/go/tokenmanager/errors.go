package tokenmanager

// The error tree of the kit: one type, *Error, told apart by its Code (the same strings as the
// TypeScript and Python kits), usable with errors.Is (against the Err… sentinels, which compare
// codes) and errors.As (to read Status, OAuth fields, RetryAfter, Path).
//
//	*Error
//	├── INVALID_OPTIONS, INVALID_VERIFIER                  a bad option or verifier
//	├── INVALID_SESSION_ID                                 a session id outside the rule (CheckSessionID)
//	├── NO_PENDING_SIGN_IN, STATE_MISSING, STATE_MISMATCH,  a callback refused before any request
//	│   STATE_EXPIRED, INVALID_CALLBACK, AUTHORIZATION_DENIED
//	├── CALLBACK_PORT_IN_USE (Port), REDIRECT_URI_REFUSED   the loopback sign-in (package loopback)
//	│   (Status), CALLBACK_TIMEOUT
//	├── OAUTH_ERROR (Status, OAuthError…)                  the tenant answered an RFC 6749 §5.2 error
//	├── SESSION_ENDED (Status, OAuthError…)                invalid_grant on refresh: tokens cleared (*)
//	├── TRANSIENT (Status, Attempts, RetryAfter)            no answer, 429 or 5xx: tokens kept
//	├── INVALID_RESPONSE                                   not a valid token response: nothing stored
//	├── NOT_SIGNED_IN (Path, MovedTo)                      no tokens; or the storage set its unreadable data aside
//	├── STORAGE_FAILED (Err: the storage's *Error)         the storage or its lock failed
//	└── LOCK_TIMEOUT, LOCK_UNAVAILABLE                     a lock's bounded wait ran out / a lock could not be taken
//	    storage codes: FILE_CORRUPT, FILE_UNSAFE, IO_FAILED (filestorage); COMMAND_FAILED,
//	    UNEXPECTED_REPLY, REPLICATION_TIMEOUT, LEASE_LOST (redisstorage; a Redis lock that cannot be
//	    taken is STORAGE_FAILED with LOCK_UNAVAILABLE as its cause); SCHEMA_MISSING, SCHEMA_MISMATCH,
//	    READ_ONLY, UNKNOWN_NAME, COMMAND_FAILED (postgresstorage, the TypeScript kit's codes)
//
// (*) Assumption (not in the service description): the description shows no error body, no OAuth
// error code and no status for an expired or revoked token. The kit reads the RFC 6749 §5.2 body,
// and takes invalid_grant on a refresh (RFC 6749 §5.2: the refresh token is invalid, expired or
// revoked) as the end of the session.
//
// One rule for the storage's faults, whichever call meets them (the other kits' rule): a storage or
// lock code never reaches a caller of the Manager alone, but as the cause of STORAGE_FAILED; a token
// file set aside as corrupt (FILE_CORRUPT) is NOT_SIGNED_IN with it as the cause, Path and MovedTo
// set, a warning and a storage-failed event; LOCK_TIMEOUT comes as it is (it names the holder).
//
// Error() prints the cause too ("CODE: message: cause"), as fmt.Errorf("…: %w") chains do. No
// error holds a token, an authorization code, a PKCE verifier or a state: messages are written
// without them and causes are scrubbed (see scrub).

import (
	"errors"
	"fmt"
	"time"

	"github.com/tenant-integration/sdk/packages/go/internal/errtext"
)

// Code is the stable code of an *Error. Branch on it (or use errors.Is with the Err… sentinels),
// never on the message.
type Code string

// The codes, the TypeScript kit's ErrorCode plus the storages' codes.
const (
	CodeInvalidOptions      Code = "INVALID_OPTIONS"
	CodeInvalidVerifier     Code = "INVALID_VERIFIER"
	CodeInvalidSessionID    Code = "INVALID_SESSION_ID"
	CodeNoPendingSignIn     Code = "NO_PENDING_SIGN_IN"
	CodeStateMissing        Code = "STATE_MISSING"
	CodeStateMismatch       Code = "STATE_MISMATCH"
	CodeStateExpired        Code = "STATE_EXPIRED"
	CodeInvalidCallback     Code = "INVALID_CALLBACK"
	CodeAuthorizationDenied Code = "AUTHORIZATION_DENIED"
	CodeRedirectURIRefused  Code = "REDIRECT_URI_REFUSED"
	CodeCallbackPortInUse   Code = "CALLBACK_PORT_IN_USE"
	CodeCallbackTimeout     Code = "CALLBACK_TIMEOUT"
	CodeOAuthError          Code = "OAUTH_ERROR"
	CodeSessionEnded        Code = "SESSION_ENDED"
	CodeTransient           Code = "TRANSIENT"
	CodeInvalidResponse     Code = "INVALID_RESPONSE"
	CodeNotSignedIn         Code = "NOT_SIGNED_IN"
	CodeStorageFailed       Code = "STORAGE_FAILED"
	CodeLockTimeout         Code = "LOCK_TIMEOUT"
	CodeLockUnavailable     Code = "LOCK_UNAVAILABLE"
	CodeFileCorrupt         Code = "FILE_CORRUPT"
	CodeFileUnsafe          Code = "FILE_UNSAFE"
	CodeIOFailed            Code = "IO_FAILED"
	CodeCommandFailed       Code = "COMMAND_FAILED"
	CodeUnexpectedReply     Code = "UNEXPECTED_REPLY"
	CodeReplicationTimeout  Code = "REPLICATION_TIMEOUT"
	CodeLeaseLost           Code = "LEASE_LOST"
	CodeSchemaMissing       Code = "SCHEMA_MISSING"
	CodeSchemaMismatch      Code = "SCHEMA_MISMATCH"
	CodeReadOnly            Code = "READ_ONLY"
	CodeUnknownName         Code = "UNKNOWN_NAME"
)

// Error is every error of the kit. Its message never holds a secret.
type Error struct {
	// Code is the stable code.
	Code Code
	// Message says what happened; it names files and keys, never a token, code, verifier or state.
	Message string
	// Status is the HTTP status of the answer (OAUTH_ERROR, SESSION_ENDED, TRANSIENT), 0 without one.
	Status int
	// OAuthError, ErrorDescription and ErrorURI are the RFC 6749 §5.2 fields (and §4.1.2.1 for
	// AUTHORIZATION_DENIED), scrubbed of every secret the manager knows.
	OAuthError, ErrorDescription, ErrorURI string
	// Attempts is how many requests a TRANSIENT refresh made.
	Attempts int
	// RetryAfter is the last answer's Retry-After (RFC 9110 §10.2.3), 0 without one.
	RetryAfter time.Duration
	// Port is the loopback port of CALLBACK_PORT_IN_USE.
	Port int
	// Path is the file (or lock) a storage error concerns.
	Path string
	// MovedTo is where a FILE_CORRUPT file was moved; also set on the NOT_SIGNED_IN it causes.
	MovedTo string
	// Err is the cause, scrubbed.
	Err error

	// sent is false when the tenant did not handle the request: no connection; a 503; a 429 by the
	// kit's assumption (see post).
	sent bool
	// reset is true when the storage set its data aside (FILE_CORRUPT): every key is absent now.
	reset bool
}

// Error is "CODE: message: cause", the cause's own text included, as fmt.Errorf("…: %w") chains
// print it, so that a printed error says why:
//
//	STORAGE_FAILED: the token storage failed: IO_FAILED: cannot write the token file /home/u/.config/app/tokens.json (EACCES): open /home/u/.config/app/tokens.json: permission denied
//
// Causes are scrubbed before they are attached: the text never holds a token.
func (e *Error) Error() string { return errtext.Text(string(e.Code), e.Message, e.Err) }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the code as a string: the interface (ErrorCode() string) by which the kit's
// other packages (transport) tell its errors from a failed connection without importing this one.
func (e *Error) ErrorCode() string { return string(e.Code) }

// Is reports whether target is an *Error of the same code (the Err… sentinels), so that
// errors.Is(err, tokenmanager.ErrSessionEnded) works through wrapping.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code && t.Message == "" && t.Err == nil
}

// Sentinels for errors.Is: each matches every *Error of its code.
var (
	ErrInvalidOptions      = &Error{Code: CodeInvalidOptions}
	ErrInvalidVerifier     = &Error{Code: CodeInvalidVerifier}
	ErrInvalidSessionID    = &Error{Code: CodeInvalidSessionID}
	ErrNoPendingSignIn     = &Error{Code: CodeNoPendingSignIn}
	ErrStateMissing        = &Error{Code: CodeStateMissing}
	ErrStateMismatch       = &Error{Code: CodeStateMismatch}
	ErrStateExpired        = &Error{Code: CodeStateExpired}
	ErrInvalidCallback     = &Error{Code: CodeInvalidCallback}
	ErrAuthorizationDenied = &Error{Code: CodeAuthorizationDenied}
	ErrOAuthError          = &Error{Code: CodeOAuthError}
	ErrSessionEnded        = &Error{Code: CodeSessionEnded}
	ErrTransient           = &Error{Code: CodeTransient}
	ErrInvalidResponse     = &Error{Code: CodeInvalidResponse}
	ErrNotSignedIn         = &Error{Code: CodeNotSignedIn}
	ErrStorageFailed       = &Error{Code: CodeStorageFailed}
	ErrLockTimeout         = &Error{Code: CodeLockTimeout}
	ErrLockUnavailable     = &Error{Code: CodeLockUnavailable}
	ErrRedirectURIRefused  = &Error{Code: CodeRedirectURIRefused}
	ErrCallbackPortInUse   = &Error{Code: CodeCallbackPortInUse}
	ErrCallbackTimeout     = &Error{Code: CodeCallbackTimeout}
)

// NewError makes an *Error; for storages and locks written outside this package. The message must
// hold no secret.
func NewError(code Code, message string, cause error) *Error {
	return &Error{Code: code, Message: message, Err: cause}
}

// NewStorageError makes a storage *Error naming path. reset says the storage set its data aside
// (FILE_CORRUPT): the manager then reports NOT_SIGNED_IN with it as the cause.
func NewStorageError(code Code, path, message string, cause error, movedTo string, reset bool) *Error {
	return &Error{Code: code, Message: message, Path: path, Err: cause, MovedTo: movedTo, reset: reset}
}

func newError(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func oauthError(status int, fields oauthFields) *Error {
	text := fields.Error
	if fields.Description != "" {
		text += " (" + fields.Description + ")"
	}
	return &Error{Code: CodeOAuthError, Message: fmt.Sprintf("HTTP %d: %s", status, text), Status: status,
		OAuthError: fields.Error, ErrorDescription: fields.Description, ErrorURI: fields.URI, sent: true}
}

func transientError(status int, attempts int, sent bool, retryAfter time.Duration, cause error) *Error {
	what := "no answer"
	if status != 0 {
		what = fmt.Sprintf("HTTP %d", status)
	}
	plural := "attempts"
	if attempts == 1 {
		plural = "attempt"
	}
	message := fmt.Sprintf("%s (%d %s)", what, attempts, plural)
	if retryAfter > 0 {
		message += fmt.Sprintf("; retry after %s", retryAfter)
	}
	return &Error{Code: CodeTransient, Message: message, Status: status, Attempts: attempts, sent: sent, RetryAfter: retryAfter, Err: cause}
}

// scrubbedError is the stand-in cause of an error whose text may hold a secret or a request: its
// scrubbed message and its type's name, nothing else.
type scrubbedError struct{ kind, text string }

func (e *scrubbedError) Error() string { return e.text }

// scrub returns a cause safe to attach: err itself when it is one of the kit's errors and prints no
// secret, else a copy of its type and scrubbed message, which holds no request or body.
func scrub(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	clean := redact(text, secrets)
	var own *Error
	if errors.As(err, &own) && own == err && clean == text {
		return err
	}
	return &scrubbedError{kind: fmt.Sprintf("%T", err), text: clean}
}
