// Package pendingrecord is the pending sign-in record of spec/token-store (pending-record.schema.json):
// written and read by the token manager, and read by the token file, which drops expired and invalid
// ones on each write (filestorage). The one copy of its format and checks.
package pendingrecord

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/tenant-integration/sdk/packages/go/internal/sessionid"
)

// Record is one pending sign-in. It has no String method: the verifier is a secret until the
// exchange, and the state until the callback.
type Record struct {
	State     string `json:"state"`
	Verifier  string `json:"verifier"`
	ExpiresAt int64  `json:"expiresAt"`
	SessionID string `json:"sessionId,omitempty"`
	Browser   string `json:"browser,omitempty"`
}

var (
	state    = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)
	verifier = regexp.MustCompile(`^[A-Za-z0-9._~-]{43,128}$`)
	browser  = regexp.MustCompile(`^[0-9a-f]{64}$`)
	// name is the end of a pending sign-in's name: :pending: and the 32 lowercase hex digits of its key.
	name = regexp.MustCompile(`:pending:[0-9a-f]{32}$`)
)

// Text is the record's JSON text as every kit writes it: state, verifier, expiresAt, then sessionId
// and browser when there are any, in that order, without spaces or HTML escaping.
func (r Record) Text() string {
	var b bytes.Buffer
	encoder := json.NewEncoder(&b)
	encoder.SetEscapeHTML(false)
	_ = encoder.Encode(r) // plain strings and an integer
	return strings.TrimSuffix(b.String(), "\n")
}

// Parse reads a pending record; ok is false for a text that does not validate against the schema
// (README: "a value that does not validate reads as absent"): an unknown field, a missing one, a
// value of another form.
func Parse(text string) (record Record, ok bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal([]byte(text), &fields) != nil {
		return Record{}, false
	}
	for key := range fields {
		switch key {
		case "state", "verifier", "expiresAt", "sessionId", "browser":
		default:
			return Record{}, false
		}
	}
	_, hasSession := fields["sessionId"]
	_, hasBrowser := fields["browser"]
	decoder := json.NewDecoder(strings.NewReader(text))
	decoder.DisallowUnknownFields()
	if decoder.Decode(&record) != nil || !state.MatchString(record.State) || !verifier.MatchString(record.Verifier) ||
		record.ExpiresAt < 0 || (hasSession && !sessionid.Valid(record.SessionID)) || (hasBrowser && !browser.MatchString(record.Browser)) {
		return Record{}, false
	}
	return record, true
}

// IsName reports whether a storage name is a pending sign-in's:
// tenant-integration:<origin>:<clientId>:pending:<32 lowercase hex digits>.
func IsName(storageName string) bool {
	return strings.HasPrefix(storageName, "tenant-integration:") && name.MatchString(storageName)
}

// Expired reports whether the record stored under a pending sign-in's name should be dropped: it
// does not validate, or its expiresAt (ms since the epoch) is before nowMs.
func Expired(text string, nowMs int64) bool {
	record, ok := Parse(text)
	return !ok || record.ExpiresAt < nowMs
}
