// Package tokenmanager signs in to a tenant of the Tenant Integration Service with OAuth 2.0
// Authorization Code + PKCE and keeps the session alive through refresh-token rotation, across
// goroutines and processes, with the records, keys and locks of the TypeScript and Python kits.
//
//   - sign-in with PKCE S256 and a random, single-use state compared in constant time before any
//     request (RFC 6749 §4.1, §10.12; RFC 7636);
//   - JSON token requests, as the contract's POST /oauth/token takes them;
//   - the access token refreshed at use time within the leeway of expiry (no timers), expiry counted
//     from the local receive time and expires_in, on an injectable clock;
//   - one refresh however many goroutines ask (one flight), and across processes through the
//     storage's lock, with the refresh intent of spec/token-store (paused and killed processes);
//   - rotated tokens written durably before they are handed out; invalid_grant ends the session,
//     5xx and network errors keep it;
//   - revocation (RFC 7009), local sign-out, a change hook, *Error values with the kit's codes, and a
//     log/slog logger that never prints a secret.
//
// A *Manager is an oauth2.TokenSource (golang.org/x/oauth2) and gives an http.RoundTripper for the
// user's *http.Client (Transport).
package tokenmanager

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tenant-integration/sdk/packages/go/api"
	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/internal/procid"
)

// After a failed write of new tokens, how long they are served from memory before the write is
// tried (and a failure reported) again.
const unsavedRetry = time.Second

// How often a process that honours another's refresh intent reads the storage again.
const intentPoll = 50 * time.Millisecond

// Times the lock is taken again after it was found taken over before a refresh left.
const lockTries = 3

// The longest wait before a refresh is sent again; a longer Retry-After is not waited for.
const maxRetryDelay = 10 * time.Second

// EventKind names a change of the session.
type EventKind string

// The events, the TypeScript and Python kits' names.
const (
	EventSignedIn        EventKind = "signed-in"
	EventSignedOut       EventKind = "signed-out"
	EventTokensRefreshed EventKind = "tokens-refreshed"
	EventSessionEnded    EventKind = "session-ended"
	EventRevoked         EventKind = "revoked"
	EventStorageFailed   EventKind = "storage-failed"
)

// Event is what WithOnChange hooks receive. It holds no token.
type Event struct {
	Kind EventKind
	// Session is set for signed-in and tokens-refreshed.
	Session *SessionInfo
	// Revoked is true for the signed-out that follows a revocation.
	Revoked bool
	// Err is the *Error of session-ended (SESSION_ENDED) and storage-failed (STORAGE_FAILED).
	Err error
}

// SessionInfo tells about a session without any token.
type SessionInfo struct {
	// ExpiresAt is when the access token expires (local receive time + expires_in).
	ExpiresAt time.Time
	// Scope is the granted scope as the tenant returned it, "" when it returned none.
	Scope string
}

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

// Manager signs in, keeps the tokens in a storage, refreshes them rotation-safely and revokes
// them. Safe for concurrent use.
type Manager struct {
	origin, clientID, redirectURI, redirectTarget string
	scopes                                        []scope.Scope
	o                                             options
	storage, pendingStorage                       Storage
	lock                                          Lock
	intents                                       bool
	http                                          *http.Client
	log                                           *slog.Logger
	tokensKey, pendingKey, intentKey, lockName    string
	arms                                          bool // the default clock: the bearer layer may arm a token (armed.go)
	afterFunc                                     func(time.Duration, func()) (stop func() bool)

	// armed is the token the bearer layer sends without a clock read (armed.go); stored and swapped
	// with mu held, loaded without it.
	armed atomic.Pointer[armedToken]

	mu              sync.Mutex   // guards what follows; never held across I/O
	current         *tokenRecord // set through setCurrent, which disarms the armed token
	unsaved         *tokenRecord
	rejected        string
	generation      int
	flight          *flight
	ownIntent       *intentRecord
	writeFailure    *Error
	retryWriteAfter float64
}

type flight struct {
	done  chan struct{}
	token string
	err   error
}

