// Command failover measures, for issue 36, whether a session survives a Redis Cluster failover
// lived through by long-running processes: the protocol of the TypeScript kit's
// packages/token-store-redis/scripts/failover-trials.mjs and the Python kit's
// packages/python/scripts/failover_trials.py, so the kits' figures compare. Needs redis-server and
// redis-cli, and the sandbox (tenanttest finds it). From this module:
//
//	go run ./internal/cmd/failover [-settle connected] [-processes 3] [trials per mode, default 20]
//
// Each trial, on a 3-primary cluster with a replica per primary: three token managers (the
// "processes"), each on a cluster client of its own made with go-redis's defaults, as three
// processes would have, sign in (the first) and read the session (all), so that every client holds
// connections to the session's primary and its slot map. The sandbox's clock passes the access
// token's expiry and all three ask for a token at once; when the refresh request leaves (the
// managers' HTTP transport, before the request is forwarded), the primary of the session's slot is
// killed (SIGKILL) and its replica promoted (CLUSTER FAILOVER TAKEOVER, until every live node lists
// it as a primary); then the tenant answers (it rotates the refresh token) and the refresh writes
// the new tokens on a cluster whose primary changed. The same three managers, their clients never
// remade, then need a token after the next expiry: each asks, and asks again every 250 ms after a
// failure, for at most 30 s (go-redis alone reloads its slot map every 60 s). Two modes: the
// killed node comes back (restarted: it rejoins as a replica of the promoted one) once the first
// calls have returned, or it stays down until the trial ends. The session is kept when every
// manager got a token after the second expiry and the tenant saw no refresh token presented twice.
// Then the killed node is restarted if it is down, and the next trial waits until the cluster has
// settled: every primary's replica has received a probe write made on its primary (see receives;
// `-settle connected` waits only for a connected replica not in a bulk transfer, the earlier
// protocol, to compare).
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
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	// How long a manager keeps asking for a token after the second expiry, and how often.
	askFor, askEvery = 30 * time.Second, 250 * time.Millisecond
)

func main() {
	settle := flag.String("settle", "caught-up", "what the next trial waits for: caught-up (every replica's offset has reached its primary's) or connected (the earlier protocol)")
	processes := flag.Int("processes", 3, "the long-lived token managers of each trial")
	flag.Parse()
	if *settle != "caught-up" && *settle != "connected" {
		fail(fmt.Errorf("-settle is caught-up or connected, not %q", *settle))
	}
	if *processes < 1 {
		fail(fmt.Errorf("-processes is a positive integer, not %d", *processes))
	}
	trials := 20
	if flag.NArg() > 0 {
		n, err := strconv.Atoi(flag.Arg(0))
		if err != nil || n < 1 {
			fail(fmt.Errorf("the number of trials per mode is a positive integer, not %q", flag.Arg(0)))
		}
		trials = n
	}
	if err := run(trials, *processes, *settle == "caught-up"); err != nil {
		fail(err)
	}
}

// mode is one of the four: the killed node back after the first calls or down, with or without WithReplicas.
type mode struct {
	back, replicas bool
}

func (m mode) String() string {
	node := "dead node back after the first calls"
	if !m.back {
		node = "dead node stays down"
	}
	if m.replicas {
		return fmt.Sprintf("%s, WithReplicas(%d, %s)", node, replicaCount, replicaTimeout)
	}
	return node + ", no replicas option"
}

