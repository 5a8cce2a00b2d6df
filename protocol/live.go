package protocol

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1/pbconv"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentry-dev/agentry/protocol/liveclient"
)

// The live binding: A2A's proposed bidirectional gRPC method
// SendLiveMessage (docs/live.md), served beside a2a-go's methods of
// lf.a2a.v1.A2AService. A stream carries one task: the first message
// starts it (or answers it, or reattaches to it), the task's events go
// out as its StreamResponses, and at input-required the stream stays open
// for the client's answer, which goes through the same request handler,
// interceptor and first-answer-wins checks as on every other binding.

// liveGRPCOnly is the error of the HTTP bindings for SendLiveMessage.
const liveGRPCOnly = liveclient.MethodName + ", A2A's bidirectional stream, is served on the gRPC binding only (" + liveclient.Service + "/" + liveclient.MethodName + "; docs/live.md)"

// DefaultLiveIdleTimeout is LiveConfig.IdleTimeout's default.
const DefaultLiveIdleTimeout = 10 * time.Minute

// DefaultMaxMessageBytes is Config.MaxMessageBytes's default: gRPC's own,
// and the HTTP guard's default body limit.
const DefaultMaxMessageBytes = 4 << 20

// LiveClientNameKey is the gRPC metadata key a live client may name
// itself with (at most 64 printable characters): a later answer that
// loses to its own is told `by client "name"`.
const LiveClientNameKey = "agentry-client-name"

// LiveConfig sets the policy of SendLiveMessage streams.
type LiveConfig struct {
	// IdleTimeout cancels a task a live stream has been on when it waits
	// for input this long without an answer, whether or not its client is
	// still connected: a run is never left parked for ever by a stream.
	// Default DefaultLiveIdleTimeout; it must not be negative.
	IdleTimeout time.Duration
	// After is the idle timer; default time.After.
	After func(time.Duration) <-chan time.Time
}

func (c LiveConfig) withDefaults() (LiveConfig, error) {
	if c.IdleTimeout < 0 {
		return c, fmt.Errorf("Live.IdleTimeout %s: want a positive duration (0 for %s); a task waiting for input must not wait for ever", c.IdleTimeout, DefaultLiveIdleTimeout)
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultLiveIdleTimeout
	}
	if c.After == nil {
		c.After = time.After
	}
	return c, nil
}

// rawRequest receives a live stream's message undecoded (liveCodec).
type rawRequest struct{ b []byte }

// liveCodec is gRPC's proto codec, except that a *rawRequest receives a
// message's bytes as they came: the live stream decodes them itself, so
// that a message that is not protobuf is the client's error
// (InvalidArgument), not gRPC's Internal, which gRPC would send itself.
type liveCodec struct{ encoding.CodecV2 }

func (c liveCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if r, ok := v.(*rawRequest); ok {
		r.b = data.Materialize()
		return nil
	}
	return c.CodecV2.Unmarshal(data, v)
}

// liveService is lf.a2a.v1.A2AService with SendLiveMessage: a2a-go's
// handler serves the other methods.
type liveService struct {
	*a2agrpc.Handler
	s *Server
	// echo renders errors as a2a-go's gRPC binding does (see grpcError).
	echo *a2agrpc.Handler
}

// registerGRPC registers the A2A service, SendLiveMessage included, on g.
// a2a-go's generated description is copied, not changed, and the service
// is registered once (gRPC refuses a service name twice): existing
// clients see the same methods.
func (s *Server) registerGRPC(g *grpc.Server) {
	impl := &liveService{Handler: a2agrpc.NewHandler(s.handler), s: s, echo: a2agrpc.NewHandler(errorEcho{})}
	desc := a2apb.A2AService_ServiceDesc // liveclient.Service (TestLiveServiceName)
	live := *liveclient.StreamDesc()
	live.Handler = func(srv any, stream grpc.ServerStream) error {
		return srv.(*liveService).SendLiveMessage(stream)
	}
	desc.Streams = append(slices.Clone(desc.Streams), live)
	g.RegisterService(&desc, impl)
}

