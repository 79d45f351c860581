package redisstorage_test

// A lock held by one task while a waiter queues behind it: the setup of the tests of how a waiter
// learns of the release, on one server (redisstorage_test.go) and on a cluster (cluster_test.go).

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tenant-integration/sdk/packages/go/redisstorage"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// queued is a lock name held by a holder's task until release, and a waiter's Do queued on it.
type queued struct {
	letGo chan struct{}
	done  chan error
}

// holdAndQueue has holder take name and keep it until release is called; once holder holds it, it
// starts waiter's Do on the same name (with a task that does nothing).
func holdAndQueue(ctx context.Context, holder, waiter *redisstorage.Lock, name string) *queued {
	q := &queued{letGo: make(chan struct{}), done: make(chan error, 2)}
	taken := make(chan struct{})
	go func() {
		q.done <- holder.Do(ctx, name, func(context.Context, tokenmanager.Held) error {
			close(taken)
			<-q.letGo
			return nil
		})
	}()
	<-taken
	go func() {
		q.done <- waiter.Do(ctx, name, func(context.Context, tokenmanager.Held) error { return nil })
	}()
	return q
}

// release ends the holder's task: the lock is let go.
func (q *queued) release() { close(q.letGo) }

// bothDone waits until the holder's and the waiter's Do have both returned without an error; it fails
// with stuck when bounded is done first.
func (q *queued) bothDone(t *testing.T, bounded context.Context, stuck string) {
	t.Helper()
	for range 2 {
		select {
		case err := <-q.done:
			if err != nil {
				t.Fatal(err)
			}
		case <-bounded.Done():
			t.Fatal(stuck)
		}
	}
}

// waitForSubscribers waits until the release channel of the lock key has n subscribers (the waiter
// subscribes on a connection of its own while it waits).
func waitForSubscribers(t *testing.T, client *redis.Client, key string, n int64) {
	t.Helper()
	channel := redisstorage.ReleasedChannel(key)
	waitFor(t, "the waiter to subscribe", func() bool {
		return client.PubSubNumSub(context.Background(), channel).Val()[channel] >= n
	})
}

// waitFor polls until ready (a readiness wait, not a timing assertion: the bound only ends a hung run).
func waitFor(t *testing.T, what string, ready func() bool) {
	t.Helper()
	for start := time.Now(); !ready(); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 60*time.Second {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}
