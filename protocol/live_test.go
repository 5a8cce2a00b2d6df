package protocol_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1/pbconv"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/protocol"
	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/protocol/liveclient"
)

// The method's description as a client built from A2A's proposal has it.
var liveDesc = &grpc.StreamDesc{StreamName: "SendLiveMessage", ServerStreams: true, ClientStreams: true}

const liveMethod = "/lf.a2a.v1.A2AService/SendLiveMessage"

// liveConn is a gRPC connection to the harness.
func (h *harness) liveConn(t testing.TB) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(strings.TrimPrefix(h.url, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// liveStream is a SendLiveMessage stream driven with a2a-go's generated
// types, as a client of the proposal would drive it.
type liveStream struct {
	t      testing.TB
	cs     grpc.ClientStream
	cancel context.CancelFunc
}

// liveOpts are a stream's metadata: the extension (unless plain) and a
// client name.
type liveOpts struct {
	plain bool
	name  string
	md    []string
}

// openLive opens a stream on conn with the token.
func openLive(t testing.TB, conn *grpc.ClientConn, o liveOpts) *liveStream {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	md := []string{"authorization", "Bearer " + testToken}
	if !o.plain {
		md = append(md, "a2a-extensions", devtool.URI)
	}
	if o.name != "" {
		md = append(md, "agentry-client-name", o.name)
	}
	md = append(md, o.md...)
	cs, err := conn.NewStream(metadata.AppendToOutgoingContext(ctx, md...), liveDesc, liveMethod)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(cancel)
	return &liveStream{t: t, cs: cs, cancel: cancel}
}

// send sends a message on the stream.
func (l *liveStream) send(m *a2a.Message) {
	l.t.Helper()
	pb, err := pbconv.ToProtoSendMessageRequest(&a2a.SendMessageRequest{Message: m})
	if err != nil {
		l.t.Fatal(err)
	}
	l.sendPB(pb)
}

func (l *liveStream) sendPB(pb *a2apb.SendMessageRequest) {
	l.t.Helper()
	if err := l.cs.SendMsg(pb); err != nil && !errors.Is(err, io.EOF) {
		// io.EOF: the server ended the stream; Recv says how.
		l.t.Fatalf("send: %v", err)
	}
}

// recv reads the next event: io.EOF once the server half-closed with
// status OK, the status error otherwise.
func (l *liveStream) recv() (a2a.Event, error) {
	var r a2apb.StreamResponse
	if err := l.cs.RecvMsg(&r); err != nil {
		return nil, err
	}
	ev, err := pbconv.FromProtoStreamResponse(&r)
	if err != nil {
		l.t.Fatalf("the server sent a response a2a-go cannot read: %v", err)
	}
	return ev, nil
}

// until reads events up to the first stop accepts, failing if the stream
// ends first.
func (l *liveStream) until(stop func(a2a.Event) bool) []a2a.Event {
	l.t.Helper()
	var out []a2a.Event
	for {
		ev, err := l.recv()
		if err != nil {
			l.t.Fatalf("the stream ended (%v) after %s", err, describe(out))
		}
		out = append(out, ev)
		if stop(ev) {
			return out
		}
	}
}

// rest reads the events left and the error that ended the stream (io.EOF
// for status OK).
func (l *liveStream) rest() ([]a2a.Event, error) {
	var out []a2a.Event
	for {
		ev, err := l.recv()
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

// toEnd reads the events left, failing unless the server half-closes
// with status OK.
func (l *liveStream) toEnd() []a2a.Event {
	l.t.Helper()
	evs, err := l.rest()
	if err != io.EOF {
		l.t.Fatalf("the stream ended with %v after %s, want status OK", err, describe(evs))
	}
	return evs
}

// failsWith reads the events left and checks the stream's error.
func (l *liveStream) failsWith(code codes.Code, want string) []a2a.Event {
	l.t.Helper()
	evs, err := l.rest()
	if status.Code(err) != code || !strings.Contains(status.Convert(err).Message(), want) {
		l.t.Fatalf("the stream ended with %v after %s, want %s naming %q", err, describe(evs), code, want)
	}
	return evs
}

// stateIs accepts a status update of state s, or a task in it.
func stateIs(s a2a.TaskState) func(a2a.Event) bool {
	return func(ev a2a.Event) bool {
		switch e := ev.(type) {
		case *a2a.TaskStatusUpdateEvent:
			return e.Status.State == s
		case *a2a.Task:
			return e.Status.State == s
		}
		return false
	}
}

// pendingIn returns the call a PENDING update with a confirmation request
// among evs asks about.
func pendingIn(t testing.TB, evs []a2a.Event) string {
	t.Helper()
	for _, ev := range evs {
		if u, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
			if tc := toolCallOf(u); tc != nil && tc.ConfirmationRequest != nil {
				return tc.ToolCallID
			}
		}
	}
	t.Fatalf("no confirmation request in %s", describe(evs))
	return ""
}

// answer is a message of a live stream: text or data, no ids (the
// stream's own).
func answer(parts ...*a2a.Part) *a2a.Message {
	return a2a.NewMessage(a2a.MessageRoleUser, parts...)
}

func confirmPart(call, option string) *a2a.Part {
	return a2a.NewDataPart(map[string]any{"tool_call_id": call, "selected_option_id": option})
}

// twoShellCalls is a model that asks for two shell commands, one at a
// time, then answers.
func twoShellCalls() []string {
	return []string{
		callTurn("", "run_shell_command", map[string]any{"command": "echo one > one.txt"}),
		callTurn("", "run_shell_command", map[string]any{"command": "echo two > two.txt"}),
		textTurn("Both ran."),
	}
}

// gatedCommand is a shell command that runs until the test opens its gate
// (openGate): a run the test holds in its working state.
const gatedCommand = "while [ ! -f gate ]; do sleep 0.01; done"

func openGate(t testing.TB, h *harness) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(h.settings.Workspace, "gate"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestLiveTwoConfirmationsInline: one stream starts a task, answers its
// two confirmations inline — a ToolCallConfirmation, then the plain text
// "yes" — with no ids, and the server half-closes after completed.
func TestLiveTwoConfirmationsInline(t *testing.T) {
	h := newHarness(t, twoShellCalls())
	l := openLive(t, h.liveConn(t), liveOpts{})
	l.send(userMessage("run both", ""))
	first := l.until(stateIs(a2a.TaskStateInputRequired))
	task, ok := first[0].(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("first event %s, want the submitted task", describe(first[:1]))
	}
	l.send(answer(confirmPart(pendingIn(t, first), "proceed_once")))
	second := l.until(stateIs(a2a.TaskStateInputRequired))
	if !strings.Contains(describe(second), "TOOL_CALL_UPDATE:working/EXECUTING") {
		t.Fatalf("after the first answer: %s", describe(second))
	}
	l.send(answer(a2a.NewTextPart("yes")))
	rest := l.toEnd()
	if got := describe(rest); !strings.Contains(got, "TOOL_CALL_UPDATE:working/EXECUTING") || !strings.HasSuffix(got, "STATE_CHANGE:completed") {
		t.Fatalf("after the second answer: %s", got)
	}
	if got := textOf(rest); got != "Both ran." {
		t.Fatalf("answer %q", got)
	}
	for _, ev := range append(append(first[1:], second...), rest...) {
		if ev.TaskInfo().TaskID != task.ID {
			t.Fatalf("an event of another task: %s", describeOne(ev))
		}
	}
}

// TestLiveReplyThatIsNoReply: text that is none of the replies while the
// task waits is refused (InvalidArgument naming the replies), the
// stream ends, and the task still waits: a reconnecting stream gets it
// input-required and answers it.
func TestLiveReplyThatIsNoReply(t *testing.T) {
	h := newHarness(t, twoShellCalls()[1:])
	conn := h.liveConn(t)
	l := openLive(t, conn, liveOpts{})
	l.send(userMessage("run it", ""))
	evs := l.until(stateIs(a2a.TaskStateInputRequired))
	task := evs[0].(*a2a.Task)
	l.send(answer(a2a.NewTextPart("maybe later")))
	l.failsWith(codes.InvalidArgument, "yes (or y)")
	if got := waitState(t, h, task.ID, a2a.TaskStateInputRequired); got.Status.State != a2a.TaskStateInputRequired {
		t.Fatal(got.Status.State)
	}
	back := openLive(t, conn, liveOpts{})
	back.send(reconnect(task.ID))
	snap, err := back.recv()
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := snap.(*a2a.Task); !ok || st.Status.State != a2a.TaskStateInputRequired || st.ID != task.ID {
		t.Fatalf("reconnect's first event %s, want the task input-required", describeOne(snap))
	}
	back.send(answer(a2a.NewTextPart("y")))
	if got := describe(back.toEnd()); !strings.HasSuffix(got, "STATE_CHANGE:completed") {
		t.Fatalf("after the answer: %s", got)
	}
}

// reconnect is the message that reattaches a stream to a task: its id,
// no parts.
func reconnect(id a2a.TaskID) *a2a.Message {
	m := a2a.NewMessage(a2a.MessageRoleUser)
	m.TaskID = id
	return m
}

// TestLiveReconnect: a stream that reconnects to a running task gets its
// state as a task, then its events to the end; one that reconnects to a
// finished task gets the final task and the end of the stream; a stream
// whose first message answers a parked task gets the task, then the rest
// of the run.
func TestLiveReconnect(t *testing.T) {
	h := newHarness(t, twoShellCalls())
	conn := h.liveConn(t)
	first := openLive(t, conn, liveOpts{})
	first.send(userMessage("run both", ""))
	evs := first.until(stateIs(a2a.TaskStateInputRequired))
	task := evs[0].(*a2a.Task)
	call := pendingIn(t, evs)
	first.cancel() // the client goes away; its task waits

	answering := openLive(t, conn, liveOpts{})
	m := answer(confirmPart(call, "proceed_once"))
	m.TaskID = task.ID
	answering.send(m)
	snap, err := answering.recv()
	if st, ok := snap.(*a2a.Task); err != nil || !ok || st.ID != task.ID || st.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("first event %v (%v), want the task as it waited", snap, err)
	}
	got := answering.until(stateIs(a2a.TaskStateInputRequired))
	if !strings.Contains(describe(got), "EXECUTING") {
		t.Fatalf("after the answer: %s", describe(got))
	}
	answering.cancel()

	back := openLive(t, conn, liveOpts{})
	back.send(reconnect(task.ID))
	got = back.until(stateIs(a2a.TaskStateInputRequired))
	if len(got) != 1 {
		t.Fatalf("reconnecting to a waiting task: %s, want the task alone", describe(got))
	}
	back.send(answer(confirmPart(pendingIn(t, []a2a.Event{lastStatus(t, got[0].(*a2a.Task))}), "proceed_once")))
	if got := describe(back.toEnd()); !strings.HasSuffix(got, "STATE_CHANGE:completed") {
		t.Fatalf("to the end: %s", got)
	}

	done := openLive(t, conn, liveOpts{})
	done.send(reconnect(task.ID))
	got = done.toEnd()
	if len(got) != 1 || !stateIs(a2a.TaskStateCompleted)(got[0]) {
		t.Fatalf("reconnecting to a finished task: %s, want the completed task", describe(got))
	}
}

// lastStatus is the status update a task's status message is, for
// reading the confirmation request of a task snapshot: the task's
// status message is the PENDING call's update before input-required's.
func lastStatus(t testing.TB, task *a2a.Task) a2a.Event {
	t.Helper()
	for i := len(task.History) - 1; i >= 0; i-- {
		u := &a2a.TaskStatusUpdateEvent{TaskID: task.ID, ContextID: task.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: task.History[i]}}
		if tc := toolCallOf(u); tc != nil && tc.ConfirmationRequest != nil {
			return u
		}
	}
	t.Fatalf("task %s holds no confirmation request", task.ID)
	return nil
}

// TestLiveErrors: every refusal's code and what its message names.
func TestLiveErrors(t *testing.T) {
	h := newHarness(t, []string{
		callTurn("", "write_file", map[string]any{"file_path": "a.txt", "content": "x"}),
		textTurn("written"),
		textTurn("other"),
	})
	conn := h.liveConn(t)
	parked := openLive(t, conn, liveOpts{})
	parked.send(userMessage("write", ""))
	evs := parked.until(stateIs(a2a.TaskStateInputRequired))
	task := evs[0].(*a2a.Task)
	call := pendingIn(t, evs)
	msg := func(text string, taskID a2a.TaskID, contextID string) *a2a.Message {
		m := answer(a2a.NewTextPart(text))
		m.TaskID, m.ContextID = taskID, contextID
		return m
	}
	pbPart := func(p *a2apb.Part) *a2apb.SendMessageRequest {
		return &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "m", Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{p}}}
	}
	for _, c := range []struct {
		name  string
		opts  liveOpts
		first func(l *liveStream)
		code  codes.Code
		want  string
	}{
		{"closed before a message", liveOpts{}, func(l *liveStream) { _ = l.cs.CloseSend() }, codes.InvalidArgument, "before its first message"},
		{"no message", liveOpts{}, func(l *liveStream) { l.sendPB(&a2apb.SendMessageRequest{}) }, codes.InvalidArgument, "message is required"},
		{"no message id", liveOpts{}, func(l *liveStream) {
			l.sendPB(&a2apb.SendMessageRequest{Message: &a2apb.Message{Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "x"}}}}})
		}, codes.InvalidArgument, "message id"},
		{"unknown part kind", liveOpts{}, func(l *liveStream) { l.sendPB(pbPart(&a2apb.Part{})) }, codes.InvalidArgument, "message.parts[0] has no content"},
		{"no parts, no task", liveOpts{}, func(l *liveStream) { l.send(answer()) }, codes.InvalidArgument, "message.parts"},
		{"bad client name", liveOpts{name: strings.Repeat("n", 65)}, func(l *liveStream) { l.send(userMessage("x", "")) }, codes.InvalidArgument, "agentry-client-name"},
		{"unknown task", liveOpts{}, func(l *liveStream) { l.send(reconnect("no-such-task")) }, codes.NotFound, "no-such-task"},
		{"answer to an unknown task", liveOpts{}, func(l *liveStream) { l.send(msg("yes", "no-such-task", "")) }, codes.NotFound, ""},
		{"task of another context", liveOpts{}, func(l *liveStream) { l.send(msg("yes", task.ID, "other")) }, codes.InvalidArgument, "is not the context of task"},
		{"reconnect in another context", liveOpts{}, func(l *liveStream) {
			m := reconnect(task.ID)
			m.ContextID = "other"
			l.send(m)
		}, codes.InvalidArgument, "is not the context of task"},
		{"a refused reply", liveOpts{}, func(l *liveStream) { l.send(msg("perhaps", task.ID, "")) }, codes.InvalidArgument, "yes (or y)"},
		{"wrong tool call", liveOpts{}, func(l *liveStream) {
			m := answer(confirmPart("nope", "proceed_once"))
			m.TaskID = task.ID
			l.send(m)
		}, codes.InvalidArgument, "no tool call nope"},
		{"new task on the busy context", liveOpts{}, func(l *liveStream) { l.send(msg("another", "", task.ContextID)) }, codes.FailedPrecondition, "waiting for a confirmation of tool call " + call},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := openLive(t, conn, c.opts)
			c.first(l)
			if evs := l.failsWith(c.code, c.want); len(evs) > 0 {
				t.Fatalf("events before the error: %s", describe(evs))
			}
		})
	}
	// The task still waits: none of that touched it.
	if got := waitState(t, h, task.ID, a2a.TaskStateInputRequired); got.Status.State != a2a.TaskStateInputRequired {
		t.Fatal(got.Status.State)
	}

	t.Run("a second first message on an open stream", func(t *testing.T) {
		for _, m := range []*a2a.Message{msg("yes", "other-task", ""), msg("yes", "", "other-context")} {
			l := openLive(t, conn, liveOpts{})
			l.send(reconnect(task.ID))
			l.until(stateIs(a2a.TaskStateInputRequired))
			l.send(m)
			l.failsWith(codes.InvalidArgument, "this stream")
		}
	})
	t.Run("unknown part kind later", func(t *testing.T) {
		l := openLive(t, conn, liveOpts{})
		l.send(reconnect(task.ID))
		l.until(stateIs(a2a.TaskStateInputRequired))
		l.sendPB(pbPart(&a2apb.Part{}))
		l.failsWith(codes.InvalidArgument, "message.parts[0] has no content")
	})

	// Answered; then any message while it runs or after it ended is out
	// of turn.
	parked.send(answer(confirmPart(call, "proceed_once")))
	parked.toEnd()
	t.Run("answer to a finished task", func(t *testing.T) {
		l := openLive(t, conn, liveOpts{})
		l.send(msg("yes", task.ID, ""))
		l.failsWith(codes.FailedPrecondition, "is completed and takes no more messages")
	})
	t.Run("late duplicate", func(t *testing.T) {
		l := openLive(t, conn, liveOpts{})
		m := answer(confirmPart(call, "cancel"))
		m.TaskID = task.ID
		l.send(m)
		l.failsWith(codes.FailedPrecondition, "already answered (proceed_once by a client)")
	})
}

