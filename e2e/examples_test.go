package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// example returns the path of a file under examples/.
func example(name string) string { return filepath.Join(repoRoot, "examples", name) }

// copyExample copies an example file to dst, keeping its mode.
func copyExample(t *testing.T, name, dst string) {
	t.Helper()
	data, err := os.ReadFile(example(name))
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(example(name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, info.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}

// TestExampleSettingsAndHook: examples/settings.json, as a user's
// settings, with examples/hooks/guard-shell.sh where it points: the allow
// rules let `git status` run without --yolo, and in a trusted workspace
// the hook refuses `rm -rf` (even under --yolo) with its reason, while
// the allowed commands run. (Any other command is denied, even under
// --yolo: gemini-cli's tools.allowed run_shell_command(x) rules deny the
// shell commands they do not name.)
func TestExampleSettingsAndHook(t *testing.T) {
	e := newEnv(t)
	copyExample(t, "settings.json", filepath.Join(e.home, ".agentry", "settings.json"))
	copyExample(t, "hooks/guard-shell.sh", filepath.Join(e.home, ".agentry", "hooks", "guard-shell.sh"))
	e.writeFile("build/out.txt", "built\n")

	allowed := e.replayFile(
		[]map[string]any{call("run_shell_command", map[string]any{"command": "git status"})},
		[]map[string]any{text("That is the status.")},
	)
	r := e.run("", "run", "-m", "replay:"+allowed, "-o", "stream-json", "-p", "status?")
	if res := ofType(lines(t, r.stdout), "tool_result"); r.code != 0 || len(res) != 1 || res[0]["status"] != "success" {
		t.Errorf("git status under the example's allow rules: exit %d, %v\n%s", r.code, res, r.stderr)
	}

	guarded := e.replayFile(
		[]map[string]any{call("run_shell_command", map[string]any{"command": "rm -rf build"})},
		[]map[string]any{call("run_shell_command", map[string]any{"command": "git status"})},
		[]map[string]any{text("I could not delete it.")},
	)
	r = e.run("", "run", "-m", "replay:"+guarded, "--yolo", "--trust-workspace", "-o", "stream-json", "-p", "clean up")
	res := ofType(lines(t, r.stdout), "tool_result")
	if r.code != 0 || len(res) != 2 {
		t.Fatalf("exit %d, %d tool results\n%s\n%s", r.code, len(res), r.stdout, r.stderr)
	}
	errObj, _ := res[0]["error"].(map[string]any)
	if msg, _ := errObj["message"].(string); res[0]["status"] != "error" || !strings.Contains(msg, "guard-shell: recursive deletes are not allowed here") {
		t.Errorf("rm -rf: %v", res[0])
	}
	if res[1]["status"] != "success" {
		t.Errorf("git status: %v", res[1])
	}
	if _, err := os.Stat(filepath.Join(e.ws, "build", "out.txt")); err != nil {
		t.Errorf("the hook did not stop rm -rf: %v", err)
	}
}

// TestExampleAgent: examples/agents/reader.md, as a user's agent, loads
// without a problem and takes a task: it reads a file and completes.
func TestExampleAgent(t *testing.T) {
	e := newEnv(t)
	copyExample(t, "agents/reader.md", filepath.Join(e.home, ".agentry", "agents", "reader.md"))
	e.writeFile("notes.txt", "the answer is 42\n")
	list := e.run("", "agents", "list", "--json")
	if list.code != 0 || !strings.Contains(list.stdout, `"reader"`) {
		t.Fatalf("agents list: exit %d\n%s%s", list.code, list.stdout, list.stderr)
	}
	replay := e.replayFile(
		[]map[string]any{call("invoke_agent", map[string]any{"agent_name": "reader", "prompt": "What does notes.txt say?"})},
		[]map[string]any{call("read_file", map[string]any{"file_path": "notes.txt"})},
		[]map[string]any{call("complete_task", map[string]any{"result": "notes.txt: the answer is 42"})},
		[]map[string]any{text("The reader says the answer is 42.")},
	)
	r := e.run("", "run", "-m", "replay:"+replay, "-o", "json", "-p", "ask the reader")
	var out struct {
		Response string `json:"response"`
		Stats    struct {
			Tools struct {
				ByName map[string]struct {
					Success int `json:"success"`
				} `json:"byName"`
			} `json:"tools"`
		} `json:"stats"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 0 {
		t.Fatalf("exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if out.Response != "The reader says the answer is 42." || out.Stats.Tools.ByName["invoke_agent"].Success != 1 {
		t.Errorf("response %q, tools %+v", out.Response, out.Stats.Tools.ByName)
	}
}

// readmeBlock returns the shell code block of README.md that follows the
// line containing marker.
func readmeBlock(t *testing.T, marker string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(data), marker)
	if !ok {
		t.Fatalf("README.md has no %q", marker)
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if !ok {
		t.Fatalf("no sh block after %q", marker)
	}
	block, _, _ = strings.Cut(block, "```")
	return block
}

// TestReadmeBatchExample runs the README's batch example as it is
// written, with `agentry` on PATH, from a directory holding examples/ as
// a clone does: every prompt succeeds offline, each replaying its model's
// recording from the start.
func TestReadmeBatchExample(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	for _, name := range []string{"batch.jsonl", "batch-replay.jsonl", "quickstart.jsonl"} {
		copyExample(t, name, filepath.Join(dir, "examples", name))
	}
	script := readmeBlock(t, "<!-- batch example -->")
	c := exec.Command("sh", "-ec", script)
	c.Dir = dir
	c.Env = []string{"HOME=" + e.home, "PATH=" + filepath.Dir(binary) + string(os.PathListSeparator) + os.Getenv("PATH")}
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's batch example failed: %v\n%s\n---\n%s", err, script, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	got := results(t, string(data))
	for _, id := range []string{"files", "plan", "hello"} {
		if got[id]["status"] != "success" {
			t.Errorf("%s: %v", id, got[id])
		}
	}
	if len(got) != 3 {
		t.Errorf("%d results:\n%s", len(got), data)
	}
}

// TestExampleA2AClient: examples/a2a-client.mjs, run by Node against
// `agentry serve`, prints the agent's answer and the context to continue.
func TestExampleA2AClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is not on PATH")
		}
		t.Skip("node is not on PATH: the example client needs Node 18 or newer")
	}
	const token = "e2e-example-token-0123456789"
	e := newEnv(t)
	e.set("AGENTRY_A2A_TOKEN=" + token)
	srv := e.serve("--port", "0", "-w", e.ws, "-m", "replay:"+example("batch-replay.jsonl"))
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, node, example("a2a-client.mjs"), srv.url, "What is in this workspace?")
	c.Env = append([]string{"HOME=" + e.home, "AGENTRY_A2A_TOKEN=" + token}, e.vars...)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("the example client: %v\nstdout:\n%s\nstderr:\n%s\nserver:\n%s", err, stdout.String(), stderr.String(), srv.errText())
	}
	if !strings.Contains(stdout.String(), "I listed the workspace: the listing above is what it holds.") {
		t.Errorf("the answer is not on stdout:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "TASK_STATE_COMPLETED; context ") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}
