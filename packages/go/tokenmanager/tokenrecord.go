package tokenmanager

// The token record (spec/token-store/token-record.schema.json; the refresh intent is in
// refreshintent.go, the pending sign-in in internal/pendingrecord), written byte for byte as the
// TypeScript manager's JSON.stringify writes it (same keys, same order, no spaces, no HTML
// escaping), so that Go, TypeScript and Python processes share it.

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strings"
)

// tokenRecord is one stored token record. It has no String method on purpose: it is never printed.
type tokenRecord struct {
	AccessToken  string  `json:"access_token"`
	RefreshToken string  `json:"refresh_token"`
	TokenType    string  `json:"token_type"`
	ExpiresIn    float64 `json:"expires_in"`
	Scope        *string `json:"scope,omitempty"`
	ReceivedAt   float64 `json:"received_at"`
	ID           string  `json:"id,omitempty"`
	Session      string  `json:"session,omitempty"`
	Seq          *int64  `json:"seq,omitempty"`
}

// marshal writes compact JSON without HTML escaping, as JSON.stringify does.
func marshal(value any) string {
	var b bytes.Buffer
	encoder := json.NewEncoder(&b)
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(value); err != nil {
		panic(err) // only our own plain structs are marshalled
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// recordID is the form of a record's id and session: 256 bits, base64url (spec/token-store).
var recordID = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// parseRecord is the stored token record, or nil when absent or not a valid record (no session):
// every field the schema requires must be there, id, session and seq included.
func parseRecord(raw string, present bool) *tokenRecord {
	if !present {
		return nil
	}
	fields := parseObject(raw)
	if fields == nil {
		return nil
	}
	record, err := tokenFields(fields, "")
	if err != nil {
		return nil
	}
	var ok bool
	if record.ReceivedAt, ok = number(fields["received_at"]); !ok || record.ReceivedAt < 0 || record.ReceivedAt != math.Trunc(record.ReceivedAt) {
		return nil
	}
	record.ID, _ = fields["id"].(string)
	record.Session, _ = fields["session"].(string)
	seq, isNumber := fields["seq"].(json.Number)
	n, err := seq.Int64()
	if !recordID.MatchString(record.ID) || !recordID.MatchString(record.Session) || !isNumber || err != nil || n < 0 {
		return nil
	}
	record.Seq = &n
	return record
}

func (r *tokenRecord) serialize() string { return marshal(r) }

func (r *tokenRecord) seq() int64 {
	if r.Seq == nil {
		return 0
	}
	return *r.Seq
}

// receivedAt bounds the receive time by the reader's clock: a record stamped in this machine's
// future (the writer's clock ahead) counts as received now.
func (r *tokenRecord) receivedAt(nowMs float64) float64 { return math.Min(r.ReceivedAt, nowMs) }

// expiresAtMs is the local receive time plus expires_in seconds (RFC 6749 §5.1).
func (r *tokenRecord) expiresAtMs(nowMs float64) float64 {
	return r.receivedAt(nowMs) + r.ExpiresIn*1000
}

// fresh: younger than its lifetime minus the leeway (at most half the lifetime). A record stamped
// further ahead than the token lives is a wrong clock: not fresh.
func (r *tokenRecord) fresh(nowMs, leewayMs float64) bool {
	lifetime := r.ExpiresIn * 1000
	if r.ReceivedAt-nowMs > lifetime {
		return false
	}
	return nowMs-r.receivedAt(nowMs) < lifetime-math.Min(leewayMs, lifetime/2)
}

// supersedes: whether stored supersedes ours, whose write failed: it is ours, or a later record of
// the same session, or (another session) ours is a refresh or stored is not older.
// See RFC 9700 §4.14.2.
func supersedes(stored, ours *tokenRecord) bool {
	if stored.ID != "" && stored.ID == ours.ID {
		return true
	}
	if stored.Session != "" && stored.Session == ours.Session {
		return stored.seq() >= ours.seq()
	}
	return ours.seq() > 0 || stored.ReceivedAt >= ours.ReceivedAt
}
