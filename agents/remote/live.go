package remote

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2alog "github.com/a2aproject/a2a-go/v2/log"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/agentry-dev/agentry/internal/a2adial"
	"github.com/agentry-dev/agentry/internal/devclient"
	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/protocol/liveclient"
	"github.com/agentry-dev/agentry/runtime"
)

// remoteLeaveWait bounds how long a live stream left at a plain question
// waits for the server to end it after the client half-closed.
const remoteLeaveWait = 5 * time.Second

// Causes that end a live stream's pending approvals.
var (
	// errAnsweredElsewhere: the call ran or ended before the approver
	// answered (another client of the remote agent answered it).
	errAnsweredElsewhere = errors.New("the remote agent's call was answered elsewhere")
	// errStreamOver: the live stream ended.
	errStreamOver = errors.New("the live stream ended")
)

// liveConn is the gRPC connection of an agent's live streams and what
// every stream sends with it.
type liveConn struct {
	conn   *grpc.ClientConn
	tenant string
	opts   []liveclient.Option
	// off is set once the server refused the method: streams go back to
	// SendStreamingMessage.
	off atomic.Bool
}

// dialLive makes the connection of the live streams to the card's first
// A2A 1.0 gRPC interface, or returns nil when it has none. The
// development-tool extension is activated, so that confirmations come as
// structured tool calls, and the credentials go as metadata.
func dialLive(card *a2a.AgentCard, headers map[string]string) (*liveConn, error) {
	var iface *a2a.AgentInterface
	for _, i := range card.SupportedInterfaces {
		if i != nil && i.ProtocolBinding == a2a.TransportProtocolGRPC && (i.ProtocolVersion == "" || strings.HasPrefix(string(i.ProtocolVersion), "1.")) {
			iface = i
			break
		}
	}
	if iface == nil {
		return nil, nil
	}
	conn, err := a2adial.Dial(iface.URL)
	if err != nil {
		return nil, err
	}
	version := iface.ProtocolVersion
	if version == "" {
		version = a2a.Version
	}
	opts := []liveclient.Option{liveclient.WithExtensions(devtool.URI), liveclient.WithMetadata(a2a.SvcParamVersion, string(version))}
	for _, k := range slices.Sorted(maps.Keys(headers)) {
		opts = append(opts, liveclient.WithMetadata(k, headers[k]))
	}
	return &liveConn{conn: conn, tenant: iface.Tenant, opts: opts}, nil
}

func (l *liveConn) close() error { return l.conn.Close() }

// liveConn returns the connection of the live streams, or nil when the
// agent is reached with SendStreamingMessage.
func (r *Agent) liveConn() *liveConn {
	if r.live == nil || r.live.off.Load() {
		return nil
	}
	return r.live
}

// liveRun is what one live stream's exchange keeps.
type liveRun struct {
	tr *devclient.Translator
	// asks are the calls asked about and not yet settled, by id.
	asks map[string]*liveAsk
	// answers brings the approvers' answers to the exchange.
	answers chan liveAnswer
	// done is closed when the exchange ends: approvers' answers are
	// dropped.
	done chan struct{}
}

// liveAsk is a call the approver is asked about.
type liveAsk struct {
	req     runtime.ApprovalRequest
	options *devtool.ConfirmationRequest
	cancel  context.CancelCauseFunc
	// answered: the confirmation went out; proceed: it allowed the call.
	answered, proceed bool
}

// liveAnswer is an approver's answer.
type liveAnswer struct {
	callID string
	o      runtime.Outcome
	args   map[string]any
	err    error
}

// liveStep says how an exchange goes on after an event.
type liveStep int

const (
	liveGoOn     liveStep = iota
	liveEnded             // the task ended, or answered with a message
	liveQuestion          // the task waits for input other than a confirmation
)

