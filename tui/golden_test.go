package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/tools"
)

// screens are the main screens, set up from a fresh terminal.
var screens = []struct {
	name  string
	setup func(h *harness)
}{
	{"idle", func(h *harness) {}},
	{"streaming", func(h *harness) {
		h.hold = true
		h.submit("Explain the plan")
		h.events(
			thoughtEv("**Reading the code** I look at the packages first."),
			textEv("# Plan\n\nThe first paragraph of the answer is long enough to wrap around the edge of an eighty-column terminal.\n\n"),
			textEv("- one\n- two\n\nThe second paragraph is **still"),
			textEv(" streaming** and"),
		)
	}},
	{"tool_running", func(h *harness) {
		h.hold = true
		h.submit("List the files")
		h.events(textEv("Listing the files."), toolReqEv("c1", "run_shell_command", "Shell", "ls -la", map[string]any{"command": "ls -la"}))
		for i := 1; i <= 12; i++ {
			h.events(toolUpdateEv("c1", fmt.Sprintf("-rw-r--r-- 1 u u %4d Jun  1 12:00 file%02d.go\n", i*100, i)))
		}
	}},
	{"tools_done", func(h *harness) {
		h.submitScript("Fix the typo", []runtime.Event{
			toolReqEv("c1", "replace", "Edit", "main.go", nil),
			toolRespEv("c1", "replace", &runtime.ToolDisplay{Name: "Edit", Result: &runtime.DisplayContent{Type: "diff", Path: "/w/main.go",
				BeforeText: "package main\n\nfunc main() {\n\tprintln(\"helo\")\n}\n", AfterText: "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"}}, false),
			toolReqEv("c2", "read_file", "ReadFile", "missing.go", nil),
			toolRespEv("c2", "read_file", &runtime.ToolDisplay{Result: &runtime.DisplayContent{Type: "text", Text: "File not found: missing.go"}}, true),
			textEv("Fixed the typo in `main.go`."),
			usageEv("gemini-2.5-pro", 250_000),
			endEv(runtime.EndCompleted),
		})
	}},
	{"dialog_edit", func(h *harness) {
		h.openDialog(runtime.ApprovalRequest{CallID: "c1", Tool: "replace", DisplayName: "Edit", Description: "main.go: helo => hello",
			Kind: tools.KindEdit, Diff: &tools.FileDiff{Path: "/w/main.go",
				Before: "package main\n\nfunc main() {\n\tprintln(\"helo\")\n}\n", After: "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"}})
	}},
	{"dialog_exec", func(h *harness) {
		h.openDialog(runtime.ApprovalRequest{CallID: "c1", Tool: "run_shell_command", DisplayName: "Shell", Description: "git status --short",
			Kind: tools.KindExecute, Args: map[string]any{"command": "git status --short"}})
	}},
	{"dialog_info", func(h *harness) {
		h.openDialog(runtime.ApprovalRequest{CallID: "c1", Tool: "web_fetch", DisplayName: "WebFetch", Description: "https://example.com/docs",
			Kind: tools.KindFetch, Args: map[string]any{"prompt": "summarise https://example.com/docs"}})
	}},
	{"dialog_mcp", func(h *harness) {
		h.openDialog(runtime.ApprovalRequest{CallID: "c1", Tool: "issues__create", DisplayName: "create (issues MCP Server)", Description: "{\"title\":\"Bug\"}",
			Kind: tools.KindExecute, MCP: &runtime.MCPDetails{ServerName: "issues", ToolName: "create"}})
	}},
	{"help", func(h *harness) { h.submit("/help") }},
}

// submitScript submits a prompt whose stream is events.
func (h *harness) submitScript(prompt string, events []runtime.Event) {
	h.t.Helper()
	h.sess.mu.Lock()
	for len(h.sess.scripts) < len(h.sess.sends) {
		h.sess.scripts = append(h.sess.scripts, nil)
	}
	h.sess.scripts = append(h.sess.scripts, events)
	h.sess.mu.Unlock()
	h.submit(prompt)
}

// openDialog starts a turn whose tool call asks for approval.
func (h *harness) openDialog(req runtime.ApprovalRequest) *approval {
	h.t.Helper()
	h.hold = true
	h.submit("Go ahead")
	h.events(toolReqEv(req.CallID, req.Tool, req.DisplayName, req.Description, req.Args))
	a := &approval{req: req, answer: make(chan approvalAnswer, 1)}
	h.m.mb.push(approvalMsg{a})
	h.run(nil)
	return a
}

func TestGoldenScreens(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, sc := range screens {
			name := fmt.Sprintf("%s_%dx%d", sc.name, size[0], size[1])
			t.Run(name, func(t *testing.T) {
				h := newHarness(t, testConfig(newTestSession()), size[0], size[1])
				sc.setup(h)
				if n := lineCount(h.m.View().Content); n > size[1]-frameSpare {
					t.Errorf("the live region has %d lines; the terminal %d", n, size[1])
				}
				for i, l := range strings.Split(h.screen(), "\n") {
					if w := len([]rune(l)); w > size[0] {
						t.Errorf("line %d is %d wide: %q", i+1, w, l)
					}
				}
				golden(t, name, h.screen())
			})
		}
	}
}
