package ide

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentry-dev/agentry/ide/idewire"
)

// BenchmarkDiscover times discovery at start-up on the real process table
// (/proc on Linux): with no companion (the budget is 2 ms) and with one
// whose file names the working directory (the discovery part of the
// 20 ms budget for discovery and connection).
func BenchmarkDiscover(b *testing.B) {
	env := func(k string) (string, bool) {
		if k == "TERM_PROGRAM" {
			return "vscode", true
		}
		return "", false
	}
	b.Run("none", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "gemini", "ide")
		opts := DiscoverOptions{LookupEnv: env, Dir: dir, Cwd: b.TempDir()}
		for b.Loop() {
			if _, _, err := Discover(opts); err == nil {
				b.Fatal("found a companion")
			}
		}
	})
	b.Run("one", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "gemini", "ide")
		ws := b.TempDir()
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		data, _ := json.Marshal(idewire.Discovery{Port: 4242, WorkspacePath: ws, AuthToken: "t"})
		if err := os.WriteFile(filepath.Join(dir, idewire.FileName(os.Getppid(), 4242)), data, 0o600); err != nil {
			b.Fatal(err)
		}
		opts := DiscoverOptions{LookupEnv: env, Dir: dir, Cwd: ws}
		for b.Loop() {
			if ep, _, err := Discover(opts); err != nil || ep.Port != 4242 {
				b.Fatal(ep, err)
			}
		}
	})
}
