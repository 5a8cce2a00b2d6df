//go:build unix

package proctest

import (
	"syscall"
	"time"
)

// CPU returns the CPU time this process has used, every thread's user
// and system time together, and whether it could be read (benchmarks
// report CPU per operation with it).
func CPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
