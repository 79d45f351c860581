package tokenmanager

// A token response read and checked (RFC 6749 §5.1, §5.2; the TypeScript kit's token-response.ts).

import (
	"encoding/json"
	"math"
	"regexp"
	"strings"
)

// vschar is RFC 6749 Appendix A.12 (access_token) and A.17 (refresh_token): 1*VSCHAR (%x20-7E).
var vschar = regexp.MustCompile(`^[\x20-\x7e]+$`)

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
// Assumption (not in the service description, which gives neither the value of token_type nor the
// unit of expires_in): token_type is Bearer, any case (RFC 6750 §4), and expires_in a positive
// number of seconds (RFC 6749 §5.1). See RFC 6749 §5.1, §6.
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
