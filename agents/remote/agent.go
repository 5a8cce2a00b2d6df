// Package remote is agentry's remote A2A agent: an AgentProtocol over
// a2a-go's client (Agent), and the connections a session's invoke_agent
// tool keeps to the remote agents it calls (Invoker).
package remote

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	a2alog "github.com/a2aproject/a2a-go/v2/log"
	"github.com/google/uuid"

	"github.com/agentry-dev/agentry/agents"
	"github.com/agentry-dev/agentry/internal/a2adial"
	"github.com/agentry-dev/agentry/internal/a2aparts"
	"github.com/agentry-dev/agentry/protocol/liveclient"
	"github.com/agentry-dev/agentry/runtime"
)

// Limits of the calls an Agent makes besides its streams, which last
// as long as the remote task does.
const (
	// remoteCardTimeout bounds the agent card request.
	remoteCardTimeout = 30 * time.Second
	// remoteCancelTimeout bounds the tasks/cancel call of an aborted
	// stream, which runs after the stream's own context has ended.
	remoteCancelTimeout = 10 * time.Second
	// remoteTaskIDWait bounds how long an aborted stream waits for the
	// remote task's id, so that it can cancel the task.
	remoteTaskIDWait = 5 * time.Second
)

// Config configures an Agent.
type Config struct {
	// Definition is the remote agent: where its card is (AgentCardURL) or
	// the card itself (AgentCardJSON), and its credentials.
	Definition agents.Definition
	// HTTPClient makes the card request and the HTTP transports' calls.
	// Nil uses a client with connection timeouts but no overall one: a
	// streamed task lasts as long as the remote agent works on it.
	HTTPClient *http.Client
	// Logger receives the agent's logs and the A2A client's; nil is
	// slog.Default().
	Logger *slog.Logger
	// Now stamps events; nil is time.Now.
	Now func() time.Time
	// NewID names streams; nil gives random UUIDs.
	NewID func() string
	// Approver asks about the remote task's tool calls that wait for a
	// human, on a live stream (see Agent); nil declines them, as a batch
	// run does.
	Approver runtime.Approver
}

// Agent is the runtime.AgentProtocol of a remote A2A agent. Each Send that
// carries a message sends it to the agent as one streamed A2A message and
// starts a protocol stream: message{user}, agent_start, a message{agent}
// for each status message and artifact update the agent streams back, an
// error event if the task fails, and agent_end: completed, elicitation
// when the task waits for input or authentication, failed, or aborted.
// agent_end's data holds "result", the output reassembled as gemini-cli
// does, and the A2A "taskState", "contextId" and "taskId"; every event's
// _meta carries the contextId and taskId once the agent has named them.
// As gemini-cli does, the agent keeps the contextId across streams, and
// the taskId of a task that waits for input, so that the next message
// answers it.
//
// An agent whose card declares capabilities.bidiStreaming and offers a
// gRPC interface is reached over A2A's SendLiveMessage instead, with the
// development-tool extension activated: a stream is one live gRPC stream,
// whose text, thoughts and tool calls become the runtime events the
// agent's session emitted (internal/devclient). A tool call that waits
// for confirmation is asked of the approver and answered on the same
// stream, and the task goes on there; only a plain question (input
// required without a call to confirm) ends the stream with elicitation,
// the next message answering it on a new live stream.
//
// Streams run one at a time, in Send order, like a runtime.Session's; a Send while
// one runs queues behind it. An Agent is safe for concurrent use.
type Agent struct {
	def    agents.Definition
	card   *a2a.AgentCard
	client *a2aclient.Client
	log    *slog.Logger
	newID  func() string
	// closeIdle releases the default HTTP client's connections; nil when
	// the caller's client is used.
	closeIdle func()
	// approver answers the confirmations of Send's streams.
	approver runtime.Approver
	// live is the gRPC connection of the live streams; nil when the
	// agent is reached with SendStreamingMessage.
	live *liveConn

	// streams runs the agent's streams and keeps its event log.
	streams *runtime.StreamQueue

	mu        sync.Mutex // guards the fields below
	contextID string
	taskID    a2a.TaskID
}

var _ runtime.AgentProtocol = (*Agent)(nil)

