package postgresstorage

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// Lock is the refresh lock on PostgreSQL (spec/token-store/README.md, "The refresh lock"): a
// transaction-scoped advisory lock on hashtextextended(<lock name>, 0), held in a transaction on a
// connection checked out of the pool for the task. The server releases it when the transaction
// ends: at the release (ROLLBACK), or when the holder's connection closes (the process was killed,
// its machine vanished past the TCP keepalives). A holder that is paused but lives keeps it.
// Nothing is written in the lock's transaction: the storage writes the intent and the tokens on
// other connections, committed at once. It is a tokenmanager.WaitingLock.
type Lock struct {
	pool  *pgxpool.Pool
	o     options
	slots chan struct{}
}

// slotsOf are the lock connections of each pool, shared by every Lock on it.
var (
	slotsMu sync.Mutex
	slotsOf = map[*pgxpool.Pool]chan struct{}{}
)

func newLock(pool *pgxpool.Pool, o options) (*Lock, error) {
	max := int(pool.Config().MaxConns)
	limit := o.maxLockConnections
	if limit == 0 {
		limit = max - 1
	}
	if limit < 1 || limit >= max {
		return nil, invalid(fmt.Sprintf("WithMaxLockConnections must be from 1 to the pool's MaxConns less one (MaxConns is %d): a refresh holds one connection for its lock and writes the tokens on another", max))
	}
	slotsMu.Lock()
	defer slotsMu.Unlock()
	slots, ok := slotsOf[pool]
	if !ok {
		slots = make(chan struct{}, limit)
		slotsOf[pool] = slots
	}
	return &Lock{pool: pool, o: o, slots: slots}, nil
}

// storageFailed is a lock statement's failure as STORAGE_FAILED, its cause LOCK_UNAVAILABLE (or
// READ_ONLY): the code a failed read or write gets, so an outage is one code at every step.
func storageFailed(cause error) error {
	var e *tokenmanager.Error
	if errors.As(cause, &e) && (e.Code == tokenmanager.CodeLockTimeout || e.Code == tokenmanager.CodeStorageFailed) {
		return cause
	}
	return tokenmanager.NewError(tokenmanager.CodeStorageFailed, "the PostgreSQL lock cannot be taken (see cause)", cause)
}

// Do runs task holding the lock name; LOCK_TIMEOUT after the wait timeout.
func (l *Lock) Do(ctx context.Context, name string, task func(context.Context, tokenmanager.Held) error) error {
	return l.DoUntil(ctx, name, nil, task)
}

// DoUntil is Do whose wait also ends, with tokenmanager.ErrLockWaitEnded, once until says so;
// until is asked between the slices of the wait in the server.
func (l *Lock) DoUntil(ctx context.Context, name string, until func(context.Context) bool, task func(context.Context, tokenmanager.Held) error) error {
	deadline := time.Now().Add(l.o.waitTimeout)
	slotTimer := time.NewTimer(l.o.waitTimeout)
	select {
	case l.slots <- struct{}{}:
		slotTimer.Stop()
	case <-slotTimer.C:
		return tokenmanager.NewError(tokenmanager.CodeLockTimeout, fmt.Sprintf("the lock %s: no connection of the pool came free for the lock within %s (this process's other refreshes hold all %d the locks may use)", name, l.o.waitTimeout, cap(l.slots)), nil)
	case <-ctx.Done():
		slotTimer.Stop()
		return ctx.Err()
	}
	defer func() { <-l.slots }()
	h, err := l.acquire(ctx, name, deadline, until)
	if err != nil {
		if errors.Is(err, tokenmanager.ErrLockWaitEnded) {
			return err
		}
		return storageFailed(err)
	}
	defer h.end()
	return task(ctx, h)
}

// held is the connection whose transaction holds the lock.
type held struct {
	l    *Lock
	name string
	conn *pgxpool.Conn
	mu   sync.Mutex
	lost bool
}

// step runs one statement of the lock's transaction within timeout; a failure closes the connection
// (the server then ends the transaction, and the lock with it).
func (h *held) step(ctx context.Context, timeout time.Duration, what, sql string, args ...any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := h.conn.Exec(ctx, sql, args...)
	return err
}