// TestLiveNotOnTheHTTPBindings: JSON-RPC answers SendLiveMessage with
// method not found and REST with 501, both naming the gRPC binding.
func TestLiveNotOnTheHTTPBindings(t *testing.T) {
	h := newHarness(t, nil)
	hd := map[string]string{"Authorization": "Bearer " + testToken, "Content-Type": "application/json"}
	_, body := h.raw("POST", "/", `{"jsonrpc":"2.0","id":1,"method":"SendLiveMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`, hd)
	wantRPC(t, body, -32601, "served on the gRPC binding only")
	for _, path := range []string{"/rest/message:live", "/rest/message:sendLive"} {
		code, body := h.raw("POST", path, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, hd)
		wantREST(t, code, body, 501, "METHOD_NOT_FOUND", "served on the gRPC binding only")
	}
}

// TestLiveSecondStreamMultiplexes: a second stream on a task receives its
// events as the first does and may answer; the first answer wins, and the
// stream whose answer came second ends FailedPrecondition naming the
// task's state and who answered.
func TestLiveSecondStreamMultiplexes(t *testing.T) {
	h := newHarness(t, []string{
		callTurn("", "run_shell_command", map[string]any{"command": "echo one > one.txt"}),
		callTurn("", "run_shell_command", map[string]any{"command": gatedCommand}),
		textTurn("Both ran."),
	})
	conn := h.liveConn(t)
	a := openLive(t, conn, liveOpts{name: "a"})
	a.send(userMessage("run both", ""))
	evs := a.until(stateIs(a2a.TaskStateInputRequired))
	task := evs[0].(*a2a.Task)
	b := openLive(t, conn, liveOpts{name: "b"})
	b.send(reconnect(task.ID))
	b.until(stateIs(a2a.TaskStateInputRequired)) // the task as it waits

	a.send(answer(confirmPart(pendingIn(t, evs), "proceed_once")))
	gotA := a.until(stateIs(a2a.TaskStateInputRequired))
	gotB := b.until(stateIs(a2a.TaskStateInputRequired))
	if describe(gotA) != describe(gotB) {
		t.Fatalf("the streams saw different events:\n a: %s\n b: %s", describe(gotA), describe(gotB))
	}
	second := pendingIn(t, gotB)
	b.send(answer(confirmPart(second, "proceed_once")))
	b.until(executing)
	a.send(answer(a2a.NewTextPart("yes")))
	evs = a.failsWith(codes.FailedPrecondition, `is working, not waiting for input: tool call `+second+` was already answered (proceed_once) by client "b"`)
	openGate(t, h)
	if got := describe(b.toEnd()); !strings.HasSuffix(got, "STATE_CHANGE:completed") {
		t.Fatalf("b to the end: %s", got)
	}
	_ = evs
}

