package masking

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/genai"
)

func TestSanitizeLikeGeminiCLI(t *testing.T) {
	// gemini-cli's fileUtils.test.ts cases, and JavaScript's per-code-unit
	// replacement of characters outside the BMP.
	for in, want := range map[string]string{
		"../../dangerous/tool": "______dangerous_tool",
		"../../etc/passwd":     "______etc_passwd",
		"shell_123":            "shell_123",
		"Run-Shell_Command":    "Run-Shell_Command",
		"a b\x00c":             "a_b_c",
		"é你😀":                  "____",
		"bad\xffbyte":          "bad_byte",
	} {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSpillNames(t *testing.T) {
	if got := SpillFileName("shell", "../../etc/passwd"); got != "shell_______etc_passwd.txt" {
		t.Errorf("got %q", got)
	}
	if got := SpillFileName("Run_Shell_Command", "CALL-1"); got != "run_shell_command_call-1.txt" {
		t.Errorf("names are not lower-cased: %q", got)
	}
	if got := SpillFileName("", ""); got != "unknown_tool_unknown_call.txt" {
		t.Errorf("empty names: %q", got)
	}
	if got := SessionDir("/tmp/p", "../../etc/passwd"); got != "/tmp/p/tool-outputs/session-______etc_passwd" {
		t.Errorf("session dir %q", got)
	}
	if got := SessionDir("/tmp/p", "Mock-Session"); got != "/tmp/p/tool-outputs/session-Mock-Session" {
		t.Errorf("session ids keep their case: %q", got)
	}
	if got := SessionDir("/tmp/p", ""); got != "/tmp/p/tool-outputs" {
		t.Errorf("no session: %q", got)
	}
	if got := maskedFileName("read_file", "c1"); got != "read_file_c1_masked.txt" {
		t.Errorf("masked name %q", got)
	}

	// Long names are capped, and stay distinct through their hash.
	a := SpillFileName(strings.Repeat("t", 300), strings.Repeat("a", 300)+"1")
	b := SpillFileName(strings.Repeat("t", 300), strings.Repeat("a", 300)+"2")
	if a == b || len(a) > maxToolPart+maxIDPart+len("__masked.txt") {
		t.Errorf("long names: %q (%d) and %q", a, len(a), b)
	}
}

// TestSpillNamesStayInDir feeds adversarial tool names and call ids to both
// kinds of spill file, writes them, and checks that every file lands
// directly in the spill directory.
func TestSpillNamesStayInDir(t *testing.T) {
	adversarial := []string{
		"../../etc/passwd", "..", ".", "/", "/etc/passwd", "a/b", `a\b`, "a\x00b", "\x00", "",
		"..%2f..%2f", "~", "$HOME", "é/ü", "😀/../😀", "CON", "name.txt", strings.Repeat("../", 200),
		strings.Repeat("😀", 200), "\u2028\u2029", "a\nb", " ", "-rf",
	}
	root := t.TempDir()
	for i, sid := range []string{"session", "../../escape", "a/b", "", strings.Repeat("x", 500)} {
		dir := SessionDir(filepath.Join(root, "tmp"+string(rune('0'+i))), sid)
		if rel, err := filepath.Rel(filepath.Join(root, "tmp"+string(rune('0'+i)), ToolOutputsDir), dir); err != nil || strings.HasPrefix(rel, "..") || strings.ContainsRune(rel, filepath.Separator) {
			t.Errorf("SessionDir(%q) = %s leaves tool-outputs", sid, dir)
		}
		for _, tool := range adversarial {
			for _, id := range adversarial {
				for _, name := range []string{SpillFileName(tool, id), maskedFileName(tool, id)} {
					p, err := joinName(dir, name)
					if err != nil {
						t.Fatalf("tool %q id %q: %v", tool, id, err)
					}
					if filepath.Dir(p) != dir || filepath.Base(p) != name || strings.HasPrefix(name, ".") || len(name) > 255 {
						t.Fatalf("tool %q id %q: path %s leaves %s", tool, id, p, dir)
					}
				}
			}
		}
	}

	// Write them through both paths and look at what exists.
	dir := SessionDir(root, "s")
	m, err := New(Config{SpillDir: dir, ProtectTokens: -1, MinPrunableTokens: -1, DisableProtectLatestTurn: true, Exempt: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	var history []*genai.Content
	for i, name := range adversarial {
		id := adversarial[len(adversarial)-1-i] + string(rune('A'+i)) // unique ids
		history = append(history, userContent(frPart(id, name, map[string]any{"output": strings.Repeat("x", 3000)})))
		p, err := SpillPath(dir, name, id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := TruncateOutput(strings.Repeat("y", 50), 10, p); err != nil {
			t.Fatal(err)
		}
	}
	masked, err := m.Mask(t.Context(), history)
	if err != nil {
		t.Fatal(err)
	}
	if len(masked) != len(adversarial) {
		t.Fatalf("masked %d of %d", len(masked), len(adversarial))
	}
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && filepath.Dir(p) != dir {
			t.Errorf("file %s outside %s", p, dir)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2*len(adversarial) {
		t.Errorf("%d files, want %d (one masked and one truncated per call)", len(entries), 2*len(adversarial))
	}
}
