// Package rediscluster starts a throwaway Redis Cluster for the module's tests and its failover
// trials: redis-servers with --cluster-enabled yes on free loopback ports (client and bus port both
// chosen at run time), joined by redis-cli --cluster create (with or without replicas), without
// persistence, and stopped by their pids. The one starter of the module: redisstorage's
// cluster_test.go and internal/cmd/failover both use it. Never for production.
package rediscluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrNotInstalled is returned by Start when redis-server or redis-cli is not on the PATH (a test
// skips on it).
var ErrNotInstalled = errors.New("redis-server and redis-cli are not installed (apt-get install redis-server)")

// Options says what to start. The zero value is three primaries without replicas, a node timeout of
// two seconds.
type Options struct {
	// Primaries is the number of primaries (default 3: the fewest redis-cli --cluster create accepts).
	Primaries int
	// Replicas is the number of replicas per primary (default none).
	Replicas int
	// NodeTimeout is --cluster-node-timeout (default 2s): how long a node may not answer before the
	// others count it as failing.
	NodeTimeout time.Duration
}

// Cluster is a started cluster. Its methods are not safe for concurrent use.
type Cluster struct {
	// Version is what redis-server --version printed.
	Version string
	server  string
	cli     string
	dir     string
	timeout time.Duration
	addrs   []string
	procs   map[string]*node
	args    map[string][]string
	buses   map[string]int
}

// Start starts the nodes, joins them and returns once every node says cluster_state:ok and knows
// every other node (it gives up after a minute). On an error, whatever was started is stopped.
func Start(options Options) (*Cluster, error) {
	if options.Primaries == 0 {
		options.Primaries = 3
	}
	if options.NodeTimeout == 0 {
		options.NodeTimeout = 2 * time.Second
	}
	server, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNotInstalled
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, ErrNotInstalled
	}
	version, err := exec.Command(server, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("redis-server --version: %w", err)
	}
	dir, err := os.MkdirTemp("", "redis-cluster-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Version: strings.TrimSpace(string(version)), server: server, cli: cli, dir: dir,
		timeout: options.NodeTimeout, procs: map[string]*node{}, args: map[string][]string{}, buses: map[string]int{}}
	for range options.Primaries * (1 + options.Replicas) {
		if _, err := c.AddNode(); err != nil {
			c.Stop()
			return nil, err
		}
	}
	create := append([]string{"--cluster", "create"}, c.addrs...)
	create = append(create, "--cluster-replicas", strconv.Itoa(options.Replicas), "--cluster-yes")
	if _, err := c.CLI(c.addrs[0], create...); err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.waitUntil(time.Minute, c.ready); err != nil {
		nodes, _ := c.CLI(c.addrs[0], "CLUSTER", "NODES")
		c.Stop()
		return nil, fmt.Errorf("the cluster: %w:\n%s", err, nodes)
	}
	return c, nil
}

// Addrs is the address (127.0.0.1:port) of every node, in the order started (redis-cli --cluster
// create makes the first Primaries of them the primaries).
func (c *Cluster) Addrs() []string { return append([]string(nil), c.addrs...) }

// BusPort is the cluster bus port of the node at addr (what CLUSTER MEET takes).
func (c *Cluster) BusPort(addr string) int { return c.buses[addr] }

// AddNode starts one more cluster-enabled node, not joined to the cluster (CLUSTER MEET it), and
// returns its address once it answers. Its ports are free when chosen but may be taken by another
// process before redis-server binds them: a node that exits at once is started again on new ports.
func (c *Cluster) AddNode() (string, error) {
	var err error
	for range 5 {
		var port, bus int
		if port, bus, err = pickPorts(); err != nil {
			return "", err
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		c.args[addr] = []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(bus),
			"--cluster-node-timeout", strconv.FormatInt(c.timeout.Milliseconds(), 10),
			"--cluster-config-file", filepath.Join(c.dir, fmt.Sprintf("nodes-%d.conf", port)), "--dir", c.dir}
		if err = c.Restart(addr); errors.Is(err, errExited) {
			delete(c.args, addr)
			continue
		}
		if err != nil {
			return "", err
		}
		c.buses[addr] = bus
		c.addrs = append(c.addrs, addr)
		return addr, nil
	}
	return "", err
}

// errExited is Restart's error when redis-server exited before it answered (its port taken, most
// often).
var errExited = errors.New("exited before it answered")

// node is one started redis-server: exited is closed once its process has been waited for (by the
// one goroutine that waits for it, so Kill and Stop never wait twice); output holds what it printed.
type node struct {
	cmd    *exec.Cmd
	exited chan struct{}
	output bytes.Buffer
}

// Restart starts the node at addr again (after Kill) on its port with its cluster config file: it
// rejoins the cluster (a killed primary whose replica was promoted comes back as its replica). It
// fails at once, with what redis-server printed, when the server exits before it answers.
func (c *Cluster) Restart(addr string) error {
	n := &node{cmd: exec.Command(c.server, c.args[addr]...), exited: make(chan struct{})}
	n.cmd.Stdout, n.cmd.Stderr = &n.output, &n.output
	if err := n.cmd.Start(); err != nil {
		return err
	}
	go func() { _ = n.cmd.Wait(); close(n.exited) }()
	c.procs[addr] = n
	exited := false
	answers := func() bool {
		select {
		case <-n.exited:
			exited = true
			return true
		default:
		}
		pong, _ := c.cliWithin(2*time.Second, addr, "PING")
		return pong == "PONG"
	}
	err := c.waitUntil(30*time.Second, answers)
	if exited {
		delete(c.procs, addr)
		return fmt.Errorf("redis-server at %s: %w: %s", addr, errExited, lastLine(n.output.String()))
	}
	if err != nil {
		return fmt.Errorf("redis-server at %s: %w", addr, err)
	}
	return nil
}

