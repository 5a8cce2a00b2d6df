package e2e

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/internal/proctest"
)

// TestServeIDE: `agentry serve --ide` finds `agentry ide companion`
// through its discovery file and connects in the background; the
// model's write_file for an A2A client's (a2a-go's) prompt is shown in
// the editor beside the client's question: the content accepted in the editor lands on disk,
// the task completes, a late client answer is refused, and the model is
// told the user changed the content.
func TestServeIDE(t *testing.T) {
	e, fake := ideEnv(t)
	pid := strconv.Itoa(os.Getpid())
	e.set("GEMINI_CLI_IDE_PID="+pid, "AGENTRY_A2A_TOKEN="+a2aToken)
	comp := startCompanion(t, e, "--pid", pid)

	notes := filepath.Join(e.ws, "notes.txt")
	fake.Enqueue(fakegemini.Call("write_file", map[string]any{"file_path": notes, "content": "proposed by the model\n"}), fakegemini.Text("Written."))
	srv := e.serve("--port", "0", "-w", e.ws, "-m", "gemini-2.5-flash", "--ide")
	if c := comp.next("clients"); c.Count == nil || *c.Count != 1 {
		t.Fatalf("clients line %+v, want agentry serve connected", c)
	}

	// An A2A client (a2a-go's, as it comes) sends the prompt; the task
	// waits for the confirmation, which the client leaves to the editor.
	hc := &http.Client{Transport: headerTransport{a2aToken}}
	c, err := a2aclient.NewFromEndpoints(t.Context(), []*a2a.AgentInterface{a2a.NewAgentInterface(srv.url+"/", a2a.TransportProtocolJSONRPC)},
		a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("write the notes"))})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("the task: %#v, want it waiting for the confirmation", res)
	}
	diff := comp.next("openDiff")
	if diff.Path != notes || diff.Content != "proposed by the model\n" {
		t.Fatalf("openDiff %q with %q", diff.Path, diff.Content)
	}
	comp.event(map[string]any{"type": "diffAccepted", "path": notes, "content": "edited in the editor\n"})
	var got *a2a.Task
	proctest.Eventually(t, "the task to complete", func() bool {
		got, err = c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: task.ID})
		return err == nil && got.Status.State.Terminal()
	})
	if got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("the task ended %s; server:\n%s", got.Status.State, srv.errText())
	}
	// The client's answer now comes second.
	late := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("yes"))
	late.TaskID, late.ContextID = task.ID, task.ContextID
	if _, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: late}); err == nil {
		t.Errorf("a late answer was taken")
	}
	if b, err := os.ReadFile(notes); err != nil || !bytes.Equal(b, []byte("edited in the editor\n")) {
		t.Fatalf("notes.txt = %q (%v), want the content accepted in the editor", b, err)
	}
	// (Whether the editor's context went with the prompt depends on the
	// companion's first update reaching agentry serve before the client's
	// prompt, which nothing here orders; the terminal's test checks it.)
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if second := userTextsOf(reqs[1]); !strings.Contains(second, "User modified the `content` to be: edited in the editor") {
		t.Errorf("the tool's result does not tell the model the user changed the content:\n%s", second)
	}
}

