package tokenmanager

import (
	"encoding/json"
	"log/slog"

	sharedredact "github.com/tenant-integration/sdk/packages/go/internal/redact"
)

// Redacted is what a secret prints as.
const Redacted = sharedredact.Redacted

// Secret holds a token, code, verifier or state. Printing it (fmt, slog, JSON) shows [redacted];
// Reveal gives the value.
type Secret string

// String returns [redacted].
func (Secret) String() string { return Redacted }

// GoString returns [redacted] (for %#v).
func (Secret) GoString() string { return Redacted }

// LogValue returns [redacted] for log/slog.
func (Secret) LogValue() slog.Value { return slog.StringValue(Redacted) }

// MarshalJSON writes "[redacted]".
func (Secret) MarshalJSON() ([]byte, error) { return json.Marshal(Redacted) }

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return string(s) }

// redact replaces every form of every secret in text by [redacted] (internal/redact, the one copy
// of the rule). See RFC 6749 §10.3, §10.4; RFC 6750 §5.3.
func redact(text string, secrets []string) string { return sharedredact.Text(text, secrets) }