// exchangeLive sends the stream's message on a new live stream and relays
// the task's events until it ends, asks a plain question, or the stream
// is aborted. Confirmations are asked of the stream's approver and
// answered on the same stream. An abort cancels the remote task (CancelTask,
// as exchange does) before the live stream is closed. A server that
// refuses the method (UNIMPLEMENTED) gets this and every later stream
// over SendStreamingMessage.
func (r *Agent) exchangeLive(st *remoteStream, live *liveConn, req *a2a.SendMessageRequest) error {
	ctx, stop := context.WithCancel(a2alog.AttachLogger(r.streams.Context(), r.log))
	defer stop()
	lreq := *req
	lreq.Tenant = live.tenant
	s, err := liveclient.Open(ctx, live.conn, &lreq, live.opts...)
	if err != nil {
		if liveclient.Code(err) == codes.Unimplemented {
			return r.fallBack(st, live, req, err)
		}
		return err
	}
	items := pump(ctx, s.Events())
	lv := &liveRun{tr: devclient.NewTranslator(), asks: map[string]*liveAsk{}, answers: make(chan liveAnswer), done: make(chan struct{})}
	defer func() {
		close(lv.done)
		for _, a := range lv.asks {
			a.cancel(errStreamOver)
		}
		s.Close()
		stop()
		for range items {
		}
	}()
	st.outcome.dataless = true
	first := true
	aborted := st.ctx.Done()
	var giveUp <-chan time.Time
	for {
		select {
		case it, ok := <-items:
			switch {
			case !ok:
				// The server half-closed: the task ended.
				return nil
			case it.err != nil:
				if first && liveclient.Code(it.err) == codes.Unimplemented {
					return r.fallBack(st, live, req, it.err)
				}
				return it.err
			case st.ctx.Err() != nil:
				if r.learn(st, it.ev) {
					r.cancelLive(st)
					return nil
				}
			default:
				first = false
				switch r.relayLive(st, lv, it.ev) {
				case liveEnded:
					return nil
				case liveQuestion:
					leave(s, items)
					return nil
				}
			}
		case a := <-lv.answers:
			r.answerLive(st, lv, s, a)
		case <-aborted:
			if st.taskID != "" {
				r.cancelLive(st)
				return nil
			}
			aborted = nil
			timer := time.NewTimer(remoteTaskIDWait)
			defer timer.Stop()
			giveUp = timer.C
		case <-giveUp:
			r.log.Warn("aborted before the remote agent named its task; the task cannot be cancelled")
			return nil
		}
	}
}

// fallBack runs the stream, and every later one, over
// SendStreamingMessage: the card declared SendLiveMessage, but the server
// does not serve it.
func (r *Agent) fallBack(st *remoteStream, live *liveConn, req *a2a.SendMessageRequest, err error) error {
	r.log.Warn("the agent card declares bidiStreaming but the server does not serve SendLiveMessage; using SendStreamingMessage", "err", err)
	live.off.Store(true)
	st.outcome = newReassembler()
	return r.exchange(st, req)
}

// cancelLive cancels an aborted live stream's task while the stream is
// still open, so that the task, not only the stream, ends.
func (r *Agent) cancelLive(st *remoteStream) {
	if st.taskID != "" && !st.state.Terminal() {
		r.cancelTask(st)
		st.cancelTried = true
	}
}

// leave ends a live stream whose task waits for a plain question's
// answer: the client half-closes and waits, within remoteLeaveWait, for
// the server to end the stream, leaving the task waiting for the next
// message (which a new live stream carries).
func leave(s *liveclient.Stream, items <-chan streamItem) {
	if s.CloseSend() != nil {
		return
	}
	timer := time.NewTimer(remoteLeaveWait)
	defer timer.Stop()
	for {
		select {
		case it, ok := <-items:
			if !ok || it.err != nil {
				return
			}
		case <-timer.C:
			return
		}
	}
}

// relayLive emits the runtime events of one event of a live stream, asks
// about a call that waits for confirmation, and says how the exchange
// goes on.
func (r *Agent) relayLive(st *remoteStream, lv *liveRun, ev a2a.Event) liveStep {
	var state a2a.TaskState
	_, isMessage := ev.(*a2a.Message)
	switch e := ev.(type) {
	case *a2a.Task:
		state = e.Status.State
		st.outcome.task(e)
	case *a2a.TaskStatusUpdateEvent:
		state = e.Status.State
	case *a2a.TaskArtifactUpdateEvent:
		st.outcome.artifact(e)
	case *a2a.Message:
		// A message answers without a task, and ends the exchange.
		st.outcome.message(e, false)
		state = a2a.TaskStateCompleted
	}
	info := ev.TaskInfo()
	r.track(st, info.ContextID, info.TaskID, state)
	step := lv.tr.Event(ev)
	_, isStatus := ev.(*a2a.TaskStatusUpdateEvent)
	for _, e := range step.Events {
		switch e.Type {
		case runtime.EventAgentEnd, runtime.EventSessionUpdate:
			// finish ends the stream; the remote's model is not ours.
			continue
		case runtime.EventError:
			if e.Error.Fatal {
				// finish reports it, with the end.
				st.reason = e.Error.Message
				continue
			}
		case runtime.EventMessage:
			if isStatus {
				for _, p := range e.Message.Content {
					if p.Type == runtime.PartText {
						st.outcome.chunk(p.Text)
					}
				}
			}
		case runtime.EventToolRequest, runtime.EventToolResponse:
			st.outcome.gap()
		}
		r.emit(st, e)
	}
	if u, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && u.Status.Message != nil && !state.Terminal() {
		// A state change's message — an input-required task's question —
		// which the translator leaves to the client.
		if dev, _ := devtool.EventFrom(u.Metadata); dev.Kind == devtool.KindStateChange {
			st.outcome.message(u.Status.Message, false)
			r.emitMessage(st, u.Status.Message.Parts, false, map[string]any{"a2aEvent": "status-update", "taskState": taskStateName(state)})
		}
	}
	for _, id := range step.Settled {
		r.settle(st, lv, id)
	}
	if step.Confirm != nil {
		r.ask(st, lv, *step.Confirm)
	}
	switch {
	case step.Ended || st.state.Terminal() || isMessage:
		return liveEnded
	case (state == a2a.TaskStateInputRequired || state == a2a.TaskStateAuthRequired) && len(lv.asks) == 0:
		return liveQuestion
	}
	return liveGoOn
}