// remoteStream is one Send's exchange with the remote agent.
type remoteStream struct {
	id    string
	user  []runtime.ContentPart
	parts a2a.ContentParts
	meta  map[string]any
	// ctx is the stream's, set when it starts running.
	ctx    context.Context
	taskID a2a.TaskID    // the task this stream works on, once known
	state  a2a.TaskState // the task's last state
	// reason is the agent's message with a failed, rejected or canceled
	// state.
	reason  string
	outcome *reassembler
	// approver answers the confirmations of a live stream.
	approver runtime.Approver
	// cancelTried: the aborted stream's task was cancelled, or that
	// failed; finish does not try again.
	cancelTried bool
}

// New connects to the remote agent of cfg.Definition: it gets
// the agent card (from AgentCardURL with the SDK's resolver, or parsed from
// AgentCardJSON; A2A v1.0 and v0.3 cards both), resolves the credentials,
// and opens a client on the first of the card's interfaces the A2A client
// supports: JSON-RPC, HTTP+JSON or gRPC, protocol 1.0 or 0.3.
func New(ctx context.Context, cfg Config) (*Agent, error) {
	def := cfg.Definition
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("agent", def.Name)
	now, newID := cfg.Now, cfg.NewID
	if now == nil {
		now = time.Now
	}
	if newID == nil {
		newID = uuid.NewString
	}
	hc := cfg.HTTPClient
	var closeIdle func()
	if hc == nil {
		// No Client.Timeout: it would cut a long task's event stream. The
		// default transport's dial, TLS and idle timeouts still apply, and
		// every request is bounded by its context.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		hc = &http.Client{Transport: tr}
		closeIdle = tr.CloseIdleConnections
	}
	fail := func(err error) (*Agent, error) {
		if closeIdle != nil {
			closeIdle()
		}
		return nil, fmt.Errorf("remote agent %s: %w", def.Name, err)
	}
	// Credentials are resolved once per connection: a missing variable is
	// reported before anything is sent.
	headers, err := def.Auth.Headers(nil)
	if err != nil {
		return fail(err)
	}
	card, bidi, err := resolveCard(a2alog.AttachLogger(ctx, log), def, hc, headers)
	if err != nil {
		return fail(err)
	}
	var live *liveConn
	if bidi {
		if live, err = dialLive(card, headers); err != nil {
			return fail(fmt.Errorf("connect to %q: %w", card.Name, err))
		}
	}
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	hc = &http.Client{Transport: a2adial.RefusedStreams(rt), CheckRedirect: hc.CheckRedirect, Jar: hc.Jar, Timeout: hc.Timeout}
	client, err := a2aclient.NewFromCard(ctx, card,
		a2aclient.WithJSONRPCTransport(hc),
		a2aclient.WithRESTTransport(hc),
		a2aclient.WithTransport(a2a.TransportProtocolGRPC, a2aclient.TransportFactoryFn(newGRPCTransport)),
		a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: hc}),
		a2av0.WithRESTTransport(a2av0.RESTTransportConfig{Client: hc}),
		a2aclient.WithCallInterceptors(
			a2aclient.NewLoggingInterceptor(&a2aclient.LoggingConfig{Level: slog.LevelDebug, ErrorLevel: slog.LevelDebug}),
			headerInterceptor{headers: headers},
		),
	)
	if err != nil {
		if live != nil {
			live.close()
		}
		return fail(fmt.Errorf("connect to %q: %w", card.Name, err))
	}
	return &Agent{
		def: def, card: card, client: client, log: log, newID: newID, closeIdle: closeIdle,
		approver: cfg.Approver, live: live,
		streams: runtime.NewStreamQueue(ctx, now),
	}, nil
}

