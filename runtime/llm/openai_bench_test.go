package llm

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/genai"
)

// BenchmarkOpenAIStream measures one streamed model call through the OpenAI
// backend against a loopback server that answers at once: translating a
// 40-content history with 10 tool declarations into the request, encoding
// and sending it, and decoding a 60-event answer (text deltas, a tool call
// split over deltas, usage) into genai chunks.
func BenchmarkOpenAIStream(b *testing.B) {
	var answer strings.Builder
	for i := range 50 {
		fmt.Fprintf(&answer, "data: %s\n\n", oaiDelta(fmt.Sprintf(`{"content":"word %d "}`, i)))
	}
	fmt.Fprintf(&answer, "data: %s\n\n", oaiDelta(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":""}}]}`))
	for _, piece := range []string{`{\"pa`, `th\":`, ` \"src/`, `main.go`, `\"}`} {
		fmt.Fprintf(&answer, "data: %s\n\n", oaiDelta(`{"tool_calls":[{"index":0,"function":{"arguments":"`+piece+`"}}]}`))
	}
	fmt.Fprintf(&answer, "data: %s\n\ndata: %s\n\ndata: [DONE]\n\n", oaiFinish("tool_calls"), oaiUsageEvent(5000, 120, 0, 0))
	body := answer.String()

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}))
	defer srv.Close()
	o, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()})
	if err != nil {
		b.Fatal(err)
	}

	var contents []*genai.Content
	for i := range 20 {
		contents = append(contents,
			&genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
				{Text: fmt.Sprintf("Step %d: reading the next file.", i)},
				{FunctionCall: &genai.FunctionCall{ID: fmt.Sprintf("call_%d", i), Name: "read_file", Args: map[string]any{"path": fmt.Sprintf("src/f%d.go", i)}}},
			}},
			&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
				{FunctionResponse: &genai.FunctionResponse{ID: fmt.Sprintf("call_%d", i), Name: "read_file", Response: map[string]any{"output": strings.Repeat("package main\n", 40)}}},
			}},
		)
	}
	var decls []*genai.FunctionDeclaration
	for i := range 10 {
		decls = append(decls, &genai.FunctionDeclaration{
			Name:        fmt.Sprintf("tool_%d", i),
			Description: strings.Repeat("Does something useful. ", 10),
			ParametersJsonSchema: map[string]any{
				"type":       "object",
				"properties": map[string]any{"path": map[string]any{"type": "string", "description": "A path."}, "limit": map[string]any{"type": "integer"}},
				"required":   []any{"path"},
			},
		})
	}
	cfg := &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText(strings.Repeat("You are a coding agent. ", 200), ""),
		Tools:             []*genai.Tool{{FunctionDeclarations: decls}},
		Temperature:       genai.Ptr[float32](0.2),
	}

	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, err := range o.GenerateContentStream(b.Context(), "m", contents, cfg) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 52 { // 50 text, the call with the finish reason, usage
			b.Fatalf("got %d chunks, want 52", n)
		}
	}
}
