// Package redisstorage keeps the token manager's records in Redis (or Valkey) and brings the Redis
// refresh lock, interchangeable with @tenant-integration/token-store-redis and the Python kit's
// RedisStorage: the same keys, values, lease lock, scripts and release announcements
// (spec/token-store/README.md), so Go, Node and Python processes sharing one Redis make one refresh
// per expiry between them. Over a go-redis v9 client the user makes: a *redis.Client (one server,
// or redis.NewFailoverClient for Sentinel) or a *redis.ClusterClient (Redis Cluster).
//
//	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
//	// or: redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"10.0.0.1:6379", "10.0.0.2:6379"}})
//	storage, err := redisstorage.New(client, redisstorage.WithPrefix("billing-app:"))
//	manager, err := tokenmanager.New(config, tokenmanager.WithStorage(storage))
//
// The keys of one session share a hash tag, so one cluster slot (see Key):
// <prefix>tenant-integration:{<origin>:<clientId>}:<kind> for the kinds tokens, intent and lock, and
// <prefix>tenant-integration:{<origin>:<clientId>:<session>}:<kind> for a session of a server acting
// for many users, on a single server and a cluster alike. Pending sign-ins live under
// <prefix>tenant-integration:{<origin>:<clientId>}:pending:<key>, written with a TTL (SetExpiring)
// and taken with GETDEL (Take).
//
// On a *redis.ClusterClient the storage follows a failover through the client it was given:
// go-redis reloads its slot map on its own only every ClusterStateReloadInterval (60 s by default)
// and on MOVED answers, so a command that cannot reach the key's primary (a dial error: refused,
// unreachable, dial timeout) or that the cluster refuses while it changes (CLUSTERDOWN, TRYAGAIN,
// MOVED or ASK past the client's redirects, READONLY, LOADING) makes the storage call the client's
// ReloadState (one CLUSTER SLOTS to a node, in the background; at most every 250 ms per storage)
// and run the command again once the client sends the key to another node, or after 250 ms, until
// the command timeout; a command sent without a reply (its connection closed, a read timeout) is
// not run again, and asks for a reload too. The reloaded slot map is the client's: every command of
// yours on that client follows it too. Nothing else of the client is changed.
//
// A lock's SET NX that was sent and got no reply (a primary that stopped and resumes) may take the
// lease later with nobody behind it: the lock remembers the owner value it sent and releases that
// lease (compare-and-DEL, then the release announcement) at its next try on the key, once the
// server answers, as the other kits do; nobody waits out a lease nobody holds.
//
// Errors are *tokenmanager.Error: COMMAND_FAILED (a command failed or got no reply within the
// command timeout; on a cluster the message says when the cluster is down or a slot is moving; a
// key holding another Redis type, WRONGTYPE, is named and said to hold a value the kit did not write),
// UNEXPECTED_REPLY, REPLICATION_TIMEOUT, INVALID_OPTIONS (a prefix holding { or }, a redis.Ring, a
// cluster client reading from replicas, a bad duration); the lock's LOCK_TIMEOUT,
// and STORAGE_FAILED with LOCK_UNAVAILABLE as cause when Redis fails while the lock is taken; the
// manager reports every Redis outage as STORAGE_FAILED, as the other kits do. Messages name keys and
// commands, never a value. See RFC 9700 §4.14.2; RFC 6749 §6, §10.4.
package redisstorage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tenant-integration/sdk/packages/go/internal/redact"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// The defaults, the TypeScript and Python kits'.
const (
	DefaultLease          = 10 * time.Second
	DefaultWaitTimeout    = 45 * time.Second
	DefaultRetryDelay     = 20 * time.Millisecond
	DefaultMaxRetryDelay  = 500 * time.Millisecond
	DefaultCommandTimeout = 5 * time.Second
)

// Option sets an optional behaviour of New and NewLock.
type Option func(*options)

type options struct {
	prefix                              string
	lease, renewEvery, waitTimeout      time.Duration
	retryDelay, maxRetryDelay, deadline time.Duration
	replicas                            int
	replicasTimeout                     time.Duration
	onLeaseLost                         func(error)
	logger                              *slog.Logger
}

// WithPrefix puts prefix before every key (the lock's and the storage's), e.g. "myapp:" in a shared
// Redis (default ""). A prefix holding { or } is INVALID_OPTIONS: Redis Cluster would hash its
// braces instead of the session's hash tag.
func WithPrefix(prefix string) Option { return func(o *options) { o.prefix = prefix } }

