package compose

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentry-dev/agentry/runtime"
)

// TestPromptPart: each kind of MCP content in a prompt's messages becomes
// the part the model gets.
func TestPromptPart(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   mcp.Content
		want runtime.ContentPart
	}{
		{"text", &mcp.TextContent{Text: "hi"}, runtime.TextPart("hi")},
		{"image", &mcp.ImageContent{Data: []byte("png"), MIMEType: "image/png"}, runtime.ContentPart{Type: runtime.PartMedia, Data: "cG5n", MimeType: "image/png"}},
		{"audio without type", &mcp.AudioContent{Data: []byte("wav")}, runtime.ContentPart{Type: runtime.PartMedia, Data: "d2F2", MimeType: "application/octet-stream"}},
		{"embedded text", &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "demo://1", Text: "Resource 1"}}, runtime.TextPart("Resource 1")},
		{"embedded blob", &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "demo://2", MIMEType: "application/pdf", Blob: []byte("pdf")}}, runtime.ContentPart{Type: runtime.PartMedia, Data: "cGRm", MimeType: "application/pdf"}},
		{"empty resource", &mcp.EmbeddedResource{}, runtime.TextPart("[empty resource]")},
		{"link", &mcp.ResourceLink{Name: "readme", URI: "file:///r.md"}, runtime.TextPart("Resource Link: readme at file:///r.md")},
		{"titled link", &mcp.ResourceLink{Name: "readme", Title: "The README", URI: "file:///r.md"}, runtime.TextPart("Resource Link: The README at file:///r.md")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := promptPart(tc.in); got.Type != tc.want.Type || got.Text != tc.want.Text || got.Data != tc.want.Data || got.MimeType != tc.want.MimeType {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
