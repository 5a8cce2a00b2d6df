package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentry-dev/agentry/runtime"
)

var update = flag.Bool("update", false, "rewrite golden files")

func ip(n int) *int { return &n }

// conversation is a run with a retry and a fallback, streamed text, an
// edit, a denied shell command, a warning and usage: every shape the
// formats print.
func conversation(end runtime.Event) []runtime.Event {
	evs := []runtime.Event{
		{Type: runtime.EventInitialize, Initialize: &runtime.Initialize{SessionID: "sess-1", Workspace: "/ws", AgentID: "agentry"}},
		{Type: runtime.EventMessage, Message: &runtime.Message{Role: runtime.RoleUser, Content: []runtime.ContentPart{runtime.TextPart("fix it")}}},
		{Type: runtime.EventAgentStart},
		{Type: runtime.EventSessionUpdate, SessionUpdate: &runtime.SessionUpdate{Model: "gemini-2.5-pro"}},
		{Type: runtime.EventCustom, Custom: &runtime.Custom{Kind: runtime.CustomModelRetry, Data: map[string]any{
			"model": "gemini-2.5-pro", "attempt": 1, "maxAttempts": 10, "delayMs": int64(5500), "error": "rate limited"}}},
		{Type: runtime.EventCustom, Custom: &runtime.Custom{Kind: runtime.CustomModelFallback, Data: map[string]any{
			"failedModel": "gemini-2.5-pro", "model": "gemini-2.5-flash", "reason": "terminal", "intent": "retry_always",
			"message": "Model gemini-2.5-pro failed (terminal); switched to fallback model gemini-2.5-flash"}}},
		{Type: runtime.EventSessionUpdate, SessionUpdate: &runtime.SessionUpdate{Model: "gemini-2.5-flash"}},
		{Type: runtime.EventMessage, Meta: map[string]any{"source": "agent"}, Message: &runtime.Message{Role: runtime.RoleAgent, Content: []runtime.ContentPart{{Type: runtime.PartThought, Thought: "hmm"}}}},
		{Type: runtime.EventMessage, Message: &runtime.Message{Role: runtime.RoleAgent, Content: []runtime.ContentPart{runtime.TextPart("I'll fix \x1b[31mit\x1b[0m <now>.")}}},
		{Type: runtime.EventToolRequest, ToolRequest: &runtime.ToolRequest{RequestID: "c1", Name: "replace", Args: map[string]any{"file_path": "a.go", "old_string": "x", "new_string": "y"}, Display: &runtime.ToolDisplay{Name: "Edit", Description: "a.go"}}},
		{Type: runtime.EventUsage, Meta: map[string]any{"durationMs": int64(120), "role": "main", "totalTokens": int32(60), "thoughtsTokens": int32(5), "toolTokens": int32(0)}, Usage: &runtime.Usage{Model: "gemini-2.5-flash", InputTokens: ip(50), OutputTokens: ip(5), CachedTokens: ip(10)}},
		{Type: runtime.EventToolResponse, ToolResponse: &runtime.ToolResponse{RequestID: "c1", Name: "replace", Content: []runtime.ContentPart{runtime.TextPart("Successfully modified file: /ws/a.go")},
			Display: &runtime.ToolDisplay{Name: "Edit", Result: &runtime.DisplayContent{Type: "diff", Path: "/ws/a.go", BeforeText: "x\n", AfterText: "y\n"}},
			Data:    map[string]any{"decision": "auto_accept", "durationMs": int64(3), "diffStat": map[string]any{"linesAdded": 1, "linesRemoved": 1}}}},
		{Type: runtime.EventToolRequest, ToolRequest: &runtime.ToolRequest{RequestID: "c2", Name: "run_shell_command", Args: map[string]any{"command": "go test"}}},
		{Type: runtime.EventUsage, Meta: map[string]any{"durationMs": int64(80), "role": "main", "totalTokens": int32(70)}, Usage: &runtime.Usage{Model: "gemini-2.5-flash", InputTokens: ip(65), OutputTokens: ip(5)}},
		{Type: runtime.EventToolResponse, ToolResponse: &runtime.ToolResponse{RequestID: "c2", Name: "run_shell_command", IsError: true,
			Content: []runtime.ContentPart{runtime.TextPart(`Tool execution for "Shell" requires user confirmation, which is not supported in non-interactive mode.`)},
			Data:    map[string]any{"errorType": "policy_violation", "decision": "reject", "durationMs": int64(0)}}},
		{Type: runtime.EventError, Meta: map[string]any{"code": "LOOP_DETECTED"}, Error: &runtime.ErrorData{Status: "INTERNAL", Message: "Loop detected, stopping execution"}},
		{Type: runtime.EventMessage, Message: &runtime.Message{Role: runtime.RoleAgent, Content: []runtime.ContentPart{runtime.TextPart("Done; I could not run the tests.")}}},
		{Type: runtime.EventUsage, Meta: map[string]any{"durationMs": int64(90), "role": "main", "totalTokens": int32(80)}, Usage: &runtime.Usage{Model: "gemini-2.5-flash", InputTokens: ip(75), OutputTokens: ip(5)}},
	}
	evs = append(evs, end)
	ts := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for i := range evs {
		evs[i].StreamID = "s1"
		evs[i].ID = fmt.Sprintf("s1-%d", i)
		evs[i].Timestamp = ts
	}
	return evs
}

