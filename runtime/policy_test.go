package runtime

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/policy"
	"github.com/agentry-dev/agentry/tools"
)

func TestPolicyModes(t *testing.T) {
	read := &fakeTool{ToolName: "read_file", ToolKind: tools.KindRead}
	search := &fakeTool{ToolName: "grep_search", ToolKind: tools.KindSearch}
	edit := &fakeWriter{fakeTool: fakeTool{ToolName: "write_file", ToolKind: tools.KindEdit}}
	// An edit tool that does not name the files it writes cannot be
	// checked against the protected paths: auto_edit asks.
	opaque := &fakeTool{ToolName: "patch", ToolKind: tools.KindEdit}
	shell := &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute}
	// Rows follow gemini-cli's built-in policy files: read-only always
	// runs; auto_edit adds edits; yolo runs all; plan runs only read-only.
	tests := []struct {
		mode string
		tool tools.Tool
		want Decision
	}{
		{"default", read, Allow}, {"default", search, Allow}, {"default", edit, Ask}, {"default", shell, Ask},
		{"auto_edit", read, Allow}, {"auto_edit", edit, Allow}, {"auto_edit", opaque, Ask}, {"auto_edit", shell, Ask},
		{"yolo", read, Allow}, {"yolo", edit, Allow}, {"yolo", opaque, Allow}, {"yolo", shell, Allow},
		{"plan", read, Allow}, {"plan", search, Allow}, {"plan", edit, Deny}, {"plan", shell, Deny},
	}
	for _, tc := range tests {
		p := mustPolicy(t, tc.mode)
		// Not one of gemini-cli's known-safe commands (ls would run in
		// every mode but plan).
		got, msg := p.Decide(tc.tool, map[string]any{"command": "npm test"})
		if got != tc.want {
			t.Errorf("%s/%s: %v, want %v", tc.mode, tc.tool.Name(), got, tc.want)
		}
		if got == Deny && !strings.HasPrefix(msg, "Tool execution denied by policy.") {
			t.Errorf("%s/%s: deny message %q", tc.mode, tc.tool.Name(), msg)
		}
	}
}

// fakeWriter is an edit tool that names the file it writes: its
// file_path argument, taken as real.
type fakeWriter struct{ fakeTool }

func (f *fakeWriter) WritePaths(args map[string]any) ([]string, error) {
	p, _ := args["file_path"].(string)
	return []string{p}, nil
}

// TestPolicyProtectedPaths: writing a path that configures commands asks
// in every mode but yolo (plan denies), whatever the allow rules and
// "always" answers say.
func TestPolicyProtectedPaths(t *testing.T) {
	edit := &fakeWriter{fakeTool: fakeTool{ToolName: "write_file", ToolKind: tools.KindEdit}}
	hook := map[string]any{"file_path": "/w/.git/hooks/pre-commit"}
	plain := map[string]any{"file_path": "/w/main.go"}
	tests := []struct {
		mode  string
		rules []string
		args  map[string]any
		want  Decision
	}{
		{"default", nil, hook, Ask},
		{"auto_edit", nil, hook, Ask},
		{"auto_edit", nil, plain, Allow},
		{"auto_edit", []string{"write_file"}, hook, Ask},
		{"default", []string{"write_file"}, hook, Ask},
		{"default", []string{"write_file"}, plain, Allow},
		{"plan", []string{"write_file"}, hook, Deny},
		{"yolo", nil, hook, Allow},
	}
	for _, tc := range tests {
		p := mustPolicy(t, tc.mode, tc.rules...)
		if got, _ := p.Decide(edit, tc.args); got != tc.want {
			t.Errorf("%s %q %v: %v, want %v", tc.mode, tc.rules, tc.args, got, tc.want)
		}
	}
	p := mustPolicy(t, "auto_edit")
	p.AllowAlways("write_file", plain)
	if got, _ := p.Decide(edit, hook); got != Ask {
		t.Errorf("after proceed_always: %v, want ask", got)
	}
	if msg, want := needsConfirmation(edit).Error(), `Tool execution for "Fake write_file" requires user confirmation, which is not supported in non-interactive mode.`; msg != want {
		t.Errorf("denial without a human:\n got %s\nwant %s", msg, want)
	}
	hint := confirmationHint(edit, hook)
	want := `/w/.git/hooks/pre-commit configures commands that run without further approval (git runs its hooks`
	if !strings.HasPrefix(hint, want) || !strings.HasSuffix(hint, "To allow it, run with --approval-mode yolo (-y).") {
		t.Errorf("hint without a human:\n got %s\nwant %s… To allow it, run with --approval-mode yolo (-y).", hint, want)
	}
}

