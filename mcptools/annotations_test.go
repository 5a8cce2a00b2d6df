package mcptools

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAnnotations: a tool's MCP annotations become the JSON values policy
// rules with toolAnnotations compare; none is nil.
func TestAnnotations(t *testing.T) {
	no := false
	got := newTool(&server{name: "s"}, "t", &mcp.Tool{Name: "t", Annotations: &mcp.ToolAnnotations{
		ReadOnlyHint: true, DestructiveHint: &no, Title: "Lookup",
	}}).Annotations()
	want := map[string]any{"readOnlyHint": true, "destructiveHint": false, "idempotentHint": false, "title": "Lookup"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("annotations (-want +got):\n%s", d)
	}
	if a := newTool(&server{name: "s"}, "t", &mcp.Tool{Name: "t"}).Annotations(); a != nil {
		t.Errorf("a tool without annotations: %v", a)
	}
}
