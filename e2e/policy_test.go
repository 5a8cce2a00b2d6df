package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/internal/termtest"
)

// policyEnv is newEnv with a system policy directory of the test's own
// (empty), so that the machine's /etc/agentry/policies and
// /etc/gemini-cli/policies play no part.
func policyEnv(t *testing.T) *env {
	e := newEnv(t)
	e.set("AGENTRY_ADMIN_POLICY_DIR=" + t.TempDir())
	return e
}

// allowPermanentApproval sets up the user settings as a user who wants
// "… all future sessions" answers does: the workspace trusted and
// security.enablePermanentToolApproval on (it is off by default, and no
// "always" answer is offered in an untrusted workspace).
func (e *env) allowPermanentApproval() {
	e.t.Helper()
	b, err := json.Marshal(map[string]any{"security": map[string]any{
		"trustedFolders": []string{e.ws}, "enablePermanentToolApproval": true,
	}})
	if err != nil {
		e.t.Fatal(err)
	}
	e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), string(b))
}

// toolResults runs agentry run with a replay file and returns its
// stream-json tool results.
func (e *env) toolResults(replay string, args ...string) (result, []map[string]any) {
	e.t.Helper()
	r := e.run("", append(append([]string{"run", "-m", "replay:" + replay, "-o", "stream-json"}, args...), "-p", "go")...)
	if r.code != 0 {
		e.t.Fatalf("agentry run %q: exit %d\n%s", args, r.code, r.stderr)
	}
	return r, ofType(lines(e.t, r.stdout), "tool_result")
}

func errorMessage(res map[string]any) string {
	errObj, _ := res["error"].(map[string]any)
	msg, _ := errObj["message"].(string)
	return msg
}

// TestAlwaysAndSaveInTheTerminal: "Allow this command for all future
// sessions" in the terminal (security.enablePermanentToolApproval, a
// trusted workspace) saves a rule to the workspace's policies, and a
// new headless run (no human) honours it.
func TestAlwaysAndSaveInTheTerminal(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(
		fakegemini.Call("run_shell_command", map[string]any{"command": "touch first.txt"}),
		fakegemini.Text("Touched."),
	)
	e := policyEnv(t)
	e.allowPermanentApproval()
	e.geminiEnv(srv)
	tm := e.interactive("-m", "gemini-2.5-flash")
	send(tm, "touch a file")
	tm.WaitText("Allow this command for all future sessions")
	tm.Keys("3")
	tm.WaitText("Touched.")
	tm.WaitText(promptReady)
	tm.Keys("C-d")
	if ex := tm.WaitExit(); ex != (termtest.Exit{}) {
		t.Fatalf("exit %+v; the screen:\n%s", ex, termtest.Framed(tm.Screen()))
	}
	if _, err := os.Stat(filepath.Join(e.ws, "first.txt")); err != nil {
		t.Fatalf("the allowed command did not run: %v", err)
	}
	// The workspace is trusted: the rule is saved with its policies.
	saved := filepath.Join(e.ws, ".agentry", "policies", "auto-saved.toml")
	data, err := os.ReadFile(saved)
	if err != nil || !strings.Contains(string(data), "touch") || !strings.Contains(string(data), "run_shell_command") {
		t.Fatalf("%s: %q, %v; want a rule for touch", saved, data, err)
	}
	if fi, err := os.Stat(saved); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s mode %v, %v; want 0600", saved, fi.Mode().Perm(), err)
	}

	// A new run, without a human, runs the same command.
	replay := e.replayFile(
		[]map[string]any{call("run_shell_command", map[string]any{"command": "touch second.txt"})},
		[]map[string]any{text("done")},
	)
	_, results := e.toolResults(replay)
	if len(results) != 1 || results[0]["status"] != "success" {
		t.Fatalf("the saved rule did not allow the command: %v", results)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "second.txt")); err != nil {
		t.Errorf("second.txt: %v", err)
	}
	// Another command still needs a human.
	replay = e.replayFile(
		[]map[string]any{call("run_shell_command", map[string]any{"command": "mkdir third"})},
		[]map[string]any{text("done")},
	)
	if _, results = e.toolResults(replay); results[0]["status"] != "error" {
		t.Errorf("mkdir ran under the touch rule: %v", results)
	}
}

