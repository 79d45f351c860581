// Command failover measures, for issue 31, how often a session survives its Redis Cluster primary
// being killed right after a refresh, with the replica promoted by CLUSTER FAILOVER, with and
// without redisstorage.WithReplicas (WAIT). The protocol of the TypeScript kit's
// packages/token-store-redis/scripts/failover-trials.mjs, so the kits' figures compare. Needs
// redis-server and redis-cli, and the sandbox (tenanttest finds it). From this module:
//
//	go run ./internal/cmd/failover [-settle connected] [trials per mode, default 50]
//
// Each trial: a manager signs in on a 3-primary cluster with a replica per primary; the sandbox's
// clock passes the access token's expiry and the manager refreshes (the tenant rotates the refresh
// token, the storage writes the new one: SET, and with WithReplicas WAIT 1); right after the
// refresh returned, the primary of the session's slot is killed (SIGKILL) and its replica promoted
// (CLUSTER FAILOVER TAKEOVER: at once, without the dead primary's agreement). A second manager, on
// cluster connections of its own as another process would have, then needs a token after the next
// expiry: the session is kept when it refreshes with the rotated token the replica holds, and lost
// when the replica lacked the last write (it presents the rotated-away token: the sandbox, under
// strict rotation, revokes the family). The killed node is restarted as a replica of the new
// primary, and the next trial waits until the cluster has settled: every primary's replica has
// received a probe write made on the primary, so it is sent the primary's writes as they are made
// (see receives; `-settle connected` waits only for a connected replica not in a bulk transfer, the
// earlier protocol, to compare).
//
// Each trial prints the replication offsets at the kill: the primary's master_repl_offset and the
// replica's slave_repl_offset and link status, read together over open connections right before
// the kill, and the replica's offset right after it (what it was promoted with).
//
// The cluster is internal/rediscluster's, the one the module's tests use. Never imported; not a
// test (a measurement: nothing is asserted).
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
	"github.com/tenant-integration/sdk/packages/go/internal/rediscluster"
	"github.com/tenant-integration/sdk/packages/go/redisstorage"
	"github.com/tenant-integration/sdk/packages/go/tenanttest"
	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

const (
	clientID = "failover-demo"
	redirect = "http://127.0.0.1:53682/callback"
	// What the TypeScript trials pass: one replica, at most a second.
	replicaCount   = 1
	replicaTimeout = time.Second
)

func main() {
	settle := flag.String("settle", "caught-up", "what the next trial waits for: caught-up (every replica's offset has reached its primary's) or connected (the earlier protocol)")
	flag.Parse()
	if *settle != "caught-up" && *settle != "connected" {
		fail(fmt.Errorf("-settle is caught-up or connected, not %q", *settle))
	}
	trials := 50
	if flag.NArg() > 0 {
		n, err := strconv.Atoi(flag.Arg(0))
		if err != nil || n < 1 {
			fail(fmt.Errorf("the number of trials per mode is a positive integer, not %q", flag.Arg(0)))
		}
		trials = n
	}
	if err := run(trials, *settle == "caught-up"); err != nil {
		fail(err)
	}
}

