package commands

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/agentry-dev/agentry/runstats"
)

// statsText renders a conversation's statistics for /stats: the figures
// of `agentry run -o json`'s "stats", as text. Models and tools are
// sorted by name.
func statsText(sessionID string, m *runstats.Metrics) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Session %s\n", sessionID)
	models := slices.Sorted(maps.Keys(m.Models))
	if len(models) == 0 {
		b.WriteString("Model calls: none yet\n")
	} else {
		b.WriteString("Model calls:\n")
	}
	for _, name := range models {
		mm := m.Models[name]
		fmt.Fprintf(&b, "- %s: %s, %s of API time\n", name, plural(mm.API.TotalRequests, "request"), ms(mm.API.TotalLatencyMs))
		if mm.API.TotalErrors > 0 {
			kinds := slices.Sorted(maps.Keys(mm.API.ErrorsByType))
			parts := make([]string, len(kinds))
			for i, k := range kinds {
				parts[i] = fmt.Sprintf("%s %d", k, mm.API.ErrorsByType[k])
			}
			fmt.Fprintf(&b, "  %s: %s\n", plural(mm.API.TotalErrors, "error"), strings.Join(parts, ", "))
		}
		t := mm.Tokens
		fmt.Fprintf(&b, "  tokens: %d input, %d cache reads, %d output, %d thoughts, %d tool, %d total\n",
			t.Input, t.Cached, t.Candidates, t.Thoughts, t.Tool, t.Total)
	}
	tm := m.Tools
	fmt.Fprintf(&b, "Tool calls: %d (%d succeeded, %d failed), %s\n", tm.TotalCalls, tm.TotalSuccess, tm.TotalFail, ms(tm.TotalDurationMs))
	if tm.TotalCalls > 0 {
		d := tm.TotalDecisions
		fmt.Fprintf(&b, "  decisions: %d accepted, %d auto-accepted, %d modified, %d rejected\n", d.Accept, d.AutoAccept, d.Modify, d.Reject)
		for _, name := range slices.Sorted(maps.Keys(tm.ByName)) {
			ts := tm.ByName[name]
			fmt.Fprintf(&b, "- %s: %d (%d succeeded, %d failed), %s\n", name, ts.Count, ts.Success, ts.Fail, ms(ts.DurationMs))
		}
	}
	fmt.Fprintf(&b, "Files: %d line(s) added, %d removed\n", m.Files.TotalLinesAdded, m.Files.TotalLinesRemoved)
	return b.String()
}

func ms(n int64) string { return (time.Duration(n) * time.Millisecond).String() }

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
