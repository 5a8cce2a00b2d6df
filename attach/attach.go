// Package attach drives a served agentry session from the interactive
// terminal: it adapts a /ws connection (protocol/wsclient) to tui.Session,
// so that `agentry attach` shows and drives a session another process
// runs — the terminal of `agentry --a2a-port`, or a context of `agentry
// serve` — beside its other clients.
//
// Every turn of the session becomes a local stream of runtime events: the
// prompts this terminal sends (Send), and the turns anyone else starts,
// announced on Turns. The events are the development-tool extension's
// updates translated back into the runtime events the server's session
// emitted. A tool call that needs confirmation opens the terminal's
// dialog through its tui.Approver; the first answer anywhere wins, and a
// dialog whose call someone else answered closes by itself.
package attach

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"

	"github.com/agentry-dev/agentry/internal/a2aparts"
	"github.com/agentry-dev/agentry/internal/devclient"
	"github.com/agentry-dev/agentry/protocol/wsclient"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/tui"
)

// Origin is Turn.Origin for the turns others start when the server does
// not say who sent them.
const Origin = "A2A"

// originKey is the metadata key of a turn's first message naming its
// sender (docs/ws.md): "terminal", or "A2A <name>".
const originKey = "agentry/origin"

const (
	// cancelTimeout bounds a CancelTask call of Abort.
	cancelTimeout = 10 * time.Second
	// maxHeld bounds the events kept while this terminal's own message
	// has not yet been matched to its task (see Session.route).
	maxHeld = 4096
	// seenWindow is how many event ids are remembered to drop an event
	// that arrives twice (as a response and as a notification).
	seenWindow = 8192
)

// ErrLost reports that the connection to the server ended.
var ErrLost = errors.New("attach: the connection to the server ended")

// Session is a served session seen through one /ws connection. It
// implements tui.Session. Its methods are safe for concurrent use.
type Session struct {
	conn     *wsclient.Conn
	approver *tui.Approver
	log      *slog.Logger
	q        *runtime.StreamQueue
	newID    func() string

	// ctx lives until the session ends; the approvals and the calls the
	// session makes by itself derive from it.
	ctx    context.Context
	cancel context.CancelCauseFunc
	turns  chan tui.Turn
	// announce hands turns to the goroutine that feeds turns, so that a
	// terminal slow to take them never holds the session up.
	announce chan tui.Turn
	done     chan struct{}
	// approving counts the dialogs open (their goroutines).
	approving sync.WaitGroup

	mu        sync.Mutex // guards the fields below
	contextID string
	model     string
	// active is the session's active task, as session/attached named it.
	active    a2a.TaskID
	byTask    map[a2a.TaskID]*turn
	unbound   []*turn // this terminal's turns whose task is not known yet
	held      []a2a.Event
	seen      map[int64]struct{}
	approvals map[string]context.CancelCauseFunc // by task and call id
	ended     bool
	err       error
}

var _ tui.Session = (*Session)(nil)

// turn is one turn of the session: a task, shown as a local stream.
type turn struct {
	stream string
	task   a2a.TaskID
	own    bool
	msgID  string // the message this terminal sent, for its own turns
	tr     *devclient.Translator
	// cancelWanted: Abort came before the task's id.
	cancelWanted bool
}

// New follows the session of conn. The session owns conn from now on:
// Close closes it. approver (nil: none) asks this terminal's user about
// the session's tool confirmations; it is the one handed to tui.Config.
func New(ctx context.Context, conn *wsclient.Conn, approver *tui.Approver) (*Session, error) {
	if conn == nil {
		return nil, errors.New("attach: no connection")
	}
	s := &Session{
		conn: conn, approver: approver, log: slog.Default(), newID: uuid.NewString,
		q:     runtime.NewStreamQueue(ctx, nil),
		turns: make(chan tui.Turn), announce: make(chan tui.Turn), done: make(chan struct{}),
		byTask: map[a2a.TaskID]*turn{}, seen: map[int64]struct{}{}, approvals: map[string]context.CancelCauseFunc{},
	}
	s.ctx, s.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	go s.announceLoop()
	go s.follow()
	return s, nil
}

// ID implements tui.Session: the session's contextId, "" until the server
// names it.
func (s *Session) ID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.contextID
}

// Model implements tui.Session: the model the session's updates named
// last, "" before any did.
func (s *Session) Model() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model
}

// Turns delivers the turns others start on the session, in the order
// they start, each with its local stream; for tui.Config.Turns. It is
// never closed: Done says when the session ended.
func (s *Session) Turns() <-chan tui.Turn { return s.turns }