// grpcError renders err as a2a-go's gRPC binding renders a handler's
// error (code, message, ErrorInfo), through its own handler: the codes
// come from a2a-go's one table. A gRPC status passes as it is.
func grpcError(ctx context.Context, echo *a2agrpc.Handler, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	_, err = echo.GetTask(context.WithValue(ctx, errorKey{}, err), &a2apb.GetTaskRequest{Id: "-"})
	return err
}

// liveKey carries the live call a request came on.
type liveKey struct{}

func liveFrom(ctx context.Context) *liveCall {
	v, _ := ctx.Value(liveKey{}).(*liveCall)
	return v
}

// liveCall is one SendLiveMessage stream.
type liveCall struct {
	s      *Server
	stream grpc.ServerStream
	name   string
	// config is the first message's configuration, which a later
	// message without one keeps.
	config *a2a.SendMessageConfig
	// t is the stream's task once a message named it; from is the log
	// position its events start at, and snap, when set, the task as it
	// was there, sent first. Set by send and resume (bind), on the
	// stream's goroutine.
	t    *liveTask
	from int
	snap *a2a.Task
	// closed: the client half-closed its side.
	closed bool
	// last is the state of the last event sent.
	last a2a.TaskState
	// metaMap and metaPB are the last status metadata converted (toProto).
	metaMap map[string]any
	metaPB  *structpb.Struct
}

// bind makes t the stream's task, its events from log position from
// (and snap first); t.mu is held. A stream keeps its first task.
func (lc *liveCall) bind(t *liveTask, from int, snap *a2a.Task) {
	if lc.t != nil {
		return
	}
	lc.t, lc.from, lc.snap = t, from, snap
	t.liveSeen = true
}

// historyLength is the first message's historyLength, for the task a
// stream starts with.
func (lc *liveCall) historyLength() *int {
	if lc.config == nil {
		return nil
	}
	return lc.config.HistoryLength
}

// SendLiveMessage serves one live stream (docs/live.md).
func (l *liveService) SendLiveMessage(stream grpc.ServerStream) error {
	ctx := stream.Context()
	var params *a2asrv.ServiceParams
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		params = a2asrv.NewServiceParams(md)
	}
	ctx, cc := a2asrv.NewCallContext(ctx, params)
	lc := &liveCall{s: l.s, stream: stream}
	var err error
	select {
	case <-l.s.draining:
		err = errShuttingDown
	default:
		err = lc.serve(ctx, cc)
	}
	// The activated extensions, as a2a-go's gRPC binding answers them.
	if uris := cc.Extensions().ActivatedURIs(); len(uris) > 0 {
		stream.SetTrailer(metadata.MD{strings.ToLower(a2a.SvcParamExtensions): uris})
	}
	return grpcError(ctx, l.echo, err)
}

// errShuttingDown ends the live streams of a server that shuts down.
var errShuttingDown = status.Error(codes.Unavailable, "the server is shutting down: reconnect to the task when it is back")

// Drain ends every live stream with UNAVAILABLE, and refuses new ones, for
// a server about to shut down: a stream whose task waits for input would
// hold the HTTP server's graceful shutdown for as long as it may wait.
// Their tasks are left alone (Close ends them). Register it with
// http.Server.RegisterOnShutdown.
func (s *Server) Drain() {
	s.drainOnce.Do(func() { close(s.draining) })
}

// received is one Recv's result.
type received struct {
	req *a2apb.SendMessageRequest
	err error
}

