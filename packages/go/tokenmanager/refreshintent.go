package tokenmanager

// The refresh intent (spec/token-store/README.md, "Paused processes"; the format is
// spec/token-store/intent-record.schema.json): stored right before a refresh request leaves and
// deleted once its outcome is stored, it says which refresh token (a SHA-256 fingerprint, never the
// token) is being presented, by which refresh, since when, and the holder's pid and host. A process
// about to present the same token waits for it, outside the lock. The TypeScript kit's
// refresh-intent.ts, the Python kit's _refresh_intent.py.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"sync"
	"time"

	"github.com/tenant-integration/sdk/packages/go/internal/procid"
)

// How often a process that honours another's refresh intent reads the storage again.
const intentPoll = 50 * time.Millisecond

// watchGap: two successive successful reads of an intent further apart than this (on the monotonic
// clock) end its watch: this process was paused, or was not asking, in between.
const watchGap = time.Second

type intentPending struct {
	recordID string
	intent   *intentRecord
}

func (p *intentPending) Error() string { return "waiting for the refresh by " + p.intent.describe() }

// intentWatch is this process's watch of one refresh intent (spec/token-store/README.md, "Paused
// processes", step 2): it starts at the first read that finds the intent and lasts while every read
// of the storage succeeds and successive reads of the intent are at most watchGap apart. Only a
// watch as long as the intent wait gives up on a holder that may be alive: the intent's age would
// count a storage outage as if the holder had been watched.
type intentWatch struct {
	holder        string
	since         float64   // the intent's since at the last read: a different one is a beat (D7)
	started, last time.Time // monotonic
}

// get reads key from the token storage. Every read of the manager goes through it: a read that
// fails (an outage, a hung server, a command timeout, an I/O error) ends the watch of any intent.
func (m *Manager) get(ctx context.Context, key string) (string, bool, error) {
	raw, present, err := m.storage.Get(ctx, key)
	if err != nil {
		m.endWatch()
	}
	return raw, present, err
}

// endWatch ends the watch of any intent: a read of the storage failed, or the call failed (the lock
// could not be taken).
func (m *Manager) endWatch() {
	m.mu.Lock()
	m.watch = nil
	m.mu.Unlock()
}

// readIntent reads the refresh intent (nil: none, or not a valid record) and counts the read in the
// watch: watched is how long this process has now watched that intent without a break. A read that
// fails is an error (a value of another Redis type under the key, another application's data, is
// COMMAND_FAILED: the refresh fails, and nothing overwrites it). A value that is no intent record
// reads as absent (spec/token-store), with one warning naming the key; the next intent replaces it.
func (m *Manager) readIntent(ctx context.Context) (intent *intentRecord, watched time.Duration, err error) {
	raw, present, err := m.get(ctx, m.intentKey)
	if err != nil {
		return nil, 0, err
	}
	intent = parseIntent(raw, present)
	if intent == nil && present {
		m.warnForeignIntent(raw)
	}
	return intent, m.watchIntent(intent), nil
}

// warnForeignIntent warns, once per value, that the value under the intent key is no intent record.
func (m *Manager) warnForeignIntent(raw string) {
	m.mu.Lock()
	warned := m.foreignIntent == raw
	m.foreignIntent = raw
	m.mu.Unlock()
	if !warned {
		m.log.Warn("the value under " + m.where(m.intentKey) + " is not a refresh intent record (this kit did not write it); it reads as no intent, and the next refresh intent replaces it")
	}
}

// watchIntent counts a successful read that found intent (nil: none) in the watch, and returns how
// long the watch of that intent has lasted: zero when this read starts it (a new holder, more than
// watchGap since the last read of it, or a beat: the same holder with another since, D7).
func (m *Manager) watchIntent(intent *intentRecord) time.Duration {
	now := m.monotonic()
	m.mu.Lock()
	defer m.mu.Unlock()
	if intent == nil {
		m.watch = nil
		return 0
	}
	watch := m.watch
	if watch == nil || watch.holder != intent.Holder || now.Sub(watch.last) > watchGap {
		if watch != nil && watch.holder == intent.Holder {
			m.log.Info("the watch of the refresh intent restarts: the storage was not read for more than a second", "holder", intent.describe())
		}
		watch = &intentWatch{holder: intent.Holder, started: now}
		m.watch = watch
	} else if watch.since != intent.Since {
		m.log.Debug("the holder of the refresh intent beat: it lives, and the watch restarts", "holder", intent.describe())
		watch.started = now
	}
	watch.since, watch.last = intent.Since, now
	return now.Sub(watch.started)
}