// Done is closed when the session has ended: Close, or the connection
// ended (Err says why).
func (s *Session) Done() <-chan struct{} { return s.done }

// Err returns why the session ended: nil while it runs and after Close,
// else an error wrapping ErrLost and the connection's error (a
// *wsclient.CloseError when the server closed it).
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Events implements runtime.AgentProtocol.
func (s *Session) Events() []runtime.Event { return s.q.Events() }

// Stream implements runtime.AgentProtocol.
func (s *Session) Stream(ctx context.Context, streamID string) iter.Seq2[runtime.Event, error] {
	return s.q.Stream(ctx, streamID)
}

// Send implements runtime.AgentProtocol: the message is sent with
// SendStreamingMessage and becomes the session's next turn (queued behind
// the one under way, if any). The returned stream follows its task
// wherever its events come from: the request's responses, or the
// notifications (after a confirmation someone else answered). Only
// messages are accepted; /model and the like are slash commands (Run).
func (s *Session) Send(ctx context.Context, p runtime.Send) (string, error) {
	if p.Message == nil || p.Update != nil {
		return "", fmt.Errorf("%w: attach sends messages only; settings change through the slash commands", runtime.ErrInvalidSend)
	}
	parts, err := a2aparts.FromContent(p.Message.Content)
	if err != nil {
		return "", fmt.Errorf("%w: %w", runtime.ErrInvalidSend, err)
	}
	if err := context.Cause(ctx); err != nil {
		return "", err
	}
	user := p.Message.Content
	if p.Message.DisplayContent != "" {
		user = []runtime.ContentPart{runtime.TextPart(p.Message.DisplayContent)}
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, parts...)
	s.mu.Lock()
	if s.ended {
		err := s.endedError()
		s.mu.Unlock()
		return "", err
	}
	msg.ContextID = s.contextID
	t := &turn{stream: s.newID(), own: true, msgID: msg.ID, tr: devclient.NewTranslator()}
	s.unbound = append(s.unbound, t)
	s.q.Emit(t.stream, runtime.Event{Type: runtime.EventMessage, Meta: p.Meta, Message: &runtime.Message{Role: runtime.RoleUser, Content: user}})
	s.q.Emit(t.stream, runtime.Event{Type: runtime.EventAgentStart})
	s.mu.Unlock()

	st, err := s.conn.Start(s.ctx, "SendStreamingMessage", &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		s.fail(t, err.Error())
		return "", fmt.Errorf("attach: send the message: %w", err)
	}
	go s.consume(t, st)
	return t.stream, nil
}

// endedError is Send's error after the session ended; s.mu is held.
func (s *Session) endedError() error {
	if s.err != nil {
		return s.err
	}
	return runtime.ErrClosed
}

// consume routes a request's responses; a JSON-RPC error fails the turn.
// Errors of the connection end every turn (see lost).
func (s *Session) consume(t *turn, st *wsclient.Stream) {
	var last a2a.Event
	for f, err := range st.Frames() {
		var rpcErr *wsclient.Error
		switch {
		case errors.As(err, &rpcErr):
			s.fail(t, rpcErr.Message)
			return
		case err != nil:
			return
		case f.Event != nil:
			last = f.Event
			s.route(f.EventID, f.Event, t)
		}
	}
	if m, ok := last.(*a2a.Message); ok && m.TaskID == "" {
		// An answer without a task: it is the whole turn.
		s.mu.Lock()
		if !t.tr.Ended() && !s.ended {
			s.endTurn(t, nil, runtime.EndCompleted)
			s.flushHeld()
		}
		s.mu.Unlock()
	}
}

// fail ends a turn that has not ended with a fatal error.
func (s *Session) fail(t *turn, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.tr.Ended() {
		return
	}
	s.endTurn(t, &runtime.ErrorData{Status: runtime.StatusInternal, Message: msg, Fatal: true}, runtime.EndFailed)
	s.flushHeld()
}

// endTurn ends a turn here, with an error event first if e is set; s.mu
// is held.
func (s *Session) endTurn(t *turn, e *runtime.ErrorData, reason runtime.EndReason) {
	if e != nil {
		s.q.Emit(t.stream, runtime.Event{Type: runtime.EventError, Error: e})
	}
	s.q.Emit(t.stream, runtime.Event{Type: runtime.EventAgentEnd, AgentEnd: &runtime.AgentEnd{Reason: reason}})
	t.tr.End()
	s.unbind(t)
	s.withdrawTask(t.task)
}

// unbind drops t from the turns still waiting for their task; s.mu is
// held.
func (s *Session) unbind(t *turn) {
	s.unbound = slices.DeleteFunc(s.unbound, func(o *turn) bool { return o == t })
}