func TestPolicyAllowRules(t *testing.T) {
	edit := &fakeTool{ToolName: "write_file", ToolKind: tools.KindEdit}
	shell := &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute}
	tests := []struct {
		rules []string
		tool  *fakeTool
		cmd   string
		want  Decision
	}{
		{[]string{"write_file"}, edit, "", Allow},
		{[]string{"replace"}, edit, "", Ask},
		// gemini-cli's dangerous-command heuristic asks even when the
		// shell is allowed.
		{[]string{"run_shell_command"}, shell, "rm -rf /tmp/x", Ask},
		{[]string{"run_shell_command"}, shell, "npm test", Allow},
		{[]string{"ShellTool(git)"}, shell, "git log --oneline", Allow},
		{[]string{"run_shell_command(git status)"}, shell, "git status", Allow},
		{[]string{"run_shell_command(git status)"}, shell, "git status --short", Allow},
		{[]string{"run_shell_command(git status)"}, shell, "git status 'quoted arg'", Allow},
		// gemini-cli's commandPrefix: a word boundary after the prefix.
		// A rule run_shell_command(x) also denies every other command
		// (priority 4.29), so what it does not allow is denied, not asked.
		{[]string{"run_shell_command(git status)"}, shell, "git statusx", Deny},
		{[]string{"run_shell_command(git status)"}, shell, "git push", Deny},
		{[]string{"run_shell_command(git status)"}, shell, "  git   status ", Deny},
		// Every command of a line is checked on its own.
		{[]string{"run_shell_command(git status)"}, shell, "git status && rm -rf /", Deny},
		{[]string{"run_shell_command(git status)"}, shell, "git status; rm -rf /", Deny},
		{[]string{"run_shell_command(git status)"}, shell, "git status | sh", Deny},
		{[]string{"run_shell_command(git status)"}, shell, "git status $(rm -rf /)", Deny},
		{[]string{"run_shell_command(git status)"}, shell, "git status `rm -rf /`", Deny},
		{[]string{"run_shell_command(git status)"}, shell, "(git status)", Deny},
		{[]string{"run_shell_command(git status)"}, shell, "X=1 git status", Deny},
		{[]string{"run_shell_command(git)"}, shell, "if true; then git log; fi", Deny},
		// A redirection turns an allowed command into a question.
		{[]string{"run_shell_command(git status)"}, shell, "git status > out.txt", Ask},
		{[]string{"run_shell_command(git status)"}, shell, "git status $HOME", Allow},
		{[]string{"run_shell_command(git status)"}, shell, "git status &", Allow},
		{[]string{"run_shell_command(git)", "run_shell_command(ls)"}, shell, "git diff && ls -la", Allow},
		// An allow rule wins over plan mode, as a user-tier rule does in
		// gemini-cli.
		{[]string{"write_file"}, edit, "", Allow},
	}
	for _, tc := range tests {
		p := mustPolicy(t, "default", tc.rules...)
		if got, _ := p.Decide(tc.tool, map[string]any{"command": tc.cmd}); got != tc.want {
			t.Errorf("rules %q, %s %q: %v, want %v", tc.rules, tc.tool.ToolName, tc.cmd, got, tc.want)
		}
	}
	p := mustPolicy(t, "plan", "write_file")
	if got, _ := p.Decide(edit, nil); got != Allow {
		t.Errorf("plan mode with an allow rule: %v", got)
	}
}

func TestPolicyErrors(t *testing.T) {
	if _, err := NewPolicy("reckless", nil); err == nil {
		t.Error("unknown mode: want an error")
	}
	// gemini-cli ignores the argument of a tool other than the shell:
	// read_file(x) is read_file.
	for _, bad := range []string{"", "run_shell_command(", "run_shell_command()"} {
		if _, err := NewPolicy("default", []string{bad}); err == nil {
			t.Errorf("rule %q: want an error", bad)
		}
	}
}

func TestPolicyAllowAlways(t *testing.T) {
	shell := &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute}
	p := mustPolicy(t, "default")
	p.AllowAlways("run_shell_command", map[string]any{"command": "npm test --watch"})
	for cmd, want := range map[string]Decision{"npm run build": Allow, "npx evil": Ask} {
		if got, _ := p.Decide(shell, map[string]any{"command": cmd}); got != want {
			t.Errorf("%q: %v, want %v", cmd, got, want)
		}
	}
}

