package tokenmanager

// The bearer layer's token without a clock read. AccessToken checks the current token's freshness
// on every call with the manager's clock, as the session promises; with the default clock that is a
// wall-clock read (time.Now, 45–120 ns on a VM), most of what the bearer layer costs per request.
// So, with the default clock only, the bearer layer keeps an armed token: once AccessToken handed
// it a token that is current, stored and fresh, that token is armed with a timer at its freshness
// deadline, and requests carry it with nothing but an atomic load until the timer or any change of
// the current token (a refresh, another process's tokens, OnUnauthorized, sign-in, sign-out, a
// failed write) disarms it; the next request then takes AccessToken's path, which decides as always.
//
// Go's timers run on the monotonic clock, so a jump of the wall clock does not move the deadline:
//   - set forward (an NTP step): the token is no older than it was, and the tenant counts its
//     lifetime in real time too; once the deadline passes, AccessToken decides with the wall clock;
//   - set back: the deadline passes in real time, then AccessToken decides with the wall clock, as
//     it did before anything was armed;
//   - a suspended machine (the monotonic clock stops, the wall clock does not): the armed token may
//     have expired at the tenant, which answers 401 (Assumption (not in the service description):
//     the description shows no status for an expired token; RFC 6750 §3.1's is 401); the bearer
//     layer then marks it refused (OnUnauthorized, which disarms it), refreshes once and sends the
//     request again. A request whose body cannot be sent again never takes the armed token: it
//     pays the clock read instead.
//
// With an injected clock (WithClock) nothing is armed: every request reads that clock.
//
// It is kept because the Go in-process goal of pnpm bench (5 % over bare net/http with static
// headers) needs it: the bench's row without it (WithClock(time.Now)) misses the goal
// (BENCHMARKS.md, "Go SDK").

import (
	"context"
	"time"
)

// maxArmed bounds how long a token stays armed (a token may claim to live for years): past it,
// AccessToken checks it again, and arms it again if it is still fresh.
const maxArmed = 24 * time.Hour

// armedToken is a token the bearer layer may send without asking AccessToken, until stop.
type armedToken struct {
	token string
	stop  func() bool // stops the timer that disarms it at its freshness deadline
}

// transportToken is the token for a request of the bearer layer: the armed one when the request
// could be sent again after a 401 (replayable), else AccessToken's, which is then armed if it can be.
func (m *Manager) transportToken(ctx context.Context, replayable bool) (string, error) {
	if replayable {
		if armed := m.armed.Load(); armed != nil {
			return armed.token, nil
		}
	}
	token, err := m.AccessToken(ctx)
	if err == nil && m.arms && m.armed.Load() == nil {
		m.arm(token)
	}
	return token, err
}

// arm arms token when it is still the current token, stored (no write pending), and fresh, with a
// timer at its freshness deadline that disarms it.
func (m *Manager) arm(token string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	current := m.current
	if current == nil || current.AccessToken != token || m.unsaved != nil || m.armed.Load() != nil {
		return
	}
	nowMs := m.nowMs()
	if !current.fresh(nowMs, float64(m.o.leeway.Milliseconds())) {
		return
	}
	remainingMs := min(m.freshUntilMs(current, nowMs)-nowMs, float64(maxArmed.Milliseconds()))
	armed := &armedToken{token: token}
	// Stored before the timer starts, so that a timer that fires at once finds it to disarm.
	m.armed.Store(armed)
	armed.stop = m.afterFunc(time.Duration(remainingMs*float64(time.Millisecond)), func() { m.armed.CompareAndSwap(armed, nil) })
}

// disarm drops the armed token; called with m.mu held wherever the current token changes.
func (m *Manager) disarm() {
	if armed := m.armed.Swap(nil); armed != nil {
		armed.stop()
	}
}

// setCurrent makes r the current record (nil: none); called with m.mu held.
func (m *Manager) setCurrent(r *tokenRecord) {
	m.current = r
	m.disarm()
}

// afterFuncOnTimer is time.AfterFunc as the manager's afterFunc (tests inject a hand-fired one).
func afterFuncOnTimer(d time.Duration, f func()) (stop func() bool) { return time.AfterFunc(d, f).Stop }
