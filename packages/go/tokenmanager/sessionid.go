package tokenmanager

// The session id of a server acting for many users (spec/token-store/README.md, "The session id"):
// the app's own id of its user or connection, checked by one rule in every kit (internal/sessionid),
// with one message; and how the kit logs it.

import (
	"context"
	"log/slog"

	"github.com/tenant-integration/sdk/packages/go/internal/sessionid"
)

// MaxSessionIDLength is the longest session id, in characters.
const MaxSessionIDLength = sessionid.MaxLength

// CheckSessionID returns nil when id is a session id: 1 to 128 characters from A–Z a–z 0–9 and
// - . _ ~ @ + = | (RFC 3986's unreserved characters, plus @ + = |), so that UUIDs, integers, e-mail
// addresses and "auth0|123"-style subjects fit. Anything else (empty, longer, ":", "{", "}", "/",
// "%", spaces, control characters, non-ASCII…) is INVALID_SESSION_ID, whose message names the rule
// and shows at most the id's first 16 characters, escaped:
//
//	INVALID_SESSION_ID: invalid session id "a:b": ":" at character 2 is not allowed; a session id is 1 to 128 characters from A-Z a-z 0-9 - . _ ~ @ + = | (hash or encode any other id)
//
// Ids are compared exactly ("Ada" and "ada" are two sessions). An app with other ids hashes or
// encodes them (the README says how). Every API of the kit that takes a session id checks it first,
// before anything is read or written.
func CheckSessionID(id string) error {
	if problem := sessionid.Problem(id); problem != "" {
		return &Error{Code: CodeInvalidSessionID, Message: sessionid.Message(id, problem)}
	}
	return nil
}

// sessionAttr is the log attribute of a session's id.
const sessionAttr = "session_id"

// sessionLogHandler adds the session id to every record of a session's manager, only when the
// handler logs debug records: the id is not a secret, but it may be personal data (an e-mail
// address), so no other level shows it (spec/token-store/README.md, "Logs").
type sessionLogHandler struct {
	slog.Handler
	id string
}

func withSessionID(h slog.Handler, id string) slog.Handler {
	return &sessionLogHandler{Handler: h, id: id}
}

func (h *sessionLogHandler) Handle(ctx context.Context, record slog.Record) error {
	if h.Handler.Enabled(ctx, slog.LevelDebug) {
		record = record.Clone()
		record.AddAttrs(slog.String(sessionAttr, h.id))
	}
	return h.Handler.Handle(ctx, record)
}

func (h *sessionLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &sessionLogHandler{Handler: h.Handler.WithAttrs(attrs), id: h.id}
}

func (h *sessionLogHandler) WithGroup(name string) slog.Handler {
	return &sessionLogHandler{Handler: h.Handler.WithGroup(name), id: h.id}
}