// opening is the first statement of the lock's transaction: its settings (for this transaction
// only), whether the server takes writes, and a first try of the lock.
func (l *Lock) opening() (string, []any) {
	sql := "SELECT set_config('lock_timeout', $2, true)"
	args := []any{"", strconv.FormatInt(l.o.waitSlice.Milliseconds(), 10) + "ms"}
	if k := l.o.keepalives; k != nil {
		sql += ", set_config('tcp_keepalives_idle', $3, true), set_config('tcp_keepalives_interval', $4, true), set_config('tcp_keepalives_count', $5, true)"
		args = append(args, strconv.Itoa(k.Idle), strconv.Itoa(k.Interval), strconv.Itoa(k.Count))
	}
	return sql + ", pg_is_in_recovery(), current_setting('transaction_read_only') = 'on', pg_try_advisory_xact_lock(hashtextextended($1, 0))", args
}

// acquire checks a connection out, opens the lock's transaction and takes the lock, waiting in
// slices until it is granted, until says the wait is no longer needed, or the deadline passes.
func (l *Lock) acquire(ctx context.Context, name string, deadline time.Time, until func(context.Context) bool) (*held, error) {
	what := "taking the lock " + name
	acquireCtx, cancel := context.WithTimeout(ctx, min(l.o.commandTimeout, max(time.Millisecond, time.Until(deadline))))
	conn, err := l.pool.Acquire(acquireCtx)
	cancel()
	if err != nil {
		return nil, failure(err, what+" (no connection)", tokenmanager.CodeLockUnavailable, l.o.commandTimeout)
	}
	h := &held{l: l, name: name, conn: conn}
	taken, err := h.open(ctx)
	for err == nil && !taken {
		var released bool
		if released, err = h.waitSlice(ctx); err != nil {
			break
		}
		if until != nil && until(ctx) {
			h.end()
			return nil, tokenmanager.ErrLockWaitEnded
		}
		if taken, err = h.try(ctx); err != nil || taken {
			break
		}
		if released {
			backOff()
		}
		if time.Now().After(deadline) {
			holder := h.holder(ctx)
			h.end()
			return nil, tokenmanager.NewError(tokenmanager.CodeLockTimeout, fmt.Sprintf(
				"the lock %s (the advisory lock hashtextextended of that name) was still held%s after %s", name, holder, l.o.waitTimeout), nil)
		}
	}
	if err != nil {
		h.fail(err)
		return nil, failure(err, what, tokenmanager.CodeLockUnavailable, l.o.commandTimeout)
	}
	return h, nil
}

// open begins the transaction and tries the lock once.
func (h *held) open(ctx context.Context) (bool, error) {
	if err := h.step(ctx, h.l.o.commandTimeout, "BEGIN", "BEGIN"); err != nil {
		return false, err
	}
	sql, args := h.l.opening()
	args[0] = h.name
	queryCtx, cancel := context.WithTimeout(ctx, h.l.o.commandTimeout)
	defer cancel()
	row := h.conn.QueryRow(queryCtx, sql, args...)
	settings := make([]any, len(args)-1) // the set_config results, unread
	for i := range settings {
		settings[i] = new(string)
	}
	var standby, readOnly, taken bool
	if err := row.Scan(append(settings, &standby, &readOnly, &taken)...); err != nil {
		return false, err
	}
	if standby || readOnly {
		which := "is read-only (default_transaction_read_only)"
		if standby {
			which = "is a hot standby"
		}
		return false, tokenmanager.NewError(tokenmanager.CodeReadOnly, fmt.Sprintf("taking the lock %s: the server %s; a lock there would coordinate nobody: give the storage a pool of the primary", h.name, which), nil)
	}
	return taken, nil
}

