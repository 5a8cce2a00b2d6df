package runstats_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentry-dev/agentry/runstats"
	"github.com/agentry-dev/agentry/runtime"
)

func ptr(n int) *int { return &n }

func usage(model, role string, in, out, cached int) runtime.Event {
	return runtime.Event{Type: runtime.EventUsage,
		Usage: &runtime.Usage{Model: model, InputTokens: ptr(in), OutputTokens: ptr(out), CachedTokens: ptr(cached)},
		Meta:  map[string]any{"role": role, "durationMs": 100, "totalTokens": in + out, "thoughtsTokens": 2}}
}

// events is a run: two main calls, a subagent's call, a failed stream,
// two tool calls (one edit with its diff stat, one failure).
func events() []runtime.Event {
	child := usage("gemini-2.5-flash", "subagent", 50, 5, 0)
	return []runtime.Event{
		usage("gemini-2.5-pro", "main", 1000, 40, 200),
		{Type: runtime.EventError, Meta: map[string]any{"code": "INVALID_STREAM", "errorType": "NO_FINISH_REASON"}},
		{Type: runtime.EventToolResponse, ToolResponse: &runtime.ToolResponse{Name: "write_file",
			Data: map[string]any{"durationMs": 7, "decision": "auto_accept", "diffStat": map[string]any{"linesAdded": 3, "linesRemoved": 1.0}}}},
		{Type: runtime.EventToolUpdate, ToolUpdate: &runtime.ToolUpdate{Data: map[string]any{"event": &child}}},
		{Type: runtime.EventToolResponse, ToolResponse: &runtime.ToolResponse{Name: "run_shell_command", IsError: true,
			Data: map[string]any{"durationMs": 3.0, "decision": "reject"}}},
		usage("gemini-2.5-pro", "main", 1200, 60, 0),
	}
}

func TestFromEvents(t *testing.T) {
	m := runstats.FromEvents(events())
	pro := m.Models["gemini-2.5-pro"]
	if pro == nil || m.Models["gemini-2.5-flash"] == nil || len(m.Models) != 2 {
		t.Fatalf("models %v", m.Models)
	}
	want := runstats.TokenMetrics{Input: 2000, Prompt: 2200, Candidates: 100, Total: 2300, Cached: 200, Thoughts: 4}
	if d := cmp.Diff(want, pro.Tokens); d != "" {
		t.Errorf("pro tokens (-want +got):\n%s", d)
	}
	if pro.API.TotalRequests != 2 || pro.API.TotalLatencyMs != 200 || pro.API.TotalErrors != 1 || pro.API.ErrorsByType["NO_FINISH_REASON"] != 1 {
		t.Errorf("pro api = %+v", pro.API)
	}
	if r := m.Models["gemini-2.5-flash"].Roles["subagent"]; r == nil || r.TotalRequests != 1 || r.Tokens.Prompt != 50 {
		t.Errorf("the subagent's call: %+v", r)
	}
	tm := m.Tools
	if tm.TotalCalls != 2 || tm.TotalSuccess != 1 || tm.TotalFail != 1 || tm.TotalDurationMs != 10 ||
		tm.TotalDecisions != (runstats.Decisions{AutoAccept: 1, Reject: 1}) || tm.ByName["write_file"].Count != 1 {
		t.Errorf("tools = %+v", tm)
	}
	if m.Files != (runstats.FileMetrics{TotalLinesAdded: 3, TotalLinesRemoved: 1}) {
		t.Errorf("files = %+v", m.Files)
	}
	s := m.StreamStats(1500)
	if s.TotalTokens != 2355 || s.InputTokens != 2250 || s.Input != 2050 || s.ToolCalls != 2 || s.DurationMs != 1500 || len(s.Models) != 2 {
		t.Errorf("stream stats = %+v", s)
	}
}

// TestJSONShape pins gemini-cli's field names.
func TestJSONShape(t *testing.T) {
	b, err := json.Marshal(runstats.FromEvents(events()[4:5]))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"models":{},"tools":{"totalCalls":1,"totalSuccess":0,"totalFail":1,"totalDurationMs":3,` +
		`"totalDecisions":{"accept":0,"reject":1,"modify":0,"auto_accept":0},` +
		`"byName":{"run_shell_command":{"count":1,"success":0,"fail":1,"durationMs":3,"decisions":{"accept":0,"reject":1,"modify":0,"auto_accept":0}}}},` +
		`"files":{"totalLinesAdded":0,"totalLinesRemoved":0}}`
	if string(b) != want {
		t.Errorf("JSON\n got %s\nwant %s", b, want)
	}
}
