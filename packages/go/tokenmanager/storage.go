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

// alwaysHeld is the Held of a lock that cannot tell.
type alwaysHeld struct{}

func (alwaysHeld) IsHeld(context.Context) bool { return true }

// MemoryStorage keeps the records in memory, for one process: the default. It brings no
// cross-process lock: the manager uses an in-process lock by name.
type MemoryStorage struct {
	mu   sync.Mutex
	data map[string]string
}

// NewMemoryStorage makes an empty MemoryStorage.
func NewMemoryStorage() *MemoryStorage { return &MemoryStorage{data: map[string]string{}} }

// Get returns the value of key.
func (s *MemoryStorage) Get(_ context.Context, key string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	value, ok := s.data[key]
	return value, ok, nil
}

// Set stores value under key.
func (s *MemoryStorage) Set(_ context.Context, key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data[key] = value
	return nil
}

// Delete removes key.
func (s *MemoryStorage) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.data, key)
	return nil
}

// ProcessLock is an in-process lock by name with a bounded wait: the lock of a storage that brings
// none. Its zero value is ready to use; Timeout defaults to 60 s.
type ProcessLock struct {
	Timeout time.Duration
	mu      sync.Mutex
	locks   map[string]chan struct{}
}

// Do runs task holding the in-process lock name; LOCK_TIMEOUT after Timeout.
func (l *ProcessLock) Do(ctx context.Context, name string, task func(context.Context, Held) error) error {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]chan struct{}{}
	}
	slot, ok := l.locks[name]
	if !ok {
		slot = make(chan struct{}, 1)
		l.locks[name] = slot
	}
	l.mu.Unlock()
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case slot <- struct{}{}:
	case <-timer.C:
		return newError(CodeLockTimeout, "the in-process lock %s stayed held for %s", name, timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-slot }()
	return task(ctx, alwaysHeld{})
}

var processLocks = &ProcessLock{}

func itoa(n int) string { return strconv.Itoa(n) }
