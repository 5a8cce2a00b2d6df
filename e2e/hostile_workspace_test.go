package e2e

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// hostileFiles are the files agentry reads on its own in a workspace.
var hostileFiles = []string{
	".agentry/settings.json", ".gemini/settings.json", ".env", ".agentry/.env",
	"GEMINI.md", "AGENTS.md", ".agentry/agents/x.md",
	".gitignore", ".geminiignore", ".git/info/exclude",
}

// hostileWorkspace makes dir a workspace whose every file of names is a
// FIFO (kind "fifo") or a symlink to /dev/zero (kind "devzero").
func hostileWorkspace(t *testing.T, dir, kind string, names []string) {
	t.Helper()
	for _, name := range names {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if kind == "fifo" {
			err = syscall.Mkfifo(p, 0o644)
		} else {
			err = os.Symlink("/dev/zero", p)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestRunHostileWorkspace: in a workspace whose settings, .env, context,
// agent and ignore files are FIFOs or links to /dev/zero, agentry run
// neither hangs nor reads without end. Untrusted, those files are ignored
// and the run succeeds; trusted, the settings file is refused with an
// error naming it (exit 52), and with regular settings the other files
// are skipped and the run succeeds. (The 60 s guard of env.run only fails
// a hung run.)
func TestRunHostileWorkspace(t *testing.T) {
	for _, kind := range []string{"fifo", "devzero"} {
		t.Run(kind, func(t *testing.T) {
			e := newEnv(t)
			hostileWorkspace(t, e.ws, kind, hostileFiles)
			replay := e.replayFile([]map[string]any{text("done")})
			r := e.run("", "run", "-m", "replay:"+replay, "-p", "hi")
			if r.code != 0 || !strings.Contains(r.stdout, "done") {
				t.Fatalf("untrusted: exit %d, stdout %q; stderr:\n%s", r.code, r.stdout, r.stderr)
			}
			r = e.run("", "run", "--trust-workspace", "-m", "replay:"+replay, "-p", "hi")
			want := map[string]string{"fifo": "not a regular file", "devzero": "outside the workspace"}[kind]
			if r.code != 52 || !strings.Contains(r.stderr, filepath.Join(e.ws, ".agentry", "settings.json")) || !strings.Contains(r.stderr, want) {
				t.Fatalf("trusted: exit %d, want 52 naming the settings file and %q; stderr:\n%s", r.code, want, r.stderr)
			}
			// Regular settings and .env files: the rest is skipped.
			for _, name := range hostileFiles[:4] {
				p := filepath.Join(e.ws, filepath.FromSlash(name))
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				e.writeFile(p, map[bool]string{true: "{}", false: "OTHER=1\n"}[strings.HasSuffix(name, ".json")])
			}
			r = e.run("", "run", "--trust-workspace", "-m", "replay:"+replay, "-p", "hi")
			if r.code != 0 || !strings.Contains(r.stdout, "done") {
				t.Fatalf("trusted, regular settings: exit %d, stdout %q; stderr:\n%s", r.code, r.stdout, r.stderr)
			}
			// AGENTS.md is not among the default context file names.
			for _, name := range []string{"GEMINI.md", filepath.Join(".agentry", "agents", "x.md")} {
				if !strings.Contains(r.stderr, filepath.Join(e.ws, name)) {
					t.Errorf("no warning names %s; stderr:\n%s", name, r.stderr)
				}
			}
		})
	}
}

// TestServeHostileWorkspace: a client's workspace_path names a hostile
// workspace (untrusted, then trusted through the user's settings). The
// request ends, and the server stays up and answers requests for other
// workspaces.
func TestServeHostileWorkspace(t *testing.T) {
	const token = "e2e-hostile-token-0123456789"
	for _, kind := range []string{"fifo", "devzero"} {
		t.Run(kind, func(t *testing.T) {
			e := newEnv(t)
			e.set("AGENTRY_A2A_TOKEN=" + token)
			root := t.TempDir()
			untrusted, trusted, plain := filepath.Join(root, "untrusted"), filepath.Join(root, "trusted", "ws"), filepath.Join(root, "plain")
			for _, d := range []string{untrusted, trusted, plain} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
				if d != plain {
					hostileWorkspace(t, d, kind, hostileFiles)
				}
			}
			e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), `{"security": {"trustedFolders": ["`+filepath.Join(root, "trusted")+`"]}}`)
			var turns [][]map[string]any
			for range 8 {
				turns = append(turns, []map[string]any{text("done")})
			}
			replay := e.replayFile(turns...)
			srv := e.serve("--port", "0", "-w", e.ws, "--allowed-root", root, "-m", "replay-nonstrict:"+replay)
			hc := &http.Client{Transport: headerTransport{token}}
			c, err := a2aclient.NewFromEndpoints(t.Context(), []*a2a.AgentInterface{a2a.NewAgentInterface(srv.url+"/", a2a.TransportProtocolJSONRPC)},
				a2aclient.WithJSONRPCTransport(hc))
			if err != nil {
				t.Fatal(err)
			}
			send := func(ws string) (*a2a.Task, error) {
				type result struct {
					task *a2a.Task
					err  error
				}
				done := make(chan result, 1)
				go func() {
					m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))
					m.Metadata = map[string]any{devtoolURI: map[string]any{"workspace_path": ws}}
					res, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: m})
					task, _ := res.(*a2a.Task)
					done <- result{task, err}
				}()
				select {
				case r := <-done:
					return r.task, r.err
				case <-time.After(60 * time.Second):
					t.Fatalf("a request for %s hung; stderr:\n%s", ws, srv.errText())
					return nil, nil
				}
			}
			for _, ws := range []string{untrusted, trusted, plain} {
				task, err := send(ws)
				state := ""
				if task != nil {
					state = string(task.Status.State)
				}
				t.Logf("%s: %s %v", filepath.Base(ws), state, err)
				if ws == plain && (err != nil || task.Status.State != a2a.TaskStateCompleted) {
					t.Fatalf("plain workspace after the hostile ones: %s, %v; stderr:\n%s", state, err, srv.errText())
				}
			}
			select {
			case <-srv.waited:
				t.Fatalf("agentry serve exited; stderr:\n%s", srv.errText())
			default:
			}
			if code := srv.interrupt(); code != 0 {
				t.Errorf("exit %d after SIGINT; stderr:\n%s", code, srv.errText())
			}
		})
	}
}