// WithLease sets how long a lease lasts without renewal (default 10 s): a holder that dies blocks
// the others for at most this long.
func WithLease(d time.Duration) Option { return func(o *options) { o.lease = d } }

// WithRenewEvery sets how often a running task's lease is renewed (default a third of the lease).
func WithRenewEvery(d time.Duration) Option { return func(o *options) { o.renewEvery = d } }

// WithWaitTimeout bounds the wait for a lock another owner holds, then LOCK_TIMEOUT (default 45 s:
// longer than the manager's slowest refresh).
func WithWaitTimeout(d time.Duration) Option { return func(o *options) { o.waitTimeout = d } }

// WithRetryDelay sets the first and the longest pause between two tries while waiting without a
// subscription to the lock's releases (default 20 ms doubling up to 500 ms, with jitter). A waiter
// subscribed to them tries again when a release is announced, and otherwise only every longest.
func WithRetryDelay(first, longest time.Duration) Option {
	return func(o *options) { o.retryDelay, o.maxRetryDelay = first, longest }
}

// WithCommandTimeout bounds the wait for each command's reply (default 5 s), so that a Redis that
// stops answering with its connections open fails a call (COMMAND_FAILED) instead of blocking it.
func WithCommandTimeout(d time.Duration) Option { return func(o *options) { o.deadline = d } }

// WithReplicas waits, after each write, until count replicas acknowledged it (WAIT, on the write's
// own connection: on a cluster, to the key's primary), at most timeout; fewer is
// REPLICATION_TIMEOUT (the manager then reports STORAGE_FAILED and keeps the new tokens in memory
// to write again). WAIT narrows, and does not close, the window in which a failover loses a
// rotated refresh token.
func WithReplicas(count int, timeout time.Duration) Option {
	return func(o *options) { o.replicas, o.replicasTimeout = count, timeout }
}

// WithOnLeaseLost is called with a LEASE_LOST *tokenmanager.Error when a running task's lease was
// lost (a renewal found another owner or none, no renewal succeeded for a whole lease, or the release
// found the key no longer this owner's). The task is not stopped. Default: a warning on the logger.
func WithOnLeaseLost(f func(error)) Option { return func(o *options) { o.onLeaseLost = f } }

// WithLogger sets the slog logger of the lock's warnings (default: none). No line holds a value.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

func invalid(name, why string) error {
	return tokenmanager.NewError(tokenmanager.CodeInvalidOptions, name+": "+why, nil)
}

