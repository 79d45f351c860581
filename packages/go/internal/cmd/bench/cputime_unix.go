//go:build unix

package main

import (
	"syscall"
	"time"
)

const cpuTimeName = "process CPU time"

// cpuTime is the CPU time of the whole process (user and system, every thread), to the microsecond.
func cpuTime() time.Duration {
	var usage syscall.Rusage
	must(syscall.Getrusage(syscall.RUSAGE_SELF, &usage))
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}
