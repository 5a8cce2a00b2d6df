package conversation_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool/toolconfirmation"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/modeltest"
	"github.com/agentry-dev/agentry/processors"
	"github.com/agentry-dev/agentry/processors/conversation"
)

// captureLLM is a model that records the contents of each request and
// answers with text.
type captureLLM struct{ got [][]*genai.Content }

func (m *captureLLM) Name() string { return "capture" }

func (m *captureLLM) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	m.got = append(m.got, req.Contents)
	return func(yield func(*model.LLMResponse, error) bool) {
		yield(&model.LLMResponse{Content: genai.NewContentFromText("ok", genai.RoleModel), TurnComplete: true}, nil)
	}
}

// builder runs an ADK agent over a fixed history and returns the contents
// of its model request.
type builder struct {
	svc    *modeltest.FixedHistory
	llm    *captureLLM
	runner *runner.Runner
}

func newBuilder(t *testing.T, include llmagent.IncludeContents, chain *processors.Chain) *builder {
	t.Helper()
	b := &builder{svc: &modeltest.FixedHistory{}, llm: &captureLLM{}}
	ag, err := llmagent.New(llmagent.Config{Name: "agentry", Model: b.llm, IncludeContents: include})
	if err != nil {
		t.Fatal(err)
	}
	cfg := runner.Config{AppName: "agentry", Agent: ag, SessionService: b.svc, AutoCreateSession: true}
	if chain != nil {
		p, err := chain.Plugin()
		if err != nil {
			t.Fatal(err)
		}
		cfg.PluginConfig = runner.PluginConfig{Plugins: []*plugin.Plugin{p}}
	}
	if b.runner, err = runner.New(cfg); err != nil {
		t.Fatal(err)
	}
	return b
}

// build returns the request contents for events, or the run's error.
func (b *builder) build(ctx context.Context, sessionID string, events []*session.Event) ([]*genai.Content, error) {
	b.svc.Base = events
	b.llm.got = nil
	for _, err := range b.runner.Run(ctx, "user", sessionID, nil, agent.RunConfig{}) {
		if err != nil {
			return nil, err
		}
	}
	if len(b.llm.got) != 1 {
		return nil, fmt.Errorf("%d model calls, want 1", len(b.llm.got))
	}
	return b.llm.got[0], nil
}

// TestConversationMatchesADK builds the request contents of thousands of
// generated histories both ways — ADK's default building, and ADK's
// current-turn building replaced by the conversation processor with its
// cache — at several points of each history's growth, with histories
// rewritten between points as masking, compression and rewinds rewrite
// them, and compares them part by part.
func TestConversationMatchesADK(t *testing.T) {
	ctx := t.Context()
	adk := newBuilder(t, llmagent.IncludeContentsDefault, nil)
	var ours *builder
	conv := conversation.New(func(ctx context.Context, app, user, id string) (session.Events, error) {
		r, err := ours.svc.Get(ctx, &session.GetRequest{AppName: app, UserID: user, SessionID: id})
		if err != nil {
			return nil, err
		}
		return r.Session.Events(), nil
	})
	ours = newBuilder(t, llmagent.IncludeContentsNone, processors.NewChain(conv))
	histories := 2000
	if testing.Short() {
		histories = 200
	}
	compared, errs := 0, 0
	for seed := range histories {
		g := newGen(uint64(seed))
		sid := fmt.Sprintf("s%d", seed)
		for step := 0; step < 6; step++ {
			g.grow()
			if step > 0 {
				g.rewrite()
			}
			events := slices.Clone(g.events)
			want, wantErr := adk.build(ctx, sid+"-adk", events)
			got, gotErr := ours.build(ctx, sid, events)
			if (wantErr != nil) != (gotErr != nil) {
				t.Fatalf("seed %d step %d: ADK's error %v, ours %v\nhistory:\n%s", seed, step, wantErr, gotErr, dump(events))
			}
			if wantErr != nil {
				errs++
				continue
			}
			if diff := diffContents(want, got); diff != "" {
				t.Fatalf("seed %d step %d: %s\nhistory:\n%s", seed, step, diff, dump(events))
			}
			compared++
		}
		conv.Forget(sid)
	}
	t.Logf("%d requests compared, %d histories ADK refuses as ours does", compared, errs)
	if compared < histories*3 {
		t.Fatalf("only %d requests compared", compared)
	}
}

