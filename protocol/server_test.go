package protocol_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/protocol/devtool"
)

// TestStreamEveryBinding: a prompt answered with text streams the task,
// a working STATE_CHANGE, the text, and a completed STATE_CHANGE over
// each binding a2a-go's client speaks.
func TestStreamEveryBinding(t *testing.T) {
	for _, binding := range []string{"jsonrpc", "rest", "grpc", "v0.3"} {
		t.Run(binding, func(t *testing.T) {
			h := newHarness(t, []string{textTurn("Hello ", "from agentry.")})
			evs := collect(t, h.client(binding), userMessage("say hello", ""))
			got := describe(evs)
			if !strings.HasPrefix(got, "Task(submitted) STATE_CHANGE:working ") || !strings.HasSuffix(got, " STATE_CHANGE:completed") {
				t.Fatalf("events: %s", got)
			}
			if txt := textOf(evs); txt != "Hello from agentry." {
				t.Fatalf("text %q", txt)
			}
		})
	}
}

// TestConfirmationRoundTrip: a write_file call needs approval in the
// default mode; the task parks input-required with the call PENDING and
// its confirmation request; the client's proceed_once resumes it: the
// call executes, succeeds, and the task completes.
func TestConfirmationRoundTrip(t *testing.T) {
	for _, binding := range []string{"jsonrpc", "rest", "grpc", "v0.3"} {
		t.Run(binding, func(t *testing.T) {
			h := newHarness(t, []string{
				callTurn("I'll write it.", "write_file", map[string]any{"file_path": "a.txt", "content": "hi\n"}),
				textTurn("Done."),
			})
			c := h.client(binding)
			first := collect(t, c, userMessage("write a.txt", ""))
			if got, want := describe(first), "Task(submitted) STATE_CHANGE:working TEXT_CONTENT:working TOOL_CALL_UPDATE:working/PENDING+confirm STATE_CHANGE:input-required"; got != want {
				t.Fatalf("first stream:\n got %s\nwant %s", got, want)
			}
			tc := toolCallOf(first[3].(*a2a.TaskStatusUpdateEvent))
			if tc.ConfirmationRequest.FileEditDetails == nil || tc.ConfirmationRequest.FileEditDetails.NewContent != "hi\n" {
				t.Fatalf("confirmation request %+v", tc.ConfirmationRequest)
			}
			task := first[0].(*a2a.Task)
			second := collect(t, c, confirm(task, tc.ToolCallID, "proceed_once"))
			if got, want := describe(second), "TOOL_CALL_UPDATE:working/EXECUTING TOOL_CALL_UPDATE:working/SUCCEEDED TEXT_CONTENT:working STATE_CHANGE:completed"; got != want {
				t.Fatalf("second stream:\n got %s\nwant %s", got, want)
			}
			b, err := os.ReadFile(filepath.Join(h.settings.Workspace, "a.txt"))
			if err != nil || string(b) != "hi\n" {
				t.Fatalf("a.txt: %q %v", b, err)
			}
		})
	}
}

// TestGetAndListTasks: a finished task is read back with its history,
// the answer's deltas as one message, and listed in its context, over
// each binding.
func TestGetAndListTasks(t *testing.T) {
	for _, binding := range []string{"jsonrpc", "rest", "grpc"} {
		t.Run(binding, func(t *testing.T) {
			h := newHarness(t, []string{textTurn("Listed ", "in ", "three.")})
			c := h.client(binding)
			task := collect(t, c, userMessage("hi", ""))[0].(*a2a.Task)
			got, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: task.ID})
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, m := range got.History {
				for _, p := range m.Parts {
					texts = append(texts, p.Text())
				}
			}
			if got.Status.State != a2a.TaskStateCompleted || strings.Join(texts, "|") != "hi|Listed in three." {
				t.Fatalf("task %s, history %q", got.Status.State, texts)
			}
			list, err := c.ListTasks(t.Context(), &a2a.ListTasksRequest{ContextID: task.ContextID})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Tasks) != 1 || list.Tasks[0].ID != task.ID {
				t.Fatalf("list: %+v", list.Tasks)
			}
		})
	}
}

// TestToolCallSchema: a thought travels as an AgentThought; a shell
// command asks with execute_details; once allowed it streams its output
// as live_content and succeeds with its output as text.
func TestToolCallSchema(t *testing.T) {
	thought := `{"method":"generateContentStream","response":[{"candidates":[{"content":{"role":"model","parts":[{"text":"**Checking files** I should list them first.","thought":true}]}}]},` +
		`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{"command":"echo one; echo two"}}}]},"finishReason":"STOP"}]}]}`
	h := newHarness(t, []string{thought, textTurn("Two lines.")})
	c := h.client("jsonrpc")
	first := collect(t, c, userMessage("count", ""))
	if got := describe(first); got != "Task(submitted) STATE_CHANGE:working THOUGHT:working TOOL_CALL_UPDATE:working/PENDING+confirm STATE_CHANGE:input-required" {
		t.Fatalf("first stream: %s", got)
	}
	th := first[2].(*a2a.TaskStatusUpdateEvent).Status.Message.Parts[0].Data().(map[string]any)
	if th["subject"] != "Checking files" || th["description"] != "I should list them first." {
		t.Fatalf("thought %v", th)
	}
	tc := toolCallOf(first[3].(*a2a.TaskStatusUpdateEvent))
	ed := tc.ConfirmationRequest.ExecuteDetails
	if tc.ToolName != "run_shell_command" || ed == nil || ed.Command != "echo one; echo two" || ed.WorkingDirectory != h.settings.Workspace {
		t.Fatalf("confirmation %+v %+v", tc, ed)
	}
	var live, output string
	for _, ev := range collect(t, c, confirm(first[0].(*a2a.Task), tc.ToolCallID, "proceed_once")) {
		if u, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
			if call := toolCallOf(u); call != nil {
				if call.Status == devtool.StatusExecuting && call.LiveContent != "" {
					live = call.LiveContent
				}
				if call.Status == devtool.StatusSucceeded && call.Output != nil && call.Output.Text != nil {
					output = *call.Output.Text
				}
			}
		}
	}
	if !strings.Contains(live, "one") || !strings.Contains(output, "two") {
		t.Fatalf("live %q, output %q", live, output)
	}
}

