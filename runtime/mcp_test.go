package runtime

import (
	"context"
	"testing"

	"github.com/agentry-dev/agentry/tools"
)

// mcpFake is a tool of an MCP server.
type mcpFake struct {
	fakeTool
	trust bool
}

func (m *mcpFake) MCP() (string, string, bool) { return "docs", "search_docs", m.trust }

// TestMCPApprovals: a call to an untrusted server's tool asks with
// McpDetails; a trusted server's tool runs without asking.
func TestMCPApprovals(t *testing.T) {
	var asked []ApprovalRequest
	approver := approverFunc(func(_ context.Context, r ApprovalRequest) (Outcome, error) {
		asked = append(asked, r)
		return ProceedOnce, nil
	})
	for _, trust := range []bool{false, true} {
		asked = nil
		b := newScript(callTurn("", fc("c1", "docs__search_docs", map[string]any{"q": "x"})), textTurn("ok"))
		tool := &mcpFake{fakeTool: fakeTool{ToolName: "docs__search_docs", ToolKind: tools.KindOther}, trust: trust}
		s := newTestSession(t, b, Config{Tools: []tools.Tool{tool}, Approver: approver})
		run(t, s, "search")
		if tool.Calls() != 1 {
			t.Fatalf("trust=%v: the tool ran %d times", trust, tool.Calls())
		}
		switch {
		case trust && len(asked) != 0:
			t.Errorf("a trusted server's tool asked for approval")
		case !trust && (len(asked) != 1 || asked[0].MCP == nil || *asked[0].MCP != (MCPDetails{ServerName: "docs", ToolName: "search_docs"})):
			t.Errorf("approval requests %+v, want one with McpDetails docs/search_docs", asked)
		}
	}
}

// TestMCPDenied: a denied MCP call does not run and the model reads
// gemini-cli's denial; without an approver (a batch run) it is refused.
func TestMCPDenied(t *testing.T) {
	for name, approver := range map[string]Approver{
		"denied":      approverFunc(func(context.Context, ApprovalRequest) (Outcome, error) { return Cancel, nil }),
		"no approver": nil,
	} {
		t.Run(name, func(t *testing.T) {
			b := newScript(callTurn("", fc("c1", "docs__search_docs", map[string]any{"q": "x"})), textTurn("ok"))
			tool := &mcpFake{fakeTool: fakeTool{ToolName: "docs__search_docs", ToolKind: tools.KindOther}}
			s := newTestSession(t, b, Config{Tools: []tools.Tool{tool}, Approver: approver})
			run(t, s, "search")
			if tool.Calls() != 0 {
				t.Fatal("a denied MCP tool ran")
			}
			msg, _ := toolOutput(t, b, "c1")["error"].(string)
			if msg == "" {
				t.Errorf("the model got no error for the denied call")
			}
		})
	}
}
