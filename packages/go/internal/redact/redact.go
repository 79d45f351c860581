// Package redact removes secrets from text: every form a token, code, verifier or state may take
// when it is printed (raw, percent-encoded in either case and space style, JSON-escaped, base64),
// and the values that follow credential schemes and secret-named keys. The one copy of the rule,
// used by the token manager's errors and logs and by the transport layers' logs and errors
// (Python's _redact.py and _log.py). See RFC 6749 §10.3, §10.4; RFC 6750 §5.3.
package redact

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// Redacted is what a secret prints as.
const Redacted = "[redacted]"

// MinSecret: shorter values are not treated as secrets (redacting them would garble ordinary text).
const MinSecret = 8

// Forms are the printed forms of a secret: raw, percent-encoded (both cases, both space styles),
// JSON-escaped; those shorter than MinSecret are left out.
func Forms(secret string) []string {
	quoted, _ := json.Marshal(secret)
	forms := []string{secret, url.QueryEscape(secret), url.PathEscape(secret),
		strings.ReplaceAll(url.QueryEscape(secret), "+", "%20"), string(quoted[1 : len(quoted)-1])}
	for _, form := range forms[:] {
		forms = append(forms, lowerPercent(form))
	}
	out := forms[:0]
	for _, form := range forms {
		if len(form) >= MinSecret {
			out = append(out, form)
		}
	}
	return out
}

// Variants are a secret and its base64 forms (standard and URL-safe, padded and not), each of
// which Text also removes in all its Forms.
func Variants(secret string) []string {
	standard := base64.StdEncoding.EncodeToString([]byte(secret))
	urlsafe := base64.URLEncoding.EncodeToString([]byte(secret))
	return []string{secret, standard, strings.TrimRight(standard, "="), urlsafe, strings.TrimRight(urlsafe, "=")}
}

func lowerPercent(text string) string {
	b := []byte(text)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lowerHex(b[i+1]), lowerHex(b[i+2])
		}
	}
	return string(b)
}

func lowerHex(c byte) byte {
	if c >= 'A' && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// Text replaces every form of every secret in text by [redacted], longest first.
func Text(text string, secrets []string) string {
	var forms []string
	for _, secret := range secrets {
		if secret != "" {
			forms = append(forms, Forms(secret)...)
		}
	}
	sort.Slice(forms, func(i, j int) bool { return len(forms[i]) > len(forms[j]) })
	for _, form := range forms {
		text = strings.ReplaceAll(text, form, Redacted)
	}
	return text
}

// Whatever follows an HTTP authentication scheme that carries credentials (RFC 6750 §2.1, RFC 7617 §2).
var credentials = regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)[A-Za-z0-9\-._~+/%]+=*`)

// The value of a key that names a secret, as key=value (query, form, text) or "key": "value" (JSON).
var secretKeys = regexp.MustCompile(`(?i)(^|[^\w-])(access_token|refresh_token|id_token|token|code|code_verifier|state|client_secret|password)("?\s*[=:]\s*"?)([^\s&",;}]+)`)

// Scrub returns text without the given secrets (every form, base64 included) and without the values
// of credential schemes and secret-named keys, which covers secrets it was never told about.
func Scrub(text string, secrets []string) string {
	var variants []string
	for _, secret := range secrets {
		if secret != "" {
			variants = append(variants, Variants(secret)...)
		}
	}
	text = Text(text, variants)
	text = credentials.ReplaceAllString(text, "${1}${2}"+Redacted)
	return secretKeys.ReplaceAllString(text, "${1}${2}${3}"+Redacted)
}
