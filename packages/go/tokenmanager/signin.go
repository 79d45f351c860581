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
	"github.com/tenant-integration/sdk/packages/go/internal/pendingrecord"
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

// BeginAuthorization makes a PKCE pair and a state, stores them as a pending sign-in of its own,
// found at the callback by its state (any number may be pending: two tabs, a double click), and
// returns the authorize URL to send the browser to. scopes default to the Config's. A manager with a
// session id (WithSessionID) names it in the pending record, and completes only its own sign-ins.
// A server acting for many users uses Sessions.BeginSignIn, which binds the sign-in to the browser.
// See RFC 6749 §4.1.1, RFC 7636 §4.3.
func (m *Manager) BeginAuthorization(ctx context.Context, scopes ...scope.Scope) (*AuthorizationRequest, error) {
	if err := m.made(); err != nil {
		return nil, err
	}
	defer m.use()()
	return beginSignIn(ctx, m.settings, m.session, "", scopes)
}

// beginSignIn stores a pending sign-in for session ("" for none) bound to the browser whose
// binding's hash is browser ("" for none), and returns its authorize URL.
func beginSignIn(ctx context.Context, s *settings, session, browser string, scopes []scope.Scope) (*AuthorizationRequest, error) {
	if len(scopes) == 0 {
		scopes = s.scopes
	}
	if err := checkScopes(scopes); err != nil {
		return nil, err
	}
	pair, err := NewPKCEPair(64)
	if err != nil {
		return nil, err
	}
	state := newState()
	expiresAt := int64(math.Round(s.nowMs())) + s.o.pendingLifetime.Milliseconds()
	record := pendingrecord.Record{State: state, Verifier: pair.Verifier, ExpiresAt: expiresAt, SessionID: session, Browser: browser}
	if err := s.pending.put(ctx, record, s.o.pendingLifetime); err != nil {
		return nil, storageFailure(err, []string{state, pair.Verifier})
	}
	names := make([]string, len(scopes))
	for i, sc := range scopes {
		names[i] = string(sc)
	}
	query := []string{
		"response_type=code",
		"client_id=" + escape(s.clientID),
		"redirect_uri=" + escape(s.redirectURI),
		"scope=" + escape(strings.Join(names, " ")),
		"state=" + escape(state),
		"code_challenge=" + escape(pair.Challenge),
		"code_challenge_method=S256",
	}
	return &AuthorizationRequest{URL: s.origin + "/oauth/authorize?" + strings.Join(query, "&"),
		ExpiresAt: time.UnixMilli(expiresAt), Scopes: scopes, RedirectURI: s.redirectURI}, nil
}

// escape percent-encodes a query value with %20 for spaces (a "+" is read literally by some servers).
func escape(value string) string { return strings.ReplaceAll(url.QueryEscape(value), "+", "%20") }

// CompleteAuthorization checks the callback URL, takes its pending sign-in (found by its state, used
// once whatever follows), checks it, exchanges the code (JSON, with the verifier) and stores the
// tokens. The checks, in the order of every kit (spec/token-store/README.md, "The callback"):
// INVALID_CALLBACK (not a full URL), STATE_MISSING; then, the pending sign-in taken: INVALID_CALLBACK
// (not at the redirect URI, a repeated code or error), NO_PENDING_SIGN_IN (never begun with this
// storage, already used, or expired and dropped), STATE_MISMATCH (another state; a sign-in bound to a
// browser, which only Sessions.CompleteSignIn completes; another session's), STATE_EXPIRED,
// AUTHORIZATION_DENIED, INVALID_CALLBACK (no code): no request is sent for any of them. Then
// OAUTH_ERROR, TRANSIENT, INVALID_RESPONSE, STORAGE_FAILED.
// See RFC 6749 §4.1.2, §4.1.3, §10.12; RFC 7636 §4.5; RFC 9700 §4.4.
func (m *Manager) CompleteAuthorization(ctx context.Context, callbackURL string) (SessionInfo, error) {
	if err := m.made(); err != nil {
		return SessionInfo{}, err
	}
	defer m.use()()
	callback, err := takeCallback(ctx, m.settings, callbackURL, "", func(record *pendingrecord.Record) bool {
		return record.SessionID == m.session
	})
	if err != nil {
		return SessionInfo{}, err
	}
	return m.exchange(ctx, callback)
}