// serve runs the stream: its first message, then its task's events and
// the client's later messages, to the task's end. A nil error half-closes
// the stream (status OK).
func (lc *liveCall) serve(ctx context.Context, cc *a2asrv.CallContext) error {
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get(LiveClientNameKey); len(v) > 0 {
			name, err := clientName(v[0])
			if err != nil {
				return invalidParams("metadata %s: %v", LiveClientNameKey, err)
			}
			lc.name = name
		}
	}
	ctx = context.WithValue(ctx, liveKey{}, lc)
	pb, err := lc.recv()
	if err == io.EOF {
		return invalidParams("the stream was closed before its first message: send a SendMessageRequest first (a message that starts a task, answers one, or names a task with no parts to reattach)")
	}
	if err != nil {
		return lc.recvError(ctx, err)
	}
	req, err := liveRequest(pb)
	if err != nil {
		return err
	}
	lc.config = req.Config
	m := req.Message
	if m.TaskID != "" && len(m.Parts) == 0 {
		if err := lc.reattach(ctx, cc, req); err != nil || lc.t == nil {
			return err // refused, or the finished task sent
		}
	} else if err := lc.send(ctx, req); err != nil {
		return err
	}
	if lc.t == nil {
		return a2a.NewError(a2a.ErrInternalError, "the message started no task")
	}
	msgs := make(chan received, 1)
	go func() {
		for {
			pb, err := lc.recv()
			select {
			case msgs <- received{pb, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return lc.follow(ctx, msgs)
}

// recv reads the stream's next message. One that is not a
// SendMessageRequest is an ErrInvalidParams error.
func (lc *liveCall) recv() (*a2apb.SendMessageRequest, error) {
	var raw rawRequest
	if err := lc.stream.RecvMsg(&raw); err != nil {
		return nil, err
	}
	var pb a2apb.SendMessageRequest
	if err := proto.Unmarshal(raw.b, &pb); err != nil {
		return nil, invalidParams("a message of the stream is not a SendMessageRequest: %v", err)
	}
	return &pb, nil
}

// liveRequest converts a message of the stream, naming what is wrong with
// one that does not convert.
func liveRequest(pb *a2apb.SendMessageRequest) (*a2a.SendMessageRequest, error) {
	if pb.GetMessage() == nil {
		return nil, invalidParams("message is required: every message of a live stream is a SendMessageRequest with a message")
	}
	for i, p := range pb.GetMessage().GetParts() {
		if p.GetContent() == nil {
			return nil, invalidParams("message.parts[%d] has no content this server knows: give it one of text, data, url or raw", i)
		}
	}
	req, err := pbconv.FromProtoSendMessageRequest(pb)
	if err != nil {
		return nil, invalidParams("the message does not convert: %v", err)
	}
	return req, nil
}

// recvError is the stream's error for a failed read: the message's own,
// the client's going away, or gRPC's status (which gRPC has already sent:
// a message over the size limit, a stream cut short, and, through the
// HTTP guard, messages that together pass a2a.maxBodyBytes).
func (lc *liveCall) recvError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	return err
}

// send passes a message through the request handler (a2a-go's
// interceptors, then agentry's: the admission checks, then send or
// resume), which binds the stream's task. The handler returns at once;
// the task's events come through the stream's follower.
func (lc *liveCall) send(ctx context.Context, req *a2a.SendMessageRequest) error {
	cfg := a2a.SendMessageConfig{}
	if req.Config != nil {
		cfg = *req.Config
	} else if lc.config != nil {
		cfg = *lc.config
	}
	cfg.ReturnImmediately = true
	req.Config = &cfg
	_, err := lc.s.handler.SendMessage(ctx, req)
	if err != nil && errors.Is(err, a2a.ErrInvalidRequest) {
		// agentry's InvalidRequest errors are state conflicts: a
		// duplicate or late answer, a busy context, a running task.
		msg := err.Error()
		if t := lc.t; t != nil {
			msg += "; task " + string(t.id) + " is " + stateName(t.state())
		}
		err = a2a.NewError(a2a.ErrUnsupportedOperation, msg)
	}
	return err
}

// reattach binds the stream to a task named with no parts: a running or
// parked task's current state, then its events; a finished one's final
// state, sent at once.
func (lc *liveCall) reattach(ctx context.Context, cc *a2asrv.CallContext, req *a2a.SendMessageRequest) error {
	s := lc.s
	// The interceptor's part for a read: the one user, the extension.
	cc.User = a2asrv.NewAuthenticatedUser(User, nil)
	if _, err := activate(cc); err != nil {
		return err
	}
	m := req.Message
	var hl *int
	if req.Config != nil {
		hl = req.Config.HistoryLength
		if hl != nil {
			if err := checkHistoryLength("configuration.historyLength", *hl); err != nil {
				return err
			}
		}
	}
	t := s.getLive(m.TaskID)
	if t == nil {
		st, err := s.cfg.TaskStore.Get(ctx, m.TaskID)
		if errors.Is(err, a2a.ErrTaskNotFound) {
			return a2a.NewError(a2a.ErrTaskNotFound, fmt.Sprintf("task %s is not known to this server", m.TaskID))
		}
		if err != nil {
			return err
		}
		if err := checkTaskContext(m, st.Task); err != nil {
			return err
		}
		if !st.Task.Status.State.Terminal() {
			// As the interceptor says it of a message to such a task.
			return invalidParams("task %s cannot be followed: its run is gone (the server restarted while it was %s); start a new task in context %s",
				m.TaskID, st.Task.Status.State, st.Task.ContextID)
		}
		task := copyTask(st.Task)
		if hl != nil && len(task.History) > *hl {
			task.History = task.History[len(task.History)-*hl:]
		}
		return lc.sendEvent(task)
	}
	t.mu.Lock()
	if err := checkTaskContext(m, t.task); err != nil {
		t.mu.Unlock()
		return err
	}
	lc.bind(t, len(t.log), t.snapshotLocked(hl))
	ap := t.waiting
	t.mu.Unlock()
	if ap != nil {
		// A client came back to the question: its idle time starts again.
		s.armIdle(t, ap)
	}
	return nil
}

// follow sends the stream's task's events and serves the client's later
// messages until the task ends (nil: the server half-closes), the client
// leaves, or a message is refused.
func (lc *liveCall) follow(ctx context.Context, msgs <-chan received) (err error) {
	s, t := lc.s, lc.t
	t.mu.Lock()
	t.lives++
	changed := t.watch()
	t.mu.Unlock()
	gone := false
	defer func() {
		t.mu.Lock()
		t.lives--
		others := t.lives
		// A run parked on a question (its input-required may go out a
		// moment before its execution ends) is the idle policy's.
		parked := t.waiting != nil
		t.unwatchLocked(changed)
		t.mu.Unlock()
		if gone && others == 0 && !parked {
			// As for an SSE client: the run goes on or is aborted by
			// the server's policy, unless another live stream follows it.
			s.clientLeft(t)
		}
	}()
	if lc.snap != nil {
		if err := lc.sendEvent(lc.snap); err != nil {
			gone = true
			return err
		}
		if lc.snap.Status.State.Terminal() {
			return nil
		}
	}
	from := lc.from
	w := liveWriterFrom(ctx)
	defer w.batch(0)
	for {
		t.mu.Lock()
		evs := t.log[from:]
		from = len(t.log)
		t.mu.Unlock()
		// What is in the log already goes out in one write.
		w.batch(len(evs))
		for _, ev := range evs {
			if err := lc.sendEvent(ev); err != nil {
				gone = true
				return err
			}
			if finished(ev) {
				return nil
			}
		}
		if lc.closed && waitsForInput(lc.last) && t.unanswered() {
			// The client cannot answer any more, and nobody has.
			return nil
		}
		select {
		case <-changed:
		case r := <-msgs:
			if r.err == io.EOF {
				lc.closed = true
				continue
			}
			if r.err != nil {
				gone = ctx.Err() != nil
				return lc.recvError(ctx, r.err)
			}
			if err := lc.later(ctx, r.req); err != nil {
				return err
			}
		case <-ctx.Done():
			gone = true
			return status.FromContextError(ctx.Err()).Err()
		case <-s.ctx.Done():
			return errShuttingDown
		case <-s.draining:
			return errShuttingDown
		}
	}
}

// later serves a message after the first: an answer to the stream's task
// while it waits for input. Empty ids are the stream's own.
func (lc *liveCall) later(ctx context.Context, pb *a2apb.SendMessageRequest) error {
	req, err := liveRequest(pb)
	if err != nil {
		return err
	}
	t, m := lc.t, req.Message
	t.mu.Lock()
	contextID := t.task.ContextID
	t.mu.Unlock()
	switch {
	case m.TaskID == "":
		m.TaskID = t.id
	case m.TaskID != t.id:
		return invalidParams("this stream carries task %s; a live stream carries one task: open another stream for task %s", t.id, m.TaskID)
	}
	switch {
	case m.ContextID == "":
		m.ContextID = contextID
	case m.ContextID != contextID:
		return invalidParams("contextId %q is not the context of this stream's task %s (%s): leave contextId out on a live stream", m.ContextID, t.id, contextID)
	}
	if len(m.Parts) == 0 {
		return invalidParams("message.parts must hold at least one part: this stream already follows task %s", t.id)
	}
	if err := t.answerable(); err != nil {
		return err
	}
	return lc.send(ctx, req)
}

// answerable refuses a message for a task that is not waiting for input,
// or whose question someone already answered, naming its state and who
// answered.
func (t *liveTask) answerable() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	state := t.task.Status.State
	switch {
	case state.Terminal():
		return a2a.NewError(a2a.ErrUnsupportedOperation, fmt.Sprintf(
			"task %s is %s and takes no more messages: send the next one as a new task in context %s", t.id, stateName(state), t.task.ContextID))
	case t.waiting != nil && t.accepted != nil:
		return a2a.NewError(a2a.ErrUnsupportedOperation, fmt.Sprintf(
			"task %s is %s, but tool call %s was already answered (%s) by %s; this message was ignored",
			t.id, stateName(state), t.waiting.req.CallID, t.accepted.outcome, t.acceptedBy))
	case t.waiting == nil:
		if t.running {
			// Answered: the run goes on before its next update says so.
			state = a2a.TaskStateWorking
		}
		msg := fmt.Sprintf("task %s is %s, not waiting for input", t.id, stateName(state))
		if call, opt := t.lastAnswered(); call != "" {
			msg += fmt.Sprintf(": tool call %s was already answered (%s)%s", call, opt, t.by(call))
		}
		return a2a.NewError(a2a.ErrUnsupportedOperation, msg+"; this message was ignored (answer on the stream when it shows input-required)")
	}
	return nil
}

// lastAnswered is the call answered last, if any; t.mu is held.
func (t *liveTask) lastAnswered() (call, option string) {
	if len(t.answerOrder) == 0 {
		return "", ""
	}
	call = t.answerOrder[len(t.answerOrder)-1]
	return call, t.answered[call]
}

// unanswered reports whether the task waits for an answer nobody gave.
func (t *liveTask) unanswered() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.waiting != nil && t.accepted == nil
}