// diffContents compares two requests' contents part by part.
func diffContents(want, got []*genai.Content) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d contents, ADK has %d\nADK:  %s\nours: %s", len(got), len(want), js(want), js(got))
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.Role != g.Role || len(w.Parts) != len(g.Parts) {
			return fmt.Sprintf("content %d: role %q with %d parts, ADK has %q with %d\nADK:  %s\nours: %s", i, g.Role, len(g.Parts), w.Role, len(w.Parts), js(w), js(g))
		}
		for j := range w.Parts {
			if !reflect.DeepEqual(w.Parts[j], g.Parts[j]) {
				return fmt.Sprintf("content %d part %d differs\nADK:  %s\nours: %s", i, j, js(w.Parts[j]), js(g.Parts[j]))
			}
		}
	}
	return ""
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func dump(events []*session.Event) string {
	var s string
	for i, ev := range events {
		s += fmt.Sprintf("%3d %s id=%s branch=%q scope=%q %s\n", i, ev.Author, ev.ID, ev.Branch, ev.IsolationScope, js(ev.LLMResponse.Content))
	}
	return s
}

// gen generates a session's history the way agentry's sessions grow: user
// prompts, model text and thoughts, function calls answered by one merged
// response event or by several, failed calls, calls left unanswered,
// other agents' turns, events of other branches and scopes, empty events
// and parts, tool confirmations, reused call ids — and rewrites it as
// masking, compression and rewinds do.
type gen struct {
	r      *rand.Rand
	events []*session.Event
	n      int
	ids    []string
}

func newGen(seed uint64) *gen { return &gen{r: rand.New(rand.NewPCG(seed, 0x5eed))} }

func (g *gen) id() string {
	g.n++
	return fmt.Sprintf("e%d", g.n)
}

func (g *gen) add(author string, c *genai.Content) *session.Event {
	ev := &session.Event{ID: g.id(), Author: author, LLMResponse: model.LLMResponse{Content: c}}
	g.events = append(g.events, ev)
	return ev
}

func (g *gen) callID() string {
	if len(g.ids) > 0 && g.r.IntN(40) == 0 {
		return g.ids[g.r.IntN(len(g.ids))] // a reused id
	}
	g.n++
	id := fmt.Sprintf("call_%d", g.n)
	if g.r.IntN(2) == 0 {
		id = fmt.Sprintf("adk-%08x-%d", g.r.Uint32(), g.n)
	}
	g.ids = append(g.ids, id)
	return id
}

func (g *gen) text(n int) string {
	words := []string{"read", "the", "file", "and", "fix", "tests", "{state}", "ok", "done", "ünïcode"}
	s := ""
	for range n {
		s += words[g.r.IntN(len(words))] + " "
	}
	return s
}

// grow adds one to three turns, each starting with a prompt and ending
// where a model call happens: on the prompt, or on the responses to the
// model's calls.
func (g *gen) grow() {
	for range 1 + g.r.IntN(3) {
		g.add("user", genai.NewContentFromText(g.text(1+g.r.IntN(8)), genai.RoleUser))
		if g.r.IntN(10) == 0 {
			g.foreign()
		}
		if g.r.IntN(8) == 0 {
			g.noise()
		}
		for steps := g.r.IntN(4); steps > 0; steps-- {
			if !g.toolStep() {
				break
			}
		}
		if g.r.IntN(3) == 0 {
			g.add("agentry", g.modelText())
		}
	}
}

func (g *gen) modelText() *genai.Content {
	c := &genai.Content{Role: genai.RoleModel}
	if g.r.IntN(3) == 0 {
		c.Parts = append(c.Parts, &genai.Part{Text: "thinking " + g.text(3), Thought: true, ThoughtSignature: []byte{1, 2, byte(g.r.IntN(256))}})
	}
	c.Parts = append(c.Parts, &genai.Part{Text: g.text(1 + g.r.IntN(10))})
	if g.r.IntN(6) == 0 {
		c.Parts = append(c.Parts, &genai.Part{}) // gemini 3's empty last part
	}
	return c
}

