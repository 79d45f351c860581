package tokenmanager

// The stored records (spec/token-store/): the token record, the pending sign-in and the refresh
// intent, written byte for byte as the TypeScript manager's JSON.stringify writes them (same keys,
// same order, no spaces, no HTML escaping), so that Go, TypeScript and Python processes share them.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"regexp"
	"strings"
)

// vschar is RFC 6749 Appendix A.12/A.13: tokens are 1*VSCHAR (%x20-7E).
var vschar = regexp.MustCompile(`^[\x20-\x7e]+$`)

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

// parseObject is a JSON text parsed as an object; nil for anything else.
func parseObject(text string) map[string]any {
	decoder := json.NewDecoder(strings.NewReader(text))
	decoder.UseNumber()
	var value map[string]any
	if err := decoder.Decode(&value); err != nil || decoder.More() {
		return nil
	}
	return value
}

func number(value any) (float64, bool) {
	n, ok := value.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
}

// tokenFields validates a token response (or a stored record) and returns its five fields.
// previous is kept when a refresh response has no refresh_token (it did not rotate); a field present
// with any value replaces it and must be valid. The error names the field, never its value.
// See RFC 6749 §5.1, §6.
func tokenFields(fields map[string]any, previous string) (*tokenRecord, error) {
	invalid := func(name string) error {
		return newError(CodeInvalidResponse, "the token response's %s is missing or invalid", name)
	}
	record := &tokenRecord{}
	var ok bool
	if record.AccessToken, ok = fields["access_token"].(string); !ok || !vschar.MatchString(record.AccessToken) {
		return nil, invalid("access_token")
	}
	if raw, present := fields["refresh_token"]; present || previous == "" {
		if record.RefreshToken, ok = raw.(string); !ok || !vschar.MatchString(record.RefreshToken) {
			return nil, invalid("refresh_token")
		}
	} else {
		record.RefreshToken = previous
	}
	if record.TokenType, ok = fields["token_type"].(string); !ok || !strings.EqualFold(record.TokenType, "bearer") {
		return nil, invalid("token_type")
	}
	if record.ExpiresIn, ok = number(fields["expires_in"]); !ok || record.ExpiresIn <= 0 {
		return nil, invalid("expires_in")
	}
	if raw, present := fields["scope"]; present {
		scope, ok := raw.(string)
		if !ok {
			return nil, invalid("scope")
		}
		record.Scope = &scope
	}
	return record, nil
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

// pendingRecord is the one pending sign-in.
type pendingRecord struct {
	State     string `json:"state"`
	Verifier  string `json:"verifier"`
	ExpiresAt int64  `json:"expiresAt"`
}

func parsePending(raw string, present bool) *pendingRecord {
	if !present {
		return nil
	}
	fields := parseObject(raw)
	state, ok1 := fields["state"].(string)
	verifier, ok2 := fields["verifier"].(string)
	expires, ok3 := number(fields["expiresAt"])
	if !ok1 || !ok2 || !ok3 {
		return nil
	}
	return &pendingRecord{State: state, Verifier: verifier, ExpiresAt: int64(expires)}
}

// intentRecord is the refresh under way: which refresh token (a fingerprint), which refresh (holder),
// since when (ms), and its writer's pid and host.
type intentRecord struct {
	Fingerprint string  `json:"fingerprint"`
	Holder      string  `json:"holder"`
	Since       float64 `json:"since"`
	Pid         int     `json:"pid,omitempty"`
	Host        string  `json:"host,omitempty"`
}

func parseIntent(raw string, present bool) *intentRecord {
	if !present {
		return nil
	}
	fields := parseObject(raw)
	fingerprint, ok1 := fields["fingerprint"].(string)
	holder, ok2 := fields["holder"].(string)
	since, ok3 := number(fields["since"])
	if !ok1 || !ok2 || !ok3 {
		return nil
	}
	intent := &intentRecord{Fingerprint: fingerprint, Holder: holder, Since: since}
	if pid, ok := number(fields["pid"]); ok && pid == math.Trunc(pid) {
		intent.Pid = int(pid)
	}
	intent.Host, _ = fields["host"].(string)
	return intent
}

func (i *intentRecord) describe() string {
	if i.Pid == 0 {
		return "another process"
	}
	host := i.Host
	if host == "" {
		host = "an unknown host"
	}
	return "process " + itoa(i.Pid) + " on " + host
}

// fingerprint is the lowercase hex SHA-256 of a refresh token: names it without revealing it.
func fingerprint(refreshToken string) string {
	sum := sha256.Sum256([]byte(refreshToken))
	return hex.EncodeToString(sum[:])
}

// oauthFields are an RFC 6749 §5.2 error body's (or §4.1.2.1 callback's) fields.
type oauthFields struct{ Error, Description, URI string }

func parseOAuthError(fields map[string]any) (oauthFields, bool) {
	code, ok := fields["error"].(string)
	if !ok || code == "" {
		return oauthFields{}, false
	}
	description, _ := fields["error_description"].(string)
	uri, _ := fields["error_uri"].(string)
	return oauthFields{code, description, uri}, true
}
