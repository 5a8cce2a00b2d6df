package runtime

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentry-dev/agentry/runtime/llm"
	"github.com/agentry-dev/agentry/tools"
)

// chatServer is a minimal Chat Completions server: each request gets the next
// scripted list of SSE chunk payloads.
type chatServer struct {
	mu      sync.Mutex
	scripts [][]string
	bodies  []map[string]any
}

func (c *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	json.Unmarshal(raw, &body)
	c.mu.Lock()
	c.bodies = append(c.bodies, body)
	var chunks []string
	if len(c.scripts) > 0 {
		chunks, c.scripts = c.scripts[0], c.scripts[1:]
	}
	c.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	for _, ch := range chunks {
		fmt.Fprintf(w, "data: %s\n\n", ch)
		w.(http.Flusher).Flush()
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func delta(content string) string {
	return fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{"content":%q}}]}`, content)
}

// TestOpenAIThroughDispatcher runs a tool loop with an openai: model: streamed
// deltas become messages, a tool call split over chunks runs once, and its
// result goes back as a tool message.
func TestOpenAIThroughDispatcher(t *testing.T) {
	cs := &chatServer{scripts: [][]string{
		{
			delta("Let me "), delta("check."),
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"ke"}}]}}]}`,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"y\":\"answer\"}"}}]},"finish_reason":"tool_calls"}]}`,
		},
		{delta("It is 42."), `{"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":30,"completion_tokens":4,"total_tokens":34}}`},
	}}
	srv := httptest.NewServer(cs)
	t.Cleanup(srv.Close)
	s := newTestSession(t, nil, Config{
		Model:    "openai:qwen3",
		Resolver: llm.NewResolver(llm.ResolverConfig{OpenAI: llm.OpenAIConfig{BaseURL: srv.URL + "/v1"}}),
		Tools:    []tools.Tool{lookupTool()},
	})
	evs := run(t, s, "what is the answer?")
	want := []string{
		"initialize", `message user "what is the answer?"`, "agent_start", "session_update",
		`message agent "Let me "`, `message agent "check."`, "tool_request lookup map[key:answer]", "usage",
		`tool_response lookup "value of answer"`, `message agent "It is 42."`, "usage", "agent_end completed",
	}
	if diff := cmp.Diff(want, shape(evs)); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	if u := find(evs, EventUsage)[1].Usage; u.Model != "openai:qwen3" || *u.InputTokens != 30 {
		t.Errorf("usage = %+v", u)
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.bodies[0]["model"] != "qwen3" || cs.bodies[0]["stream"] != true {
		t.Errorf("first request = %v", cs.bodies[0])
	}
	msgs, _ := json.Marshal(cs.bodies[1]["messages"])
	if !strings.Contains(string(msgs), `"role":"tool"`) || !strings.Contains(string(msgs), `"tool_call_id":"call_1"`) || !strings.Contains(string(msgs), "value of answer") {
		t.Errorf("second request's messages = %s", msgs)
	}
}