// resolveCard returns the definition's agent card, and whether it declares
// capabilities.bidiStreaming (SendLiveMessage), which a2a-go's card type
// does not hold: the parser sees the card's JSON. The credentials go with
// the card request only when the definition says the card needs them: a
// public card URL should not receive them.
func resolveCard(ctx context.Context, def agents.Definition, hc *http.Client, headers map[string]string) (card *a2a.AgentCard, bidi bool, err error) {
	// The v0.3 parser reads v1.0 cards too (supportedInterfaces wins), so
	// one parser serves gemini-cli's a2a-server and current servers.
	v0 := a2av0.NewAgentCardParser()
	parse := func(b []byte) (*a2a.AgentCard, error) {
		bidi = liveclient.Supported(b)
		return v0(b)
	}
	if def.AgentCardJSON != "" {
		card, err := parse([]byte(def.AgentCardJSON))
		if err != nil {
			return nil, false, fmt.Errorf("agent_card_json: %w", err)
		}
		return card, bidi, nil
	}
	if def.AgentCardURL == "" {
		return nil, false, errors.New("no agent card: set agent_card_url or agent_card_json")
	}
	u, err := url.Parse(def.AgentCardURL)
	if err != nil {
		return nil, false, fmt.Errorf("agent_card_url: %w", err)
	}
	// The resolver joins a base URL and a path; agent_card_url is the
	// card's full URL, or the agent's base URL for the well-known path.
	base := url.URL{Scheme: u.Scheme, User: u.User, Host: u.Host, RawQuery: u.RawQuery}
	var opts []agentcard.ResolveOption
	if p := u.EscapedPath(); p != "" && p != "/" {
		opts = append(opts, agentcard.WithPath(p))
	}
	if def.Auth != nil && def.Auth.AgentCardRequiresAuth {
		for k, v := range headers {
			opts = append(opts, agentcard.WithRequestHeader(k, v))
		}
	}
	ctx, cancel := context.WithTimeout(ctx, remoteCardTimeout)
	defer cancel()
	resolver := &agentcard.Resolver{Client: hc, CardParser: parse}
	card, err = resolver.Resolve(ctx, base.String(), opts...)
	if err != nil {
		return nil, false, fmt.Errorf("get agent card %s: %w", def.AgentCardURL, err)
	}
	return card, bidi, nil
}

// headerInterceptor adds the agent's credentials to every call as service
// parameters, which the HTTP transports send as headers and gRPC as
// metadata.
type headerInterceptor struct {
	a2aclient.PassthroughInterceptor
	headers map[string]string
}

func (h headerInterceptor) Before(ctx context.Context, req *a2aclient.Request) (context.Context, any, error) {
	for k, v := range h.headers {
		req.ServiceParams[strings.ToLower(k)] = []string{v}
	}
	return ctx, nil, nil
}

// newGRPCTransport opens a gRPC connection to a card's interface, with
// a2adial's rules: TLS, except to a loopback address or where the URL's
// scheme says plain text.
func newGRPCTransport(_ context.Context, _ *a2a.AgentCard, iface *a2a.AgentInterface) (a2aclient.Transport, error) {
	conn, err := a2adial.Dial(iface.URL)
	if err != nil {
		return nil, err
	}
	return a2agrpc.NewGRPCTransport(conn), nil
}

// Card returns the agent card the agent was reached through.
func (r *Agent) Card() *a2a.AgentCard { return r.card }

// ContextID returns the A2A context of the conversation, "" before the
// agent has answered.
func (r *Agent) ContextID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.contextID
}

// TaskID returns the task the next message continues: one that waits for
// input, or "" when the next message starts a new task.
func (r *Agent) TaskID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return string(r.taskID)
}

// Send implements AgentProtocol. Only messages are accepted: a remote
// agent has no model or settings to update, so an update is an error
// wrapping ErrInvalidSend. A Send while a stream runs queues behind it.
func (r *Agent) Send(ctx context.Context, p runtime.Send) (string, error) {
	return r.send(ctx, p, r.approver)
}