// run starts the cluster and the sandbox, runs the trials of each mode and prints the figures; the
// cluster and the sandbox are stopped however it ends.
func run(trials int, caughtUp bool) error {
	// The second manager's failed writes (see result.secondFailed) are counted, not logged each time.
	redis.SetLogger(quiet{})
	started, err := rediscluster.Start(rediscluster.Options{Primaries: 3, Replicas: 1, NodeTimeout: time.Second})
	if err != nil {
		return err
	}
	c := &cluster{Cluster: started, caughtUp: caughtUp, probeKeys: map[string]string{}}
	defer c.Stop()
	settle := "settled: every replica has received a probe write made on its primary"
	if !caughtUp {
		settle = "settled (earlier protocol): every primary has a connected replica not in a bulk transfer"
	}
	fmt.Printf("%s; go-redis %s; %s\n", c.Version, goRedisVersion(), settle)
	sandbox, err := tenanttest.StartSandbox(tenanttest.WithClients(tenanttest.Client{ID: clientID, RedirectURIs: []string{redirect}}))
	if err != nil {
		return err
	}
	defer sandbox.Close()
	if err := c.settled(); err != nil {
		return err
	}
	for _, replicas := range []bool{false, true} {
		mode := "no replicas option"
		if replicas {
			mode = fmt.Sprintf("WithReplicas(%d, %s)", replicaCount, replicaTimeout)
		}
		outcomes := map[string]int{}
		var order []string
		refreshFailed, secondFailed, behind, lostBehind, lostResynced := 0, 0, 0, 0, 0
		for i := range trials {
			r, err := c.trial(sandbox, replicas)
			if err != nil {
				return err
			}
			fmt.Printf("  %s, trial %d: %s\n", mode, i+1, r)
			if outcomes[r.outcome] == 0 {
				order = append(order, r.outcome)
			}
			outcomes[r.outcome]++
			if r.refreshFailed {
				refreshFailed++
			}
			if r.secondFailed {
				secondFailed++
			}
			if r.offsets.promoted < r.offsets.primary {
				behind++
				if r.outcome != "kept" {
					lostBehind++
				}
			}
			if r.outcome != "kept" && r.resynced {
				lostResynced++
			}
		}
		var others []string
		for _, what := range order {
			if what != "kept" {
				others = append(others, fmt.Sprintf("%s: %d", what, outcomes[what]))
			}
		}
		otherwise := ""
		if len(others) > 0 {
			otherwise = " (otherwise " + strings.Join(others, ", ") + ")"
		}
		lost := trials - outcomes["kept"]
		fmt.Printf("%s: session kept in %d of %d trials%s; %d refreshes reported STORAGE_FAILED; the second manager's writes failed in %d; "+
			"the promoted replica was behind the killed primary in %d trials (%d of the %d lost); %d of the lost trials were on the pair the trial before had resynced\n",
			mode, outcomes["kept"], trials, otherwise, refreshFailed, secondFailed, behind, lostBehind, lost, lostResynced)
	}
	return nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "failover:", err)
	os.Exit(1)
}

// quiet drops go-redis's log lines (a dead node's refused connections).
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func goRedisVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/redis/go-redis/v9" {
				return dep.Version
			}
		}
	}
	return redis.Version()
}

// offsets are the replication offsets at the kill: the primary's master_repl_offset and the
// replica's slave_repl_offset and master_link_status, read together right before the kill, and the
// replica's slave_repl_offset right after it, before its promotion.
type offsets struct {
	primary  int64
	replica  int64
	link     string
	promoted int64
}

func (o offsets) String() string {
	return fmt.Sprintf("offsets at the kill: primary %d, replica %d (link %s), replica after the kill %d (%d behind)",
		o.primary, o.replica, o.link, o.promoted, o.primary-o.promoted)
}

// result is one trial's outcome: "kept", "reuse" (a token was handed out but the sandbox saw a
// reuse), or the second manager's error code; whether the refresh's writes reported STORAGE_FAILED
// (with WithReplicas: a REPLICATION_TIMEOUT); whether the second manager's did (with
// WithReplicas, the promoted primary has no replica until the killed node rejoins, so its WAIT times
// out; its token is handed out all the same); the offsets at the kill; and whether the session's
// replica was the node the trial before restarted (it had just made a full resync).
type result struct {
	outcome       string
	refreshFailed bool
	secondFailed  bool
	offsets       offsets
	resynced      bool
}

func (r result) String() string {
	resynced := "no"
	if r.resynced {
		resynced = "yes"
	}
	return fmt.Sprintf("%s; %s; its replica resynced after the trial before: %s", r.outcome, r.offsets, resynced)
}