// lastLine is the last non-empty line of a server's output (why it exited).
func lastLine(output string) string {
	lines := strings.Split(strings.TrimSpace(output), "\n")
	return lines[len(lines)-1]
}

// Kill kills the node at addr with SIGKILL (no shutdown, no last write) and waits until it is gone.
func (c *Cluster) Kill(addr string) error {
	n, ok := c.procs[addr]
	if !ok {
		return fmt.Errorf("no node runs at %s", addr)
	}
	if err := n.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-n.exited
	delete(c.procs, addr)
	return nil
}

// Running reports whether the node at addr runs (was started and not killed).
func (c *Cluster) Running(addr string) bool {
	_, ok := c.procs[addr]
	return ok
}

// Stop stops every node (a node a test stopped with SIGSTOP is resumed first) and removes the
// cluster's directory.
func (c *Cluster) Stop() {
	for addr, n := range c.procs {
		_ = n.cmd.Process.Signal(syscall.SIGCONT)
		_ = n.cmd.Process.Kill()
		<-n.exited
		delete(c.procs, addr)
	}
	_ = os.RemoveAll(c.dir)
}

// ReplicaOf is the address of a replica of the primary at addr, as that primary's INFO replication
// lists it (an error when it has none).
func (c *Cluster) ReplicaOf(primary string) (string, error) {
	info, err := c.CLI(primary, "INFO", "replication")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(info, "\n") {
		fields, ok := strings.CutPrefix(strings.TrimSpace(line), "slave0:")
		if !ok {
			continue
		}
		replica := map[string]string{}
		for _, pair := range strings.Split(fields, ",") {
			key, value, _ := strings.Cut(pair, "=")
			replica[key] = value
		}
		return net.JoinHostPort(replica["ip"], replica["port"]), nil
	}
	return "", fmt.Errorf("the primary at %s has no replica", primary)
}

// Promote makes the replica at addr a primary in place of its own (CLUSTER FAILOVER TAKEOVER: at
// once, without the primary's agreement or a vote, so also when the primary is dead) and returns
// once every running node's CLUSTER NODES lists it as a primary (it gives up after 30 s).
func (c *Cluster) Promote(addr string) error {
	if _, err := c.CLI(addr, "CLUSTER", "FAILOVER", "TAKEOVER"); err != nil {
		return err
	}
	id, err := c.CLI(addr, "CLUSTER", "MYID")
	if err != nil {
		return err
	}
	seen := func() bool {
		for _, node := range c.addrs {
			if !c.Running(node) {
				continue
			}
			nodes, err := c.CLI(node, "CLUSTER", "NODES")
			if err != nil || !listsAsPrimary(nodes, id) {
				return false
			}
		}
		return true
	}
	if err := c.waitUntil(30*time.Second, seen); err != nil {
		return fmt.Errorf("the promotion of %s: %w", addr, err)
	}
	return nil
}

// listsAsPrimary reports whether CLUSTER NODES output lists the node id as a primary.
func listsAsPrimary(nodes, id string) bool {
	for _, line := range strings.Split(nodes, "\n") {
		fields := strings.Fields(line)
		if len(fields) > 2 && fields[0] == id {
			return strings.Contains(fields[2], "master")
		}
	}
	return false
}

// CLI runs redis-cli with args against the node at addr and returns its output, trimmed. A
// redis-cli that has not finished within a minute is killed (an error).
func (c *Cluster) CLI(addr string, args ...string) (string, error) {
	return c.cliWithin(time.Minute, addr, args...)
}

// cliWithin is CLI killing redis-cli after bound: whatever listens at addr may not be a Redis that
// answers (a port another process took).
func (c *Cluster) cliWithin(bound time.Duration, addr string, args ...string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	out, err := exec.CommandContext(ctx, c.cli, append([]string{"-h", host, "-p", port}, args...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("redis-cli %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// ready reports whether every node runs, says cluster_state:ok and knows every other node.
func (c *Cluster) ready() bool {
	for _, addr := range c.addrs {
		if !c.Running(addr) {
			return false
		}
		info, err := c.CLI(addr, "CLUSTER", "INFO")
		if err != nil || !strings.Contains(info, "cluster_state:ok") ||
			!strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", len(c.addrs))) {
			return false
		}
	}
	return true
}

// waitUntil polls check until it holds, or fails after bound (a readiness wait: the bound only ends
// a hung run).
func (c *Cluster) waitUntil(bound time.Duration, check func() bool) error {
	for start := time.Now(); !check(); time.Sleep(50 * time.Millisecond) {
		if time.Since(start) > bound {
			return fmt.Errorf("not ready within %s", bound)
		}
	}
	return nil
}

// pickPorts chooses a node's ports (a test replaces it to hand out a taken port).
var pickPorts = twoFreePorts

// twoFreePorts is a client port and a bus port, free when asked and different from each other.
func twoFreePorts() (int, int, error) {
	port, err := freePort()
	if err != nil {
		return 0, 0, err
	}
	for {
		bus, err := freePort()
		if err != nil || bus != port {
			return port, bus, err
		}
	}
}

func freePort() (int, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer listener.Close()
	return listener.Addr().(*net.TCPAddr).Port, nil
}
