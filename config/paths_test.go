package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentry-dev/agentry/config"
)

func TestApprovalRank(t *testing.T) {
	t.Parallel()
	for mode, want := range map[string]int{
		config.ApprovalPlan: 0, config.ApprovalDefault: 1, config.ApprovalAutoEdit: 2, config.ApprovalYolo: 3,
		"": -1, "YOLO": -1, "autoEdit": -1,
	} {
		if got := config.ApprovalRank(mode); got != want {
			t.Errorf("ApprovalRank(%q) = %d, want %d", mode, got, want)
		}
	}
}

func TestPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		workspace, want string
	}{
		{"/src/My Project.v2", "/h/.agentry/tmp/my-project-v2"},
		{"/src/agentry", "/h/.agentry/tmp/agentry"},
		{"/src/Ünïcode", "/h/.agentry/tmp/-n-code"},
		{"/", "/h/.agentry/tmp/-"},
	}
	for _, tt := range tests {
		s := &config.Settings{Home: "/h/.agentry", Workspace: tt.workspace}
		if got := s.TempDir(); got != tt.want {
			t.Errorf("TempDir() for %s = %s, want %s", tt.workspace, got, tt.want)
		}
		if got := s.UserSettingsPath(); got != "/h/.agentry/settings.json" {
			t.Errorf("UserSettingsPath() = %s", got)
		}
	}
}

// TestLoadCreatesNothing checks that Load leaves the file system alone:
// no agentry home, no temporary directory.
func TestLoadCreatesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s, err := config.Load(f.options(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{f.home, s.TempDir(), filepath.Join(f.ws, ".agentry")} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s exists after Load (err %v)", dir, err)
		}
	}
}
