package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1/pbconv"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/agentry-dev/agentry/agents"
	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/protocol/liveclient"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/subagents"
)

// liveServer is a scripted A2A agent over gRPC, in the shapes agentry
// serve sends with the development-tool extension: SendLiveMessage (left
// out with noLive), CancelTask, and SendStreamingMessage for the clients
// that do not stream live. What a live task does depends on the first
// word of its first message:
//
//   - "confirm": a shell call that waits for confirmation, then "Ran it."
//     or, refused, "Skipped it.";
//   - "twice": two such calls in a row;
//   - "edit": a write_file call that waits for confirmation;
//   - "elsewhere": a call that waits for confirmation and runs without
//     an answer on this stream (another client answered);
//   - "ask": a plain question (input-required without a call); the
//     server waits for the client to half-close;
//   - "hang": works until CancelTask;
//   - a message that names a task answers it: "Read <text>.".
type liveServer struct {
	t       *testing.T
	cardURL string
	card    map[string]any // the card's JSON
	noLive  bool

	mu       sync.Mutex
	streams  [][]*a2a.SendMessageRequest // what each live stream brought, in order
	md       []metadata.MD               // each live stream's metadata
	leftEOF  []bool                      // a stream left at a question saw the client half-close
	canceled []a2a.TaskID
	plain    []string // the texts of SendStreamingMessage calls
	nextTask int

	started   chan a2a.TaskID              // a "hang" task runs
	cancelled map[a2a.TaskID]chan struct{} // closed by CancelTask
	released  chan struct{}                // closed when the test ends
}

// liveOpts shape a liveServer.
type liveOpts struct {
	// bidi is the card's capabilities.bidiStreaming.
	bidi bool
	// noLive leaves SendLiveMessage out of the server.
	noLive bool
}

func startLive(t *testing.T, o liveOpts) *liveServer {
	t.Helper()
	ls := &liveServer{t: t, noLive: o.noLive, started: make(chan a2a.TaskID, 4),
		cancelled: map[a2a.TaskID]chan struct{}{}, released: make(chan struct{})}
	t.Cleanup(func() { close(ls.released) })
	desc := grpc.ServiceDesc{
		ServiceName: liveclient.Service,
		HandlerType: (*any)(nil),
		Methods:     []grpc.MethodDesc{{MethodName: "CancelTask", Handler: ls.cancelTask}},
		Streams: []grpc.StreamDesc{{
			StreamName: "SendStreamingMessage", ServerStreams: true,
			Handler: func(_ any, s grpc.ServerStream) error { return ls.streaming(s) },
		}},
	}
	if !o.noLive {
		desc.Streams = append(desc.Streams, grpc.StreamDesc{
			StreamName: liveclient.MethodName, ServerStreams: true, ClientStreams: true,
			Handler: func(_ any, s grpc.ServerStream) error { return ls.live(s) },
		})
	}
	g := grpc.NewServer()
	g.RegisterService(&desc, struct{}{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(lis)
	t.Cleanup(g.Stop)
	card, err := json.Marshal(&a2a.AgentCard{
		Name: "Coder", Description: "Writes code.", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(lis.Addr().String(), a2a.TransportProtocolGRPC)},
		Capabilities:        a2a.AgentCapabilities{Streaming: true, Extensions: []a2a.AgentExtension{{URI: devtool.URI}}},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "code", Name: "Code", Description: "Codes.", Tags: []string{"code"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(card, &ls.card); err != nil {
		t.Fatal(err)
	}
	if o.bidi {
		ls.card["capabilities"].(map[string]any)["bidiStreaming"] = true
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(ls.card)
	}))
	t.Cleanup(srv.Close)
	ls.cardURL = srv.URL + a2asrv.WellKnownAgentCardPath
	return ls
}

// cardJSON is the served card, for agent_card_json.
func (ls *liveServer) cardJSON() string {
	b, _ := json.Marshal(ls.card)
	return string(b)
}

func (ls *liveServer) def() agents.Definition {
	return agents.Definition{Name: "coder", Kind: agents.KindRemote, Description: "Writes code.", AgentCardURL: ls.cardURL,
		Auth: &agents.Auth{Type: "http", Scheme: "Bearer", Token: "tok-7"}}
}

func (ls *liveServer) Streams() [][]*a2a.SendMessageRequest {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	out := make([][]*a2a.SendMessageRequest, len(ls.streams))
	for i, s := range ls.streams {
		out[i] = slices.Clone(s)
	}
	return out
}

func (ls *liveServer) Canceled() []a2a.TaskID {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return slices.Clone(ls.canceled)
}

func (ls *liveServer) Plain() []string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return slices.Clone(ls.plain)
}

func (ls *liveServer) newTask() a2a.TaskID {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.nextTask++
	id := a2a.TaskID(fmt.Sprintf("t%d", ls.nextTask))
	ls.cancelled[id] = make(chan struct{})
	return id
}

func (ls *liveServer) cancelTask(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	var pb a2apb.CancelTaskRequest
	if err := dec(&pb); err != nil {
		return nil, err
	}
	id := a2a.TaskID(pb.GetId())
	ls.mu.Lock()
	ls.canceled = append(ls.canceled, id)
	c := ls.cancelled[id]
	ls.mu.Unlock()
	if c == nil {
		return nil, a2a.ErrTaskNotFound
	}
	close(c)
	return pbconv.ToProtoTask(&a2a.Task{ID: id, ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateCanceled}})
}

