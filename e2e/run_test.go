package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentry-dev/agentry/runtime"
)

const prompt = "Create a hello script and run it"

// TestQuickstartStreamJSON runs the README's quickstart: the replayed model
// lists the workspace, writes a script, reads it and runs it.
func TestQuickstartStreamJSON(t *testing.T) {
	e := newEnv(t)
	r := e.run("", "run", "--model", "replay:"+quickstart(), "--yolo", "-o", "stream-json", "-p", prompt)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	ls := lines(t, r.stdout)
	var compact []string
	for _, l := range ls {
		switch l["type"] {
		case "message":
			if l["role"] == "assistant" {
				if n := len(compact); n > 0 && compact[n-1] == "assistant" {
					continue // consecutive deltas
				}
				compact = append(compact, "assistant")
				continue
			}
			compact = append(compact, "user")
		case "tool_use":
			compact = append(compact, "tool_use:"+l["tool_name"].(string))
		case "tool_result":
			compact = append(compact, "tool_result:"+l["status"].(string))
		default:
			compact = append(compact, l["type"].(string))
		}
	}
	want := []string{
		"init", "user",
		"assistant", "tool_use:list_directory", "tool_result:success",
		"assistant", "tool_use:write_file", "tool_result:success",
		"assistant", "tool_use:read_file", "tool_result:success",
		"assistant", "tool_use:run_shell_command", "tool_result:success",
		"assistant", "result",
	}
	if diff := cmp.Diff(want, compact); diff != "" {
		t.Fatalf("stream-json lines (-want +got):\n%s\nstdout:\n%s", diff, r.stdout)
	}
	init := ls[0]
	if init["model"] != "replay:"+quickstart() || init["session_id"] == "" {
		t.Errorf("init = %v", init)
	}
	if ls[1]["content"] != prompt {
		t.Errorf("user message = %v", ls[1])
	}
	res := ls[len(ls)-1]
	stats := res["stats"].(map[string]any)
	if res["status"] != "success" || stats["tool_calls"] != 4.0 || stats["total_tokens"] != 10204.0 {
		t.Errorf("result = %v", res)
	}
	// Tool uses and results pair up by id.
	uses, results := ofType(ls, "tool_use"), ofType(ls, "tool_result")
	for i := range uses {
		if uses[i]["tool_id"] != results[i]["tool_id"] || uses[i]["tool_id"] == "" {
			t.Errorf("tool_use %v / tool_result %v", uses[i], results[i])
		}
	}
	got, err := os.ReadFile(filepath.Join(e.ws, "hello.sh"))
	if err != nil || string(got) != "#!/bin/sh\n# Greets whoever runs it.\necho \"hello from agentry\"\n" {
		t.Errorf("hello.sh = %q, %v", got, err)
	}
	if r.stderr != "" {
		t.Errorf("stderr should be empty when nothing went wrong, got:\n%s", r.stderr)
	}
}

func TestQuickstartTextAndJSON(t *testing.T) {
	e := newEnv(t)
	r := e.run("", "run", "-m", "replay:"+quickstart(), "-y", "-p", prompt)
	want := "I'll start by looking at what is in the workspace.\n" +
		"The workspace is empty, so I'll create a small script.\n" +
		"Let me check the file as written.\n" +
		"Now I'll run it.\n" +
		"Done. I created `hello.sh`, read it back, and ran it: it prints \"hello from agentry\".\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d\nstdout (-want +got):\n%s\nstderr: %s", r.code, cmp.Diff(want, r.stdout), r.stderr)
	}
	// Not a terminal: no spinner, no control characters on stderr.
	if r.stderr != "" {
		t.Errorf("stderr = %q", r.stderr)
	}

	e = newEnv(t)
	r = e.run("", "run", "-m", "replay:"+quickstart(), "-y", "-o", "json", "-p", prompt)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var out struct {
		SessionID string `json:"session_id"`
		Response  string `json:"response"`
		Stats     struct {
			Models map[string]struct {
				API    struct{ TotalRequests int } `json:"api"`
				Tokens struct{ Prompt, Candidates, Total int }
			}
			Tools struct {
				TotalCalls, TotalSuccess int
				TotalDecisions           map[string]int
				ByName                   map[string]struct{ Count int }
			}
			Files struct{ TotalLinesAdded int }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, r.stdout)
	}
	m := out.Stats.Models["replay:"+quickstart()]
	if out.SessionID == "" || out.Response != "Done. I created `hello.sh`, read it back, and ran it: it prints \"hello from agentry\".\n" ||
		m.API.TotalRequests != 5 || m.Tokens.Total != 10204 || out.Stats.Tools.TotalCalls != 4 || out.Stats.Tools.TotalSuccess != 4 ||
		out.Stats.Tools.TotalDecisions["accept"] != 4 || out.Stats.Tools.ByName["write_file"].Count != 1 || out.Stats.Files.TotalLinesAdded != 3 {
		t.Errorf("json output = %+v", out)
	}
}

