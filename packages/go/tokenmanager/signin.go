package tokenmanager

// Sign-in: the authorize URL with PKCE and a state, and the callback's checks and code exchange
// (RFC 6749 §4.1, RFC 7636; the TypeScript kit's sign-in.ts, the Python kit's _sign_in.py).

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/tenant-integration/sdk/packages/go/api"
	"github.com/tenant-integration/sdk/packages/go/api/scope"
)

// AuthorizationRequest is where to send the browser. URL carries the state: it is not printed by
// String.
type AuthorizationRequest struct {
	URL         string
	ExpiresAt   time.Time
	Scopes      []scope.Scope
	RedirectURI string
}

// String leaves the URL out (it holds the state).
func (r AuthorizationRequest) String() string {
	return fmt.Sprintf("AuthorizationRequest{URL: [redacted], ExpiresAt: %s}", r.ExpiresAt.Format(time.RFC3339))
}

// BeginAuthorization makes a PKCE pair and a state, stores them as the one pending sign-in
// (replacing any earlier one) and returns the authorize URL to send the browser to. scopes default
// to the Config's. See RFC 6749 §4.1.1, RFC 7636 §4.3.
func (m *Manager) BeginAuthorization(ctx context.Context, scopes ...scope.Scope) (*AuthorizationRequest, error) {
	if err := m.made(); err != nil {
		return nil, err
	}
	if len(scopes) == 0 {
		scopes = m.scopes
	}
	if err := checkScopes(scopes); err != nil {
		return nil, err
	}
	pair, err := NewPKCEPair(64)
	if err != nil {
		return nil, err
	}
	state := newState()
	expiresAt := int64(math.Round(m.nowMs())) + m.o.pendingLifetime.Milliseconds()
	pending := marshal(pendingRecord{State: state, Verifier: pair.Verifier, ExpiresAt: expiresAt})
	if err := m.pendingStorage.Set(ctx, m.pendingKey, pending); err != nil {
		return nil, m.storageFailed(err, state, pair.Verifier)
	}
	names := make([]string, len(scopes))
	for i, s := range scopes {
		names[i] = string(s)
	}
	query := []string{
		"response_type=code",
		"client_id=" + escape(m.clientID),
		"redirect_uri=" + escape(m.redirectURI),
		"scope=" + escape(strings.Join(names, " ")),
		"state=" + escape(state),
		"code_challenge=" + escape(pair.Challenge),
		"code_challenge_method=S256",
	}
	return &AuthorizationRequest{URL: m.origin + "/oauth/authorize?" + strings.Join(query, "&"),
		ExpiresAt: time.UnixMilli(expiresAt), Scopes: scopes, RedirectURI: m.redirectURI}, nil
}

// escape percent-encodes a query value with %20 for spaces (a "+" is read literally by some servers).
func escape(value string) string { return strings.ReplaceAll(url.QueryEscape(value), "+", "%20") }

// CompleteAuthorization checks the callback URL, takes the pending sign-in (single use), checks the
// state in constant time, exchanges the code (JSON, with the verifier) and stores the tokens.
// A callback that is not a full URL at the redirect URI is refused before the pending sign-in is
// taken. Errors: INVALID_CALLBACK, NO_PENDING_SIGN_IN, STATE_MISSING, STATE_MISMATCH, STATE_EXPIRED,
// AUTHORIZATION_DENIED (no request sent); OAUTH_ERROR, TRANSIENT, INVALID_RESPONSE, STORAGE_FAILED.
// See RFC 6749 §4.1.2, §4.1.3, §10.12; RFC 7636 §4.5; RFC 9700 §4.4.
func (m *Manager) CompleteAuthorization(ctx context.Context, callbackURL string) (SessionInfo, error) {
	if err := m.made(); err != nil {
		return SessionInfo{}, err
	}
	params, err := m.callbackParams(callbackURL)
	if err != nil {
		return SessionInfo{}, err
	}
	raw, present, err := m.pendingStorage.Get(ctx, m.pendingKey)
	if err == nil && present {
		err = m.pendingStorage.Delete(ctx, m.pendingKey)
	}
	if err != nil {
		return SessionInfo{}, m.storageFailed(err)
	}
	pending := parsePending(raw, present)
	if pending == nil {
		return SessionInfo{}, newError(CodeNoPendingSignIn, "no sign-in is pending (never begun, already used, or cleared)")
	}
	received, ok := params["state"]
	if !ok {
		return SessionInfo{}, newError(CodeStateMissing, "the callback has no state")
	}
	if !statesEqual(received, pending.State) {
		return SessionInfo{}, newError(CodeStateMismatch, "the callback's state is not the one of the pending sign-in")
	}
	if m.nowMs() > float64(pending.ExpiresAt) {
		return SessionInfo{}, newError(CodeStateExpired, "the pending sign-in expired; begin it again")
	}
	asMap := map[string]any{}
	for k, v := range params {
		asMap[k] = v
	}
	if denied, ok := parseOAuthError(asMap); ok {
		secrets := []string{pending.State, pending.Verifier, params["code"]}
		description := redact(denied.Description, secrets)
		message := "the tenant answered " + denied.Error
		if description != "" {
			message += " (" + description + ")"
		}
		return SessionInfo{}, &Error{Code: CodeAuthorizationDenied, Message: message, OAuthError: denied.Error,
			ErrorDescription: description, ErrorURI: denied.URI}
	}
	code := params["code"]
	if code == "" {
		return SessionInfo{}, newError(CodeInvalidCallback, "the callback has no code")
	}
	m.mu.Lock()
	m.generation++
	m.mu.Unlock()
	body := marshal(api.AuthorizationCodeGrantRequest{GrantType: api.AuthorizationCode, ClientId: m.clientID,
		RedirectUri: m.redirectURI, Code: code, CodeVerifier: pending.Verifier})
	text, err := m.post(ctx, "/oauth/token", body, "application/json", []string{code, pending.Verifier}, 1)
	if err != nil {
		return SessionInfo{}, err
	}
	record, err := m.processTokenResponse(text, nil)
	if err != nil {
		return SessionInfo{}, err
	}
	info, err := m.commit(ctx, record)
	if err != nil {
		return SessionInfo{}, err
	}
	m.log.Info("signed in", "expires_at", info.ExpiresAt)
	m.emit(Event{Kind: EventSignedIn, Session: &info})
	return info, nil
}

// callbackParams is the callback's query, checked: a full URL at the redirect URI that repeats
// none of state, code, error. Its value never enters a message.
func (m *Manager) callbackParams(callbackURL string) (map[string]string, error) {
	u, err := url.Parse(callbackURL)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return nil, newError(CodeInvalidCallback, "not a full URL: pass the whole URL the browser was sent back to")
	}
	if normalTarget(u, true) != m.redirectTarget {
		return nil, newError(CodeInvalidCallback, "the callback is not at the redirect URI")
	}
	values, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, newError(CodeInvalidCallback, "the callback's query cannot be read")
	}
	params := map[string]string{}
	for name, list := range values {
		if len(list) > 1 && (name == "state" || name == "code" || name == "error") {
			return nil, newError(CodeInvalidCallback, "the callback repeats %s", name)
		}
		params[name] = list[0]
	}
	return params, nil
}
