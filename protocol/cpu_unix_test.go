//go:build unix

package protocol_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used, every thread's
// user and system time together.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