// callback is a callback checked, with its pending sign-in.
type callback struct {
	code    string
	pending *pendingrecord.Record
}

// takeCallback runs the callback's checks (spec/token-store/README.md, "The callback", steps 1 to 9):
// the pending sign-in is taken after the state is read and before any other check. binding is what
// the callback's request brought ("" none); ours says whether the record's session is the caller's.
func takeCallback(ctx context.Context, s *settings, callbackURL, binding string, ours func(*pendingrecord.Record) bool) (callback, error) {
	u, err := url.Parse(callbackURL)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return callback{}, newError(CodeInvalidCallback, "not a full URL: pass the whole URL the browser was sent back to")
	}
	values, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return callback{}, newError(CodeInvalidCallback, "the callback's query cannot be read")
	}
	states := values["state"]
	if len(states) == 0 || states[0] == "" {
		return callback{}, newError(CodeStateMissing, "the callback has no state")
	}
	if len(states) > 1 {
		return callback{}, newError(CodeInvalidCallback, "the callback repeats state")
	}
	state := states[0]
	pending, err := s.pending.take(ctx, state)
	if err != nil {
		return callback{}, storageFailure(err, []string{state, values.Get("code")})
	}
	if normalTarget(u, true) != s.redirectTarget {
		return callback{}, newError(CodeInvalidCallback, "the callback is not at the redirect URI")
	}
	for _, name := range []string{"code", "error"} {
		if len(values[name]) > 1 {
			return callback{}, newError(CodeInvalidCallback, "the callback repeats %s", name)
		}
	}
	if pending == nil {
		return callback{}, newError(CodeNoPendingSignIn, "no sign-in is pending for the callback's state (never begun with this storage, already used, or expired)")
	}
	if err := checkPending(s, pending, state, binding, ours); err != nil {
		return callback{}, err
	}
	if err := deniedError(values, pending); err != nil {
		return callback{}, err
	}
	code := values.Get("code")
	if code == "" {
		return callback{}, newError(CodeInvalidCallback, "the callback has no code")
	}
	return callback{code: code, pending: pending}, nil
}

// checkPending: the pending sign-in taken is the callback's (steps 5 to 8): its state (compared in
// constant time: it guards the 128-bit key), its browser, its session, its expiry.
func checkPending(s *settings, pending *pendingrecord.Record, state, binding string, ours func(*pendingrecord.Record) bool) error {
	if !statesEqual(state, pending.State) {
		return newError(CodeStateMismatch, "the callback's state is not the one of the pending sign-in")
	}
	if err := checkBinding(pending.Browser, binding); err != nil {
		return err
	}
	if !ours(pending) {
		return newError(CodeStateMismatch, "the sign-in was started for another session")
	}
	if s.nowMs() > float64(pending.ExpiresAt) {
		return newError(CodeStateExpired, "the pending sign-in expired; begin it again")
	}
	return nil
}

// deniedError is AUTHORIZATION_DENIED when the callback carries error (RFC 6749 §4.1.2.1), its
// fields scrubbed of the state, verifier and code.
func deniedError(values url.Values, pending *pendingrecord.Record) error {
	asMap := map[string]any{}
	for k, v := range values {
		asMap[k] = v[0]
	}
	denied, ok := parseOAuthError(asMap)
	if !ok {
		return nil
	}
	secrets := []string{pending.State, pending.Verifier, values.Get("code")}
	description := redact(denied.Description, secrets)
	message := "the tenant answered " + denied.Error
	if description != "" {
		message += " (" + description + ")"
	}
	return &Error{Code: CodeAuthorizationDenied, Message: message, OAuthError: denied.Error,
		ErrorDescription: description, ErrorURI: denied.URI}
}

// exchange trades the callback's code for tokens (RFC 6749 §4.1.3, RFC 7636 §4.5) and stores them
// under the manager's scope.
func (m *Manager) exchange(ctx context.Context, c callback) (SessionInfo, error) {
	m.mu.Lock()
	m.generation++
	m.mu.Unlock()
	body := marshal(api.AuthorizationCodeGrantRequest{GrantType: api.AuthorizationCode, ClientId: m.clientID,
		RedirectUri: m.redirectURI, Code: c.code, CodeVerifier: c.pending.Verifier})
	text, err := m.post(ctx, "/oauth/token", body, "application/json", []string{c.code, c.pending.Verifier}, 1)
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