// streaming is SendStreamingMessage: the answer and completed.
func (ls *liveServer) streaming(s grpc.ServerStream) error {
	var pb a2apb.SendMessageRequest
	if err := s.RecvMsg(&pb); err != nil {
		return err
	}
	req, err := pbconv.FromProtoSendMessageRequest(&pb)
	if err != nil {
		return err
	}
	ls.mu.Lock()
	ls.plain = append(ls.plain, messageText(req.Message))
	ls.mu.Unlock()
	id := ls.newTask()
	w := liveWriter{t: ls.t, s: s, task: id}
	w.send(&a2a.Task{ID: id, ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}})
	w.status(a2a.TaskStateCompleted, "", a2a.Text("Streamed."))
	return nil
}

// liveWriter sends one task's events on a stream.
type liveWriter struct {
	t    *testing.T
	s    grpc.ServerStream
	task a2a.TaskID
}

func (w liveWriter) send(ev a2a.Event) {
	pb, err := pbconv.ToProtoStreamResponse(ev)
	if err != nil {
		w.t.Errorf("server: convert %T: %v", ev, err)
		return
	}
	if err := w.s.SendMsg(pb); err != nil {
		w.t.Logf("server: send: %v", err)
	}
}

// status sends a status update of the extension's kind ("" for a state
// change) with content as its message's one part.
func (w liveWriter) status(state a2a.TaskState, kind devtool.EventKind, content a2a.PartContent) {
	if kind == "" {
		kind = devtool.KindStateChange
	}
	u := &a2a.TaskStatusUpdateEvent{TaskID: w.task, ContextID: "ctx-1", Status: a2a.TaskStatus{State: state},
		Metadata: devtool.Metadata(devtool.Event{Kind: kind, Model: "gemini-2.5-pro"})}
	if content != nil {
		u.Status.Message = &a2a.Message{ID: a2a.NewMessageID(), Role: a2a.MessageRoleAgent, TaskID: w.task, ContextID: "ctx-1",
			Parts: a2a.ContentParts{{Content: content}}}
	}
	w.send(u)
}

func (w liveWriter) text(s string) {
	w.status(a2a.TaskStateWorking, devtool.KindTextContent, a2a.Text(s))
}

func (w liveWriter) call(tc devtool.ToolCall) {
	w.status(a2a.TaskStateWorking, devtool.KindToolCallUpdate, a2a.Data{Value: tc.Map()})
}

