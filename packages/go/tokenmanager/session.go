package tokenmanager

// The session as stored: reading and writing the token record, its expiry and scope, a 401's mark,
// signing out (the TypeScript kit's session.ts).

import (
	"context"
	"errors"
	"math"
	"time"
)

// SessionInfo tells about a session without any token.
type SessionInfo struct {
	// ExpiresAt is when the access token expires (local receive time + expires_in).
	ExpiresAt time.Time
	// Scope is the granted scope as the tenant returned it, "" when it returned none.
	Scope string
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

// OnUnauthorized marks the current access token unusable when it equals rejected (an API answered
// 401), so that the next AccessToken re-reads the storage and, unless it holds another token,
// refreshes. No I/O. Assumption (not in the service description, which shows no status for an
// expired or revoked token): the API answers such a token 401 with invalid_token (RFC 6750 §3.1).
func (m *Manager) OnUnauthorized(rejected string) {
	if m.made() != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.current != nil && m.current.AccessToken == rejected {
		m.rejected = rejected
		m.setCurrent(nil)
	}
}

func (m *Manager) load(ctx context.Context) (*tokenRecord, error) {
	raw, present, err := m.get(ctx, m.tokensKey)
	if err != nil {
		return nil, m.loadFailed(err)
	}
	return m.parseStored(raw, present)
}

func (m *Manager) loadFailed(err error) error {
	if setAside(err) {
		cause := scrub(err, m.known())
		m.reportUnreadable(cause.Error(), cause)
		// Path and MovedTo are the storage's: where the file was, and where it went.
		var storage *Error
		errors.As(err, &storage)
		return &Error{Code: CodeNotSignedIn, Message: "the stored tokens were unreadable", Err: cause,
			Path: storage.Path, MovedTo: storage.MovedTo}
	}
	return m.storageFailed(err)
}

func (m *Manager) parseStored(raw string, present bool) (*tokenRecord, error) {
	record := parseRecord(raw, present)
	if record == nil && present {
		what := "the value under " + m.where(m.tokensKey) + " is not a token record; signing in replaces it"
		m.reportUnreadable(what, nil)
		return nil, newError(CodeNotSignedIn, "the stored tokens are unreadable: %s", what)
	}
	return record, nil
}

func (m *Manager) reportUnreadable(what string, cause error) {
	m.log.Warn("the stored tokens were unreadable", "why", what)
	m.emit(Event{Kind: EventStorageFailed, Err: &Error{Code: CodeStorageFailed, Message: "the stored tokens were unreadable: " + what, Err: cause}})
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

func (m *Manager) clear(ctx context.Context) error {
	m.mu.Lock()
	m.generation++
	m.setCurrent(nil)
	m.unsaved = nil
	m.mu.Unlock()
	// Signed out: this process's intent is beaten no more (a waiter's watch gives it up).
	m.stopBeats()
	if err := m.storage.Delete(ctx, m.tokensKey); err != nil {
		return m.storageFailed(err)
	}
	return nil
}

// Close stops the manager's background work: the beats of its refresh intent (spec/token-store,
// "Paused processes", step 4) and the retried write of tokens whose write failed. The intent stays
// stored: another process gives it up once it has watched it for the intent wait without a beat.
// Close the manager once its calls are done; the HTTP client (WithHTTPClient) and the storage stay
// the caller's to close. It always returns nil (io.Closer).
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.stopBeats()
	return nil
}

// Session returns the session's expiry and scope from the storage, with no request; ok is false
// without tokens. Errors: STORAGE_FAILED.
func (m *Manager) Session(ctx context.Context) (info SessionInfo, ok bool, err error) {
	if err := m.made(); err != nil {
		return SessionInfo{}, false, err
	}
	defer m.use()()
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

// SignOut forgets the tokens locally (deletes them from the storage), with no request.
func (m *Manager) SignOut(ctx context.Context) error {
	if err := m.made(); err != nil {
		return err
	}
	defer m.use()()
	if err := m.clear(ctx); err != nil {
		return err
	}
	m.emit(Event{Kind: EventSignedOut})
	return nil
}
