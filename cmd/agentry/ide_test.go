package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/commands"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/ide"
	"github.com/agentry-dev/agentry/ide/companion"
	"github.com/agentry-dev/agentry/ide/idewire"
)

// ideWorld is a discovery setup for the status command: a temporary
// directory holding the discovery directory and the workspace, and a
// process tree agentry < bash < ptyhost < code.
type ideWorld struct {
	t        *testing.T
	root     string
	dir, cwd string
	env      map[string]string
	uid      int
}

func newIDEWorld(t *testing.T) *ideWorld {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &ideWorld{t: t, root: root, dir: filepath.Join(root, "gemini", "ide"), cwd: filepath.Join(root, "ws"),
		env: map[string]string{"TERM_PROGRAM": "vscode"}, uid: os.Getuid()}
	for _, d := range []string{w.dir, w.cwd} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w *ideWorld) file(pid, port int, ws string, mode os.FileMode) {
	w.t.Helper()
	data, _ := json.Marshal(idewire.Discovery{Port: port, WorkspacePath: ws, AuthToken: "secret-token"})
	p := filepath.Join(w.dir, idewire.FileName(pid, port))
	if err := os.WriteFile(p, data, 0o600); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		w.t.Fatal(err)
	}
}

func (w *ideWorld) options() ide.DiscoverOptions {
	procs := map[int]ide.Process{
		500: {PID: 500, PPID: 400, Command: "agentry ide status"},
		400: {PID: 400, PPID: 300, Command: "/bin/bash"},
		300: {PID: 300, PPID: 200, Command: "ptyhost"},
		200: {PID: 200, PPID: 1, Command: "/usr/share/code/code"},
	}
	return ide.DiscoverOptions{
		LookupEnv: func(k string) (string, bool) { v, ok := w.env[k]; return v, ok },
		Processes: func(pid int) (ide.Process, error) {
			if p, ok := procs[pid]; ok {
				return p, nil
			}
			return ide.Process{}, fmt.Errorf("no process %d", pid)
		},
		PID:   500,
		Dir:   w.dir,
		UID:   func() int { return w.uid },
		Alive: func(pid int) bool { return pid == 200 || pid == 150 },
		Cwd:   w.cwd,
	}
}

// TestIDEStatusGolden: `agentry ide status`'s text and JSON, and its exit
// code, for a usable companion among refused and mismatched files, a
// mismatch alone, and nothing at all.
func TestIDEStatusGolden(t *testing.T) {
	tests := []struct {
		name  string
		setup func(w *ideWorld)
		exit  int
	}{
		{"usable", func(w *ideWorld) {
			w.file(200, 4101, w.cwd, 0o600)
			w.file(150, 4102, w.cwd, 0o600)
			w.file(120, 4103, filepath.Join(w.root, "elsewhere"), 0o600)
			w.file(110, 4104, w.cwd, 0o606)
			w.env[idewire.EnvServerPort] = "4101"
		}, 0},
		{"mismatch", func(w *ideWorld) {
			w.file(200, 4101, filepath.Join(w.root, "elsewhere"), 0o600)
		}, 1},
		{"none", func(w *ideWorld) {}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newIDEWorld(t)
			tt.setup(w)
			for _, asJSON := range []bool{false, true} {
				var out bytes.Buffer
				in := ideStatusInput{opts: w.options(), userSettings: "/home/u/.agentry/settings.json"}
				if code := ideStatus(&out, in, asJSON); code != tt.exit {
					t.Errorf("exit %d, want %d", code, tt.exit)
				}
				got := strings.ReplaceAll(out.String(), w.root, "$TMP")
				if strings.Contains(got, "secret-token") {
					t.Errorf("the output shows the token:\n%s", got)
				}
				name := "ide-status-" + tt.name + ".txt"
				if asJSON {
					name = "ide-status-" + tt.name + ".json"
				}
				golden(t, name, got)
			}
		})
	}
}