// options are the ones agentry serve offers.
var options = []devtool.ConfirmationOption{{ID: "proceed_once", Name: "Allow once"}, {ID: "proceed_always", Name: "Allow always"}, {ID: "cancel", Name: "Reject"}}

func shellCall(id, command string) devtool.ToolCall {
	return devtool.ToolCall{ToolCallID: id, Status: devtool.StatusPending, ToolName: "run_shell_command", Description: command,
		InputParameters: map[string]any{"command": command},
		ConfirmationRequest: &devtool.ConfirmationRequest{Options: options,
			ExecuteDetails: &devtool.ExecuteDetails{Command: command, WorkingDirectory: "/ws"}}}
}

func (ls *liveServer) recv(s grpc.ServerStream, n int) (*a2a.SendMessageRequest, error) {
	var pb a2apb.SendMessageRequest
	if err := s.RecvMsg(&pb); err != nil {
		return nil, err
	}
	req, err := pbconv.FromProtoSendMessageRequest(&pb)
	if err != nil {
		return nil, err
	}
	ls.mu.Lock()
	ls.streams[n] = append(ls.streams[n], req)
	ls.mu.Unlock()
	return req, nil
}

// confirmed waits for the answer to a call on the stream.
func (ls *liveServer) confirmed(s grpc.ServerStream, n int) (devtool.ToolCallConfirmation, error) {
	req, err := ls.recv(s, n)
	if err != nil {
		return devtool.ToolCallConfirmation{}, err
	}
	for _, p := range req.Message.Parts {
		if c, ok, err := devtool.ParseConfirmation(p.Data()); ok {
			return c, err
		}
	}
	return devtool.ToolCallConfirmation{}, fmt.Errorf("not a confirmation: %q", messageText(req.Message))
}

// runCall asks for confirmation of tc and runs or skips it as answered.
func (ls *liveServer) runCall(w liveWriter, n int, tc devtool.ToolCall) (bool, error) {
	w.call(tc)
	w.status(a2a.TaskStateInputRequired, "", nil)
	c, err := ls.confirmed(w.s, n)
	if err != nil {
		return false, err
	}
	tc.ConfirmationRequest = nil
	if c.ToolCallID != tc.ToolCallID || c.SelectedOptionID == "cancel" {
		tc.Status = devtool.StatusCancelled
		tc.Error = &devtool.ErrorDetails{Message: "User denied execution."}
		w.call(tc)
		return false, nil
	}
	tc.Status, tc.LiveContent = devtool.StatusExecuting, "hi\n"
	w.call(tc)
	out := "hi\n"
	tc.Status, tc.LiveContent, tc.Output = devtool.StatusSucceeded, "", &devtool.ToolOutput{Text: &out}
	w.call(tc)
	return true, nil
}