// run starts the cluster and the sandbox, runs the trials of each mode and prints the figures; the
// cluster and the sandbox are stopped however it ends.
func run(trials, processes int, caughtUp bool) error {
	// A dead node's refused connections are counted in the figures, not logged each time.
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
	fmt.Printf("%s; go-redis %s; %d long-lived token managers per trial; %s\n", c.Version, goRedisVersion(), processes, settle)
	sandbox, err := tenanttest.StartSandbox(tenanttest.WithClients(tenanttest.Client{ID: clientID, RedirectURIs: []string{redirect}}))
	if err != nil {
		return err
	}
	defer sandbox.Close()
	if err := c.settled(); err != nil {
		return err
	}
	for _, m := range []mode{{back: true}, {back: false}, {back: true, replicas: true}, {back: false, replicas: true}} {
		var results []result
		for i := range trials {
			r, err := c.trial(sandbox, m, processes)
			if err != nil {
				return err
			}
			fmt.Printf("  %s, trial %d: %s\n", m, i+1, r)
			results = append(results, r)
		}
		fmt.Printf("%s: %s\n", m, summary(results))
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

// result is one trial: the outcome ("kept", "reuse": a refresh token was presented twice and the
// tenant revoked the session, or "no token: <codes>" when a manager got none within askFor); how
// long the call that refreshed through the failover took, and its error code if it failed; the managers' storage-failed events (a write
// that failed, the tokens kept in memory and written again later); and the time the managers took,
// after the second expiry, until every one had a token, with the number of calls that failed before.
type result struct {
	outcome       string
	refreshTook   time.Duration
	firstFailed   []string
	storageFailed int
	allHadToken   time.Duration
	secondFailed  int
}

func (r result) String() string {
	first := "a token"
	if len(r.firstFailed) > 0 {
		first = strings.Join(r.firstFailed, ", ")
	}
	return fmt.Sprintf("%s; the refresh through the failover: %s in %s; storage-failed events: %d; after the next expiry every manager had a token in %s (%d calls failed before)",
		r.outcome, first, r.refreshTook.Round(time.Millisecond), r.storageFailed, r.allHadToken.Round(time.Millisecond), r.secondFailed)
}

// summary is the figures of one mode's trials.
func summary(results []result) string {
	outcomes := map[string]int{}
	var order []string
	var times, refreshes []time.Duration
	firstFailed, storageFailed, secondFailed := 0, 0, 0
	for _, r := range results {
		if outcomes[r.outcome] == 0 {
			order = append(order, r.outcome)
		}
		outcomes[r.outcome]++
		firstFailed += len(r.firstFailed)
		refreshes = append(refreshes, r.refreshTook)
		storageFailed += r.storageFailed
		secondFailed += r.secondFailed
		if r.outcome == "kept" {
			times = append(times, r.allHadToken)
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
	timing := ""
	if len(times) > 0 {
		slices.Sort(times)
		timing = fmt.Sprintf("; after the next expiry every manager had a token within %s (median), %s (longest)",
			median(times), times[len(times)-1].Round(time.Millisecond))
	}
	slices.Sort(refreshes)
	return fmt.Sprintf("session kept in %d of %d trials%s; the refresh through the failover failed in %d and took %s (median), %s (longest); %d storage-failed events; %d calls failed after the next expiry%s",
		outcomes["kept"], len(results), otherwise, firstFailed, median(refreshes), refreshes[len(refreshes)-1].Round(time.Millisecond), storageFailed, secondFailed, timing)
}

// median is the middle of sorted durations (the upper middle of an even count), rounded to the ms.
func median(sorted []time.Duration) time.Duration {
	return sorted[len(sorted)/2].Round(time.Millisecond)
}

// cluster is the trials' cluster: internal/rediscluster's, with what the trials read of it.
type cluster struct {
	*rediscluster.Cluster
	caughtUp bool
	// probeKeys holds a key in each primary's slots, by its slot ranges (see probeKey).
	probeKeys map[string]string
}

// failoverOnRefresh is the managers' HTTP transport: while armed, the first token request runs the
// failover before it is forwarded (it has left the manager, the tenant has not answered).
type failoverOnRefresh struct {
	mu       sync.Mutex
	failover func() error
	err      error
	fired    bool
}

func (f *failoverOnRefresh) arm(failover func() error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failover, f.fired, f.err = failover, false, nil
}

func (f *failoverOnRefresh) RoundTrip(request *http.Request) (*http.Response, error) {
	if request.Method == http.MethodPost && strings.HasSuffix(request.URL.Path, "/oauth/token") {
		f.mu.Lock()
		if f.failover != nil {
			f.err, f.fired, f.failover = f.failover(), true, nil
		}
		f.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(request)
}

func (f *failoverOnRefresh) outcome() (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fired, f.err
}

// process is one long-lived token manager on a cluster client of its own.
type process struct {
	manager *tokenmanager.Manager
	client  *redis.ClusterClient
}

func (c *cluster) trial(sandbox *tenanttest.Sandbox, m mode, count int) (result, error) {
	ctx := context.Background()
	prefix := "trial-" + randomHex() + ":"
	options := []redisstorage.Option{redisstorage.WithPrefix(prefix), redisstorage.WithLogger(slog.New(slog.DiscardHandler))}
	if m.replicas {
		options = append(options, redisstorage.WithReplicas(replicaCount, replicaTimeout))
	}
	transport := &failoverOnRefresh{}
	var storageFailed atomic.Int32
	var processes []process
	defer func() {
		for _, p := range processes {
			p.client.Close()
		}
	}()
	for range count {
		p, err := c.process(sandbox, transport, options, &storageFailed)
		if err != nil {
			return result{}, err
		}
		processes = append(processes, p)
	}
	if err := signIn(ctx, processes[0].manager); err != nil {
		return result{}, err
	}
	for _, p := range processes { // every client talks to the session's primary
		if _, err := p.manager.AccessToken(ctx); err != nil {
			return result{}, fmt.Errorf("before the failover: %w", err)
		}
	}
	primary, replica, err := c.sessionNodes(ctx, processes[0].client, processes[0].manager, prefix)
	if err != nil {
		return result{}, err
	}
	since, err := sandbox.LastSeq()
	if err != nil {
		return result{}, err
	}

	if err := sandbox.Advance(16 * time.Minute); err != nil {
		return result{}, err
	}
	transport.arm(func() error {
		if err := c.Kill(primary); err != nil {
			return err
		}
		return c.Promote(replica)
	})
	refreshed := time.Now()
	firstFailed := askOnce(ctx, processes[:1]) // the refresh, by the first manager alone
	refreshTook := time.Since(refreshed)
	if fired, err := transport.outcome(); !fired || err != nil {
		return result{}, fmt.Errorf("the failover at the refresh (run: %v): %v", fired, err)
	}
	if m.back {
		if err := c.Restart(primary); err != nil { // rejoins as a replica of the promoted node
			return result{}, err
		}
	}

	if err := sandbox.Advance(16 * time.Minute); err != nil {
		return result{}, err
	}
	r := askUntilServed(ctx, processes)
	r.firstFailed, r.refreshTook = firstFailed, refreshTook
	r.storageFailed = int(storageFailed.Load())
	events, err := sandbox.Events(since)
	if err != nil {
		return result{}, err
	}
	for _, e := range events {
		if e.Detail != nil && *e.Detail == "refresh_token_reused" {
			r.outcome = "reuse"
		}
	}
	if !m.back {
		if err := c.Restart(primary); err != nil {
			return result{}, err
		}
	}
	return r, c.settled()
}

// process makes one long-lived token manager on a cluster client of its own, with go-redis's
// defaults as a process would have them; storageFailed counts its storage-failed events.
func (c *cluster) process(sandbox *tenanttest.Sandbox, transport http.RoundTripper, options []redisstorage.Option, storageFailed *atomic.Int32) (process, error) {
	client, err := c.connect()
	if err != nil {
		return process{}, err
	}
	storage, err := redisstorage.New(client, options...)
	if err != nil {
		client.Close()
		return process{}, err
	}
	manager, err := tokenmanager.New(
		tokenmanager.Config{BaseURL: sandbox.URL, ClientID: clientID, RedirectURI: redirect, Scopes: []scope.Scope{scope.ProfileRead}},
		tokenmanager.WithStorage(storage),
		tokenmanager.WithClock(sandbox.Now),
		tokenmanager.WithHTTPClient(&http.Client{Transport: transport}),
		tokenmanager.WithLogger(slog.New(slog.DiscardHandler)),
		tokenmanager.WithOnChange(func(e tokenmanager.Event) {
			if e.Kind == tokenmanager.EventStorageFailed {
				storageFailed.Add(1)
			}
		}),
	)
	if err != nil {
		client.Close()
		return process{}, err
	}
	return process{manager: manager, client: client}, nil
}

func signIn(ctx context.Context, m *tokenmanager.Manager) error {
	request, err := m.BeginAuthorization(ctx)
	if err != nil {
		return err
	}
	callback, err := tenanttest.Approve(ctx, request.URL)
	if err != nil {
		return err
	}
	_, err = m.CompleteAuthorization(ctx, callback)
	return err
}

// askOnce has the managers ask for a token at once; the codes of the calls that failed.
func askOnce(ctx context.Context, processes []process) []string {
	codes := make([]string, len(processes))
	var wg sync.WaitGroup
	for i, p := range processes {
		wg.Go(func() {
			if _, err := p.manager.AccessToken(ctx); err != nil {
				codes[i] = code(err)
			}
		})
	}
	wg.Wait()
	return slices.DeleteFunc(codes, func(c string) bool { return c == "" })
}

// askUntilServed has every manager ask for a token at once, and again every askEvery after a
// failure, for at most askFor: "kept" with the time until every one had a token, or "no token"
// with the codes of the managers that got none.
func askUntilServed(ctx context.Context, processes []process) result {
	start := time.Now()
	var failed atomic.Int32
	var mu sync.Mutex
	var missing []string
	var wg sync.WaitGroup
	for _, p := range processes {
		wg.Go(func() {
			for {
				_, err := p.manager.AccessToken(ctx)
				if err == nil {
					return
				}
				failed.Add(1)
				if time.Since(start) > askFor {
					mu.Lock()
					missing = append(missing, code(err))
					mu.Unlock()
					return
				}
				time.Sleep(askEvery)
			}
		})
	}
	wg.Wait()
	r := result{outcome: "kept", allHadToken: time.Since(start), secondFailed: int(failed.Load())}
	if len(missing) > 0 {
		slices.Sort(missing)
		r.outcome = "no token: " + strings.Join(missing, ", ")
	}
	return r
}

func code(err error) string {
	var failure *tokenmanager.Error
	if errors.As(err, &failure) {
		return string(failure.Code)
	}
	return err.Error()
}

// sessionNodes are the addresses of the primary serving m's session's slot and of its replica.
func (c *cluster) sessionNodes(ctx context.Context, client *redis.ClusterClient, m *tokenmanager.Manager, prefix string) (string, string, error) {
	slot, err := client.ClusterKeySlot(ctx, redisstorage.Key(prefix, "tenant-integration:"+m.BaseURL()+":"+clientID+":tokens")).Result()
	if err != nil {
		return "", "", err
	}
	nodes, err := c.view()
	if err != nil {
		return "", "", err
	}
	for _, n := range nodes {
		if n.primary && n.owns(int(slot)) {
			replica, err := c.ReplicaOf(n.addr)
			return n.addr, replica, err
		}
	}
	return "", "", fmt.Errorf("no primary serves slot %d", slot)
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

// connect is a cluster client of its own (its own connections, go-redis's default options), started
// from the nodes that are not failed.
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
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs}), nil
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