// cluster is the trials' cluster: internal/rediscluster's, with what the trials read of it.
type cluster struct {
	*rediscluster.Cluster
	caughtUp bool
	// restarted is the node the last trial killed and restarted ("" before the first).
	restarted string
	// probeKeys holds a key in each primary's slots, by its slot ranges (see probeKey).
	probeKeys map[string]string
}

func (c *cluster) trial(sandbox *tenanttest.Sandbox, replicas bool) (result, error) {
	ctx := context.Background()
	prefix := "trial-" + randomHex() + ":"
	options := []redisstorage.Option{redisstorage.WithPrefix(prefix)}
	if replicas {
		options = append(options, redisstorage.WithReplicas(replicaCount, replicaTimeout))
	}
	first, err := c.connect()
	if err != nil {
		return result{}, err
	}
	refreshFailures := 0
	a, err := c.manager(sandbox, first, options, &refreshFailures)
	if err != nil {
		return result{}, err
	}
	request, err := a.BeginAuthorization(ctx)
	if err != nil {
		return result{}, err
	}
	callback, err := tenanttest.Approve(ctx, request.URL)
	if err != nil {
		return result{}, err
	}
	if _, err := a.CompleteAuthorization(ctx, callback); err != nil {
		return result{}, err
	}
	refreshFailures = 0 // from here on, the refresh's
	slot, err := first.ClusterKeySlot(ctx, redisstorage.Key(prefix, "tenant-integration:"+a.BaseURL()+":"+clientID+":tokens")).Result()
	if err != nil {
		return result{}, err
	}
	nodes, err := c.view()
	if err != nil {
		return result{}, err
	}
	var primary, replica node
	for _, n := range nodes {
		if n.primary && n.owns(int(slot)) {
			primary = n
		}
	}
	for _, n := range nodes {
		if !n.primary && n.primaryID == primary.id {
			replica = n
		}
	}
	if primary.addr == "" || replica.addr == "" {
		return result{}, fmt.Errorf("no primary with a replica for slot %d", slot)
	}
	// Connections of their own to read the offsets at the kill, opened now so that reading them
	// delays the kill by one round trip.
	primaryProbe, replicaProbe := probe(primary.addr), probe(replica.addr)
	defer primaryProbe.Close()
	defer replicaProbe.Close()

	if err := sandbox.Advance(16 * time.Minute); err != nil {
		return result{}, err
	}
	if _, err := a.AccessToken(ctx); err != nil { // the refresh: the rotated token written (with replicas, acknowledged by the replica)
		refreshFailures++
	}
	var at offsets
	var wg sync.WaitGroup
	wg.Go(func() { at.primary, _ = replication(primaryProbe, "master_repl_offset") })
	wg.Go(func() { at.replica, at.link = replication(replicaProbe, "slave_repl_offset") })
	wg.Wait()
	if err := c.Kill(primary.addr); err != nil {
		return result{}, err
	}
	first.Close()
	at.promoted, _ = replication(replicaProbe, "slave_repl_offset")
	if _, err := c.CLI(replica.addr, "CLUSTER", "FAILOVER", "TAKEOVER"); err != nil {
		return result{}, err
	}
	for range 100 {
		if role, _ := c.CLI(replica.addr, "ROLE"); strings.HasPrefix(role, "master") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}

	if err := sandbox.Advance(16 * time.Minute); err != nil {
		return result{}, err
	}
	since, err := sandbox.LastSeq()
	if err != nil {
		return result{}, err
	}
	second, err := c.connect()
	if err != nil {
		return result{}, err
	}
	secondFailures := 0
	b, err := c.manager(sandbox, second, options, &secondFailures)
	if err != nil {
		return result{}, err
	}
	outcome := "kept"
	if _, err := b.AccessToken(ctx); err != nil {
		// SESSION_ENDED: the replica lacked the rotated token, the rotated-away one was presented.
		var failure *tokenmanager.Error
		if errors.As(err, &failure) {
			outcome = string(failure.Code)
		} else {
			outcome = err.Error()
		}
	} else {
		events, err := sandbox.Events(since)
		if err != nil {
			return result{}, err
		}
		for _, e := range events {
			if e.Detail != nil && *e.Detail == "refresh_token_reused" {
				outcome = "reuse"
			}
		}
	}
	second.Close()
	resynced := replica.addr == c.restarted
	// The killed node comes back on its port with its cluster config file: a replica of the promoted one.
	if err := c.Restart(primary.addr); err != nil {
		return result{}, err
	}
	c.restarted = primary.addr
	if err := c.settled(); err != nil {
		return result{}, err
	}
	return result{outcome: outcome, refreshFailed: refreshFailures > 0, secondFailed: secondFailures > 0, offsets: at, resynced: resynced}, nil
}