// toolStep adds a model turn of calls and their responses; false when
// the turn ended without calls.
func (g *gen) toolStep() bool {
	n := 1 + g.r.IntN(3)
	call := &genai.Content{Role: genai.RoleModel}
	if g.r.IntN(3) == 0 {
		call.Parts = append(call.Parts, &genai.Part{Text: g.text(4)})
	}
	var calls []*genai.FunctionCall
	for i := range n {
		fc := &genai.FunctionCall{ID: g.callID(), Name: fmt.Sprintf("tool_%d", g.r.IntN(4)), Args: map[string]any{"path": g.text(1), "n": float64(i), "nested": map[string]any{"a": []any{"x", 1.5}}}}
		calls = append(calls, fc)
		p := &genai.Part{FunctionCall: fc}
		if i == 0 && g.r.IntN(3) == 0 {
			p.ThoughtSignature = []byte("sig")
		}
		call.Parts = append(call.Parts, p)
	}
	g.add("agentry", call)
	if g.r.IntN(25) == 0 {
		return false // left unanswered: the run was cut off
	}
	resp := func(fc *genai.FunctionCall) *genai.Part {
		r := map[string]any{"output": g.text(1 + g.r.IntN(20))}
		if g.r.IntN(6) == 0 {
			r = map[string]any{"error": "permission denied"}
		}
		return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: fc.ID, Name: fc.Name, Response: r}}
	}
	switch {
	case n > 1 && g.r.IntN(3) == 0:
		// One response event per call, as separately stored answers.
		for _, fc := range calls {
			g.add("agentry", &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{resp(fc)}})
		}
	default:
		c := &genai.Content{Role: genai.RoleUser}
		order := g.r.Perm(n)
		for _, i := range order {
			c.Parts = append(c.Parts, resp(calls[i]))
		}
		g.add("agentry", c)
	}
	return true
}

// foreign adds another agent's turn: text, a call and its response.
func (g *gen) foreign() {
	switch g.r.IntN(3) {
	case 0:
		g.add("helper", genai.NewContentFromText(g.text(5), genai.RoleModel))
	case 1:
		g.add("helper", &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: g.callID(), Name: "grep", Args: map[string]any{"q": "x"}}}}})
	default:
		g.add("helper", &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: g.callID(), Name: "grep", Response: map[string]any{"output": []any{"a", "b"}}}}}})
	}
}

// noise adds events the agent must not see, or sees oddly.
func (g *gen) noise() {
	switch g.r.IntN(7) {
	case 0:
		g.add("agentry", nil)
	case 1:
		g.add("agentry", &genai.Content{Role: genai.RoleModel})
	case 2:
		g.add("agentry", &genai.Content{Parts: []*genai.Part{{Text: "no role"}}})
	case 3:
		ev := g.add("agentry", genai.NewContentFromText("other branch", genai.RoleModel))
		ev.Branch = []string{"agentry.sub", "other", "agentry"}[g.r.IntN(3)]
	case 4:
		ev := g.add("agentry", genai.NewContentFromText("scoped", genai.RoleModel))
		ev.IsolationScope = "task-1"
	case 5:
		id := g.callID()
		g.add("agentry", &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: id, Name: toolconfirmation.FunctionCallName}}}})
		g.add("user", &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: id, Name: toolconfirmation.FunctionCallName, Response: map[string]any{"confirmed": true}}}}})
	default:
		// A response nothing called: an orphan.
		g.add("agentry", &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: "orphan-" + g.id(), Name: "x", Response: map[string]any{}}}}})
	}
}

// rewrite rewrites the history as agentry does between model calls, now
// and then: a masked tool output (a new content for the same event), a
// compression (the older events replaced by a summary and its
// acknowledgement) or a rewind (the history cut before a prompt).
func (g *gen) rewrite() {
	switch g.r.IntN(8) {
	case 0:
		for i := len(g.events) - 1; i >= 0; i-- {
			ev := g.events[i]
			if c := ev.LLMResponse.Content; c != nil && slices.ContainsFunc(c.Parts, func(p *genai.Part) bool { return p != nil && p.FunctionResponse != nil }) {
				nc := *c
				nc.Parts = slices.Clone(c.Parts)
				for j, p := range nc.Parts {
					if p != nil && p.FunctionResponse != nil {
						fr := *p.FunctionResponse
						fr.Response = map[string]any{"output": "<tool_output_masked>"}
						np := *p
						np.FunctionResponse = &fr
						nc.Parts[j] = &np
					}
				}
				nev := *ev
				nev.LLMResponse.Content = &nc
				g.events[i] = &nev
				return
			}
		}
	case 1:
		if len(g.events) < 6 {
			return
		}
		keep := len(g.events) / 2
		for keep < len(g.events) && g.events[keep].Author != "user" {
			keep++
		}
		summary := []*session.Event{
			{ID: g.id(), Author: "user", LLMResponse: model.LLMResponse{Content: genai.NewContentFromText("<state_snapshot>"+g.text(6)+"</state_snapshot>", genai.RoleUser)}},
			{ID: g.id(), Author: "agentry", LLMResponse: model.LLMResponse{Content: genai.NewContentFromText("Got it. Thanks for the additional context!", genai.RoleModel)}},
		}
		g.events = append(summary, g.events[keep:]...)
	case 2:
		for i := len(g.events) - 1; i > 0; i-- {
			if g.events[i].Author == "user" && g.r.IntN(2) == 0 {
				g.events = g.events[:i]
				return
			}
		}
	}
}
