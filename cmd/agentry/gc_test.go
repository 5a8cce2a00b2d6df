package main

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/protocol"
)

// TestSetGCPercent: agentry serve sets the garbage collector's target
// from a2a.gcPercent (0: the default) unless GOGC is set, and refuses
// nonsense with the setting's name.
func TestSetGCPercent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	current := func() int {
		p := debug.SetGCPercent(100)
		debug.SetGCPercent(p)
		return p
	}
	for _, c := range []struct {
		pct, want int
		gogc      string
		err       string
	}{
		{pct: 0, want: protocol.DefaultGCPercent},
		{pct: 400, want: 400},
		{pct: 400, gogc: "150", want: 100},
		{pct: -1, err: "a2a.gcPercent is -1"},
		{pct: 10, err: "at least 25"},
	} {
		debug.SetGCPercent(100)
		t.Setenv("GOGC", c.gogc)
		err := setGCPercent(c.pct)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("setGCPercent(%d): %v, want an error saying %q", c.pct, err, c.err)
			}
		case err != nil:
			t.Errorf("setGCPercent(%d): %v", c.pct, err)
		case current() != c.want:
			t.Errorf("setGCPercent(%d) with GOGC=%q: target %d, want %d", c.pct, c.gogc, current(), c.want)
		}
	}
}