func build(opts []Option) (options, error) {
	o := options{lease: DefaultLease, waitTimeout: DefaultWaitTimeout, retryDelay: DefaultRetryDelay,
		maxRetryDelay: DefaultMaxRetryDelay, deadline: DefaultCommandTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if o.renewEvery == 0 {
		o.renewEvery = o.lease / 3
	}
	switch {
	case o.lease <= 0 || o.renewEvery <= 0 || o.waitTimeout <= 0 || o.retryDelay <= 0 || o.maxRetryDelay <= 0 || o.deadline <= 0:
		return o, invalid("options", "every duration must be > 0")
	case o.lease < time.Millisecond:
		return o, invalid("WithLease", "at least 1 ms (PX counts milliseconds)")
	case o.renewEvery >= o.lease:
		return o, invalid("WithRenewEvery", "must be less than the lease")
	case o.replicas < 0 || (o.replicas > 0 && o.replicasTimeout < time.Millisecond):
		return o, invalid("WithReplicas", "count >= 0 and a timeout of 1 ms or more (WAIT 0 would block forever)")
	}
	if err := checkPrefix(o.prefix); err != nil {
		return o, err
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	if o.onLeaseLost == nil {
		logger := o.logger
		o.onLeaseLost = func(err error) { logger.Warn(err.Error()) }
	}
	return o, nil
}

// Storage keeps the manager's records in Redis, one string key per record (GET, SET, DEL) named by
// Key, keys without expiry, values stored as they are and never logged. It brings its Lock. Safe
// for concurrent use.
type Storage struct {
	client   redis.UniversalClient
	o        options
	failover *failover
	lock     *Lock
}

// New makes a Storage on client: a *redis.Client or a *redis.ClusterClient that reads from
// primaries (a redis.Ring, and ReadOnly, RouteByLatency or RouteRandomly, are refused).
// Errors: INVALID_OPTIONS.
func New(client redis.UniversalClient, opts ...Option) (*Storage, error) {
	if err := checkClient(client); err != nil {
		return nil, err
	}
	o, err := build(opts)
	if err != nil {
		return nil, err
	}
	f := newFailover(client)
	return &Storage{client: client, o: o, failover: f, lock: newLock(client, o, f)}, nil
}

// Where is the Redis key of the manager's name (Key, with the storage's prefix), as a user finds it
// with redis-cli: the manager's messages about a stored value name it (tokenmanager.KeyLocator).
func (s *Storage) Where(name string) string { return Key(s.o.prefix, name) }

// Lock is the storage's Redis lock, which the manager uses unless WithLock gives another.
func (s *Storage) Lock() tokenmanager.Lock { return s.lock }

// failed is the *Error of a command that failed: its name, its key and why, scrubbed of values.
func failed(code tokenmanager.Code, command, key string, err error, secrets ...string) *tokenmanager.Error {
	why := redact.Text(fmt.Sprintf("%T: %v", err, err), secrets)
	message := fmt.Sprintf("Redis %s of %s failed (%s)", command, key, why)
	if explained := hint(err); explained != "" {
		message += ": " + explained
	}
	return tokenmanager.NewError(code, message, errors.New(why))
}

// within runs a command bounded by the command timeout (go-redis honours a context deadline only
// when the client enables ContextTimeoutEnabled: the bound is kept here instead). A reply that comes
// later is given to late (the lock releases a lease its late SET took).
func within[T any](ctx context.Context, deadline time.Duration, run func(context.Context) (T, error), late func(T, error)) (T, error) {
	type result struct {
		value T
		err   error
	}
	done := make(chan result, 1)
	commandCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deadline*2)
	go func() {
		defer cancel()
		value, err := run(commandCtx)
		done <- result{value, err}
	}()
	timer := time.NewTimer(deadline)
	defer timer.Stop()
	var zero T
	select {
	case r := <-done:
		return r.value, r.err
	case <-ctx.Done():
		go func() { r := <-done; notify(late, r.value, r.err) }()
		return zero, ctx.Err()
	case <-timer.C:
		go func() { r := <-done; notify(late, r.value, r.err) }()
		return zero, &noReply{deadline}
	}
}

func notify[T any](late func(T, error), value T, err error) {
	if late != nil {
		late(value, err)
	}
}

// send runs one command on key bounded by deadline (see within), following a cluster's failover
// within that bound (see follow). When the bound passes while the command is run again, the error
// says how the tries before failed (afterTries).
func send[T any](ctx context.Context, f *failover, key string, deadline time.Duration, command func(context.Context) (T, error), late func(T, error)) (T, error) {
	var last tried
	value, err := within(ctx, deadline, func(ctx context.Context) (T, error) { return follow(ctx, f, key, deadline, &last, command) }, late)
	var timedOut *noReply
	if before := last.get(); before != nil && errors.As(err, &timedOut) {
		return value, &afterTries{timeout: err, last: before}
	}
	return value, err
}

// noReply is the failure of a command whose reply did not come within its deadline.
type noReply struct{ deadline time.Duration }

func (e *noReply) Error() string { return fmt.Sprintf("no reply within %s", e.deadline) }

// Get returns the value of name (GET). Errors: COMMAND_FAILED.
func (s *Storage) Get(ctx context.Context, name string) (string, bool, error) {
	key := Key(s.o.prefix, name)
	value, err := send(ctx, s.failover, key, s.o.deadline, func(ctx context.Context) (string, error) { return s.client.Get(ctx, key).Result() }, nil)
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, failed(tokenmanager.CodeCommandFailed, "GET", key, err)
	}
	return value, true, nil
}

// Set stores value under name (SET; with WithReplicas, then WAIT on the same connection).
// Errors: COMMAND_FAILED, UNEXPECTED_REPLY, REPLICATION_TIMEOUT.
func (s *Storage) Set(ctx context.Context, name, value string) error {
	key := Key(s.o.prefix, name)
	return s.write(ctx, "SET", key, func(p redis.Cmdable, ctx context.Context) *redis.StatusCmd { return p.Set(ctx, key, value, 0) }, value)
}