// ask hands a call that waits for confirmation to the stream's approver;
// its answer comes back to the exchange on lv.answers.
func (r *Agent) ask(st *remoteStream, lv *liveRun, tc devtool.ToolCall) {
	if lv.asks[tc.ToolCallID] != nil {
		return
	}
	req := devclient.ApprovalRequest(tc)
	ctx, cancel := context.WithCancelCause(st.ctx)
	lv.asks[tc.ToolCallID] = &liveAsk{req: req, options: tc.ConfirmationRequest, cancel: cancel}
	approver := st.approver
	go func() {
		o, args, err := approve(ctx, approver, req)
		select {
		case lv.answers <- liveAnswer{callID: req.CallID, o: o, args: args, err: err}:
		case <-lv.done:
		}
	}()
}

// approve asks a, with its modified arguments when it is an editing
// approver; without one the call is declined.
func approve(ctx context.Context, a runtime.Approver, req runtime.ApprovalRequest) (runtime.Outcome, map[string]any, error) {
	switch a := a.(type) {
	case nil:
		return runtime.Cancel, nil, nil
	case runtime.EditingApprover:
		return a.ApproveEdit(ctx, req)
	default:
		o, err := a.Approve(ctx, req)
		return o, nil, err
	}
}

// answerLive sends an approver's answer on the live stream as the
// development-tool extension's ToolCallConfirmation, with the option the
// request offered. An approver that failed (nobody to ask) declines the
// call, as the scheduler does; an answer to a call that has settled
// meanwhile, or to an aborted stream's, is dropped.
func (r *Agent) answerLive(st *remoteStream, lv *liveRun, s *liveclient.Stream, a liveAnswer) {
	ask := lv.asks[a.callID]
	if ask == nil || ask.answered || st.ctx.Err() != nil {
		return
	}
	o, args := a.o, a.args
	if a.err != nil {
		r.log.Warn("the approver failed; declining the remote agent's call", "tool", ask.req.Tool, "err", a.err)
		o, args = runtime.Cancel, nil
	}
	o = devclient.Offered(ask.options, o)
	msg := a2a.NewMessage(a2a.MessageRoleUser, devclient.Confirmation(ask.req, o, args))
	msg.TaskID, msg.ContextID = st.taskID, r.ContextID()
	if err := s.Send(&a2a.SendMessageRequest{Message: msg}); err != nil {
		// The stream is ending; its events say why.
		r.log.Warn("cannot send the confirmation to the remote agent", "tool", ask.req.Tool, "err", err)
		return
	}
	ask.answered, ask.proceed = true, o != runtime.Cancel
}

// settle forgets a call that runs or ended: an approval still open is
// withdrawn (the call was answered elsewhere), and an approved call's
// start is reported to an approver that shows it.
func (r *Agent) settle(st *remoteStream, lv *liveRun, id string) {
	ask := lv.asks[id]
	if ask == nil {
		return
	}
	delete(lv.asks, id)
	if !ask.answered {
		ask.cancel(errAnsweredElsewhere)
		return
	}
	ask.cancel(nil)
	if o, ok := st.approver.(runtime.ExecutionObserver); ok && ask.proceed {
		o.Executing(st.ctx, id)
	}
}
