package tokenmanager

// The session's events, given to WithOnChange hooks (the Python kit's _events.py).

// EventKind names a change of the session.
type EventKind string

// The events, the TypeScript and Python kits' names.
const (
	EventSignedIn        EventKind = "signed-in"
	EventSignedOut       EventKind = "signed-out"
	EventTokensRefreshed EventKind = "tokens-refreshed"
	EventSessionEnded    EventKind = "session-ended"
	EventRevoked         EventKind = "revoked"
	EventStorageFailed   EventKind = "storage-failed"
)

// Event is what WithOnChange hooks receive. It holds no token.
type Event struct {
	Kind EventKind
	// Session is set for signed-in and tokens-refreshed.
	Session *SessionInfo
	// Revoked is true for the signed-out that follows a revocation.
	Revoked bool
	// Err is the *Error of session-ended (SESSION_ENDED) and storage-failed (STORAGE_FAILED).
	Err error
}