// follow handles the server's notifications until the connection ends.
func (s *Session) follow() {
	for n, err := range s.conn.Events() {
		if err != nil {
			s.lost(err)
			return
		}
		switch n.Method {
		case wsclient.MethodAttached:
			s.mu.Lock()
			s.contextID = n.Attached.ContextID
			s.active = a2a.TaskID(n.Attached.TaskID)
			s.mu.Unlock()
		case wsclient.MethodEvent:
			if n.Event == nil {
				s.log.Warn("attach: an event that does not decode", "eventId", n.EventID, "event", string(n.RawEvent))
				continue
			}
			s.route(n.EventID, n.Event, nil)
		}
	}
	s.lost(nil)
}

// lost ends the session: err is the connection's (nil after Close).
// Every turn still under way ends, failed with the reason, or aborted
// after Close.
func (s *Session) lost(err error) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	var e *runtime.ErrorData
	reason := runtime.EndAborted
	if err != nil {
		s.err = fmt.Errorf("%w: %w", ErrLost, err)
		e = &runtime.ErrorData{Status: "UNAVAILABLE", Message: s.err.Error(), Fatal: true}
		reason = runtime.EndFailed
	}
	open := slices.Clone(s.unbound)
	for _, t := range s.byTask {
		if !t.tr.Ended() && !slices.Contains(open, t) {
			open = append(open, t)
		}
	}
	for _, t := range open {
		s.endTurn(t, e, reason)
	}
	for key, cancel := range s.approvals {
		cancel(ErrLost)
		delete(s.approvals, key)
	}
	s.held = nil
	s.mu.Unlock()
	s.cancel(ErrLost)
	close(s.done)
}

// route hands one event to its turn. from is the turn whose request's
// response brought it (nil: a notification). An event that arrives twice
// (eventId seen) is dropped.
//
// This terminal's own message is matched to its task by the first
// response of its request, or by the task's history holding the message:
// until one of them comes, events of tasks not known yet are held, since
// they may be its own turn's; then the held events go to their turns, or
// start new ones.
func (s *Session) route(eventID int64, ev a2a.Event, from *turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	bound := false
	id := ev.TaskInfo().TaskID
	if from != nil && from.task == "" && id != "" && s.byTask[id] == nil && !from.tr.Ended() {
		s.bind(from, id)
		bound = true
	}
	if eventID > 0 {
		if _, dup := s.seen[eventID]; dup {
			if bound {
				s.flushHeld()
			}
			return
		}
		s.remember(eventID)
	}
	if s.routeLocked(ev, from) || bound {
		s.flushHeld()
	}
}

// remember records an event id, forgetting the oldest beyond the window.
func (s *Session) remember(id int64) {
	s.seen[id] = struct{}{}
	if len(s.seen) > 2*seenWindow {
		for old := range s.seen {
			if old < id-seenWindow {
				delete(s.seen, old)
			}
		}
	}
}

// routeLocked routes an event (s.mu held) and reports whether it matched
// one of this terminal's messages to its task.
func (s *Session) routeLocked(ev a2a.Event, from *turn) (bound bool) {
	info := ev.TaskInfo()
	if info.ContextID != "" && s.contextID == "" {
		s.contextID = info.ContextID
	}
	id := info.TaskID
	t := s.byTask[id]
	if t == nil && id != "" {
		if task, ok := ev.(*a2a.Task); ok {
			if own := s.ownTurnOf(task); own != nil {
				s.bind(own, id)
				t, bound = own, true
			}
		}
	}
	if t == nil && id == "" {
		t = from // an answer without a task
	}
	if t == nil {
		if id == "" {
			return false
		}
		if len(s.unbound) > 0 && len(s.held) < maxHeld {
			s.held = append(s.held, ev)
			return false
		}
		t = s.startRemote(id, ev)
	}
	s.apply(t, ev)
	return bound
}

// ownTurnOf returns this terminal's turn whose message starts task.
func (s *Session) ownTurnOf(task *a2a.Task) *turn {
	for _, t := range s.unbound {
		for _, m := range task.History {
			if m != nil && m.ID == t.msgID {
				return t
			}
		}
	}
	return nil
}

// bind makes id t's task; s.mu is held.
func (s *Session) bind(t *turn, id a2a.TaskID) {
	t.task = id
	s.byTask[id] = t
	s.unbind(t)
	if t.cancelWanted {
		go s.cancelTask(t)
	}
}

