package ide

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/ide/idewire"
)

// fakeProcs is a process table for the walk's rules.
type fakeProcs map[int]Process

func (f fakeProcs) lookup(pid int) (Process, error) {
	p, ok := f[pid]
	if !ok {
		return Process{}, fmt.Errorf("no process %d", pid)
	}
	return p, nil
}

func chain(entries ...Process) fakeProcs {
	f := fakeProcs{}
	for _, p := range entries {
		f[p.PID] = p
	}
	return f
}

func TestWalkToIDE(t *testing.T) {
	long := fakeProcs{}
	for pid := 100; pid < 200; pid++ {
		long[pid] = Process{PID: pid, PPID: pid + 1, Command: "node x"}
	}
	tests := []struct {
		name  string
		procs fakeProcs
		want  int
		steps int
	}{
		{"shell's grandparent, skipping the pty host", chain(
			Process{PID: 50, PPID: 40, Command: "agentry"},
			Process{PID: 40, PPID: 30, Command: "/bin/bash --login"},
			Process{PID: 30, PPID: 20, Command: "pty-host"},
			Process{PID: 20, PPID: 1, Command: "/usr/share/code/code"},
		), 20, 3},
		{"shell whose grandparent is init: its parent", chain(
			Process{PID: 50, PPID: 40, Command: "agentry"},
			Process{PID: 40, PPID: 30, Command: "zsh"},
			Process{PID: 30, PPID: 1, Command: "sshd"},
		), 30, 3},
		{"the first shell wins", chain(
			Process{PID: 50, PPID: 45, Command: "agentry"},
			Process{PID: 45, PPID: 40, Command: "sh -c agentry"},
			Process{PID: 40, PPID: 30, Command: "make"},
			Process{PID: 30, PPID: 20, Command: "bash"},
			Process{PID: 20, PPID: 1, Command: "code"},
		), 30, 3},
		{"a login shell's dash", chain(
			Process{PID: 50, PPID: 40, Command: "agentry"},
			Process{PID: 40, PPID: 30, Command: "-zsh"},
			Process{PID: 30, PPID: 20, Command: "login"},
			Process{PID: 20, PPID: 1, Command: "Terminal"},
		), 20, 3},
		{"a shell by another name is none", chain(
			Process{PID: 50, PPID: 40, Command: "agentry"},
			Process{PID: 40, PPID: 30, Command: "bashful"},
			Process{PID: 30, PPID: 1, Command: "ide"},
		), 30, 3},
		{"no shell: the last process reached", chain(
			Process{PID: 50, PPID: 40, Command: "agentry"},
			Process{PID: 40, PPID: 1, Command: "systemd --user"},
		), 40, 2},
		{"an unreadable parent stops the walk", chain(
			Process{PID: 50, PPID: 40, Command: "agentry"},
		), 40, 1},
		{"at most 32 steps", long, 132, 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := 50
			if tt.name == "at most 32 steps" {
				start = 100
			}
			got, walk := walkToIDE(tt.procs.lookup, start)
			if got != tt.want || len(walk) != tt.steps {
				t.Errorf("walkToIDE = %d after %d processes %v, want %d after %d", got, len(walk), walk, tt.want, tt.steps)
			}
		})
	}
}

// world is a discovery setup: a directory of files, an environment, a
// process table and live pids.
type world struct {
	t     *testing.T
	dir   string
	cwd   string
	env   map[string]string
	procs fakeProcs
	live  map[int]bool
	uid   int
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{t: t, dir: filepath.Join(root, "gemini", "ide"), cwd: filepath.Join(root, "ws", "sub"),
		env: map[string]string{"TERM_PROGRAM": "vscode"}, live: map[int]bool{}, uid: os.Getuid(),
		procs: chain(
			Process{PID: 500, PPID: 400, Command: "agentry"},
			Process{PID: 400, PPID: 300, Command: "bash"},
			Process{PID: 300, PPID: 200, Command: "ptyhost"},
			Process{PID: 200, PPID: 1, Command: "/usr/share/code/code --type=main"},
		)}
	for _, d := range []string{w.dir, w.cwd} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w *world) ws() string { return filepath.Dir(w.cwd) }

// file writes a discovery file for pid and port with mode 0600.
func (w *world) file(pid, port int, content any) string {
	w.t.Helper()
	name := idewire.FileName(pid, port)
	return w.write(name, content, 0o600)
}

