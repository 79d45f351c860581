// Command failover measures, for issue 31, how often a session survives its Redis Cluster primary
// being killed right after a refresh, with the replica promoted by CLUSTER FAILOVER, with and
// without redisstorage.WithReplicas (WAIT). The protocol of the TypeScript kit's
// packages/token-store-redis/scripts/failover-trials.mjs, so the kits' figures compare. Needs
// redis-server and redis-cli, and the sandbox (tenanttest finds it). From this module:
//
//	go run ./internal/cmd/failover [trials per mode, default 50]
//
// Each trial: a manager signs in on a 3-primary cluster with a replica per primary; the sandbox's
// clock passes the access token's expiry and the manager refreshes (the tenant rotates the refresh
// token, the storage writes the new one: SET, and with WithReplicas WAIT 1); right after the
// refresh returned, the primary of the session's slot is killed (SIGKILL) and its replica promoted
// (CLUSTER FAILOVER TAKEOVER: at once, without the dead primary's agreement). A second manager, on
// its own cluster connections, then needs a token after the next expiry: the session is kept when it
// refreshes with the rotated token the replica holds, and lost when the replica lacked the last
// write (it presents the rotated-away token: the sandbox, under strict rotation, revokes the
// family). The killed node is restarted as a replica of the new primary, and the next trial waits
// until every primary has a replica in sync.
//
// The cluster is started here: the module's test starter (redisstorage/cluster_test.go) lives in a
// test file, which a command cannot import, and starts primaries only. Never imported; not a test
// (a measurement: nothing is asserted).
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tenant-integration/sdk/packages/go/api/scope"
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
	trials := 50
	if len(os.Args) > 1 {
		n, err := strconv.Atoi(os.Args[1])
		if err != nil || n < 1 {
			fail(fmt.Errorf("the number of trials per mode is a positive integer, not %q", os.Args[1]))
		}
		trials = n
	}
	if err := run(trials); err != nil {
		fail(err)
	}
}

