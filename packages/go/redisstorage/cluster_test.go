package redisstorage_test

// Against a real Redis Cluster of three primaries (redis-server --cluster-enabled yes on free
// loopback ports, joined by redis-cli --cluster create: internal/rediscluster), started per test and
// stopped, by pid, after. Skipped with -short or without redis-server and redis-cli.

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/internal/rediscluster"
	"github.com/tenant-integration/sdk/packages/go/redisstorage"
	"github.com/tenant-integration/sdk/packages/go/tenanttest"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// startCluster starts a cluster of three primaries (the module's one starter, internal/rediscluster),
// stopped when the test ends.
func startCluster(t *testing.T) *rediscluster.Cluster {
	t.Helper()
	return startClusterWith(t, rediscluster.Options{Primaries: 3})
}

// startClusterWith starts the cluster options describe, stopped when the test ends.
func startClusterWith(t *testing.T, options rediscluster.Options) *rediscluster.Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: a Redis Cluster is real processes")
	}
	c, err := rediscluster.Start(options)
	if errors.Is(err, rediscluster.ErrNotInstalled) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// clusterState is cluster_state in CLUSTER INFO of the node at addr ("" when it does not answer).
func clusterState(addr string) string {
	probe := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer probe.Close()
	info, err := probe.ClusterInfo(context.Background()).Result()
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(info, "\n") {
		if state, ok := strings.CutPrefix(strings.TrimSpace(line), "cluster_state:"); ok {
			return state
		}
	}
	return ""
}

// clusterClient is a cluster client of c, closed when the test ends.
func clusterClient(t *testing.T, c *rediscluster.Cluster) *redis.ClusterClient {
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	t.Cleanup(func() { client.Close() })
	return client
}