// mustWaitFor: whether intent is another process's live refresh with stored's refresh token, to be
// waited for. It is live unless it is ours, its holder is a process of this host that has exited, or
// this process has watched it (watched) for the intent wait without a break. Its since is logged,
// never used to give up: its age measures a storage outage as well as the holder.
func (m *Manager) mustWaitFor(intent *intentRecord, watched time.Duration, stored *tokenRecord) bool {
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
	age := time.Duration(m.nowMs()-intent.Since) * time.Millisecond
	if watched >= m.o.intentWait {
		m.log.Warn("the refresh with this refresh token was not stored while this process watched it for the intent wait; presenting the token",
			"holder", intent.describe(), "watched", watched, "intent_age", age, "intent_wait", m.o.intentWait)
		return false
	}
	if watched == 0 {
		m.log.Info("waiting for the refresh with the same refresh token to be stored", "holder", intent.describe(), "intent_age", age)
	}
	return true
}

// awaitIntent waits outside the lock (the intent's holder may need it to write its tokens back),
// reading the storage every intentPoll, until there is something to decide again on. A read that
// fails ends the watch and the wait: the call fails with the storage's error.
func (m *Manager) awaitIntent(ctx context.Context, pending *intentPending) error {
	for {
		settled, err := m.intentSettled(ctx, pending)
		if err != nil || settled {
			return err
		}
		select {
		case <-time.After(intentPoll):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// intentSettled: one look at the storage while honouring pending: true once the tokens or the
// intent changed, its holder exited, or this process has watched it for the intent wait.
func (m *Manager) intentSettled(ctx context.Context, pending *intentPending) (bool, error) {
	raw, present, err := m.get(ctx, m.tokensKey)
	if err != nil {
		return false, m.loadFailed(err)
	}
	intent, watched, err := m.readIntent(ctx)
	if err != nil {
		return false, m.loadFailed(err)
	}
	latest := parseRecord(raw, present)
	if latest == nil || latest.ID != pending.recordID || intent == nil || intent.Holder != pending.intent.Holder {
		return true, nil
	}
	gone := intent.Pid != 0 && intent.Host != "" && procid.IsGone(intent.Host, intent.Pid)
	return gone || watched >= m.o.intentWait, nil
}

// intentUnwritable is the message of a refresh refused because its intent could not be written
// (D6), the same in every kit: "STORAGE_FAILED: the refresh intent could not be written (<why>), so
// the refresh was not sent; the stored tokens are unchanged and the next call tries again". In Go
// <why> is the cause's Error(), its code and chain included as Go's errors print them (the other kits
// quote the cause's message alone; the cause stays reachable by errors.As in every kit).
func intentUnwritable(why string) string {
	return "the refresh intent could not be written (" + why + "), so the refresh was not sent; the stored tokens are unchanged and the next call tries again"
}

// writeIntent checks the lock is still held (step 3) and stores this refresh's intent (step 4).
// No intent, no send (D6): an intent the storage did not confirm (any error, a command timeout) is
// STORAGE_FAILED saying so and why, and nothing is sent.
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
		// No intent, no send (D6): under the lock alone, a rotation whose tokens could not be
		// written either would be known only to this process, and another, finding no intent,
		// would present the rotated-away token. An intent the storage may still apply later is
		// deleted again where it can be.
		m.log.Warn("the refresh intent could not be stored; the refresh is not sent (no intent, no send), and the next call tries again")
		m.dropIntent(ctx, intent)
		cause := scrub(err, m.known(stored.AccessToken, stored.RefreshToken))
		return nil, &Error{Code: CodeStorageFailed, Message: intentUnwritable(cause.Error()), Err: cause}
	}
	m.mu.Lock()
	m.ownIntent = intent
	m.mu.Unlock()
	m.startBeats(intent)
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
	beat := intent.beat
	intent.beat = nil
	m.mu.Unlock()
	beat.halt()
	if current, _, err := m.readIntent(ctx); err == nil && current != nil && current.Holder == intent.Holder {
		_ = m.storage.Delete(ctx, m.intentKey)
	}
}

// intentBeat is the beat of this process's own stored intent (D7; spec/token-store/README.md,
// "Paused processes"): from the moment the intent is stored until it is deleted, the holder rewrites
// it every min(1 s, intent wait / 4) with a new since, so that a waiter, whose watch restarts at each
// beat, waits for a holder that lives however slowly the tenant answers. The beats go on while the
// request is in flight, during retry pauses and while unsaved tokens are written again.
type intentBeat struct {
	stop   chan struct{}      // closed by halt
	ctx    context.Context    // a beat's read: cancelled by halt, so that no read is waited for
	cancel context.CancelFunc //
	once   sync.Once          //
	// writing is held while a beat's write is sent; halted is set under it: once halt returns, no
	// beat's write is under way or will be sent.
	writing sync.Mutex
	halted  bool
}

// halt stops the beats without waiting for a beat's read under way (its storage command may hang
// for the storage's whole command timeout: a Redis node that stopped answering; its context is
// cancelled, and it writes nothing once it answers). A beat's write under way is waited for, so that
// none lands after the intent's delete. A nil beat is none.
func (b *intentBeat) halt() {
	if b == nil {
		return
	}
	b.once.Do(func() {
		close(b.stop)
		b.cancel()
	})
	b.writing.Lock()
	b.halted = true
	b.writing.Unlock()
}

// beatInterval is how often a holder rewrites its intent: min(1 s, intent wait / 4), and at least
// 1 ms (as the TypeScript kit's), so that an intent wait of a few nanoseconds never makes a ticker
// of zero, which would panic.
func (m *Manager) beatInterval() time.Duration {
	return max(time.Millisecond, min(time.Second, m.o.intentWait/4))
}

// startBeats starts the beats of intent, just stored by this process.
func (m *Manager) startBeats(intent *intentRecord) {
	ctx, cancel := context.WithCancel(context.Background())
	beat := &intentBeat{stop: make(chan struct{}), ctx: ctx, cancel: cancel}
	m.mu.Lock()
	closed := m.closed
	if !closed {
		intent.beat = beat
	}
	m.mu.Unlock()
	if closed {
		cancel()
		return
	}
	go m.beatIntent(intent, beat)
}

// beatIntent beats intent every beatInterval (on the monotonic clock) until halted (the intent
// dropped, the manager closed or signed out).
func (m *Manager) beatIntent(intent *intentRecord, beat *intentBeat) {
	ticker := time.NewTicker(m.beatInterval())
	defer ticker.Stop()
	for {
		select {
		case <-beat.stop:
			return
		case <-ticker.C:
			m.beatOnce(intent, beat)
		}
	}
}

// beatOnce rewrites intent with a new since (max(now, the stored since + 1), every other field
// unchanged) if the stored intent is still ours: read, compare the holder, write, as the delete of
// an own intent does. Another holder's intent is never overwritten. A beat that fails or finds
// another holder is no error: the next one tries again. Its reads are not watches of an intent.
func (m *Manager) beatOnce(intent *intentRecord, beat *intentBeat) {
	raw, present, err := m.storage.Get(beat.ctx, m.intentKey)
	if err != nil {
		m.log.Debug("the refresh intent could not be read for its beat; the next beat tries again", "error", err)
		return
	}
	current := parseIntent(raw, present)
	if current == nil || current.Holder != intent.Holder {
		m.log.Debug("the stored refresh intent is no longer this process's; it is not beaten")
		return
	}
	next := intentRecord{Fingerprint: intent.Fingerprint, Holder: intent.Holder,
		Since: max(math.Round(m.nowMs()), current.Since+1), Pid: intent.Pid, Host: intent.Host}
	beat.writing.Lock()
	defer beat.writing.Unlock()
	if beat.halted {
		m.log.Debug("the refresh intent was dropped while its beat read it; it is not beaten")
		return
	}
	if err := m.storage.Set(context.Background(), m.intentKey, marshal(next)); err != nil {
		m.log.Debug("the beat of the refresh intent could not be written; the next beat tries again", "error", err)
	}
}

// stopBeats halts the beats of this process's own intent, if any; the intent stays stored (a
// waiter gives it up once it has watched it for the intent wait without a beat).
func (m *Manager) stopBeats() {
	m.mu.Lock()
	var beat *intentBeat
	if m.ownIntent != nil {
		beat, m.ownIntent.beat = m.ownIntent.beat, nil
	}
	m.mu.Unlock()
	beat.halt()
}

// intentRecord is the refresh under way: which refresh token (a fingerprint), which refresh (holder),
// since when (ms), and its writer's pid and host.
type intentRecord struct {
	Fingerprint string  `json:"fingerprint"`
	Holder      string  `json:"holder"`
	Since       float64 `json:"since"`
	Pid         int     `json:"pid,omitempty"`
	Host        string  `json:"host,omitempty"`

	beat *intentBeat // this process's beats of its own intent, until dropIntent (guarded by mu)
}

func parseIntent(raw string, present bool) *intentRecord {
	if !present {
		return nil
	}
	fields := parseObject(raw)
	fingerprint, ok1 := fields["fingerprint"].(string)
	holder, ok2 := fields["holder"].(string)
	since, ok3 := number(fields["since"])
	if !ok1 || !ok2 || !ok3 {
		return nil
	}
	intent := &intentRecord{Fingerprint: fingerprint, Holder: holder, Since: since}
	if pid, ok := number(fields["pid"]); ok && pid == math.Trunc(pid) {
		intent.Pid = int(pid)
	}
	intent.Host, _ = fields["host"].(string)
	return intent
}

func (i *intentRecord) describe() string {
	if i.Pid == 0 {
		return "another process"
	}
	host := i.Host
	if host == "" {
		host = "an unknown host"
	}
	return "process " + itoa(i.Pid) + " on " + host
}

// fingerprint is the lowercase hex SHA-256 of a refresh token: names it without revealing it.
func fingerprint(refreshToken string) string {
	sum := sha256.Sum256([]byte(refreshToken))
	return hex.EncodeToString(sum[:])
}