// flushHeld routes the held events again: to the turns now known, or,
// once no message of this terminal waits for its task, to new turns.
func (s *Session) flushHeld() {
	held := s.held
	s.held = nil
	for _, ev := range held {
		s.routeLocked(ev, nil)
	}
}

// startRemote starts the local stream of a turn someone else started
// and announces it; s.mu is held.
func (s *Session) startRemote(id a2a.TaskID, ev a2a.Event) *turn {
	t := &turn{stream: s.newID(), task: id, tr: devclient.NewTranslator()}
	s.byTask[id] = t
	prompt := promptOf(ev)
	s.q.Emit(t.stream, runtime.Event{Type: runtime.EventMessage, Message: &runtime.Message{Role: runtime.RoleUser, Content: []runtime.ContentPart{runtime.TextPart(prompt)}}})
	s.q.Emit(t.stream, runtime.Event{Type: runtime.EventAgentStart})
	select {
	case s.announce <- tui.Turn{StreamID: t.stream, Origin: originOf(ev), Text: prompt}:
	case <-s.ctx.Done():
	}
	return t
}

// promptOf is the prompt of a task: its first user message's text.
func promptOf(ev a2a.Event) string {
	task, ok := ev.(*a2a.Task)
	if !ok {
		return ""
	}
	for _, m := range task.History {
		if m == nil || m.Role != a2a.MessageRoleUser {
			continue
		}
		var b strings.Builder
		for _, p := range m.Parts {
			if p != nil {
				b.WriteString(p.Text())
			}
		}
		return b.String()
	}
	return ""
}

// announceLoop hands the announced turns to the terminal in order,
// however long it takes to read them.
func (s *Session) announceLoop() {
	var queue []tui.Turn
	for {
		var out chan<- tui.Turn
		var next tui.Turn
		if len(queue) > 0 {
			out, next = s.turns, queue[0]
		}
		select {
		case t := <-s.announce:
			queue = append(queue, t)
		case out <- next:
			queue = queue[1:]
		case <-s.ctx.Done():
			return
		}
	}
}

// apply translates an event of t and emits the result; s.mu is held.
func (s *Session) apply(t *turn, ev a2a.Event) {
	if t.tr.Ended() {
		return
	}
	st := t.tr.Event(ev)
	for _, e := range st.Events {
		if e.Type == runtime.EventSessionUpdate {
			s.model = e.SessionUpdate.Model
		}
		s.q.Emit(t.stream, e)
	}
	for _, id := range st.Settled {
		s.withdraw(t.task, id)
	}
	if st.Confirm != nil {
		s.ask(t, *st.Confirm)
	}
	if st.Ended {
		s.unbind(t)
		s.withdrawTask(t.task)
	}
}

// Abort implements runtime.AgentProtocol: it cancels (CancelTask) the
// session's active turn and this terminal's turns still open; each stream
// ends when the server reports its task cancelled.
func (s *Session) Abort(error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.unbound {
		t.cancelWanted = true
	}
	for id, t := range s.byTask {
		if !t.tr.Ended() && (t.own || id == s.active || t.tr.Running()) {
			go s.cancelTask(t)
		}
	}
}

// cancelTask asks the server to cancel t's task; the task it returns is
// routed as an event, which ends the stream when it is final.
func (s *Session) cancelTask(t *turn) {
	ctx, cancel := context.WithTimeout(s.ctx, cancelTimeout)
	defer cancel()
	var task a2a.Task
	err := s.conn.Call(ctx, "CancelTask", &a2a.CancelTaskRequest{ID: t.task}, &task)
	if err != nil {
		s.warn(t, fmt.Sprintf("cannot cancel task %s: %v", t.task, err))
		return
	}
	if task.ID == t.task {
		s.route(0, &task, nil)
	}
}

// warn shows a warning on t's stream while it is open.
func (s *Session) warn(t *turn, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.tr.Ended() || s.ended {
		return
	}
	s.q.Emit(t.stream, runtime.Event{Type: runtime.EventError, Error: &runtime.ErrorData{Status: runtime.StatusFailedPrecondition, Message: msg}})
}

// Close implements runtime.AgentProtocol: it closes the connection; the
// streams still open end aborted.
func (s *Session) Close() error {
	err := s.conn.Close()
	<-s.done
	s.approving.Wait()
	s.q.Close()
	return err
}

// originOf is who sent a task's prompt, as the server records it on the
// task's first message.
func originOf(ev a2a.Event) string {
	if task, ok := ev.(*a2a.Task); ok && len(task.History) > 0 && task.History[0] != nil {
		if o, ok := task.History[0].Metadata[originKey].(string); ok && o != "" {
			return o
		}
	}
	return Origin
}