// state is the task's state.
func (t *liveTask) state() a2a.TaskState {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.task.Status.State
}

// sendEvent sends one event on the stream.
func (lc *liveCall) sendEvent(ev a2a.Event) error {
	pb, err := lc.toProto(ev)
	if err != nil {
		return a2a.NewError(a2a.ErrInternalError, fmt.Sprintf("cannot convert a %T event: %v", ev, err))
	}
	if err := lc.stream.SendMsg(pb); err != nil {
		return err
	}
	switch e := ev.(type) {
	case *a2a.Task:
		lc.last = e.Status.State
	case *a2a.TaskStatusUpdateEvent:
		lc.last = e.Status.State
	}
	return nil
}

// toProto converts an event with a2a-go's conversion. A status update's
// metadata is converted once per map: the translator gives every update
// of a kind the same map, which nobody modifies, and a text delta's
// conversion was mostly its metadata's.
func (lc *liveCall) toProto(ev a2a.Event) (*a2apb.StreamResponse, error) {
	u, ok := ev.(*a2a.TaskStatusUpdateEvent)
	if !ok || u.Metadata == nil {
		return pbconv.ToProtoStreamResponse(ev)
	}
	bare := *u
	bare.Metadata = nil
	pb, err := pbconv.ToProtoStreamResponse(&bare)
	if err != nil {
		return nil, err
	}
	if lc.metaMap == nil || reflect.ValueOf(lc.metaMap).UnsafePointer() != reflect.ValueOf(u.Metadata).UnsafePointer() {
		st, err := structpb.NewStruct(u.Metadata)
		if err != nil {
			return nil, err
		}
		// Holding the map keeps its address from naming another one.
		lc.metaMap, lc.metaPB = u.Metadata, st
	}
	pb.GetStatusUpdate().Metadata = lc.metaPB
	return pb, nil
}

