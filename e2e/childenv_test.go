package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// childSecrets are variables in agentry's environment that the processes
// it starts must not see by default, and the one that stays.
func childSecrets() []string {
	return []string{
		"AGENTRY_A2A_TOKEN=a2a-secret",
		"GEMINI_API_KEY=gemini-secret",
		"OPENAI_API_KEY=openai-secret",
		"GITHUB_TOKEN=ghp_" + strings.Repeat("a", 36),
		"PLAIN_FOR_TEST=kept",
	}
}

// shellEnv runs a model that runs `env` and returns the variables the
// command saw.
func shellEnv(t *testing.T, e *env, args ...string) ([]string, result) {
	t.Helper()
	out := filepath.Join(e.ws, "env.txt")
	os.Remove(out)
	replay := e.replayFile(
		[]map[string]any{call("run_shell_command", map[string]any{"command": "env > env.txt"})},
		[]map[string]any{text("Done.")},
	)
	r := e.run("", append([]string{"run", "-m", "replay:" + replay, "--approval-mode", "yolo", "-p", "env"}, args...)...)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n"), r
}

// sees reports which of vars the child saw.
func sees(seen, vars []string) []string {
	var out []string
	for _, v := range vars {
		if slices.Contains(seen, v) {
			out = append(out, strings.SplitN(v, "=", 2)[0])
		}
	}
	return out
}

// TestShellEnvironmentRedaction: by default a shell command sees none of
// the secrets in agentry's environment; security.environmentVariableRedaction
// in the user's settings (agentry's or gemini-cli's) lets named ones through,
// never agentry's own token; a workspace cannot relax it.
func TestShellEnvironmentRedaction(t *testing.T) {
	e := newEnv(t)
	e.set(childSecrets()...)
	all := childSecrets()
	want := func(label string, seen []string, names ...string) {
		t.Helper()
		if got := sees(seen, all); !slices.Equal(got, names) {
			t.Errorf("%s: the command saw %v, want %v", label, got, names)
		}
	}
	redaction := func(r map[string]any) string {
		b, _ := json.Marshal(map[string]any{"security": map[string]any{"environmentVariableRedaction": r}})
		return string(b)
	}

	seen, _ := shellEnv(t, e)
	want("default", seen, "PLAIN_FOR_TEST")

	agentrySettings := e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"),
		redaction(map[string]any{"allowed": []string{"GITHUB_TOKEN", "AGENTRY_A2A_TOKEN"}}))
	seen, _ = shellEnv(t, e)
	want("allowed in ~/.agentry/settings.json", seen, "GITHUB_TOKEN", "PLAIN_FOR_TEST")

	e.writeFile(agentrySettings, redaction(map[string]any{"enabled": false, "blocked": []string{"PLAIN_FOR_TEST"}}))
	seen, _ = shellEnv(t, e)
	want("disabled, one blocked", seen, "GEMINI_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN")

	os.Remove(agentrySettings)
	e.writeFile(filepath.Join(e.home, ".gemini", "settings.json"), redaction(map[string]any{"allowed": []string{"OPENAI_API_KEY"}}))
	seen, _ = shellEnv(t, e)
	want("allowed in ~/.gemini/settings.json", seen, "OPENAI_API_KEY", "PLAIN_FOR_TEST")

	// A trusted workspace's gemini-cli settings cannot relax it (and
	// agentry's own workspace settings cannot hold security at all).
	e.writeFile(".gemini/settings.json", redaction(map[string]any{"enabled": false, "allowed": []string{"GEMINI_API_KEY"}}))
	seen, r := shellEnv(t, e, "--trust-workspace")
	want("relaxed by the workspace", seen, "OPENAI_API_KEY", "PLAIN_FOR_TEST")
	if !strings.Contains(r.stderr, "security.environmentVariableRedaction") {
		t.Errorf("no warning that the workspace's security.environmentVariableRedaction is ignored; stderr:\n%s", r.stderr)
	}
}

// TestHookAndMCPServerEnvironmentRedaction: hooks and stdio MCP servers
// started from settings see none of the secrets either; a server's
// configured env still passes what it names.
func TestHookAndMCPServerEnvironmentRedaction(t *testing.T) {
	server := buildMCPServer(t)
	e := newEnv(t)
	e.set(childSecrets()...)
	settings, _ := json.Marshal(map[string]any{
		"mcpServers": map[string]any{"test": map[string]any{
			"command": server, "trust": true, "env": map[string]any{"SERVER_TOKEN": "$GITHUB_TOKEN"},
		}},
		"hooks": map[string]any{"BeforeTool": []any{map[string]any{"hooks": []any{
			map[string]any{"type": "command", "command": `env > "$GEMINI_PROJECT_DIR/hook-env.txt"`},
		}}}},
	})
	e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), string(settings))
	replay := e.replayFile(
		[]map[string]any{call("environ", map[string]any{})},
		[]map[string]any{text("Done.")},
	)
	r := e.run("", "run", "-m", "replay:"+replay, "--trust-workspace", "-o", "stream-json", "-p", "env")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	var serverEnv []string
	for _, ev := range ofType(lines(t, r.stdout), "tool_result") {
		out, _ := ev["output"].(string)
		serverEnv = strings.Split(out, "\n")
	}
	if got := sees(serverEnv, childSecrets()); !slices.Equal(got, []string{"PLAIN_FOR_TEST"}) {
		t.Errorf("the MCP server saw %v, want only PLAIN_FOR_TEST", got)
	}
	if !slices.Contains(serverEnv, "SERVER_TOKEN=ghp_"+strings.Repeat("a", 36)) {
		t.Errorf("the server's configured env was not passed:\n%s", strings.Join(serverEnv, "\n"))
	}
	b, err := os.ReadFile(filepath.Join(e.ws, "hook-env.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got := sees(strings.Split(string(b), "\n"), childSecrets()); !slices.Equal(got, []string{"PLAIN_FOR_TEST"}) {
		t.Errorf("the hook saw %v, want only PLAIN_FOR_TEST", got)
	}
}
