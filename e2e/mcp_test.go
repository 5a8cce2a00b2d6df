package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/internal/proctest"
)

// TestMCPServerFromSettings: a stdio MCP server from the user's settings
// is connected in a trusted workspace, its tools are called (one starts a
// child process), and after the run neither the server nor its child is
// left running.
func TestMCPServerFromSettings(t *testing.T) {
	server := buildMCPServer(t)
	e := newEnv(t)
	settings, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"test": map[string]any{"command": server, "trust": true},
	}})
	e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), string(settings))
	replay := e.replayFile(
		[]map[string]any{{"functionCall": map[string]any{"name": "echo", "args": map[string]any{"text": "hello over MCP"}}}},
		[]map[string]any{{"functionCall": map[string]any{"name": "spawn", "args": map[string]any{}}}},
		[]map[string]any{{"functionCall": map[string]any{"name": "env", "args": map[string]any{}}}},
		[]map[string]any{{"text": "Done."}},
	)
	r := e.run("", "run", "-m", "replay:"+replay, "--trust-workspace", "-o", "stream-json", "-p", "use the server")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	outputs := map[string]string{}
	ids := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("bad line %q", line)
		}
		switch ev["type"] {
		case "tool_use":
			ids[ev["tool_id"].(string)] = ev["tool_name"].(string)
		case "tool_result":
			if ev["status"] != "success" {
				t.Fatalf("tool result %v", ev)
			}
			out, _ := ev["output"].(string)
			outputs[ids[ev["tool_id"].(string)]] = out
		}
	}
	if !strings.Contains(outputs["echo"], "hello over MCP") {
		t.Errorf("echo returned %q", outputs["echo"])
	}
	child, err := strconv.Atoi(strings.TrimSpace(outputs["spawn"]))
	if err != nil {
		t.Fatalf("spawn returned %q", outputs["spawn"])
	}
	m := regexp.MustCompile(`pid=(\d+)`).FindStringSubmatch(outputs["env"])
	if m == nil {
		t.Fatalf("env returned %q", outputs["env"])
	}
	srv, _ := strconv.Atoi(m[1])
	for what, pid := range map[string]int{"the MCP server": srv, "the server's child": child} {
		proctest.Eventually(t, what+" to exit", func() bool { return !proctest.Running(pid) })
	}

	// Untrusted: the server is not started, so the model's call fails.
	r = e.run("", "run", "-m", "replay:"+replay, "-o", "stream-json", "-p", "use the server")
	if !strings.Contains(r.stderr, "MCP servers are not connected in an untrusted workspace") {
		t.Errorf("no warning about the untrusted workspace; stderr:\n%s", r.stderr)
	}
}

// buildMCPServer builds mcptools' stdio test server and returns its path.
func buildMCPServer(t *testing.T) string {
	t.Helper()
	server := filepath.Join(t.TempDir(), "mcpserver")
	build := exec.Command("go", "build", "-o", server, "./mcptools/testdata/server")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the MCP test server: %v\n%s", err, out)
	}
	return server
}