// TestDenialNamesWhatAllows: a call that needs a human in a run without
// one is refused with gemini-cli's sentence alone; the user's hint names
// the flag, the approval mode and the setting that would let it run.
func TestDenialNamesWhatAllows(t *testing.T) {
	const sentence = ` requires user confirmation, which is not supported in non-interactive mode.`
	edit := &fakeTool{ToolName: "write_file", ToolKind: tools.KindEdit}
	shell := &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute}
	other := &fakeTool{ToolName: "web_fetch", ToolKind: tools.KindFetch}
	tests := []struct {
		tool *fakeTool
		args map[string]any
		want string
	}{
		{edit, map[string]any{"file_path": "a"},
			`To allow it, run with --allowed-tools write_file or --approval-mode auto_edit, or add "write_file" to tools.allowed in settings.json.`},
		{shell, map[string]any{"command": "git status && ls -l"},
			`To allow it, run with --allowed-tools 'run_shell_command(git),run_shell_command(ls)' or --approval-mode yolo, or add "run_shell_command(git)", "run_shell_command(ls)" to tools.allowed in settings.json.`},
		{shell, map[string]any{"command": "echo hi > out.txt"},
			`To allow it, run with --approval-mode yolo (-y): no --allowed-tools rule matches a command line with redirections, substitutions or variables.`},
		{other, map[string]any{},
			`To allow it, run with --allowed-tools web_fetch or --approval-mode yolo, or add "web_fetch" to tools.allowed in settings.json.`},
	}
	for _, tc := range tests {
		want := `Tool execution for "` + tc.tool.DisplayName() + `"` + sentence
		if got := needsConfirmation(tc.tool).Error(); got != want {
			t.Errorf("%s %v:\n got %s\nwant %s", tc.tool.ToolName, tc.args, got, want)
		}
		if got := confirmationHint(tc.tool, tc.args); got != tc.want {
			t.Errorf("%s %v hint:\n got %s\nwant %s", tc.tool.ToolName, tc.args, got, tc.want)
		}
	}
	// The suggested rule does allow the call.
	p, err := NewPolicy("default", []string{"run_shell_command(git)", "run_shell_command(ls)"})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := p.Decide(shell, map[string]any{"command": "git status && ls -l"}); d != Allow {
		t.Errorf("the suggested rules give %v, want allow", d)
	}
}

func TestPolicyUnknownTools(t *testing.T) {
	p, err := NewPolicy("default", []string{"write_file", "run_shell_comand", "ShellTool(ls)", "read_fiel", "read_fiel"})
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{"write_file": true, "run_shell_command": true, "read_file": true}
	got := p.UnknownTools(func(n string) bool { return known[n] })
	if strings.Join(got, ",") != "run_shell_comand,read_fiel" {
		t.Errorf("UnknownTools = %q, want the misspelt names once each", got)
	}
}

// TestApprovalOffers: the "always" answers need a trusted workspace (and
// no security.disableAlwaysAllow); the save answer also needs
// security.enablePermanentToolApproval, as gemini-cli's dialog.
func TestApprovalOffers(t *testing.T) {
	shell := &fakeTool{ToolName: "run_shell_command", ToolKind: tools.KindExecute}
	all := []Outcome{ProceedOnce, ProceedAlways, ProceedAlwaysTool, ProceedAlwaysServer, ProceedAlwaysAndSave, Cancel}
	tests := []struct {
		name string
		opts []PolicyOption
		want []Outcome
	}{
		{"untrusted", nil, []Outcome{ProceedOnce, Cancel}},
		{"untrusted with permanent approval", []PolicyOption{WithPermanentApproval()}, []Outcome{ProceedOnce, Cancel}},
		{"trusted", []PolicyOption{WithTrusted(true)}, []Outcome{ProceedOnce, ProceedAlways, ProceedAlwaysTool, ProceedAlwaysServer, Cancel}},
		{"trusted with permanent approval", []PolicyOption{WithTrusted(true), WithPermanentApproval()}, all},
		{"always disabled", []PolicyOption{WithTrusted(true), WithPermanentApproval(), WithoutAlwaysOptions()}, []Outcome{ProceedOnce, Cancel}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			engine, err := policy.New(policy.Defaults())
			if err != nil {
				t.Fatal(err)
			}
			p, err := NewPolicyWith(ApprovalDefault, engine, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			var req ApprovalRequest
			approver := approverFunc(func(_ context.Context, r ApprovalRequest) (Outcome, error) {
				req = r
				return Cancel, nil
			})
			b := newScript(callTurn("", fc("c1", "run_shell_command", map[string]any{"command": "npm test"})), textTurn("done"))
			run(t, newTestSession(t, b, Config{Tools: []tools.Tool{shell}, Policy: p, Approver: approver}), "go")
			var got []Outcome
			for _, o := range all {
				if req.Offered(o) {
					got = append(got, o)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("offered %v, want %v", got, tc.want)
			}
		})
	}
}
