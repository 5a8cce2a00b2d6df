package tools

import (
	"path/filepath"
	"testing"
)

// TestModifiedByUserMessages: a write_file or replace call whose content
// the user changed before approving it says so to the model, in gemini-cli
// 0.61.0's words and places; without the mark the result is unchanged.
func TestModifiedByUserMessages(t *testing.T) {
	s, root := newTestSet(t, Config{})
	f := filepath.Join(root, "f.txt")
	writeFiles(t, root, map[string]string{"f.txt": "one\ntwo\n"})

	res := mustRun(t, s, "write_file", map[string]any{"file_path": "f.txt", "content": "one\nTWO\n", ModifiedByUser: true})
	want := "Successfully overwrote file: " + f + ". User modified the `content` to be: one\nTWO\n Here is the updated code:\none\nTWO\n"
	if res.LLMContent != want {
		t.Errorf("write_file LLMContent =\n%q\nwant\n%q", res.LLMContent, want)
	}

	res = mustRun(t, s, "replace", map[string]any{"file_path": "f.txt", "instruction": "i", "old_string": "one\nTWO\n", "new_string": "1\n2\n", "allow_multiple": false, ModifiedByUser: true})
	want = "Successfully modified file: " + f + " (1 replacements). Here is the updated code:\n1\n2\n The confirmation step modified the `new_string` content to be: 1\n2\n."
	if res.LLMContent != want {
		t.Errorf("replace LLMContent =\n%q\nwant\n%q", res.LLMContent, want)
	}

	res = mustRun(t, s, "replace", map[string]any{"file_path": "new.txt", "instruction": "i", "old_string": "", "new_string": "hi", ModifiedByUser: true})
	want = "Created new file: " + filepath.Join(root, "new.txt") + " with provided content. Here is the updated code:\nhi The confirmation step modified the `new_string` content to be: hi."
	if res.LLMContent != want {
		t.Errorf("replace (new file) LLMContent =\n%q\nwant\n%q", res.LLMContent, want)
	}

	res = mustRun(t, s, "write_file", map[string]any{"file_path": "f.txt", "content": "x\n", ModifiedByUser: false})
	if want := "Successfully overwrote file: " + f + ". Here is the updated code:\nx\n"; res.LLMContent != want {
		t.Errorf("unmarked write_file LLMContent = %q, want %q", res.LLMContent, want)
	}
}
