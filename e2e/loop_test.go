package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLoopDetectedStreamJSON: a replayed model that calls the same tool
// over and over gets one recovery turn, then is stopped; stream-json shows
// gemini-cli's warning, the run still succeeds (exit 0), and, in text mode
// on a continued session, the next prompt is answered.
func TestLoopDetectedStreamJSON(t *testing.T) {
	e := newEnv(t)
	e.writeFile("a.txt", "hello\n")
	call := []map[string]any{{"functionCall": map[string]any{"name": "read_file", "args": map[string]any{"file_path": "a.txt"}}}}
	var turns [][]map[string]any
	for range 6 {
		turns = append(turns, call)
	}
	replay := e.replayFile(turns...)

	r := e.run("", "run", "-m", "replay:"+replay, "--session-id", "loopy", "-o", "stream-json", "-p", "read a.txt")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	var warnings, toolResults int
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("bad stream-json line %q: %v", line, err)
		}
		switch ev["type"] {
		case "error":
			if ev["severity"] != "warning" || ev["message"] != "Loop detected, stopping execution" {
				t.Errorf("error line %v, want gemini-cli's loop warning", ev)
			}
			warnings++
		case "tool_result":
			toolResults++
		case "result":
			if ev["status"] != "success" {
				t.Errorf("result line %v, want success", ev)
			}
		}
	}
	if warnings != 1 || toolResults != 4 {
		t.Errorf("%d loop warnings and %d tool results, want 1 and 4:\n%s", warnings, toolResults, r.stdout)
	}

	// A replay backend starts from its first line in every process.
	answer := e.replayFile([]map[string]any{{"text": "The file says hello."}})
	r = e.run("", "run", "-m", "replay:"+answer, "--session-id", "loopy", "-p", "what does it say?")
	if r.code != 0 || !strings.Contains(r.stdout, "The file says hello.") {
		t.Fatalf("the continued session: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
