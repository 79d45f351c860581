// Package procid is this process's identity (pid and host name) and the liveness test of another
// process on this host: what tells a paused lock or intent holder (alive, waited for) from a dead
// one (taken over at once). The same rule as the TypeScript kit's process-identity.ts and the Python
// kit's is_gone.
package procid

import (
	"errors"
	"os"
	"syscall"
)

// Host is this machine's host name, as Node's os.hostname() and Python's socket.gethostname() give it.
func Host() string {
	host, err := os.Hostname()
	if err != nil {
		return "localhost"
	}
	return host
}

// Pid is this process's id.
func Pid() int { return os.Getpid() }

// IsGone reports whether process pid on host has exited: true only when host is this machine's and
// kill(pid, 0) fails with ESRCH. A process of another user (EPERM), this process, or one on another
// host cannot be proven dead: it counts as alive, and is waited for within the bounded waits.
func IsGone(host string, pid int) bool {
	if host != Host() || pid <= 0 || pid == os.Getpid() {
		return false
	}
	err := syscall.Kill(pid, 0)
	return errors.Is(err, syscall.ESRCH)
}
