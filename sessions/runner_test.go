package sessions

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genai"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
)

// scriptedModel answers every request with "reply N" and records the text
// of each request's history.
type scriptedModel struct {
	mu       sync.Mutex
	requests [][]string
}

func (m *scriptedModel) Name() string { return "scripted" }

func (m *scriptedModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	m.mu.Lock()
	var texts []string
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			texts = append(texts, p.Text)
		}
	}
	m.requests = append(m.requests, texts)
	n := len(m.requests)
	m.mu.Unlock()
	return func(yield func(*model.LLMResponse, error) bool) {
		yield(&model.LLMResponse{Content: genai.NewContentFromText(fmt.Sprintf("reply %d", n), genai.RoleModel), TurnComplete: true}, nil)
	}
}

// TestWithADKRunner runs ADK's runner on a Store, with a model callback
// that masks a user message as agentry's masking processor will: through
// the live session's events and ReplaceEventContent. The next turn's
// request shows the masked text, nothing is appended twice, and the
// masking is in storage.
func TestWithADKRunner(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		llm := &scriptedModel{}
		mask := func(actx agent.Context, _ *model.LLMRequest) (*model.LLMResponse, error) {
			// A callback context's Session() is nil in ADK v2.2.
			sess, err := s.Live(actx, actx.AppName(), actx.UserID(), actx.SessionID())
			if err != nil {
				return nil, err
			}
			for ev := range sess.Events().All() {
				if ev.Content == nil || len(ev.Content.Parts) == 0 || !strings.HasPrefix(ev.Content.Parts[0].Text, "secret") {
					continue
				}
				masked := genai.NewContentFromText("[masked]", genai.Role(ev.Content.Role))
				if err := s.ReplaceEventContent(actx, sess.AppName(), sess.UserID(), sess.ID(), ev.ID, masked); err != nil {
					return nil, err
				}
			}
			return nil, nil
		}
		a, err := llmagent.New(llmagent.Config{Name: "coder", Model: llm, BeforeModelCallbacks: []llmagent.BeforeModelCallback{mask}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := runner.New(runner.Config{AppName: testApp, Agent: a, SessionService: s, AutoCreateSession: true})
		if err != nil {
			t.Fatal(err)
		}
		run := func(text string) {
			for _, err := range r.Run(ctx, testUser, "s1", genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
				if err != nil {
					t.Fatalf("run %q: %v", text, err)
				}
			}
		}
		run("secret: hunter2")
		live := get(t, s, "s1")
		run("hello")
		if get(t, s, "s1") != live {
			t.Error("the runner's second turn left a different live object")
		}

		want := []string{"[masked]", "reply 1", "hello", "reply 2"}
		if got := texts(live); !equalStrings(got, want) {
			t.Errorf("live session %q, want %q", got, want)
		}
		if len(llm.requests) != 2 || strings.Contains(strings.Join(llm.requests[1], "|"), "hunter2") {
			t.Errorf("model requests %q: the second should show the masked message", llm.requests)
		}
		stored := get(t, b.open(t), "s1")
		if got := texts(stored); !equalStrings(got, want) {
			t.Errorf("stored session %q, want %q", got, want)
		}
		for i := range stored.Events().Len() {
			if stored.Events().At(i).ID != live.Events().At(i).ID {
				t.Errorf("stored event %d is %s, live %s", i, stored.Events().At(i).ID, live.Events().At(i).ID)
			}
		}
	})
}

func equalStrings(a, b []string) bool { return slices.Equal(a, b) }
