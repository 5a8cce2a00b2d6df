package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/version"
	"github.com/agentry-dev/agentry/runtime/llm/chatapi"
)

// oaiFake is a Chat Completions server: it records every request and answers
// with respond.
type oaiFake struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	seen    []oaiSeen
	respond http.HandlerFunc
}

type oaiSeen struct {
	header http.Header
	body   map[string]any
}

func newOAIFake(t *testing.T, respond http.HandlerFunc) (*OpenAI, *oaiFake) {
	t.Helper()
	f := &oaiFake{t: t, respond: respond}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	b, err := NewOpenAI(OpenAIConfig{BaseURL: f.srv.URL + "/v1", HTTPClient: f.srv.Client()})
	if err != nil {
		t.Fatalf("NewOpenAI: %v", err)
	}
	return b, f
}

func (f *oaiFake) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		f.t.Errorf("request %s %s, want POST /v1/chat/completions", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		f.t.Errorf("read request body: %v", err)
		return
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		f.t.Errorf("request body is not JSON: %v\n%s", err, raw)
	}
	f.mu.Lock()
	f.seen = append(f.seen, oaiSeen{header: r.Header.Clone(), body: body})
	f.mu.Unlock()
	f.respond(w, r)
}

func (f *oaiFake) requests() []oaiSeen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]oaiSeen(nil), f.seen...)
}

// only returns the single request the server saw.
func (f *oaiFake) only() oaiSeen {
	f.t.Helper()
	seen := f.requests()
	if len(seen) != 1 {
		f.t.Fatalf("server saw %d requests, want 1", len(seen))
	}
	return seen[0]
}

// sse answers with events as server-sent events, then [DONE].
func oaiSSE(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		oaiWriteSSE(w, events...)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

func oaiWriteSSE(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range events {
		fmt.Fprintf(w, "data: %s\n\n", e)
		w.(http.Flusher).Flush()
	}
}

func oaiDelta(d string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"served-model","choices":[{"index":0,"delta":` + d + `,"logprobs":null,"finish_reason":null}]}`
}

func oaiFinish(reason string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"served-model","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"` + reason + `"}]}`
}

func oaiUsageEvent(prompt, completion, cached, reasoning int) string {
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"served-model","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d},"completion_tokens_details":{"reasoning_tokens":%d}}}`,
		prompt, completion, prompt+completion, cached, reasoning)
}

// collect drains seq, stopping at the first error, and checks every chunk
// has the shape agentry's dispatcher relies on.
func oaiCollect(t *testing.T, seq iter.Seq2[*genai.GenerateContentResponse, error]) ([]*genai.GenerateContentResponse, error) {
	t.Helper()
	var out []*genai.GenerateContentResponse
	for r, err := range seq {
		if err != nil {
			return out, err
		}
		if len(r.Candidates) != 1 || r.Candidates[0].Content == nil || r.Candidates[0].Content.Role != genai.RoleModel {
			t.Fatalf("chunk %d has no single model candidate: %+v", len(out), r)
		}
		out = append(out, r)
	}
	return out, nil
}

func oaiUserText(s string) []*genai.Content {
	return []*genai.Content{genai.NewContentFromText(s, genai.RoleUser)}
}

func oaiMustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestOpenAIStreamText(t *testing.T) {
	b, f := newOAIFake(t, oaiSSE(
		oaiDelta(`{"role":"assistant","content":""}`),
		oaiDelta(`{"content":"Hel"}`),
		oaiDelta(`{"content":"lo"}`),
		oaiDelta(`{"content":" world"}`),
		oaiFinish("stop"),
		oaiUsageEvent(11, 7, 4, 2),
	))
	chunks, err := oaiCollect(t, b.GenerateContentStream(t.Context(), "my-model", oaiUserText("hi"), nil))
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	if len(chunks) != 5 {
		t.Fatalf("got %d chunks, want 5 (3 text, finish, usage): %s", len(chunks), oaiMustJSON(t, chunks))
	}
	for i, want := range []string{"Hel", "lo", " world"} {
		c := chunks[i]
		parts := c.Candidates[0].Content.Parts
		if len(parts) != 1 || parts[0].Text != want || parts[0].Thought {
			t.Errorf("chunk %d parts = %s, want one text part %q", i, oaiMustJSON(t, parts), want)
		}
		if c.UsageMetadata != nil || c.Candidates[0].FinishReason != "" {
			t.Errorf("chunk %d carries usage or finish reason early", i)
		}
		if c.ModelVersion != "served-model" {
			t.Errorf("chunk %d ModelVersion = %q, want served-model", i, c.ModelVersion)
		}
	}
	if got := chunks[3].Candidates[0].FinishReason; got != genai.FinishReasonStop {
		t.Errorf("finish chunk FinishReason = %q, want STOP", got)
	}
	last := chunks[4]
	want := &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 11, CandidatesTokenCount: 5, TotalTokenCount: 18, CachedContentTokenCount: 4, ThoughtsTokenCount: 2}
	if diff := cmp.Diff(want, last.UsageMetadata); diff != "" {
		t.Errorf("usage on last chunk (-want +got):\n%s", diff)
	}

	body := f.only().body
	if body["model"] != "my-model" || body["stream"] != true {
		t.Errorf("request model/stream = %v/%v", body["model"], body["stream"])
	}
	if diff := cmp.Diff(map[string]any{"include_usage": true}, body["stream_options"]); diff != "" {
		t.Errorf("stream_options (-want +got):\n%s", diff)
	}
}

