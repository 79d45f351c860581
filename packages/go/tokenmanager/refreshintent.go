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
	"time"

	"github.com/tenant-integration/sdk/packages/go/internal/procid"
)

// How often a process that honours another's refresh intent reads the storage again.
const intentPoll = 50 * time.Millisecond

type intentPending struct {
	recordID string
	intent   *intentRecord
}

func (p *intentPending) Error() string { return "waiting for the refresh by " + p.intent.describe() }

type waited struct {
	holder string
	since  time.Time
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

// intentRecord is the refresh under way: which refresh token (a fingerprint), which refresh (holder),
// since when (ms), and its writer's pid and host.
type intentRecord struct {
	Fingerprint string  `json:"fingerprint"`
	Holder      string  `json:"holder"`
	Since       float64 `json:"since"`
	Pid         int     `json:"pid,omitempty"`
	Host        string  `json:"host,omitempty"`
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
