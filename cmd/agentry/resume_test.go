package main

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentry-dev/agentry/transcript"
)

// TestSpaceSeparatedResume checks the rewriting of gemini-cli's "-r VALUE"
// for the commands with run's flags, and that nothing else is touched.
func TestSpaceSeparatedResume(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args, want []string
	}{
		{[]string{"-r", "3", "-p", "x"}, []string{"--resume=3", "-p", "x"}},
		{[]string{"run", "--resume", "latest", "-p", "x"}, []string{"run", "--resume=latest", "-p", "x"}},
		{[]string{"-p", "x", "-r", "abc-123"}, []string{"-p", "x", "--resume=abc-123"}},
		{[]string{"-p", "x", "-r"}, []string{"-p", "x", "-r"}},
		{[]string{"-r", "-p", "x"}, []string{"-r", "-p", "x"}},
		{[]string{"--resume=2", "-p", "x"}, []string{"--resume=2", "-p", "x"}},
		// A flag's value is never a flag: the prompt is "-r".
		{[]string{"-p", "-r", "x"}, []string{"-p", "-r", "x"}},
		{[]string{"-yp", "-r", "x"}, []string{"-yp", "-r", "x"}},
		{[]string{"-m", "flash", "-r", "1", "-p", "x"}, []string{"-m", "flash", "--resume=1", "-p", "x"}},
		{[]string{"run", "--", "-r", "1"}, []string{"run", "--", "-r", "1"}},
		// batch has no -r.
		{[]string{"batch", "--resume", "in.jsonl"}, []string{"batch", "--resume", "in.jsonl"}},
	}
	for _, tt := range tests {
		root := newRootForTest(t)
		if got := spaceSeparatedResume(root, tt.args); !slices.Equal(got, tt.want) {
			t.Errorf("%q -> %q, want %q", tt.args, got, tt.want)
		}
	}
}

// TestRelativeTime checks gemini-cli's long relative times.
func TestRelativeTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for d, want := range map[time.Duration]string{
		0: "Just now", 59 * time.Second: "Just now", time.Minute: "1 minute ago", 59 * time.Minute: "59 minutes ago",
		time.Hour: "1 hour ago", 23 * time.Hour: "23 hours ago", 24 * time.Hour: "1 day ago", 50 * time.Hour: "2 days ago",
	} {
		if got := relativeTime(now, now.Add(-d)); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
}

// TestSessionTitle checks the title of a listed session: the summary, else
// the first user message that is not a command, on one line.
func TestSessionTitle(t *testing.T) {
	t.Parallel()
	msg := func(typ, text string) transcript.Message {
		raw, _ := json.Marshal([]map[string]string{{"text": text}})
		return transcript.Message{Type: typ, Content: raw}
	}
	tests := []struct {
		rec  transcript.Record
		want string
	}{
		{transcript.Record{Summary: "Fix\nthe build"}, "Fix the build"},
		{transcript.Record{Messages: []transcript.Message{msg("user", "/help"), msg("gemini", "x"), msg("user", "  refactor\n\tthe   parser ")}}, "refactor the parser"},
		{transcript.Record{Messages: []transcript.Message{msg("user", "/help")}}, "/help"},
		{transcript.Record{}, "Empty conversation"},
		{transcript.Record{Messages: []transcript.Message{msg("user", "naïve\x1b[31m café")}}, "naïve[31m café"},
	}
	for _, tt := range tests {
		if got := sessionTitle(&tt.rec); got != tt.want {
			t.Errorf("title = %q, want %q", got, tt.want)
		}
	}
}

// newRootForTest builds the real command tree.
func newRootForTest(t *testing.T) *cobra.Command {
	t.Helper()
	var out strings.Builder
	return newRoot(stdio{in: strings.NewReader(""), out: &out, err: &out}, &interrupts{c: make(chan os.Signal, 1)}, new(int))
}
