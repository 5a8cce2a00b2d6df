//go:build linux

package ide

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/agentry-dev/agentry/ide/idewire"
	"github.com/agentry-dev/agentry/internal/proctest"
)

// The process tree of TestDiscoverProcessTree, each a run of the test
// binary: the test starts "ide", which starts "ptyhost", which starts
// "shell" under the name bash, which starts "agentry"; "agentry" runs
// Discover on the real /proc and writes what it found.
func TestMain(m *testing.M) {
	if mode, dir, ok := proctest.Helper(); ok {
		os.Exit(helper(mode, dir))
	}
	os.Exit(m.Run())
}

// next is the child each helper starts.
var next = map[string]string{"ide": "ptyhost", "ptyhost": "shell", "shell": "agentry"}

func helper(mode, dir string) int {
	if mode == "agentry" {
		// Discover once the test has written the files: it writes a byte
		// to the pipe every helper passes down as fd 3.
		if _, err := os.NewFile(3, "go").Read(make([]byte, 1)); err != nil {
			return 1
		}
		ep, rep, err := Discover(DiscoverOptions{
			Dir: filepath.Join(dir, "gemini", "ide"),
			LookupEnv: func(k string) (string, bool) {
				return map[string]string{"TERM_PROGRAM": "vscode"}[k], k == "TERM_PROGRAM"
			},
			Cwd: dir,
		})
		out := map[string]any{"endpoint": ep, "report": rep}
		if err != nil {
			out["error"] = err.Error()
		}
		data, _ := json.Marshal(out)
		if err := os.WriteFile(filepath.Join(dir, "result.tmp"), data, 0o600); err != nil {
			return 1
		}
		if err := os.Rename(filepath.Join(dir, "result.tmp"), filepath.Join(dir, "result.json")); err != nil {
			return 1
		}
		return 0
	}
	child := next[mode]
	if child == "" {
		return 2
	}
	_ = os.WriteFile(filepath.Join(dir, mode+".pid"), []byte(strconv.Itoa(os.Getpid())), 0o600)
	exe, err := os.Executable() // not os.Args[0], which is bash in the shell
	if err != nil {
		return 1
	}
	cmd := exec.Command(exe, "-test.run=^$")
	if child == "shell" {
		// The shell runs under a name ending in /bash, as ps shows it.
		cmd.Path = filepath.Join(dir, "bin", "bash")
		cmd.Args[0] = cmd.Path
	}
	cmd.Env = append(os.Environ(), proctest.HelperEnv+"="+child)
	cmd.ExtraFiles = []*os.File{os.NewFile(3, "go")}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return 1
	}
	// Stay until the test kills the tree, so that every pid stays alive
	// while the test reads the result.
	select {}
}

// TestDiscoverProcessTree: through a real process tree, the walk finds the
// process above the terminal's pty host, and its file wins over one of a
// live process with a larger pid.
func TestDiscoverProcessTree(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o700); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(dir, "bin", "bash")); err != nil {
		t.Fatal(err)
	}
	ideDir := filepath.Join(dir, "gemini", "ide")
	if err := os.MkdirAll(ideDir, 0o700); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ideCmd := exec.Command(exe, "-test.run=^$")
	ideCmd.Env = append(os.Environ(), proctest.HelperEnv+"=ide", proctest.HelperDirEnv+"="+dir)
	ideCmd.ExtraFiles = []*os.File{r}
	ideCmd.Stdout, ideCmd.Stderr = os.Stderr, os.Stderr
	// Its own process group, killed whole at the end.
	ideCmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := ideCmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	idePID := ideCmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(-idePID, syscall.SIGKILL)
		_ = ideCmd.Wait()
	})
	ptyPID := proctest.WaitPID(t, filepath.Join(dir, "ptyhost.pid"))
	for pid, port := range map[int]int{idePID: 1111, ptyPID: 2222} {
		data, _ := json.Marshal(idewire.Discovery{Port: port, WorkspacePath: dir, AuthToken: "t"})
		if err := os.WriteFile(filepath.Join(ideDir, idewire.FileName(pid, port)), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Endpoint Endpoint
		Report   Report
		Error    string
	}
	proctest.Eventually(t, "the walk's result", func() bool {
		data, err := os.ReadFile(filepath.Join(dir, "result.json"))
		return err == nil && json.Unmarshal(data, &got) == nil
	})
	if got.Error != "" || got.Endpoint.Port != 1111 || got.Report.IDEPID != idePID {
		t.Fatalf("discovered %+v (IDE pid %d, want %d; pty host %d), error %q\nwalk %+v",
			got.Endpoint, got.Report.IDEPID, idePID, ptyPID, got.Error, got.Report.Walk)
	}
	if n := len(got.Report.Walk); n != 3 || filepath.Base(got.Report.Walk[1].Command[:len(filepath.Join(dir, "bin", "bash"))]) != "bash" {
		t.Errorf("walk %+v, want agentry, the shell and the pty host", got.Report.Walk)
	}
}
