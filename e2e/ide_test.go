package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/internal/termtest"
)

// companionLine is a line `agentry ide companion` writes on stdout.
type companionLine struct {
	Type    string `json:"type"`
	Path    string `json:"path"`
	Content string `json:"content"`
	Port    int    `json:"port"`
	File    string `json:"file"`
	Error   string `json:"error"`
	Count   *int   `json:"count"`
}

// companionProc is `agentry ide companion` run as an editor plugin runs
// it: the test writes the editor's events on its stdin and reads its
// requests from its stdout.
type companionProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan companionLine
	stderr *syncBuffer
	done   chan struct{} // closed once the process has been waited for
	// ready is its first line: the port and the discovery file.
	ready companionLine
}

// startCompanion starts `agentry ide companion` for e's workspace as
// "Test IDE", with args added (--pid), and waits for its ready line. It
// ends at the test's end (EOF on stdin, then SIGKILL after a grace).
func startCompanion(t *testing.T, e *env, args ...string) *companionProc {
	t.Helper()
	argv := append([]string{"ide", "companion", "--workspace", e.ws, "--ide-name", "vscode", "--ide-display-name", "Test IDE"}, args...)
	c := &companionProc{t: t, cmd: exec.Command(binary, argv...), lines: make(chan companionLine, 16), stderr: &syncBuffer{}, done: make(chan struct{})}
	c.cmd.Env = e.environ()
	c.cmd.Stderr = c.stderr
	var err error
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l companionLine
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				c.lines <- l
			}
		}
		close(c.lines)
		_ = c.cmd.Wait() // after the last read, as exec requires
		close(c.done)
	}()
	t.Cleanup(func() {
		c.stdin.Close()
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			c.kill()
		}
	})
	c.ready = c.next("ready")
	return c
}

// next returns the companion's next line of type typ, skipping others;
// an error line fails the test unless typ is "error".
func (c *companionProc) next(typ string) companionLine {
	c.t.Helper()
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("the companion ended waiting for %q; stderr:\n%s", typ, c.stderr.String())
			}
			if l.Type == "error" && typ != "error" {
				c.t.Fatalf("the companion refused a line: %s", l.Error)
			}
			if l.Type == typ {
				return l
			}
		case <-time.After(60 * time.Second): // a hang guard
			c.t.Fatalf("no %q line from the companion; stderr:\n%s", typ, c.stderr.String())
		}
	}
}

// event writes one editor event.
func (c *companionProc) event(v map[string]any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.stdin.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

// kill ends the companion with SIGKILL, as a crash would: its discovery
// file stays behind.
func (c *companionProc) kill() {
	_ = c.cmd.Process.Kill()
	<-c.done
}

// statusMarks are the starts of /ide status's status lines.
var statusMarks = regexp.MustCompile(`Connected to |Connecting\.\.\.|Disconnected`)

// ideStatusUntil runs /ide status until its reply (from its status line
// to the end of the terminal's text) satisfies cond, and returns that
// reply. The status changes in the background (connecting, a lost
// connection, reconnecting), so each reply is looked at once and, when
// it does not yet say what is awaited, the command is run again; the
// terminal's own hang guard bounds each wait, and a hang guard longer
// than the client's longest retry delay (30 s) bounds the whole.
func ideStatusUntil(t *testing.T, tm *termtest.Term, what string, cond func(reply string) bool) string {
	t.Helper()
	var last string
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); {
		before := len(statusMarks.FindAllStringIndex(tm.Scrollback(), -1))
		send(tm, "/ide status")
		tm.WaitFor("a reply to /ide status", func(string) bool {
			sb := tm.Scrollback()
			m := statusMarks.FindAllStringIndex(sb, -1)
			if len(m) <= before {
				return false
			}
			last = sb[m[len(m)-1][0]:]
			return true
		})
		if cond(last) {
			return last
		}
	}
	t.Fatalf("/ide status never showed %s; its last reply:\n%s", what, last)
	return ""
}

// connectedTo is a reply condition of ideStatusUntil.
func connectedTo(name string) func(string) bool {
	return func(r string) bool { return strings.HasPrefix(r, "Connected to "+name) }
}