// SetExpiring stores value under name for lifetime (SET … PX; with WithReplicas, then WAIT): Redis
// drops it once the lifetime has passed (tokenmanager.ExpiringStorage; pending sign-ins).
// Errors: COMMAND_FAILED, UNEXPECTED_REPLY, REPLICATION_TIMEOUT, INVALID_OPTIONS (a lifetime under 1 ms).
func (s *Storage) SetExpiring(ctx context.Context, name, value string, lifetime time.Duration) error {
	key := Key(s.o.prefix, name)
	if lifetime < time.Millisecond {
		return invalid("lifetime", "at least 1 ms (PX counts milliseconds)")
	}
	return s.write(ctx, "SET", key, func(p redis.Cmdable, ctx context.Context) *redis.StatusCmd { return p.Set(ctx, key, value, lifetime) }, value)
}

// takeScript is GETDEL for a server older than Redis 6.2: one script, so one atomic step.
var takeScript = redis.NewScript(`local v = redis.call('GET', KEYS[1]) redis.call('DEL', KEYS[1]) return v`)

// Take returns the value of name and deletes it in one atomic step (GETDEL; on a server without it,
// an equivalent script), so that of any number of processes taking one key one gets it
// (tokenmanager.TakingStorage; pending sign-ins). Errors: COMMAND_FAILED.
func (s *Storage) Take(ctx context.Context, name string) (string, bool, error) {
	key := Key(s.o.prefix, name)
	value, err := within(ctx, s.o.deadline, func(ctx context.Context) (string, error) {
		value, err := s.client.GetDel(ctx, key).Result()
		if err != nil && strings.Contains(strings.ToLower(err.Error()), "unknown command") {
			return takeScript.Run(ctx, s.client, []string{key}).Text()
		}
		return value, err
	}, nil)
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, failed(tokenmanager.CodeCommandFailed, "GETDEL", key, err)
	}
	return value, true, nil
}

// Delete removes name (DEL; with WithReplicas, then WAIT). Errors: COMMAND_FAILED, REPLICATION_TIMEOUT.
func (s *Storage) Delete(ctx context.Context, name string) error {
	key := Key(s.o.prefix, name)
	return s.write(ctx, "DEL", key, func(p redis.Cmdable, ctx context.Context) *redis.StatusCmd {
		deleted := p.Del(ctx, key)
		status := redis.NewStatusCmd(ctx)
		if deleted.Err() != nil {
			status.SetErr(deleted.Err())
		} else {
			status.SetVal("OK")
		}
		return status
	}, "")
}

// write runs one write, and with replicas WAIT after it in one pipeline (one connection: WAIT counts
// the acknowledgements of that connection's writes).
func (s *Storage) write(ctx context.Context, command, key string, do func(redis.Cmdable, context.Context) *redis.StatusCmd, secret string) error {
	deadline := s.o.deadline + s.o.replicasTimeout
	type written struct {
		status string
		acked  int64
	}
	result, err := send(ctx, s.failover, key, deadline, func(ctx context.Context) (written, error) {
		if s.o.replicas == 0 {
			status := do(s.client, ctx)
			return written{status: status.Val()}, status.Err()
		}
		client, err := slotClient(ctx, s.client, key)
		if err != nil {
			return written{}, err
		}
		var status *redis.StatusCmd
		var wait *redis.Cmd
		_, err = client.Pipelined(ctx, func(p redis.Pipeliner) error {
			status = do(p, ctx)
			wait = p.Do(ctx, "WAIT", s.o.replicas, s.o.replicasTimeout.Milliseconds())
			return nil
		})
		if err != nil {
			return written{}, err
		}
		acked, err := wait.Int64()
		return written{status: status.Val(), acked: acked}, err
	}, nil)
	if err != nil {
		return failed(tokenmanager.CodeCommandFailed, command, key, err, secret)
	}
	if command == "SET" && result.status != "OK" {
		return tokenmanager.NewError(tokenmanager.CodeUnexpectedReply, fmt.Sprintf("SET of %s was not acknowledged with OK", key), nil)
	}
	if s.o.replicas > 0 && result.acked < int64(s.o.replicas) {
		return tokenmanager.NewError(tokenmanager.CodeReplicationTimeout,
			fmt.Sprintf("%d of %d replicas acknowledged the write of %s within %s", result.acked, s.o.replicas, key, s.o.replicasTimeout), nil)
	}
	return nil
}