// TestModifiedFileContent: a client approving a file edit with its own
// version of the file gets that version written, for write_file and for
// replace (which then replaces the whole file as previewed).
func TestModifiedFileContent(t *testing.T) {
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"write_file", map[string]any{"file_path": "a.txt", "content": "model's\n"}},
		{"replace", map[string]any{"file_path": "a.txt", "instruction": "fix", "old_string": "old", "new_string": "model's"}},
	} {
		t.Run(c.tool, func(t *testing.T) {
			h := newHarness(t, []string{callTurn("", c.tool, c.args), textTurn("ok")})
			path := filepath.Join(h.settings.Workspace, "a.txt")
			if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cl := h.client("jsonrpc")
			first := collect(t, cl, userMessage("edit", ""))
			tc := toolCallOf(first[len(first)-2].(*a2a.TaskStatusUpdateEvent))
			if d := tc.ConfirmationRequest.FileEditDetails; d == nil || d.OldContent == nil || *d.OldContent != "old\n" || d.NewContent != "model's\n" {
				t.Fatalf("file_edit_details %+v", d)
			}
			m := confirm(first[0].(*a2a.Task), tc.ToolCallID, "proceed_once")
			m.Parts[0] = a2a.NewDataPart(map[string]any{"tool_call_id": tc.ToolCallID, "selected_option_id": "proceed_once",
				"file_details": map[string]any{"new_content": "user's\n"}})
			if got := describe(collect(t, cl, m)); !strings.Contains(got, "SUCCEEDED") {
				t.Fatalf("second stream: %s", got)
			}
			if b, _ := os.ReadFile(path); string(b) != "user's\n" {
				t.Fatalf("a.txt = %q", b)
			}
		})
	}
}

// TestSubagentConfirmation: a subagent's call that needs approval parks
// the parent's task like the parent's own: PENDING with its confirmation
// request, input-required; the client's answer reaches the child, which
// writes the file and completes, and so does the parent.
func TestSubagentConfirmation(t *testing.T) {
	h := newHarness(t, []string{
		callTurn("", "invoke_agent", map[string]any{"agent_name": "writer", "prompt": "write a.txt"}),
		callTurn("", "write_file", map[string]any{"file_path": "a.txt", "content": "from the child\n"}),
		callTurn("", "complete_task", map[string]any{"result": "wrote a.txt"}),
		textTurn("The writer wrote it."),
	})
	def := "---\nname: writer\ndescription: Writes files.\ntools: [write_file]\n---\nYou write files.\n"
	if err := os.MkdirAll(filepath.Join(h.settings.Home, "agents"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.settings.Home, "agents", "writer.md"), []byte(def), 0o600); err != nil {
		t.Fatal(err)
	}
	c := h.client("jsonrpc")
	first := collect(t, c, userMessage("delegate", ""))
	got := describe(first)
	if !strings.HasSuffix(got, "TOOL_CALL_UPDATE:working/PENDING+confirm STATE_CHANGE:input-required") {
		t.Fatalf("first stream: %s", got)
	}
	tc := toolCallOf(first[len(first)-2].(*a2a.TaskStatusUpdateEvent))
	if tc.ToolName != "write_file" || !strings.Contains(tc.Description, "writer") {
		t.Fatalf("the child's call: %+v", tc)
	}
	second := collect(t, c, confirm(first[0].(*a2a.Task), tc.ToolCallID, "proceed_once"))
	if got := describe(second); !strings.HasSuffix(got, "STATE_CHANGE:completed") || !strings.Contains(textOf(second), "The writer wrote it.") {
		t.Fatalf("second stream: %s %q", got, textOf(second))
	}
	// The child's call runs and succeeds in the client's view too.
	var states []string
	for _, ev := range second {
		if u, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
			if call := toolCallOf(u); call != nil && call.ToolCallID == tc.ToolCallID {
				states = append(states, string(call.Status))
			}
		}
	}
	if strings.Join(states, " ") != "EXECUTING SUCCEEDED" {
		t.Fatalf("the child's call went %v", states)
	}
	if b, _ := os.ReadFile(filepath.Join(h.settings.Workspace, "a.txt")); string(b) != "from the child\n" {
		t.Fatalf("a.txt = %q", b)
	}
}