// send is Send with the approver of the stream's confirmations.
func (r *Agent) send(_ context.Context, p runtime.Send, approver runtime.Approver) (string, error) {
	if (p.Message == nil) == (p.Update == nil) {
		return "", fmt.Errorf("%w: set exactly one of message and update", runtime.ErrInvalidSend)
	}
	if p.Update != nil {
		return "", fmt.Errorf("%w: a remote agent takes messages, not updates", runtime.ErrInvalidSend)
	}
	parts, err := a2aparts.FromContent(p.Message.Content)
	if err != nil {
		return "", fmt.Errorf("%w: %w", runtime.ErrInvalidSend, err)
	}
	user := p.Message.Content
	if p.Message.DisplayContent != "" {
		user = []runtime.ContentPart{runtime.TextPart(p.Message.DisplayContent)}
	}
	st := &remoteStream{id: r.newID(), user: user, parts: parts, meta: p.Meta, outcome: newReassembler(), approver: approver}
	// The queue runs the stream after Send returns its id; the stream
	// outlives the Send call that starts it.
	err = r.streams.Add(st.id, func(ctx context.Context, _ context.CancelCauseFunc) {
		st.ctx = ctx
		r.run(st)
	})
	if err != nil {
		return "", err
	}
	return st.id, nil
}

// Abort implements AgentProtocol: the running stream and every queued one
// end aborted, and a remote task that was running is cancelled.
func (r *Agent) Abort(cause error) { r.streams.Abort(cause) }

// abortStream stops one stream, running or queued, leaving the others.
func (r *Agent) abortStream(id string, cause error) { r.streams.AbortStream(id, cause) }

// Close implements AgentProtocol: it aborts every stream, waits for the
// running one to end (its remote task cancelled) and closes the client.
func (r *Agent) Close() error {
	if !r.streams.Close() {
		return nil
	}
	err := r.client.Destroy()
	if r.live != nil {
		err = errors.Join(err, r.live.close())
	}
	if r.closeIdle != nil {
		r.closeIdle()
	}
	if err != nil {
		return fmt.Errorf("remote agent %s: %w", r.def.Name, err)
	}
	return nil
}

// Events implements AgentProtocol: as Session.Events, an ended stream's
// runs of text deltas are merged, each into one event.
func (r *Agent) Events() []runtime.Event { return r.streams.Events() }

// Subscribe follows every stream of the agent as one feed (as
// runtime.Session.Subscribe), for a server that serves it.
func (r *Agent) Subscribe(fn func(runtime.Event)) (unsubscribe func()) {
	return r.streams.Subscribe(fn)
}

// Stream implements AgentProtocol: as Session.Stream, a consumer that
// attaches after the stream's agent_end gets its text deltas merged.
func (r *Agent) Stream(ctx context.Context, streamID string) iter.Seq2[runtime.Event, error] {
	return r.streams.Stream(ctx, streamID)
}

// emit stamps ev with the conversation's ids, which a driver (and the
// invoke_agent tool, for its thread id) reads from _meta, and emits it.
func (r *Agent) emit(st *remoteStream, ev runtime.Event) runtime.Event {
	r.mu.Lock()
	contextID := r.contextID
	r.mu.Unlock()
	if contextID != "" || st.taskID != "" {
		meta := make(map[string]any, len(ev.Meta)+2)
		maps.Copy(meta, ev.Meta)
		if contextID != "" {
			meta["contextId"] = contextID
		}
		if st.taskID != "" {
			meta["taskId"] = string(st.taskID)
		}
		ev.Meta = meta
	}
	return r.streams.Emit(st.id, ev)
}

// run sends one stream's message and relays the agent's answer.
func (r *Agent) run(st *remoteStream) {
	r.emit(st, runtime.Event{Type: runtime.EventMessage, Meta: st.meta, Message: &runtime.Message{Role: runtime.RoleUser, Content: st.user}})
	r.emit(st, runtime.Event{Type: runtime.EventAgentStart})
	if context.Cause(st.ctx) != nil {
		r.finish(st, nil)
		return
	}
	r.mu.Lock()
	msg := a2a.NewMessage(a2a.MessageRoleUser, st.parts...)
	msg.ContextID, msg.TaskID = r.contextID, r.taskID
	st.taskID = r.taskID
	r.mu.Unlock()
	req := &a2a.SendMessageRequest{Message: msg}
	var streamErr error
	if live := r.liveConn(); live != nil {
		streamErr = r.exchangeLive(st, live, req)
	} else {
		streamErr = r.exchange(st, req)
	}
	r.finish(st, streamErr)
}

// streamItem is one result of an A2A event stream.
type streamItem struct {
	ev  a2a.Event
	err error
}

