package masking_test

import (
	"context"
	"errors"
	"iter"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/masking"
	"github.com/agentry-dev/agentry/processors"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/runtime/llm"
	"github.com/agentry-dev/agentry/tools"
)

// callingModel calls the "big" tool, without call ids, calls times, then
// answers; it records every request's contents.
type callingModel struct {
	calls int

	mu       sync.Mutex
	requests [][]*genai.Content
}

func (m *callingModel) GenerateContent(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	return nil, errors.New("unused")
}

func (m *callingModel) GenerateContentStream(_ context.Context, _ string, contents []*genai.Content, _ *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	m.mu.Lock()
	m.requests = append(m.requests, contents)
	n := len(m.requests)
	m.mu.Unlock()
	part := &genai.Part{Text: "done"}
	if n <= m.calls {
		part = &genai.Part{FunctionCall: &genai.FunctionCall{Name: "big", Args: map[string]any{"n": float64(n)}}}
	}
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		yield(&genai.GenerateContentResponse{Candidates: []*genai.Candidate{{
			Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{part}}, FinishReason: genai.FinishReasonStop,
		}}}, nil)
	}
}

func (m *callingModel) CountTokens(context.Context, string, []*genai.Content, *genai.CountTokensConfig) (*genai.CountTokensResponse, error) {
	return &genai.CountTokensResponse{}, nil
}

type resolver struct{ b llm.Backend }

func (r resolver) Resolve(_ context.Context, name string) (llm.Target, error) {
	ref, err := llm.ParseModel(name)
	return llm.Target{Ref: ref, Backend: r.b}, err
}

// bigTool returns 2,000 characters: ("big" + {"output":"…"})/4 = 504 tokens.
type bigTool struct{}

func (bigTool) Name() string        { return "big" }
func (bigTool) DisplayName() string { return "Big" }
func (bigTool) Kind() tools.Kind    { return tools.KindRead }
func (bigTool) Declaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{Name: "big", Description: "big output"}
}
func (bigTool) Describe(map[string]any) string { return "" }
func (bigTool) Execute(_ context.Context, c tools.Call) (tools.Result, error) {
	n, _ := c.Args["n"].(float64)
	return tools.Result{LLMContent: strings.Repeat(string(rune('a'+int(n))), 2000)}, nil
}

// TestProcessorInASession runs the processor in a real ADK session, whose
// call ids are ADK's own and stripped from requests. The Persist hook
// writes the masked responses into the live session's events by call id,
// as the session service will.
func TestProcessorInASession(t *testing.T) {
	dir := masking.SessionDir(t.TempDir(), "s1")
	m, err := masking.New(masking.Config{ProtectTokens: 600, MinPrunableTokens: 400, SpillDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu        sync.Mutex
		persisted [][]masking.Masked
		sessions  []string
	)
	svc := session.InMemoryService()
	persist := func(ctx context.Context, sessionID string, masked []masking.Masked) error {
		mu.Lock()
		defer mu.Unlock()
		persisted = append(persisted, masked)
		sessions = append(sessions, sessionID)
		// Write through: give the stored events new contents with the
		// responses replaced, as the session store does (ADK's in-memory
		// service shares its stored events with the copies Get returns). A
		// content is replaced, never written: requests share them.
		byID := map[string]masking.Masked{}
		for _, mk := range masked {
			byID[mk.CallID] = mk
		}
		resp, err := svc.Get(ctx, &session.GetRequest{AppName: "agentry", UserID: "user", SessionID: sessionID})
		if err != nil {
			return err
		}
		for ev := range resp.Session.Events().All() {
			if ev.Content == nil {
				continue
			}
			var nc *genai.Content
			for j, p := range ev.Content.Parts {
				if fr := p.FunctionResponse; fr != nil {
					if mk, ok := byID[fr.ID]; ok {
						if nc == nil {
							c := *ev.Content
							c.Parts = slices.Clone(c.Parts)
							nc = &c
						}
						nfr := *fr
						nfr.Response = mk.Response
						np := *p
						np.FunctionResponse = &nfr
						nc.Parts[j] = &np
					}
				}
			}
			if nc != nil {
				ev.Content = nc
			}
		}
		return nil
	}
	model := &callingModel{calls: 5}
	s, err := runtime.New(t.Context(), runtime.Config{
		SessionID: "s1", Model: "gemini-2.5-flash", Resolver: resolver{model},
		Chain: processors.NewChain(masking.NewProcessor(m, runtime.SessionHistory(svc), persist)),
		Tools: []tools.Tool{bigTool{}}, SessionService: svc,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id, err := s.Send(t.Context(), runtime.TextMessage("go"))
	if err != nil {
		t.Fatal(err)
	}
	for ev, err := range s.Stream(t.Context(), id) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == runtime.EventError {
			t.Fatalf("error event: %+v", ev.Error)
		}
	}

	// Request n (1-based) carries n-1 responses; the newest is the request
	// being sent and the model's call before it is the protected latest
	// turn. From request 4 on, the responses beyond the newest one in the
	// history cross the 600-token window: request 4 masks response 1,
	// request 5 response 2, request 6 response 3.
	reqs := model.requests
	if len(reqs) != 6 {
		t.Fatalf("%d requests", len(reqs))
	}
	for n, contents := range reqs {
		var frs []*genai.FunctionResponse
		for _, c := range contents {
			for _, p := range c.Parts {
				if p.FunctionResponse != nil {
					frs = append(frs, p.FunctionResponse)
				}
			}
		}
		if len(frs) != n {
			t.Fatalf("request %d has %d responses", n+1, len(frs))
		}
		for i, fr := range frs {
			if fr.ID != "" {
				t.Errorf("request %d: response %d has the call id %q; ADK's ids must stay stripped", n+1, i+1, fr.ID)
			}
			wantMasked := i+1 <= n-2 // all but the two newest of request n+1
			if got := strings.Contains(fr.Response["output"].(string), "<tool_output_masked>"); got != wantMasked {
				t.Errorf("request %d: response %d masked = %v, want %v", n+1, i+1, got, wantMasked)
			}
		}
	}

	// Each response was masked and persisted once, under its ADK call id.
	if len(persisted) != 3 {
		t.Fatalf("persisted %d times, want 3", len(persisted))
	}
	var calls []string
	for ev := range sessionEvents(t, s) {
		calls = append(calls, ev)
	}
	for i, batch := range persisted {
		if sessions[i] != "s1" || len(batch) != 1 {
			t.Fatalf("persist %d: session %q, %d responses", i, sessions[i], len(batch))
		}
		mk := batch[0]
		if !strings.HasPrefix(mk.CallID, "adk-") || mk.CallID != calls[i] || mk.Name != "big" {
			t.Errorf("persist %d: %s %s, want call %s", i, mk.Name, mk.CallID, calls[i])
		}
		data, err := os.ReadFile(mk.Path)
		if want := "{\n  \"output\": \"" + strings.Repeat(string(rune('a'+i+1)), 2000) + "\"\n}"; err != nil || string(data) != want {
			t.Errorf("spill %s: %.40q (%v)", mk.Path, data, err)
		}
	}
}

// sessionEvents returns the call ids of the session's function calls, in
// order, from its tool_request events.
func sessionEvents(t *testing.T, s *runtime.Session) iter.Seq[string] {
	t.Helper()
	return func(yield func(string) bool) {
		for _, ev := range s.Events() {
			if ev.Type == runtime.EventToolRequest && !yield(ev.ToolRequest.RequestID) {
				return
			}
		}
	}
}