// TestLiveConcurrentAnswers: two streams answer the same question at
// once; exactly one answer is taken, the other stream ends
// FailedPrecondition, and the run goes on once.
func TestLiveConcurrentAnswers(t *testing.T) {
	for range 5 {
		h := newHarness(t, []string{callTurn("", "run_shell_command", map[string]any{"command": gatedCommand}), textTurn("Ran.")})
		conn := h.liveConn(t)
		a := openLive(t, conn, liveOpts{name: "a"})
		a.send(userMessage("run it", ""))
		evs := a.until(stateIs(a2a.TaskStateInputRequired))
		task := evs[0].(*a2a.Task)
		b := openLive(t, conn, liveOpts{name: "b"})
		b.send(reconnect(task.ID))
		b.until(stateIs(a2a.TaskStateInputRequired))
		call := pendingIn(t, evs)
		results := make(chan error, 2)
		for _, l := range []*liveStream{a, b} {
			go func() {
				if err := l.cs.SendMsg(mustPB(t, answer(confirmPart(call, "proceed_once")))); err != nil && err != io.EOF {
					results <- err
					return
				}
				_, err := l.rest()
				results <- err
			}()
		}
		var ok, lost int
		for i := range 2 {
			err := <-results
			if i == 0 {
				// The loser's answer is refused while the command runs.
				openGate(t, h)
			}
			switch {
			case err == io.EOF:
				ok++
			case status.Code(err) == codes.FailedPrecondition && strings.Contains(err.Error(), "already answered"):
				lost++
			default:
				t.Fatalf("an answer ended %v", err)
			}
		}
		if ok != 1 || lost != 1 {
			t.Fatalf("%d streams completed and %d lost, want one each", ok, lost)
		}
		done := waitState(t, h, task.ID, a2a.TaskStateCompleted)
		runs := 0
		for _, m := range done.History {
			if tc := toolCallOf(&a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{Message: m}}); tc != nil && tc.Status == devtool.StatusExecuting && tc.LiveContent == "" {
				runs++
			}
		}
		if runs != 1 {
			t.Fatalf("the call ran %d times", runs)
		}
	}
}

