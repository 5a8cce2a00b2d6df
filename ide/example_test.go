package ide_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentry-dev/agentry/ide"
	"github.com/agentry-dev/agentry/ide/idewire"
)

// ExampleDiscover finds the companion whose discovery file names the
// working directory, then fails on a directory outside its workspace.
func ExampleDiscover() {
	tmp, _ := os.MkdirTemp("", "ide-example")
	defer os.RemoveAll(tmp)
	tmp, _ = filepath.EvalSymlinks(tmp)
	dir, ws := filepath.Join(tmp, "gemini", "ide"), filepath.Join(tmp, "project")
	_ = os.MkdirAll(dir, 0o700)
	_ = os.MkdirAll(filepath.Join(ws, "src"), 0o700)
	data, _ := json.Marshal(idewire.Discovery{Port: 41234, WorkspacePath: ws, AuthToken: "token",
		IDEInfo: &idewire.IDEInfo{Name: "nvim", DisplayName: "Neovim"}})
	_ = os.WriteFile(filepath.Join(dir, idewire.FileName(os.Getppid(), 41234)), data, 0o600)

	opts := ide.DiscoverOptions{Dir: dir, Cwd: filepath.Join(ws, "src"), LookupEnv: func(string) (string, bool) { return "", false }}
	ep, rep, err := ide.Discover(opts)
	fmt.Println(ep.Port, ep.IDE.DisplayName, err, rep.Files[0].Verdict)

	opts.Cwd = tmp
	_, _, err = ide.Discover(opts)
	fmt.Println(errors.Is(err, ide.ErrWorkspaceMismatch))
	// Output:
	// 41234 Neovim <nil> chosen
	// true
}
