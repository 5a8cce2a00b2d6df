package commands_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentry-dev/agentry/commands"
	"github.com/agentry-dev/agentry/compression"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/runtime/llm"
)

// fakeTarget is a conversation in memory: what the commands read and
// what they change.
type fakeTarget struct {
	workspace string
	model     string
	mode      runtime.ApprovalMode
	events    []runtime.Event
	tools     []runtime.ToolInfo
	agents    []runtime.AgentInfo
	busy      error

	compressed  runtime.CompressionInfo
	compressErr error
	rewound     runtime.RewindResult
	rewindErr   error
	reloadErr   error

	// calls records the calls that change the conversation.
	calls []string
}

var _ commands.Target = (*fakeTarget)(nil)

func (f *fakeTarget) ID() string                  { return "s-1" }
func (f *fakeTarget) Workspace() string           { return f.workspace }
func (f *fakeTarget) Model() string               { return f.model }
func (f *fakeTarget) Events() []runtime.Event     { return f.events }
func (f *fakeTarget) Tools() []runtime.ToolInfo   { return f.tools }
func (f *fakeTarget) Agents() []runtime.AgentInfo { return f.agents }
func (f *fakeTarget) Busy() error                 { return f.busy }

func (f *fakeTarget) Send(_ context.Context, p runtime.Send) (string, error) {
	f.calls = append(f.calls, "send "+p.Update.Model)
	if p.Update.Model == "nonsense" {
		return "", runtime.ErrInvalidSend
	}
	f.model = p.Update.Model
	return "", nil
}

func (f *fakeTarget) ReloadMemory() error {
	f.calls = append(f.calls, "reload")
	return f.reloadErr
}

func (f *fakeTarget) Rewind(_ context.Context, id string) (runtime.RewindResult, error) {
	f.calls = append(f.calls, "rewind "+id)
	return f.rewound, f.rewindErr
}

func (f *fakeTarget) Compress(context.Context) (runtime.CompressionInfo, error) {
	f.calls = append(f.calls, "compress")
	return f.compressed, f.compressErr
}

func (f *fakeTarget) ApprovalMode() runtime.ApprovalMode { return f.mode }

func (f *fakeTarget) SetApprovalMode(m runtime.ApprovalMode) error {
	f.calls = append(f.calls, "mode "+string(m))
	if m.Rank() < 0 {
		return runtime.ErrUnknownApprovalMode
	}
	f.mode = m
	return nil
}

// fakeMemory is a Memory in a slice.
type fakeMemory struct {
	mu    sync.Mutex
	facts []string
	shown []string // workspaces shown
}