func mustPB(t testing.TB, m *a2a.Message) *a2apb.SendMessageRequest {
	t.Helper()
	pb, err := pbconv.ToProtoSendMessageRequest(&a2a.SendMessageRequest{Message: m})
	if err != nil {
		t.Fatal(err)
	}
	return pb
}

// TestLiveClientLeaves: a client that cancels its stream while its task
// runs gets the server's disconnect policy, as an SSE client does —
// unless another live stream still follows the task.
func TestLiveClientLeaves(t *testing.T) {
	t.Run("abort", func(t *testing.T) {
		h := newHarness(t, []string{callTurn("", "run_shell_command", map[string]any{"command": "sleep 30"}), textTurn("never")},
			yolo, onDisconnect(protocol.DisconnectAbort))
		l := openLive(t, h.liveConn(t), liveOpts{})
		l.send(userMessage("sleep", ""))
		evs := l.until(executing)
		l.cancel()
		task := waitState(t, h, evs[0].(*a2a.Task).ID, a2a.TaskStateCanceled)
		if msg := task.Status.Message; msg == nil || msg.Parts[0].Text() != "Execution aborted by client." {
			t.Fatalf("status message %+v", msg)
		}
	})
	t.Run("another stream follows", func(t *testing.T) {
		h := newHarness(t, []string{callTurn("", "run_shell_command", map[string]any{"command": gatedCommand}), textTurn("Ran.")},
			yolo, onDisconnect(protocol.DisconnectAbort))
		conn := h.liveConn(t)
		l := openLive(t, conn, liveOpts{})
		l.send(userMessage("wait", ""))
		evs := l.until(executing)
		id := evs[0].(*a2a.Task).ID
		other := openLive(t, conn, liveOpts{})
		other.send(reconnect(id))
		other.recv()
		proctest.Eventually(t, "two streams on the task", func() bool { return protocol.LiveStreams(h.srv, id) == 2 })
		l.cancel()
		proctest.Eventually(t, "the first stream gone", func() bool { return protocol.LiveStreams(h.srv, id) == 1 })
		openGate(t, h)
		if got := describe(other.toEnd()); !strings.HasSuffix(got, "STATE_CHANGE:completed") {
			t.Fatalf("the run was not left to finish: %s", got)
		}
	})
}