// run starts the cluster and the sandbox, runs the trials of each mode and prints the figures; the
// cluster and the sandbox are stopped however it ends.
func run(trials int) error {
	// The second manager's failed writes (see result.secondFailed) are counted, not logged each time.
	redis.SetLogger(quiet{})
	c, err := startCluster(3, 1)
	if err != nil {
		return err
	}
	defer c.stop()
	version, _ := exec.Command("redis-server", "--version").Output()
	fmt.Printf("%s; go-redis %s\n", strings.TrimSpace(string(version)), goRedisVersion())
	sandbox, err := tenanttest.StartSandbox(tenanttest.WithClients(tenanttest.Client{ID: clientID, RedirectURIs: []string{redirect}}))
	if err != nil {
		return err
	}
	defer sandbox.Close()
	if err := c.settled(); err != nil {
		return err
	}
	for _, replicas := range []bool{false, true} {
		outcomes := map[string]int{}
		var order []string
		refreshFailed, secondFailed := 0, 0
		for range trials {
			r, err := c.trial(sandbox, replicas)
			if err != nil {
				return err
			}
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
		}
		var others []string
		for _, what := range order {
			if what != "kept" {
				others = append(others, fmt.Sprintf("%s: %d", what, outcomes[what]))
			}
		}
		mode := "no replicas option"
		if replicas {
			mode = fmt.Sprintf("WithReplicas(%d, %s)", replicaCount, replicaTimeout)
		}
		otherwise := ""
		if len(others) > 0 {
			otherwise = " (otherwise " + strings.Join(others, ", ") + ")"
		}
		fmt.Printf("%s: session kept in %d of %d trials%s; %d refreshes reported STORAGE_FAILED; the second manager's writes failed in %d\n",
			mode, outcomes["kept"], trials, otherwise, refreshFailed, secondFailed)
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

// result is one trial's outcome: "kept", "reuse" (a token was handed out but the sandbox saw a
// reuse), or the second manager's error code; whether the refresh's writes reported STORAGE_FAILED
// (with WithReplicas: a REPLICATION_TIMEOUT); and whether the second manager's did (with
// WithReplicas, the promoted primary has no replica until the killed node rejoins, so its WAIT times
// out; its token is handed out all the same).
type result struct {
	outcome       string
	refreshFailed bool
	secondFailed  bool
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
	if primary.port == 0 || replica.port == 0 {
		return result{}, fmt.Errorf("no primary with a replica for slot %d", slot)
	}

	if err := sandbox.Advance(16 * time.Minute); err != nil {
		return result{}, err
	}
	if _, err := a.AccessToken(ctx); err != nil { // the refresh: the rotated token written (with replicas, acknowledged by the replica)
		refreshFailures++
	}
	if err := c.kill(primary.port); err != nil {
		return result{}, err
	}
	first.Close()
	if _, err := cli(replica.port, "CLUSTER", "FAILOVER", "TAKEOVER"); err != nil {
		return result{}, err
	}
	for range 100 {
		if role, _ := cli(replica.port, "ROLE"); strings.HasPrefix(role, "master") {
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
	// The killed node comes back on its port with its cluster config file: a replica of the promoted one.
	if err := c.restart(primary.port); err != nil {
		return result{}, err
	}
	if err := c.settled(); err != nil {
		return result{}, err
	}
	return result{outcome: outcome, refreshFailed: refreshFailures > 0, secondFailed: secondFailures > 0}, nil
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

// cluster is redis-servers with --cluster-enabled yes on free loopback ports (client and bus port
// both chosen at run time), joined by redis-cli --cluster create, without persistence; stopped by
// their pids.
type cluster struct {
	dir   string
	ports []int
	procs map[int]*exec.Cmd
	args  map[int][]string
}

func freePort() (int, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer listener.Close()
	return listener.Addr().(*net.TCPAddr).Port, nil
}

// cli runs redis-cli with args against 127.0.0.1:port and returns its output.
func cli(port int, args ...string) (string, error) {
	out, err := exec.Command("redis-cli", append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(port)}, args...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("redis-cli %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

func startCluster(primaries, replicas int) (*cluster, error) {
	dir, err := os.MkdirTemp("", "redis-cluster-")
	if err != nil {
		return nil, err
	}
	c := &cluster{dir: dir, procs: map[int]*exec.Cmd{}, args: map[int][]string{}}
	for range primaries * (1 + replicas) {
		port, err := freePort()
		if err != nil {
			c.stop()
			return nil, err
		}
		bus, err := freePort()
		if err != nil {
			c.stop()
			return nil, err
		}
		c.args[port] = []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(bus), "--cluster-node-timeout", "1000",
			"--cluster-config-file", filepath.Join(dir, fmt.Sprintf("nodes-%d.conf", port)), "--dir", dir}
		c.ports = append(c.ports, port)
		if err := c.restart(port); err != nil {
			c.stop()
			return nil, err
		}
	}
	create := []string{"--cluster", "create"}
	for _, port := range c.ports {
		create = append(create, fmt.Sprintf("127.0.0.1:%d", port))
	}
	if _, err := cli(c.ports[0], append(create, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")...); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// restart starts the node on port (again): with its cluster config file, it rejoins the cluster.
func (c *cluster) restart(port int) error {
	cmd := exec.Command("redis-server", c.args[port]...)
	if err := cmd.Start(); err != nil {
		return err
	}
	c.procs[port] = cmd
	for range 600 {
		if pong, _ := cli(port, "PING"); pong == "PONG" {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("redis-server on port %d did not answer", port)
}

func (c *cluster) kill(port int) error {
	cmd := c.procs[port]
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	_ = cmd.Wait()
	delete(c.procs, port)
	return nil
}

func (c *cluster) stop() {
	for port, cmd := range c.procs {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		delete(c.procs, port)
	}
	_ = os.RemoveAll(c.dir)
}

func (c *cluster) live() []int {
	var ports []int
	for _, port := range c.ports {
		if _, ok := c.procs[port]; ok {
			ports = append(ports, port)
		}
	}
	return ports
}

// node is one line of CLUSTER NODES: id, port, role, the primary a replica follows, a primary's slot ranges.
type node struct {
	id        string
	port      int
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
	out, err := cli(c.live()[0], "CLUSTER", "NODES")
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
		_, portText, _ := strings.Cut(address, ":")
		port, _ := strconv.Atoi(portText)
		nodes = append(nodes, node{id: fields[0], port: port, primary: strings.Contains(fields[2], "master"),
			failed: strings.Contains(fields[2], "fail"), primaryID: fields[3], slots: fields[8:]})
	}
	return nodes, nil
}

// settled waits until every node answers, says the cluster is ok, and each primary has a replica in sync.
func (c *cluster) settled() error {
	for range 600 {
		if c.isSettled() {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	nodes, _ := cli(c.live()[0], "CLUSTER", "NODES")
	return fmt.Errorf("the cluster did not settle:\n%s", nodes)
}

func (c *cluster) isSettled() bool {
	if len(c.live()) != len(c.ports) {
		return false
	}
	for _, port := range c.ports {
		info, err := cli(port, "CLUSTER", "INFO")
		if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", len(c.ports))) {
			return false
		}
	}
	nodes, err := c.view()
	if err != nil {
		return false
	}
	for _, n := range nodes {
		if !n.primary {
			continue
		}
		info, err := cli(n.port, "INFO", "replication")
		if err != nil || !strings.Contains(info, "connected_slaves:1") ||
			strings.Contains(info, "state=wait_bgsave") || strings.Contains(info, "state=send_bulk") {
			return false
		}
	}
	return true
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
			addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", n.port))
		}
	}
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, DialTimeout: time.Second}), nil
}