func TestEventsOutput(t *testing.T) {
	e := newEnv(t)
	r := e.run("", "run", "-m", "replay:"+quickstart(), "-y", "-o", "events", "-p", prompt)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var evs []runtime.Event
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev runtime.Event
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		evs = append(evs, ev)
	}
	if evs[0].Type != runtime.EventInitialize || evs[2].Type != runtime.EventAgentStart || evs[3].Type != runtime.EventSessionUpdate ||
		evs[len(evs)-1].Type != runtime.EventAgentEnd || evs[len(evs)-1].AgentEnd.Reason != runtime.EndCompleted {
		t.Errorf("events: first %v, last %v", evs[:4], evs[len(evs)-1])
	}
	var shellOutput string
	for _, ev := range evs {
		if ev.Type == runtime.EventToolUpdate {
			shellOutput += ev.ToolUpdate.Content[0].Text
		}
	}
	if !strings.Contains(shellOutput, "hello from agentry") {
		t.Errorf("the shell command's live output did not stream as tool_update events: %q", shellOutput)
	}
}

func TestStdinAndPrompt(t *testing.T) {
	e := newEnv(t)
	replay := e.replayFile([]map[string]any{text("noted")})
	r := e.run("some piped context\n", "run", "-m", "replay:"+replay, "-o", "stream-json", "-p", "summarise it")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if user := lines(t, r.stdout)[1]; user["content"] != "some piped context\n\nsummarise it" {
		t.Errorf("user message = %v", user["content"])
	}
	// Stdin alone is the prompt.
	r = e.run("only stdin", "run", "-m", "replay:"+replay, "-o", "stream-json")
	if r.code != 0 || lines(t, r.stdout)[1]["content"] != "only stdin" {
		t.Errorf("stdin prompt: exit %d, %s", r.code, r.stdout)
	}
}

func TestToolDeniedInDefaultMode(t *testing.T) {
	e := newEnv(t)
	replay := e.replayFile(
		[]map[string]any{call("write_file", map[string]any{"file_path": "out.txt", "content": "x"})},
		[]map[string]any{call("run_shell_command", map[string]any{"command": "touch ran.txt"})},
		[]map[string]any{text("I was not allowed to.")},
	)
	r := e.run("", "run", "-m", "replay:"+replay, "-o", "stream-json", "-p", "write a file")
	if r.code != 0 {
		t.Fatalf("a denial is reported to the model, not fatal: exit %d, %s", r.code, r.stderr)
	}
	out := lines(t, r.stdout)
	results := ofType(out, "tool_result")
	// gemini-cli's default policy denies writes and the shell without a
	// human, so the model is not offered them: it reads gemini-cli's "not
	// found"; the user reads, once per tool, what would allow the call.
	for i, tool := range []string{"write_file", "run_shell_command"} {
		errObj, _ := results[i]["error"].(map[string]any)
		msg, _ := errObj["message"].(string)
		if results[i]["status"] != "error" || !strings.HasPrefix(msg, `Tool "`+tool+`" not found.`) {
			t.Errorf("tool_result %d = %v, want %s not found", i, results[i], tool)
		}
	}
	var warnings []string
	for _, l := range ofType(out, "error") {
		if l["severity"] == "warning" {
			msg, _ := l["message"].(string)
			warnings = append(warnings, msg)
		}
	}
	for _, want := range []string{
		`write_file was refused: To allow it, run with --allowed-tools write_file or --approval-mode auto_edit, or add "write_file" to tools.allowed in settings.json.`,
		`run_shell_command was refused: To allow it, run with --allowed-tools 'run_shell_command(touch)' or --approval-mode yolo, or add "run_shell_command(touch)" to tools.allowed in settings.json.`,
	} {
		if !slices.Contains(warnings, want) {
			t.Errorf("warnings %q, want %q", warnings, want)
		}
	}
	for _, f := range []string{"out.txt", "ran.txt"} {
		if _, err := os.Stat(filepath.Join(e.ws, f)); !os.IsNotExist(err) {
			t.Errorf("%s exists: a denied call ran", f)
		}
	}
	// In text mode the hint is a warning on stderr.
	r = e.run("", "run", "-m", "replay:"+replay, "-p", "write a file")
	if r.code != 0 || !strings.Contains(r.stderr, `[WARNING] write_file was refused: To allow it`) {
		t.Errorf("text mode: exit %d stderr %q", r.code, r.stderr)
	}
	// --allowed-tools lets the write through without yolo; the shell
	// command stays denied.
	r = e.run("", "run", "-m", "replay:"+replay, "--allowed-tools", "write_file", "-o", "stream-json", "-p", "write a file")
	results = ofType(lines(t, r.stdout), "tool_result")
	if r.code != 0 || results[0]["status"] != "success" || results[1]["status"] != "error" {
		t.Errorf("allowed write_file: exit %d results %v", r.code, results)
	}
	// The rule the denial suggests lets the command run.
	r = e.run("", "run", "-m", "replay:"+replay, "--allowed-tools", "write_file,run_shell_command(touch)", "-o", "stream-json", "-p", "write a file")
	results = ofType(lines(t, r.stdout), "tool_result")
	if r.code != 0 || results[0]["status"] != "success" || results[1]["status"] != "success" {
		t.Errorf("the suggested rule: exit %d results %v", r.code, results)
	}
}