// TestLiveCancelTask: a task cancelled through another binding while its
// live stream waits ends the stream: the canceled update, then status OK.
func TestLiveCancelTask(t *testing.T) {
	h := newHarness(t, twoShellCalls())
	l := openLive(t, h.liveConn(t), liveOpts{})
	l.send(userMessage("run both", ""))
	evs := l.until(stateIs(a2a.TaskStateInputRequired))
	task := evs[0].(*a2a.Task)
	if _, err := h.client("jsonrpc").CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: task.ID}); err != nil {
		t.Fatal(err)
	}
	if got := describe(l.toEnd()); !strings.HasSuffix(got, "STATE_CHANGE:canceled") {
		t.Fatalf("after the cancel: %s", got)
	}
	if _, err := os.Stat(filepath.Join(h.settings.Workspace, "one.txt")); err == nil {
		t.Fatal("the declined command ran")
	}
}

// TestLiveCloseSend: a client that half-closes its side is followed to
// the task's next input-required, or to its end, then the stream ends
// with status OK.
func TestLiveCloseSend(t *testing.T) {
	t.Run("to the next question", func(t *testing.T) {
		h := newHarness(t, twoShellCalls())
		l := openLive(t, h.liveConn(t), liveOpts{})
		l.send(userMessage("run both", ""))
		evs := l.until(stateIs(a2a.TaskStateInputRequired))
		l.send(answer(confirmPart(pendingIn(t, evs), "proceed_once")))
		if err := l.cs.CloseSend(); err != nil {
			t.Fatal(err)
		}
		rest := l.toEnd()
		if got := describe(rest); !strings.HasSuffix(got, "STATE_CHANGE:input-required") || !strings.Contains(got, "EXECUTING") {
			t.Fatalf("after CloseSend: %s", got)
		}
		waitState(t, h, evs[0].(*a2a.Task).ID, a2a.TaskStateInputRequired)
	})
	t.Run("to the end", func(t *testing.T) {
		h := newHarness(t, []string{callTurn("", "run_shell_command", map[string]any{"command": gatedCommand}), textTurn("Ran.")}, yolo)
		l := openLive(t, h.liveConn(t), liveOpts{})
		l.send(userMessage("wait", ""))
		l.until(executing)
		if err := l.cs.CloseSend(); err != nil {
			t.Fatal(err)
		}
		openGate(t, h)
		if got := describe(l.toEnd()); !strings.HasSuffix(got, "STATE_CHANGE:completed") {
			t.Fatalf("after CloseSend: %s", got)
		}
	})
	t.Run("while waiting", func(t *testing.T) {
		h := newHarness(t, twoShellCalls())
		l := openLive(t, h.liveConn(t), liveOpts{})
		l.send(userMessage("run both", ""))
		l.until(stateIs(a2a.TaskStateInputRequired))
		if err := l.cs.CloseSend(); err != nil {
			t.Fatal(err)
		}
		if evs := l.toEnd(); len(evs) > 0 {
			t.Fatalf("after CloseSend: %s", describe(evs))
		}
	})
}

