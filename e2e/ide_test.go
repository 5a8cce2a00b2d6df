package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/internal/fakegemini"
)

// companionLine is a line `agentry ide companion` writes on stdout.
type companionLine struct {
	Type    string `json:"type"`
	Path    string `json:"path"`
	Content string `json:"content"`
	Error   string `json:"error"`
}

// TestInteractiveIDECompanion: the terminal (`agentry --ide`) finds
// `agentry ide companion`, run as an editor plugin would run it, through
// its discovery file (the test process stands in for the IDE), connects
// to it, sends the editor's context with the prompt as gemini-cli does,
// and shows the model's write_file in the editor: the content the user
// accepted there, edited, is what lands on disk, and the model is told.
func TestInteractiveIDECompanion(t *testing.T) {
	fake := fakegemini.New(t)
	e := newEnv(t)
	e.geminiEnv(fake)
	tmp := t.TempDir()
	pid := strconv.Itoa(os.Getpid())
	e.set("TMPDIR="+tmp, "GEMINI_CLI_IDE_PID="+pid)

	comp := exec.Command(binary, "ide", "companion", "--workspace", e.ws, "--pid", pid, "--ide-name", "vscode", "--ide-display-name", "Test IDE")
	comp.Env = e.environ()
	stdin, err := comp.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := comp.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	comp.Stderr = &stderr
	if err := comp.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan companionLine, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l companionLine
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				lines <- l
			}
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { comp.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			comp.Process.Kill()
			<-done
		}
	})
	next := func(want string) companionLine {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the companion ended waiting for %q; stderr:\n%s", want, stderr.String())
				}
				if l.Type == "error" {
					t.Fatalf("the companion refused a line: %s", l.Error)
				}
				if l.Type == want {
					return l
				}
			case <-time.After(60 * time.Second): // a hang guard
				t.Fatalf("no %q line from the companion; stderr:\n%s", want, stderr.String())
			}
		}
	}
	event := func(v map[string]any) {
		t.Helper()
		b, _ := json.Marshal(v)
		if _, err := io.WriteString(stdin, string(b)+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	next("ready")
	mainGo := filepath.Join(e.ws, "main.go")
	event(map[string]any{"type": "focused", "path": mainGo})
	event(map[string]any{"type": "cursor", "path": mainGo, "line": 7, "character": 3})

	notes := filepath.Join(e.ws, "notes.txt")
	fake.Enqueue(fakegemini.Call("write_file", map[string]any{"file_path": notes, "content": "proposed by the model\n"}), fakegemini.Text("Written."))
	tm := e.interactive("--ide")
	send(tm, "/ide status")
	tm.WaitText("Connected to Test IDE")
	send(tm, "write the notes")

	diff := next("openDiff")
	if diff.Path != notes || diff.Content != "proposed by the model\n" {
		t.Fatalf("openDiff %q with %q", diff.Path, diff.Content)
	}
	event(map[string]any{"type": "diffAccepted", "path": notes, "content": "edited in the editor\n"})
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