// New makes a Manager. It fails with INVALID_OPTIONS, saying why.
func New(config Config, opts ...Option) (*Manager, error) {
	o := options{
		leeway: 60 * time.Second, pendingLifetime: 10 * time.Minute,
		requestTimeout: 10 * time.Second, attempts: 3, retryDelay: 300 * time.Millisecond, intentWait: 20 * time.Second,
	}
	for _, opt := range opts {
		opt(&o)
	}
	origin, err := tenantOrigin(config.BaseURL)
	if err != nil {
		return nil, err
	}
	if config.ClientID == "" {
		return nil, invalidOption("ClientID", "give the OAuth client identifier")
	}
	redirect, err := url.Parse(config.RedirectURI)
	if err != nil || !redirect.IsAbs() || redirect.Host == "" || redirect.Fragment != "" {
		return nil, invalidOption("RedirectURI", "give the absolute redirect URI registered for the client, without a fragment")
	}
	if err := checkScopes(config.Scopes); err != nil {
		return nil, err
	}
	if o.attempts < 1 || o.leeway < 0 || o.pendingLifetime <= 0 || o.requestTimeout <= 0 || o.retryDelay < 0 || o.intentWait <= 0 {
		return nil, invalidOption("options", "attempts must be >= 1 and durations positive")
	}
	m := &Manager{origin: origin, clientID: config.ClientID, redirectURI: config.RedirectURI,
		redirectTarget: normalTarget(redirect, true), scopes: append([]scope.Scope(nil), config.Scopes...), o: o,
		afterFunc: afterFuncOnTimer}
	if m.o.now == nil {
		m.o.now, m.arms = time.Now, true
	}
	m.storage = o.storage
	if m.storage == nil {
		m.storage = NewMemoryStorage()
	}
	m.pendingStorage = o.pendingStorage
	if m.pendingStorage == nil {
		m.pendingStorage = m.storage
	}
	// The lock option wins, then the storage's own lock, then the process's. Intents only where
	// processes share the storage through a lock.
	m.lock = o.lock
	if m.lock == nil {
		if locking, ok := m.storage.(LockingStorage); ok {
			m.lock = locking.Lock()
		}
	}
	_, memory := m.storage.(*MemoryStorage)
	m.intents = m.lock != nil && !memory
	if m.lock == nil {
		m.lock = processLocks
	}
	base := o.client
	if base == nil {
		base = &http.Client{}
	}
	client := *base
	client.Timeout = 0 // the running-time timeout bounds each request instead
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	m.http = &client
	m.log = o.logger
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	prefix := "tenant-integration:" + origin + ":" + config.ClientID + ":"
	m.tokensKey, m.pendingKey, m.intentKey, m.lockName = prefix+"tokens", prefix+"pending", prefix+"intent", prefix+"lock"
	return m, nil
}

func checkScopes(scopes []scope.Scope) error {
	if len(scopes) == 0 {
		return invalidOption("Scopes", "give at least one scope, e.g. scope.ProfileRead")
	}
	for _, s := range scopes {
		if !s.Valid() {
			return invalidOption("Scopes", fmt.Sprintf("%q is not a scope of the service", string(s)))
		}
	}
	return nil
}

// BaseURL is the tenant's origin, normalized.
func (m *Manager) BaseURL() string { return m.origin }

// RedirectURI is the redirect URI of the Config, as given (the loopback sign-in listens on it).
func (m *Manager) RedirectURI() string { return m.redirectURI }

func (m *Manager) nowMs() float64 { return float64(m.o.now().UnixNano()) / 1e6 }

func (m *Manager) emit(e Event) {
	for _, hook := range m.o.onChange {
		hook(e)
	}
}

func (m *Manager) info(r *tokenRecord) SessionInfo {
	ms := r.expiresAtMs(m.nowMs())
	info := SessionInfo{ExpiresAt: time.UnixMilli(int64(math.Round(ms)))}
	if r.Scope != nil {
		info.Scope = *r.Scope
	}
	return info
}

func (m *Manager) fresh(r *tokenRecord) bool {
	return r.fresh(m.nowMs(), float64(m.o.leeway.Milliseconds()))
}

// freshUntilMs is when r stops being fresh (ms, on the manager's clock): its lifetime minus the
// leeway (at most half the lifetime) after its receive time.
func (m *Manager) freshUntilMs(r *tokenRecord, nowMs float64) float64 {
	lifetimeMs := r.ExpiresIn * 1000
	return r.receivedAt(nowMs) + lifetimeMs - math.Min(float64(m.o.leeway.Milliseconds()), lifetimeMs/2)
}