// signIn signs the first manager in on the sandbox.
func signIn(t *testing.T, m *tokenmanager.Manager) {
	t.Helper()
	request, err := m.BeginAuthorization(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	callback, err := tenanttest.Approve(context.Background(), request.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.CompleteAuthorization(context.Background(), callback); err != nil {
		t.Fatal(err)
	}
}

func sessionName(m *tokenmanager.Manager, kind string) string {
	return "tenant-integration:" + m.BaseURL() + ":" + tenanttest.DefaultClientID + ":" + kind
}

func TestTheKeysOfOneSessionSitInOneSlotOfACluster(t *testing.T) {
	c := startCluster(t)
	client := clusterClient(t, c)
	ctx := context.Background()
	session := "tenant-integration:https://acme.tenant.test:demo:"
	slots := map[int64]bool{}
	for _, kind := range []string{"tokens", "pending", "intent", "lock"} {
		slot, err := client.ClusterKeySlot(ctx, redisstorage.Key("app:", session+kind)).Result()
		if err != nil {
			t.Fatal(err)
		}
		slots[slot] = true
	}
	if len(slots) != 1 {
		t.Fatalf("one session's keys are in %d slots: %v", len(slots), slots)
	}
}

func TestManagersOnAClusterSignInAndMakeOneRefreshAfterExpiry(t *testing.T) {
	c := startCluster(t)
	sandbox := tenanttest.Start(t)
	var managers []*tokenmanager.Manager
	for range 4 {
		storage, err := redisstorage.New(clusterClient(t, c), redisstorage.WithPrefix("fleet:"))
		if err != nil {
			t.Fatal(err)
		}
		managers = append(managers, manager(t, sandbox.URL, storage, tokenmanager.WithClock(sandbox.Now)))
	}
	signIn(t, managers[0])
	stored, err := clusterClient(t, c).Get(context.Background(), redisstorage.Key("fleet:", sessionName(managers[0], "tokens"))).Result()
	if err != nil || !strings.Contains(stored, "refresh_token") {
		t.Fatalf("the tokens are not under the session's key on the cluster: %v", err)
	}
	oneRefreshAfterExpiry(t, sandbox, managers, 20)
}

// TestMain runs the child processes of TestProcessesOnAClusterMakeOneRefreshAfterExpiry (this test
// binary, with REDISSTORAGE_CLUSTER_CHILD set), and the tests otherwise.
func TestMain(m *testing.M) {
	if addrs := os.Getenv("REDISSTORAGE_CLUSTER_CHILD"); addrs != "" {
		if err := clusterChild(strings.Split(addrs, ",")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// clusterChild is one process of a fleet: one manager on the cluster asks for a token and prints
// its SHA-256, never the token.
func clusterChild(addrs []string) error {
	offset, err := time.ParseDuration(os.Getenv("REDISSTORAGE_CLOCK_OFFSET"))
	if err != nil {
		return err
	}
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer client.Close()
	storage, err := redisstorage.New(client, redisstorage.WithPrefix("fleet:"))
	if err != nil {
		return err
	}
	m, err := tokenmanager.New(tokenmanager.Config{BaseURL: os.Getenv("REDISSTORAGE_SANDBOX"), ClientID: tenanttest.DefaultClientID,
		RedirectURI: tenanttest.DefaultRedirectURI, Scopes: []scope.Scope{scope.ProfileRead}},
		tokenmanager.WithStorage(storage), tokenmanager.WithClock(func() time.Time { return time.Now().Add(offset) }))
	if err != nil {
		return err
	}
	token, err := m.AccessToken(context.Background())
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(token))
	fmt.Println("token-sha256=" + hex.EncodeToString(sum[:]))
	return nil
}

func TestProcessesOnAClusterMakeOneRefreshAfterExpiry(t *testing.T) {
	c := startCluster(t)
	sandbox := tenanttest.Start(t)
	storage, err := redisstorage.New(clusterClient(t, c), redisstorage.WithPrefix("fleet:"))
	if err != nil {
		t.Fatal(err)
	}
	first := manager(t, sandbox.URL, storage, tokenmanager.WithClock(sandbox.Now))
	signIn(t, first)
	since, _ := sandbox.LastSeq()
	if err := sandbox.Advance(16 * time.Minute); err != nil {
		t.Fatal(err)
	}
	offset := time.Until(sandbox.Now()).Round(time.Millisecond)
	executable, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const processes = 4
	sums := make([]string, processes)
	var wg sync.WaitGroup
	for i := range processes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			child := exec.Command(executable)
			child.Env = append(os.Environ(), "REDISSTORAGE_CLUSTER_CHILD="+strings.Join(c.Addrs(), ","),
				"REDISSTORAGE_SANDBOX="+sandbox.URL, "REDISSTORAGE_CLOCK_OFFSET="+offset.String())
			out, err := child.CombinedOutput()
			if err != nil {
				t.Errorf("child %d: %v\n%s", i, err, out)
				return
			}
			for scanner := bufio.NewScanner(strings.NewReader(string(out))); scanner.Scan(); {
				if sum, ok := strings.CutPrefix(scanner.Text(), "token-sha256="); ok {
					sums[i] = sum
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if n, _ := sandbox.RefreshCount(since); n != 1 {
		t.Fatalf("%d refreshes after one expiry by %d processes", n, processes)
	}
	for i, sum := range sums {
		if sum == "" || sum != sums[0] {
			t.Fatalf("process %d holds another token (or none)", i)
		}
	}
}

func TestAWaiterOnAClusterIsWokenByTheRelease(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	name := "tenant-integration:https://acme.tenant.test:demo:lock"
	holder, _ := redisstorage.NewLock(clusterClient(t, c))
	// The waiter's poll pause is a minute: only the announcement wakes it within the test's bound.
	waiter, _ := redisstorage.NewLock(clusterClient(t, c), redisstorage.WithRetryDelay(time.Minute, time.Minute))
	q := holdAndQueue(ctx, holder, waiter, name)
	channel := redisstorage.ReleasedChannel(redisstorage.Key("", name))
	probe := clusterClient(t, c)
	waitFor(t, "the waiter to subscribe", func() bool {
		var subscribers atomic.Int64 // ForEachMaster calls on every primary at once
		_ = probe.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			subscribers.Add(node.PubSubNumSub(ctx, channel).Val()[channel])
			return nil
		})
		return subscribers.Load() == 1
	})
	q.release()
	bounded, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	q.bothDone(t, bounded, "the waiter was not woken by the release announced on the cluster")
}

func TestAClusterThatIsDownIsStorageFailedSayingSo(t *testing.T) {
	c := startCluster(t)
	client := clusterClient(t, c)
	// A cluster that is down is retried until the command timeout (it may be failing over): short here.
	storage, _ := redisstorage.New(client, redisstorage.WithCommandTimeout(time.Second))
	m := manager(t, "https://acme.tenant.test", storage)
	ctx := context.Background()
	// Stop a primary that does not serve the session's slot: the session's own node still answers,
	// with CLUSTERDOWN once the others agree that a slot has no primary.
	own, err := client.MasterForKey(ctx, redisstorage.Key("", sessionName(m, "tokens")))
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range c.Addrs() {
		if addr != own.Options().Addr {
			if err := c.Kill(addr); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	waitFor(t, "the cluster to see the lost primary", func() bool { return clusterState(own.Options().Addr) == "fail" })
	_, _, err = storage.Get(ctx, sessionName(m, "tokens"))
	if !errors.Is(err, &tokenmanager.Error{Code: tokenmanager.CodeCommandFailed}) || !strings.Contains(err.Error(), "the Redis Cluster is down") {
		t.Fatalf("a GET on a cluster that is down: %v", err)
	}
	_, err = m.AccessToken(ctx)
	if !errors.Is(err, tokenmanager.ErrStorageFailed) || !strings.Contains(chain(err), "the Redis Cluster is down") {
		t.Fatalf("the manager on a cluster that is down: %s", chain(err))
	}
}

// chain is an error's message and its causes' messages, as a reader following the causes sees them.
func chain(err error) string {
	var messages []string
	for ; err != nil; err = errors.Unwrap(err) {
		messages = append(messages, err.Error())
	}
	return strings.Join(messages, " <- ")
}

// nodeClient is a plain client of one cluster node.
func nodeClient(t *testing.T, addr string) *redis.Client {
	client := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { client.Close() })
	return client
}

// moveSlot moves slot, keys included, from the node at from to the node at to, the way redis-cli
// --cluster reshard does (IMPORTING, MIGRATING, MIGRATE, then SETSLOT NODE on every node).
func moveSlot(t *testing.T, c *rediscluster.Cluster, slot int, from, to string) {
	t.Helper()
	ctx := context.Background()
	source, target := nodeClient(t, from), nodeClient(t, to)
	sourceID, targetID := source.Do(ctx, "CLUSTER", "MYID").Val(), target.Do(ctx, "CLUSTER", "MYID").Val()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(target.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", sourceID).Err())
	must(source.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", targetID).Err())
	keys, err := source.ClusterGetKeysInSlot(ctx, slot, 1000).Result()
	must(err)
	if len(keys) > 0 {
		host, port, _ := net.SplitHostPort(to)
		args := []any{"MIGRATE", host, port, "", 0, 5000, "KEYS"}
		for _, key := range keys {
			args = append(args, key)
		}
		must(source.Do(ctx, args...).Err())
	}
	must(target.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", targetID).Err())
	for _, addr := range c.Addrs() {
		if addr != to {
			must(nodeClient(t, addr).Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", targetID).Err())
		}
	}
}

func TestASessionWhoseSlotMovedIsFollowedEvenByAClientThatFollowsNoRedirect(t *testing.T) {
	c := startCluster(t)
	sandbox := tenanttest.Start(t)
	ctx := context.Background()
	following := clusterClient(t, c)
	storage, _ := redisstorage.New(following)
	m := manager(t, sandbox.URL, storage, tokenmanager.WithClock(sandbox.Now))
	signIn(t, m)
	before, err := m.AccessToken(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A client that follows no redirect, its slot map read before the move: the storage reloads it
	// on the MOVED answer and runs the command again.
	strict := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), MaxRedirects: -1})
	t.Cleanup(func() { strict.Close() })
	strictStorage, _ := redisstorage.New(strict)
	if _, ok, err := strictStorage.Get(ctx, sessionName(m, "tokens")); !ok || err != nil {
		t.Fatalf("before the move: %v %v", ok, err)
	}

	key := redisstorage.Key("", sessionName(m, "tokens"))
	slot := int(following.ClusterKeySlot(ctx, key).Val())
	owner, err := following.MasterForKey(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	from, to := owner.Options().Addr, c.Addrs()[0]
	if to == from {
		to = c.Addrs()[1]
	}
	moveSlot(t, c, slot, from, to)

	if _, ok, err := strictStorage.Get(ctx, sessionName(m, "tokens")); !ok || err != nil {
		t.Fatalf("after the move, on a client that follows no redirect: %v %v", ok, err)
	}
	after, err := m.AccessToken(ctx)
	if err != nil || after != before {
		t.Fatalf("the session's tokens are read from the slot's new node: %v", err)
	}
	// and refreshed there: the lock, its scripts and the tokens' write on the new node
	if err := sandbox.Advance(16 * time.Minute); err != nil {
		t.Fatal(err)
	}
	if refreshed, err := m.AccessToken(ctx); err != nil || refreshed == before {
		t.Fatalf("a refresh after the move: %v", err)
	}
	if n := nodeClient(t, to).Exists(ctx, key).Val(); n != 1 {
		t.Fatal("the slot's new node does not hold the tokens")
	}
}

func TestAWriteWithReplicasOnAClusterWaitsOnTheConnectionToTheKeysPrimary(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	client := clusterClient(t, c)
	name := "tenant-integration:https://acme.tenant.test:demo:tokens"
	owner, err := client.MasterForKey(ctx, redisstorage.Key("", name))
	if err != nil {
		t.Fatal(err)
	}
	// A replica of the key's primary only: a WAIT sent anywhere else counts no acknowledgement.
	replica := addReplica(t, c, owner.Options().Addr)
	storage, _ := redisstorage.New(clusterClient(t, c), redisstorage.WithReplicas(1, 5*time.Second))
	for i := range 5 {
		if err := storage.Set(ctx, name, fmt.Sprintf(`{"n":"%d"}`, i)); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	readOnly := nodeClient(t, replica)
	if err := readOnly.Do(ctx, "READONLY").Err(); err != nil {
		t.Fatal(err)
	}
	if value := readOnly.Get(ctx, redisstorage.Key("", name)).Val(); value != `{"n":"4"}` {
		t.Fatalf("the replica holds %q after the acknowledged write", value)
	}
}

// addReplica starts a fourth node and makes it a replica of the primary at primary; its address.
func addReplica(t *testing.T, c *rediscluster.Cluster, primary string) string {
	t.Helper()
	addr, err := c.AddNode()
	if err != nil {
		t.Fatal(err)
	}
	replica := nodeClient(t, addr)
	ctx := context.Background()
	host, primaryPort, _ := net.SplitHostPort(primary)
	if err := replica.Do(ctx, "CLUSTER", "MEET", host, primaryPort, c.BusPort(primary)).Err(); err != nil {
		t.Fatal(err)
	}
	primaryClient := nodeClient(t, primary)
	primaryID := primaryClient.Do(ctx, "CLUSTER", "MYID").Val()
	waitFor(t, "the replica to know the primary", func() bool {
		return replica.Do(ctx, "CLUSTER", "REPLICATE", primaryID).Err() == nil
	})
	waitFor(t, "the replica to be in sync", func() bool {
		info := primaryClient.Info(ctx, "replication").Val()
		return strings.Contains(info, "connected_slaves:1") && strings.Contains(info, "state=online")
	})
	return addr
}

func TestAClusterClientOnASingleServerIsAnErrorThatSaysSo(t *testing.T) {
	s := startRedis(t)
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{s.addr}})
	t.Cleanup(func() { client.Close() })
	storage, _ := redisstorage.New(client)
	_, _, err := storage.Get(context.Background(), "tenant-integration:https://acme.tenant.test:demo:tokens")
	if !errors.Is(err, &tokenmanager.Error{Code: tokenmanager.CodeCommandFailed}) || !strings.Contains(err.Error(), "give a redis.Client") {
		t.Fatalf("%v", err)
	}
}
