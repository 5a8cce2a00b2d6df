package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestHooksOnlyInTrustedWorkspaces: a BeforeTool hook from the user's
// settings runs when the workspace is trusted and never otherwise.
func TestHooksOnlyInTrustedWorkspaces(t *testing.T) {
	e := newEnv(t)
	e.writeFile("a.txt", "hello\n")
	marker := filepath.Join(t.TempDir(), "hook-ran")
	settings := map[string]any{"hooks": map[string]any{"BeforeTool": []any{map[string]any{
		"matcher": "read_file",
		"hooks":   []any{map[string]any{"type": "command", "command": "cat > " + marker}},
	}}}}
	data, _ := json.Marshal(settings)
	e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), string(data))
	replay := e.replayFile(
		[]map[string]any{{"functionCall": map[string]any{"name": "read_file", "args": map[string]any{"file_path": "a.txt"}}}},
		[]map[string]any{{"text": "It says hello."}},
	)

	r := e.run("", "run", "-m", "replay:"+replay, "-p", "read a.txt")
	if r.code != 0 {
		t.Fatalf("untrusted run: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a hook ran in an untrusted workspace")
	}

	r = e.run("", "run", "-m", "replay:"+replay, "--trust-workspace", "-p", "read a.txt")
	if r.code != 0 {
		t.Fatalf("trusted run: exit %d\n%s", r.code, r.stderr)
	}
	in, err := os.ReadFile(marker)
	if err != nil {
		t.Fatalf("the hook did not run in a trusted workspace: %v\n%s", err, r.stderr)
	}
	var got map[string]any
	if err := json.Unmarshal(in, &got); err != nil || got["hook_event_name"] != "BeforeTool" || got["tool_name"] != "read_file" {
		t.Errorf("hook input %s (%v)", in, err)
	}
}
