package runtime

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

func ip(n int) *int { return &n }

// goldenEvents covers every event type and optional field.
func goldenEvents() []Event {
	ts := time.Date(2026, 11, 22, 9, 30, 1, 250_000_000, time.UTC)
	ev := func(n int, e Event) Event {
		e.StreamID = "s1"
		e.ID = fmt.Sprintf("s1-%d", n)
		e.Timestamp = ts
		return e
	}
	exit := 2
	return []Event{
		ev(0, Event{Type: EventInitialize, Initialize: &Initialize{SessionID: "sess", Workspace: "/ws", AgentID: "agentry"}}),
		ev(1, Event{Type: EventMessage, Meta: map[string]any{"source": "user"}, Message: &Message{Role: RoleUser, Content: []ContentPart{TextPart("hi"), {Type: PartReference, Text: "@a.go", URI: "file:///ws/a.go"}}}}),
		ev(2, Event{Type: EventAgentStart}),
		ev(3, Event{Type: EventSessionUpdate, SessionUpdate: &SessionUpdate{Model: "gemini-2.5-flash"}}),
		ev(4, Event{Type: EventMessage, Meta: map[string]any{"source": "agent"}, Message: &Message{Role: RoleAgent, Content: []ContentPart{{Type: PartThought, Thought: "planning", ThoughtSignature: "c2ln"}}}}),
		ev(5, Event{Type: EventMessage, Message: &Message{Role: RoleAgent, Content: []ContentPart{TextPart("")}}}),
		ev(6, Event{Type: EventToolRequest, Meta: map[string]any{"legacyState": map[string]any{"displayName": "Shell", "kind": "execute"}},
			ToolRequest: &ToolRequest{RequestID: "c1", Name: "run_shell_command", Display: &ToolDisplay{Name: "Shell", Description: "ls"}, Args: map[string]any{"command": "ls"}}}),
		ev(7, Event{Type: EventToolUpdate, ToolUpdate: &ToolUpdate{RequestID: "c1", Content: []ContentPart{TextPart("a.go\n")}}}),
		ev(8, Event{Type: EventToolResponse, ToolResponse: &ToolResponse{RequestID: "c1", Name: "run_shell_command",
			Display: &ToolDisplay{Result: &DisplayContent{Type: "terminal", ExitCode: &exit}}, Content: []ContentPart{TextPart("failed")}, Data: map[string]any{"errorType": "shell_execute_error"}, IsError: true}}),
		ev(9, Event{Type: EventUsage, Usage: &Usage{Model: "gemini-2.5-flash", InputTokens: ip(10), OutputTokens: ip(0), Cost: &Cost{Amount: 0.25, Currency: "USD"}}}),
		ev(10, Event{Type: EventError, Meta: map[string]any{"code": "LOOP_DETECTED"}, Error: &ErrorData{Status: "INTERNAL", Message: "Loop <detected> & stopping", Fatal: false}}),
		ev(11, Event{Type: EventCustom, Custom: &Custom{Kind: "fallback", Data: map[string]any{"from": "a", "to": "b"}}}),
		ev(12, Event{Type: EventAgentEnd, AgentEnd: &AgentEnd{Reason: EndMaxTurns, Data: map[string]any{"code": "MAX_TURNS_EXCEEDED"}}}),
	}
}

func TestEventJSONGolden(t *testing.T) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, ev := range goldenEvents() {
		if err := enc.Encode(ev); err != nil {
			t.Fatal(err)
		}
	}
	golden := filepath.Join("testdata", "events.golden.jsonl")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("event JSON differs from %s (-want +got):\n%s", golden, diff)
	}
}

func TestEventJSONRoundTrip(t *testing.T) {
	for _, ev := range goldenEvents() {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var back Event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		b2, err := json.Marshal(back)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != string(b2) {
			t.Errorf("round trip changed the event:\n%s\n%s", b, b2)
		}
	}
}

func TestEventJSONErrors(t *testing.T) {
	if _, err := json.Marshal(Event{Type: EventMessage}); err == nil {
		t.Error("an event without its payload must not marshal")
	}
	for _, in := range []string{
		`{"id":"x","streamId":"s","timestamp":"nope","type":"agent_start"}`,
		`{"id":"x","streamId":"s","timestamp":"2026-01-01T00:00:00.000Z","type":"teleport"}`,
	} {
		var ev Event
		if err := json.Unmarshal([]byte(in), &ev); err == nil {
			t.Errorf("%s: want an error", in)
		}
	}
}