// ideEnv is an environment for agentry and its companion: the fake
// Gemini server and a TMPDIR of the test's own, where the companion
// writes its discovery file and agentry looks for it.
func ideEnv(t *testing.T) (*env, *fakegemini.Server) {
	t.Helper()
	fake := fakegemini.New(t)
	e := newEnv(t)
	e.geminiEnv(fake)
	e.set("TMPDIR=" + t.TempDir())
	return e, fake
}

// TestInteractiveIDECompanion: the terminal (`agentry --ide`) finds
// `agentry ide companion`, run as an editor plugin would run it, through
// its discovery file (the test process stands in for the IDE), connects
// to it, sends the editor's context with the prompt as gemini-cli does,
// and shows the model's write_file in the editor: the content the user
// accepted there, edited, is what lands on disk, and the model is told.
func TestInteractiveIDECompanion(t *testing.T) {
	e, fake := ideEnv(t)
	pid := strconv.Itoa(os.Getpid())
	e.set("GEMINI_CLI_IDE_PID=" + pid)
	comp := startCompanion(t, e, "--pid", pid)
	mainGo := filepath.Join(e.ws, "main.go")
	comp.event(map[string]any{"type": "focused", "path": mainGo})
	comp.event(map[string]any{"type": "cursor", "path": mainGo, "line": 7, "character": 3})

	notes := filepath.Join(e.ws, "notes.txt")
	fake.Enqueue(fakegemini.Call("write_file", map[string]any{"file_path": notes, "content": "proposed by the model\n"}), fakegemini.Text("Written."))
	tm := e.interactive("--ide")
	// Connected, with the editor's context received: the open files are
	// listed.
	ideStatusUntil(t, tm, "the connection with main.go open", func(r string) bool {
		return strings.HasPrefix(r, "Connected to Test IDE") && strings.Contains(r, "main.go (active)")
	})
	send(tm, "write the notes")

	diff := comp.next("openDiff")
	if diff.Path != notes || diff.Content != "proposed by the model\n" {
		t.Fatalf("openDiff %q with %q", diff.Path, diff.Content)
	}
	comp.event(map[string]any{"type": "diffAccepted", "path": notes, "content": "edited in the editor\n"})
	tm.WaitText("Written.")
	if b, err := os.ReadFile(notes); err != nil || string(b) != "edited in the editor\n" {
		t.Fatalf("notes.txt = %q (%v), want the content accepted in the editor", b, err)
	}
	reqs := fake.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	first := userTextsOf(reqs[0])
	if !strings.Contains(first, "Here is the user's editor context as a JSON object. This is for your information only.") ||
		!strings.Contains(first, `"path": "`+mainGo+`"`) || !strings.Contains(first, `"line": 7`) {
		t.Errorf("the first request lacks the editor's context:\n%s", first)
	}
	if second := userTextsOf(reqs[1]); !strings.Contains(second, "User modified the `content` to be: edited in the editor") {
		t.Errorf("the tool's result does not tell the model the user changed the content:\n%s", second)
	}
}