func (m *fakeMemory) Show(_ context.Context, ws string) (string, []string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.shown = append(m.shown, ws)
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

var errBusy = errors.New("busy with task t-1")

func ptr(n int) *int { return &n }

// TestCommands runs each command on a fake conversation: its output, its
// error, and what it changed.
func TestCommands(t *testing.T) {
	tests := []struct {
		name  string
		path  []string
		args  string
		setup func(*fakeTarget)
		want  string // the output, whole
		err   string // a part of the error; "" for none
		calls []string
	}{
		{name: "model shows", path: []string{"model"}, want: "Model: gemini-2.5-pro"},
		{name: "model switches", path: []string{"model"}, args: " flash ", want: "Model set to flash", calls: []string{"send flash"}},
		{name: "model refused", path: []string{"model"}, args: "nonsense", err: "invalid send", calls: []string{"send nonsense"}},
		{name: "model busy", path: []string{"model"}, args: "flash", setup: busy, err: "busy with task"},
		{name: "rewind", path: []string{"rewind"}, args: "m-3", setup: func(f *fakeTarget) { f.rewound = runtime.RewindResult{Messages: 2, Events: 5} },
			want: "Rewound: 2 message(s) kept, 5 event(s) in the history.", calls: []string{"rewind m-3"}},
		{name: "rewind needs an id", path: []string{"rewind"}, err: "usage: /rewind <message id>"},
		{name: "rewind busy", path: []string{"rewind"}, args: "m-3", setup: busy, err: "busy with task"},
		{name: "rewind fails", path: []string{"rewind"}, args: "m-9", setup: func(f *fakeTarget) { f.rewindErr = runtime.ErrNoMessage },
			err: "no such message", calls: []string{"rewind m-9"}},
		{name: "tools", path: []string{"tools"}, want: "Available tools:\n- Read File (read_file): Reads a file.\n- search (docs__search): Searches the docs.\n"},
		{name: "tools list", path: []string{"tools", "list"}, want: "Available tools:\n- Read File (read_file): Reads a file.\n- search (docs__search): Searches the docs.\n"},
		{name: "memory refresh", path: []string{"memory", "refresh"},
			want: "Memory refreshed: the conversation reads the context files as they are now from its next request.", calls: []string{"reload"}},
		{name: "memory reload alias", path: []string{"memory", "reload"}, want: "Memory refreshed: the conversation reads the context files as they are now from its next request.", calls: []string{"reload"}},
		{name: "memory refresh fails", path: []string{"memory", "refresh"}, setup: func(f *fakeTarget) { f.reloadErr = errors.New("GEMINI.md: permission denied") },
			err: "permission denied", calls: []string{"reload"}},
		{name: "approval-mode shows", path: []string{"approval-mode"}, want: "Approval mode: default (modes: plan, default, auto_edit, yolo)"},
		{name: "approval-mode sets", path: []string{"approval-mode"}, args: "plan", want: "Approval mode set to plan.", calls: []string{"mode plan"}},
		{name: "approval-mode while busy", path: []string{"approval-mode"}, args: "yolo", setup: busy, want: "Approval mode set to yolo.", calls: []string{"mode yolo"}},
		{name: "approval-mode refused", path: []string{"approval-mode"}, args: "reckless", err: "unknown approval mode", calls: []string{"mode reckless"}},
		{name: "compress", path: []string{"compress"}, setup: compressed(compression.StatusCompressed, 90_000, 12_000),
			want: "Chat history compressed from 90000 to 12000 tokens.", calls: []string{"compress"}},
		{name: "compress alias", path: []string{"compact"}, setup: compressed(compression.StatusCompressed, 900, 120),
			want: "Chat history compressed from 900 to 120 tokens.", calls: []string{"compress"}},
		{name: "compress nothing", path: []string{"summarize"}, setup: compressed(compression.StatusNoop, 0, 0),
			want: "Nothing to compress: the history is too short to summarise.", calls: []string{"compress"}},
		{name: "compress not beneficial", path: []string{"compress"}, setup: compressed(compression.StatusFailedInflatedTokenCount, 900, 950),
			want: "Compression was not beneficial for this history size (900 tokens; the summary would take 950); the history is unchanged.", calls: []string{"compress"}},
		{name: "compress empty summary", path: []string{"compress"}, setup: compressed(compression.StatusFailedEmptySummary, 900, 900),
			want: "Chat history compression failed: the model returned an empty summary. The history is unchanged.", calls: []string{"compress"}},
		{name: "compress without a store", path: []string{"compress"}, setup: func(f *fakeTarget) { f.compressErr = runtime.ErrNoCompression },
			err: "sqlite or postgres", calls: []string{"compress"}},
		{name: "compress busy", path: []string{"compress"}, setup: busy, err: "busy with task"},
		{name: "compress takes no arguments", path: []string{"compress"}, args: "now", err: "/compress takes no arguments"},
		{name: "mcp", path: []string{"mcp"},
			want: "MCP servers (1):\n- docs: 1 tool(s)\n  - search (called docs__search): Searches the docs.\n"},
		{name: "mcp none", path: []string{"mcp"}, setup: func(f *fakeTarget) { f.tools = f.tools[:1] },
			want: "No MCP server tools in this conversation: no server is configured (settings mcpServers), none could be reached, or the workspace is not trusted."},
		{name: "agents", path: []string{"agents"}, setup: func(f *fakeTarget) {
			f.agents = []runtime.AgentInfo{{Name: "helper", Description: "Helps.\nAt length.", Remote: true}, {Name: "reviewer", Description: "Reviews."}}
		}, want: "Subagents (2):\n- helper (remote): Helps.\n- reviewer: Reviews.\n"},
		{name: "agents none", path: []string{"agents"}, want: "No subagents: none is defined in ~/.agentry/agents or ~/.gemini/agents, or in a trusted workspace's .agentry/agents or .gemini/agents."},
		{name: "stats", path: []string{"usage"}, setup: func(f *fakeTarget) {
			f.events = []runtime.Event{
				{Type: runtime.EventUsage, Usage: &runtime.Usage{Model: "gemini-2.5-pro", InputTokens: ptr(1000), OutputTokens: ptr(50), CachedTokens: ptr(400)},
					Meta: map[string]any{"durationMs": 1500, "totalTokens": 1050, "role": "main"}},
				{Type: runtime.EventToolResponse, ToolResponse: &runtime.ToolResponse{Name: "write_file",
					Data: map[string]any{"durationMs": 12, "decision": "accept", "diffStat": map[string]any{"linesAdded": 4, "linesRemoved": 2}}}},
				{Type: runtime.EventToolResponse, ToolResponse: &runtime.ToolResponse{Name: "run_shell_command", IsError: true, Data: map[string]any{"decision": "reject"}}},
			}
		}, want: "Session s-1\n" +
			"Model calls:\n" +
			"- gemini-2.5-pro: 1 request, 1.5s of API time\n" +
			"  tokens: 600 input, 400 cache reads, 50 output, 0 thoughts, 0 tool, 1050 total\n" +
			"Tool calls: 2 (1 succeeded, 1 failed), 12ms\n" +
			"  decisions: 1 accepted, 0 auto-accepted, 0 modified, 1 rejected\n" +
			"- run_shell_command: 1 (0 succeeded, 1 failed), 0s\n" +
			"- write_file: 1 (1 succeeded, 0 failed), 12ms\n" +
			"Files: 4 line(s) added, 2 removed\n"},
		{name: "stats of a new conversation", path: []string{"stats"},
			want: "Session s-1\nModel calls: none yet\nTool calls: 0 (0 succeeded, 0 failed), 0s\nFiles: 0 line(s) added, 0 removed\n"},
		{name: "unknown command", path: []string{"teleport"},
			err: "unknown command /teleport (commands: memory, model, rewind, tools, restore, stats, compress, approval-mode, mcp, agents)"},
		{name: "unknown subcommand", path: []string{"memory", "forget"}, err: `/memory has no subcommand "forget"`},
		{name: "too deep", path: []string{"tools", "list", "all"}, err: `/tools list has no command "all"`},
		{name: "empty path", err: "command_path is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeTarget{model: "gemini-2.5-pro", mode: runtime.ApprovalDefault, tools: []runtime.ToolInfo{
				{Name: "read_file", DisplayName: "Read File", Description: "Reads a file.\nLong text."},
				{Name: "docs__search", DisplayName: "search", Description: "Searches the docs.", MCPServer: "docs", MCPTool: "search"},
			}}
			if tc.setup != nil {
				tc.setup(f)
			}
			r := newRegistry(t, commands.Config{Memory: &fakeMemory{}})
			var out []string
			err := r.Run(t.Context(), f, tc.path, tc.args, func(s string) { out = append(out, s) })
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("error: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one with %q", err, tc.err)
			}
			if tc.err != "" && len(out) != 0 {
				t.Errorf("a failed command wrote %q", out)
			}
			if tc.err == "" && (len(out) != 1 || out[0] != tc.want) {
				t.Errorf("output %q\nwant %q", out, tc.want)
			}
			if d := cmp.Diff(tc.calls, f.calls); d != "" {
				t.Errorf("changes (-want +got):\n%s", d)
			}
		})
	}
}