// finished reports whether ev is a task's final state.
func finished(ev a2a.Event) bool {
	switch e := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		return e.Status.State.Terminal()
	case *a2a.Task:
		return e.Status.State.Terminal()
	}
	return false
}

func waitsForInput(s a2a.TaskState) bool {
	return s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}

// armIdle starts the idle policy's timer for a task parked on ap, or,
// once started, starts it again (a live stream came back to the
// question). The timer ends when anyone answers, the task ends, or it
// fires: the task is then cancelled.
func (s *Server) armIdle(t *liveTask, ap *approval) {
	t.mu.Lock()
	if ap.idlePoke != nil {
		select {
		case ap.idlePoke <- struct{}{}:
		default:
		}
		t.mu.Unlock()
		return
	}
	poke := make(chan struct{}, 1)
	ap.idlePoke = poke
	changed := t.watch()
	t.mu.Unlock()
	go s.idleWait(t, ap, changed, poke)
}

// idleWait runs the idle timer of a task parked on ap.
func (s *Server) idleWait(t *liveTask, ap *approval, changed, poke chan struct{}) {
	defer t.unwatch(changed)
	d := s.liveCfg.IdleTimeout
	fire := s.liveCfg.After(d)
	for {
		select {
		case <-fire:
			s.cancelIdle(t, ap, d)
			return
		case <-poke:
			fire = s.liveCfg.After(d)
		case <-changed:
		case <-s.ctx.Done():
			return
		}
		t.mu.Lock()
		waits := t.waiting == ap && t.accepted == nil && !t.task.Status.State.Terminal()
		t.mu.Unlock()
		if !waits {
			return // answered, cancelled or ended
		}
	}
}