// TestIDEDiscoveryByProcessTree: without GEMINI_CLI_IDE_PID, agentry
// finds the IDE by walking up its process tree as gemini-cli does. A tree
// of shells stands in for an editor's terminal: the pane's sh is the IDE,
// its child sh the terminal's pty host, then the terminal's bash, then
// agentry (each `; :` keeps a shell from exec'ing its last command). The
// companion, started only once agentry is up, names the pane's pid; the
// failed discovery at start leaves /ide enable to connect, and the
// editor's context reaches the model. (`agentry run --ide` has no
// counterpart here: it connects in the background and sends the context
// only if the connection is up by the time the prompt goes, and nothing
// lets a test wait for that.)
func TestIDEDiscoveryByProcessTree(t *testing.T) {
	e, fake := ideEnv(t)
	script := fmt.Sprintf(`sh -c 'bash -c "%s --ide; :"; :'; :`, binary)
	tm := termtest.Start(t, termtest.Options{
		Command: []string{"sh", "-c", script},
		Env:     e.environ(),
		Dir:     e.ws,
		Cols:    120, Rows: 40,
	})
	tm.WaitText(promptReady)
	idePID := tm.PID()
	// The discovery at start (--ide) found no companion and is over.
	ideStatusUntil(t, tm, "the failed discovery at start", func(r string) bool {
		return strings.HasPrefix(r, "Disconnected") && !strings.Contains(r, "currently disabled")
	})

	comp := startCompanion(t, e, "--pid", strconv.Itoa(idePID))
	mainGo := filepath.Join(e.ws, "main.go")
	comp.event(map[string]any{"type": "focused", "path": mainGo})
	comp.event(map[string]any{"type": "cursor", "path": mainGo, "line": 12, "character": 5})
	// Not connected yet: /ide status says what discovery finds now, the
	// walk up the tree included.
	reply := ideStatusUntil(t, tm, "the walk to the IDE", func(r string) bool {
		return strings.Contains(r, "IDE process:")
	})
	// The walk stops at the first shell, bash, and goes on to its
	// parent (the pty host) whose parent is the IDE.
	walk := regexp.MustCompile(`IDE process: (\d+) \(process tree: \d+ agentry < \d+ bash < \d+ sh\)`).FindStringSubmatch(reply)
	if walk == nil || walk[1] != strconv.Itoa(idePID) {
		t.Fatalf("the walk does not end at the pane's shell (pid %d):\n%s", idePID, reply)
	}

	send(tm, "/ide enable")
	tm.WaitText("Connected to Test IDE")
	ideStatusUntil(t, tm, "the editor's context", func(r string) bool {
		return strings.HasPrefix(r, "Connected to Test IDE") && strings.Contains(r, "main.go (active)")
	})
	fake.Enqueue(fakegemini.Text("Seen."))
	send(tm, "where am I?")
	tm.WaitText("Seen.")
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1", len(reqs))
	}
	got := userTextsOf(reqs[0])
	for _, want := range []string{
		"Here is the user's editor context as a JSON object. This is for your information only.",
		`"path": "` + mainGo + `"`, `"line": 12`, `"character": 5`, "where am I?",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the request lacks %q; its user parts:\n%s", want, got)
		}
	}
}

// connectedSession starts the companion for the test process as the IDE
// (GEMINI_CLI_IDE_PID), then `agentry --ide`, and waits until the
// terminal is connected.
func connectedSession(t *testing.T, e *env) (*companionProc, *termtest.Term) {
	t.Helper()
	pid := strconv.Itoa(os.Getpid())
	e.set("GEMINI_CLI_IDE_PID=" + pid)
	comp := startCompanion(t, e, "--pid", pid)
	tm := e.interactive("--ide")
	ideStatusUntil(t, tm, "the connection", connectedTo("Test IDE"))
	return comp, tm
}

