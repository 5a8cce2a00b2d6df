package e2e

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/agentry-dev/agentry/protocol/taskdb"
)

// headerTransport adds the token and the extension to every request.
type headerTransport struct{ token string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+h.token)
	r.Header.Set("A2A-Extensions", devtoolURI)
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeTasksSurviveRestart: tasks live in the session database
// (SQLite here): after the server is stopped and started again, tasks/get
// answers for a completed task with its history, tasks/list lists it, a
// task that was waiting for a confirmation has failed saying why (its run
// died with the server), and the context's conversation goes on.
func TestServeTasksSurviveRestart(t *testing.T) {
	const token = "e2e-restart-token-0123456789"
	e := newEnv(t)
	e.set("AGENTRY_A2A_TOKEN=" + token)
	replay := e.replayFile(
		[]map[string]any{text("First answer.")},
		[]map[string]any{call("write_file", map[string]any{"file_path": "a.txt", "content": "x"})},
		[]map[string]any{text("Second answer.")},
	)
	client := func(url string) *a2aclient.Client {
		hc := &http.Client{Transport: headerTransport{token}}
		c, err := a2aclient.NewFromEndpoints(t.Context(), []*a2a.AgentInterface{a2a.NewAgentInterface(url+"/", a2a.TransportProtocolJSONRPC)},
			a2aclient.WithJSONRPCTransport(hc))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	srv := e.serve("--port", "0", "-w", e.ws, "-m", "replay:"+replay)
	res, err := client(srv.url).SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("first task: %#v", res)
	}
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("write a.txt"))
	m.ContextID = task.ContextID
	res, err = client(srv.url).SendMessage(t.Context(), &a2a.SendMessageRequest{Message: m})
	if err != nil {
		t.Fatal(err)
	}
	parked, ok := res.(*a2a.Task)
	if !ok || parked.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("write task: %#v, want it waiting for the confirmation", res)
	}
	if code := srv.interrupt(); code != 0 {
		t.Fatalf("serve exited %d", code)
	}

	srv = e.serve("--port", "0", "-w", e.ws, "-m", "replay:"+replay)
	c := client(srv.url)
	got, err := c.GetTask(context.Background(), &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatalf("tasks/get after restart: %v\n%s", err, srv.errText())
	}
	var history []string
	for _, m := range got.History {
		for _, p := range m.Parts {
			history = append(history, p.Text())
		}
	}
	if got.Status.State != a2a.TaskStateCompleted || !strings.Contains(strings.Join(history, "|"), "First answer.") {
		t.Fatalf("task after restart: %s, history %q", got.Status.State, history)
	}
	list, err := c.ListTasks(t.Context(), &a2a.ListTasksRequest{ContextID: task.ContextID})
	if err != nil {
		t.Fatalf("tasks/list after restart: %v", err)
	}
	if len(list.Tasks) != 2 {
		t.Fatalf("tasks/list: %+v", list.Tasks)
	}
	got, err = c.GetTask(context.Background(), &a2a.GetTaskRequest{ID: parked.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.State != a2a.TaskStateFailed || got.Status.Message == nil || got.Status.Message.Parts[0].Text() != taskdb.ParkedRecoveryMessage {
		t.Fatalf("parked task after restart: %s %+v, want failed saying %q", got.Status.State, got.Status.Message, taskdb.ParkedRecoveryMessage)
	}
	m = a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("and again"))
	m.ContextID = task.ContextID
	res, err = c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: m})
	if err != nil {
		t.Fatal(err)
	}
	if second := res.(*a2a.Task); second.Status.State != a2a.TaskStateCompleted || second.ContextID != task.ContextID {
		t.Fatalf("second task: %s in %s", second.Status.State, second.ContextID)
	}
	srv.interrupt()
}

var runServingRE = regexp.MustCompile(`agentry run: serving session (\S+) over A2A at (http://\S+)`)

// TestRunServesItsSession: agentry run --a2a-port serves the run's
// session while it runs; its prompt is an A2A task a client finds in the
// session's context and follows to the end, while the run prints its
// answer as usual.
func TestRunServesItsSession(t *testing.T) {
	const token = "e2e-run-token-0123456789"
	e := newEnv(t)
	e.set("AGENTRY_A2A_TOKEN=" + token)
	replay := e.replayFile(
		[]map[string]any{call("run_shell_command", map[string]any{"command": "sleep 1"})},
		[]map[string]any{text("Slept.")},
	)
	cmd := e.cmd("run", "--a2a-port", "0", "-y", "-m", "replay:"+replay, "-p", "sleep a second")
	s := &serveProc{t: t, cmd: cmd, waited: make(chan struct{})}
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, serveStderr{s}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(s.waited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-s.waited })
	m := s.waitFor(runServingRE)
	contextID, url := m[1], m[2]

	hc := &http.Client{Transport: headerTransport{token}}
	c, err := a2aclient.NewFromEndpoints(t.Context(), []*a2a.AgentInterface{a2a.NewAgentInterface(url+"/", a2a.TransportProtocolJSONRPC)},
		a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	list, err := c.ListTasks(t.Context(), &a2a.ListTasksRequest{ContextID: contextID})
	if err != nil || len(list.Tasks) != 1 {
		t.Fatalf("tasks of the run's context: %+v %v", list, err)
	}
	// A live stream (docs/live.md) follows the same task; the card says
	// the method is served.
	cardReq, err := http.NewRequest(http.MethodGet, url+"/.well-known/agent-card.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, card, _ := httpDo(t, cardReq); !strings.Contains(string(card), `"bidiStreaming": true`) {
		t.Errorf("the run's card does not declare bidiStreaming:\n%s", card)
	}
	live := make(chan error, 1)
	go func() { live <- followLive(url, token, list.Tasks[0].ID) }()
	var states []string
	for ev, err := range c.SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: list.Tasks[0].ID}) {
		if err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		if u, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
			states = append(states, string(u.Status.State))
		}
	}
	if len(states) == 0 || states[len(states)-1] != string(a2a.TaskStateCompleted) {
		t.Fatalf("followed states %v", states)
	}
	if err := <-live; err != nil {
		t.Fatal(err)
	}
	<-s.waited
	if code := cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(stdout.String(), "Slept.") {
		t.Fatalf("run exited %d, stdout %q, stderr:\n%s", code, stdout.String(), s.errText())
	}
}