// pump reads an A2A event stream on a goroutine of its own, so that its
// reader can also wait for an abort: each event, and an error last; the
// channel closes at the stream's end or when ctx ends. The reader drains
// it after ending ctx.
func pump(ctx context.Context, events iter.Seq2[a2a.Event, error]) <-chan streamItem {
	items := make(chan streamItem)
	go func() {
		defer close(items)
		for ev, err := range events {
			select {
			case items <- streamItem{ev, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return items
}

// exchange sends the stream's message and relays the agent's events until
// the task completes, fails or waits for input, or the stream is aborted.
//
// The event stream does not end with the abort itself: cancelling the
// remote task needs its id, which the first event brings. An abort that
// comes before it waits for it, up to remoteTaskIDWait, relaying nothing
// more; an abort after it stops at once.
func (r *Agent) exchange(st *remoteStream, req *a2a.SendMessageRequest) error {
	ctx, stop := context.WithCancel(a2alog.AttachLogger(r.streams.Context(), r.log))
	items := pump(ctx, r.client.SendStreamingMessage(ctx, req))
	defer func() {
		stop()
		for range items {
		}
	}()
	aborted := st.ctx.Done()
	var giveUp <-chan time.Time
	for {
		select {
		case it, ok := <-items:
			switch {
			case !ok:
				return nil
			case it.err != nil:
				return it.err
			case st.ctx.Err() != nil:
				if r.learn(st, it.ev) {
					return nil
				}
			case r.relay(st, it.ev):
				// The task is done or waits for input: the rest of the
				// stream, if the server keeps it open, has nothing for us.
				return nil
			}
		case <-aborted:
			if st.taskID != "" {
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

// learn records the ids of an aborted stream's event, and reports whether
// the stream has told what cancelling needs: the task, or that there is
// none to cancel.
func (r *Agent) learn(st *remoteStream, ev a2a.Event) bool {
	var state a2a.TaskState
	switch e := ev.(type) {
	case *a2a.Message:
		return true
	case *a2a.Task:
		state = e.Status.State
	case *a2a.TaskStatusUpdateEvent:
		state = e.Status.State
	}
	info := ev.TaskInfo()
	r.track(st, info.ContextID, info.TaskID, state)
	return st.taskID != "" || st.state.Terminal()
}

// relay emits the content of one A2A event, keeps the conversation's ids
// as gemini-cli does, and reports whether the exchange is over.
func (r *Agent) relay(st *remoteStream, ev a2a.Event) (done bool) {
	switch e := ev.(type) {
	case *a2a.Task:
		r.track(st, e.ContextID, e.ID, e.Status.State)
		st.noteFailure(e.Status)
		st.outcome.task(e)
		if m := e.Status.Message; m != nil && m.Role != a2a.MessageRoleUser {
			r.emitMessage(st, m.Parts, thoughtEvent(e.Metadata), map[string]any{"a2aEvent": "task"})
		}
		for _, a := range e.Artifacts {
			r.emitMessage(st, a.Parts, false, artifactMeta(a, false))
		}
		return finalState(e.Status.State)
	case *a2a.Message:
		// A message answers without a task, and ends the exchange.
		r.track(st, e.ContextID, e.TaskID, "")
		st.outcome.message(e, false)
		st.state = a2a.TaskStateCompleted
		r.emitMessage(st, e.Parts, false, map[string]any{"a2aEvent": "message"})
		return true
	case *a2a.TaskStatusUpdateEvent:
		r.track(st, e.ContextID, e.TaskID, e.Status.State)
		st.noteFailure(e.Status)
		thought := thoughtEvent(e.Metadata)
		st.outcome.message(e.Status.Message, thought)
		if m := e.Status.Message; m != nil {
			r.emitMessage(st, m.Parts, thought, map[string]any{"a2aEvent": "status-update", "taskState": taskStateName(e.Status.State)})
		}
		return finalState(e.Status.State)
	case *a2a.TaskArtifactUpdateEvent:
		r.track(st, e.ContextID, e.TaskID, "")
		st.outcome.artifact(e)
		if e.Artifact != nil {
			r.emitMessage(st, e.Artifact.Parts, false, artifactMeta(e.Artifact, e.Append))
		}
	}
	return false
}

// track records the ids and state an event carries. As in gemini-cli, the
// contextId is kept for the next call, and so is the taskId, until the task
// ends (completed, failed, canceled, rejected): the next message then
// starts a new task in the same context.
func (r *Agent) track(st *remoteStream, contextID string, taskID a2a.TaskID, state a2a.TaskState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if contextID != "" {
		r.contextID = contextID
	}
	if taskID != "" {
		st.taskID = taskID
	}
	if state != a2a.TaskStateUnspecified {
		st.state = state
	}
	switch {
	case st.state.Terminal():
		r.taskID = ""
	case taskID != "":
		r.taskID = taskID
	}
}

// noteFailure keeps the agent's reason when a status ends the task other
// than completed.
func (st *remoteStream) noteFailure(s a2a.TaskStatus) {
	if s.State.Terminal() && s.State != a2a.TaskStateCompleted && s.Message != nil {
		st.reason = partsText(s.Message.Parts, "\n", true)
	}
}

// finalState reports whether a task in state waits for nothing more from
// this stream: it ended, or it waits for the caller.
func finalState(s a2a.TaskState) bool {
	return s.Terminal() || s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}

// emitMessage emits parts as an agent message, when they hold anything.
func (r *Agent) emitMessage(st *remoteStream, parts a2a.ContentParts, thought bool, meta map[string]any) {
	content := fromA2AParts(parts, thought)
	if len(content) == 0 {
		return
	}
	r.emit(st, runtime.Event{Type: runtime.EventMessage, Meta: meta, Message: &runtime.Message{Role: runtime.RoleAgent, Content: content}})
}

// finish ends a stream: on an abort it cancels the remote task first, so
// that the agent stops working on it; a failed task or call becomes a
// fatal error event; agent_end carries the reassembled output.
func (r *Agent) finish(st *remoteStream, streamErr error) {
	cause := context.Cause(st.ctx)
	if cause != nil && st.taskID != "" && !st.state.Terminal() && !st.cancelTried {
		r.cancelTask(st)
	}
	data := map[string]any{"result": st.outcome.String()}
	if st.state != a2a.TaskStateUnspecified {
		data["taskState"] = taskStateName(st.state)
	}
	if id := r.ContextID(); id != "" {
		data["contextId"] = id
	}
	if st.taskID != "" {
		data["taskId"] = string(st.taskID)
	}
	end := func(reason runtime.EndReason) {
		r.emit(st, runtime.Event{Type: runtime.EventAgentEnd, AgentEnd: &runtime.AgentEnd{Reason: reason, Data: data}})
	}
	failed := func(status, msg string) {
		r.emit(st, runtime.Event{Type: runtime.EventError, Meta: map[string]any{"errorName": "AgentError", "exitCode": runtime.ExitGeneric},
			Error: &runtime.ErrorData{Status: status, Message: msg, Fatal: true}})
		end(runtime.EndFailed)
	}
	switch {
	case cause != nil:
		end(runtime.EndAborted)
	case streamErr != nil:
		r.log.Warn("remote agent call failed", "err", streamErr)
		failed(remoteErrorStatus(streamErr), streamErr.Error())
	case st.state == a2a.TaskStateFailed, st.state == a2a.TaskStateRejected, st.state == a2a.TaskStateCanceled:
		msg := st.reason
		if msg == "" {
			msg = "the remote agent reported the task " + taskStateName(st.state)
		}
		failed(runtime.StatusInternal, msg)
	case st.state == a2a.TaskStateInputRequired, st.state == a2a.TaskStateAuthRequired:
		end(runtime.EndElicitation)
	default:
		// Completed, or a stream the server closed early: what arrived is
		// the answer, as gemini-cli takes it.
		end(runtime.EndCompleted)
	}
}

// cancelTask asks the agent to cancel an aborted stream's task. The
// stream's context has ended, so the call has its own, bounded one. The
// task is not continued afterwards, whether the call succeeded or not.
func (r *Agent) cancelTask(st *remoteStream) {
	ctx, cancel := context.WithTimeout(a2alog.AttachLogger(context.WithoutCancel(st.ctx), r.log), remoteCancelTimeout)
	defer cancel()
	if _, err := r.client.CancelTask(ctx, &a2a.CancelTaskRequest{ID: st.taskID}); err != nil {
		r.log.Warn("cannot cancel the remote task", "task", st.taskID, "err", err)
	} else {
		st.state = a2a.TaskStateCanceled
	}
	r.mu.Lock()
	if r.taskID == st.taskID {
		r.taskID = ""
	}
	r.mu.Unlock()
}

// remoteErrorStatus maps an A2A call's error to a google.rpc.Code name.
func remoteErrorStatus(err error) string {
	switch {
	case errors.Is(err, a2a.ErrUnauthenticated):
		return runtime.StatusUnauthenticated
	case errors.Is(err, a2a.ErrUnauthorized):
		return "PERMISSION_DENIED"
	case errors.Is(err, a2a.ErrTaskNotFound):
		return "NOT_FOUND"
	case errors.Is(err, a2a.ErrInvalidParams), errors.Is(err, a2a.ErrInvalidRequest):
		return runtime.StatusInvalidArgument
	case errors.Is(err, a2a.ErrUnsupportedOperation), errors.Is(err, a2a.ErrMethodNotFound):
		return "UNIMPLEMENTED"
	}
	return "UNAVAILABLE"
}

// taskStateName is a task state as gemini-cli and A2A v0.3 spell it:
// "completed", "input-required".
func taskStateName(s a2a.TaskState) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_")), "_", "-")
}

// artifactMeta describes an artifact update in an event's _meta.
func artifactMeta(a *a2a.Artifact, appended bool) map[string]any {
	m := map[string]any{"a2aEvent": "artifact-update", "artifactId": string(a.ID)}
	if a.Name != "" {
		m["artifactName"] = a.Name
	}
	if appended {
		m["append"] = true
	}
	return m
}

// thoughtEvent reports whether an event's metadata marks it as the agent's
// thinking: gemini-cli's a2a-server sends thoughts as status updates with
// coderAgent.kind "thought".
func thoughtEvent(meta map[string]any) bool {
	ca, _ := meta["coderAgent"].(map[string]any)
	kind, _ := ca["kind"].(string)
	return kind == "thought"
}

// thoughtPart reports whether a part is marked as thinking, as ADK's A2A
// executor marks it.
func thoughtPart(p *a2a.Part) bool {
	t, _ := p.Metadata["adk_thought"].(bool)
	return t
}

// fromA2AParts converts an agent's parts to content parts; thought marks
// them all as thinking.
func fromA2AParts(parts a2a.ContentParts, thought bool) []runtime.ContentPart {
	var out []runtime.ContentPart
	for _, p := range parts {
		if p == nil {
			continue
		}
		switch c := p.Content.(type) {
		case a2a.Text:
			if thought || thoughtPart(p) {
				out = append(out, runtime.ContentPart{Type: runtime.PartThought, Thought: string(c)})
			} else {
				out = append(out, runtime.TextPart(string(c)))
			}
		case a2a.Data:
			if s := thoughtSummary(c.Value); thought && s != "" {
				out = append(out, runtime.ContentPart{Type: runtime.PartThought, Thought: s})
				continue
			}
			b, err := json.Marshal(c.Value)
			if err != nil {
				continue
			}
			out = append(out, runtime.ContentPart{Type: runtime.PartText, Text: string(b), MimeType: "application/json"})
		case a2a.Raw:
			out = append(out, runtime.ContentPart{Type: runtime.PartMedia, Data: base64.StdEncoding.EncodeToString(c), MimeType: p.MediaType})
		case a2a.URL:
			out = append(out, runtime.ContentPart{Type: runtime.PartMedia, URI: string(c), MimeType: p.MediaType})
		}
	}
	return out
}

// thoughtSummary reads gemini-cli's thought data part, {subject,
// description}.
func thoughtSummary(v any) string {
	m, _ := v.(map[string]any)
	subject, _ := m["subject"].(string)
	desc, _ := m["description"].(string)
	return strings.TrimSpace(strings.TrimSpace(subject) + "\n" + strings.TrimSpace(desc))
}

// reassembler rebuilds a task's output from its streamed pieces as
// gemini-cli's A2AResultReassembler does: the status messages in order
// (a repeat of the previous one dropped), then each artifact with its
// chunks joined. Thoughts are left out: they are how the agent worked, not
// what it answered.
//
// On a live stream (the development-tool extension) text comes in pieces,
// which chunk joins into one message until a tool call comes between
// (gap), and data parts — tool calls, thoughts — are left out (dataless).
type reassembler struct {
	messages []string
	order    []a2a.ArtifactID
	arts     map[a2a.ArtifactID]*artifactText
	// open: the last message takes the next chunk.
	open bool
	// dataless leaves data parts out of the text.
	dataless bool
}

type artifactText struct {
	name   string
	chunks []string
}

func newReassembler() *reassembler {
	return &reassembler{arts: map[a2a.ArtifactID]*artifactText{}}
}

func (a *reassembler) message(m *a2a.Message, thought bool) {
	if m == nil || thought {
		return
	}
	a.open = false
	text := partsText(m.Parts, "\n", !a.dataless)
	if text != "" && (len(a.messages) == 0 || a.messages[len(a.messages)-1] != text) {
		a.messages = append(a.messages, text)
	}
}

func (a *reassembler) artifact(e *a2a.TaskArtifactUpdateEvent) {
	if e.Artifact == nil {
		return
	}
	text := partsText(e.Artifact.Parts, "", !a.dataless)
	at, ok := a.arts[e.Artifact.ID]
	switch {
	case !ok:
		a.order = append(a.order, e.Artifact.ID)
		a.arts[e.Artifact.ID] = &artifactText{name: e.Artifact.Name, chunks: []string{text}}
	case e.Append:
		at.chunks = append(at.chunks, text)
	default:
		at.name, at.chunks = e.Artifact.Name, []string{text}
	}
}

func (a *reassembler) task(t *a2a.Task) {
	if m := t.Status.Message; m != nil && m.Role != a2a.MessageRoleUser {
		a.message(m, thoughtEvent(t.Metadata))
	}
	for _, art := range t.Artifacts {
		a.artifact(&a2a.TaskArtifactUpdateEvent{Artifact: art})
	}
	// gemini-cli's fallback: a finished task that brought no message or
	// artifact answers with its last agent message in the history.
	if t.Status.State.Terminal() && len(a.messages) == 0 && len(a.order) == 0 {
		for i := len(t.History) - 1; i >= 0; i-- {
			if m := t.History[i]; m != nil && m.Role == a2a.MessageRoleAgent {
				a.message(m, false)
				break
			}
		}
	}
}

// chunk adds a piece of streamed text to the message it continues.
func (a *reassembler) chunk(text string) {
	switch {
	case text == "":
	case a.open:
		a.messages[len(a.messages)-1] += text
	default:
		a.messages = append(a.messages, text)
		a.open = true
	}
}

// gap ends the message chunks add to: the next chunk starts another.
func (a *reassembler) gap() { a.open = false }

// String is the output as the caller's model reads it.
func (a *reassembler) String() string {
	var arts []string
	for _, id := range a.order {
		at := a.arts[id]
		header := "Artifact:"
		if at.name != "" {
			header = fmt.Sprintf("Artifact (%s):", at.name)
		}
		arts = append(arts, header+"\n"+strings.Join(at.chunks, ""))
	}
	return strings.Join(append(append([]string(nil), a.messages...), arts...), "\n\n")
}

// partsText is the text of parts as gemini-cli renders them: text as is,
// data as JSON (unless data is false: then left out), files by name or
// address; thinking left out.
func partsText(parts a2a.ContentParts, sep string, data bool) string {
	var out []string
	for _, p := range parts {
		if p == nil || thoughtPart(p) {
			continue
		}
		var s string
		switch c := p.Content.(type) {
		case a2a.Text:
			s = string(c)
		case a2a.Data:
			if b, err := json.Marshal(c.Value); err == nil && data {
				s = "Data: " + string(b)
			}
		case a2a.Raw, a2a.URL:
			switch {
			case p.Filename != "":
				s = "File: " + p.Filename
			case p.URL() != "":
				s = "File: " + string(p.URL())
			default:
				s = "File: [binary/unnamed]"
			}
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, sep)
}