func busy(f *fakeTarget) { f.busy = errBusy }

func compressed(s compression.Status, before, after int) func(*fakeTarget) {
	return func(f *fakeTarget) {
		f.compressed = runtime.CompressionInfo{Status: s, OriginalTokens: before, NewTokens: after}
	}
}

func newRegistry(t *testing.T, cfg commands.Config) *commands.Registry {
	t.Helper()
	r, err := commands.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestMemoryCommands: /memory show and add need no conversation; with
// one, show reads its workspace and add reloads it; ReloadAll takes its
// place when set; without Memory there is no /memory.
func TestMemoryCommands(t *testing.T) {
	mem := &fakeMemory{}
	r := newRegistry(t, commands.Config{Memory: mem, Workspace: "/default"})
	var out []string
	collect := func(s string) { out = append(out, s) }
	if err := r.Run(t.Context(), nil, []string{"memory"}, "", collect); err != nil || out[0] != "Memory is empty: no context files were found." {
		t.Fatalf("memory: %q, %v", out, err)
	}
	if err := r.Run(t.Context(), nil, []string{"memory", "add"}, "buy milk", collect); err != nil ||
		out[1] != `Remembered "buy milk" in /home/u/.agentry/AGENTRY.md; every conversation reads it from its next request.` {
		t.Fatalf("memory add: %q, %v", out, err)
	}
	if err := r.Run(t.Context(), nil, []string{"memory", "add"}, "  ", collect); err == nil || err.Error() != "usage: /memory add <text to remember>" {
		t.Errorf("memory add without a fact: %v", err)
	}
	f := &fakeTarget{workspace: "/ws"}
	if err := r.Run(t.Context(), f, []string{"memory", "show"}, "", collect); err != nil ||
		out[2] != "Memory from 1 file(s): /home/u/.agentry/AGENTRY.md\n\n- buy milk" {
		t.Fatalf("memory show: %q, %v", out, err)
	}
	if d := cmp.Diff([]string{"/default", "/ws"}, mem.shown); d != "" {
		t.Errorf("workspaces shown (-want +got):\n%s", d)
	}
	f.reloadErr = errors.New("disk on fire")
	err := r.Run(t.Context(), f, []string{"memory", "add"}, "eggs", collect)
	if err == nil || !strings.Contains(err.Error(), `remembered "eggs" in /home/u/.agentry/AGENTRY.md, but not every open conversation could read it again: disk on fire`) {
		t.Errorf("memory add with a failed reload: %v", err)
	}
	if err := r.Run(t.Context(), nil, []string{"memory", "refresh"}, "", collect); !errors.Is(err, commands.ErrNoTarget) || err.Error() != "/memory acts on a conversation: no conversation given" {
		t.Errorf("memory refresh without a conversation: %v", err)
	}

	reloaded := 0
	r = newRegistry(t, commands.Config{Memory: mem, ReloadAll: func(context.Context) error { reloaded++; return nil }})
	f = &fakeTarget{}
	if err := r.Run(t.Context(), f, []string{"memory", "add"}, "bread", collect); err != nil || reloaded != 1 || len(f.calls) != 0 {
		t.Errorf("memory add with ReloadAll: %v, ReloadAll ran %d times, target calls %v", err, reloaded, f.calls)
	}

	r = newRegistry(t, commands.Config{})
	if _, err := r.Lookup([]string{"memory"}); !errors.Is(err, commands.ErrUnknown) {
		t.Errorf("/memory without Memory: %v", err)
	}
}

// TestNeedsTarget: the commands that act on a conversation refuse to run
// without one.
func TestNeedsTarget(t *testing.T) {
	r := newRegistry(t, commands.Config{Memory: &fakeMemory{}})
	for _, c := range r.Commands() {
		path := []string{c.Name}
		leaf, err := r.Lookup(path)
		if err != nil {
			t.Fatal(err)
		}
		err = r.Run(t.Context(), nil, path, "", nil)
		if leaf.NeedsTarget != errors.Is(err, commands.ErrNoTarget) {
			t.Errorf("/%s: NeedsTarget %v, run without a conversation: %v", c.Name, leaf.NeedsTarget, err)
		}
	}
}

// TestRestore lists a conversation's edits and undoes them: a file gets
// its content back if it still holds the edit's; a created file is
// removed; a changed file, a busy conversation and an unknown id refuse.
func TestRestore(t *testing.T) {
	ws := t.TempDir()
	edited, created := filepath.Join(ws, "a.txt"), filepath.Join(ws, "new.txt")
	write(t, edited, "new\n")
	write(t, created, "made\n")
	diff := func(id, path, before, after string, isNew bool) runtime.Event {
		return runtime.Event{Type: runtime.EventToolResponse, ToolResponse: &runtime.ToolResponse{RequestID: id, Name: "write_file",
			Data:    map[string]any{"isNewFile": isNew},
			Display: &runtime.ToolDisplay{Result: &runtime.DisplayContent{Type: "diff", Path: path, BeforeText: before, AfterText: after}}}}
	}
	child := diff("c9", edited, "x", "y", false)
	child.ThreadID = "sub-1" // a subagent's edit is not the conversation's
	f := &fakeTarget{workspace: ws, events: []runtime.Event{diff("c1", edited, "old\n", "new\n", false), diff("c2", created, "", "made\n", true), child}}
	r := newRegistry(t, commands.Config{})
	run := func(args string) (string, error) {
		var out []string
		err := r.Run(t.Context(), f, []string{"restore"}, args, func(s string) { out = append(out, s) })
		return strings.Join(out, ""), err
	}
	for _, args := range []string{"", "list"} {
		if out, err := run(args); err != nil || out != "File edits (newest last); /restore <tool_call_id> undoes one:\n- c1: "+edited+"\n- c2: "+created+"\n" {
			t.Errorf("restore %q: %q, %v", args, out, err)
		}
	}
	f.busy = errBusy
	if _, err := run("c1"); !errors.Is(err, errBusy) {
		t.Errorf("restore while busy: %v", err)
	}
	f.busy = nil
	if out, err := run("c1"); err != nil || out != "Restored "+edited+" to its content before edit c1." || read(t, edited) != "old\n" {
		t.Errorf("restore c1: %q, %v; a.txt %q", out, err, read(t, edited))
	}
	if _, err := run("c1"); err == nil || !strings.Contains(err.Error(), "the file changed after edit c1") {
		t.Errorf("restore c1 again: %v, want a refusal", err)
	}
	if out, err := run("c2"); err != nil || out != "Removed "+created+", which edit c2 created." {
		t.Errorf("restore c2: %q, %v", out, err)
	}
	if _, err := os.Lstat(created); !os.IsNotExist(err) {
		t.Errorf("new.txt after restore: %v", err)
	}
	if _, err := run("c9"); err == nil || err.Error() != "no file edit c9 in this conversation (/restore lists them)" {
		t.Errorf("restore of a subagent's edit: %v", err)
	}
	f.events = nil
	if out, err := run(""); err != nil || out != "No file edits in this conversation." {
		t.Errorf("restore without edits: %q, %v", out, err)
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestParse reads lines as gemini-cli does: a slash starts a command but
// for "//" and "/*"; the path takes a subcommand only when the command
// has it (or has nothing but subcommands); aliases become names.
func TestParse(t *testing.T) {
	r := newRegistry(t, commands.Config{Memory: &fakeMemory{}, Extra: []commands.Command{
		{Name: "quit", Aliases: []string{"exit"}, Description: "Exit", Run: nop},
		{Name: "clear", Aliases: []string{"new"}, Description: "Start over", Run: nop},
	}})
	tests := []struct {
		line string
		path []string
		args string
		ok   bool
	}{
		{"/memory add buy milk", []string{"memory", "add"}, "buy milk", true},
		{"  /memory   add   buy  milk  ", []string{"memory", "add"}, "buy  milk", true},
		{"/memory", []string{"memory"}, "", true},
		{"/memory reload", []string{"memory", "refresh"}, "", true},
		{"/memory forget it", []string{"memory", "forget"}, "it", true},
		{"/model gemini-2.5-flash", []string{"model"}, "gemini-2.5-flash", true},
		{"/model", []string{"model"}, "", true},
		{"/tools list", []string{"tools", "list"}, "", true},
		{"/tools", []string{"tools"}, "", true},
		{"/restore list", []string{"restore"}, "list", true},
		{"/rewind\tm-1", []string{"rewind"}, "m-1", true},
		{"/summarize", []string{"compress"}, "", true},
		{"/compact", []string{"compress"}, "", true},
		{"/usage", []string{"stats"}, "", true},
		{"/exit", []string{"quit"}, "", true},
		{"/new", []string{"clear"}, "", true},
		{"/ stats", []string{"stats"}, "", true},
		{"/approval-mode yolo", []string{"approval-mode"}, "yolo", true},
		{"/teleport to mars", []string{"teleport"}, "to mars", true},
		{"/", nil, "", true},
		{"// a comment", nil, "", false},
		{"/* a comment */", nil, "", false},
		{"hello /model", nil, "", false},
		{"", nil, "", false},
		{"@file.txt /memory", nil, "", false},
	}
	for _, tc := range tests {
		path, args, ok := r.Parse(tc.line)
		if !cmp.Equal(path, tc.path) || args != tc.args || ok != tc.ok {
			t.Errorf("Parse(%q) = %q, %q, %v; want %q, %q, %v", tc.line, path, args, ok, tc.path, tc.args, tc.ok)
		}
	}
}

func nop(context.Context, commands.Target, string, func(string)) error { return nil }

// TestExtra: the driver's commands run, list after the built-in ones,
// and may not take a name or alias that is taken.
func TestExtra(t *testing.T) {
	var ran []string
	quit := commands.Command{Name: "quit", Aliases: []string{"exit"}, Description: "Exit agentry", Run: func(_ context.Context, tg commands.Target, args string, out func(string)) error {
		ran = append(ran, "quit "+args)
		out("bye")
		return nil
	}}
	r := newRegistry(t, commands.Config{Extra: []commands.Command{quit}})
	var names []string
	for _, c := range r.Commands() {
		names = append(names, c.Name)
	}
	if want := "model rewind tools restore stats compress approval-mode mcp agents quit"; strings.Join(names, " ") != want {
		t.Errorf("commands %q, want %q", names, want)
	}
	path, args, _ := r.Parse("/exit --delete")
	var out []string
	if err := r.Run(t.Context(), nil, path, args, func(s string) { out = append(out, s) }); err != nil || len(ran) != 1 || ran[0] != "quit --delete" || out[0] != "bye" {
		t.Errorf("/exit: %v, ran %q, out %q", err, ran, out)
	}
	// Commands returns copies: changing them changes nothing.
	cmds := r.Commands()
	cmds[len(cmds)-1].Aliases[0] = "leave"
	if p, _, _ := r.Parse("/leave"); p[0] != "leave" {
		t.Errorf("an alias changed through Commands: /leave parses to %q", p)
	}

	for _, bad := range []commands.Command{
		{Name: "stats", Run: nop},
		{Name: "bye", Aliases: []string{"compact"}, Run: nop},
		{Name: "", Run: nop},
		{Name: "/quit", Run: nop},
		{Name: "two words", Run: nop},
		{Name: "empty"},
	} {
		if _, err := commands.New(commands.Config{Extra: []commands.Command{bad}}); err == nil {
			t.Errorf("New accepted %+v", bad)
		}
	}
	if _, err := commands.New(commands.Config{Extra: []commands.Command{quit, quit}}); err == nil {
		t.Error("New accepted /quit twice")
	}
}

// TestSessionIsTarget runs commands on a real session: the registry needs
// nothing but what *runtime.Session provides.
func TestSessionIsTarget(t *testing.T) {
	sess, err := runtime.New(t.Context(), runtime.Config{Model: "gemini-2.5-flash", Resolver: noModels{}, Workspace: "/ws"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	r := newRegistry(t, commands.Config{})
	var out []string
	collect := func(s string) { out = append(out, s) }
	for _, c := range []struct {
		line string
		want string
		err  string
	}{
		{line: "/model", want: "Model: gemini-2.5-flash"},
		{line: "/model gemini-2.5-pro", want: "Model set to gemini-2.5-pro"},
		{line: "/approval-mode auto_edit", want: "Approval mode set to auto_edit."},
		{line: "/approval-mode", want: "Approval mode: auto_edit (modes: plan, default, auto_edit, yolo)"},
		{line: "/compress", err: "sqlite or postgres"},
		{line: "/stats", want: "Session " + sess.ID() + "\nModel calls: none yet\nTool calls: 0 (0 succeeded, 0 failed), 0s\nFiles: 0 line(s) added, 0 removed\n"},
	} {
		out = nil
		path, args, _ := r.Parse(c.line)
		err := r.Run(t.Context(), sess, path, args, collect)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want an error with %q", c.line, err, c.err)
			}
			continue
		}
		if err != nil || len(out) != 1 || out[0] != c.want {
			t.Errorf("%s: %q, %v; want %q", c.line, out, err, c.want)
		}
	}
}

// noModels resolves no model: the commands under test call none.
type noModels struct{}

func (noModels) Resolve(context.Context, string) (llm.Target, error) {
	return llm.Target{}, errors.New("no model in this test")
}