func (w *world) write(name string, content any, mode os.FileMode) string {
	w.t.Helper()
	var data []byte
	switch c := content.(type) {
	case string:
		data = []byte(c)
	default:
		var err error
		if data, err = json.Marshal(c); err != nil {
			w.t.Fatal(err)
		}
	}
	p := filepath.Join(w.dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		w.t.Fatal(err)
	}
	return p
}

func (w *world) discover() (Endpoint, *Report, error) {
	return Discover(DiscoverOptions{
		LookupEnv: func(k string) (string, bool) { v, ok := w.env[k]; return v, ok },
		Processes: w.procs.lookup,
		PID:       500,
		Dir:       w.dir,
		UID:       func() int { return w.uid },
		Alive:     func(pid int) bool { return w.live[pid] },
		Cwd:       w.cwd,
	})
}

func disc(port int, ws string) idewire.Discovery {
	return idewire.Discovery{Port: port, WorkspacePath: ws, AuthToken: fmt.Sprintf("tok-%d", port)}
}

func verdicts(r *Report) map[string]string {
	out := map[string]string{}
	for _, f := range r.Files {
		out[filepath.Base(f.Path)] = f.Verdict
	}
	return out
}

func TestDiscoverChoosesTheIDEsFile(t *testing.T) {
	w := newWorld(t)
	w.live[900] = true
	w.file(900, 1111, disc(1111, w.ws())) // alive, larger pid, but not the IDE's
	want := w.file(200, 2222, disc(2222, w.ws()))
	ep, rep, err := w.discover()
	if err != nil {
		t.Fatalf("Discover: %v\n%+v", err, rep)
	}
	if ep.Port != 2222 || ep.Token != "tok-2222" || ep.File != want || rep.IDEPID != 200 || rep.Source != "file" {
		t.Fatalf("endpoint %+v, report %+v", ep, rep)
	}
	if !slices.Equal(ep.Workspace, []string{realPath(w.ws())}) {
		t.Errorf("workspace %v", ep.Workspace)
	}
	if ep.IDE == nil || ep.IDE.DisplayName != "VS Code" {
		t.Errorf("IDE %+v", ep.IDE)
	}
	if v := verdicts(rep); v[filepath.Base(want)] != VerdictChosen || v[idewire.FileName(900, 1111)] != VerdictCandidate {
		t.Errorf("verdicts %v", v)
	}
}

func TestDiscoverRanking(t *testing.T) {
	// No file is the IDE's: live pids before dead ones, then larger pids.
	w := newWorld(t)
	w.live[150], w.live[120] = true, true
	w.file(999, 1, disc(1001, w.ws())) // dead
	w.file(120, 2, disc(1002, w.ws()))
	w.file(150, 3, disc(1003, w.ws()))
	ep, rep, err := w.discover()
	if err != nil {
		t.Fatal(err)
	}
	if ep.Port != 1003 {
		t.Errorf("port %d, want the larger live pid's 1003", ep.Port)
	}
	var order []int
	for _, f := range rep.Files {
		order = append(order, f.PID)
	}
	if !slices.Equal(order, []int{150, 120, 999}) {
		t.Errorf("ranked %v, want [150 120 999]", order)
	}
}

func TestDiscoverReadsAtMostMaxFiles(t *testing.T) {
	w := newWorld(t)
	for pid := 1000; pid < 1000+MaxDiscoveryFiles+3; pid++ {
		w.file(pid, 1, disc(pid, t.TempDir())) // all elsewhere
	}
	w.file(999, 2, disc(2, w.ws())) // the only match, ranked last
	_, rep, err := w.discover()
	if !errors.Is(err, ErrWorkspaceMismatch) || len(rep.Files) != MaxDiscoveryFiles || rep.Unread != 4 {
		t.Fatalf("err %v, %d files read, %d unread", err, len(rep.Files), rep.Unread)
	}
}

func TestDiscoverTieBreakByEnvPort(t *testing.T) {
	w := newWorld(t)
	w.live[150], w.live[120] = true, true
	w.file(150, 1, disc(1003, w.ws()))
	w.file(120, 2, disc(1002, w.ws()))
	w.env[idewire.EnvServerPort] = "1002"
	ep, _, err := w.discover()
	if err != nil || ep.Port != 1002 {
		t.Fatalf("port %d, err %v; want the env port's file", ep.Port, err)
	}
	// A port no file has: the first ranked.
	w.env[idewire.EnvServerPort] = "4444"
	if ep, _, err = w.discover(); err != nil || ep.Port != 1003 {
		t.Fatalf("port %d, err %v; want the first ranked", ep.Port, err)
	}
}