// TestLiveIdlePolicy: a task on a live stream that waits for input with
// no answer for a2a.live.idleMinutes is cancelled (its call declined),
// its stream gets the update and ends; with the client gone, the task is
// cancelled all the same; an answer before the timer stops it.
func TestLiveIdlePolicy(t *testing.T) {
	const idle = 10 * time.Minute
	withTimers := func(tm *proctest.Timers) harnessOption {
		return func(c *protocol.Config, _ *config.Settings) { c.Live.After = tm.After }
	}
	t.Run("fires", func(t *testing.T) {
		var timers proctest.Timers
		h := newHarness(t, twoShellCalls(), withTimers(&timers))
		l := openLive(t, h.liveConn(t), liveOpts{})
		l.send(userMessage("run both", ""))
		l.until(stateIs(a2a.TaskStateInputRequired))
		timers.Fire(t, idle)
		rest := l.toEnd()
		if got := describe(rest); !strings.HasSuffix(got, "STATE_CHANGE:canceled") {
			t.Fatalf("after the idle timeout: %s", got)
		}
		last := rest[len(rest)-1].(*a2a.TaskStatusUpdateEvent)
		if msg := last.Status.Message; msg == nil || !strings.Contains(msg.Parts[0].Text(), "a2a.live.idleMinutes") {
			t.Fatalf("status message %+v", msg)
		}
		if _, err := os.Stat(filepath.Join(h.settings.Workspace, "one.txt")); err == nil {
			t.Fatal("the declined command ran")
		}
	})
	t.Run("client gone", func(t *testing.T) {
		var timers proctest.Timers
		h := newHarness(t, twoShellCalls(), withTimers(&timers))
		l := openLive(t, h.liveConn(t), liveOpts{})
		l.send(userMessage("run both", ""))
		evs := l.until(stateIs(a2a.TaskStateInputRequired))
		id := evs[0].(*a2a.Task).ID
		l.cancel()
		proctest.Eventually(t, "the stream gone", func() bool { return protocol.LiveStreams(h.srv, id) == 0 })
		timers.Fire(t, idle)
		waitState(t, h, id, a2a.TaskStateCanceled)
	})
	t.Run("answered first", func(t *testing.T) {
		var timers proctest.Timers
		h := newHarness(t, twoShellCalls(), withTimers(&timers))
		l := openLive(t, h.liveConn(t), liveOpts{})
		l.send(userMessage("run both", ""))
		evs := l.until(stateIs(a2a.TaskStateInputRequired))
		timers.Await(t, idle)
		// Answered through another binding: the timer stops all the same.
		m := confirm(evs[0].(*a2a.Task), pendingIn(t, evs), "proceed_once")
		collect(t, h.client("rest"), m)
		l.until(stateIs(a2a.TaskStateInputRequired))
		// The first question's timer fires late: nothing happens. The
		// second question's runs.
		timers.Fire(t, idle)
		if n := timers.Pending(idle); n != 1 {
			t.Fatalf("%d idle timers pending, want the second question's", n)
		}
		l.send(answer(a2a.NewTextPart("yes")))
		if got := describe(l.toEnd()); !strings.HasSuffix(got, "STATE_CHANGE:completed") {
			t.Fatalf("after the answers: %s", got)
		}
	})
	t.Run("refused", func(t *testing.T) {
		for _, d := range []time.Duration{-time.Minute} {
			_, err := protocol.New(protocol.Config{
				NewSession: func(context.Context, protocol.SessionRequest) (protocol.Session, error) { return nil, nil },
				Workspace:  t.TempDir(), Live: protocol.LiveConfig{IdleTimeout: d},
			})
			if err == nil || !strings.Contains(err.Error(), "Live.IdleTimeout") {
				t.Fatalf("IdleTimeout %s: %v", d, err)
			}
		}
	})
}

