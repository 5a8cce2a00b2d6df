package runtime

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/log/embedded"
	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"
)

// switchLogger is a logger enabled or not for the events it is asked about.
type switchLogger struct {
	embedded.Logger
	on bool
}

func (l switchLogger) Emit(context.Context, log.Record)                    {}
func (l switchLogger) Enabled(context.Context, log.EnabledParameters) bool { return l.on }

// TestHeldContents: the contents leave the request only while ADK's
// request log is disabled, come back for that request alone, and an empty
// request is left as it is.
func TestHeldContents(t *testing.T) {
	contents := []*genai.Content{genai.NewContentFromText("a", genai.RoleUser), genai.NewContentFromText("b", genai.RoleModel)}
	tests := []struct {
		name     string
		logging  bool
		contents []*genai.Content
		held     bool
	}{
		{"nobody reads ADK's log", false, contents, true},
		{"a provider reads it", true, contents, false},
		{"no contents", false, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &heldContents{log: switchLogger{on: tt.logging}}
			req := &model.LLMRequest{Contents: tt.contents}
			if _, err := h.callback(nil, req); err != nil {
				t.Fatal(err)
			}
			if got := req.Contents == nil && tt.contents != nil; got != tt.held {
				t.Fatalf("held %v, want %v", got, tt.held)
			}
			other := &model.LLMRequest{}
			h.restore(other)
			if other.Contents != nil {
				t.Error("another request got the held contents")
			}
			h.restore(req)
			if len(req.Contents) != len(tt.contents) {
				t.Fatalf("restored %d contents, want %d", len(req.Contents), len(tt.contents))
			}
			for i := range req.Contents {
				if req.Contents[i] != tt.contents[i] {
					t.Errorf("content %d is not the original", i)
				}
			}
			// Restored once: a second restore changes nothing.
			req.Contents = nil
			h.restore(req)
			if req.Contents != nil {
				t.Error("restored twice")
			}
		})
	}
}
