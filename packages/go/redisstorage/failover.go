package redisstorage

// Following a Redis Cluster failover with the client the user gave. go-redis's ClusterClient
// reloads its slot map on a MOVED answer and otherwise only every ClusterStateReloadInterval (60 s
// by default since v9.22): a process whose key's primary was killed keeps dialling the dead
// address (connection refused) for up to that long after a replica was promoted
// (https://github.com/redis/go-redis/issues/3979), while node-redis and redis-py reach the new
// primary within seconds. So the storage and its lock ask the client to reload its slot map
// (ClusterClient.ReloadState: one CLUSTER SLOTS to a node, in the background) when a command
// shows that the cluster's layout may have changed, and run a command that could not have run
// again, once the key's primary changed, within the command's deadline.

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// reloadEvery is the least time between two reloads this storage asks of the client.
	reloadEvery = 250 * time.Millisecond
	// followPoll is how often a command that could not run looks whether the key's primary changed.
	followPoll = 20 * time.Millisecond
	// retryAfter is the longest a command that could not run waits for the key's primary to change
	// before it is run again all the same (the node may have come back, the cluster recovered).
	retryAfter = 250 * time.Millisecond
)

// failover follows a cluster's failovers for one storage (and its lock); its zero value, and a nil
// *failover, follow nothing (a *redis.Client: one server, or Sentinel, which go-redis follows).
type failover struct {
	cluster *redis.ClusterClient
	mu      sync.Mutex
	asked   time.Time
}

func newFailover(client redis.UniversalClient) *failover {
	cluster, _ := client.(*redis.ClusterClient)
	return &failover{cluster: cluster}
}

// outcome is what a failed command says of the cluster's layout.
type outcome int

const (
	// settled: nothing about the layout (a reply, an error reply such as WRONGTYPE, a cancelled call).
	settled outcome = iota
	// notRun: the command cannot have run, and the layout may have changed: the key's node could not
	// be dialled (refused, unreachable, dial timeout), or the cluster refused it while it moves
	// (CLUSTERDOWN, TRYAGAIN, MOVED or ASK past the client's redirects, READONLY from a demoted
	// primary, LOADING from a node that restarted).
	notRun
	// unanswered: the command was sent and no reply came (the connection closed or reset, a read
	// timeout): it may have run, and the node may be gone.
	unanswered
)

// classify says what err tells of the cluster's layout.
func classify(err error) outcome {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, redis.ErrClosed) {
		return settled
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return notRun
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return settled
	}
	if _, moved := redis.IsMovedError(err); moved {
		return notRun
	}
	if _, ask := redis.IsAskError(err); ask {
		return notRun
	}
	if redis.IsClusterDownError(err) || redis.IsTryAgainError(err) || redis.IsReadOnlyError(err) || redis.IsLoadingError(err) {
		return notRun
	}
	var netErr net.Error
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &netErr) {
		return unanswered
	}
	return settled
}

// mayHaveRun reports whether a command that failed with err may still have run on the server (it
// was sent and no reply came): a lock's SET NX that may have taken the lease.
func mayHaveRun(err error) bool {
	var redisErr redis.Error
	var after *afterTries
	if errors.As(err, &after) {
		return true // the last try may be under way
	}
	return err != nil && !errors.Is(err, redis.Nil) && classify(err) != notRun && !errors.As(err, &redisErr)
}

// reload asks the client to reload its slot map (in the background), at most once per reloadEvery.
func (f *failover) reload(ctx context.Context) {
	f.mu.Lock()
	due := time.Since(f.asked) >= reloadEvery
	if due {
		f.asked = time.Now()
	}
	f.mu.Unlock()
	if due {
		f.cluster.ReloadState(ctx)
	}
}

// primaryOf is the address of the node the client sends key's commands to ("" when it has none).
func (f *failover) primaryOf(ctx context.Context, key string) string {
	node, err := f.cluster.MasterForKey(ctx, key)
	if err != nil {
		return ""
	}
	return node.Options().Addr
}

// follow runs command (on key's slot) until it no longer fails for the cluster's layout: after an
// error that says the layout may have changed it asks the client to reload its slot map; a command
// that cannot have run (see notRun) is run again once the client sends key to another node, or
// after retryAfter, until deadline has passed since follow began. Not on a cluster, command runs once.
// The failure of each try run again is kept in last.
func follow[T any](ctx context.Context, f *failover, key string, deadline time.Duration, last *tried, command func(context.Context) (T, error)) (T, error) {
	stop := time.Now().Add(deadline)
	for {
		value, err := command(ctx)
		if f == nil || f.cluster == nil {
			return value, err
		}
		switch classify(err) {
		case settled:
			return value, err
		case unanswered:
			f.reload(ctx)
			return value, err
		}
		if !f.await(ctx, key, stop) {
			return value, err
		}
		last.set(err)
	}
}

// tried holds the failure of the last try that follow ran again.
type tried struct {
	mu  sync.Mutex
	err error
}

func (t *tried) set(err error) {
	t.mu.Lock()
	t.err = err
	t.mu.Unlock()
}

func (t *tried) get() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// afterTries is the failure of a command whose deadline passed while it was run again: no reply in
// time (timeout), after tries that failed with last (the cluster down, its primary unreachable).
type afterTries struct {
	timeout, last error
}

func (e *afterTries) Error() string {
	return e.timeout.Error() + ", after tries that failed with " + e.last.Error()
}

func (e *afterTries) Unwrap() error { return e.timeout }

// await asks for reloads until the client sends key to another node than now, retryAfter passes,
// or stop (false: no time is left to run the command again).
func (f *failover) await(ctx context.Context, key string, stop time.Time) bool {
	before := f.primaryOf(ctx, key)
	ticker := time.NewTicker(followPoll)
	defer ticker.Stop()
	for waited := time.Now(); time.Since(waited) < retryAfter; {
		f.reload(ctx)
		select {
		case <-ctx.Done():
			return false
		case <-ticker.C:
		}
		if time.Now().After(stop) {
			return false
		}
		if now := f.primaryOf(ctx, key); now != "" && now != before {
			return true
		}
	}
	return time.Now().Before(stop)
}
