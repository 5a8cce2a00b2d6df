package e2e

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readerAgent is a user-level local agent that may only read files.
const readerAgent = `---
name: reader
description: Reads files and reports what they say.
tools: [read_file]
max_turns: 5
---
You read the files you are asked about and report their content.
`

// TestSubagentFromDefinition: a user-level agent definition gives the
// model an invoke_agent tool; a replayed parent delegates to the child,
// which reads a file and calls complete_task; the parent gets the result,
// the run's stats count the child's model calls, and the child's session
// is kept in the same store under an id made of the parent's and the
// call's.
func TestSubagentFromDefinition(t *testing.T) {
	e := newEnv(t)
	e.writeFile("notes.txt", "the answer is 42\n")
	e.writeFile(filepath.Join(e.home, ".agentry", "agents", "reader.md"), readerAgent)
	replay := e.replayFile(
		[]map[string]any{call("invoke_agent", map[string]any{"agent_name": "reader", "prompt": "What does notes.txt say?"})},
		[]map[string]any{call("read_file", map[string]any{"file_path": "notes.txt"})},
		[]map[string]any{call("complete_task", map[string]any{"result": "notes.txt says the answer is 42"})},
		[]map[string]any{text("The reader found that the answer is 42.")},
	)
	r := e.run("", "run", "-m", "replay:"+replay, "-o", "stream-json", "-p", "ask the reader about notes.txt")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var result, sessionID, callID string
	var stats map[string]any
	for _, ev := range lines(t, r.stdout) {
		switch ev["type"] {
		case "init":
			sessionID, _ = ev["session_id"].(string)
		case "tool_use":
			callID, _ = ev["tool_id"].(string)
		case "tool_result":
			if out, _ := ev["output"].(string); ev["status"] == "success" && strings.HasPrefix(out, "Subagent 'reader' finished.") {
				result = out
			}
		case "result":
			stats, _ = ev["stats"].(map[string]any)
		}
	}
	want := "Subagent 'reader' finished.\nTermination Reason: GOAL\nResult:\nnotes.txt says the answer is 42"
	if result != want {
		t.Errorf("the parent's tool result is %q, want %q\nstdout:\n%s", result, want, r.stdout)
	}
	// Four model calls of 110 tokens: two of the parent's, two of the
	// child's.
	if stats["total_tokens"] != 440.0 {
		t.Errorf("total_tokens = %v, want 440 (the child's calls counted)", stats["total_tokens"])
	}
	childID := sessionID + ".reader." + callID
	show := e.run("", "sessions", "show", childID)
	if show.code != 0 || !strings.Contains(show.stdout, "notes.txt says the answer is 42") {
		t.Errorf("the child's session is not in the store: exit %d\n%s%s", show.code, show.stdout, show.stderr)
	}
	// The child belongs to its parent's conversation: not listed on its
	// own, its transcript in a directory named after the parent.
	list := e.run("", "sessions", "list")
	if list.code != 0 || !strings.Contains(list.stdout, sessionID) || strings.Contains(list.stdout, childID) {
		t.Errorf("sessions list:\n%s%s", list.stdout, list.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(e.home, ".agentry", "tmp", "*", "chats", sessionID, childID+".jsonl"))
	if len(files) != 1 {
		t.Fatalf("no child transcript under chats/%s/", sessionID)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if first := lines(t, string(data))[0]; first["kind"] != "subagent" || first["sessionId"] != childID {
		t.Errorf("child transcript metadata %v", first)
	}
	// Deleting the conversation deletes the child's session and files.
	if del := e.run("", "sessions", "delete", sessionID); del.code != 0 {
		t.Fatalf("delete: exit %d\n%s", del.code, del.stderr)
	}
	if show := e.run("", "sessions", "show", childID); show.code != 42 {
		t.Errorf("the child's session outlived its parent's delete: exit %d", show.code)
	}
	if _, err := os.Stat(filepath.Dir(files[0])); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("chats/%s/ outlived the delete: %v", sessionID, err)
	}
}

// TestAgentsList: `agentry agents list` shows the user's and, in a trusted
// workspace, the workspace's agents; a broken file is reported with its
// line and field and exits 52; an untrusted workspace's agents are a
// warning, not loaded.
func TestAgentsList(t *testing.T) {
	e := newEnv(t)
	e.writeFile(filepath.Join(e.home, ".agentry", "agents", "reader.md"), readerAgent)
	e.writeFile(filepath.Join(e.ws, ".agentry", "agents", "fixer.md"), "---\nname: fixer\ndescription: Fixes.\nmodel: gpt-4\n---\nFix.\n")
	e.writeFile(filepath.Join(e.ws, ".gemini", "agents", "remote.md"), "---\nname: remote\nagent_card_url: http://127.0.0.1:9/card\n---\n")

	r := e.run("", "agents", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "reader  local  user") || strings.Contains(r.stdout, "remote") ||
		!strings.Contains(r.stderr, "[WARNING] workspace not trusted") {
		t.Errorf("untrusted: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	r = e.run("", "agents", "list", "--trust-workspace", "--json")
	if r.code != 52 {
		t.Errorf("exit %d, want 52 for the bad model\n%s%s", r.code, r.stdout, r.stderr)
	}
	var got struct {
		Agents []struct{ Name, Kind, Scope string }
		Errors []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(got.Agents) != 2 || got.Agents[0].Name != "remote" || got.Agents[0].Kind != "remote" || got.Agents[0].Scope != "project" ||
		got.Agents[1].Name != "reader" {
		t.Errorf("agents %+v", got.Agents)
	}
	if len(got.Errors) != 1 || !strings.Contains(got.Errors[0], filepath.Join(".agentry", "agents", "fixer.md")+": model: unknown model \"gpt-4\"") {
		t.Errorf("errors %q", got.Errors)
	}
}