// TestUnknownAllowedToolWarns: a name in --allowed-tools that is no tool
// allows nothing; the run says so once, on stderr, with the tools there
// are, and goes on (the call it was meant for is denied).
func TestUnknownAllowedToolWarns(t *testing.T) {
	e := newEnv(t)
	replay := e.replayFile(
		[]map[string]any{call("write_file", map[string]any{"file_path": "out.txt", "content": "x"})},
		[]map[string]any{text("I was not allowed to.")},
	)
	r := e.run("", "run", "-m", "replay:"+replay, "--allowed-tools", "write_fiel,read_file,run_shell_comand", "-p", "write a file")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var warned []string
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.Contains(l, "--allowed-tools") && !strings.Contains(l, "Error executing tool") && !strings.Contains(l, " was refused: ") {
			warned = append(warned, l)
		}
	}
	want := "[WARNING] --allowed-tools (tools.allowed) names tools that do not exist: write_fiel, run_shell_comand; the tools are " +
		"glob, grep_search, list_directory, read_file, read_many_files, replace, run_shell_command, write_file"
	if len(warned) != 1 || warned[0] != want {
		t.Errorf("want the one warning\n%s\nstderr:\n%s", want, r.stderr)
	}
	// Batch warns once, not once per prompt.
	in := e.batchInput(request("a", "one", ""), request("b", "two", ""))
	r = e.run("", "batch", "-m", "replay:"+replay, "--allowed-tools", "write_fiel", in)
	if n := strings.Count(r.stderr, "names a tool that does not exist: write_fiel;"); n != 1 {
		t.Errorf("batch: %d warnings, want 1:\n%s", n, r.stderr)
	}
}

func TestWorkspaceEscapeIsAToolError(t *testing.T) {
	e := newEnv(t)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	e.writeFile(outside, "top secret")
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(e.ws, "link")); err != nil {
		t.Fatal(err)
	}
	replay := e.replayFile(
		[]map[string]any{call("read_file", map[string]any{"file_path": outside})},
		[]map[string]any{call("read_file", map[string]any{"file_path": "../" + filepath.Base(filepath.Dir(outside)) + "/secret.txt"})},
		[]map[string]any{call("write_file", map[string]any{"file_path": "link/planted.txt", "content": "x"})},
		[]map[string]any{text("Those paths are outside the workspace.")},
	)
	r := e.run("", "run", "-m", "replay:"+replay, "--yolo", "-o", "stream-json", "-p", "read it")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for i, res := range ofType(lines(t, r.stdout), "tool_result") {
		errObj, _ := res["error"].(map[string]any)
		if res["status"] != "error" || errObj["type"] != "path_not_in_workspace" {
			t.Errorf("result %d = %v", i, res)
		}
		if strings.Contains(r.stdout, "top secret") {
			t.Errorf("the secret leaked into the output")
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(outside), "planted.txt")); !os.IsNotExist(err) {
		t.Error("a write through a symlink escaped the workspace")
	}
}

