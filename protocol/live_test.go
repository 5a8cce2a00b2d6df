package protocol_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1/pbconv"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/agentry-dev/agentry/protocol/devtool"
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
