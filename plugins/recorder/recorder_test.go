package recorder

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/masking"
	"github.com/agentry-dev/agentry/transcript"
)

// TestRecorderResumedMasking: a recorder continuing a transcript (a
// resumed session) finds the calls recorded before it and replaces their
// results when masking masks them; thoughts and cancelled calls are
// recorded as gemini-cli records them.
func TestRecorderResumedMasking(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chats", "t.jsonl")
	now := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	n := 0
	newID := func() string { n++; return "m" + string(rune('0'+n)) }
	model1 := func() string { return "gemini-2.5-flash" }
	quiet := slog.New(slog.DiscardHandler)
	r, err := Open(Config{Path: path, ProjectHash: "h"}, "s1", Options{Now: now, NewID: newID, Model: model1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	r.User(genai.NewContentFromText("hi", genai.RoleUser), "")
	r.Event(&session.Event{ID: "e1", LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
		{Text: "**Planning** look first", Thought: true},
		{FunctionCall: &genai.FunctionCall{ID: "c1", Name: "read_file", Args: map[string]any{"file_path": "a"}}},
		{FunctionCall: &genai.FunctionCall{ID: "c2", Name: "run_shell_command", Args: map[string]any{"command": "sleep 9"}}},
	}}}})
	r.Event(&session.Event{ID: "e2", LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
		{FunctionResponse: &genai.FunctionResponse{ID: "c1", Name: "read_file", Response: map[string]any{"output": "full text"}}},
		{FunctionResponse: &genai.FunctionResponse{ID: "c2", Name: "run_shell_command", Response: map[string]any{"error": "[Operation Cancelled] Reason: aborted"}}},
	}}}})
	r.Close()

	r, err = Open(Config{Path: path}, "s1", Options{Now: now, NewID: newID, Model: model1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	r.Masked([]masking.Masked{{CallID: "c1", Response: map[string]any{"output": "<tool_output_masked>"}}})
	r.Close()

	rec, err := transcript.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Messages) != 2 || rec.ProjectHash != "h" {
		t.Fatalf("record: %+v", rec)
	}
	g := rec.Messages[1]
	if len(g.Thoughts) != 1 || g.Thoughts[0].Subject != "Planning" || g.Thoughts[0].Description != "look first" {
		t.Errorf("thoughts %+v", g.Thoughts)
	}
	if len(g.ToolCalls) != 2 || g.ToolCalls[1].Status != "cancelled" || g.ToolCalls[0].Status != "success" {
		t.Fatalf("tool calls %+v", g.ToolCalls)
	}
	if res := string(g.ToolCalls[0].Result); !strings.Contains(res, "tool_output_masked") || strings.Contains(res, "full text") {
		t.Errorf("c1 result after masking on resume: %s", res)
	}
}