// TestIDEDiffRejected: the model's write_file opens a diff in the editor
// and the terminal's dialog at once; rejected in the editor, the call is
// cancelled, the dialog withdrawn, the file not written, and the model
// reads gemini-cli's denial.
func TestIDEDiffRejected(t *testing.T) {
	e, fake := ideEnv(t)
	comp, tm := connectedSession(t, e)
	notes := filepath.Join(e.ws, "notes.txt")
	fake.Enqueue(fakegemini.Call("write_file", map[string]any{"file_path": notes, "content": "proposed by the model\n"}), fakegemini.Text("Left alone."))
	send(tm, "write the notes")
	if d := comp.next("openDiff"); d.Path != notes || d.Content != "proposed by the model\n" {
		t.Fatalf("openDiff %q with %q", d.Path, d.Content)
	}
	tm.WaitText("Apply this change?")
	comp.event(map[string]any{"type": "diffRejected", "path": notes})
	screen := tm.WaitFor("the answer after the rejection", func(s string) bool {
		return strings.Contains(s, "Left alone.") && strings.Contains(s, promptReady)
	})
	if strings.Contains(screen, "Apply this change?") {
		t.Errorf("the terminal's dialog is still shown:\n%s", termtest.Framed(screen))
	}
	// The call's line and, under it, gemini-cli 0.61.0's text for a
	// cancelled confirmation.
	if sb := tm.Scrollback(); !regexp.MustCompile(`WriteFile Writing to notes\.txt\n\s*User denied execution\.`).MatchString(sb) {
		t.Errorf("the terminal does not show the call denied:\n%s", sb)
	}
	if _, err := os.Stat(notes); !os.IsNotExist(err) {
		t.Errorf("notes.txt after the rejection: %v", err)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if got := userTextsOf(reqs[1]); !strings.Contains(got, "User denied execution.") {
		t.Errorf("the model was not told of the denial; its last request's user parts:\n%s", got)
	}
}

// TestIDETerminalWinsTheRace: with the diff open in the editor, the user
// answers in the terminal (Allow once): the editor's view is closed, the
// model's content lands, and an accept the editor sends too late is
// refused by the companion and changes nothing.
func TestIDETerminalWinsTheRace(t *testing.T) {
	e, fake := ideEnv(t)
	comp, tm := connectedSession(t, e)
	notes := filepath.Join(e.ws, "notes.txt")
	fake.Enqueue(fakegemini.Call("write_file", map[string]any{"file_path": notes, "content": "proposed by the model\n"}), fakegemini.Text("Written."))
	send(tm, "write the notes")
	comp.next("openDiff")
	tm.WaitText("Apply this change?")
	tm.WaitText("1. Allow once")
	tm.Keys("1")
	if c := comp.next("closeDiff"); c.Path != notes {
		t.Fatalf("closeDiff for %q, want %q", c.Path, notes)
	}
	tm.WaitFor("the answer and the prompt back", func(s string) bool {
		return strings.Contains(s, "Written.") && strings.Contains(s, promptReady)
	})
	if b, err := os.ReadFile(notes); err != nil || string(b) != "proposed by the model\n" {
		t.Fatalf("notes.txt = %q (%v), want the model's content", b, err)
	}

	comp.event(map[string]any{"type": "diffAccepted", "path": notes, "content": "accepted too late\n"})
	if l := comp.next("error"); !strings.Contains(l.Error, "no diff view is open for that file: "+notes) {
		t.Errorf("the late accept was refused with %q, want: no diff view is open", l.Error)
	}
	if b, _ := os.ReadFile(notes); string(b) != "proposed by the model\n" {
		t.Errorf("notes.txt = %q after the late accept", b)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if got := userTextsOf(reqs[1]); strings.Contains(got, "User modified") {
		t.Errorf("the model was told of a change the user did not make:\n%s", got)
	}
}

// TestIDECompanionKilledMidSession: the companion is killed (its discovery
// file stays); the terminal shows the connection lost, an edit falls back
// to the terminal's dialog, and once the editor starts a new companion
// (another port and token, the same IDE) the terminal reconnects by
// itself and the next edit opens in the new companion.
func TestIDECompanionKilledMidSession(t *testing.T) {
	e, fake := ideEnv(t)
	comp, tm := connectedSession(t, e)
	comp.kill()
	ideStatusUntil(t, tm, "the connection lost", func(r string) bool { return strings.HasPrefix(r, "Disconnected") })

	a := filepath.Join(e.ws, "a.txt")
	fake.Enqueue(fakegemini.Call("write_file", map[string]any{"file_path": a, "content": "asked in the terminal\n"}), fakegemini.Text("Wrote a."))
	send(tm, "write a")
	tm.WaitText("Apply this change?")
	tm.Keys("Enter") // Allow once
	tm.WaitFor("the answer and the prompt back", func(s string) bool {
		return strings.Contains(s, "Wrote a.") && strings.Contains(s, promptReady)
	})
	if b, err := os.ReadFile(a); err != nil || string(b) != "asked in the terminal\n" {
		t.Fatalf("a.txt = %q (%v)", b, err)
	}

	comp2 := startCompanion(t, e, "--pid", strconv.Itoa(os.Getpid()))
	if comp2.ready.Port == comp.ready.Port {
		t.Fatalf("the new companion has the old one's port %d", comp.ready.Port)
	}
	ideStatusUntil(t, tm, "the connection again", connectedTo("Test IDE"))
	b := filepath.Join(e.ws, "b.txt")
	fake.Enqueue(fakegemini.Call("write_file", map[string]any{"file_path": b, "content": "proposed\n"}), fakegemini.Text("Wrote b."))
	send(tm, "write b")
	if d := comp2.next("openDiff"); d.Path != b {
		t.Fatalf("openDiff for %q, want %q", d.Path, b)
	}
	comp2.event(map[string]any{"type": "diffAccepted", "path": b, "content": "accepted in the new editor\n"})
	tm.WaitText("Wrote b.")
	if got, err := os.ReadFile(b); err != nil || string(got) != "accepted in the new editor\n" {
		t.Fatalf("b.txt = %q (%v), want the content accepted in the new companion", got, err)
	}
}