// TestErrors: each failure has its clear message and gemini-cli's exit code.
func TestErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(e *env) []string
		code  int
		want  string // in stderr (text) or the JSON error
	}{
		{"unknown model", func(e *env) []string { return []string{"-m", "gpt-9"} }, 52, `unknown model "gpt-9"`},
		{"malformed replay file", func(e *env) []string {
			p := e.writeFile(filepath.Join(t.TempDir(), "bad.jsonl"), "{\"method\":\"generateContentStream\",\"response\":[]}\n")
			return []string{"-m", "replay:" + p}
		}, 52, "bad.jsonl:1: generateContentStream response"},
		{"missing replay file", func(e *env) []string { return []string{"-m", "replay:/nonexistent/r.jsonl"} }, 52, "no such file"},
		{"unknown settings key", func(e *env) []string {
			e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), `{"model": {"nmae": "flash"}}`)
			return nil
		}, 52, `settings.json: unknown key "model.nmae" (did you mean "model.name"?)`},
		{"wrong settings type", func(e *env) []string {
			e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), `{"model": {"maxSessionTurns": "ten"}}`)
			return nil
		}, 52, `"model.maxSessionTurns" must be an integer, got string`},
		{"untrusted workspace asks for yolo", func(e *env) []string {
			e.writeFile(".agentry/settings.json", `{"general": {"defaultApprovalMode": "yolo"}}`)
			return nil
		}, 55, "only a trusted workspace may set"},
		{"untrusted workspace .env cannot trust it", func(e *env) []string {
			e.writeFile(".env", "AGENTRY_TRUST_WORKSPACE=true\n")
			e.writeFile(".agentry/.env", "AGENTRY_TRUST_WORKSPACE=true\n")
			e.writeFile(".agentry/settings.json", `{"tools": {"allowed": ["run_shell_command"]}}`)
			return nil
		}, 55, "--trust-workspace"},
		{"no credentials", func(e *env) []string { return []string{"-m", "gemini-2.5-flash"} }, 41, "GEMINI_API_KEY"},
		{"no input", func(e *env) []string { return []string{"-p", "  "} }, 42, "no input"},
		{"yolo and approval mode", func(e *env) []string { return []string{"--yolo", "--approval-mode", "plan"} }, 42, "cannot use both"},
		{"bad output format", func(e *env) []string { return []string{"-o", "xml"} }, 52, "output.format"},
		{"missing workspace", func(e *env) []string { return []string{"-w", "/nonexistent/ws"} }, 52, "workspace /nonexistent/ws does not exist"},
		{"unknown flag", func(e *env) []string { return []string{"--frobnicate"} }, 42, "unknown flag"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			replay := e.replayFile([]map[string]any{text("unused")})
			args := append([]string{"run", "-m", "replay:" + replay, "-p", "hi"}, tc.setup(e)...)
			r := e.run("", args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, tc.code, tc.want)
			}
			if r.stdout != "" {
				t.Errorf("stdout should stay empty in text mode: %q", r.stdout)
			}
			// The JSON formats report the same error on stdout.
			r = e.run("", append(args, "-o", "json")...)
			if tc.name == "bad output format" || tc.name == "unknown flag" {
				// Argument errors come before any output format applies.
				return
			}
			var out struct {
				Error struct {
					Type, Message string
					Code          int
				}
			}
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != tc.code || out.Error.Code != tc.code || !strings.Contains(out.Error.Message, tc.want) {
				t.Errorf("-o json: exit %d, stdout %q", r.code, r.stdout)
			}
		})
	}
}

func TestTrustedWorkspaceSettingsApply(t *testing.T) {
	e := newEnv(t)
	e.writeFile(".agentry/settings.json", `{"general": {"defaultApprovalMode": "yolo"}}`)
	replay := e.replayFile(
		[]map[string]any{call("write_file", map[string]any{"file_path": "ok.txt", "content": "trusted"})},
		[]map[string]any{text("done")},
	)
	for _, trust := range [][]string{{"--trust-workspace"}, nil} {
		args := append([]string{"run", "-m", "replay:" + replay, "-p", "go"}, trust...)
		if trust == nil {
			e.set("AGENTRY_TRUST_WORKSPACE=true")
		}
		r := e.run("", args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", trust, r.code, r.stderr)
		}
		if b, err := os.ReadFile(filepath.Join(e.ws, "ok.txt")); err != nil || string(b) != "trusted" {
			t.Errorf("%v: the trusted workspace's yolo did not apply: %v", trust, err)
		}
		os.Remove(filepath.Join(e.ws, "ok.txt"))
	}
}

func TestMaxTurnsExitCode(t *testing.T) {
	e := newEnv(t)
	e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), `{"model": {"maxSessionTurns": 2}}`)
	r := e.run("", "run", "-m", "replay:"+quickstart(), "-y", "-o", "stream-json", "-p", prompt)
	res := lines(t, r.stdout)
	last := res[len(res)-1]
	errObj, _ := last["error"].(map[string]any)
	if r.code != 53 || last["status"] != "error" || errObj["type"] != "FatalTurnLimitedError" {
		t.Errorf("exit %d, result %v", r.code, last)
	}
}

var ansiOrSpinner = regexp.MustCompile("\x1b|\r|[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]")

func TestNoProgressWhenStderrIsNotATerminal(t *testing.T) {
	e := newEnv(t)
	replay := e.replayFile(
		[]map[string]any{call("run_shell_command", map[string]any{"command": "sleep 0.4"})},
		[]map[string]any{text("slept")},
	)
	r := e.run("", "run", "-m", "replay:"+replay, "-y", "-p", "sleep")
	if r.code != 0 || r.stdout != "slept\n" {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if ansiOrSpinner.MatchString(r.stderr) {
		t.Errorf("progress written to a non-terminal stderr: %q", r.stderr)
	}
}