// TestServeIDEWithAgentryA2A: agentry a2a asks the confirmation on a
// stdin nobody answers while the editor shows the diff; the editor's
// answer settles the call, agentry a2a withdraws its question and
// follows the task to its end, over the live stream and over JSON-RPC.
func TestServeIDEWithAgentryA2A(t *testing.T) {
	for _, transport := range []string{"live", "jsonrpc"} {
		t.Run(transport, func(t *testing.T) {
			e, fake := ideEnv(t)
			pid := strconv.Itoa(os.Getpid())
			e.set("GEMINI_CLI_IDE_PID="+pid, "AGENTRY_A2A_TOKEN="+a2aToken)
			comp := startCompanion(t, e, "--pid", pid)
			notes := filepath.Join(e.ws, "notes.txt")
			fake.Enqueue(fakegemini.Call("write_file", map[string]any{"file_path": notes, "content": "proposed\n"}), fakegemini.Text("Written."))
			srv := e.serve("--port", "0", "-w", e.ws, "-m", "gemini-2.5-flash", "--ide")
			comp.next("clients")

			a2a := e.cmd("a2a", "--transport", transport, srv.url, "write the notes")
			a2a.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			stdin, err := a2a.StdinPipe() // open, and silent
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			var stdout, stderr syncBuffer
			a2a.Stdout, a2a.Stderr = &stdout, &stderr
			if err := a2a.Start(); err != nil {
				t.Fatal(err)
			}
			var waitErr error
			done := make(chan struct{})
			go func() { waitErr = a2a.Wait(); close(done) }()
			t.Cleanup(func() {
				_ = a2a.Process.Kill()
				<-done
			})
			comp.next("openDiff")
			comp.event(map[string]any{"type": "diffAccepted", "path": notes, "content": "from the editor\n"})
			select {
			case <-done:
				if err := waitErr; err != nil || stdout.String() != "Written.\n" || !strings.Contains(stderr.String(), "write_file was answered elsewhere; following the task") {
					t.Fatalf("agentry a2a: %v, stdout %q; stderr:\n%s", err, stdout.String(), stderr.String())
				}
			case <-time.After(60 * time.Second): // a hang guard
				t.Fatalf("agentry a2a did not end after the editor's answer; stderr:\n%s\nserver:\n%s", stderr.String(), srv.errText())
			}
			if b, _ := os.ReadFile(notes); string(b) != "from the editor\n" {
				t.Fatalf("notes.txt = %q, want the editor's content", b)
			}
		})
	}
}

// TestServeIDECompanionStartedLater: a companion started after agentry
// serve is found with the next session: its edit opens in the editor.
func TestServeIDECompanionStartedLater(t *testing.T) {
	e, fake := ideEnv(t)
	pid := strconv.Itoa(os.Getpid())
	e.set("GEMINI_CLI_IDE_PID="+pid, "AGENTRY_A2A_TOKEN="+a2aToken)
	notes := filepath.Join(e.ws, "notes.txt")
	fake.Enqueue(fakegemini.Text("Hello."), fakegemini.Call("write_file", map[string]any{"file_path": notes, "content": "proposed\n"}), fakegemini.Text("Written."))
	srv := e.serve("--port", "0", "-w", e.ws, "-m", "gemini-2.5-flash", "--ide")
	comp := startCompanion(t, e, "--pid", pid)
	hc := &http.Client{Transport: headerTransport{a2aToken}}
	c, err := a2aclient.NewFromEndpoints(t.Context(), []*a2a.AgentInterface{a2a.NewAgentInterface(srv.url+"/", a2a.TransportProtocolJSONRPC)},
		a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	send := func(text string) *a2a.Task {
		t.Helper()
		res, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))})
		if err != nil {
			t.Fatal(err)
		}
		task, ok := res.(*a2a.Task)
		if !ok {
			t.Fatalf("%#v", res)
		}
		return task
	}
	send("hello") // a new session: agentry serve looks for the companion again
	if n := comp.next("clients"); n.Count == nil || *n.Count != 1 {
		t.Fatalf("clients line %+v", n)
	}
	task := send("write the notes")
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("task %s, want it waiting for the confirmation", task.Status.State)
	}
	comp.next("openDiff")
	comp.event(map[string]any{"type": "diffAccepted", "path": notes, "content": "from the editor\n"})
	proctest.Eventually(t, "the edit to land", func() bool {
		b, _ := os.ReadFile(notes)
		return string(b) == "from the editor\n"
	})
	// The model's answer after the edit is asked for before the test ends.
	proctest.Eventually(t, "the model's answer after the edit", func() bool { return len(fake.Requests()) >= 3 })
}
