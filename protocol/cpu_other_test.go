//go:build !unix

package protocol_test

import "time"

// processCPU reports that the process's CPU time is not read here.
func processCPU() (time.Duration, bool) { return 0, false }
