package guard

import "testing"

// TestToolSuggestionMatchesGeminiCLI: the suggestions for the tool lists
// gemini-cli 0.61.0 declared (in this order) in tools.stream-json (yolo)
// and in a run without --yolo, which had no shell tool.
func TestToolSuggestionMatchesGeminiCLI(t *testing.T) {
	yolo := []string{"update_topic", "list_directory", "read_file", "grep_search", "glob", "replace", "write_file", "web_fetch",
		"run_shell_command", "list_background_processes", "read_background_output", "google_web_search", "write_todos",
		"enter_plan_mode", "invoke_agent", "activate_skill"}
	plain := []string{"update_topic", "list_directory", "read_file", "grep_search", "glob", "google_web_search", "enter_plan_mode", "invoke_agent"}
	for _, tc := range []struct {
		name  string
		tools []string
		want  string
	}{
		{"no_such_tool", yolo, ` Did you mean one of: "write_todos", "update_topic", "list_directory"?`},
		{"run_shell_command", plain, ` Did you mean one of: "update_topic", "grep_search", "invoke_agent"?`},
		{"x", []string{"glob"}, ` Did you mean "glob"?`},
		{"x", nil, ""},
	} {
		if got := toolSuggestion(tc.name, tc.tools); got != tc.want {
			t.Errorf("toolSuggestion(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}
