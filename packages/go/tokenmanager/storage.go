package tokenmanager

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"
)

// Storage keeps the manager's records (JSON texts) under string keys. Values are secrets: a
// storage never logs them. Set returns only once the value is durable.
type Storage interface {
	Get(ctx context.Context, key string) (value string, ok bool, err error)
	Set(ctx context.Context, key, value string) error
	Delete(ctx context.Context, key string) error
}

// ExpiringStorage is a storage that can keep a value for a lifetime only, dropping it once the
// lifetime has passed without a scan of every key (Redis: SET … PX; a token file: on its next write;
// memory: when read or at a later write). Pending sign-ins use it (spec/token-store/README.md, "What
// a storage offers"); without it they are stored with Set, and one never completed stays until
// removed (its expiry still refuses it). The kit's storages are all ExpiringStorages.
type ExpiringStorage interface {
	Storage
	SetExpiring(ctx context.Context, key, value string, lifetime time.Duration) error
}

// TakingStorage is a storage that reads and deletes a value in one atomic step: of any number of
// concurrent Takes of one key, in any processes sharing the storage, at most one returns it. A
// pending sign-in is taken so, used once whatever happens (Redis: GETDEL; a token file: under its
// write lock). Without it the manager falls back on Get then Delete, which is not atomic: two
// callbacks of one state arriving at once may both exchange the code, and the tenant may revoke the
// tokens of a code presented twice (RFC 6749 §4.1.2). A storage several processes share needs Take.
// The kit's storages are all TakingStorages.
type TakingStorage interface {
	Storage
	Take(ctx context.Context, key string) (value string, ok bool, err error)
}

// Held tells a task running under a Lock whether the lock is still its own (a fresh check: false
// once another process took it over while this one was paused).
type Held interface {
	IsHeld(ctx context.Context) bool
}

// Lock runs task while holding the lock name across every process that shares the storage, with a
// bounded wait (LOCK_TIMEOUT). It is the bring-your-own-lock seam (WithLock).
type Lock interface {
	Do(ctx context.Context, name string, task func(ctx context.Context, held Held) error) error
}

// WaitingLock is a Lock whose wait for another holder can end early: until is called each time the
// wait wakes (the storage may have changed, or a poll pause passed), before the lock is tried again;
// when it returns true the wait ends, task never runs, and DoUntil returns ErrLockWaitEnded. The
// manager passes one that re-reads the tokens, so that a process stops waiting once another has
// stored fresh ones (filestorage's and redisstorage's locks are WaitingLocks).
type WaitingLock interface {
	Lock
	DoUntil(ctx context.Context, name string, until func(ctx context.Context) bool, task func(ctx context.Context, held Held) error) error
}

// ErrLockWaitEnded is what a WaitingLock returns when until ended its wait: a signal to the manager,
// which then uses the tokens it found; it never reaches a caller of AccessToken.
var ErrLockWaitEnded = errors.New("the wait for the lock ended: no longer needed")

// LockingStorage is a storage that brings its own cross-process lock (filestorage, Redis). The
// manager uses it unless WithLock gives another, and then also writes refresh intents
// (spec/token-store/README.md) so that a paused process never presents a rotated-away token.
type LockingStorage interface {
	Storage
	Lock() Lock
}

// KeyLocator is a storage that says where a user finds a key in it: redisstorage gives the Redis key
// (prefix and hash tag included, as redis-cli shows it). The manager's messages about a stored value
// name that, and the key itself for a storage that is no KeyLocator.
type KeyLocator interface {
	Where(key string) string
}

// where is key as a user finds it in the manager's storage (see KeyLocator), for a message.
func (m *Manager) where(key string) string {
	if locator, ok := m.storage.(KeyLocator); ok {
		return locator.Where(key)
	}
	return key
}

// SessionLockingStorage is a LockingStorage whose lock shares less between sessions when given one
// per session: filestorage's SessionLock takes a lock directory per session name
// (<file>.<hash>.refresh.lock) where its Lock takes the one <file>.refresh.lock of the file, so
// that one session's refresh never waits for another's. The managers of sessions (WithSessionID,
// Sessions) use SessionLock; a manager without a session id uses Lock. A storage whose Lock already
// locks by name (Redis, the in-process lock) needs no SessionLock.
type SessionLockingStorage interface {
	LockingStorage
	SessionLock() Lock
}