func TestDiscoverLegacyFileFirst(t *testing.T) {
	w := newWorld(t)
	w.file(200, 2222, disc(2222, w.ws()))
	legacy := w.write("gemini-ide-server-200.json", disc(3333, w.ws()), 0o600)
	ep, rep, err := w.discover()
	if err != nil || ep.Port != 3333 || rep.Chosen != legacy {
		t.Fatalf("port %d chosen %s err %v; want the legacy file", ep.Port, rep.Chosen, err)
	}
}

func TestDiscoverRefusesUnsafeFiles(t *testing.T) {
	big := disc(7, "")
	big.AuthToken = strings.Repeat("x", MaxDiscoveryBytes)
	tests := []struct {
		name   string
		setup  func(w *world) string
		reason string
	}{
		{"another user's", func(w *world) string {
			p := w.file(200, 7, disc(7, w.ws()))
			w.uid++ // the file's owner is now someone else
			return p
		}, "owned by uid"},
		{"group-writable", func(w *world) string { return w.write(idewire.FileName(200, 7), disc(7, w.ws()), 0o620) }, "writable by group or others"},
		{"world-writable", func(w *world) string { return w.write(idewire.FileName(200, 7), disc(7, w.ws()), 0o602) }, "writable by group or others"},
		{"a symbolic link", func(w *world) string {
			target := filepath.Join(w.t.TempDir(), "real.json")
			data, _ := json.Marshal(disc(7, w.ws()))
			if err := os.WriteFile(target, data, 0o600); err != nil {
				w.t.Fatal(err)
			}
			p := filepath.Join(w.dir, idewire.FileName(200, 7))
			if err := os.Symlink(target, p); err != nil {
				w.t.Fatal(err)
			}
			return p
		}, "symbolic link"},
		{"oversized", func(w *world) string { return w.file(200, 7, big) }, "larger than"},
		{"a directory", func(w *world) string {
			p := filepath.Join(w.dir, idewire.FileName(200, 7))
			if err := os.Mkdir(p, 0o700); err != nil {
				w.t.Fatal(err)
			}
			return p
		}, "not a regular file"},
		{"in a world-writable directory", func(w *world) string {
			p := w.file(200, 7, disc(7, w.ws()))
			if err := os.Chmod(w.dir, 0o777); err != nil {
				w.t.Fatal(err)
			}
			return p
		}, "its directory has mode 0777: anybody may replace its files"},
		{"in another user's directory", func(w *world) string {
			p := w.file(200, 7, disc(7, w.ws()))
			w.uid = 4242
			if os.Getuid() == 0 { // root owns what it makes: give the directory away
				if err := os.Chown(w.dir, 4243, 4243); err != nil {
					w.t.Fatal(err)
				}
			}
			return p
		}, "its directory is owned by uid"},
		{"in a symbolic link to a directory", func(w *world) string {
			real := filepath.Join(w.t.TempDir(), "ide")
			if err := os.Rename(w.dir, real); err != nil {
				w.t.Fatal(err)
			}
			if err := os.Symlink(real, w.dir); err != nil {
				w.t.Fatal(err)
			}
			return w.file(200, 7, disc(7, w.ws()))
		}, "its directory is a symbolic link"},
		{"not JSON", func(w *world) string { return w.file(200, 7, "port=7") }, "not a JSON object"},
		{"a JSON array", func(w *world) string { return w.file(200, 7, "[1]") }, "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			p := tt.setup(w)
			_, rep, err := w.discover()
			if !errors.Is(err, ErrNoCompanion) {
				t.Fatalf("err %v, want ErrNoCompanion", err)
			}
			if len(rep.Files) != 1 || rep.Files[0].Path != p || rep.Files[0].Verdict != VerdictRefused || !strings.Contains(rep.Files[0].Reason, tt.reason) {
				t.Fatalf("files %+v, want %s refused for %q", rep.Files, p, tt.reason)
			}
			if rep.Problem != textNotFound {
				t.Errorf("problem %q", rep.Problem)
			}
		})
	}
}

