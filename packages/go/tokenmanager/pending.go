package tokenmanager

// Pending sign-ins by state (spec/token-store/README.md, "Pending sign-ins by state"): each sign-in
// begun is stored under a name of its own, found at the callback by its state and taken once, so
// that any number may be in flight (two tabs, a double click, thousands of users of one server).
// Written with a lifetime where the storage can (ExpiringStorage), taken atomically where it can
// (TakingStorage); otherwise the documented fallback, with a warning once.

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/tenant-integration/sdk/packages/go/internal/pendingrecord"
)

// pendingStorage keeps the pending sign-ins of one client in a storage.
type pendingStorage struct {
	storage Storage
	log     *slog.Logger
	prefix  string // tenant-integration:<origin>:<clientId>:pending:
	warned  *sync.Once
}

func newPendingStorage(storage Storage, log *slog.Logger, origin, clientID string) pendingStorage {
	return pendingStorage{storage: storage, log: log, prefix: pendingPrefix(origin, clientID), warned: &sync.Once{}}
}

// name is the storage name of the pending sign-in of state.
func (p pendingStorage) name(state string) string { return p.prefix + pendingKey(state) }

// put stores record for lifetime (SetExpiring), or without one (Set) where the storage cannot.
func (p pendingStorage) put(ctx context.Context, record pendingrecord.Record, lifetime time.Duration) error {
	p.warnOnce()
	name := p.name(record.State)
	if expiring, ok := p.storage.(ExpiringStorage); ok {
		return expiring.SetExpiring(ctx, name, record.Text(), lifetime)
	}
	return p.storage.Set(ctx, name, record.Text())
}

// take reads and deletes the pending sign-in of state in one step (Take); where the storage cannot,
// Get then Delete, which is not atomic. The record is nil when there is none or it does not validate.
func (p pendingStorage) take(ctx context.Context, state string) (*pendingrecord.Record, error) {
	name := p.name(state)
	var raw string
	var present bool
	var err error
	if taking, ok := p.storage.(TakingStorage); ok {
		raw, present, err = taking.Take(ctx, name)
	} else {
		raw, present, err = p.storage.Get(ctx, name)
		if err == nil && present {
			err = p.storage.Delete(ctx, name)
		}
	}
	if err != nil || !present {
		return nil, err
	}
	record, ok := pendingrecord.Parse(raw)
	if !ok {
		p.log.Warn("the pending sign-in found for the callback's state is not a valid record; it is dropped", "key", name)
		return nil, nil
	}
	return &record, nil
}

// warnOnce says, at the first sign-in, what the storage lacks of what pending sign-ins use.
func (p pendingStorage) warnOnce() {
	p.warned.Do(func() {
		if _, ok := p.storage.(ExpiringStorage); !ok {
			p.log.Warn("the storage has no SetExpiring: a sign-in begun and never completed stays in it until removed (its expiry still refuses it)")
		}
		if _, ok := p.storage.(TakingStorage); !ok {
			p.log.Warn("the storage has no Take: a pending sign-in is read, then deleted, which is not atomic: two callbacks of one state arriving at once may both exchange the code (a storage several processes share needs Take)")
		}
	})
}
