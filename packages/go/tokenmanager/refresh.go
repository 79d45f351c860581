package tokenmanager

// AccessToken and the refresh: one flight per process, the storage's lock across processes, the
// re-read under the lock and the refresh request (spec/token-store/README.md; the TypeScript kit's
// refresh.ts, the Python kit's _refresh.py).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tenant-integration/sdk/packages/go/api"
)

// After a failed write of new tokens, how long they are served from memory before the write is
// tried (and a failure reported) again.
const unsavedRetry = time.Second

// Times the lock is taken again after it was found taken over before a refresh left.
const lockTries = 3

// The longest wait before a refresh is sent again; a longer Retry-After is not waited for.
const maxRetryDelay = 10 * time.Second

// AccessToken returns a valid access token, refreshing it first (once, however many goroutines
// ask) when it is within the leeway of expiry or was refused (OnUnauthorized). The refresh runs
// under the storage's lock and its protocol; rotated tokens are written before they are handed out.
// ctx bounds this caller's wait; the refresh itself goes on for the other callers.
// Errors: NOT_SIGNED_IN, SESSION_ENDED (tokens cleared), TRANSIENT (tokens kept), OAUTH_ERROR,
// INVALID_RESPONSE, STORAGE_FAILED, LOCK_TIMEOUT. See RFC 6749 §6; RFC 9700 §4.14.2.
func (m *Manager) AccessToken(ctx context.Context) (string, error) {
	if err := m.made(); err != nil {
		return "", err
	}
	if token := m.fastToken(); token != "" {
		return token, nil
	}
	m.mu.Lock()
	f := m.flight
	if f == nil {
		f = &flight{done: make(chan struct{})}
		m.flight = f
		m.enter() // until the flight lands: a refresh goes on after its callers gave up
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
	m.leave()
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
	if stored, err := m.readFirst(ctx); err != nil || stored != nil {
		if err != nil {
			return "", err
		}
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
// or nothing is stored). The same record read under the lock would be used as it is. Its error is
// the one a storage reports only once (see freshInStorage).
func (m *Manager) readFirst(ctx context.Context) (*tokenRecord, error) {
	m.mu.Lock()
	unsaved := m.unsaved
	m.mu.Unlock()
	if !m.intents || unsaved != nil {
		return nil, nil
	}
	stored, err := m.freshInStorage(ctx)
	if stored != nil {
		m.log.Debug("fresh tokens in storage; no lock needed")
	}
	return stored, err
}

// freshInStorage is the stored record when it is usable as it is (fresh, not refused, no unsaved
// record of ours, no sign-in or sign-out meanwhile), made current; else nil. A failed read is nil
// too (the lock is taken and the read under it reports the failure), except when the storage set
// its unreadable data aside (filestorage's FILE_CORRUPT): no later read meets that again, so it is
// reported here (NOT_SIGNED_IN with the storage's error as its cause, a warning, storage-failed).
func (m *Manager) freshInStorage(ctx context.Context) (*tokenRecord, error) {
	m.mu.Lock()
	before := m.generation
	m.mu.Unlock()
	raw, present, err := m.get(ctx, m.tokensKey)
	if err != nil {
		if setAside(err) {
			return nil, m.loadFailed(err)
		}
		return nil, nil
	}
	stored := parseRecord(raw, present)
	m.mu.Lock()
	defer m.mu.Unlock()
	if stored == nil || before != m.generation || m.unsaved != nil || !m.fresh(stored) || stored.AccessToken == m.rejected {
		return nil, nil
	}
	m.setCurrent(stored)
	return stored, nil
}

var errLockLost = errors.New("the refresh lock was taken over before the refresh left")

// underLock runs obtain under the refresh lock; the lock taken again when it was found lost before
// a refresh left, and let go while another process's refresh intent is honoured.
func (m *Manager) underLock(ctx context.Context) (string, error) {
	tries := 0
	for {
		var token string
		task := func(ctx context.Context, held Held) error {
			var err error
			token, err = m.obtain(ctx, held, false)
			return err
		}
		var found *tokenRecord
		var unreadable, err error
		if waiting, ok := m.lock.(WaitingLock); ok && m.intents {
			// Each wake of the wait re-reads the storage; it ends once another process stored fresh
			// tokens, or the storage set its unreadable data aside.
			err = waiting.DoUntil(ctx, m.lockName, func(ctx context.Context) bool {
				found, unreadable = m.freshInStorage(ctx)
				return found != nil || unreadable != nil
			}, task)
		} else {
			err = m.lock.Do(ctx, m.lockName, task)
		}
		if err == nil {
			return token, nil
		}
		if errors.Is(err, ErrLockWaitEnded) && unreadable != nil {
			return "", unreadable
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
			if err := m.awaitIntent(ctx, pending); err != nil {
				return "", err
			}
		default:
			m.endWatch()
			return "", m.lockFailed(err)
		}
	}
}

// obtain runs under the lock: re-reads the storage, and refreshes only if what it finds is not
// usable and no other process's live refresh intent names its refresh token.
func (m *Manager) obtain(ctx context.Context, held Held, again bool) (string, error) {
	m.log.Debug("refresh lock taken; reading the tokens from storage")
	m.mu.Lock()
	unsaved := m.unsaved
	m.mu.Unlock()
	var stored *tokenRecord
	var err error
	if unsaved != nil {
		stored, err = m.settleUnsaved(ctx, unsaved)
	} else {
		stored, err = m.load(ctx)
	}
	if err != nil {
		return "", err
	}
	if stored == nil {
		return "", newError(CodeNotSignedIn, "there are no tokens; sign in first")
	}
	m.mu.Lock()
	rejected, stillUnsaved := m.rejected, m.unsaved
	m.mu.Unlock()
	if !m.fresh(stored) || stored.AccessToken == rejected {
		if m.intents && stored != stillUnsaved {
			intent, watched, err := m.readIntent(ctx)
			if err != nil {
				return "", m.loadFailed(err)
			}
			if intent != nil && m.mustWaitFor(intent, watched, stored) {
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

// settleUnsaved runs under the lock with tokens whose write failed: the stored record when it
// supersedes them (they are dropped), else they are written again and are the record to use.
// STORAGE_FAILED when they cannot be written and need a refresh (refuseUnwritten).
func (m *Manager) settleUnsaved(ctx context.Context, unsaved *tokenRecord) (*tokenRecord, error) {
	stored := unsaved
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
		if err := m.refuseUnwritten(unsaved); err != nil {
			return nil, err
		}
	}
	m.mu.Lock()
	written, own := m.unsaved == nil, m.ownIntent
	m.mu.Unlock()
	if written {
		m.dropIntent(ctx, own)
	}
	return stored, nil
}

// writeUnsaved writes tokens whose write failed, under the lock, without a refresh: a Sessions
// does so before it drops an idle manager that holds some (it keeps the manager until they are
// written). Nothing happens without such tokens.
func (m *Manager) writeUnsaved(ctx context.Context) {
	m.enter()
	defer m.leave()
	_ = m.lock.Do(ctx, m.lockName, func(ctx context.Context, _ Held) error {
		m.mu.Lock()
		unsaved := m.unsaved
		m.mu.Unlock()
		if unsaved != nil {
			_, _ = m.settleUnsaved(ctx, unsaved)
		}
		return nil
	})
}

// hasUnsaved: tokens whose write failed are held.
func (m *Manager) hasUnsaved() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.unsaved != nil
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
				return m.obtain(ctx, held, again)
			}
		}
		text, err := m.post(ctx, "/oauth/token", body, "application/json", secrets, attempt)
		if err == nil {
			record, err = m.processTokenResponse(text, stored)
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

// afterInvalidGrant: the refresh was refused with invalid_grant. Assumption (not in the service
// description, which shows no OAuth error code): that is RFC 6749 §5.2's answer for a refresh token
// that is invalid, expired or revoked, so the session ends (SESSION_ENDED, tokens cleared), unless
// another process stored a newer refresh token meanwhile.
func (m *Manager) afterInvalidGrant(ctx context.Context, held Held, failure *Error, stored *tokenRecord, again bool, generation int) (string, error) {
	// Another process may have rotated the token meanwhile: try the newest one once before giving up.
	if !again {
		latest, err := m.load(ctx)
		if err != nil && !errors.Is(err, ErrNotSignedIn) {
			return "", err
		}
		if latest != nil && latest.RefreshToken != stored.RefreshToken {
			return m.obtain(ctx, held, true)
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
// second even if no call comes, and again each second while they stay unsaved (fresh, and still this
// process's own): a retry that joined a call begun before it (whose lock release an outage held up)
// wrote nothing, and the others wait for exactly this write (they give the intent up only after
// watching it for the intent wait with the storage answering). One retry scheduled at a time.
func (m *Manager) retryWriteLater() {
	if !m.intents {
		return
	}
	m.mu.Lock()
	scheduled := m.rewriting || m.closed
	m.rewriting = m.rewriting || !m.closed
	m.mu.Unlock()
	if scheduled {
		return
	}
	time.AfterFunc(unsavedRetry+10*time.Millisecond, m.retryWrite)
}

// retryWrite is one retry of retryWriteLater: a call that writes the unsaved tokens, then the next
// retry while they are still unsaved. A call it joined that tried no write in the last second (one
// begun before it, whose lock release an outage held up) is followed by its own call at once: the
// others' watch of this process's intent counts from the storage's first answer.
func (m *Manager) retryWrite() {
	m.mu.Lock()
	m.rewriting = false
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return
	}
	for range 2 {
		held := m.heldUnsaved()
		if held == nil {
			return
		}
		_, _ = m.AccessToken(context.Background())
		m.mu.Lock()
		still := m.unsaved == held && m.current == held
		tried := m.nowMs() < m.retryWriteAfter // a write failed within the last second
		m.mu.Unlock()
		if !still {
			return
		}
		if tried {
			break
		}
	}
	m.retryWriteLater()
}