// TestUntrustedWorkspacePolicies: a workspace's .gemini/policies allowing
// the shell is ignored while the workspace is untrusted (the shell stays
// out of the model's tools, and a warning names the directory); trusted,
// it applies.
func TestUntrustedWorkspacePolicies(t *testing.T) {
	e := policyEnv(t)
	e.writeFile(".gemini/policies/x.toml", "[[rule]]\ntoolName = \"run_shell_command\"\ndecision = \"allow\"\npriority = 100\n")
	replay := e.replayFile(
		[]map[string]any{call("run_shell_command", map[string]any{"command": "touch ran.txt"})},
		[]map[string]any{text("done")},
	)
	r, results := e.toolResults(replay)
	// Headless, the defaults deny the shell outright: as in gemini-cli it
	// is not even offered, and the call is one to an unknown tool.
	if msg := errorMessage(results[0]); !strings.HasPrefix(msg, `Tool "run_shell_command" not found.`) {
		t.Errorf("untrusted: tool result %v, want gemini-cli's not-found for a tool the policy leaves out", results[0])
	}
	dir := filepath.Join(e.ws, ".gemini", "policies")
	// stream-json carries warnings as its error lines.
	if out := r.stdout + r.stderr; !strings.Contains(out, dir+" ignored: the workspace is not trusted") || !strings.Contains(out, "--trust-workspace") {
		t.Errorf("untrusted: no warning naming %s:\n%s", dir, out)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "ran.txt")); err == nil {
		t.Fatal("the untrusted workspace's policy let the command run")
	}

	r, results = e.toolResults(replay, "--trust-workspace")
	if results[0]["status"] != "success" {
		t.Errorf("trusted: %v\n%s", results[0], r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "not trusted") {
		t.Errorf("trusted: warned:\n%s", r.stdout+r.stderr)
	}
}

// TestPolicyFlagAndAllowedTools: a --policy file's deny beats the bundled
// defaults (read_file is allowed by them), with its denyMessage (an
// argsPattern keeps read_file offered to the model); a broken
// --policy file is a warning; --allowed-tools run_shell_command(git)
// allows git and denies every other command.
func TestPolicyFlagAndAllowedTools(t *testing.T) {
	e := policyEnv(t)
	e.writeFile("notes.txt", "secret\n")
	deny := e.writeFile(filepath.Join(t.TempDir(), "deny.toml"),
		"[[rule]]\ntoolName = \"read_file\"\nargsPattern = 'notes'\ndecision = \"deny\"\npriority = 10\ndenyMessage = \"Reading is off.\"\n")
	broken := e.writeFile(filepath.Join(t.TempDir(), "broken.toml"), "[[rule]\n")
	replay := e.replayFile(
		[]map[string]any{call("read_file", map[string]any{"file_path": "notes.txt"})},
		[]map[string]any{text("done")},
	)
	_, results := e.toolResults(replay)
	if results[0]["status"] != "success" {
		t.Fatalf("read_file without the policy: %v", results[0])
	}
	r, results := e.toolResults(replay, "--policy", deny+","+broken)
	if msg := errorMessage(results[0]); msg != "Tool execution denied by policy. Reading is off." {
		t.Errorf("--policy deny: %q", msg)
	}
	if !strings.Contains(r.stdout+r.stderr, "broken.toml") {
		t.Errorf("no warning for the broken policy file:\n%s", r.stdout+r.stderr)
	}

	replay = e.replayFile(
		[]map[string]any{call("run_shell_command", map[string]any{"command": "git --version"})},
		[]map[string]any{call("run_shell_command", map[string]any{"command": "touch x.txt"})},
		[]map[string]any{text("done")},
	)
	_, results = e.toolResults(replay, "--allowed-tools", "run_shell_command(git)")
	if results[0]["status"] != "success" {
		t.Errorf("git --version: %v", results[0])
	}
	if msg := errorMessage(results[1]); !strings.HasPrefix(msg, "Tool execution denied by policy.") {
		t.Errorf("touch: %v, want gemini-cli's denial", results[1])
	}
}

// TestAlwaysAndSaveOverA2A: `agentry a2a` answers a served session's
// confirmation with s (proceed_always_and_save); the rule lands in
// the trusted workspace's policies and a new headless run honours it.
func TestAlwaysAndSaveOverA2A(t *testing.T) {
	e := policyEnv(t)
	e.allowPermanentApproval()
	e.set("AGENTRY_A2A_TOKEN=" + a2aToken)
	replay := e.replayFile(
		[]map[string]any{call("run_shell_command", map[string]any{"command": "touch served.txt"})},
		[]map[string]any{text("Touched.")},
	)
	srv := e.serve("--port", "0", "-w", e.ws, "-m", "replay:"+replay)
	r := e.a2a("s\n", srv.url, "touch a file")
	if r.code != 0 || r.stdout != "Touched.\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s\nserver:\n%s", r.code, r.stdout, r.stderr, srv.errText())
	}
	wantStderr(t, r, "Answer [y/a/s/n]: s")
	// The workspace is trusted: the rule is saved with its policies.
	saved := filepath.Join(e.ws, ".agentry", "policies", "auto-saved.toml")
	if data, err := os.ReadFile(saved); err != nil || !strings.Contains(string(data), "touch") {
		t.Fatalf("%s: %q, %v", saved, data, err)
	}
	next := e.replayFile(
		[]map[string]any{call("run_shell_command", map[string]any{"command": "touch later.txt"})},
		[]map[string]any{text("done")},
	)
	if _, results := e.toolResults(next); results[0]["status"] != "success" {
		t.Errorf("the rule saved over A2A did not allow the command: %v", results[0])
	}
}
