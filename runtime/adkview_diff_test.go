package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/functiontool"
	"google.golang.org/genai"
)

// scriptedLLM answers each model call from a script derived from a seed:
// some calls answer with one or several (parallel) tool calls, with or
// without ids, the others with text; it records each request as JSON.
type scriptedLLM struct {
	rng      *rand.Rand
	requests []string
	calls    int
}

func (m *scriptedLLM) Name() string { return "scripted" }

func (m *scriptedLLM) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		b, _ := json.Marshal(req.Contents)
		m.requests = append(m.requests, string(b))
		m.calls++
		// The last content answers calls: text or more calls; a prompt:
		// calls most of the time.
		var parts []*genai.Part
		if m.rng.IntN(3) > 0 && m.calls%4 != 0 {
			for i := range 1 + m.rng.IntN(3) {
				key := "ok"
				if m.rng.IntN(5) == 0 {
					key = "bad"
				}
				parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{
					ID: fmt.Sprintf("c%d-%d", m.calls, i), Name: "lookup", Args: map[string]any{"key": key},
				}})
			}
		} else {
			parts = []*genai.Part{{Text: fmt.Sprintf("answer %d", m.calls)}}
		}
		yield(&model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: parts}, TurnComplete: true}, nil)
	}
}

// runADK runs turns prompts through an ADK runner over svc (agentry's
// agent setting, IncludeContentsNone) and returns what the model was
// asked and the events, each as JSON without ids and times.
func runADK(t *testing.T, seed uint64, svc session.Service, turns int) (requests, events []string) {
	t.Helper()
	ctx := t.Context()
	lookup, err := functiontool.New(functiontool.Config{Name: "lookup", Description: "Looks a key up."},
		func(_ agent.Context, a struct {
			Key string `json:"key"`
		}) (map[string]any, error) {
			if a.Key == "bad" {
				return nil, errors.New("no such key")
			}
			return map[string]any{"output": "value of " + a.Key}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	llm := &scriptedLLM{rng: rand.New(rand.NewPCG(seed, 1))}
	ag, err := llmagent.New(llmagent.Config{Name: "agentry", Model: llm, Tools: []tool.Tool{lookup}, IncludeContents: llmagent.IncludeContentsNone})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(runner.Config{AppName: "app", Agent: ag, SessionService: svc, AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	for turn := range turns {
		msg := genai.NewContentFromText(fmt.Sprintf("prompt %d", turn), genai.RoleUser)
		for ev, err := range r.Run(ctx, "user", "s", msg, agent.RunConfig{}) {
			if err != nil {
				t.Fatalf("turn %d: %v", turn, err)
			}
			events = append(events, eventShape(ev))
			if llm.calls > 200 {
				t.Fatal("the script does not end")
			}
		}
	}
	return llm.requests, events
}

func eventShape(ev *session.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %v ", ev.Author, ev.Partial)
	if c := ev.LLMResponse.Content; c != nil {
		j, _ := json.Marshal(c)
		b.Write(j)
	}
	if ev.LLMResponse.ErrorMessage != "" {
		b.WriteString(" error " + ev.LLMResponse.ErrorMessage)
	}
	return b.String()
}

// TestADKViewDifferential: ADK's runner, with agentry's agent setting,
// asks the model the same and produces the same events over the view as
// over the store itself, turn after turn of generated conversations with
// single and parallel calls, failing tools and text answers.
func TestADKViewDifferential(t *testing.T) {
	for seed := range uint64(40) {
		wantReq, wantEv := runADK(t, seed, session.InMemoryService(), 12)
		view := newADKView(session.InMemoryService())
		gotReq, gotEv := runADK(t, seed, view, 12)
		if m := view.marks["s"]; m == nil || m.start == 0 {
			t.Fatalf("seed %d: the runner never saw a window", seed)
		}
		if len(gotReq) != len(wantReq) || len(gotEv) != len(wantEv) {
			t.Fatalf("seed %d: %d requests and %d events over the view, %d and %d without", seed, len(gotReq), len(gotEv), len(wantReq), len(wantEv))
		}
		for i := range wantReq {
			if gotReq[i] != wantReq[i] {
				t.Fatalf("seed %d request %d:\nwithout the view %s\nover the view    %s", seed, i, wantReq[i], gotReq[i])
			}
		}
		for i := range wantEv {
			if gotEv[i] != wantEv[i] {
				t.Fatalf("seed %d event %d:\nwithout the view %s\nover the view    %s", seed, i, wantEv[i], gotEv[i])
			}
		}
	}
}