// known is every token in play, for scrubbing.
func (m *Manager) known(extra ...string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range []*tokenRecord{m.current, m.unsaved} {
		if r != nil {
			extra = append(extra, r.AccessToken, r.RefreshToken)
		}
	}
	return extra
}

// ---- sign-in -----------------------------------------------------------------------------------

// BeginAuthorization makes a PKCE pair and a state, stores them as the one pending sign-in
// (replacing any earlier one) and returns the authorize URL to send the browser to. scopes default
// to the Config's. See RFC 6749 §4.1.1, RFC 7636 §4.3.
func (m *Manager) BeginAuthorization(ctx context.Context, scopes ...scope.Scope) (*AuthorizationRequest, error) {
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
	record, err := m.record(text, nil)
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

// record makes the record of a token response; origin is the record a refresh started from.
func (m *Manager) record(text string, origin *tokenRecord) (*tokenRecord, error) {
	fields := parseObject(text)
	if fields == nil {
		return nil, newError(CodeInvalidResponse, "the token response is not a JSON object")
	}
	previous := ""
	if origin != nil {
		previous = origin.RefreshToken
	}
	record, err := tokenFields(fields, previous)
	if err != nil {
		return nil, err
	}
	record.ReceivedAt = math.Round(m.nowMs())
	record.ID = newState()
	seq := int64(0)
	record.Session = record.ID
	if origin != nil {
		if origin.Session != "" {
			record.Session = origin.Session
		} else {
			record.Session = origin.ID
		}
		seq = origin.seq() + 1
	}
	record.Seq = &seq
	return record, nil
}

// ---- tokens ------------------------------------------------------------------------------------

// AccessToken returns a valid access token, refreshing it first (once, however many goroutines
// ask) when it is within the leeway of expiry or was refused (OnUnauthorized). The refresh runs
// under the storage's lock and its protocol; rotated tokens are written before they are handed out.
// ctx bounds this caller's wait; the refresh itself goes on for the other callers.
// Errors: NOT_SIGNED_IN, SESSION_ENDED (tokens cleared), TRANSIENT (tokens kept), OAUTH_ERROR,
// INVALID_RESPONSE, STORAGE_FAILED, LOCK_TIMEOUT. See RFC 6749 §6; RFC 9700 §4.14.2.
func (m *Manager) AccessToken(ctx context.Context) (string, error) {
	if token := m.fastToken(); token != "" {
		return token, nil
	}
	m.mu.Lock()
	f := m.flight
	if f == nil {
		f = &flight{done: make(chan struct{})}
		m.flight = f
		go m.fly(context.WithoutCancel(ctx), f)
	}
	m.mu.Unlock()
	select {
	case <-f.done:
		return f.token, f.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (m *Manager) fly(ctx context.Context, f *flight) {
	f.token, f.err = m.flyOnce(ctx)
	m.mu.Lock()
	m.flight = nil
	m.mu.Unlock()
	close(f.done)
}

// OnUnauthorized marks the current access token unusable when it equals rejected (an API answered
// 401), so that the next AccessToken re-reads the storage and, unless it holds another token,
// refreshes. No I/O. See RFC 6750 §3.1.
func (m *Manager) OnUnauthorized(rejected string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.current != nil && m.current.AccessToken == rejected {
		m.rejected = rejected
		m.setCurrent(nil)
	}
}

func (m *Manager) fastToken() string {
	m.mu.Lock()
	current, unsaved, after := m.current, m.unsaved, m.retryWriteAfter
	m.mu.Unlock()
	if current == nil || !m.fresh(current) {
		return ""
	}
	if unsaved == nil || (current == unsaved && m.nowMs() < after) {
		return current.AccessToken
	}
	return ""
}

func (m *Manager) heldUnsaved() *tokenRecord {
	m.mu.Lock()
	unsaved, current := m.unsaved, m.current
	m.mu.Unlock()
	if unsaved != nil && current == unsaved && m.fresh(unsaved) {
		return unsaved
	}
	return nil
}

func (m *Manager) flyOnce(ctx context.Context) (string, error) {
	held := m.heldUnsaved()
	if stored := m.readFirst(ctx); stored != nil {
		return stored.AccessToken, nil
	}
	m.log.Debug("waiting for the refresh lock")
	token, err := m.underLock(ctx)
	if err == nil || held == nil {
		return token, err
	}
	return m.serveUnsaved(err, held)
}

// serveUnsaved: tokens whose write failed and that are still fresh, when retrying the write cannot
// even run: the tenant holds them as current, so they stay in use.
func (m *Manager) serveUnsaved(err error, held *tokenRecord) (string, error) {
	m.mu.Lock()
	still := m.current == held && m.unsaved == held
	m.mu.Unlock()
	if !still || !m.fresh(held) {
		return "", err
	}
	failure := m.storageFailed(err)
	m.mu.Lock()
	m.retryWriteAfter = m.nowMs() + float64(unsavedRetry.Milliseconds())
	m.mu.Unlock()
	m.log.Warn("the tokens could not be written again (storage or lock unavailable); they stay in use")
	m.emit(Event{Kind: EventStorageFailed, Err: failure})
	m.retryWriteLater()
	return held.AccessToken, nil
}

// readFirst: where processes share the storage, fresh tokens another process stored are read
// without the lock (nil when the lock must be taken: they must be refreshed, ours wait to be written,
// or nothing is stored). The same record read under the lock would be used as it is.
func (m *Manager) readFirst(ctx context.Context) *tokenRecord {
	m.mu.Lock()
	unsaved := m.unsaved
	m.mu.Unlock()
	if !m.intents || unsaved != nil {
		return nil
	}
	stored := m.freshInStorage(ctx)
	if stored != nil {
		m.log.Debug("fresh tokens in storage; no lock needed")
	}
	return stored
}

// freshInStorage is the stored record when it is usable as it is (fresh, not refused, no unsaved
// record of ours, no sign-in or sign-out meanwhile), made current; else nil. Read errors are nil:
// the lock is taken and reports them.
func (m *Manager) freshInStorage(ctx context.Context) *tokenRecord {
	m.mu.Lock()
	before := m.generation
	m.mu.Unlock()
	raw, present, err := m.storage.Get(ctx, m.tokensKey)
	if err != nil {
		return nil
	}
	stored := parseRecord(raw, present)
	m.mu.Lock()
	defer m.mu.Unlock()
	if stored == nil || before != m.generation || m.unsaved != nil || !m.fresh(stored) || stored.AccessToken == m.rejected {
		return nil
	}
	m.setCurrent(stored)
	return stored
}

var errLockLost = errors.New("the refresh lock was taken over before the refresh left")

type intentPending struct {
	recordID string
	intent   *intentRecord
}

func (p *intentPending) Error() string { return "waiting for the refresh by " + p.intent.describe() }

type waited struct {
	holder string
	since  time.Time
}

// underLock runs obtain under the refresh lock; the lock taken again when it was found lost before
// a refresh left, and let go while another process's refresh intent is honoured.
func (m *Manager) underLock(ctx context.Context) (string, error) {
	tries := 0
	var wait *waited
	for {
		var token string
		task := func(ctx context.Context, held Held) error {
			var err error
			token, err = m.obtain(ctx, held, false, wait)
			return err
		}
		var found *tokenRecord
		var err error
		if waiting, ok := m.lock.(WaitingLock); ok && m.intents {
			// Each wake of the wait re-reads the storage; it ends once another process stored fresh tokens.
			err = waiting.DoUntil(ctx, m.lockName, func(ctx context.Context) bool {
				found = m.freshInStorage(ctx)
				return found != nil
			}, task)
		} else {
			err = m.lock.Do(ctx, m.lockName, task)
		}
		if err == nil {
			return token, nil
		}
		if errors.Is(err, ErrLockWaitEnded) && found != nil {
			m.log.Debug("fresh tokens stored by another process while waiting for the lock")
			return found.AccessToken, nil
		}
		var pending *intentPending
		switch {
		case errors.Is(err, errLockLost):
			tries++
			m.log.Warn("the refresh lock was taken over while this process held it (paused?); nothing was sent; taking the lock again")
			if tries >= lockTries {
				return "", transientError(0, 0, false, 0, nil)
			}
		case errors.As(err, &pending):
			if wait == nil || wait.holder != pending.intent.Holder {
				wait = &waited{holder: pending.intent.Holder, since: time.Now()}
				m.log.Info("waiting for the refresh with the same refresh token to be stored", "holder", pending.intent.describe())
			}
			for !m.intentSettled(ctx, pending, wait) {
				select {
				case <-time.After(intentPoll):
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}
		default:
			return "", err
		}
	}
}

func (m *Manager) load(ctx context.Context) (*tokenRecord, error) {
	raw, present, err := m.storage.Get(ctx, m.tokensKey)
	if err != nil {
		return nil, m.loadFailed(err)
	}
	return m.parseStored(raw, present)
}

func (m *Manager) loadFailed(err error) error {
	var own *Error
	if errors.As(err, &own) && own.reset {
		cause := scrub(err, m.known())
		m.reportUnreadable(cause.Error(), cause)
		return &Error{Code: CodeNotSignedIn, Message: "the stored tokens were unreadable (see cause)", Err: cause}
	}
	return m.storageFailed(err)
}

func (m *Manager) parseStored(raw string, present bool) (*tokenRecord, error) {
	record := parseRecord(raw, present)
	if record == nil && present {
		what := "the value under " + m.tokensKey + " is not a token record; signing in replaces it"
		m.reportUnreadable(what, nil)
		return nil, newError(CodeNotSignedIn, "the stored tokens are unreadable: %s", what)
	}
	return record, nil
}

func (m *Manager) reportUnreadable(what string, cause error) {
	m.log.Warn("the stored tokens were unreadable", "why", what)
	m.emit(Event{Kind: EventStorageFailed, Err: &Error{Code: CodeStorageFailed, Message: "the stored tokens were unreadable: " + what, Err: cause}})
}

func (m *Manager) storageFailed(err error, secrets ...string) *Error {
	var own *Error
	if errors.As(err, &own) && (own.Code == CodeLockTimeout || own.Code == CodeStorageFailed) && own == err {
		return own
	}
	return &Error{Code: CodeStorageFailed, Message: "the token storage failed (see cause)", Err: scrub(err, m.known(secrets...))}
}

// obtain runs under the lock: re-reads the storage, and refreshes only if what it finds is not
// usable and no other process's live refresh intent names its refresh token.
func (m *Manager) obtain(ctx context.Context, held Held, again bool, wait *waited) (string, error) {
	m.log.Debug("refresh lock taken; reading the tokens from storage")
	m.mu.Lock()
	unsaved := m.unsaved
	m.mu.Unlock()
	var stored *tokenRecord
	if unsaved != nil {
		loaded, err := m.load(ctx)
		if err != nil {
			loaded = nil
		}
		if loaded != nil && supersedes(loaded, unsaved) {
			m.mu.Lock()
			if m.unsaved == unsaved {
				m.unsaved = nil
			}
			m.mu.Unlock()
			stored = loaded
		} else {
			m.commitOrReport(ctx, unsaved)
			stored = unsaved
			if err := m.refuseUnwritten(unsaved); err != nil {
				return "", err
			}
		}
		m.mu.Lock()
		written, own := m.unsaved == nil, m.ownIntent
		m.mu.Unlock()
		if written {
			m.dropIntent(ctx, own)
		}
	} else {
		var err error
		if stored, err = m.load(ctx); err != nil {
			return "", err
		}
	}
	if stored == nil {
		return "", newError(CodeNotSignedIn, "there are no tokens; sign in first")
	}
	m.mu.Lock()
	rejected, stillUnsaved := m.rejected, m.unsaved
	m.mu.Unlock()
	if !m.fresh(stored) || stored.AccessToken == rejected {
		if m.intents && stored != stillUnsaved {
			if intent := m.readIntent(ctx); intent != nil && m.mustWaitFor(intent, stored, wait) {
				return "", &intentPending{recordID: stored.ID, intent: intent}
			}
		}
		return m.refresh(ctx, held, stored, again)
	}
	m.mu.Lock()
	m.setCurrent(stored)
	m.mu.Unlock()
	return stored.AccessToken, nil
}

// refuseUnwritten: never refresh from tokens that are not stored: once tokens whose write failed
// need a refresh and their write failed again, STORAGE_FAILED at once, nothing sent.
func (m *Manager) refuseUnwritten(unsaved *tokenRecord) error {
	m.mu.Lock()
	still, rejected, failure := m.unsaved == unsaved, m.rejected, m.writeFailure
	m.mu.Unlock()
	if still && (!m.fresh(unsaved) || unsaved.AccessToken == rejected) {
		var cause error
		if failure != nil {
			cause = failure.Err
		}
		return &Error{Code: CodeStorageFailed, Message: "the refreshed tokens cannot be written, so they are not refreshed again until they are", Err: cause}
	}
	return nil
}

func (m *Manager) readIntent(ctx context.Context) *intentRecord {
	raw, present, err := m.storage.Get(ctx, m.intentKey)
	if err != nil {
		return nil
	}
	return parseIntent(raw, present)
}

// mustWaitFor: whether intent is another process's refresh with stored's refresh token, still to be
// waited for: not ours, its holder not known to have exited, younger than the intent wait and not
// waited on that long.
func (m *Manager) mustWaitFor(intent *intentRecord, stored *tokenRecord, wait *waited) bool {
	if intent.Fingerprint != fingerprint(stored.RefreshToken) {
		return false
	}
	m.mu.Lock()
	own := m.ownIntent
	m.mu.Unlock()
	if own != nil && own.Holder == intent.Holder {
		return false
	}
	if intent.Pid != 0 && intent.Host != "" && procid.IsGone(intent.Host, intent.Pid) {
		m.log.Warn("the refresh intent on this refresh token was left by a process that has exited; presenting the token", "holder", intent.describe())
		return false
	}
	age := m.nowMs() - intent.Since
	var soFar time.Duration
	if wait != nil && wait.holder == intent.Holder {
		soFar = time.Since(wait.since)
	}
	if age >= float64(m.o.intentWait.Milliseconds()) || soFar >= m.o.intentWait {
		m.log.Warn("the refresh with this refresh token was not stored within the intent wait; presenting the token", "holder", intent.describe(), "intent_wait", m.o.intentWait)
		return false
	}
	return true
}

// intentSettled: one look at the storage while honouring pending: true once there is something to
// decide again on.
func (m *Manager) intentSettled(ctx context.Context, pending *intentPending, wait *waited) bool {
	if time.Since(wait.since) >= m.o.intentWait {
		return true
	}
	raw, present, err := m.storage.Get(ctx, m.tokensKey)
	if err != nil {
		return true
	}
	rawIntent, presentIntent, err := m.storage.Get(ctx, m.intentKey)
	if err != nil {
		return true
	}
	latest, intent := parseRecord(raw, present), parseIntent(rawIntent, presentIntent)
	if latest == nil || latest.ID != pending.recordID || intent == nil || intent.Holder != pending.intent.Holder {
		return true
	}
	gone := intent.Pid != 0 && intent.Host != "" && procid.IsGone(intent.Host, intent.Pid)
	return gone || m.nowMs()-intent.Since >= float64(m.o.intentWait.Milliseconds())
}

func (m *Manager) writeIntent(ctx context.Context, held Held, stored *tokenRecord) (*intentRecord, error) {
	if !m.intents {
		return nil, nil
	}
	if !held.IsHeld(ctx) {
		return nil, errLockLost
	}
	intent := &intentRecord{Fingerprint: fingerprint(stored.RefreshToken), Holder: newState(),
		Since: math.Round(m.nowMs()), Pid: procid.Pid(), Host: procid.Host()}
	if err := m.storage.Set(ctx, m.intentKey, marshal(intent)); err != nil {
		m.log.Warn("the refresh intent could not be stored; refreshing under the lock alone")
		return nil, nil
	}
	m.mu.Lock()
	m.ownIntent = intent
	m.mu.Unlock()
	return intent, nil
}

// dropIntent deletes the stored intent if it is still ours. A failure leaves it behind: it holds
// the others back for at most the intent wait.
func (m *Manager) dropIntent(ctx context.Context, intent *intentRecord) {
	if intent == nil {
		return
	}
	m.mu.Lock()
	if m.ownIntent == intent {
		m.ownIntent = nil
	}
	m.mu.Unlock()
	if current := m.readIntent(ctx); current != nil && current.Holder == intent.Holder {
		_ = m.storage.Delete(ctx, m.intentKey)
	}
}

// checkBeforeSending: the last checks, right before a refresh request leaves: the stored record is
// still the one read (else changed is true), and the lock still ours (else errLockLost).
func (m *Manager) checkBeforeSending(ctx context.Context, held Held, stored *tokenRecord, intent *intentRecord) (changed bool, err error) {
	m.mu.Lock()
	unsaved := m.unsaved
	m.mu.Unlock()
	if stored != unsaved {
		latest, err := m.load(ctx)
		if err != nil {
			m.dropIntent(ctx, intent)
			return false, err
		}
		if latest == nil || latest.ID != stored.ID {
			m.dropIntent(ctx, intent)
			m.log.Info("the stored tokens changed before the refresh left; using them")
			return true, nil
		}
	}
	if !held.IsHeld(ctx) {
		m.dropIntent(ctx, intent)
		return false, errLockLost
	}
	return false, nil
}

func (m *Manager) refresh(ctx context.Context, held Held, stored *tokenRecord, again bool) (string, error) {
	m.mu.Lock()
	generation := m.generation
	m.mu.Unlock()
	intent, err := m.writeIntent(ctx, held, stored)
	if err != nil {
		return "", err
	}
	m.log.Info("refresh started")
	clientID := m.clientID
	body := marshal(api.RefreshTokenGrantRequest{GrantType: api.RefreshTokenGrantRequestGrantTypeRefreshToken,
		RefreshToken: stored.RefreshToken, ClientId: &clientID})
	secrets := []string{stored.AccessToken, stored.RefreshToken}
	var record *tokenRecord
	for attempt := 1; ; attempt++ {
		if m.intents {
			changed, err := m.checkBeforeSending(ctx, held, stored, intent)
			if err != nil {
				return "", err
			}
			if changed {
				return m.obtain(ctx, held, again, nil)
			}
		}
		text, err := m.post(ctx, "/oauth/token", body, "application/json", secrets, attempt)
		if err == nil {
			record, err = m.record(text, stored)
		}
		if err == nil {
			break
		}
		var failure *Error
		if !errors.As(err, &failure) {
			m.dropIntent(ctx, intent)
			return "", err
		}
		switch failure.Code {
		case CodeTransient:
			delay, retry := m.retryWait(failure, attempt)
			if !retry {
				m.dropIntent(ctx, intent)
				return "", err
			}
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				m.dropIntent(ctx, intent)
				return "", ctx.Err()
			}
		case CodeOAuthError:
			m.dropIntent(ctx, intent)
			if failure.OAuthError != "invalid_grant" {
				return "", err
			}
			return m.afterInvalidGrant(ctx, held, failure, stored, again, generation)
		default:
			m.dropIntent(ctx, intent)
			return "", err
		}
	}
	m.mu.Lock()
	moved := generation != m.generation
	m.mu.Unlock()
	if moved {
		m.dropIntent(ctx, intent)
		return "", newError(CodeNotSignedIn, "signed in or out while the refresh ran; its tokens are dropped")
	}
	if info, ok := m.commitOrReport(ctx, record); ok {
		// Stored: the intent has done its job. Kept while the write fails, so that the others do not
		// present the old token while this process writes the new one again.
		m.dropIntent(ctx, intent)
		m.log.Info("refresh finished", "expires_at", info.ExpiresAt)
		m.emit(Event{Kind: EventTokensRefreshed, Session: &info})
	} else {
		m.log.Warn("refresh finished, but the tokens could not be stored; the write is retried later")
	}
	return record.AccessToken, nil
}

func (m *Manager) afterInvalidGrant(ctx context.Context, held Held, failure *Error, stored *tokenRecord, again bool, generation int) (string, error) {
	// Another process may have rotated the token meanwhile: try the newest one once before giving up.
	if !again {
		latest, err := m.load(ctx)
		if err != nil && !errors.Is(err, ErrNotSignedIn) {
			return "", err
		}
		if latest != nil && latest.RefreshToken != stored.RefreshToken {
			return m.obtain(ctx, held, true, nil)
		}
	}
	ended := *failure
	ended.Code = CodeSessionEnded
	m.mu.Lock()
	same := generation == m.generation
	m.mu.Unlock()
	if same {
		m.log.Warn("session ended (invalid_grant)")
		_ = m.clear(ctx)
		m.emit(Event{Kind: EventSessionEnded, Err: &ended})
	}
	return "", &ended
}

func (m *Manager) retryWait(failure *Error, attempt int) (time.Duration, bool) {
	if failure.sent || attempt >= m.o.attempts {
		return 0, false
	}
	why := "no connection"
	if failure.Status != 0 {
		why = fmt.Sprintf("HTTP %d", failure.Status)
	}
	delay := m.o.retryDelay * time.Duration(1<<(attempt-1))
	if failure.RetryAfter > 0 {
		if failure.RetryAfter > maxRetryDelay {
			m.log.Warn("refresh attempt failed; Retry-After too long, not retried", "attempt", attempt, "why", why, "retry_after", failure.RetryAfter)
			return 0, false
		}
		delay = failure.RetryAfter
	}
	delay = min(delay, maxRetryDelay)
	m.log.Warn("refresh attempt failed; retrying", "attempt", attempt, "why", why, "delay", delay)
	return delay, true
}

// commit persists the tokens and makes them current. When the write fails they are current all the
// same (kept as unsaved) and STORAGE_FAILED is returned.
func (m *Manager) commit(ctx context.Context, record *tokenRecord) (SessionInfo, error) {
	m.mu.Lock()
	m.setCurrent(record)
	m.unsaved = record
	m.mu.Unlock()
	if err := m.storage.Set(ctx, m.tokensKey, record.serialize()); err != nil {
		return SessionInfo{}, m.storageFailed(err)
	}
	m.mu.Lock()
	if m.unsaved == record {
		m.unsaved = nil
	}
	m.mu.Unlock()
	return m.info(record), nil
}

func (m *Manager) commitOrReport(ctx context.Context, record *tokenRecord) (SessionInfo, bool) {
	info, err := m.commit(ctx, record)
	if err == nil {
		return info, true
	}
	failure, _ := err.(*Error)
	m.mu.Lock()
	m.writeFailure = failure
	m.retryWriteAfter = m.nowMs() + float64(unsavedRetry.Milliseconds())
	m.mu.Unlock()
	m.emit(Event{Kind: EventStorageFailed, Err: err})
	m.retryWriteLater()
	return SessionInfo{}, false
}

// retryWriteLater: after a failed write of fresh tokens on a shared storage, tries it again in a
// second even if no call comes (the others, honouring this process's intent, wait for it).
func (m *Manager) retryWriteLater() {
	if !m.intents {
		return
	}
	time.AfterFunc(unsavedRetry+10*time.Millisecond, func() {
		if m.heldUnsaved() != nil {
			_, _ = m.AccessToken(context.Background())
		}
	})
}

func (m *Manager) clear(ctx context.Context) error {
	m.mu.Lock()
	m.generation++
	m.setCurrent(nil)
	m.unsaved = nil
	m.mu.Unlock()
	if err := m.storage.Delete(ctx, m.tokensKey); err != nil {
		return m.storageFailed(err)
	}
	return nil
}

// ---- session -----------------------------------------------------------------------------------

// Session returns the session's expiry and scope from the storage, with no request; ok is false
// without tokens. Errors: STORAGE_FAILED.
func (m *Manager) Session(ctx context.Context) (info SessionInfo, ok bool, err error) {
	m.mu.Lock()
	unsaved := m.unsaved
	m.mu.Unlock()
	if unsaved != nil {
		return m.info(unsaved), true, nil
	}
	record, err := m.load(ctx)
	if errors.Is(err, ErrNotSignedIn) {
		return SessionInfo{}, false, nil
	}
	if err != nil || record == nil {
		return SessionInfo{}, false, err
	}
	return m.info(record), true, nil
}

// IsSignedIn reports whether the storage holds tokens (perhaps expired: a refresh may still work).
func (m *Manager) IsSignedIn(ctx context.Context) (bool, error) {
	_, ok, err := m.Session(ctx)
	return ok, err
}

// Revoke revokes the current access token at POST /oauth/revoke (a form body with client_id, RFC
// 7009 §2.1), which disconnects the integration, then clears the tokens. An expired access token is
// refreshed first; without a session it only clears. On failure the tokens are kept.
func (m *Manager) Revoke(ctx context.Context) error {
	token, err := m.AccessToken(ctx)
	if errors.Is(err, ErrNotSignedIn) || errors.Is(err, ErrSessionEnded) {
		return m.SignOut(ctx)
	}
	if err != nil {
		return err
	}
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}, "client_id": {m.clientID}}
	if _, err := m.post(ctx, "/oauth/revoke", form.Encode(), "application/x-www-form-urlencoded", []string{token}, 1); err != nil {
		return err
	}
	if err := m.clear(ctx); err != nil {
		return err
	}
	m.log.Info("revoked")
	m.emit(Event{Kind: EventRevoked})
	m.emit(Event{Kind: EventSignedOut, Revoked: true})
	return nil
}

// SignOut forgets the tokens locally (deletes them from the storage), with no request.
func (m *Manager) SignOut(ctx context.Context) error {
	if err := m.clear(ctx); err != nil {
		return err
	}
	m.emit(Event{Kind: EventSignedOut})
	return nil
}
