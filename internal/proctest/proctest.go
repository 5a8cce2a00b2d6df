// Package proctest helps tests check on processes agentry starts.
package proctest

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// Running reports whether pid is a live process. A zombie counts as gone:
// it has exited, and on machines whose init does not reap orphans it would
// otherwise linger as "alive" forever.
func Running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || len(s) < i+3 || s[i+2] != 'Z'
}

// Eventually polls cond until it holds, failing t after 20 seconds. The
// limit is a hang guard, not a speed requirement.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
