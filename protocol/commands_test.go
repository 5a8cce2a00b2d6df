package protocol_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/protocol"
	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/runtime/llm"
)

// fakeMemory is a Memory in a map.
type fakeMemory struct {
	mu    sync.Mutex
	facts []string
}

func (m *fakeMemory) Show(context.Context, string) (string, []string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.facts) == 0 {
		return "", nil, nil
	}
	return "- " + strings.Join(m.facts, "\n- "), []string{"/home/u/.agentry/AGENTRY.md"}, nil
}

func (m *fakeMemory) Add(_ context.Context, fact string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.facts = append(m.facts, fact)
	return "/home/u/.agentry/AGENTRY.md", nil
}

// execute runs command/execute and returns the first result and the
// status updates' descriptions and text.
func (h *harness) execute(path []string, args, contextID string) (devtool.ExecuteSlashCommandResponse, string, string) {
	h.t.Helper()
	p, _ := json.Marshal(map[string]any{"command_path": path, "args": args, "context_id": contextID})
	_, body := h.raw("POST", "/", fmt.Sprintf(`{"jsonrpc":"2.0","id":"x","method":"command/execute","params":%s}`, p), nil)
	var first devtool.ExecuteSlashCommandResponse
	var evs []a2a.Event
	for i, chunk := range strings.Split(body, "\n") {
		chunk = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(chunk), "data:"))
		if chunk == "" {
			continue
		}
		var env struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(chunk), &env); err != nil {
			h.t.Fatalf("line %d %q: %v", i, chunk, err)
		}
		if first.ExecutionID == "" {
			if err := json.Unmarshal(env.Result, &first); err != nil {
				h.t.Fatal(err)
			}
			continue
		}
		var sr a2a.StreamResponse
		if err := json.Unmarshal(env.Result, &sr); err != nil {
			h.t.Fatalf("status update %s: %v", env.Result, err)
		}
		evs = append(evs, sr.Event)
	}
	return first, describe(evs), textOf(evs)
}

