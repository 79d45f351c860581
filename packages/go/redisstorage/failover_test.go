package redisstorage_test

// A Redis Cluster failover lived through by long-lived clients: the primary of the session's slot
// is killed (SIGKILL) and its replica promoted (CLUSTER FAILOVER TAKEOVER), and storages whose
// go-redis clients talked to the dead primary must reach the promoted one at their next command.
// go-redis alone reloads its slot map only every ClusterStateReloadInterval (60 s by default): the
// clients here set it to an hour, so that only the storage's own reload can lead them there.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tenant-integration/sdk/packages/go/internal/rediscluster"
	"github.com/tenant-integration/sdk/packages/go/redisstorage"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// longLivedClient is a cluster client of c that would not reload its slot map on its own within
// the test.
func longLivedClient(t *testing.T, c *rediscluster.Cluster) *redis.ClusterClient {
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), ClusterStateReloadInterval: time.Hour})
	t.Cleanup(func() { client.Close() })
	return client
}

// failOver kills the primary serving key and promotes its replica; the promoted node's address.
func failOver(t *testing.T, c *rediscluster.Cluster, key string) string {
	t.Helper()
	owner, err := clusterClient(t, c).MasterForKey(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	primary := owner.Options().Addr
	replica, err := c.ReplicaOf(primary)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Kill(primary); err != nil {
		t.Fatal(err)
	}
	if err := c.Promote(replica); err != nil {
		t.Fatal(err)
	}
	return replica
}

func TestLongLivedStoragesReachThePromotedReplicaOfAKilledPrimaryAtTheirNextCommand(t *testing.T) {
	c := startClusterWith(t, rediscluster.Options{Primaries: 3, Replicas: 1, NodeTimeout: time.Second})
	ctx := context.Background()
	name := "tenant-integration:https://acme.tenant.test:demo:tokens"
	lockName := "tenant-integration:https://acme.tenant.test:demo:lock"
	key := redisstorage.Key("", name)
	// A command timeout far above what reaching the promoted node takes: what is asserted is that
	// the next command succeeds there, not how fast.
	patient := redisstorage.WithCommandTimeout(30 * time.Second)
	reader, _ := redisstorage.New(longLivedClient(t, c), patient)
	writer, _ := redisstorage.New(longLivedClient(t, c), patient, redisstorage.WithReplicas(1, time.Second))
	locker, _ := redisstorage.New(longLivedClient(t, c), patient)
	// Once acknowledged by the replica (a replica just joined is sent writes from its first
	// acknowledgement on, within a second).
	waitFor(t, "the replica to acknowledge a write", func() bool { return writer.Set(ctx, name, `{"n":"1"}`) == nil })
	for _, s := range []*redisstorage.Storage{reader, locker} { // each client has talked to the primary
		if _, ok, err := s.Get(ctx, name); !ok || err != nil {
			t.Fatalf("before the failover: %v %v", ok, err)
		}
	}

	promoted := failOver(t, c, key)
	began := time.Now()
	defer func() { t.Logf("after the promotion: %s", time.Since(began)) }()

	if value, ok, err := reader.Get(ctx, name); err != nil || !ok || value != `{"n":"1"}` {
		t.Fatalf("the first GET after the promotion: %q %v %v", value, ok, err)
	}
	t.Logf("read after %s", time.Since(began))
	// The promoted node has no replica of its own: the write lands there and its WAIT counts none.
	err := writer.Set(ctx, name, `{"n":"2"}`)
	if !errors.Is(err, &tokenmanager.Error{Code: tokenmanager.CodeReplicationTimeout}) {
		t.Fatalf("the first write after the promotion: %v", err)
	}
	t.Logf("written after %s", time.Since(began))
	if value := nodeClient(t, promoted).Get(ctx, key).Val(); value != `{"n":"2"}` {
		t.Fatalf("the promoted node holds %q", value)
	}
	ran := false
	if err := locker.Lock().Do(ctx, lockName, func(context.Context, tokenmanager.Held) error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("the first lock after the promotion: %v", err)
	}
}