// TestLivePlainClient: a client without the development-tool extension
// gets the plain shape — a question as input-required's text, the answer
// as an artifact — and replies with text; the trailer names no
// extension. With it, the trailer echoes the extension.
func TestLivePlainClient(t *testing.T) {
	h := newHarness(t, twoShellCalls()[1:])
	conn := h.liveConn(t)
	l := openLive(t, conn, liveOpts{plain: true})
	l.send(userMessage("run it", ""))
	evs := l.until(stateIs(a2a.TaskStateInputRequired))
	q := evs[len(evs)-1].(*a2a.TaskStatusUpdateEvent)
	if q.Status.Message == nil || !strings.Contains(q.Status.Message.Parts[0].Text(), "Allow run_shell_command") {
		t.Fatalf("question %+v", q.Status.Message)
	}
	l.send(answer(a2a.NewTextPart("yes")))
	rest := l.toEnd()
	var text strings.Builder
	for _, ev := range append(evs, rest...) {
		if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			for _, p := range a.Artifact.Parts {
				text.WriteString(p.Text())
			}
		}
		if u, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
			if _, has := u.Metadata[devtool.URI]; has {
				t.Fatalf("development-tool metadata for a plain client: %s", describeOne(ev))
			}
		}
	}
	if !strings.Contains(text.String(), "Both ran.") || !stateIs(a2a.TaskStateCompleted)(rest[len(rest)-1]) {
		t.Fatalf("answer %q, events %s", text.String(), describe(rest))
	}
	if got := l.cs.Trailer().Get("a2a-extensions"); len(got) > 0 {
		t.Fatalf("trailer a2a-extensions %v for a plain client", got)
	}

	dev := openLive(t, conn, liveOpts{})
	dev.send(reconnect(evs[0].(*a2a.Task).ID))
	dev.toEnd()
	if got := dev.cs.Trailer().Get("a2a-extensions"); len(got) != 1 || got[0] != devtool.URI {
		t.Fatalf("trailer a2a-extensions %v, want the extension", got)
	}
}

// TestLiveBadInput: frames that are not protobuf, cut short or too large
// end the stream with InvalidArgument or ResourceExhausted, and the
// server serves the next stream.
func TestLiveBadInput(t *testing.T) {
	h := newHarness(t, []string{callTurn("", "write_file", map[string]any{"file_path": "a.txt", "content": "x"}), textTurn("ok")},
		func(c *protocol.Config, _ *config.Settings) { c.MaxMessageBytes = 1 << 20 })
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	raw := &http.Client{Transport: &http.Transport{Protocols: &protocols}}
	defer raw.CloseIdleConnections()
	frame := func(payload []byte) []byte {
		b := make([]byte, 5, 5+len(payload))
		binary.BigEndian.PutUint32(b[1:], uint32(len(payload)))
		return append(b, payload...)
	}
	post := func(body []byte) (string, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, h.url+liveMethod, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("TE", "trailers")
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := raw.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if _, err := io.ReadAll(resp.Body); err != nil {
			t.Fatal(err)
		}
		code, msg := resp.Trailer.Get("Grpc-Status"), resp.Trailer.Get("Grpc-Message")
		if code == "" {
			code, msg = resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message")
		}
		return code, msg
	}
	for _, c := range []struct {
		name string
		body []byte
		code codes.Code
		want string
	}{
		{"not protobuf", frame([]byte("\xff\xff\xff\xff garbage")), codes.InvalidArgument, "not a SendMessageRequest"},
		{"protobuf of another message", frame([]byte("\x0a\x03abc")), codes.InvalidArgument, "message is required"},
		// gRPC's own answer, sent before the handler hears of it.
		{"cut short", frame([]byte("\x0a\x10abc"))[:8], codes.Internal, "unexpected EOF"},
		{"empty body", nil, codes.InvalidArgument, "before its first message"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, msg := post(c.body)
			if msg, _ = url.PathUnescape(msg); code != strconv.Itoa(int(c.code)) || !strings.Contains(msg, c.want) {
				t.Fatalf("grpc-status %s %q, want %d naming %q", code, msg, c.code, c.want)
			}
		})
	}

	conn := h.liveConn(t)
	t.Run("huge first message", func(t *testing.T) {
		l := openLive(t, conn, liveOpts{})
		l.send(userMessage(strings.Repeat("x", 2<<20), ""))
		l.failsWith(codes.ResourceExhausted, "")
	})
	t.Run("huge later message", func(t *testing.T) {
		l := openLive(t, conn, liveOpts{})
		l.send(userMessage("write", ""))
		evs := l.until(stateIs(a2a.TaskStateInputRequired))
		l.send(answer(a2a.NewTextPart(strings.Repeat("y", 2<<20))))
		l.failsWith(codes.ResourceExhausted, "larger than max")
		waitState(t, h, evs[0].(*a2a.Task).ID, a2a.TaskStateInputRequired)
	})
	t.Run("messages together over the body limit", func(t *testing.T) {
		// The guard bounds a gRPC call's whole request body (1 MiB here):
		// two answers of 600 KiB each (valid replies padded with spaces)
		// pass it together.
		h := newHarness(t, twoShellCalls(), func(c *protocol.Config, _ *config.Settings) { c.MaxMessageBytes = 1 << 20 })
		l := openLive(t, h.liveConn(t), liveOpts{})
		l.send(userMessage("run both", ""))
		evs := l.until(stateIs(a2a.TaskStateInputRequired))
		pad := strings.Repeat(" ", 600<<10)
		l.send(answer(a2a.NewTextPart("yes" + pad)))
		l.until(stateIs(a2a.TaskStateInputRequired))
		l.send(answer(a2a.NewTextPart("yes" + pad)))
		l.failsWith(codes.ResourceExhausted, "request body too large: the limit is 1048576 bytes")
		// The task still waits for its second answer.
		back := openLive(t, h.liveConn(t), liveOpts{})
		back.send(reconnect(evs[0].(*a2a.Task).ID))
		if snap := back.until(stateIs(a2a.TaskStateInputRequired)); len(snap) != 1 {
			t.Fatalf("reconnect: %s", describe(snap))
		}
	})
	// The server still serves.
	l := openLive(t, conn, liveOpts{})
	l.send(userMessage("hello", ""))
	l.until(stateIs(a2a.TaskStateInputRequired))
}