// render feeds events to a printer of format with a fixed clock.
func render(t *testing.T, format string, evs []runtime.Event) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	p := newPrinter(format, stdio{out: &out, err: &errb}, false, start)
	p.now = func() time.Time { return start.Add(1500 * time.Millisecond) }
	p.sessionID = "sess-1"
	p.init("gemini-2.5-flash", "fix it")
	code = -1
	for _, ev := range evs {
		if c, done := p.event(ev); done {
			code = c
		}
	}
	return out.String(), errb.String(), code
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

func TestOutputFormatsGolden(t *testing.T) {
	ends := map[string]runtime.Event{
		"completed": {Type: runtime.EventAgentEnd, AgentEnd: &runtime.AgentEnd{Reason: runtime.EndCompleted}},
		"aborted":   {Type: runtime.EventAgentEnd, AgentEnd: &runtime.AgentEnd{Reason: runtime.EndAborted}},
	}
	codes := map[string]int{"completed": 0, "aborted": 130}
	for endName, end := range ends {
		for _, format := range []string{"text", "json", "stream-json", "events"} {
			t.Run(endName+"/"+format, func(t *testing.T) {
				stdout, stderr, code := render(t, format, conversation(end))
				if code != codes[endName] {
					t.Errorf("exit code %d, want %d", code, codes[endName])
				}
				golden(t, fmt.Sprintf("%s.%s.stdout", endName, format), stdout)
				golden(t, fmt.Sprintf("%s.%s.stderr", endName, format), stderr)
			})
		}
	}
}

func TestFatalErrorExitCodes(t *testing.T) {
	fatal := runtime.Event{Type: runtime.EventError, Meta: map[string]any{"errorName": "FatalAuthenticationError", "exitCode": 41},
		Error: &runtime.ErrorData{Status: "UNAUTHENTICATED", Message: "no model credentials", Fatal: true}}
	evs := []runtime.Event{fatal, {Type: runtime.EventAgentEnd, AgentEnd: &runtime.AgentEnd{Reason: runtime.EndFailed}}}
	for format, want := range map[string]string{
		"json":        "{\n  \"session_id\": \"sess-1\",\n  \"stats\": {\n",
		"stream-json": `"status":"error","error":{"type":"FatalAuthenticationError","message":"no model credentials"}`,
	} {
		stdout, _, code := render(t, format, evs)
		if code != 41 || !bytes.Contains([]byte(stdout), []byte(want)) {
			t.Errorf("%s: exit %d, stdout %s", format, code, stdout)
		}
	}
	_, stderr, code := render(t, "text", evs)
	if code != 41 || stderr != "Error: no model credentials\n" {
		t.Errorf("text: exit %d, stderr %q", code, stderr)
	}
	maxTurns := []runtime.Event{{Type: runtime.EventAgentEnd, AgentEnd: &runtime.AgentEnd{Reason: runtime.EndMaxTurns}}}
	if _, _, code := render(t, "text", maxTurns); code != 53 {
		t.Errorf("max turns: exit %d", code)
	}
}

func TestStripANSI(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                       "plain",
		"\x1b[31mred\x1b[0m":          "red",
		"\x1b]0;title\x07after":       "after",
		"\x1b]8;;http://x\x1b\\link":  "link",
		"keep\ttabs\nand newlines":    "keep\ttabs\nand newlines",
		"\x1b[2J\x1b[Hcleared screen": "cleared screen",
	} {
		if got := stripANSI(in); got != want {
			t.Errorf("stripANSI(%q) = %q, want %q", in, got, want)
		}
	}
}