func TestOpenAIStreamToolCalls(t *testing.T) {
	call := func(id, name, args string) *genai.FunctionCall {
		var m map[string]any
		if err := json.Unmarshal([]byte(args), &m); err != nil {
			t.Fatal(err)
		}
		return &genai.FunctionCall{ID: id, Name: name, Args: m}
	}
	tests := []struct {
		name   string
		events []string
		want   []*genai.FunctionCall
		finish genai.FinishReason
	}{{
		name: "id name and arguments split over deltas",
		events: []string{
			oaiDelta(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"arguments":""}}]}`),
			oaiDelta(`{"tool_calls":[{"index":0,"function":{"name":"read_file"}}]}`),
			oaiDelta(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}`),
			oaiDelta(`{"tool_calls":[{"index":0,"function":{"arguments":"th\": \"a.go\", \"limit\""}}]}`),
			oaiDelta(`{"tool_calls":[{"index":0,"function":{"arguments":": 10}"}}]}`),
			oaiFinish("tool_calls"),
		},
		want:   []*genai.FunctionCall{call("call_1", "read_file", `{"path":"a.go","limit":10}`)},
		finish: genai.FinishReasonStop,
	}, {
		name: "two parallel calls interleaved",
		events: []string{
			oaiDelta(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"ls","arguments":""}}]}`),
			oaiDelta(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"cat","arguments":"{\"file\":"}}]}`),
			oaiDelta(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"dir\":\"src\"}"}}]}`),
			oaiDelta(`{"tool_calls":[{"index":1,"function":{"arguments":"\"x.txt\"}"}}]}`),
			oaiFinish("tool_calls"),
		},
		want:   []*genai.FunctionCall{call("call_a", "ls", `{"dir":"src"}`), call("call_b", "cat", `{"file":"x.txt"}`)},
		finish: genai.FinishReasonStop,
	}, {
		name: "whole calls all numbered 0",
		events: []string{
			oaiDelta(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"ls","arguments":"{}"}}]}`),
			oaiDelta(`{"tool_calls":[{"index":0,"id":"call_b","type":"function","function":{"name":"pwd","arguments":"{}"}}]}`),
			oaiFinish("tool_calls"),
		},
		want:   []*genai.FunctionCall{call("call_a", "ls", `{}`), call("call_b", "pwd", `{}`)},
		finish: genai.FinishReasonStop,
	}, {
		name: "no arguments and no finish reason",
		events: []string{
			oaiDelta(`{"tool_calls":[{"index":0,"id":"call_n","type":"function","function":{"name":"now"}}]}`),
		},
		want: []*genai.FunctionCall{call("call_n", "now", `{}`)},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newOAIFake(t, oaiSSE(tt.events...))
			chunks, err := oaiCollect(t, b.GenerateContentStream(t.Context(), "m", oaiUserText("go"), nil))
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			var withCalls []*genai.GenerateContentResponse
			for _, c := range chunks {
				for _, p := range c.Candidates[0].Content.Parts {
					if p.FunctionCall != nil {
						withCalls = append(withCalls, c)
						break
					}
				}
			}
			if len(withCalls) != 1 {
				t.Fatalf("%d chunks carry function calls, want 1: %s", len(withCalls), oaiMustJSON(t, chunks))
			}
			var got []*genai.FunctionCall
			for _, p := range withCalls[0].Candidates[0].Content.Parts {
				got = append(got, p.FunctionCall)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("function calls (-want +got):\n%s", diff)
			}
			if fr := withCalls[0].Candidates[0].FinishReason; fr != tt.finish {
				t.Errorf("FinishReason = %q, want %q", fr, tt.finish)
			}
		})
	}
}