// TestCommands: commands/get lists the commands with their schemas, and
// command/execute streams each one's output and end.
func TestCommands(t *testing.T) {
	mem := &fakeMemory{}
	h := newHarness(t, []string{
		callTurn("", "write_file", map[string]any{"file_path": "a.txt", "content": "new\n"}),
		textTurn("Wrote it."),
	}, yolo, func(c *protocol.Config, _ *config.Settings) { c.Memory = mem })
	if err := os.WriteFile(filepath.Join(h.settings.Workspace, "a.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	_, body := h.raw("POST", "/", `{"jsonrpc":"2.0","id":1,"method":"commands/get"}`, nil)
	var got struct {
		Result devtool.GetAllSlashCommandsResponse `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range got.Result.Commands {
		names = append(names, c.Name)
		for _, s := range c.SubCommands {
			names = append(names, c.Name+" "+s.Name)
		}
	}
	// The commands of package commands, in its order: the A2A server's
	// first ones, then /memory refresh and the newer commands.
	if want := "memory memory show memory add memory refresh model rewind tools tools list restore stats compress approval-mode mcp agents"; strings.Join(names, " ") != want {
		t.Fatalf("commands %q, want %q", strings.Join(names, " "), want)
	}

	first, events, text := h.execute([]string{"memory", "add"}, "the tests use replay models", "")
	if first.Status != devtool.CommandStarted || events != "STATE_CHANGE:working TEXT_CONTENT:working STATE_CHANGE:completed" || !strings.Contains(text, "Remembered") {
		t.Fatalf("memory add: %+v %s %q", first, events, text)
	}
	if _, _, text := h.execute([]string{"memory", "show"}, "", ""); !strings.Contains(text, "replay models") {
		t.Fatalf("memory show: %q", text)
	}
	if first, _, _ := h.execute([]string{"teleport"}, "", ""); first.Status != devtool.CommandFailedToStart || !strings.Contains(first.Message, "unknown command /teleport") {
		t.Fatalf("unknown command: %+v", first)
	}
	if first, _, _ := h.execute([]string{"tools", "list"}, "", ""); first.Status != devtool.CommandFailedToStart || !strings.Contains(first.Message, "context_id") {
		t.Fatalf("tools list without a context: %+v", first)
	}

	evs := collect(t, h.client("jsonrpc"), userMessage("rewrite a.txt", ""))
	ctxID := evs[0].(*a2a.Task).ContextID
	callID := ""
	for _, ev := range evs {
		if e, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
			if tc := toolCallOf(e); tc != nil {
				callID = tc.ToolCallID
			}
		}
	}
	if _, _, text := h.execute([]string{"tools", "list"}, "", ctxID); !strings.Contains(text, "(write_file)") || !strings.Contains(text, "(run_shell_command)") {
		t.Fatalf("tools list: %q", text)
	}
	if _, _, text := h.execute([]string{"model"}, "", ctxID); !strings.Contains(text, "replay:") {
		t.Fatalf("model: %q", text)
	}
	if _, _, text := h.execute([]string{"restore"}, "", ctxID); !strings.Contains(text, callID) || !strings.Contains(text, "a.txt") {
		t.Fatalf("restore list: %q", text)
	}
	if _, events, text := h.execute([]string{"restore"}, callID, ctxID); !strings.HasSuffix(events, "completed") || !strings.Contains(text, "Restored") {
		t.Fatalf("restore: %s %q", events, text)
	}
	if b, _ := os.ReadFile(filepath.Join(h.settings.Workspace, "a.txt")); string(b) != "old\n" {
		t.Fatalf("a.txt after restore: %q", b)
	}
	if _, events, _ := h.execute([]string{"restore"}, callID, ctxID); !strings.HasSuffix(events, "STATE_CHANGE:failed") {
		t.Fatalf("a second restore must refuse, the file changed: %s", events)
	}
	if _, events, _ := h.execute([]string{"rewind"}, "", ctxID); !strings.HasSuffix(events, "STATE_CHANGE:failed") {
		t.Fatalf("rewind without an id: %s", events)
	}

	// The newer commands, dispatched as the terminal dispatches them.
	if _, _, text := h.execute([]string{"usage"}, "", ctxID); !strings.Contains(text, "Session "+ctxID) || !strings.Contains(text, "- write_file: 1 (1 succeeded, 0 failed)") {
		t.Errorf("stats: %q", text)
	}
	if _, _, text := h.execute([]string{"approval-mode"}, "plan", ctxID); text != "Approval mode set to plan." {
		t.Errorf("approval-mode plan: %q", text)
	}
	if _, _, text := h.execute([]string{"approval-mode"}, "", ctxID); !strings.HasPrefix(text, "Approval mode: plan") {
		t.Errorf("approval-mode: %q", text)
	}
	// The harness's in-memory store cannot be rewritten: no compression.
	if _, events, _ := h.execute([]string{"compress"}, "", ctxID); events != "STATE_CHANGE:working STATE_CHANGE:failed" {
		t.Errorf("compress on the memory store: %s", events)
	}
	if _, _, text := h.execute([]string{"mcp"}, "", ctxID); !strings.HasPrefix(text, "No MCP server tools") {
		t.Errorf("mcp: %q", text)
	}
	if _, _, text := h.execute([]string{"agents"}, "", ctxID); !strings.HasPrefix(text, "No subagents") {
		t.Errorf("agents: %q", text)
	}
	if _, _, text := h.execute([]string{"memory", "refresh"}, "", ctxID); !strings.HasPrefix(text, "Memory refreshed") {
		t.Errorf("memory refresh: %q", text)
	}
	if first, _, _ := h.execute([]string{"memory", "refresh"}, "", ""); first.Status != devtool.CommandFailedToStart || first.Message != "/memory acts on a conversation: give its context_id" {
		t.Errorf("memory refresh without a context: %+v", first)
	}
}

// TestCommandsWaitForTheTask: a command that changes the conversation
// refuses while the context's task waits for a confirmation, with the
// context's own reason; one that only reads, or changes the mode, runs.
func TestCommandsWaitForTheTask(t *testing.T) {
	h := newHarness(t, []string{
		callTurn("", "write_file", map[string]any{"file_path": "a.txt", "content": "1"}),
		textTurn("done"),
	})
	c := h.client("jsonrpc")
	evs := collect(t, c, userMessage("write a file", ""))
	task := evs[0].(*a2a.Task)
	for _, path := range [][]string{{"compress"}, {"model"}} {
		args := ""
		if path[0] == "model" {
			args = "gemini-2.5-flash"
		}
		_, events, text := h.execute(path, args, task.ContextID)
		if !strings.HasSuffix(events, "STATE_CHANGE:failed") || strings.Contains(text, "set to") {
			t.Errorf("/%s while the task waits: %s %q", path[0], events, text)
		}
	}
	if _, _, text := h.execute([]string{"approval-mode"}, "yolo", task.ContextID); text != "Approval mode set to yolo." {
		t.Errorf("approval-mode while the task waits: %q", text)
	}
	call := toolCallOf(evs[len(evs)-2].(*a2a.TaskStatusUpdateEvent)).ToolCallID
	collect(t, c, confirm(task, call, "proceed_once"))
}

// TestConfirmationOptions: every option id a client may send maps to its
// own outcome; gemini-cli's MCP answers are no longer plain
// proceed_always.
func TestConfirmationOptions(t *testing.T) {
	for id, want := range map[string]runtime.Outcome{
		"proceed_once":            runtime.ProceedOnce,
		"proceed_always":          runtime.ProceedAlways,
		"proceed_always_tool":     runtime.ProceedAlwaysTool,
		"proceed_always_server":   runtime.ProceedAlwaysServer,
		"proceed_always_and_save": runtime.ProceedAlwaysAndSave,
		"cancel":                  runtime.Cancel,
	} {
		if got, err := protocol.OutcomeOf(id); err != nil || got != want {
			t.Errorf("%s: %v, %v; want %v", id, got, err, want)
		}
	}
	if _, err := protocol.OutcomeOf("modify_with_editor"); err == nil || !strings.Contains(err.Error(), "is not an option") {
		t.Errorf("an option agentry does not take: %v", err)
	}
}

// TestRestoreKeepsEmptyFile: /restore of an edit to a file that was
// empty before leaves the file there, empty; of an edit that created a
// file, removes it.
func TestRestoreKeepsEmptyFile(t *testing.T) {
	h := newHarness(t, []string{
		callTurn("", "write_file", map[string]any{"file_path": "empty.txt", "content": "new\n"}),
		callTurn("", "write_file", map[string]any{"file_path": "created.txt", "content": "made\n"}),
		textTurn("Wrote them."),
	}, yolo)
	empty := filepath.Join(h.settings.Workspace, "empty.txt")
	created := filepath.Join(h.settings.Workspace, "created.txt")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	evs := collect(t, h.client("jsonrpc"), userMessage("write the files", ""))
	ctxID := evs[0].(*a2a.Task).ContextID
	calls := map[string]string{} // path → tool call id
	for _, ev := range evs {
		if e, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
			if tc := toolCallOf(e); tc != nil && tc.Output != nil && tc.Output.Diff != nil {
				calls[filepath.Base(tc.Output.Diff.FilePath)] = tc.ToolCallID
			}
		}
	}
	if calls["empty.txt"] == "" || calls["created.txt"] == "" {
		t.Fatalf("edits seen: %v", calls)
	}
	if _, events, text := h.execute([]string{"restore"}, calls["empty.txt"], ctxID); !strings.HasSuffix(events, "completed") || !strings.Contains(text, "Restored") {
		t.Fatalf("restore of empty.txt: %s %q", events, text)
	}
	if b, err := os.ReadFile(empty); err != nil || len(b) != 0 {
		t.Errorf("empty.txt after restore: %q, %v; want it there and empty", b, err)
	}
	if _, events, text := h.execute([]string{"restore"}, calls["created.txt"], ctxID); !strings.HasSuffix(events, "completed") || !strings.Contains(text, "Removed") {
		t.Fatalf("restore of created.txt: %s %q", events, text)
	}
	if _, err := os.Lstat(created); !os.IsNotExist(err) {
		t.Errorf("created.txt after restore: %v; want it removed", err)
	}
}

// TestDuplicateConfirmation: once a call is answered, a repeat of its
// confirmation is refused as a duplicate while the task waits for its
// next call.
func TestDuplicateConfirmation(t *testing.T) {
	h := newHarness(t, []string{
		callTurn("", "write_file", map[string]any{"file_path": "a.txt", "content": "1"}),
		callTurn("", "write_file", map[string]any{"file_path": "b.txt", "content": "2"}),
		textTurn("done"),
	})
	c := h.client("jsonrpc")
	first := collect(t, c, userMessage("write two files", ""))
	task := first[0].(*a2a.Task)
	call1 := toolCallOf(first[len(first)-2].(*a2a.TaskStatusUpdateEvent)).ToolCallID
	second := collect(t, c, confirm(task, call1, "proceed_once"))
	if got := describe(second); !strings.HasSuffix(got, "PENDING+confirm STATE_CHANGE:input-required") {
		t.Fatalf("second stream: %s", got)
	}
	call2 := toolCallOf(second[len(second)-2].(*a2a.TaskStatusUpdateEvent)).ToolCallID
	_, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: confirm(task, call1, "proceed_once")})
	if err == nil || !strings.Contains(err.Error(), "already answered") {
		t.Fatalf("duplicate: %v", err)
	}
	third := collect(t, c, confirm(task, call2, "cancel"))
	if got := describe(third); got != "TOOL_CALL_UPDATE:working/CANCELLED TEXT_CONTENT:working STATE_CHANGE:completed" {
		t.Fatalf("third stream: %s", got)
	}
	if _, err := os.Stat(filepath.Join(h.settings.Workspace, "b.txt")); err == nil {
		t.Fatal("the cancelled write ran")
	}
}

// fileMemory is a Memory in the user's global context file, as agentry
// serve's, so that sessions read what it adds.
type fileMemory struct{ path string }

func (m fileMemory) Show(context.Context, string) (string, []string, error) {
	b, err := os.ReadFile(m.path)
	return string(b), []string{m.path}, err
}

func (m fileMemory) Add(_ context.Context, fact string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(m.path), 0o700); err != nil {
		return "", err
	}
	f, err := os.OpenFile(m.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "- %s\n", fact)
	return m.path, err
}

// instructionRecorder is a model that answers "OK." and records each
// request's system instruction.
type instructionRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *instructionRecorder) Resolve(_ context.Context, name string) (llm.Target, error) {
	ref, err := llm.ParseModel("gemini-2.5-flash")
	return llm.Target{Ref: ref, Backend: r}, err
}

func (r *instructionRecorder) GenerateContent(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	return nil, errors.New("streaming only")
}

func (r *instructionRecorder) CountTokens(context.Context, string, []*genai.Content, *genai.CountTokensConfig) (*genai.CountTokensResponse, error) {
	return &genai.CountTokensResponse{TotalTokens: 10}, nil
}

func (r *instructionRecorder) GenerateContentStream(_ context.Context, _ string, _ []*genai.Content, cfg *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	var b strings.Builder
	if cfg != nil && cfg.SystemInstruction != nil {
		for _, p := range cfg.SystemInstruction.Parts {
			b.WriteString(p.Text)
		}
	}
	r.mu.Lock()
	r.seen = append(r.seen, b.String())
	r.mu.Unlock()
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		c := &genai.Candidate{Content: genai.NewContentFromText("OK.", genai.RoleModel), FinishReason: genai.FinishReasonStop}
		yield(&genai.GenerateContentResponse{Candidates: []*genai.Candidate{c}}, nil)
	}
}

// TestMemoryAddReachesOpenConversations: /memory add writes the global
// memory file and the conversations already open read it from their next
// request, as gemini-cli refreshes its memory.
func TestMemoryAddReachesOpenConversations(t *testing.T) {
	var mem fileMemory
	h := newHarness(t, nil, func(c *protocol.Config, s *config.Settings) {
		mem.path = filepath.Join(s.Home, "AGENTRY.md")
		c.Memory = mem
	})
	rec := &instructionRecorder{}
	h.resolver = rec
	c := h.client("jsonrpc")
	first := collect(t, c, userMessage("hello", ""))
	ctxID := first[0].(*a2a.Task).ContextID

	if first, _, text := h.execute([]string{"memory", "add"}, "the deploy key is in vault/prod", ""); first.Status != devtool.CommandStarted || !strings.Contains(text, "next request") {
		t.Fatalf("memory add: %+v %q", first, text)
	}
	m := userMessage("and now?", "")
	m.ContextID = ctxID
	collect(t, c, m)

	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.seen) != 2 {
		t.Fatalf("%d model requests, want 2", len(rec.seen))
	}
	if strings.Contains(rec.seen[0], "vault/prod") {
		t.Fatal("the fact was in the instruction before it was added")
	}
	if !strings.Contains(rec.seen[1], "the deploy key is in vault/prod") {
		t.Errorf("the open conversation's next request does not carry the new memory; its instruction ends %q", tail(rec.seen[1], 200))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