// TestLiveThroughLiveclient: agentry's own client against the server:
// the card says the method is served, a task's two questions are
// answered on one stream, and refusals decode into a2a-go's errors with
// the stream's codes.
func TestLiveThroughLiveclient(t *testing.T) {
	h := newHarness(t, twoShellCalls())
	if !liveclient.Supported(h.cardJSON()) {
		t.Fatal("the card does not declare capabilities.bidiStreaming")
	}
	conn := h.liveConn(t)
	opts := []liveclient.Option{liveclient.WithToken(testToken), liveclient.WithExtensions(devtool.URI)}
	s, err := liveclient.Open(t.Context(), conn, &a2a.SendMessageRequest{Message: userMessage("run both", "")}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var evs []a2a.Event
	for ev, err := range s.Events() {
		if err != nil {
			t.Fatalf("after %s: %v", describe(evs), err)
		}
		evs = append(evs, ev)
		if stateIs(a2a.TaskStateInputRequired)(ev) {
			if err := s.Send(&a2a.SendMessageRequest{Message: answer(confirmPart(pendingIn(t, evs), "proceed_once"))}); err != nil {
				t.Fatal(err)
			}
			evs = evs[:0]
		}
	}
	if got := describe(evs); !strings.HasSuffix(got, "STATE_CHANGE:completed") {
		t.Fatalf("to the end: %s", got)
	}
	if got := s.Trailer().Get("a2a-extensions"); len(got) != 1 || got[0] != devtool.URI {
		t.Fatalf("trailer %v", got)
	}

	gone, err := liveclient.Reconnect(t.Context(), conn, "no-such-task", opts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gone.Recv(); liveclient.Code(err) != codes.NotFound || !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("unknown task: %v (%s)", err, liveclient.Code(err))
	}
	late, err := liveclient.Open(t.Context(), conn, &a2a.SendMessageRequest{Message: func() *a2a.Message {
		m := answer(a2a.NewTextPart("yes"))
		m.TaskID = s.TaskID()
		return m
	}()}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := late.Recv(); liveclient.Code(err) != codes.FailedPrecondition || !errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Fatalf("a message to a finished task: %v (%s)", err, liveclient.Code(err))
	}
}

// TestLiveDrain: a server about to shut down ends its live streams with
// Unavailable and refuses new ones; their tasks are left as they were.
func TestLiveDrain(t *testing.T) {
	h := newHarness(t, twoShellCalls())
	conn := h.liveConn(t)
	l := openLive(t, conn, liveOpts{})
	l.send(userMessage("run both", ""))
	evs := l.until(stateIs(a2a.TaskStateInputRequired))
	h.srv.Drain()
	l.failsWith(codes.Unavailable, "shutting down")
	waitState(t, h, evs[0].(*a2a.Task).ID, a2a.TaskStateInputRequired)
	again := openLive(t, conn, liveOpts{})
	again.send(reconnect(evs[0].(*a2a.Task).ID))
	again.failsWith(codes.Unavailable, "shutting down")
}

// TestLiveServiceName: the service SendLiveMessage is added to is the one
// liveclient calls it on.
func TestLiveServiceName(t *testing.T) {
	if got := a2apb.A2AService_ServiceDesc.ServiceName; got != liveclient.Service || liveMethod != liveclient.Method {
		t.Fatalf("a2a-go's service %s, liveclient's method %s", got, liveclient.Method)
	}
}
