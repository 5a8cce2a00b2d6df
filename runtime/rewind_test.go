package runtime

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/tools"
	"github.com/agentry-dev/agentry/transcript"
)

// TestEventsFromMessagesDeterministic: rebuilding a transcript's messages
// into events is deterministic: the same messages give the same events,
// invocation ids included.
func TestEventsFromMessagesDeterministic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chats", "t.jsonl")
	b := newScript(
		callTurn("looking", fc("r1", "read_file", map[string]any{"file_path": "a.txt"})),
		textTurn("a.txt says alpha"),
	)
	read := &fakeTool{ToolName: "read_file", ToolKind: tools.KindRead}
	s := newTestSession(t, b, Config{Tools: []tools.Tool{read}, Transcript: &TranscriptConfig{Path: path}})
	run(t, s, "read a.txt")
	rec, err := transcript.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := eventsFromMessages(rec.Messages, "agentry")
	if err != nil {
		t.Fatal(err)
	}
	if len(a) < 4 {
		t.Fatalf("%d events from %d messages, want the prompt, the call, its response and the answer", len(a), len(rec.Messages))
	}
	bb, _ := eventsFromMessages(rec.Messages, "agentry")
	for i := range a {
		if a[i].ID != bb[i].ID || a[i].InvocationID != bb[i].InvocationID || !strings.HasPrefix(a[i].InvocationID, "rewind-") {
			t.Errorf("event %d: ids %s/%s and %s/%s", i, a[i].ID, a[i].InvocationID, bb[i].ID, bb[i].InvocationID)
		}
	}
}