// live is SendLiveMessage.
func (ls *liveServer) live(s grpc.ServerStream) error {
	md, _ := metadata.FromIncomingContext(s.Context())
	ls.mu.Lock()
	n := len(ls.streams)
	ls.streams = append(ls.streams, nil)
	ls.md = append(ls.md, md)
	ls.mu.Unlock()
	first, err := ls.recv(s, n)
	if err != nil {
		return err
	}
	text := messageText(first.Message)
	if first.Message.TaskID != "" {
		w := liveWriter{t: ls.t, s: s, task: first.Message.TaskID}
		w.status(a2a.TaskStateWorking, "", nil)
		w.text("Read " + text + ".")
		w.status(a2a.TaskStateCompleted, "", nil)
		return nil
	}
	id := ls.newTask()
	w := liveWriter{t: ls.t, s: s, task: id}
	w.send(&a2a.Task{ID: id, ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}, History: []*a2a.Message{first.Message}})
	w.status(a2a.TaskStateWorking, "", nil)
	word, _, _ := strings.Cut(text, " ")
	switch word {
	case "confirm", "twice":
		w.text("Let me run it.")
		calls := []string{"c1"}
		if word == "twice" {
			calls = append(calls, "c2")
		}
		for _, id := range calls {
			ran, err := ls.runCall(w, n, shellCall(id, "echo hi"))
			if err != nil {
				return err
			}
			if ran {
				w.text("Ran " + id + ".")
			} else {
				w.text("Skipped " + id + ".")
			}
		}
		w.status(a2a.TaskStateCompleted, "", nil)
	case "edit":
		old := "old\n"
		tc := devtool.ToolCall{ToolCallID: "w1", Status: devtool.StatusPending, ToolName: "write_file",
			InputParameters: map[string]any{"file_path": "a.txt", "content": "new\n"},
			ConfirmationRequest: &devtool.ConfirmationRequest{Options: options,
				FileEditDetails: &devtool.FileDiff{FileName: "a.txt", FilePath: "/ws/a.txt", OldContent: &old, NewContent: "new\n"}}}
		w.call(tc)
		w.status(a2a.TaskStateInputRequired, "", nil)
		if _, err := ls.confirmed(s, n); err != nil {
			return err
		}
		tc.ConfirmationRequest, tc.Status = nil, devtool.StatusSucceeded
		w.call(tc)
		w.status(a2a.TaskStateCompleted, "", nil)
	case "elsewhere":
		tc := shellCall("c1", "echo hi")
		w.call(tc)
		w.status(a2a.TaskStateInputRequired, "", nil)
		// Answered by another client: the call runs.
		tc.ConfirmationRequest, tc.Status = nil, devtool.StatusExecuting
		w.call(tc)
		out := ""
		tc.Status, tc.Output = devtool.StatusSucceeded, &devtool.ToolOutput{Text: &out}
		w.call(tc)
		w.text("Done.")
		w.status(a2a.TaskStateCompleted, "", nil)
	case "ask":
		w.text("Thinking.")
		w.status(a2a.TaskStateInputRequired, "", a2a.Text("Which file?"))
		_, err := ls.recv(s, n)
		ls.mu.Lock()
		ls.leftEOF = append(ls.leftEOF, errors.Is(err, io.EOF))
		ls.mu.Unlock()
	case "hang":
		w.text("Working on it.")
		ls.started <- id
		ls.mu.Lock()
		c := ls.cancelled[id]
		ls.mu.Unlock()
		select {
		case <-c:
			w.status(a2a.TaskStateCanceled, "", nil)
		case <-s.Context().Done():
		case <-ls.released:
		}
	default:
		w.text("Hello.")
		w.status(a2a.TaskStateCompleted, "", nil)
	}
	return nil
}

// testApprover answers the remote agent's calls with answer, records the
// requests and the calls reported running, and what the time limit's
// clock did meanwhile.
type testApprover struct {
	answer func(ctx context.Context, r runtime.ApprovalRequest) (runtime.Outcome, map[string]any, error)
	clock  *fakeClock

	mu        sync.Mutex
	asked     []runtime.ApprovalRequest
	running   []bool // whether the clock ran when each request came
	logAt     []int  // how long the clock's log was then
	executing []string
}

func (a *testApprover) Approve(ctx context.Context, r runtime.ApprovalRequest) (runtime.Outcome, error) {
	o, _, err := a.ApproveEdit(ctx, r)
	return o, err
}

func (a *testApprover) ApproveEdit(ctx context.Context, r runtime.ApprovalRequest) (runtime.Outcome, map[string]any, error) {
	a.mu.Lock()
	a.asked = append(a.asked, r)
	if a.clock != nil {
		a.running = append(a.running, a.clock.Running())
		a.logAt = append(a.logAt, len(a.clock.Log()))
	}
	a.mu.Unlock()
	return a.answer(ctx, r)
}

func (a *testApprover) Executing(_ context.Context, id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.executing = append(a.executing, id)
}

func (a *testApprover) Asked() []runtime.ApprovalRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.asked)
}

