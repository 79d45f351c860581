package rediscluster

import (
	"errors"
	"net"
	"strings"
	"testing"
)

// A node whose port another process took before redis-server bound it is started again on new
// ports, at once, instead of being polled for PING until the readiness bound.
func TestANodeWhosePortWasTakenStartsOnOtherPorts(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port

	handedOut := 0
	pickPorts = func() (int, int, error) {
		handedOut++
		if handedOut == 1 {
			_, bus, err := twoFreePorts()
			return takenPort, bus, err
		}
		return twoFreePorts()
	}
	defer func() { pickPorts = twoFreePorts }()

	c, err := Start(Options{})
	if errors.Is(err, ErrNotInstalled) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	for _, addr := range c.Addrs() {
		if addr == taken.Addr().String() {
			t.Fatalf("a node claims the taken port: %v", c.Addrs())
		}
	}
	if len(c.Addrs()) != 3 || handedOut != 4 {
		t.Fatalf("want 3 nodes from 4 choices of ports, got %v from %d", c.Addrs(), handedOut)
	}
}

// Restarting a node on a port another process holds fails at once, saying that the server exited
// and what it printed.
func TestARestartOnATakenPortFailsSayingTheServerExited(t *testing.T) {
	c, err := Start(Options{})
	if errors.Is(err, ErrNotInstalled) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	addr := c.Addrs()[0]
	if err := c.Kill(addr); err != nil {
		t.Fatal(err)
	}
	taken, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the killed node's port was taken meanwhile: %v", err)
	}
	defer taken.Close()
	err = c.Restart(addr)
	if !errors.Is(err, errExited) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("want the node's exit at %s, got %v", addr, err)
	}
	if c.Running(addr) {
		t.Fatal("a node that exited counts as running")
	}
}
