package redisstorage

// Waking the waiters of a Redis lock when its holder lets it go, by pub/sub: the protocol every kit
// speaks (spec/token-store/README.md, "Redis: waking waiters"). A message only shortens a wait: a
// waiter that cannot subscribe, or whose message never comes, polls as before.

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// ReleasedChannel is the channel a lock's release is announced on: the lock's Redis key (see Key)
// followed by ":released". On a cluster a PUBLISH reaches every node, and the waiter subscribes on
// the primary of the channel's slot.
func ReleasedChannel(key string) string { return key + ":released" }

// announceRelease publishes "" (the message carries nothing) after this owner's own compare-and-DEL
// deleted the key. A failure (an ACL denying PUBLISH, Redis gone) is ignored: the waiters poll.
func announceRelease(ctx context.Context, client redis.UniversalClient, f *failover, key string, deadline time.Duration) {
	_, _ = send(ctx, f, key, deadline, func(ctx context.Context) (int64, error) {
		return client.Publish(ctx, ReleasedChannel(key), "").Result()
	}, nil)
}

// watch is a waiter's subscription to a lock's releases, open for one wait. A nil *watch polls.
type watch struct {
	pubsub   *redis.PubSub
	messages <-chan *redis.Message
}

// watchReleases subscribes on a connection of its own and returns once the subscription is
// confirmed (so that a try made after it cannot miss a release); nil when none can be had within
// timeout (an ACL without SUBSCRIBE: NOPERM, a connection that fails).
func watchReleases(ctx context.Context, client redis.UniversalClient, key string, timeout time.Duration) *watch {
	pubsub := client.Subscribe(context.WithoutCancel(ctx), ReleasedChannel(key))
	confirm, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := within(confirm, timeout, func(ctx context.Context) (any, error) { return pubsub.Receive(ctx) }, nil); err != nil {
		_ = pubsub.Close()
		return nil
	}
	return &watch{pubsub: pubsub, messages: pubsub.Channel()}
}

// next waits for a release announced (since the last call), pause, or ctx's end (its error).
func (w *watch) next(ctx context.Context, pause time.Duration) error {
	timer := time.NewTimer(pause)
	defer timer.Stop()
	var messages <-chan *redis.Message
	if w != nil {
		messages = w.messages
	}
	select {
	case <-messages:
	case <-timer.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// close unsubscribes by closing the connection; safe on nil.
func (w *watch) close() {
	if w != nil {
		_ = w.pubsub.Close()
	}
}