// TestIDEStatusCommand: `agentry ide status` through the command line,
// on the real process tree and a discovery file in $TMPDIR.
func TestIDEStatusCommand(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, ws := filepath.Join(tmp, "home"), filepath.Join(tmp, "ws")
	for _, d := range []string{home, ws, filepath.Join(tmp, "gemini", "ide")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TMPDIR", tmp)
	t.Setenv("HOME", home)
	t.Setenv("TERM_PROGRAM", "vscode")
	for _, k := range []string{idewire.EnvIDEPID, idewire.EnvServerPort, idewire.EnvWorkspacePath, idewire.EnvAuthToken} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		exit := 0
		root := newRoot(stdio{in: strings.NewReader(""), out: &out, err: &errb}, &interrupts{c: make(chan os.Signal, 1)}, &exit)
		root.SetArgs(args)
		if err := root.ExecuteContext(t.Context()); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return exit, out.String() + errb.String()
	}
	if exit, out := run("ide", "status", "-w", ws); exit != 1 || !strings.Contains(out, "No usable IDE companion: Failed to connect") {
		t.Fatalf("without a file: exit %d\n%s", exit, out)
	}
	data, _ := json.Marshal(idewire.Discovery{Port: 4321, WorkspacePath: ws})
	if err := os.WriteFile(filepath.Join(tmp, "gemini", "ide", idewire.FileName(os.Getpid(), 4321)), data, 0o600); err != nil {
		t.Fatal(err)
	}
	exit, out := run("ide", "status", "-w", ws, "--json")
	var got ideStatusJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil || exit != 0 || !got.Usable || got.Endpoint.Port != 4321 || got.Connection != nil {
		t.Fatalf("with a file: exit %d, %v\n%s", exit, err, out)
	}
	// --connect: nobody listens on 4321.
	if exit, out := run("ide", "status", "-w", ws, "--connect"); exit != 1 || !strings.Contains(out, "Connection: failed after") {
		t.Fatalf("--connect to nobody: exit %d\n%s", exit, out)
	}
	if err := os.Remove(filepath.Join(tmp, "gemini", "ide", idewire.FileName(os.Getpid(), 4321))); err != nil {
		t.Fatal(err)
	}

	// --connect to a real companion, then to one whose file has the
	// wrong token.
	srv, err := companion.New(companion.Config{Workspace: []string{ws}, IDEPID: os.Getpid(), Editor: nopEditor{}, Logger: slog.New(slog.DiscardHandler),
		IDEInfo: &idewire.IDEInfo{Name: "vscode", DisplayName: "Test IDE"}, Dir: filepath.Join(tmp, "gemini", "ide")})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if exit, out := run("ide", "status", "-w", ws, "--connect"); exit != 0 || !strings.Contains(out, "Connection: connected to Test IDE in ") || !strings.Contains(out, "offers openDiff and closeDiff") {
		t.Fatalf("--connect to a companion: exit %d\n%s", exit, out)
	}
	exit, out = run("ide", "status", "-w", ws, "--connect", "--json")
	got = ideStatusJSON{}
	if err := json.Unmarshal([]byte(out), &got); err != nil || exit != 0 || got.Connection == nil || !got.Connection.Connected || !got.Connection.CanDiff || got.Connection.IDE != "Test IDE" {
		t.Fatalf("--connect --json: exit %d, %v\n%s", exit, err, out)
	}
	data, err = os.ReadFile(srv.File())
	if err != nil {
		t.Fatal(err)
	}
	var d idewire.Discovery
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	d.AuthToken = "not-the-token"
	data, _ = json.Marshal(d)
	if err := os.WriteFile(srv.File(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if exit, out := run("ide", "status", "-w", ws, "--connect"); exit != 1 || !strings.Contains(out, "Connection: failed after") || strings.Contains(out, "not-the-token") {
		t.Fatalf("--connect with a wrong token: exit %d\n%s", exit, out)
	}
}

// nopEditor is an editor that shows nothing.
type nopEditor struct{}

func (nopEditor) OpenDiff(string, string) error { return nil }
func (nopEditor) CloseDiff(string)              {}

// fakeLink is a session's connection for /ide's tests.
type fakeLink struct {
	st    ideLinkState
	calls []string
	err   error
}

func (f *fakeLink) Enable(context.Context) error {
	f.calls = append(f.calls, "enable")
	f.st = ideLinkState{Status: ideConnected, IDE: "VS Code"}
	return f.err
}

func (f *fakeLink) Disable(context.Context) error {
	f.calls = append(f.calls, "disable")
	f.st = ideLinkState{Status: ideDisconnected, Detail: ideTextDisabled}
	return f.err
}

func (f *fakeLink) State() ideLinkState { return f.st }

// TestIDESlashCommand: /ide status prints gemini-cli's status texts (and
// the discovery when not connected); /ide enable and disable write
// ide.enabled to the user settings, keeping the other keys, and connect
// or disconnect the session's link.
func TestIDESlashCommand(t *testing.T) {
	userHome := t.TempDir()
	ws := t.TempDir()
	settingsPath := filepath.Join(userHome, ".agentry", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settingsPath), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settingsPath, []byte(`{"model": {"name": "gemini-2.5-pro"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	load := func() *config.Settings {
		s, err := config.Load(config.LoadOptions{Workspace: ws, UserHome: userHome, LookupEnv: func(string) (string, bool) { return "", false }})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	w := newIDEWorld(t)
	link := &fakeLink{st: ideLinkState{Status: ideDisconnected, Detail: ideTextInitial}}
	s := &ideSlash{settings: load(), link: link, discover: func() (ide.Endpoint, *ide.Report, error) { return ide.Discover(w.options()) }}
	reg, err := commands.New(commands.Config{Extra: []commands.Command{s.command()}})
	if err != nil {
		t.Fatal(err)
	}
	run := func(line string) (string, error) {
		path, args, ok := reg.Parse(line)
		if !ok {
			t.Fatalf("%q is not a command", line)
		}
		var out []string
		err := reg.Run(t.Context(), nil, path, args, func(s string) { out = append(out, s) })
		return strings.Join(out, "\n"), err
	}

	out, err := run("/ide status")
	if err != nil || !strings.HasPrefix(out, "🔴 Disconnected: IDE integration is currently disabled. To enable it, run /ide enable.\n\nNo usable IDE companion: ") {
		t.Fatalf("status: %v\n%s", err, out)
	}
	if out, err = run("/ide enable"); err != nil || out != "🟢 Connected to VS Code" || load().IDE.Enabled != true || load().Model.Name != "gemini-2.5-pro" {
		t.Fatalf("enable: %v %q, settings %+v", err, out, load().IDE)
	}
	link.st.OpenFiles = []idewire.File{{Path: "/a/main.go", IsActive: true}, {Path: "/a/x/util.go"}, {Path: "/a/y/util.go"}}
	out, _ = run("/ide status")
	want := "🟢 Connected to VS Code\n\nOpen files:\n  - main.go (active)\n  - util.go (/x)\n  - util.go (/y)\n\n" +
		"(Note: The file list is limited to a number of recently accessed files within your workspace and only includes local files on disk)"
	if out != want {
		t.Errorf("connected status:\n%s\nwant\n%s", out, want)
	}
	link.st = ideLinkState{Status: ideConnecting}
	if out, _ = run("/ide status"); !strings.HasPrefix(out, "🟡 Connecting...") {
		t.Errorf("connecting status %q", out)
	}
	if out, err = run("/ide disable"); err != nil || out != "🔴 Disconnected: "+ideTextDisabled || load().IDE.Enabled {
		t.Fatalf("disable: %v %q", err, out)
	}
	if strings.Join(link.calls, ",") != "enable,disable" {
		t.Errorf("link calls %v", link.calls)
	}
	link.err = errors.New("companion gone")
	if _, err = run("/ide enable"); err == nil || !strings.Contains(err.Error(), "companion gone") {
		t.Errorf("a failing link: %v", err)
	}

	// Without a link (the session does not connect), the setting is still
	// written and the status says so.
	s.link = nil
	if out, err = run("/ide disable"); err != nil || out != "🔴 Disconnected: "+ideTextDisabled || load().IDE.Enabled {
		t.Fatalf("disable without a link: %v %q", err, out)
	}
}