// TestOpenAIStreamAggregate checks the contract with agentry's dispatcher:
// text arrives as partial deltas and each call exactly once in the final
// response.
func TestOpenAIStreamAggregate(t *testing.T) {
	b, _ := newOAIFake(t, oaiSSE(
		oaiDelta(`{"reasoning_content":"Need the file."}`),
		oaiDelta(`{"content":"Reading "}`),
		oaiDelta(`{"content":"it."}`),
		oaiDelta(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":"}}]}`),
		oaiDelta(`{"tool_calls":[{"index":0,"function":{"arguments":"\"a.go\"}"}}]}`),
		oaiFinish("tool_calls"),
		oaiUsageEvent(3, 4, 0, 0),
	))
	var partials []string
	var final []*genai.Part
	for r, err := range Aggregate(b.GenerateContentStream(t.Context(), "m", oaiUserText("go"), nil)) {
		if err != nil {
			t.Fatalf("aggregate: %v", err)
		}
		if r.Partial {
			partials = append(partials, r.Content.Parts[0].Text)
			continue
		}
		final = r.Content.Parts
		if r.UsageMetadata == nil || r.UsageMetadata.TotalTokenCount != 7 {
			t.Errorf("final usage = %+v, want total 7", r.UsageMetadata)
		}
	}
	if diff := cmp.Diff([]string{"Need the file.", "Reading ", "it."}, partials); diff != "" {
		t.Errorf("partials (-want +got):\n%s", diff)
	}
	want := []*genai.Part{
		{Text: "Need the file.", Thought: true},
		{Text: "Reading it."},
		{FunctionCall: &genai.FunctionCall{ID: "call_1", Name: "read_file", Args: map[string]any{"path": "a.go"}}},
	}
	if diff := cmp.Diff(want, final); diff != "" {
		t.Errorf("final parts (-want +got):\n%s", diff)
	}
}

func TestOpenAIStreamMalformedToolCall(t *testing.T) {
	b, _ := newOAIFake(t, oaiSSE(
		oaiDelta(`{"content":"Calling."}`),
		oaiDelta(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"write_file","arguments":"{\"path\": \"a.go\", "}}]}`),
		oaiFinish("tool_calls"),
	))
	chunks, err := oaiCollect(t, b.GenerateContentStream(t.Context(), "m", oaiUserText("go"), nil))
	if len(chunks) != 1 || chunks[0].Candidates[0].Content.Parts[0].Text != "Calling." {
		t.Errorf("chunks before the error = %s, want the text chunk", oaiMustJSON(t, chunks))
	}
	if !errors.Is(err, ErrMalformedToolCall) {
		t.Fatalf("err = %v, want ErrMalformedToolCall", err)
	}
	for _, want := range []string{`"write_file"`, `{"path": "a.go", `} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestOpenAIStreamReasoning(t *testing.T) {
	tests := []struct{ name, field string }{
		{"vLLM and llama.cpp", "reasoning_content"},
		{"Ollama", "reasoning"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newOAIFake(t, oaiSSE(
				oaiDelta(`{"role":"assistant","`+tt.field+`":"Let me "}`),
				oaiDelta(`{"`+tt.field+`":"think."}`),
				oaiDelta(`{"content":"Done.","`+tt.field+`":null}`),
				oaiFinish("stop"),
			))
			chunks, err := oaiCollect(t, b.GenerateContentStream(t.Context(), "m", oaiUserText("q"), nil))
			if err != nil {
				t.Fatal(err)
			}
			var got []*genai.Part
			for _, c := range chunks {
				got = append(got, c.Candidates[0].Content.Parts...)
			}
			want := []*genai.Part{{Text: "Let me ", Thought: true}, {Text: "think.", Thought: true}, {Text: "Done."}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("parts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenAIFinishReason(t *testing.T) {
	tests := []struct {
		reason string
		want   genai.FinishReason
	}{
		{"stop", genai.FinishReasonStop},
		{"length", genai.FinishReasonMaxTokens},
		{"tool_calls", genai.FinishReasonStop},
		{"function_call", genai.FinishReasonStop},
		{"content_filter", genai.FinishReasonSafety},
		{"eos_token", genai.FinishReasonOther},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			b, _ := newOAIFake(t, oaiSSE(oaiDelta(`{"content":"x"}`), oaiFinish(tt.reason)))
			chunks, err := oaiCollect(t, b.GenerateContentStream(t.Context(), "m", oaiUserText("q"), nil))
			if err != nil {
				t.Fatal(err)
			}
			if got := chunks[len(chunks)-1].Candidates[0].FinishReason; got != tt.want {
				t.Errorf("FinishReason = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOpenAIRequestMapping(t *testing.T) {
	contents := []*genai.Content{
		{Role: genai.RoleUser, Parts: []*genai.Part{{Text: "List the files."}, {Text: "Then read main.go."}}},
		{Role: genai.RoleModel, Parts: []*genai.Part{
			{Text: "Plan: list, then read.", Thought: true, ThoughtSignature: []byte("sig")},
			{Text: "Sure."},
			{FunctionCall: &genai.FunctionCall{ID: "call_a", Name: "list_directory", Args: map[string]any{"path": "."}}},
			{FunctionCall: &genai.FunctionCall{Name: "read_file", Args: map[string]any{"path": "main.go"}}},
		}},
		{Role: genai.RoleUser, Parts: []*genai.Part{
			{FunctionResponse: &genai.FunctionResponse{ID: "call_a", Name: "list_directory", Response: map[string]any{"output": "main.go"}}},
			{FunctionResponse: &genai.FunctionResponse{Name: "read_file", Response: map[string]any{"output": "package main"}}},
		}},
		{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "It is a main package."}}},
		{Role: genai.RoleUser, Parts: []*genai.Part{
			{Text: "What is in this picture?"},
			{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}}},
			{InlineData: &genai.Blob{MIMEType: "application/pdf", Data: []byte("%PDF")}},
		}},
	}
	cfg := &genai.GenerateContentConfig{
		SystemInstruction: &genai.Content{Parts: []*genai.Part{{Text: "You are agentry."}, {Text: "Be brief."}}},
		Tools: []*genai.Tool{
			{FunctionDeclarations: []*genai.FunctionDeclaration{
				{
					Name:        "list_directory",
					Description: "Lists a directory.",
					ParametersJsonSchema: map[string]any{
						"type":       "object",
						"properties": map[string]any{"path": map[string]any{"type": "string"}},
						"required":   []any{"path"},
					},
				},
				{
					Name:        "read_file",
					Description: "Reads a file.",
					Parameters: &genai.Schema{
						Type: genai.TypeObject,
						Properties: map[string]*genai.Schema{
							"path":  {Type: genai.TypeString, Description: "File path."},
							"mode":  {Type: genai.TypeString, Enum: []string{"text", "binary"}},
							"lines": {Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeInteger}},
						},
						Required: []string{"path"},
					},
				},
				{Name: "now"},
			}},
			{GoogleSearch: &genai.GoogleSearch{}},
		},
		ToolConfig:      &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAuto}},
		Temperature:     genai.Ptr[float32](0.2),
		TopP:            genai.Ptr[float32](0.95),
		TopK:            genai.Ptr[float32](40),
		MaxOutputTokens: 1024,
		StopSequences:   []string{"END"},
		Seed:            genai.Ptr[int32](42),
		CandidateCount:  1,
		SafetySettings:  []*genai.SafetySetting{{Category: genai.HarmCategoryHarassment, Threshold: genai.HarmBlockThresholdBlockNone}},
		ThinkingConfig:  &genai.ThinkingConfig{IncludeThoughts: true, ThinkingBudget: genai.Ptr[int32](1024)},
		Labels:          map[string]string{"team": "agentry"},
	}
	before := oaiMustJSON(t, []any{contents, cfg})

	b, f := newOAIFake(t, oaiSSE(oaiDelta(`{"content":"A logo."}`), oaiFinish("stop")))
	if _, err := oaiCollect(t, b.GenerateContentStream(t.Context(), "qwen3", contents, cfg)); err != nil {
		t.Fatal(err)
	}
	if after := oaiMustJSON(t, []any{contents, cfg}); after != before {
		t.Errorf("request was mutated:\nbefore %s\nafter  %s", before, after)
	}

	const want = `{
	  "model": "qwen3",
	  "stream": true,
	  "stream_options": {"include_usage": true},
	  "messages": [
	    {"role": "system", "content": "You are agentry.\nBe brief."},
	    {"role": "user", "content": "List the files.\nThen read main.go."},
	    {"role": "assistant", "content": "Sure.", "tool_calls": [
	      {"id": "call_a", "type": "function", "function": {"name": "list_directory", "arguments": "{\"path\":\".\"}"}},
	      {"id": "call_agentry_1_3", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"main.go\"}"}}
	    ]},
	    {"role": "tool", "tool_call_id": "call_a", "content": "{\"output\":\"main.go\"}"},
	    {"role": "tool", "tool_call_id": "call_agentry_1_3", "content": "{\"output\":\"package main\"}"},
	    {"role": "assistant", "content": "It is a main package."},
	    {"role": "user", "content": [
	      {"type": "text", "text": "What is in this picture?"},
	      {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}},
	      {"type": "text", "text": "[application/pdf content omitted: it cannot be sent to this model]"}
	    ]}
	  ],
	  "tools": [
	    {"type": "function", "function": {"name": "list_directory", "description": "Lists a directory.", "parameters": {
	      "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
	    {"type": "function", "function": {"name": "read_file", "description": "Reads a file.", "parameters": {
	      "type": "object",
	      "properties": {
	        "path": {"type": "string", "description": "File path."},
	        "mode": {"type": "string", "enum": ["text", "binary"]},
	        "lines": {"type": "array", "items": {"type": "integer"}}
	      },
	      "required": ["path"]}}},
	    {"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}}
	  ],
	  "tool_choice": "auto",
	  "temperature": 0.2,
	  "top_p": 0.95,
	  "max_tokens": 1024,
	  "stop": ["END"],
	  "seed": 42
	}`
	var wantBody map[string]any
	if err := json.Unmarshal([]byte(want), &wantBody); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantBody, f.only().body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

// TestOpenAIRequestOptions checks the request fields that depend on one
// config setting each.
func TestOpenAIRequestOptions(t *testing.T) {
	decls := []*genai.FunctionDeclaration{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	withTools := func(mode genai.FunctionCallingConfigMode, names ...string) *genai.GenerateContentConfig {
		return &genai.GenerateContentConfig{
			Tools:      []*genai.Tool{{FunctionDeclarations: decls}},
			ToolConfig: &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: mode, AllowedFunctionNames: names}},
		}
	}
	tests := []struct {
		name string
		cfg  *genai.GenerateContentConfig
		// want holds the expected value of each listed body key; nil means
		// the key must be absent.
		want map[string]any
	}{{
		name: "mode NONE",
		cfg:  withTools(genai.FunctionCallingConfigModeNone),
		want: map[string]any{"tool_choice": "none", "tools": []any{"a", "b", "c"}},
	}, {
		name: "mode ANY",
		cfg:  withTools(genai.FunctionCallingConfigModeAny),
		want: map[string]any{"tool_choice": "required", "tools": []any{"a", "b", "c"}},
	}, {
		name: "mode ANY with one allowed function",
		cfg:  withTools(genai.FunctionCallingConfigModeAny, "b"),
		want: map[string]any{"tool_choice": map[string]any{"type": "function", "function": map[string]any{"name": "b"}}, "tools": []any{"b"}},
	}, {
		name: "mode ANY with two allowed functions",
		cfg:  withTools(genai.FunctionCallingConfigModeAny, "a", "c"),
		want: map[string]any{"tool_choice": "required", "tools": []any{"a", "c"}},
	}, {
		name: "mode AUTO",
		cfg:  withTools(genai.FunctionCallingConfigModeAuto),
		want: map[string]any{"tool_choice": "auto", "tools": []any{"a", "b", "c"}},
	}, {
		name: "mode unset",
		cfg:  &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: decls}}},
		want: map[string]any{"tool_choice": nil, "tools": []any{"a", "b", "c"}},
	}, {
		name: "tool choice without tools",
		cfg:  &genai.GenerateContentConfig{ToolConfig: &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAny}}},
		want: map[string]any{"tool_choice": nil, "tools": nil},
	}, {
		name: "JSON output",
		cfg:  &genai.GenerateContentConfig{ResponseMIMEType: "application/json"},
		want: map[string]any{"response_format": map[string]any{"type": "json_object"}},
	}, {
		name: "JSON output with JSON schema",
		cfg: &genai.GenerateContentConfig{
			ResponseMIMEType:   "application/json",
			ResponseJsonSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}},
		},
		want: map[string]any{"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name":   "response",
			"schema": map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}},
		}}},
	}, {
		name: "JSON output with genai schema",
		cfg: &genai.GenerateContentConfig{
			ResponseMIMEType: "application/json",
			ResponseSchema:   &genai.Schema{Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeString, Nullable: genai.Ptr(true)}},
		},
		want: map[string]any{"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name":   "response",
			"schema": map[string]any{"type": "array", "items": map[string]any{"type": []any{"string", "null"}}},
		}}},
	}, {
		name: "plain text output",
		cfg:  &genai.GenerateContentConfig{ResponseMIMEType: "text/plain", PresencePenalty: genai.Ptr[float32](0.5), FrequencyPenalty: genai.Ptr[float32](-0.5)},
		want: map[string]any{"response_format": nil, "presence_penalty": 0.5, "frequency_penalty": -0.5},
	}, {
		name: "no config",
		want: map[string]any{"tools": nil, "tool_choice": nil, "max_tokens": nil, "temperature": nil, "messages": []any{map[string]any{"role": "user", "content": "q"}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, f := newOAIFake(t, oaiSSE(oaiFinish("stop")))
			if _, err := oaiCollect(t, b.GenerateContentStream(t.Context(), "m", oaiUserText("q"), tt.cfg)); err != nil {
				t.Fatal(err)
			}
			body := f.only().body
			for key, want := range tt.want {
				got, ok := body[key]
				if key == "tools" && ok {
					// Compare tool names only.
					var names []any
					for _, tool := range got.([]any) {
						names = append(names, tool.(map[string]any)["function"].(map[string]any)["name"])
					}
					got = names
				}
				if want == nil {
					if ok {
						t.Errorf("%s = %v, want absent", key, got)
					}
					continue
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", key, diff)
				}
			}
		})
	}
}

