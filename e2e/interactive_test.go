package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/internal/termtest"
)

// promptReady is the input box's placeholder: the terminal accepts a
// prompt.
const promptReady = "Type your message or @path/to/file"

// interactive starts a bare agentry on a 120×40 tmux terminal in e's
// workspace, with args, and waits for its prompt.
func (e *env) interactive(args ...string) *termtest.Term {
	e.t.Helper()
	tm := termtest.Start(e.t, termtest.Options{
		Command: append([]string{binary}, args...),
		Env:     e.environ(),
		Dir:     e.ws,
		Cols:    120, Rows: 40,
	})
	tm.WaitText(promptReady)
	return tm
}

// send types a prompt and presses Enter.
func send(tm *termtest.Term, prompt string) {
	tm.Type(prompt)
	tm.Keys("Enter")
}

// userTextsOf returns the text parts of a request's user turns.
func userTextsOf(r fakegemini.Request) string {
	var b strings.Builder
	for _, c := range r.Body.Contents {
		if c.Role != genai.RoleUser {
			continue
		}
		for _, p := range c.Parts {
			b.WriteString(p.Text)
			if p.FunctionResponse != nil {
				j, _ := json.Marshal(p.FunctionResponse.Response)
				b.Write(j)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// TestInteractivePromptAndAnswer: a bare agentry on a terminal takes a
// prompt and streams the answer into the terminal, every paragraph of it.
func TestInteractivePromptAndAnswer(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(termtest.WordStep(300, 50, time.Millisecond))
	e := newEnv(t)
	e.geminiEnv(srv)
	tm := e.interactive("-m", "gemini-2.5-flash")
	send(tm, "count for me")
	// The Markdown renderer wraps the paragraphs at the terminal's width:
	// every word must be there once, in order, in the terminal's
	// scrollback and screen, once the answer has ended and the prompt is
	// back (a frame may still show the last block while it is printed).
	want := strings.Fields(termtest.WordAnswer(300, 50))
	words := regexp.MustCompile(`w\d{4}`)
	var got []string
	_, err := tm.Wait(t.Context(), func(s string) bool {
		got = words.FindAllString(tm.Scrollback(), -1)
		return strings.Contains(s, promptReady) && !strings.Contains(s, "Responding") && slices.Equal(got, want)
	})
	if err != nil {
		t.Fatalf("the terminal shows %d words, want the %d of the answer once, in order: %v\n%s", len(got), len(want), err, tm.Scrollback())
	}
	if !strings.Contains(tm.Scrollback(), "count for me") {
		t.Errorf("the prompt is not on the terminal:\n%s", tm.Scrollback())
	}
}

// TestInteractiveConfirmations: an edit asks first; the keyboard's Enter
// allows it once and the file is written; Esc denies the next one, the
// file is left alone and the model is told.
func TestInteractiveConfirmations(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(
		fakegemini.Call("write_file", map[string]any{"file_path": "hello.txt", "content": "hello from the model\n"}),
		fakegemini.Text("Written."),
		fakegemini.Call("write_file", map[string]any{"file_path": "hello.txt", "content": "overwritten\n"}),
		fakegemini.Text("Understood, left as it is."),
	)
	e := newEnv(t)
	e.geminiEnv(srv)
	tm := e.interactive("-m", "gemini-2.5-flash")
	send(tm, "write hello.txt")
	tm.WaitText("Apply this change?")
	screen := tm.WaitText("Allow once")
	if !strings.Contains(screen, "+hello from the model") {
		t.Errorf("the dialog shows no diff:\n%s", termtest.Framed(screen))
	}
	tm.Keys("Enter")
	tm.WaitText("Written.")
	tm.WaitText(promptReady)
	if b, err := os.ReadFile(filepath.Join(e.ws, "hello.txt")); err != nil || string(b) != "hello from the model\n" {
		t.Fatalf("hello.txt = %q, %v after allowing the edit", b, err)
	}

	send(tm, "overwrite it")
	tm.WaitText("Apply this change?")
	tm.Keys("Escape")
	tm.WaitText("Understood, left as it is.")
	if b, _ := os.ReadFile(filepath.Join(e.ws, "hello.txt")); string(b) != "hello from the model\n" {
		t.Errorf("hello.txt = %q after the denial", b)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4", len(reqs))
	}
	if got := userTextsOf(reqs[3]); !strings.Contains(got, "User denied execution.") {
		t.Errorf("the model was not told of the denial; its last request's user parts:\n%s", got)
	}
}

// TestInteractiveShellAndReferences: !ls runs in the workspace and its
// output reaches the model with the next prompt, whose @notes.txt is
// expanded as agentry run -p expands it.
func TestInteractiveShellAndReferences(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(fakegemini.Text("Read both."))
	e := newEnv(t)
	e.geminiEnv(srv)
	e.writeFile("notes.txt", "remember the milk\n")
	e.writeFile("listed-file.go", "package main\n")
	tm := e.interactive("-m", "gemini-2.5-flash")
	send(tm, "!ls")
	tm.WaitText("listed-file.go")
	tm.Keys("Escape") // leave shell mode
	tm.WaitText(promptReady)
	send(tm, "what do @notes.txt and the listing say?")
	tm.WaitText("Read both.")
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1", len(reqs))
	}
	got := userTextsOf(reqs[0])
	for _, want := range []string{
		"I ran the following shell command:\n```sh\nls\n```", "listed-file.go",
		"what do @notes.txt and the listing say?", "Content from @notes.txt:", "remember the milk",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the request lacks %q; its user parts:\n%s", want, got)
		}
	}
}

// TestInteractiveCancelShell: Ctrl-C in the middle of a long shell
// command kills it — the whole process group — and gives the prompt back.
func TestInteractiveCancelShell(t *testing.T) {
	e := newEnv(t)
	replay := e.replayFile([]map[string]any{text("unused")})
	tm := e.interactive("-m", "replay:"+replay)
	// "going" is printed only once the pid is written; the command line
	// on the screen does not hold it.
	send(tm, `!sh -c 'echo $$ > child.pid; echo "go""ing"; exec sleep 1000'`)
	tm.WaitText("going")
	b, err := os.ReadFile(filepath.Join(e.ws, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	tm.Keys("C-c")
	tm.WaitFor("the cancelled command and the prompt back", func(s string) bool {
		return strings.Contains(s, "Command was cancelled.") && strings.Contains(s, "Type a shell command")
	})
	// The child may still be on its way out: wait for it, with the
	// harness's deadline.
	// A zombie counts as gone (proctest.Running): on machines whose init
	// does not reap orphans it would linger.
	tm.WaitFor("the child gone", func(string) bool { return !proctest.Running(pid) })
}

// TestInteractiveCommandsAndResume: /stats after a turn with a tool call,
// /rewind back to before a prompt, then quitting and agentry -r latest
// showing the earlier conversation.
func TestInteractiveCommandsAndResume(t *testing.T) {
	e := newEnv(t)
	replay := e.replayFile(
		[]map[string]any{{"functionCall": map[string]any{"name": "list_directory", "args": map[string]any{"dir_path": "."}}}},
		[]map[string]any{text("The workspace holds notes.txt.")},
		[]map[string]any{text("A second answer.")},
	)
	e.writeFile("notes.txt", "x\n")
	tm := e.interactive("-m", "replay:"+replay)
	send(tm, "what is here?")
	tm.WaitText("The workspace holds notes.txt.")
	tm.WaitText(promptReady)
	send(tm, "/stats")
	// The output is printed a few rows at a time: wait for all of it.
	tm.WaitFor("/stats with the tool call", func(s string) bool {
		return strings.Contains(s, "Tool calls: 1") && strings.Contains(s, "- list_directory: 1") && strings.Contains(s, promptReady)
	})
	send(tm, "and now?")
	tm.WaitText("A second answer.")
	tm.WaitText(promptReady)

	send(tm, "/rewind")
	tm.WaitText("Rewind to before which prompt?")
	tm.Keys("Down", "Enter") // the second prompt, "and now?"
	tm.WaitFor("the rewound prompt back in the input box", func(s string) bool {
		return strings.Contains(s, "Rewound") && strings.Contains(s, "> and now?")
	})
	tm.Keys("C-c") // clears the input
	tm.WaitText(promptReady)
	tm.Keys("C-d")
	if ex := tm.WaitExit(); ex != (termtest.Exit{}) {
		t.Fatalf("exit %+v:\n%s", ex, termtest.Framed(tm.Screen()))
	}

	tm = e.interactive("-r", "latest", "-m", "replay:"+replay)
	screen := tm.WaitFor("the earlier conversation", func(s string) bool {
		return strings.Contains(s, "what is here?") && strings.Contains(s, "The workspace holds notes.txt.")
	})
	if strings.Contains(screen, "A second answer.") {
		t.Errorf("the rewound answer came back:\n%s", screen)
	}
}

// TestInteractiveAbortAndTerminate: Esc stops an answer under way and the
// session takes the next prompt; SIGTERM ends agentry cleanly, exit 0,
// with the conversation stored for -r.
func TestInteractiveAbortAndTerminate(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(termtest.WordStep(2000, 50, 5*time.Millisecond), fakegemini.Text("The second answer."))
	e := newEnv(t)
	e.geminiEnv(srv)
	tm := e.interactive("-m", "gemini-2.5-flash")
	send(tm, "count slowly")
	tm.WaitText("w0010")
	tm.Keys("Escape")
	tm.WaitFor("the answer cancelled and the prompt back", func(s string) bool {
		return strings.Contains(s, "Request cancelled.") && strings.Contains(s, promptReady)
	})
	if strings.Contains(tm.Scrollback(), "w1999") {
		t.Fatalf("the answer ran to its end:\n%s", tm.Scrollback())
	}
	send(tm, "again")
	tm.WaitText("The second answer.")
	tm.WaitText(promptReady)
	if err := syscall.Kill(tm.PID(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if ex := tm.WaitExit(); ex != (termtest.Exit{}) {
		t.Fatalf("SIGTERM: exit %+v:\n%s", ex, termtest.Framed(tm.Screen()))
	}
	r := e.run("", "sessions", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "count slowly") {
		t.Errorf("the session is not stored: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
