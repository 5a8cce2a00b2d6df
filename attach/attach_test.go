package attach

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/internal/devclient"
	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/protocol/wsclient"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/tui"
)

const (
	working   = "TASK_STATE_WORKING"
	completed = "TASK_STATE_COMPLETED"
)

// streamOf collects a stream's events to its agent_end.
func streamOf(t *testing.T, s *Session, id string) []runtime.Event {
	t.Helper()
	var out []runtime.Event
	for ev, err := range s.Stream(t.Context(), id) {
		if err != nil {
			t.Fatalf("stream %s: %v", id, err)
		}
		out = append(out, ev)
	}
	return out
}

// summary is a stream as one line per event: the type and what matters.
func summary(evs []runtime.Event) string {
	var lines []string
	for _, ev := range evs {
		line := string(ev.Type)
		switch ev.Type {
		case runtime.EventMessage:
			line += " " + string(ev.Message.Role)
			for _, p := range ev.Message.Content {
				line += fmt.Sprintf(" %q", p.Text+p.Thought)
			}
		case runtime.EventSessionUpdate:
			line += " " + ev.SessionUpdate.Model
		case runtime.EventError:
			line += fmt.Sprintf(" fatal=%v %q", ev.Error.Fatal, ev.Error.Message)
		case runtime.EventAgentEnd:
			line += " " + string(ev.AgentEnd.Reason)
		case runtime.EventToolRequest:
			line += " " + ev.ToolRequest.RequestID
		case runtime.EventToolUpdate:
			line += " " + ev.ToolUpdate.RequestID
		case runtime.EventToolResponse:
			line += " " + ev.ToolResponse.RequestID
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

func checkStream(t *testing.T, got []runtime.Event, want ...string) {
	t.Helper()
	if s := summary(got); s != strings.Join(want, "\n") {
		t.Errorf("stream:\n%s\nwant:\n%s", s, strings.Join(want, "\n"))
	}
}

// sentMessage reads a SendStreamingMessage's message.
func sentMessage(t *testing.T, r rpcRequest) *a2a.Message {
	t.Helper()
	var req a2a.SendMessageRequest
	if err := json.Unmarshal(r.Params, &req); err != nil || req.Message == nil {
		t.Fatalf("params %s: %v", r.Params, err)
	}
	return req.Message
}

// The terminal's prompt goes out as SendStreamingMessage; the responses
// of its request become the stream Send named, each event once though
// the server also sends it as a notification.
func TestSendStreamRoundTrip(t *testing.T) {
	s, f := attachSession(t, nil)
	id, err := s.Send(t.Context(), runtime.TextMessage("list the files"))
	if err != nil {
		t.Fatal(err)
	}
	r := f.expect("SendStreamingMessage")
	msg := sentMessage(t, r)
	if msg.Role != a2a.MessageRoleUser || msg.Parts[0].Text() != "list the files" || msg.TaskID != "" {
		t.Errorf("sent %+v", msg)
	}
	task := taskJSON("t1", "TASK_STATE_SUBMITTED", msg.ID, "list the files")
	f.respond(r, 5, task)
	f.notify(5, task)
	f.respond(r, 6, statusUpdate("t1", working, "STATE_CHANGE", ""))
	text := statusUpdate("t1", working, "TEXT_CONTENT", `[{"text":"a.txt b.txt"}]`)
	f.respond(r, 7, text)
	f.notify(7, text)
	f.respond(r, 8, statusUpdate("t1", completed, "STATE_CHANGE", ""))
	checkStream(t, streamOf(t, s, id),
		`message user "list the files"`,
		`agent_start`,
		`session_update gemini-test`,
		`message agent "a.txt b.txt"`,
		`agent_end completed`)
	if s.Model() != "gemini-test" || s.ID() != "c1" {
		t.Errorf("model %q, id %q", s.Model(), s.ID())
	}
}

// A turn someone else starts is announced on Turns with its prompt and
// followed as a stream of its own.
func TestRemoteTurnAnnounced(t *testing.T) {
	s, f := attachSession(t, nil)
	f.write(`{"jsonrpc":"2.0","method":"session/attached","params":{"contextId":"c1","taskId":"","lastEventId":0,"replayed":0,"gap":false}}`)
	f.notify(1, taskJSON("t9", "TASK_STATE_SUBMITTED", "u9", "explain main.go"))
	f.notify(2, statusUpdate("t9", working, "THOUGHT", `[{"data":{"subject":"Reading","description":"main.go first."}}]`))
	f.notify(3, statusUpdate("t9", working, "TEXT_CONTENT", `[{"text":"It starts the server."}]`))
	f.notify(4, statusUpdate("t9", completed, "STATE_CHANGE", ""))
	turn := <-s.Turns()
	if turn.Origin != "A2A" || turn.Text != "explain main.go" || turn.StreamID == "" {
		t.Fatalf("turn %+v", turn)
	}
	checkStream(t, streamOf(t, s, turn.StreamID),
		`message user "explain main.go"`,
		`agent_start`,
		`session_update gemini-test`,
		`message agent "**Reading**\nmain.go first."`,
		`message agent "It starts the server."`,
		`agent_end completed`)
}

// The events of this terminal's own turn may come as notifications
// before its request's first response: they are held until the message
// is matched to its task, and no remote turn is announced.
func TestOwnTurnOverNotifications(t *testing.T) {
	s, f := attachSession(t, nil)
	id, err := s.Send(t.Context(), runtime.TextMessage("hi"))
	if err != nil {
		t.Fatal(err)
	}
	r := f.expect("SendStreamingMessage")
	msg := sentMessage(t, r)
	// Another turn's event comes while the message is unmatched: it is
	// held, then started as a remote turn.
	f.notify(1, statusUpdate("t0", working, "TEXT_CONTENT", `[{"text":"someone else's"}]`))
	f.notify(2, statusUpdate("t1", working, "TEXT_CONTENT", `[{"text":"hello"}]`))
	f.respond(r, 3, taskJSON("t1", working, msg.ID, "hi"))
	f.notify(4, statusUpdate("t1", completed, "STATE_CHANGE", ""))
	checkStream(t, streamOf(t, s, id),
		`message user "hi"`,
		`agent_start`,
		`session_update gemini-test`,
		`message agent "hello"`,
		`agent_end completed`)
	// The other turn was announced and has its event (it has not ended).
	turn := <-s.Turns()
	var other []runtime.Event
	for ev, err := range s.Stream(t.Context(), turn.StreamID) {
		if err != nil {
			t.Fatal(err)
		}
		if other = append(other, ev); len(other) == 4 {
			break
		}
	}
	checkStream(t, other, `message user ""`, `agent_start`, `session_update gemini-test`, `message agent "someone else's"`)
	s.mu.Lock()
	defer s.mu.Unlock()
	if got := s.byTask["t1"]; got == nil || !got.own {
		t.Errorf("t1 is not this terminal's turn: %+v", got)
	}
	if got := s.byTask["t0"]; got == nil || got.own {
		t.Errorf("t0: %+v", got)
	}
}

// The task is also matched by its history holding the message, when the
// request's responses do not bring it first.
func TestOwnTurnMatchedByItsMessage(t *testing.T) {
	s, f := attachSession(t, nil)
	id, err := s.Send(t.Context(), runtime.TextMessage("hi"))
	if err != nil {
		t.Fatal(err)
	}
	r := f.expect("SendStreamingMessage")
	msg := sentMessage(t, r)
	f.notify(1, taskJSON("t1", "TASK_STATE_SUBMITTED", msg.ID, "hi"))
	f.notify(2, statusUpdate("t1", working, "TEXT_CONTENT", `[{"text":"hello"}]`))
	f.notify(3, statusUpdate("t1", completed, "STATE_CHANGE", ""))
	checkStream(t, streamOf(t, s, id),
		`message user "hi"`, `agent_start`, `session_update gemini-test`, `message agent "hello"`, `agent_end completed`)
}

// A message answered without a task is a whole turn.
func TestAnswerWithoutTask(t *testing.T) {
	s, f := attachSession(t, nil)
	id, err := s.Send(t.Context(), runtime.TextMessage("hi"))
	if err != nil {
		t.Fatal(err)
	}
	f.respond(f.expect("SendStreamingMessage"), 0, `{"message":{"messageId":"a1","role":"ROLE_AGENT","parts":[{"text":"hello"}]}}`)
	checkStream(t, streamOf(t, s, id), `message user "hi"`, `agent_start`, `message agent "hello"`, `agent_end completed`)
}

// A message the server refuses fails its turn.
func TestSendRefused(t *testing.T) {
	s, f := attachSession(t, nil)
	id, err := s.Send(t.Context(), runtime.TextMessage("hi"))
	if err != nil {
		t.Fatal(err)
	}
	f.fail(f.expect("SendStreamingMessage"), -32602, "message: parts is empty")
	checkStream(t, streamOf(t, s, id),
		`message user "hi"`, `agent_start`, `error fatal=true "message: parts is empty"`, `agent_end failed`)
	if _, err := s.Send(t.Context(), runtime.Send{Update: &runtime.SessionUpdate{Model: "x"}}); !errors.Is(err, runtime.ErrInvalidSend) {
		t.Errorf("an update: %v", err)
	}
}

func TestAbortCancelsTheTask(t *testing.T) {
	for _, early := range []bool{false, true} {
		t.Run(fmt.Sprint("before the task id: ", early), func(t *testing.T) {
			s, f := attachSession(t, nil)
			id, err := s.Send(t.Context(), runtime.TextMessage("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if early {
				s.Abort(nil)
			}
			r := f.expect("SendStreamingMessage")
			f.respond(r, 1, taskJSON("t1", "TASK_STATE_SUBMITTED", sentMessage(t, r).ID, "hi"))
			f.respond(r, 2, statusUpdate("t1", working, "STATE_CHANGE", ""))
			if !early {
				// Abort once the stream shows the task at work.
				for ev, err := range s.Stream(t.Context(), id) {
					if err != nil {
						t.Fatal(err)
					}
					if ev.Type == runtime.EventSessionUpdate {
						break
					}
				}
				s.Abort(nil)
			}
			c := f.expect("CancelTask")
			var req a2a.CancelTaskRequest
			if err := json.Unmarshal(c.Params, &req); err != nil || req.ID != "t1" {
				t.Fatalf("CancelTask %s: %v", c.Params, err)
			}
			f.respond(c, 0, `{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_CANCELED"}}`)
			evs := streamOf(t, s, id)
			checkStream(t, evs[len(evs)-1:], `agent_end aborted`)
		})
	}
}

// runTerminal runs the interactive terminal over s with ap on a pipe, and
// returns the pipe's writer, the output and Run's result once the
// terminal shows its first frame (the approver is attached then).
func runTerminal(t *testing.T, s *Session, ap *tui.Approver) (io.Writer, *syncBuffer, <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	out := &syncBuffer{}
	cfg := tui.Config{Session: s, Approver: ap, Workspace: "/attach-test-ws", Input: pr, Output: out,
		Env: []string{"TTY_FORCE=1", "NO_COLOR=1", "TERM=xterm-256color"}, Width: 100, Height: 30}
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		errc <- tui.Run(ctx, cfg)
		pr.Close()
	}()
	t.Cleanup(func() {
		cancel()
		<-errc
	})
	<-out.wait("attach-test-ws")
	return pw, out, errc
}

// syncBuffer is the terminal's output, which a test can wait on.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	waiting []waiter
}

type waiter struct {
	text string
	ch   chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	s.waiting = slices.DeleteFunc(s.waiting, func(w waiter) bool {
		if strings.Contains(s.b.String(), w.text) {
			close(w.ch)
			return true
		}
		return false
	})
	return n, err
}

// wait returns a channel closed once text has been written.
func (s *syncBuffer) wait(text string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	if strings.Contains(s.b.String(), text) {
		close(ch)
	} else {
		s.waiting = append(s.waiting, waiter{text, ch})
	}
	return ch
}

// pendingTurn starts a remote turn whose shell command waits for
// confirmation, and waits for the terminal's dialog.
func pendingTurn(t *testing.T, s *Session, f *fakeServer, out *syncBuffer) tui.Turn {
	t.Helper()
	dialog := out.wait("Allow execution of")
	f.notify(1, taskJSON("t1", working, "u1", "run the tests"))
	f.notify(2, statusUpdate("t1", working, "TOOL_CALL_UPDATE", toolCall("c1", "PENDING", confirmation)))
	f.notify(3, statusUpdate("t1", "TASK_STATE_INPUT_REQUIRED", "STATE_CHANGE", ""))
	turn := <-s.Turns()
	<-dialog
	return turn
}

// A confirmation answered in the terminal goes to the server as the
// development-tool extension's ToolCallConfirmation for the task.
func TestApprovalAnsweredInTheTerminal(t *testing.T) {
	ap := tui.NewApprover()
	s, f := attachSession(t, ap)
	in, out, _ := runTerminal(t, s, ap)
	turn := pendingTurn(t, s, f, out)
	io.WriteString(in, "1") // Allow once

	r := f.expect("SendStreamingMessage")
	msg := sentMessage(t, r)
	if msg.TaskID != "t1" || msg.Role != a2a.MessageRoleUser || len(msg.Parts) != 1 {
		t.Fatalf("sent %+v", msg)
	}
	c, ok, err := devtool.ParseConfirmation(msg.Parts[0].Data())
	if !ok || err != nil || c.ToolCallID != "c1" || c.SelectedOptionID != devtool.OptionProceedOnce || c.FileDetails != nil {
		t.Fatalf("confirmation %+v (%v, %v) from %s", c, ok, err, r.Params)
	}
	f.respond(r, 4, statusUpdate("t1", working, "TOOL_CALL_UPDATE", toolCall("c1", "EXECUTING", `,"live_content":"ok\n"`)))
	f.respond(r, 5, statusUpdate("t1", working, "TOOL_CALL_UPDATE", toolCall("c1", "SUCCEEDED", `,"output":{"text":"ok\n"}`)))
	f.respond(r, 6, statusUpdate("t1", completed, "STATE_CHANGE", ""))
	checkStream(t, streamOf(t, s, turn.StreamID),
		`message user "run the tests"`, `agent_start`, `session_update gemini-test`,
		`tool_request c1`, `tool_update c1`, `tool_response c1`, `agent_end completed`)
}

// An answer the server refuses — someone answered first — is a warning
// on the turn, which goes on.
func TestApprovalAnsweredFirstElsewhere(t *testing.T) {
	ap := tui.NewApprover()
	s, f := attachSession(t, ap)
	in, out, _ := runTerminal(t, s, ap)
	turn := pendingTurn(t, s, f, out)
	io.WriteString(in, "3") // No, suggest changes (the server offers no "all future sessions" answer)
	r := f.expect("SendStreamingMessage")
	if c, _, _ := devtool.ParseConfirmation(sentMessage(t, r).Parts[0].Data()); c.SelectedOptionID != devtool.OptionCancel {
		t.Errorf("answer %+v", c)
	}
	const refused = `tool call c1 of task t1 was already answered (proceed_once) by client "vscode"; this confirmation is a duplicate and was ignored`
	f.fail(r, -32600, refused)
	// The warning is on the stream before the turn goes on.
	for ev, err := range s.Stream(t.Context(), turn.StreamID) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == runtime.EventError {
			checkStream(t, []runtime.Event{ev}, fmt.Sprintf("error fatal=false %q", refused))
			break
		}
	}
	f.notify(4, statusUpdate("t1", working, "TOOL_CALL_UPDATE", toolCall("c1", "EXECUTING", "")))
	f.notify(5, statusUpdate("t1", completed, "STATE_CHANGE", ""))
	evs := streamOf(t, s, turn.StreamID)
	checkStream(t, evs[len(evs)-1:], `agent_end completed`)
}

// A dialog closes by itself when the call starts executing: someone else
// answered. The terminal sends nothing.
func TestApprovalWithdrawnWhenExecutingArrives(t *testing.T) {
	ap := tui.NewApprover()
	s, f := attachSession(t, ap)
	_, out, _ := runTerminal(t, s, ap)
	turn := pendingTurn(t, s, f, out)
	f.notify(4, statusUpdate("t1", working, "TOOL_CALL_UPDATE", toolCall("c1", "EXECUTING", "")))
	// The update that shows the call running withdraws its dialog.
	for ev, err := range s.Stream(t.Context(), turn.StreamID) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == runtime.EventToolUpdate {
			break
		}
	}
	s.mu.Lock()
	open := len(s.approvals)
	s.mu.Unlock()
	if open != 0 {
		t.Fatalf("%d approvals still open", open)
	}
	// The dialog's goroutine returns.
	s.approving.Wait()
	// The next request the server reads is this one, not an answer.
	done := make(chan error, 1)
	go func() {
		_, err := s.Commands(t.Context())
		done <- err
	}()
	r := f.expect("commands/get")
	f.respond(r, 0, `{"commands":[]}`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// An edit the user modified carries its content in file_details.
func TestConfirmationWithModifiedContent(t *testing.T) {
	s, f := attachSession(t, nil)
	f.notify(1, taskJSON("t1", working, "u1", "write it"))
	tc := devtool.ToolCall{ToolCallID: "c1", ToolName: "write_file", Status: devtool.StatusPending,
		InputParameters:     map[string]any{"file_path": "a.txt", "content": "old plan\n"},
		ConfirmationRequest: &devtool.ConfirmationRequest{FileEditDetails: &devtool.FileDiff{FileName: "a.txt", FilePath: "/ws/a.txt", NewContent: "old plan\n"}}}
	req := devclient.ApprovalRequest(tc)
	if req.Kind != "edit" || req.Diff == nil || req.Diff.After != "old plan\n" || req.Diff.Path != "/ws/a.txt" {
		t.Fatalf("request %+v", req)
	}
	args, err := runtime.ModifiedArgs(req, "my plan\n")
	if err != nil {
		t.Fatal(err)
	}
	<-s.Turns() // the task's turn is known
	s.mu.Lock()
	turn := s.byTask["t1"]
	s.mu.Unlock()
	go s.confirm(turn, req, runtime.ProceedOnce, args)
	r := f.expect("SendStreamingMessage")
	c, _, err := devtool.ParseConfirmation(sentMessage(t, r).Parts[0].Data())
	if err != nil || c.FileDetails == nil || c.FileDetails.NewContent != "my plan\n" || c.SelectedOptionID != "proceed_once" {
		t.Errorf("confirmation %+v: %v", c, err)
	}
	f.respond(r, 2, statusUpdate("t1", completed, "STATE_CHANGE", ""))
}

func TestCommandsAndRun(t *testing.T) {
	s, f := attachSession(t, nil)
	type result struct {
		cmds []devtool.SlashCommand
		err  error
	}
	got := make(chan result, 1)
	go func() {
		cmds, err := s.Commands(t.Context())
		got <- result{cmds, err}
	}()
	f.respond(f.expect("commands/get"), 0, `{"commands":[{"name":"memory","description":"Manage memory","arguments":[],"sub_commands":[{"name":"show","description":"Show","arguments":[],"sub_commands":[]}]}]}`)
	res := <-got
	if res.err != nil || len(res.cmds) != 1 || res.cmds[0].SubCommands[0].Name != "show" {
		t.Fatalf("%+v", res)
	}

	var printed []string
	ran := make(chan error, 1)
	go func() {
		ran <- s.Run(t.Context(), []string{"memory", "show"}, "", func(s string) { printed = append(printed, s) })
	}()
	r := f.expect("command/execute")
	var req devtool.ExecuteSlashCommandRequest
	if err := json.Unmarshal(r.Params, &req); err != nil || !slices.Equal(req.CommandPath, []string{"memory", "show"}) {
		t.Fatalf("params %s: %v", r.Params, err)
	}
	f.respond(r, 0, `{"execution_id":"x1","status":"STARTED"}`)
	f.respond(r, 0, statusUpdate("x1", working, "STATE_CHANGE", ""))
	f.respond(r, 0, statusUpdate("x1", working, "TEXT_CONTENT", `[{"text":"Memory is empty."}]`))
	f.respond(r, 0, statusUpdate("x1", completed, "STATE_CHANGE", ""))
	if err := <-ran; err != nil || !slices.Equal(printed, []string{"Memory is empty."}) {
		t.Fatalf("%v, printed %q", err, printed)
	}

	go func() { ran <- s.Run(t.Context(), []string{"nope"}, "", nil) }()
	f.respond(f.expect("command/execute"), 0, `{"execution_id":"x2","status":"FAILED_TO_START","message":"unknown command /nope (commands: memory)"}`)
	if err := <-ran; err == nil || err.Error() != "unknown command /nope (commands: memory)" {
		t.Errorf("err = %v", err)
	}

	go func() { ran <- s.Run(t.Context(), []string{"model"}, "x", nil) }()
	r = f.expect("command/execute")
	f.respond(r, 0, `{"execution_id":"x3","status":"STARTED"}`)
	f.write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"statusUpdate":{"taskId":"x3","contextId":"c1","status":{"state":"TASK_STATE_FAILED"},"metadata":{%q:{"kind":"STATE_CHANGE","error":"unknown model x"}}}}}`, r.ID, devURI))
	if err := <-ran; err == nil || err.Error() != "unknown model x" {
		t.Errorf("err = %v", err)
	}
}

func TestParseCommand(t *testing.T) {
	cmds := []devtool.SlashCommand{
		{Name: "memory", SubCommands: []devtool.SlashCommand{{Name: "show"}, {Name: "add"}}},
		{Name: "model", Arguments: []devtool.SlashCommandArgument{{Name: "name"}}},
		{Name: "tools", Arguments: []devtool.SlashCommandArgument{{Name: "desc"}}, SubCommands: []devtool.SlashCommand{{Name: "list"}}},
	}
	cases := []struct {
		line string
		path []string
		args string
		ok   bool
	}{
		{"/memory add buy milk", []string{"memory", "add"}, "buy milk", true},
		{"  /memory  ", []string{"memory"}, "", true},
		{"/memory bogus x", []string{"memory", "bogus"}, "x", true},
		{"/model gemini-2.5-flash", []string{"model"}, "gemini-2.5-flash", true},
		{"/tools desc", []string{"tools"}, "desc", true},
		{"/tools list", []string{"tools", "list"}, "", true},
		{"/unknown a b", []string{"unknown"}, "a b", true},
		{"/", nil, "", true},
		{"//comment", nil, "", false},
		{"/* note */", nil, "", false},
		{"hello /memory", nil, "", false},
	}
	for _, c := range cases {
		path, args, ok := ParseCommand(cmds, c.line)
		if !slices.Equal(path, c.path) || args != c.args || ok != c.ok {
			t.Errorf("%q: %q %q %v", c.line, path, args, ok)
		}
	}
}

// A server that closes the connection ends every open turn with its
// reason; the session reports it.
func TestConnectionLost(t *testing.T) {
	s, f := attachSession(t, nil)
	id, err := s.Send(t.Context(), runtime.TextMessage("hi"))
	if err != nil {
		t.Fatal(err)
	}
	r := f.expect("SendStreamingMessage")
	f.respond(r, 1, taskJSON("t1", working, sentMessage(t, r).ID, "hi"))
	f.ws.Close(4003, "the terminal switched to context c2")
	evs := streamOf(t, s, id)
	last := summary(evs[len(evs)-2:])
	if !strings.Contains(last, "error fatal=true") || !strings.Contains(last, "4003") || !strings.HasSuffix(last, "agent_end failed") {
		t.Errorf("stream ends with:\n%s", last)
	}
	<-s.Done()
	var ce *wsclient.CloseError
	if err := s.Err(); !errors.Is(err, ErrLost) || !errors.As(err, &ce) || ce.Code != 4003 {
		t.Errorf("Err = %v", err)
	}
	if _, err := s.Send(t.Context(), runtime.TextMessage("again")); !errors.Is(err, ErrLost) {
		t.Errorf("Send after the loss: %v", err)
	}
}

// Close ends the open turns aborted, and the session reports no error.
func TestCloseEndsTurns(t *testing.T) {
	s, f := attachSession(t, nil)
	id, err := s.Send(t.Context(), runtime.TextMessage("hi"))
	if err != nil {
		t.Fatal(err)
	}
	f.expect("SendStreamingMessage")
	go func() {
		// The server answers the client's close frame.
		f.ws.Read(t.Context())
	}()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	evs := s.Events()
	checkStream(t, evs[len(evs)-1:], `agent_end aborted`)
	if evs[len(evs)-1].StreamID != id || s.Err() != nil {
		t.Errorf("stream %s, err %v", evs[len(evs)-1].StreamID, s.Err())
	}
}
