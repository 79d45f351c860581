package tokenmanager

import (
	"encoding/json"
	"log/slog"
	"net/url"
	"sort"
	"strings"
)

// Redacted is what a secret prints as.
const Redacted = "[redacted]"

// minSecret: shorter values are not treated as secrets (redacting them would garble ordinary text).
const minSecret = 8

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

// secretForms are the printed forms of a secret: raw, percent-encoded (both cases, both space
// styles), JSON-escaped.
func secretForms(secret string) []string {
	quoted, _ := json.Marshal(secret)
	escaped := url.PathEscape(secret)
	forms := []string{secret, url.QueryEscape(secret), escaped, strings.ReplaceAll(url.QueryEscape(secret), "+", "%20"), string(quoted[1 : len(quoted)-1])}
	for _, form := range forms[:] {
		forms = append(forms, lowerPercent(form))
	}
	out := forms[:0]
	for _, form := range forms {
		if len(form) >= minSecret {
			out = append(out, form)
		}
	}
	return out
}

func lowerPercent(text string) string {
	b := []byte(text)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lower(b[i+1]), lower(b[i+2])
		}
	}
	return string(b)
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// redact replaces every form of every secret in text by [redacted], longest first.
// See RFC 6749 §10.3, §10.4; RFC 6750 §5.3.
func redact(text string, secrets []string) string {
	var forms []string
	for _, secret := range secrets {
		if secret != "" {
			forms = append(forms, secretForms(secret)...)
		}
	}
	sort.Slice(forms, func(i, j int) bool { return len(forms[i]) > len(forms[j]) })
	for _, form := range forms {
		text = strings.ReplaceAll(text, form, Redacted)
	}
	return text
}
