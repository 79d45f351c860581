//go:build !unix

package main

import "time"

const cpuTimeName = "wall clock (no process CPU time on this system)"

// cpuTime falls back to the wall clock where getrusage is missing.
func cpuTime() time.Duration { return wall() }