func answering(o runtime.Outcome) *testApprover {
	return &testApprover{answer: func(context.Context, runtime.ApprovalRequest) (runtime.Outcome, map[string]any, error) {
		return o, nil, nil
	}}
}

// fakeClock is the time limit's timer: it records the timers started and
// stopped and fires only when the test says so.
type fakeClock struct {
	mu      sync.Mutex
	log     []string
	running int
	fire    func()
}

func (c *fakeClock) AfterFunc(_ time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log = append(c.log, "start")
	c.running++
	c.fire = f
	stopped := false
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if stopped {
			return false
		}
		stopped = true
		c.running--
		c.log = append(c.log, "stop")
		return true
	}
}

// Running reports whether a timer runs.
func (c *fakeClock) Running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running > 0
}

func (c *fakeClock) Log() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.log)
}

// confirmations are the ToolCallConfirmations a stream brought.
func confirmations(t *testing.T, reqs []*a2a.SendMessageRequest) []devtool.ToolCallConfirmation {
	t.Helper()
	var out []devtool.ToolCallConfirmation
	for _, r := range reqs {
		for _, p := range r.Message.Parts {
			if c, ok, err := devtool.ParseConfirmation(p.Data()); ok {
				if err != nil {
					t.Errorf("malformed confirmation: %v", err)
				}
				out = append(out, c)
			}
		}
	}
	return out
}

// eventLog collects the events a call forwards.
type eventLog struct {
	mu  sync.Mutex
	evs []runtime.Event
}

func (l *eventLog) add(ev runtime.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evs = append(l.evs, ev)
}

// tools lists the forwarded tool events as "type id".
func (l *eventLog) tools() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, ev := range l.evs {
		switch ev.Type {
		case runtime.EventToolRequest:
			out = append(out, "request "+ev.ToolRequest.RequestID)
		case runtime.EventToolResponse:
			s := "response " + ev.ToolResponse.RequestID
			if ev.ToolResponse.IsError {
				s += " error"
			}
			out = append(out, s)
		}
	}
	return slices.Compact(out)
}

// TestLiveConfirmation: a task whose call waits for confirmation is
// answered through the parent's approver on the same live stream, and
// goes on there to completion: one stream, the prompt then the
// ToolCallConfirmation; the request named with the agent, the time limit
// paused while it waits; the call's progress forwarded as tool events;
// the result without tool-call JSON.
func TestLiveConfirmation(t *testing.T) {
	ls := startLive(t, liveOpts{bidi: true})
	sub := remoteTool(t)
	clock := &fakeClock{}
	sub.afterFunc = clock.AfterFunc
	ap := answering(runtime.ProceedOnce)
	ap.clock = clock
	var evs eventLog
	res, err := sub.Invoke(t.Context(), ls.def(), "confirm it", ap, evs.add)
	if err != nil {
		t.Fatal(err)
	}
	if res.TerminateReason != subagents.TerminateGoal || res.Result != "Let me run it.\n\nRan c1." {
		t.Errorf("result %+v", res)
	}
	streams := ls.Streams()
	if len(streams) != 1 || len(streams[0]) != 2 || messageText(streams[0][0].Message) != "confirm it" {
		t.Fatalf("the server got %d live streams: %+v", len(streams), streams)
	}
	got := confirmations(t, streams[0])
	if len(got) != 1 || got[0].ToolCallID != "c1" || got[0].SelectedOptionID != "proceed_once" {
		t.Errorf("confirmations %+v", got)
	}
	if m := streams[0][1].Message; m.TaskID != "t1" || m.ContextID != "ctx-1" {
		t.Errorf("the confirmation names task %q, context %q", m.TaskID, m.ContextID)
	}
	asked := ap.Asked()
	if len(asked) != 1 || asked[0].DisplayName != "coder › run_shell_command" || asked[0].Kind != "execute" ||
		asked[0].Args["command"] != "echo hi" || asked[0].CallID != "c1" {
		t.Errorf("asked %+v", asked)
	}
	if !slices.Equal(ap.running, []bool{false}) {
		t.Errorf("the time limit ran while the approver decided: %v", ap.running)
	}
	if log := clock.Log(); !slices.Contains(log[ap.logAt[0]:], "start") {
		t.Errorf("the time limit did not run again after the answer: %q (asked at %d)", log, ap.logAt[0])
	}
	if !slices.Equal(ap.executing, []string{"c1"}) {
		t.Errorf("calls reported running %q", ap.executing)
	}
	if want := []string{"request c1", "response c1"}; !slices.Equal(evs.tools(), want) {
		t.Errorf("forwarded tool events %q, want %q", evs.tools(), want)
	}
	ls.mu.Lock()
	md := ls.md[0]
	ls.mu.Unlock()
	if got := md.Get("authorization"); !slices.Equal(got, []string{"Bearer tok-7"}) {
		t.Errorf("authorization %q", got)
	}
	if got := md.Get("a2a-extensions"); !slices.Contains(got, devtool.URI) {
		t.Errorf("extensions %q, want %s", got, devtool.URI)
	}
}

