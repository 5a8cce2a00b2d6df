package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestSubagentFromDefinition: a user-level agent definition gives the
// model an invoke_agent tool; a replayed parent delegates to the child,
// which reads a file and calls complete_task; the parent gets the result.
func TestSubagentFromDefinition(t *testing.T) {
	e := newEnv(t)
	e.writeFile("notes.txt", "the answer is 42\n")
	e.writeFile(filepath.Join(e.home, ".agentry", "agents", "reader.md"), `---
name: reader
description: Reads files and reports what they say.
tools: [read_file]
max_turns: 5
---
You read the files you are asked about and report their content.
`)
	replay := e.replayFile(
		[]map[string]any{{"functionCall": map[string]any{"name": "invoke_agent", "args": map[string]any{"agent_name": "reader", "prompt": "What does notes.txt say?"}}}},
		[]map[string]any{{"functionCall": map[string]any{"name": "read_file", "args": map[string]any{"file_path": "notes.txt"}}}},
		[]map[string]any{{"functionCall": map[string]any{"name": "complete_task", "args": map[string]any{"result": "notes.txt says the answer is 42"}}}},
		[]map[string]any{{"text": "The reader found that the answer is 42."}},
	)
	r := e.run("", "run", "-m", "replay:"+replay, "-o", "stream-json", "-p", "ask the reader about notes.txt")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var result string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("bad line %q", line)
		}
		if ev["type"] == "tool_result" && ev["status"] == "success" {
			if out, _ := ev["output"].(string); strings.HasPrefix(out, "Subagent 'reader' finished.") {
				result = out
			}
		}
	}
	want := "Subagent 'reader' finished.\nTermination Reason: GOAL\nResult:\nnotes.txt says the answer is 42"
	if result != want {
		t.Errorf("the parent's tool result is %q, want %q\nstdout:\n%s", result, want, r.stdout)
	}
}
