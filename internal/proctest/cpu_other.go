//go:build !unix

package proctest

import "time"

// CPU reports that the process's CPU time is not read here.
func CPU() (time.Duration, bool) { return 0, false }