// cancelIdle cancels a task still parked, unanswered, on ap after d.
func (s *Server) cancelIdle(t *liveTask, ap *approval, d time.Duration) {
	_, ok := s.stopRun(t, func() bool {
		if t.waiting != ap || t.accepted != nil || t.task.Status.State.Terminal() {
			return false
		}
		t.idled = d
		return true
	})
	if ok {
		s.log.Info("a2a: no answer on a live stream's task; cancelling it", "task", t.id, "after", d)
	}
}

// idleMessage is the canceled status of a task the idle policy ended.
func idleMessage(d time.Duration) string {
	return fmt.Sprintf("No answer came for %s while the task waited for input (a2a.live.idleMinutes); the task was cancelled.", d)
}

// liveWriter is a live stream's response writer. gRPC flushes each
// response as it writes it: a write to the connection, and hand-offs
// between the HTTP/2 server's goroutines, for every update, most of what
// a text delta costs. The stream says how many responses it is about to
// send at once (batch); the flushes of all but the last are held back,
// and their bytes go out with it (or as the HTTP/2 server's buffer
// fills).
type liveWriter struct {
	http.ResponseWriter
	// held counts the responses of the batch not yet written.
	held atomic.Int64
}

type liveWriterKey struct{}

// liveWriterFrom returns the stream's writer, nil when the request did
// not come through Handler (a test's own gRPC server).
func liveWriterFrom(ctx context.Context) *liveWriter {
	w, _ := ctx.Value(liveWriterKey{}).(*liveWriter)
	return w
}

// batch announces n responses about to be sent.
func (w *liveWriter) batch(n int) {
	if w != nil {
		w.held.Store(int64(n))
	}
}

// Flush implements http.Flusher: gRPC calls it after each response (and
// after its status); it flushes unless more of the batch follow.
func (w *liveWriter) Flush() {
	for {
		n := w.held.Load()
		if n <= 0 {
			break
		}
		if w.held.CompareAndSwap(n, n-1) {
			if n > 1 {
				return // the batch's next response flushes this one
			}
			break
		}
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap returns the writer underneath, for http.ResponseController.
func (w *liveWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// grpcTrace, set by benchmarks, sees every message a gRPC stream
// receives (recv) or is about to send.
type grpcTrace func(recv bool, stream grpc.ServerStream, m any)

// traceStreams is the stream interceptor that hands each stream's
// messages to the benchmark's trace, when one is set.
func (s *Server) traceStreams(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, next grpc.StreamHandler) error {
	if tr := s.grpcTrace.Load(); tr != nil {
		ss = tracedStream{ServerStream: ss, trace: *tr}
	}
	return next(srv, ss)
}

type tracedStream struct {
	grpc.ServerStream
	trace grpcTrace
}

func (t tracedStream) RecvMsg(m any) error {
	err := t.ServerStream.RecvMsg(m)
	if err == nil {
		t.trace(true, t.ServerStream, m)
	}
	return err
}

func (t tracedStream) SendMsg(m any) error {
	t.trace(false, t.ServerStream, m)
	return t.ServerStream.SendMsg(m)
}