// TestSignalDuringStartup: agentry waiting for its prompt on a stdin pipe
// that never closes ends at once on SIGTERM (and on SIGINT), exit 130.
func TestSignalDuringStartup(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			e := newEnv(t)
			c := e.cmd("run", "-m", "replay:"+quickstart())
			stdin, err := c.StdinPipe() // never written, never closed
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			var stderr strings.Builder
			c.Stderr = &stderr
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			waited := make(chan struct{})
			go func() { c.Wait(); close(waited) }()
			// Signals are caught from the first instruction of main; wait
			// until agentry is reading stdin, where it would otherwise stay.
			waitReading(t, c)
			if err := c.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-waited:
			case <-time.After(60 * time.Second):
				c.Process.Kill()
				<-waited
				t.Fatalf("agentry ignored %v while reading its prompt; stderr:\n%s", sig, stderr.String())
			}
			if code := c.ProcessState.ExitCode(); code != 130 {
				t.Errorf("exit %d after %v, want 130; stderr:\n%s", code, sig, stderr.String())
			}
		})
	}
}

// waitReading waits until a thread of the process sleeps in read(2) on
// fd 0, as /proc/PID/task/*/syscall shows it.
func waitReading(t *testing.T, c *exec.Cmd) {
	t.Helper()
	nr := map[string]string{"amd64": "0", "arm64": "63"}[goruntime.GOARCH]
	if nr == "" {
		t.Fatalf("no read(2) syscall number known for %s", goruntime.GOARCH)
	}
	dir := filepath.Join("/proc", strconv.Itoa(c.Process.Pid), "task")
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		tasks, _ := os.ReadDir(dir)
		for _, task := range tasks {
			s, _ := os.ReadFile(filepath.Join(dir, task.Name(), "syscall"))
			if f := strings.Fields(string(s)); len(f) > 1 && f[0] == nr && f[1] == "0x0" {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("agentry never blocked reading stdin")
}
