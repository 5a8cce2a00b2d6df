package llm

import (
	"bytes"
	"encoding/json"
	"testing"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/fakegemini"
)

// sharedContents is a history with every kind of part a request carries:
// text, a signed thought, a call with arguments, its response, inline
// data, a system instruction and a tool declaration in the configuration.
func sharedContents() ([]*genai.Content, *genai.GenerateContentConfig) {
	contents := []*genai.Content{
		{Role: genai.RoleUser, Parts: []*genai.Part{{Text: "<session_context>"}, {Text: "read a.txt"}}},
		{Role: genai.RoleModel, Parts: []*genai.Part{
			{Text: "reading", Thought: true, ThoughtSignature: []byte("sig")},
			{FunctionCall: &genai.FunctionCall{ID: "c1", Name: "read_file", Args: map[string]any{"path": "a.txt", "limit": 10.0}}},
		}},
		{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: "c1", Name: "read_file", Response: map[string]any{"output": "hello"}}}}},
		{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "It says hello."}}},
		{Role: genai.RoleUser, Parts: []*genai.Part{{Text: "and this?"}, {InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{1, 2, 3}}}}},
	}
	cfg := &genai.GenerateContentConfig{
		SystemInstruction: &genai.Content{Parts: []*genai.Part{{Text: "You are agentry."}}},
		Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
			Name: "read_file", Description: "Reads a file.",
			ParametersJsonSchema: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}},
		}}}},
	}
	return contents, cfg
}

func snapshot(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBackendsLeaveContentsUnchanged: each backend agentry ships keeps
// Backend's contract — the contents and configuration it is given (the
// session's shared history) are as they were after a call, streamed or
// not — so that the dispatcher can hand the same contents to every
// request without copying them.
func TestBackendsLeaveContentsUnchanged(t *testing.T) {
	gemini := func(t *testing.T) Backend {
		srv := fakegemini.New(t)
		srv.Enqueue(fakegemini.Text("ok"), fakegemini.Text("ok"))
		g, err := NewGemini(t.Context(), GeminiConfig{APIKey: fakegemini.DefaultAPIKey, BaseURL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	openai := func(t *testing.T) Backend {
		b, _ := newOAIFake(t, oaiSSE(oaiDelta(`{"role":"assistant","content":"ok"}`), oaiFinish("stop")))
		return b
	}
	replay := func(t *testing.T) Backend {
		var buf bytes.Buffer
		rec := NewRecorder(openai(t), NewRecordSink(&buf))
		contents, cfg := sharedContents()
		for range 2 {
			for _, err := range rec.GenerateContentStream(t.Context(), "m", contents, cfg) {
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		r, err := LoadReplay(writeFile(t, "replay.jsonl", buf.String()), false)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	recorder := func(t *testing.T) Backend {
		return NewRecorder(openai(t), NewRecordSink(&bytes.Buffer{}))
	}
	for name, make := range map[string]func(*testing.T) Backend{"gemini": gemini, "openai": openai, "replay": replay, "recorder": recorder} {
		t.Run(name, func(t *testing.T) {
			b := make(t)
			contents, cfg := sharedContents()
			before, beforeCfg := snapshot(t, contents), snapshot(t, cfg)
			ptrs := append([]*genai.Content(nil), contents...)
			for _, err := range b.GenerateContentStream(t.Context(), "m", contents, cfg) {
				if err != nil {
					t.Fatalf("stream: %v", err)
				}
			}
			if name == "gemini" {
				if _, err := b.GenerateContent(t.Context(), "m", contents, cfg); err != nil {
					t.Fatalf("unary: %v", err)
				}
			}
			if after := snapshot(t, contents); !bytes.Equal(before, after) {
				t.Errorf("contents changed:\nbefore %s\nafter  %s", before, after)
			}
			if after := snapshot(t, cfg); !bytes.Equal(beforeCfg, after) {
				t.Errorf("configuration changed:\nbefore %s\nafter  %s", beforeCfg, after)
			}
			for i := range contents {
				if contents[i] != ptrs[i] {
					t.Errorf("content %d replaced", i)
				}
			}
		})
	}
}