// probe is a plain client of one node, with its connection open.
func probe(addr string) *redis.Client {
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 1, DialTimeout: time.Second})
	_ = client.Ping(context.Background()).Err()
	return client
}

// replication reads the offset field of INFO replication, and master_link_status (a replica's).
func replication(client *redis.Client, field string) (int64, string) {
	info, err := client.Info(context.Background(), "replication").Result()
	if err != nil {
		return -1, "unread"
	}
	return parseReplication(info, field)
}

func parseReplication(info, field string) (int64, string) {
	offset, link := int64(-1), ""
	for _, line := range strings.Split(info, "\n") {
		key, value, _ := strings.Cut(strings.TrimSpace(line), ":")
		switch key {
		case field:
			offset, _ = strconv.ParseInt(value, 10, 64)
		case "master_link_status":
			link = value
		}
	}
	return offset, link
}

// manager is a token manager on the sandbox over a storage on client; failures counts its
// storage-failed events (a refresh hands out its tokens even when their write failed).
func (c *cluster) manager(sandbox *tenanttest.Sandbox, client *redis.ClusterClient, options []redisstorage.Option, failures *int) (*tokenmanager.Manager, error) {
	storage, err := redisstorage.New(client, append(options, redisstorage.WithLogger(slog.New(slog.DiscardHandler)))...)
	if err != nil {
		return nil, err
	}
	return tokenmanager.New(
		tokenmanager.Config{BaseURL: sandbox.URL, ClientID: clientID, RedirectURI: redirect, Scopes: []scope.Scope{scope.ProfileRead}},
		tokenmanager.WithStorage(storage),
		tokenmanager.WithClock(sandbox.Now),
		tokenmanager.WithLogger(slog.New(slog.DiscardHandler)),
		tokenmanager.WithOnChange(func(e tokenmanager.Event) {
			if e.Kind == tokenmanager.EventStorageFailed {
				*failures++
			}
		}),
	)
}

func randomHex() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// live is the address of a node that runs.
func (c *cluster) live() string {
	for _, addr := range c.Addrs() {
		if c.Running(addr) {
			return addr
		}
	}
	return ""
}

// node is one line of CLUSTER NODES: id, address, role, the primary a replica follows, a primary's slot ranges.
type node struct {
	id        string
	addr      string
	primary   bool
	failed    bool
	primaryID string
	slots     []string
}

func (n node) owns(slot int) bool {
	for _, r := range n.slots {
		low, high, found := strings.Cut(r, "-")
		if !found {
			high = low
		}
		from, err1 := strconv.Atoi(low)
		to, err2 := strconv.Atoi(high)
		if err1 == nil && err2 == nil && from <= slot && slot <= to {
			return true
		}
	}
	return false
}

// view is the cluster's view from a live node.
func (c *cluster) view() ([]node, error) {
	out, err := c.CLI(c.live(), "CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	var nodes []node
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 8 {
			continue
		}
		address, _, _ := strings.Cut(fields[1], "@")
		nodes = append(nodes, node{id: fields[0], addr: address, primary: strings.Contains(fields[2], "master"),
			failed: strings.Contains(fields[2], "fail"), primaryID: fields[3], slots: fields[8:]})
	}
	return nodes, nil
}

