package runtime

import (
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/runtime/handle"
	"github.com/agentry-dev/agentry/tools"
)

// probeKey keys the probe plugin's per-stream counter.
type probeKey struct{}

// TestStreamHandle: a plugin's callbacks reach the running stream through
// the context: its ids, whether it is the session's first, its prompt, a
// per-stream value that the next stream does not share, and events it
// adds to the stream.
func TestStreamHandle(t *testing.T) {
	type seen struct {
		session, stream, prompt string
		initial                 bool
		n                       int
	}
	var mu sync.Mutex
	var got []seen
	probe, err := plugin.New(plugin.Config{Name: "probe", BeforeModelCallback: func(ctx agent.Context, _ *model.LLMRequest) (*model.LLMResponse, error) {
		s := StreamFrom(ctx)
		if s == nil {
			return nil, errors.New("no stream on the callback's context")
		}
		n := s.Local(probeKey{}, func() any { return new(int) }).(*int)
		*n++
		mu.Lock()
		got = append(got, seen{s.SessionID(), s.ID(), handle.PromptText(s.Prompt()), s.Initial(), *n})
		mu.Unlock()
		s.Custom("probe", map[string]any{"n": *n})
		return nil, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	b := newScript(callTurn("", fc("c1", "read", nil)), textTurn("one"), textTurn("two"))
	read := &fakeTool{ToolName: "read", ToolKind: tools.KindRead}
	s := newTestSession(t, b, Config{SessionID: "s1", Tools: []tools.Tool{read}, Plugins: []*plugin.Plugin{probe}})

	id1, err := s.Send(t.Context(), TextMessage("first"))
	if err != nil {
		t.Fatal(err)
	}
	evs1 := collectStream(t, s, id1)
	id2, err := s.Send(t.Context(), TextMessage("second"))
	if err != nil {
		t.Fatal(err)
	}
	collectStream(t, s, id2)

	want := []seen{
		{"s1", id1, "first", true, 1},
		{"s1", id1, "first", true, 2},
		{"s1", id2, "second", false, 1},
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(seen{})); d != "" {
		t.Errorf("what the plugin saw (-want +got):\n%s", d)
	}
	var ns []any
	for _, ev := range find(evs1, EventCustom) {
		if ev.Custom.Kind == "probe" {
			ns = append(ns, ev.Custom.Data["n"])
		}
	}
	if d := cmp.Diff([]any{1, 2}, ns); d != "" {
		t.Errorf("probe events of the first stream (-want +got):\n%s", d)
	}
}

// TestStreamRestart: a plugin that restarts the invocation stops it and
// the stream goes on with the plugin's next user turn, ending completed.
func TestStreamRestart(t *testing.T) {
	restarted := false
	p, err := plugin.New(plugin.Config{Name: "restart", BeforeModelCallback: func(ctx agent.Context, _ *model.LLMRequest) (*model.LLMResponse, error) {
		if restarted {
			return nil, nil
		}
		restarted = true
		cause := errors.New("try again")
		StreamFrom(ctx).Restart(cause, genai.NewContentFromText("once more", genai.RoleUser))
		return nil, cause
	}})
	if err != nil {
		t.Fatal(err)
	}
	b := newScript(textTurn("done"))
	s := newTestSession(t, b, Config{Plugins: []*plugin.Plugin{p}})
	evs := run(t, s, "go")
	if end := last(evs); end.AgentEnd.Reason != EndCompleted || len(find(evs, EventError)) != 0 {
		t.Fatalf("ended %+v with errors %+v", end.AgentEnd, find(evs, EventError))
	}
	reqs := b.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1 (the restarted invocation's)", len(reqs))
	}
	if got := lastUserText(reqs[0]); got != "once more" {
		t.Errorf("the restarted invocation's user turn is %q, want the plugin's %q", got, "once more")
	}
}
