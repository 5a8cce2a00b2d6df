package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
			"model": "gemini-2.5-pro", "attempt": 1, "maxAttempts": 10, "delayMs": int64(2200), "error": "rate limited",
			"message": "Attempt 1 failed: rate limited. Retrying after 2200ms..."}}},
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

// geminiCLI reads what gemini-cli 0.61.0 printed in a captured run
// (../../testdata/gemini-cli, see its README).
func geminiCLI(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "gemini-cli", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestInvalidStreamMatchesGeminiCLI: a run whose model answer stayed
// blocked is reported as gemini-cli reports it (safety.*): the same words
// on stderr in text, the same error line in stream-json, the same error
// object in json. gemini-cli exits 0 there; agentry exits 1, as for any
// failed run.
func TestInvalidStreamMatchesGeminiCLI(t *testing.T) {
	evs := []runtime.Event{
		{Type: runtime.EventError, Meta: map[string]any{"errorName": "InvalidStreamError", "exitCode": 1, "code": "INVALID_STREAM",
			"errorType": "SAFETY_BLOCKED", "rawMessage": "Model stream ended due to safety settings (SAFETY) with empty response text."},
			Error: &runtime.ErrorData{Status: "INTERNAL", Message: "Model stream ended due to safety settings (SAFETY) with empty response text.", Fatal: true}},
		{Type: runtime.EventAgentEnd, AgentEnd: &runtime.AgentEnd{Reason: runtime.EndFailed}},
	}
	stdout, stderr, code := render(t, "text", evs)
	if stdout != geminiCLI(t, "safety.text.stdout") || stderr != geminiCLI(t, "safety.text.stderr") || code != 1 {
		t.Errorf("text: stdout %q, stderr %q, exit %d", stdout, stderr, code)
	}

	// stream-json: the lines after init and the user message, by type,
	// with gemini-cli's error line; agentry's result also names the error.
	stdout, stderr, code = render(t, "stream-json", evs)
	type line struct {
		Type, Severity, Message, Status string
		Error                           *struct{ Type, Message string }
	}
	parse := func(s string) []line {
		var out []line
		for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
			var v line
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Fatalf("%v: %s", err, l)
			}
			out = append(out, v)
		}
		return out
	}
	want, got := parse(geminiCLI(t, "safety.stream-json.stdout")), parse(stdout)
	if len(got) != len(want) || got[2] != want[2] || got[3].Type != "result" || got[3].Status != want[3].Status {
		t.Errorf("stream-json:\n%s\nwant as gemini-cli:\n%s", stdout, geminiCLI(t, "safety.stream-json.stdout"))
	}
	if e := got[3].Error; e == nil || e.Type != "INVALID_STREAM" || e.Message != want[2].Message {
		t.Errorf("stream-json result error = %+v", e)
	}
	if stderr != "" || code != 1 {
		t.Errorf("stream-json: stderr %q, exit %d", stderr, code)
	}

	// The four attempts, as the dispatcher reports them.
	usage := runtime.Event{Type: runtime.EventUsage, Meta: map[string]any{"role": "main", "durationMs": int64(5)}, Usage: &runtime.Usage{Model: "gemini-2.5-flash"}}
	evs = append([]runtime.Event{usage, usage, usage, usage}, evs...)
	stdout, _, code = render(t, "json", evs)
	type api struct {
		TotalRequests, TotalErrors int
		ErrorsByType               map[string]int
	}
	var gotJSON, wantJSON struct {
		Error map[string]any `json:"error"`
		Stats struct {
			Models map[string]struct{ API api }
		}
	}
	if err := json.Unmarshal([]byte(stdout), &gotJSON); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(geminiCLI(t, "safety.json.stdout")), &wantJSON); err != nil {
		t.Fatal(err)
	}
	delete(gotJSON.Error, "code") // agentry adds the exit code
	if diff := cmp.Diff(wantJSON.Error, gotJSON.Error); diff != "" || code != 1 {
		t.Errorf("json error (-gemini-cli +agentry):\n%s (exit %d)", diff, code)
	}
	if diff := cmp.Diff(wantJSON.Stats.Models["gemini-2.5-flash"].API, gotJSON.Stats.Models["gemini-2.5-flash"].API); diff != "" {
		t.Errorf("json stats (-gemini-cli +agentry):\n%s", diff)
	}
}
