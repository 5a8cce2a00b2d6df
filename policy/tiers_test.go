package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExtensionRules(t *testing.T) {
	rules, errs := Parse([]byte(`
[[rule]]
toolName = "glob"
decision = "allow"
priority = 1
[[rule]]
toolName = "web_fetch"
decision = "deny"
priority = 1
[[rule]]
toolName = "replace"
decision = "ask_user"
priority = 1
modes = ["yolo"]
[[rule]]
toolName = "write_file"
decision = "ask_user"
priority = 1
modes = ["default"]
`), TierExtension, "/ext/policies/p.toml")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	got := ExtensionRules("lint", rules)
	if len(got) != 2 || got[0].ToolName != "web_fetch" || got[1].ToolName != "write_file" || got[0].Source != "Extension (lint): p.toml" {
		t.Errorf("%+v", got)
	}
}

func TestCheckSystemDir(t *testing.T) {
	if err := CheckSystemDir(filepath.Join(t.TempDir(), "missing")); err != nil {
		t.Errorf("missing: %v", err)
	}
	dir := t.TempDir()
	err := CheckSystemDir(dir)
	if os.Geteuid() != 0 {
		if err == nil || !strings.Contains(err.Error(), "is not owned by root (uid 0)") {
			t.Errorf("a user's directory: %v", err)
		}
		return
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CheckSystemDir(dir); err != nil {
		t.Errorf("root's 0755 directory: %v", err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	err = CheckSystemDir(dir)
	if err == nil || !strings.Contains(err.Error(), "is writable by group or others (mode: 40777)") {
		t.Errorf("0777: %v", err)
	}
	if w := SystemDirWarning(dir, err); !strings.HasPrefix(w, "Security Warning: Skipping system policies from "+dir+": Directory") {
		t.Errorf("warning %q", w)
	}
}