// TestDiscoverStickyDirectory: a world-writable discovery directory with
// the sticky bit (as /tmp) is trusted, as a group-writable one is.
func TestDiscoverStickyDirectory(t *testing.T) {
	for _, mode := range []os.FileMode{0o777 | os.ModeSticky, 0o775} {
		w := newWorld(t)
		w.file(200, 7, disc(7, w.ws()))
		if err := os.Chmod(w.dir, mode); err != nil {
			t.Fatal(err)
		}
		if ep, rep, err := w.discover(); err != nil || ep.Port != 7 {
			t.Errorf("directory mode %v: port %d, err %v, files %+v", mode, ep.Port, err, rep.Files)
		}
	}
}

func TestDiscoverWorkspace(t *testing.T) {
	t.Run("mismatch", func(t *testing.T) {
		w := newWorld(t)
		other := t.TempDir()
		w.file(200, 7, disc(7, other))
		_, rep, err := w.discover()
		if !errors.Is(err, ErrWorkspaceMismatch) {
			t.Fatalf("err %v", err)
		}
		want := "Directory mismatch. agentry is running in a different location than the open workspace in the IDE. Please run agentry from one of the following directories: " + realPath(other)
		if err.Error() != want || rep.Problem != want || rep.Files[0].Verdict != VerdictChosen {
			t.Errorf("err %q\nwant %q\nfiles %+v", err, want, rep.Files)
		}
	})
	t.Run("no folder open", func(t *testing.T) {
		w := newWorld(t)
		w.file(200, 7, disc(7, ""))
		_, _, err := w.discover()
		if !errors.Is(err, ErrNoWorkspace) || err.Error() != textNoFolder {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("one of several roots, through a symlink", func(t *testing.T) {
		w := newWorld(t)
		link := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(w.ws(), link); err != nil {
			t.Fatal(err)
		}
		list := t.TempDir() + string(filepath.ListSeparator) + link
		w.file(200, 7, disc(7, list))
		ep, _, err := w.discover()
		if err != nil || len(ep.Workspace) != 2 || ep.Workspace[1] != realPath(w.ws()) {
			t.Fatalf("endpoint %+v err %v", ep, err)
		}
	})
	t.Run("an empty entry holds nothing", func(t *testing.T) {
		w := newWorld(t)
		w.file(200, 7, disc(7, t.TempDir()+string(filepath.ListSeparator)))
		if _, _, err := w.discover(); !errors.Is(err, ErrWorkspaceMismatch) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("a sibling with a common prefix is outside", func(t *testing.T) {
		w := newWorld(t)
		w.file(200, 7, disc(7, w.cwd+"x"))
		if _, _, err := w.discover(); !errors.Is(err, ErrWorkspaceMismatch) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("a valid file beats a mismatched one", func(t *testing.T) {
		w := newWorld(t)
		w.file(200, 7, disc(7, t.TempDir())) // the IDE's, but elsewhere
		w.file(150, 8, disc(8, w.ws()))
		ep, rep, err := w.discover()
		if err != nil || ep.Port != 8 {
			t.Fatalf("port %d err %v", ep.Port, err)
		}
		if v := verdicts(rep); v[idewire.FileName(200, 7)] != VerdictMismatch {
			t.Errorf("verdicts %v", v)
		}
	})
}

func TestDiscoverEnvironment(t *testing.T) {
	t.Run("nothing at all", func(t *testing.T) {
		w := newWorld(t)
		_, rep, err := w.discover()
		if !errors.Is(err, ErrNoCompanion) || rep.Problem != textNotFound || len(rep.Files) != 0 {
			t.Fatalf("err %v report %+v", err, rep)
		}
	})
	t.Run("port, workspace and token without a file", func(t *testing.T) {
		w := newWorld(t)
		w.env[idewire.EnvServerPort] = "4242"
		w.env[idewire.EnvWorkspacePath] = w.ws()
		w.env[idewire.EnvAuthToken] = "secret"
		ep, rep, err := w.discover()
		if err != nil || ep.Port != 4242 || ep.Token != "secret" || ep.File != "" || rep.Source != "environment" {
			t.Fatalf("endpoint %+v report %+v err %v", ep, rep, err)
		}
		if rep.Env[idewire.EnvAuthToken] != "(set)" {
			t.Errorf("the report shows the token: %v", rep.Env)
		}
	})
	t.Run("the file's missing token and workspace from the environment", func(t *testing.T) {
		w := newWorld(t)
		w.file(200, 7, `{"port": 7}`)
		w.env[idewire.EnvWorkspacePath] = w.ws()
		w.env[idewire.EnvAuthToken] = "secret"
		ep, _, err := w.discover()
		if err != nil || ep.Port != 7 || ep.Token != "secret" {
			t.Fatalf("endpoint %+v err %v", ep, err)
		}
	})
	t.Run("no port anywhere", func(t *testing.T) {
		w := newWorld(t)
		w.file(200, 7, map[string]any{"workspacePath": w.ws(), "ideInfo": map[string]string{"name": "nvim", "displayName": "Neovim"}})
		_, _, err := w.discover()
		if !errors.Is(err, ErrNoCompanion) || err.Error() != "Failed to connect to IDE companion extension in Neovim. Please ensure the extension is running." {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("no IDE detected", func(t *testing.T) {
		w := newWorld(t)
		delete(w.env, "TERM_PROGRAM")
		w.file(200, 7, disc(7, w.ws()))
		if _, _, err := w.discover(); !errors.Is(err, ErrUnsupported) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("the file names the IDE", func(t *testing.T) {
		w := newWorld(t)
		delete(w.env, "TERM_PROGRAM")
		d := disc(7, w.ws())
		d.IDEInfo = &idewire.IDEInfo{Name: "nvim", DisplayName: "Neovim"}
		w.file(200, 7, d)
		ep, _, err := w.discover()
		if err != nil || ep.IDE.DisplayName != "Neovim" {
			t.Fatalf("endpoint %+v err %v", ep, err)
		}
	})
	t.Run("GEMINI_CLI_IDE_PID overrides the walk", func(t *testing.T) {
		w := newWorld(t)
		w.env[idewire.EnvIDEPID] = "77"
		w.live[900] = true
		w.file(900, 1, disc(1, w.ws()))
		w.file(77, 2, disc(2, w.ws()))
		ep, rep, err := w.discover()
		if err != nil || ep.Port != 2 || rep.IDEPID != 77 || rep.PIDSource != idewire.EnvIDEPID || len(rep.Walk) != 0 {
			t.Fatalf("endpoint %+v report %+v err %v", ep, rep, err)
		}
	})
}

func TestDetectIDE(t *testing.T) {
	tests := []struct {
		env     map[string]string
		command string
		want    string
	}{
		{map[string]string{}, "", ""},
		{map[string]string{"TERM_PROGRAM": "vscode"}, "/usr/share/code/code", "vscode"},
		{map[string]string{"TERM_PROGRAM": "vscode"}, "/usr/bin/code-insiders", "vscode"},
		{map[string]string{"TERM_PROGRAM": "vscode"}, "/opt/editor/editor", "vscodefork"},
		{map[string]string{"TERM_PROGRAM": "vscode", "CURSOR_TRACE_ID": "x"}, "cursor", "cursor"},
		{map[string]string{"TERMINAL_EMULATOR": "JetBrains-JediTerm"}, "/opt/goland/bin/goland", "goland"},
		{map[string]string{"TERMINAL_EMULATOR": "JetBrains-JediTerm"}, "java", "jetbrains"},
		{map[string]string{"ZED_SESSION_ID": "1"}, "", "zed"},
		{map[string]string{"CURSOR_TRACE_ID": "x"}, "", ""}, // markers alone are not an IDE
	}
	for _, tt := range tests {
		got := detectIDE(func(k string) string { return tt.env[k] }, tt.command)
		name := ""
		if got != nil {
			name = got.Name
		}
		if name != tt.want {
			t.Errorf("detectIDE(%v, %q) = %q, want %q", tt.env, tt.command, name, tt.want)
		}
	}
}

func TestDiscoverNewestFileOfTheSameIDE(t *testing.T) {
	// A killed companion's file stays; the companion restarted for the
	// same IDE writes a newer one, whichever port sorts first by name.
	w := newWorld(t)
	w.live[200] = true
	stale := w.file(200, 2000, disc(2000, w.ws()))
	fresh := w.file(200, 3000, disc(3000, w.ws()))
	now := time.Now()
	for p, at := range map[string]time.Time{stale: now.Add(-time.Minute), fresh: now} {
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	ep, rep, err := w.discover()
	if err != nil || ep.Port != 3000 {
		t.Fatalf("port %d, err %v; want the newer file's 3000", ep.Port, err)
	}
	if rep.Chosen != fresh {
		t.Errorf("chosen %s, want %s", rep.Chosen, fresh)
	}
	// The other way round.
	if err := os.Chtimes(stale, now.Add(time.Minute), now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if ep, _, err = w.discover(); err != nil || ep.Port != 2000 {
		t.Fatalf("port %d, err %v; want the newer file's 2000", ep.Port, err)
	}
}
