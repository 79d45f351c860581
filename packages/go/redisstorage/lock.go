package redisstorage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	mathrand "math/rand/v2"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// The scripts of the TypeScript and Python kits, byte for byte: release and renew only while the key
// still holds this owner's value.
var (
	release = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)
	renew   = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0`)
)

// Lock is the refresh lock on Redis: a lease (SET key owner NX PX lease, a random 128-bit owner) that
// only its owner renews (compare-and-PEXPIRE, every renew period while the task runs) or releases
// (compare-and-DEL, then PUBLISH <key>:released ""), with a bounded wait that wakes on a release
// announcement (a subscription on a connection of its own, for the time of the wait; polling
// without one). The task's Held reads the key (GET): the manager asks right before a refresh leaves,
// and sends nothing when a paused holder's lease was taken over. A SET NX sent without a reply may
// take the lease later: the lock releases that lease at its next try on the key (lateLeases). On a
// cluster it follows a failover as the storage does (see the package's doc).
type Lock struct {
	client   redis.UniversalClient
	o        options
	failover *failover
	late     *lateLeases
}

func newLock(client redis.UniversalClient, o options, f *failover) *Lock {
	return &Lock{client: client, o: o, failover: f, late: &lateLeases{}}
}

// NewLock makes a Lock on client (New's storage carries one). Errors: INVALID_OPTIONS.
func NewLock(client redis.UniversalClient, opts ...Option) (*Lock, error) {
	if err := checkClient(client); err != nil {
		return nil, err
	}
	o, err := build(opts)
	if err != nil {
		return nil, err
	}
	return newLock(client, o, newFailover(client)), nil
}

func newOwner() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// unavailable is the lock's failure on a Redis error: STORAGE_FAILED (the code a failed read or
// write gets, so that an outage is one code at every step) with LOCK_UNAVAILABLE as cause.
func unavailable(command, key string, err error) error {
	cause := failed(tokenmanager.CodeLockUnavailable, command, key, err)
	return tokenmanager.NewError(tokenmanager.CodeStorageFailed, "the Redis lock cannot be taken (see cause)", cause)
}

// Do takes the lock name (its Redis key is Key(prefix, name)), runs task while renewing the lease,
// and releases it. Errors: LOCK_TIMEOUT after the wait; STORAGE_FAILED (cause LOCK_UNAVAILABLE)
// when Redis fails while the lock is taken; ctx.Err(); or the task's own error.
func (l *Lock) Do(ctx context.Context, name string, task func(context.Context, tokenmanager.Held) error) error {
	return l.DoUntil(ctx, name, nil, task)
}

// DoUntil is Do whose wait ends (tokenmanager.ErrLockWaitEnded) once until says so; until is called
// each time the wait wakes, on a release announcement or after a poll pause (tokenmanager.WaitingLock).
func (l *Lock) DoUntil(ctx context.Context, name string, until func(context.Context) bool, task func(context.Context, tokenmanager.Held) error) error {
	key := Key(l.o.prefix, name)
	owner := newOwner()
	if err := l.acquire(ctx, key, owner, until); err != nil {
		return err
	}
	h := l.hold(key, owner)
	defer h.release()
	return task(ctx, h)
}

// take tries the lease once (SET key owner NX PX lease), after releasing the leases this lock's
// earlier SET NX of key may have taken without a reply (see lateLeases).
func (l *Lock) take(ctx context.Context, key, owner string) (bool, error) {
	if err := l.releaseLate(ctx, key); err != nil {
		return false, err
	}
	taken, err := send(ctx, l.failover, key, l.o.deadline, func(ctx context.Context) (bool, error) {
		return l.client.SetNX(ctx, key, owner, l.o.lease).Result()
	}, func(taken bool, err error) {
		// A SET whose reply came after its deadline may have taken the lock: released at once, so
		// that nobody waits out the lease.
		if err == nil && taken {
			_, _ = l.releaseOwn(context.Background(), key, owner)
		}
		if err == nil {
			l.late.forget(key, owner)
		}
	})
	if err != nil {
		if mayHaveRun(err) {
			// Sent, and no reply: the server may run it later (a stopped primary that resumes).
			l.late.remember(key, owner)
		}
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return false, unavailable("SET NX", key, err)
	}
	return taken, nil
}

// releaseLate releases at once the leases of key that this lock's SET NX may have taken without a
// reply, as soon as the server answers again (compare-and-DEL, then the release announcement):
// nobody waits out a lease that nobody holds. An error is the lock's (the server does not answer).
func (l *Lock) releaseLate(ctx context.Context, key string) error {
	for _, owner := range l.late.owners(key) {
		released, err := l.releaseOwn(ctx, key, owner)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return unavailable("EVALSHA (release)", key, err)
		}
		if released == 1 {
			l.o.logger.Info("released a lease that a SET NX without a reply had taken", "key", key)
		}
		l.late.answered(key, owner, released == 1)
	}
	return nil
}

func (l *Lock) acquire(ctx context.Context, key, owner string, until func(context.Context) bool) error {
	deadline := time.Now().Add(l.o.waitTimeout) // monotonic
	var w *watch
	defer func() { w.close() }()
	for attempt := 0; ; attempt++ {
		taken, err := l.take(ctx, key, owner)
		if err != nil || taken {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return tokenmanager.NewError(tokenmanager.CodeLockTimeout, fmt.Sprintf("%s still held by another owner after %s", key, l.o.waitTimeout), nil)
		}
		if attempt == 0 {
			// Subscribed before the next try, so that a release between the two tries is not missed.
			if w = watchReleases(ctx, l.client, key, min(l.o.deadline, left)); w != nil {
				continue
			}
		}
		// Backoff, then jitter in its upper half, so that a fleet released together does not retry
		// in step. A release announcement ends the pause at once: one SET per waiter per release.
		// So a subscribed waiter polls only for a release no announcement tells of (a lease that ran
		// out, a denied PUBLISH), every maxRetryDelay: polling on the short backoff as well, a
		// fleet's waiters sent several SETs and reads per wait while the holder refreshed, and that
		// load slowed every holder (issue 39). Unsubscribed, it polls on the backoff.
		backoff := float64(l.o.maxRetryDelay)
		if w == nil {
			backoff = min(backoff, float64(l.o.retryDelay)*math.Pow(2, float64(min(attempt, 30))))
		}
		pause := min(time.Until(deadline), time.Duration(backoff/2+mathrand.Float64()*backoff/2))
		if err := w.next(ctx, pause); err != nil {
			return err
		}
		if until != nil && until(ctx) {
			return tokenmanager.ErrLockWaitEnded
		}
	}
}

func (l *Lock) releaseOwn(ctx context.Context, key, owner string) (int64, error) {
	released, err := send(ctx, l.failover, key, l.o.deadline, func(ctx context.Context) (int64, error) {
		return release.Run(ctx, l.client, []string{key}, owner).Int64()
	}, nil)
	if err == nil && released == 1 {
		announceRelease(ctx, l.client, l.failover, key, l.o.deadline)
	}
	return released, err
}

// held is a taken lock: renewed until release; a loss reported once.
type held struct {
	l          *Lock
	key, owner string
	mu         sync.Mutex
	stopped    bool
	reported   bool
	renewedAt  time.Time
	done       chan struct{}
	finished   chan struct{}
}

func (l *Lock) hold(key, owner string) *held {
	h := &held{l: l, key: key, owner: owner, renewedAt: time.Now(), done: make(chan struct{}), finished: make(chan struct{})}
	go h.renewals()
	return h
}

func (h *held) lost(why string, cause error) {
	h.mu.Lock()
	h.stopped = true
	report := !h.reported
	h.reported = true
	h.mu.Unlock()
	if report {
		h.l.o.onLeaseLost(tokenmanager.NewError(tokenmanager.CodeLeaseLost, fmt.Sprintf("%s: %s; the task under the lock was not stopped", h.key, why), cause))
	}
}

func (h *held) isStopped() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stopped
}

// renewals renews the lease every renew period (a chain of timers: a slow renewal never overlaps the
// next) until release.
func (h *held) renewals() {
	defer close(h.finished)
	timer := time.NewTimer(h.l.o.renewEvery)
	defer timer.Stop()
	for {
		select {
		case <-h.done:
			return
		case <-timer.C:
		}
		reply, err := send(context.Background(), h.l.failover, h.key, h.l.o.deadline, func(ctx context.Context) (int64, error) {
			return renew.Run(ctx, h.l.client, []string{h.key}, h.owner, h.l.o.lease.Milliseconds()).Int64()
		}, nil)
		if h.isStopped() {
			return
		}
		switch {
		case err == nil && reply != 1:
			h.lost("a renewal found another owner, or no lock", nil)
			return
		case err == nil:
			h.mu.Lock()
			h.renewedAt = time.Now()
			h.mu.Unlock()
		default:
			h.mu.Lock()
			since := time.Since(h.renewedAt)
			h.mu.Unlock()
			if since >= h.l.o.lease {
				h.lost(fmt.Sprintf("no renewal succeeded for %s", h.l.o.lease), err)
				return
			}
		}
		timer.Reset(h.l.o.renewEvery)
	}
}

// IsHeld reads the key: whether it still holds this owner's value (false too when Redis fails: the
// manager then sends nothing and takes the lock again, which reports the failure).
func (h *held) IsHeld(ctx context.Context) bool {
	if h.isStopped() {
		return false
	}
	value, err := send(ctx, h.l.failover, h.key, h.l.o.deadline, func(ctx context.Context) (string, error) { return h.l.client.Get(ctx, h.key).Result() }, nil)
	if err == nil && value == h.owner {
		return true
	}
	if err == nil || err == redis.Nil {
		h.lost("the lease was found taken over (or expired) before the task's next step", nil)
	}
	return false
}

func (h *held) release() {
	h.mu.Lock()
	alreadyLost := h.stopped
	h.stopped = true
	h.mu.Unlock()
	close(h.done)
	<-h.finished
	released, err := h.l.releaseOwn(context.Background(), h.key, h.owner)
	if err != nil {
		return // a failed release only leaves the lease to expire (at most the lease)
	}
	if released != 1 && !alreadyLost {
		h.lost("at release the lock was no longer this owner's (the lease expired under the task)", nil)
	}
}