// TestLiveDenied: a refused call is answered "cancel" on the stream; the
// agent goes on and completes.
func TestLiveDenied(t *testing.T) {
	ls := startLive(t, liveOpts{bidi: true})
	var evs eventLog
	res, err := remoteTool(t).Invoke(t.Context(), ls.def(), "confirm it", answering(runtime.Cancel), evs.add)
	if err != nil {
		t.Fatal(err)
	}
	if res.TerminateReason != subagents.TerminateGoal || res.Result != "Let me run it.\n\nSkipped c1." {
		t.Errorf("result %+v", res)
	}
	streams := ls.Streams()
	if got := confirmations(t, streams[0]); len(streams) != 1 || len(got) != 1 || got[0].SelectedOptionID != "cancel" {
		t.Errorf("%d streams, confirmations %+v", len(streams), got)
	}
	if want := []string{"request c1", "response c1 error"}; !slices.Equal(evs.tools(), want) {
		t.Errorf("forwarded tool events %q, want %q", evs.tools(), want)
	}
}

// TestLiveTwoConfirmations: two calls in a row are asked and answered on
// the one stream; "always" goes as the option the request offers.
func TestLiveTwoConfirmations(t *testing.T) {
	ls := startLive(t, liveOpts{bidi: true})
	ap := answering(runtime.ProceedAlwaysTool)
	res, err := remoteTool(t).Invoke(t.Context(), ls.def(), "twice please", ap, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Result != "Let me run it.\n\nRan c1.\n\nRan c2." {
		t.Errorf("result %q", res.Result)
	}
	streams := ls.Streams()
	if len(streams) != 1 || len(streams[0]) != 3 {
		t.Fatalf("the server got %d streams: %+v", len(streams), streams)
	}
	got := confirmations(t, streams[0])
	if len(got) != 2 || got[0].ToolCallID != "c1" || got[1].ToolCallID != "c2" ||
		got[0].SelectedOptionID != "proceed_always" || got[1].SelectedOptionID != "proceed_always" {
		t.Errorf("confirmations %+v", got)
	}
	if len(ap.Asked()) != 2 {
		t.Errorf("asked %d times, want 2", len(ap.Asked()))
	}
}

// TestLiveNoApprover: without a parent approver (a batch run) the call is
// declined on the stream, as a local subagent's would be.
func TestLiveNoApprover(t *testing.T) {
	ls := startLive(t, liveOpts{bidi: true})
	res, err := remoteTool(t).Invoke(t.Context(), ls.def(), "confirm it", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.TerminateReason != subagents.TerminateGoal || !strings.HasSuffix(res.Result, "Skipped c1.") {
		t.Errorf("result %+v", res)
	}
	if got := confirmations(t, ls.Streams()[0]); len(got) != 1 || got[0].SelectedOptionID != "cancel" {
		t.Errorf("confirmations %+v", got)
	}
}

// TestLiveFailingApprover: an approver with nobody to ask declines.
func TestLiveFailingApprover(t *testing.T) {
	ls := startLive(t, liveOpts{bidi: true})
	ap := &testApprover{answer: func(context.Context, runtime.ApprovalRequest) (runtime.Outcome, map[string]any, error) {
		return "", nil, runtime.ErrNoHuman
	}}
	if _, err := remoteTool(t).Invoke(t.Context(), ls.def(), "confirm it", ap, nil); err != nil {
		t.Fatal(err)
	}
	if got := confirmations(t, ls.Streams()[0]); len(got) != 1 || got[0].SelectedOptionID != "cancel" {
		t.Errorf("confirmations %+v", got)
	}
}

// TestLiveModifiedEdit: an editing approver's content goes as
// file_details.
func TestLiveModifiedEdit(t *testing.T) {
	ls := startLive(t, liveOpts{bidi: true})
	ap := &testApprover{answer: func(_ context.Context, r runtime.ApprovalRequest) (runtime.Outcome, map[string]any, error) {
		if r.Kind != "edit" || r.Diff == nil || r.Diff.Before != "old\n" {
			t.Errorf("request %+v", r)
		}
		args, err := runtime.ModifiedArgs(r, "mine\n")
		return runtime.ProceedOnce, args, err
	}}
	if _, err := remoteTool(t).Invoke(t.Context(), ls.def(), "edit a.txt", ap, nil); err != nil {
		t.Fatal(err)
	}
	got := confirmations(t, ls.Streams()[0])
	if len(got) != 1 || got[0].FileDetails == nil || got[0].FileDetails.NewContent != "mine\n" {
		t.Errorf("confirmations %+v", got)
	}
}

// TestLiveAnsweredElsewhere: a call that runs before the approver answers
// withdraws the question; nothing is sent for it.
func TestLiveAnsweredElsewhere(t *testing.T) {
	ls := startLive(t, liveOpts{bidi: true})
	causes := make(chan error, 1)
	ap := &testApprover{answer: func(ctx context.Context, _ runtime.ApprovalRequest) (runtime.Outcome, map[string]any, error) {
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return "", nil, context.Cause(ctx)
	}}
	res, err := remoteTool(t).Invoke(t.Context(), ls.def(), "elsewhere", ap, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Result != "Done." {
		t.Errorf("result %q", res.Result)
	}
	if cause := <-causes; !errors.Is(cause, errAnsweredElsewhere) {
		t.Errorf("the question ended with %v", cause)
	}
	if got := confirmations(t, ls.Streams()[0]); len(got) != 0 {
		t.Errorf("sent %+v for a call answered elsewhere", got)
	}
}

// TestLivePlainQuestion: input-required without a call to confirm ends
// the call with the question, the stream half-closed; the next call
// answers the task on a new live stream whose first message names it.
func TestLivePlainQuestion(t *testing.T) {
	ls := startLive(t, liveOpts{bidi: true})
	sub := remoteTool(t)
	r1, err := sub.Invoke(t.Context(), ls.def(), "ask me", answering(runtime.ProceedOnce), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r1.TerminateReason != subagents.TerminateGoal || r1.Result != "Thinking.\n\nWhich file?" || r1.ThreadID != "ctx-1" {
		t.Errorf("first call %+v", r1)
	}
	r2, err := sub.Invoke(t.Context(), ls.def(), "b.go", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Result != "Read b.go." {
		t.Errorf("second call %+v", r2)
	}
	streams := ls.Streams()
	if len(streams) != 2 || streams[1][0].Message.TaskID != "t1" || streams[1][0].Message.ContextID != "ctx-1" {
		t.Fatalf("streams %+v", streams)
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if !slices.Equal(ls.leftEOF, []bool{true}) {
		t.Errorf("the server saw the client leave the question with half-close: %v", ls.leftEOF)
	}
}

// TestLiveAbort: a parent that gives up mid-stream gets its cause back and
// the remote task is cancelled; the next call starts a new task.
func TestLiveAbort(t *testing.T) {
	ls := startLive(t, liveOpts{bidi: true})
	sub := remoteTool(t)
	errStop := errors.New("the user pressed escape")
	ctx, cancel := context.WithCancelCause(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := sub.Invoke(ctx, ls.def(), "hang on", nil, nil)
		done <- err
	}()
	task := <-ls.started
	cancel(errStop)
	if err := <-done; !errors.Is(err, errStop) {
		t.Errorf("error %v, want %v", err, errStop)
	}
	if got := ls.Canceled(); !slices.Equal(got, []a2a.TaskID{task}) {
		t.Errorf("cancelled %q, want %q", got, task)
	}
	if _, err := sub.Invoke(t.Context(), ls.def(), "hello", nil, nil); err != nil {
		t.Fatal(err)
	}
	if s := ls.Streams(); len(s) != 2 || s[1][0].Message.TaskID != "" {
		t.Errorf("after the abort the server got %+v, want a new task", s)
	}
}

// TestLiveTimeout: the time limit aborts a live stream: TIMEOUT, and the
// task is cancelled.
func TestLiveTimeout(t *testing.T) {
	ls := startLive(t, liveOpts{bidi: true})
	sub := remoteTool(t)
	clock := &fakeClock{}
	sub.afterFunc = clock.AfterFunc
	sub.timeout = time.Minute
	done := make(chan subagents.Result, 1)
	go func() {
		res, err := sub.Invoke(t.Context(), ls.def(), "hang on", nil, nil)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	task := <-ls.started
	clock.mu.Lock()
	fire := clock.fire
	clock.mu.Unlock()
	fire()
	res := <-done
	if res.TerminateReason != subagents.TerminateTimeout || res.Result != "Agent timed out after 1 minute." {
		t.Errorf("result %+v", res)
	}
	if got := ls.Canceled(); !slices.Equal(got, []a2a.TaskID{task}) {
		t.Errorf("cancelled %q, want %q", got, task)
	}
}

// TestLiveNeedsTheCard: a card without bidiStreaming keeps
// SendStreamingMessage; so does a server that does not serve the method
// although its card says so (and every later call to it).
func TestLiveNeedsTheCard(t *testing.T) {
	for _, o := range []liveOpts{{bidi: false}, {bidi: true, noLive: true}} {
		t.Run(fmt.Sprintf("bidi=%v,served=%v", o.bidi, !o.noLive), func(t *testing.T) {
			ls := startLive(t, o)
			sub := remoteTool(t)
			for _, p := range []string{"confirm it", "again"} {
				res, err := sub.Invoke(t.Context(), ls.def(), p, answering(runtime.ProceedOnce), nil)
				if err != nil {
					t.Fatal(err)
				}
				if res.TerminateReason != subagents.TerminateGoal || res.Result != "Streamed." {
					t.Errorf("result %+v", res)
				}
			}
			if !slices.Equal(ls.Plain(), []string{"confirm it", "again"}) {
				t.Errorf("SendStreamingMessage got %q", ls.Plain())
			}
			if !o.bidi && len(ls.Streams()) != 0 {
				t.Errorf("%d live streams", len(ls.Streams()))
			}
		})
	}
}

// TestLiveCardJSON: an inline card that declares bidiStreaming gets live
// streams too.
func TestLiveCardJSON(t *testing.T) {
	ls := startLive(t, liveOpts{bidi: true})
	def := ls.def()
	def.AgentCardURL, def.AgentCardJSON = "", ls.cardJSON()
	if _, err := remoteTool(t).Invoke(t.Context(), def, "confirm it", answering(runtime.ProceedOnce), nil); err != nil {
		t.Fatal(err)
	}
	if s := ls.Streams(); len(s) != 1 || len(confirmations(t, s[0])) != 1 {
		t.Errorf("streams %+v", s)
	}
}
