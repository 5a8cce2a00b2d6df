package transcript

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func msg(id, typ, text string) Message {
	c, _ := json.Marshal([]map[string]string{{"text": text}})
	return Message{ID: id, Timestamp: "2026-11-22T12:00:00.000Z", Type: typ, Content: c}
}

func ids(r *Record) []string {
	var out []string
	for _, m := range r.Messages {
		out = append(out, m.ID)
	}
	return out
}

func TestWriteLoadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chats", FileName(time.Date(2026, 11, 22, 9, 5, 0, 0, time.UTC), "0123456789abcdef"))
	if base := filepath.Base(path); base != "session-2026-11-22T09-05-01234567.jsonl" {
		t.Errorf("file name = %s", base)
	}
	w, err := Create(path, Record{SessionID: "s1", ProjectHash: ProjectHash("/ws"), StartTime: "t0", Kind: "main", Messages: []Message{msg("u1", TypeUser, "hi")}})
	if err != nil {
		t.Fatal(err)
	}
	g := msg("g1", TypeGemini, "hello")
	g.Model = "gemini-2.5-flash"
	g.Tokens = &Tokens{Input: 10, Output: 2, Total: 12}
	g.ToolCalls = []ToolCall{{ID: "c1", Name: "read_file", Args: map[string]any{"path": "a"}, Status: "success", Timestamp: "t1", Result: json.RawMessage(`[{"functionResponse":{"id":"c1","name":"read_file","response":{"output":"full"}}}]`)}}
	for _, err := range []error{w.Append(g), w.Append(msg("u2", TypeUser, "more")), w.Set(Meta{LastUpdated: "t2", Summary: "greeting"})} {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Masking rewrites the tool result: the same id, appended again.
	masked := g
	masked.ToolCalls = []ToolCall{g.ToolCalls[0]}
	masked.ToolCalls[0].Result = json.RawMessage(`[{"functionResponse":{"id":"c1","name":"read_file","response":{"output":"<tool_output_masked>…</tool_output_masked>"}}}]`)
	if err := w.Append(masked); err != nil {
		t.Fatal(err)
	}
	w.Close()

	rec, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"u1", "g1", "u2"}, ids(rec)); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	if rec.SessionID != "s1" || rec.Kind != "main" || rec.LastUpdated != "t2" || rec.Summary != "greeting" || rec.ProjectHash != ProjectHash("/ws") {
		t.Errorf("metadata = %+v", rec)
	}
	if got := string(rec.Messages[1].ToolCalls[0].Result); !strings.Contains(got, "tool_output_masked") {
		t.Errorf("update did not replace the message: %s", got)
	}
	if _, err := Create(path, Record{SessionID: "s1"}); err == nil {
		t.Error("Create overwrote an existing transcript")
	}
}

// TestRewind follows gemini-cli's rewindTo: the named message and all
// after it go; an unknown id clears every message.
func TestRewind(t *testing.T) {
	tests := []struct {
		name string
		to   string
		want []string
	}{
		{"second of three", "m2", []string{"m1"}},
		{"first", "m1", nil},
		{"last", "m3", []string{"m1", "m2"}},
		{"unknown", "nope", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.jsonl")
			w, err := Create(path, Record{SessionID: "s"})
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{"m1", "m2", "m3"} {
				w.Append(msg(id, TypeUser, id))
			}
			w.RewindTo(tt.to)
			w.Append(msg("m4", TypeUser, "after"))
			w.Close()
			rec, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(append(tt.want, "m4"), ids(rec)); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckpointAndTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	w, err := Create(path, Record{SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	w.Append(msg("a", TypeUser, "a"))
	w.Set(Meta{Messages: []Message{msg("x", TypeUser, "x"), msg("y", TypeGemini, "y")}})
	w.Append(msg("z", TypeUser, "z"))
	w.Close()
	// A crash in the middle of a write leaves a torn last line.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"id":"torn","type":"us`)
	f.Close()
	rec, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"x", "y", "z"}, ids(rec)); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "none.jsonl")); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing file: %v", err)
	}
}

// TestConcurrentAppends: every line lands whole.
func TestConcurrentAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	w, err := Create(path, Record{SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				if err := w.Append(msg(string(rune('a'+g))+strings.Repeat("x", i), TypeUser, strings.Repeat("payload ", 100))); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	w.Close()
	rec, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Messages) != 400 {
		t.Errorf("%d messages, want 400", len(rec.Messages))
	}
}