func TestOpenAIGenerateContent(t *testing.T) {
	b, f := newOAIFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{
		  "id": "chatcmpl-9", "object": "chat.completion", "created": 1, "model": "served-model",
		  "choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": null, "message": {
		    "role": "assistant", "content": "Looking.", "refusal": null,
		    "reasoning_content": "The user wants a file.",
		    "tool_calls": [
		      {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a.go\"}"}},
		      {"id": "call_2", "type": "function", "function": {"name": "now", "arguments": ""}}
		    ]}}],
		  "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29,
		    "prompt_tokens_details": {"cached_tokens": 16}, "completion_tokens_details": {"reasoning_tokens": 5}}
		}`)
	})
	got, err := b.GenerateContent(t.Context(), "m", oaiUserText("read a.go"), &genai.GenerateContentConfig{MaxOutputTokens: 50})
	if err != nil {
		t.Fatal(err)
	}
	want := &genai.GenerateContentResponse{
		Candidates: []*genai.Candidate{{
			Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
				{Text: "The user wants a file.", Thought: true},
				{Text: "Looking."},
				{FunctionCall: &genai.FunctionCall{ID: "call_1", Name: "read_file", Args: map[string]any{"path": "a.go"}}},
				{FunctionCall: &genai.FunctionCall{ID: "call_2", Name: "now", Args: map[string]any{}}},
			}},
			FinishReason: genai.FinishReasonStop,
		}},
		ModelVersion:  "served-model",
		ResponseID:    "chatcmpl-9",
		UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 20, CandidatesTokenCount: 4, TotalTokenCount: 29, CachedContentTokenCount: 16, ThoughtsTokenCount: 5},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	body := f.only().body
	if _, ok := body["stream"]; ok {
		t.Errorf("unary request has stream = %v", body["stream"])
	}
	if _, ok := body["stream_options"]; ok {
		t.Errorf("unary request has stream_options")
	}
	if body["max_tokens"] != 50.0 {
		t.Errorf("max_tokens = %v, want 50", body["max_tokens"])
	}
}

func TestOpenAIHTTPErrors(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		body       string
		retryAfter string
		wantText   string
	}{
		{"rate limited", http.StatusTooManyRequests, `{"error":{"message":"slow down","type":"rate_limit_error"}}`, "7", "slow down"},
		{"server error", http.StatusInternalServerError, `{"error":{"message":"boom"}}`, "", "boom"},
		{"vLLM error body", http.StatusNotFound, `{"object":"error","message":"model m does not exist","type":"NotFoundError","code":404}`, "", "model m does not exist"},
	}
	for _, tt := range tests {
		for _, streaming := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.name, streaming), func(t *testing.T) {
				b, f := newOAIFake(t, func(w http.ResponseWriter, r *http.Request) {
					if tt.retryAfter != "" {
						w.Header().Set("Retry-After", tt.retryAfter)
					}
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(tt.status)
					fmt.Fprint(w, tt.body)
				})
				var err error
				if streaming {
					var chunks []*genai.GenerateContentResponse
					chunks, err = oaiCollect(t, b.GenerateContentStream(t.Context(), "m", oaiUserText("q"), nil))
					if len(chunks) > 0 {
						t.Errorf("got %d chunks before the error", len(chunks))
					}
				} else {
					_, err = b.GenerateContent(t.Context(), "m", oaiUserText("q"), nil)
				}
				t.Logf("error: %v", err)
				var apiErr *chatapi.Error
				if !errors.As(err, &apiErr) {
					t.Fatalf("err = %v (%T), want *chatapi.Error in the chain", err, err)
				}
				if apiErr.StatusCode != tt.status {
					t.Errorf("StatusCode = %d, want %d", apiErr.StatusCode, tt.status)
				}
				if got := apiErr.Header.Get("Retry-After"); got != tt.retryAfter {
					t.Errorf("Retry-After = %q, want %q", got, tt.retryAfter)
				}
				for _, want := range []string{`"m"`, f.srv.URL + "/v1", tt.wantText} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not mention %q", err, want)
					}
				}
				if n := len(f.requests()); n != 1 {
					t.Errorf("server saw %d requests, want 1 (no client retries)", n)
				}
			})
		}
	}
}

func TestOpenAIStreamBrokenOff(t *testing.T) {
	tests := []struct {
		name string
		// end finishes the response after the chunks were sent.
		end      func(w http.ResponseWriter)
		wantText string
	}{{
		name: "connection dropped",
		end: func(http.ResponseWriter) {
			// Abort without ending the chunked body.
			panic(http.ErrAbortHandler)
		},
		wantText: "unexpected EOF",
	}, {
		name: "error event",
		end: func(w http.ResponseWriter) {
			oaiWriteSSE(w, `{"error":{"message":"engine overloaded","type":"server_error"}}`)
		},
		wantText: "engine overloaded",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newOAIFake(t, func(w http.ResponseWriter, r *http.Request) {
				oaiWriteSSE(w,
					oaiDelta(`{"content":"one"}`),
					oaiDelta(`{"content":"two"}`),
					oaiDelta(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"ls","arguments":"{\"di"}}]}`),
				)
				tt.end(w)
			})
			chunks, err := oaiCollect(t, b.GenerateContentStream(t.Context(), "m", oaiUserText("q"), nil))
			if err == nil {
				t.Fatal("stream ended without error")
			}
			t.Logf("error: %v", err)
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error %q does not mention %q", err, tt.wantText)
			}
			var texts []string
			for _, c := range chunks {
				for _, p := range c.Candidates[0].Content.Parts {
					if p.FunctionCall != nil {
						t.Errorf("incomplete call delivered: %+v", p.FunctionCall)
					}
					texts = append(texts, p.Text)
				}
			}
			if diff := cmp.Diff([]string{"one", "two"}, texts); diff != "" {
				t.Errorf("chunks before the error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenAIStreamCancel(t *testing.T) {
	tests := []struct {
		name string
		// sendFirst makes the server send one chunk before stalling.
		sendFirst bool
	}{
		{"before response headers", false},
		{"mid-stream", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			b, _ := newOAIFake(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.sendFirst {
					oaiWriteSSE(w, oaiDelta(`{"content":"first"}`))
				}
				select {
				case <-r.Context().Done():
				case <-release:
				}
			})
			// Cleanups run last-in first-out: release the handler before the
			// server is closed.
			t.Cleanup(func() { close(release) })

			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			type result struct {
				chunks int
				err    error
			}
			done := make(chan result, 1)
			go func() {
				var res result
				for _, err := range b.GenerateContentStream(ctx, "m", oaiUserText("q"), nil) {
					if err != nil {
						res.err = err
						break
					}
					res.chunks++
					cancel()
				}
				done <- res
			}()
			if !tt.sendFirst {
				cancel()
			}
			select {
			case res := <-done:
				t.Logf("error: %v", res.err)
				if !errors.Is(res.err, context.Canceled) {
					t.Errorf("err = %v, want context.Canceled", res.err)
				}
				if tt.sendFirst && res.chunks != 1 {
					t.Errorf("got %d chunks before cancellation, want 1", res.chunks)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("stream did not stop after cancellation")
			}
		})
	}
}

