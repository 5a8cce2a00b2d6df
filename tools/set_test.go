package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSetTools(t *testing.T) {
	s, _ := newTestSet(t, Config{})
	want := []struct {
		name, display string
		kind          Kind
	}{
		{"read_file", "ReadFile", KindRead},
		{"write_file", "WriteFile", KindEdit},
		{"replace", "Edit", KindEdit},
		{"list_directory", "ReadFolder", KindSearch},
		{"glob", "FindFiles", KindSearch},
		{"grep_search", "SearchText", KindSearch},
		{"read_many_files", "ReadManyFiles", KindRead},
		{"run_shell_command", "Shell", KindExecute},
	}
	tools := s.Tools()
	if len(tools) != len(want) {
		t.Fatalf("got %d tools, want %d", len(tools), len(want))
	}
	for i, w := range want {
		tool := tools[i]
		if tool.Name() != w.name || tool.DisplayName() != w.display || tool.Kind() != w.kind {
			t.Errorf("tool %d = %s/%s/%s, want %s/%s/%s", i, tool.Name(), tool.DisplayName(), tool.Kind(), w.name, w.display, w.kind)
		}
		if got, ok := s.Lookup(w.name); !ok || got != tool {
			t.Errorf("Lookup(%q) = %v, %v", w.name, got, ok)
		}
		checkDeclaration(t, tool)
		// Describe must not fail, even on nonsense.
		_ = tool.Describe(nil)
		_ = tool.Describe(map[string]any{"file_path": 3, "command": []any{}, "include": "x"})
	}
	if got, ok := s.Lookup("search_file_content"); !ok || got.Name() != "grep_search" {
		t.Errorf("alias lookup = %v, %v", got, ok)
	}
	if _, ok := s.Lookup("web_fetch"); ok {
		t.Error("Lookup found a tool that is not built in")
	}
}

// checkDeclaration checks a declaration is well formed: named after the
// tool, an object schema that survives JSON, its required parameters
// declared.
func checkDeclaration(t *testing.T, tool Tool) {
	t.Helper()
	d := tool.Declaration()
	if d.Name != tool.Name() || d.Description == "" {
		t.Errorf("%s: declaration %q with description %q", tool.Name(), d.Name, d.Description)
	}
	b, err := json.Marshal(d.ParametersJsonSchema)
	if err != nil {
		t.Fatalf("%s: %v", tool.Name(), err)
	}
	var schema struct {
		Type       string                    `json:"type"`
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || len(schema.Required) == 0 {
		t.Errorf("%s: schema %s", tool.Name(), b)
	}
	for _, r := range schema.Required {
		if _, ok := schema.Properties[r]; !ok {
			t.Errorf("%s: required %q is not a property", tool.Name(), r)
		}
	}
	for name, p := range schema.Properties {
		if p["type"] == nil || p["description"] == nil {
			t.Errorf("%s.%s lacks a type or description", tool.Name(), name)
		}
	}
}

func TestSetExclude(t *testing.T) {
	s, _ := newTestSet(t, Config{Exclude: []string{"run_shell_command", "search_file_content"}})
	var names []string
	for _, tool := range s.Tools() {
		names = append(names, tool.Name())
	}
	if got := strings.Join(names, ","); got != "read_file,write_file,replace,list_directory,glob,read_many_files" {
		t.Errorf("tools = %s", got)
	}
	if _, ok := s.Lookup("run_shell_command"); ok {
		t.Error("excluded tool found by Lookup")
	}

	ws, err := NewWorkspace(realDir(t))
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewSet(Config{Workspace: ws, Exclude: []string{"glob", "web_fetch", "bogus"}})
	if err == nil || !strings.Contains(err.Error(), "bogus, web_fetch") {
		t.Errorf("unknown exclusions: err = %v", err)
	}
	if _, err := NewSet(Config{}); err == nil {
		t.Error("NewSet without a workspace succeeded")
	}
}

func TestCancelledContext(t *testing.T) {
	s, root := newTestSet(t, Config{})
	writeFiles(t, root, map[string]string{"a.txt": "a"})
	argsFor := map[string]map[string]any{
		"read_file":         {"file_path": "a.txt"},
		"write_file":        {"file_path": "b.txt", "content": "b"},
		"replace":           {"file_path": "a.txt", "instruction": "i", "old_string": "a", "new_string": "b"},
		"list_directory":    {"dir_path": "."},
		"glob":              {"pattern": "*"},
		"grep_search":       {"pattern": "a"},
		"read_many_files":   {"include": []any{"*"}},
		"run_shell_command": {"command": "touch c.txt"},
	}
	cause := errors.New("stopped by the user")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	for _, tool := range s.Tools() {
		_, err := tool.Execute(ctx, Call{Args: argsFor[tool.Name()]})
		if !errors.Is(err, cause) || TypeOf(err) != ErrCancelled {
			t.Errorf("%s: err = %v (type %s), want one wrapping the cause, of type %s", tool.Name(), err, TypeOf(err), ErrCancelled)
		}
	}
	for _, f := range []string{"b.txt", "c.txt"} {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			t.Errorf("%s was created by a cancelled call", f)
		}
	}
	if got := readBack(t, filepath.Join(root, "a.txt")); got != "a" {
		t.Errorf("a.txt changed by a cancelled call: %q", got)
	}
}
