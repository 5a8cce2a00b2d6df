package runtime

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentry-dev/agentry/tools"
)

// fakeSource is a ToolSource whose set a test replaces, counting the
// calls of Current.
type fakeSource struct {
	mu      sync.Mutex
	version atomic.Uint64
	tools   []tools.Tool
	reads   atomic.Int64
}

func (f *fakeSource) Version() uint64 { return f.version.Load() }

func (f *fakeSource) Current() []tools.Tool {
	f.reads.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tools
}

func (f *fakeSource) set(ts ...tools.Tool) {
	f.mu.Lock()
	f.tools = ts
	f.mu.Unlock()
	f.version.Add(1)
}

func toolNames(s *Session) []string {
	var out []string
	for _, ti := range s.Tools() {
		out = append(out, ti.Name)
	}
	return out
}

// TestToolSource: a source's tools are declared after the fixed ones; a
// change made during a tool call is declared from the next model request
// of the same turn, its new tool runs, a call of the removed one is
// refused as unregistered, and Session.Tools follows; the source is read
// again only when its version changes.
func TestToolSource(t *testing.T) {
	fixed := &fakeTool{ToolName: "read_file", ToolKind: tools.KindRead}
	src := &fakeSource{}
	newer := &fakeTool{ToolName: "newer", ToolKind: tools.KindRead}
	older := &fakeTool{ToolName: "older", ToolKind: tools.KindRead}
	swap := &fakeTool{ToolName: "swap", ToolKind: tools.KindRead}
	swap.Run = func(context.Context, tools.Call) (tools.Result, error) {
		src.set(swap, newer)
		return tools.Result{LLMContent: "swapped"}, nil
	}
	src.set(older, swap)
	b := newScript(
		callTurn("", fc("c1", "swap", nil)),
		callTurn("", fc("c2", "newer", nil)),
		callTurn("", fc("c3", "older", nil)),
		textTurn("done"),
	)
	s := newTestSession(t, b, Config{Tools: []tools.Tool{fixed}, ToolSource: src})
	reads := src.reads.Load()
	if got := toolNames(s); !slices.Equal(got, []string{"older", "read_file", "swap"}) {
		t.Fatalf("Tools = %v", got)
	}
	if src.reads.Load() != reads {
		t.Error("an unchanged source was read again")
	}
	run(t, s, "go")
	reqs := b.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	if got := declaredNames(reqs[0]); !slices.Equal(got, []string{"read_file", "older", "swap"}) {
		t.Errorf("first request declares %v", got)
	}
	for i, r := range reqs[1:] {
		if got := declaredNames(r); !slices.Equal(got, []string{"read_file", "swap", "newer"}) {
			t.Errorf("request %d declares %v", i+2, got)
		}
	}
	if newer.Calls() != 1 || older.Calls() != 0 {
		t.Errorf("calls: newer %d, older %d", newer.Calls(), older.Calls())
	}
	frs := functionResponses(reqs[3])
	last := frs[len(frs)-1]
	if msg, _ := last.Response["error"].(string); last.Name != "older" || !strings.Contains(msg, `Tool "older" not found`) {
		t.Errorf("older's response = %s %+v", last.Name, last.Response)
	}
	if got := toolNames(s); !slices.Equal(got, []string{"newer", "read_file", "swap"}) {
		t.Errorf("Tools after the change = %v", got)
	}
}

// TestToolSourceTrustedServer: a trusted server's tool from a ToolSource
// runs without asking, as one among Config.Tools does; an untrusted one
// asks.
func TestToolSourceTrustedServer(t *testing.T) {
	for _, trust := range []bool{true, false} {
		asked := 0
		approver := approverFunc(func(context.Context, ApprovalRequest) (Outcome, error) {
			asked++
			return ProceedOnce, nil
		})
		src := &fakeSource{}
		src.set(&mcpFake{fakeTool: fakeTool{ToolName: "docs__search_docs", ToolKind: tools.KindOther}, trust: trust})
		b := newScript(callTurn("", fc("c1", "docs__search_docs", map[string]any{"q": "x"})), textTurn("ok"))
		s := newTestSession(t, b, Config{ToolSource: src, Approver: approver})
		run(t, s, "search")
		if want := map[bool]int{true: 0, false: 1}[trust]; asked != want {
			t.Errorf("trust %v: asked %d times, want %d", trust, asked, want)
		}
	}
}