// waitSlice blocks in the server until the holder lets go or lock_timeout passes, and holds nothing
// after it (released: the holder let go within the slice). It waits in SHARE mode
// (pg_advisory_xact_lock_shared), which conflicts with the holder's exclusive lock only, so a
// release wakes every waiter at once, and lets the share go at once (ROLLBACK TO SAVEPOINT ends the
// locks taken after it); each waiter then asks whether it still needs the lock before it tries it.
// Waiting for the exclusive lock itself would make a convoy: the server grants it to the waiters
// one after another, each holding it for a read and a release before the next may go.
func (h *held) waitSlice(ctx context.Context) (released bool, err error) {
	timeout := h.l.o.commandTimeout
	if err := h.step(ctx, timeout, "SAVEPOINT", "SAVEPOINT tenant_integration_wait"); err != nil {
		return false, err
	}
	err = h.step(ctx, h.l.o.waitSlice+timeout, "wait", "SELECT pg_advisory_xact_lock_shared(hashtextextended($1, 0))", h.name)
	released = err == nil
	// 55P03: lock_timeout ran out; 57014: a shorter statement_timeout did. The lock is still another's.
	var pgErr *pgconn.PgError
	if err != nil && (!errors.As(err, &pgErr) || (pgErr.Code != "55P03" && pgErr.Code != "57014")) {
		return false, err
	}
	return released, h.step(ctx, timeout, "ROLLBACK TO", "ROLLBACK TO SAVEPOINT tenant_integration_wait")
}

// try tries the exclusive lock without waiting.
func (h *held) try(ctx context.Context) (bool, error) {
	queryCtx, cancel := context.WithTimeout(ctx, h.l.o.commandTimeout)
	defer cancel()
	var taken bool
	err := h.conn.QueryRow(queryCtx, "SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))", h.name).Scan(&taken)
	return taken, err
}

// backOff is a short random pause after a try that lost to other waiters woken with it: they let
// their shares go within a round trip, and the next slice, which no exclusive holder blocks, would
// not wait.
func backOff() { time.Sleep(time.Duration(5+rand.IntN(20)) * time.Millisecond) }

// holder names the holder of the lock, for the message of a wait that ran out ("" when unknown).
func (h *held) holder(ctx context.Context) string {
	queryCtx, cancel := context.WithTimeout(ctx, h.l.o.commandTimeout)
	defer cancel()
	var pid int
	var app, client, since string
	err := h.conn.QueryRow(queryCtx, `SELECT l.pid, coalesce(a.application_name, ''), coalesce(host(a.client_addr), ''), coalesce(a.xact_start::text, '')
		FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.mode = 'ExclusiveLock' AND l.granted AND l.objsubid = 1
		  AND l.classid::bigint = (hashtextextended($1, 0) >> 32) & 4294967295 AND l.objid::bigint = hashtextextended($1, 0) & 4294967295`,
		h.name).Scan(&pid, &app, &client, &since)
	if err != nil {
		return ""
	}
	text := fmt.Sprintf(" by the server process %d", pid)
	if app != "" {
		text += fmt.Sprintf(", application_name %q", app)
	}
	if client != "" {
		text += ", client " + client
	}
	if since != "" {
		text += ", its transaction open since " + since
	}
	return text
}

// IsHeld is "the lock is still held" (the refresh protocol's steps 3 and 5): the lock's connection
// still answers in its transaction. False once it was lost (the server restarted, the backend was
// terminated) or gave no answer: the server releases the lock with the connection.
func (h *held) IsHeld(ctx context.Context) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lost {
		return false
	}
	if err := h.step(ctx, h.l.o.commandTimeout, "SELECT 1", "SELECT 1"); err != nil {
		h.failLocked(err)
		return false
	}
	return true
}

// fail closes the connection after a failed statement: nothing more is sent on it.
func (h *held) fail(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failLocked(err)
}

func (h *held) failLocked(error) {
	if h.lost {
		return
	}
	h.lost = true
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_ = h.conn.Conn().Close(ctx)
	h.conn.Release()
}

// end ends the lock's transaction (ROLLBACK: nothing was written in it), which releases the lock,
// and gives the connection back; one that fails is closed instead, which releases it too.
func (h *held) end() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lost {
		return
	}
	if err := h.step(context.Background(), h.l.o.commandTimeout, "ROLLBACK", "ROLLBACK"); err != nil {
		h.failLocked(err)
		return
	}
	h.lost = true
	h.conn.Release()
}