// alwaysHeld is the Held of a lock that cannot tell.
type alwaysHeld struct{}

func (alwaysHeld) IsHeld(context.Context) bool { return true }

// MemoryStorage keeps the records in memory, for one process: the default. It brings no
// cross-process lock: the manager uses an in-process lock by name. It is an ExpiringStorage (an
// expired value is dropped when read, and at every later write) and a TakingStorage.
type MemoryStorage struct {
	mu       sync.Mutex
	data     map[string]string
	expiries map[string]time.Time // of the values set with SetExpiring, on the monotonic clock
}

// NewMemoryStorage makes an empty MemoryStorage.
func NewMemoryStorage() *MemoryStorage {
	return &MemoryStorage{data: map[string]string{}, expiries: map[string]time.Time{}}
}

// Get returns the value of key.
func (s *MemoryStorage) Get(_ context.Context, key string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	value, ok := s.live(key, time.Now())
	return value, ok, nil
}

// Set stores value under key.
func (s *MemoryStorage) Set(_ context.Context, key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropExpired(time.Now())
	s.data[key] = value
	delete(s.expiries, key)
	return nil
}

// SetExpiring stores value under key for lifetime: once it has passed, the value is gone.
func (s *MemoryStorage) SetExpiring(_ context.Context, key, value string, lifetime time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	s.dropExpired(now)
	s.data[key] = value
	s.expiries[key] = now.Add(lifetime)
	return nil
}

// Take returns the value of key and deletes it, in one step.
func (s *MemoryStorage) Take(_ context.Context, key string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	value, ok := s.live(key, time.Now())
	delete(s.data, key)
	delete(s.expiries, key)
	return value, ok, nil
}

// Delete removes key.
func (s *MemoryStorage) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.data, key)
	delete(s.expiries, key)
	return nil
}

// live is the value of key unless it has expired (then dropped); called with s.mu held. A zero
// MemoryStorage (not made by NewMemoryStorage) is empty.
func (s *MemoryStorage) live(key string, now time.Time) (string, bool) {
	if until, ok := s.expiries[key]; ok && !now.Before(until) {
		delete(s.data, key)
		delete(s.expiries, key)
		return "", false
	}
	value, ok := s.data[key]
	return value, ok
}

// dropExpired drops every expired value; called with s.mu held, at each write, so that abandoned
// sign-ins never pile up. Only the values set with SetExpiring are looked at.
func (s *MemoryStorage) dropExpired(now time.Time) {
	if s.data == nil {
		s.data, s.expiries = map[string]string{}, map[string]time.Time{}
	}
	for key, until := range s.expiries {
		if !now.Before(until) {
			delete(s.data, key)
			delete(s.expiries, key)
		}
	}
}

// ProcessLock is an in-process lock by name with a bounded wait: the lock of a storage that brings
// none. Its zero value is ready to use; Timeout defaults to 60 s. A name takes memory only while a
// task holds or waits for it.
type ProcessLock struct {
	Timeout time.Duration
	mu      sync.Mutex
	locks   map[string]*processSlot
}

type processSlot struct {
	gate  chan struct{}
	users int
}

// Do runs task holding the in-process lock name; LOCK_TIMEOUT after Timeout.
func (l *ProcessLock) Do(ctx context.Context, name string, task func(context.Context, Held) error) error {
	slot := l.slot(name)
	defer l.release(name, slot)
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case slot.gate <- struct{}{}:
	case <-timer.C:
		return newError(CodeLockTimeout, "the in-process lock %s stayed held for %s", name, timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-slot.gate }()
	return task(ctx, alwaysHeld{})
}

// slot is the gate of name, counted as used until release.
func (l *ProcessLock) slot(name string) *processSlot {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.locks == nil {
		l.locks = map[string]*processSlot{}
	}
	slot, ok := l.locks[name]
	if !ok {
		slot = &processSlot{gate: make(chan struct{}, 1)}
		l.locks[name] = slot
	}
	slot.users++
	return slot
}

func (l *ProcessLock) release(name string, slot *processSlot) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if slot.users--; slot.users == 0 {
		delete(l.locks, name)
	}
}

var processLocks = &ProcessLock{}

func itoa(n int) string { return strconv.Itoa(n) }