func TestOpenAIAuth(t *testing.T) {
	for _, key := range []string{"", "sk-test"} {
		t.Run("key="+key, func(t *testing.T) {
			var f *oaiFake
			_, f = newOAIFake(t, oaiSSE(oaiFinish("stop")))
			b, err := NewOpenAI(OpenAIConfig{APIKey: key, BaseURL: f.srv.URL + "/v1/", HTTPClient: f.srv.Client()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := oaiCollect(t, b.GenerateContentStream(t.Context(), "m", oaiUserText("q"), nil)); err != nil {
				t.Fatal(err)
			}
			want := ""
			if key != "" {
				want = "Bearer " + key
			}
			if got := f.only().header.Get("Authorization"); got != want {
				t.Errorf("Authorization = %q, want %q", got, want)
			}
		})
	}
}

func TestOpenAIUserAgent(t *testing.T) {
	for _, tt := range []struct{ configured, want string }{
		{"", version.UserAgent()},
		{"my-gateway-client/2", "my-gateway-client/2"},
	} {
		_, f := newOAIFake(t, oaiSSE(oaiFinish("stop")))
		b, err := NewOpenAI(OpenAIConfig{BaseURL: f.srv.URL + "/v1", HTTPClient: f.srv.Client(), UserAgent: tt.configured})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := oaiCollect(t, b.GenerateContentStream(t.Context(), "m", oaiUserText("q"), nil)); err != nil {
			t.Fatal(err)
		}
		if got := f.only().header.Get("User-Agent"); got != tt.want {
			t.Errorf("UserAgent %q: sent User-Agent %q, want %q", tt.configured, got, tt.want)
		}
	}
}

func TestNewOpenAI(t *testing.T) {
	b, err := NewOpenAI(OpenAIConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if b.baseURL != DefaultOpenAIBaseURL || !b.maxCompletionTokens {
		t.Errorf("default backend = %q (max_completion_tokens %v), want %q with max_completion_tokens", b.baseURL, b.maxCompletionTokens, DefaultOpenAIBaseURL)
	}
	for _, bad := range []string{"localhost:11434/v1", "ftp://host/v1", "http://%zz", "/v1"} {
		if _, err := NewOpenAI(OpenAIConfig{BaseURL: bad}); err == nil {
			t.Errorf("NewOpenAI(BaseURL %q) succeeded, want error", bad)
		}
	}
}

func TestOpenAICountTokens(t *testing.T) {
	text := func(s string) *genai.Part { return &genai.Part{Text: s} }
	tests := []struct {
		name     string
		contents []*genai.Content
		cfg      *genai.CountTokensConfig
		want     int32
	}{
		{"empty", nil, nil, 0},
		{"ASCII", []*genai.Content{{Role: "user", Parts: []*genai.Part{text(strings.Repeat("abcd", 10))}}}, nil, 10},
		// 5 ASCII (1.25) + 2 CJK (3) = 4.25.
		{"mixed", []*genai.Content{{Role: "user", Parts: []*genai.Part{text("hello日本")}}}, nil, 4},
		// One UTF-16 surrogate pair: two units at 1.5.
		{"emoji", []*genai.Content{{Role: "user", Parts: []*genai.Part{text("😀")}}}, nil, 3},
		// Past 100,000 UTF-16 units every unit is a quarter token.
		{"long", []*genai.Content{{Role: "user", Parts: []*genai.Part{text(strings.Repeat("é", 100_004))}}}, nil, 25_001},
		{"image", []*genai.Content{{Role: "user", Parts: []*genai.Part{{InlineData: &genai.Blob{MIMEType: "image/jpeg", Data: []byte("x")}}}}}, nil, 3000},
		{"pdf", []*genai.Content{{Role: "user", Parts: []*genai.Part{{FileData: &genai.FileData{MIMEType: "application/pdf", FileURI: "gs://b/f"}}}}}, nil, 25_800},
		// Name "ls" (0.5) + `{"out":"a b"}` (13 → 3.25) = 3.75.
		{"function response", []*genai.Content{{Role: "user", Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: "ls", Response: map[string]any{"out": "a b"}}}}}}, nil, 3},
		// System instruction "abcdefgh" (2) + contents "abcd" (1).
		{"system instruction", []*genai.Content{{Role: "user", Parts: []*genai.Part{text("abcd")}}}, &genai.CountTokensConfig{SystemInstruction: genai.NewContentFromText("abcdefgh", "")}, 3},
	}
	b, err := NewOpenAI(OpenAIConfig{BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := b.CountTokens(t.Context(), "m", tt.contents, tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got.TotalTokens != tt.want {
				t.Errorf("TotalTokens = %d, want %d", got.TotalTokens, tt.want)
			}
		})
	}
	t.Run("tools", func(t *testing.T) {
		tools := []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "read_file", Description: "Reads a file."}}}}
		got, err := b.CountTokens(t.Context(), "m", nil, &genai.CountTokensConfig{Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		if want := int32(len(oaiMustJSON(t, tools)) / 4); got.TotalTokens != want {
			t.Errorf("TotalTokens = %d, want %d", got.TotalTokens, want)
		}
	})
}