// settled waits until every node answers and says the cluster is ok, and every primary has a
// replica that has caught up (or, with -settle connected, a connected replica not in a bulk transfer).
func (c *cluster) settled() error {
	for range 600 {
		if c.isSettled() {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	nodes, _ := c.CLI(c.live(), "CLUSTER", "NODES")
	return fmt.Errorf("the cluster did not settle:\n%s", nodes)
}

func (c *cluster) isSettled() bool {
	addrs := c.Addrs()
	for _, addr := range addrs {
		if !c.Running(addr) {
			return false
		}
		info, err := c.CLI(addr, "CLUSTER", "INFO")
		if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", len(addrs))) {
			return false
		}
	}
	nodes, err := c.view()
	if err != nil {
		return false
	}
	for _, p := range nodes {
		if !p.primary {
			continue
		}
		info, err := c.CLI(p.addr, "INFO", "replication")
		if err != nil || !strings.Contains(info, "connected_slaves:1") {
			return false
		}
		if !c.caughtUp {
			if strings.Contains(info, "state=wait_bgsave") || strings.Contains(info, "state=send_bulk") {
				return false
			}
			continue
		}
		if !c.receives(p, info) {
			return false
		}
	}
	return true
}

// receives reports whether the primary p has a replica that has caught up and receives its
// writes: after a probe write on the primary, the replica's link is up and its processed offset
// (slave_repl_offset) has reached the primary's master_repl_offset. A replica that is connected,
// even one whose acknowledged offset equals the primary's, may not be sent writes yet: after a full
// resync the primary starts sending them only on an acknowledgement (REPLCONF ACK, sent once a
// second) that comes after it has put the replica online, and the writes made until then wait in
// its buffer, lost with the primary.
func (c *cluster) receives(p node, info string) bool {
	// The replica as the primary knows it (the view of another node may not list it yet).
	replica := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		if fields, ok := strings.CutPrefix(strings.TrimSpace(line), "slave0:"); ok {
			for _, pair := range strings.Split(fields, ",") {
				key, value, _ := strings.Cut(pair, "=")
				replica[key] = value
			}
		}
	}
	if replica["state"] != "online" {
		return false
	}
	key, err := c.probeKey(p)
	if err != nil {
		return false
	}
	if _, err := c.CLI(p.addr, "SET", key, strconv.FormatInt(time.Now().UnixNano(), 10)); err != nil {
		return false
	}
	after, err := c.CLI(p.addr, "INFO", "replication")
	if err != nil {
		return false
	}
	want, _ := parseReplication(after, "master_repl_offset")
	theirs, err := c.CLI(replica["ip"]+":"+replica["port"], "INFO", "replication")
	if err != nil {
		return false
	}
	got, link := parseReplication(theirs, "slave_repl_offset")
	return link == "up" && got >= want
}

// probeKey is a key in one of the primary p's slots, by its slot ranges (found with CLUSTER KEYSLOT
// once per range).
func (c *cluster) probeKey(p node) (string, error) {
	ranges := strings.Join(p.slots, " ")
	for i := 0; c.probeKeys[ranges] == ""; i++ {
		key := fmt.Sprintf("failover-trials:settled:{%d}", i)
		out, err := c.CLI(p.addr, "CLUSTER", "KEYSLOT", key)
		if err != nil {
			return "", err
		}
		if slot, err := strconv.Atoi(out); err == nil && p.owns(slot) {
			c.probeKeys[ranges] = key
		}
	}
	return c.probeKeys[ranges], nil
}

// connect is a cluster client of its own (its own connections), started from the nodes that are not failed.
func (c *cluster) connect() (*redis.ClusterClient, error) {
	nodes, err := c.view()
	if err != nil {
		return nil, err
	}
	var addrs []string
	for _, n := range nodes {
		if !n.failed {
			addrs = append(addrs, n.addr)
		}
	}
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, DialTimeout: time.Second}), nil
}
