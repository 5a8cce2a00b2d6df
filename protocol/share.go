package protocol

import (
	"cmp"
	"context"
	"fmt"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/runtime"
)

// Turn is a turn a client started on an adopted session, for the driver
// to show (the terminal prints the prompt marked with its origin and
// follows the stream).
type Turn struct {
	// StreamID is the session stream running the turn.
	StreamID string
	// Origin names the sender: "A2A", or "A2A <name>" for a WebSocket
	// client that gave its name.
	Origin string
	// Text is the prompt's text.
	Text string
}

// AdoptOption configures how a driver shares its session (Adopt).
type AdoptOption func(*convo)

// WithLocalApprover has the driver's own approver (the terminal's dialog)
// asked beside the clients for every confirmation of the session, whose
// approver must then be a SharedApprover (WithApprover): the first answer, the
// terminal's or a client's, wins; the others' requests are withdrawn.
func WithLocalApprover(a runtime.EditingApprover) AdoptOption {
	return func(c *convo) { c.local = a }
}

// WithTurns calls fn for every turn a client starts on the session (not
// for the driver's own, Submit). fn must not block.
func WithTurns(fn func(Turn)) AdoptOption {
	return func(c *convo) { c.onTurn = fn }
}

// SharedApprover is the approver of a session its driver builds before
// sharing it: Adopt's WithApprover binds it to the context, whose
// approver asks every client (and the local approver of
// WithLocalApprover). Unbound, it has nobody to ask.
type SharedApprover struct {
	mu sync.Mutex
	to runtime.EditingApprover
}

var (
	_ runtime.EditingApprover   = (*SharedApprover)(nil)
	_ runtime.ExecutionObserver = (*SharedApprover)(nil)
)

// WithApprover binds a, the adopted session's approver, to its context;
// adopting the next session with the same a moves it there.
func WithApprover(a *SharedApprover) AdoptOption {
	return func(c *convo) {
		a.mu.Lock()
		a.to = approver{c}
		a.mu.Unlock()
	}
}

func (a *SharedApprover) get() runtime.EditingApprover {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.to
}

// Approve implements runtime.Approver.
func (a *SharedApprover) Approve(ctx context.Context, r runtime.ApprovalRequest) (runtime.Outcome, error) {
	o, _, err := a.ApproveEdit(ctx, r)
	return o, err
}

// ApproveEdit implements runtime.EditingApprover.
func (a *SharedApprover) ApproveEdit(ctx context.Context, r runtime.ApprovalRequest) (runtime.Outcome, map[string]any, error) {
	to := a.get()
	if to == nil {
		return runtime.Cancel, nil, runtime.ErrNoHuman
	}
	return to.ApproveEdit(ctx, r)
}

// Executing implements runtime.ExecutionObserver.
func (a *SharedApprover) Executing(ctx context.Context, callID string) {
	if o, ok := a.get().(runtime.ExecutionObserver); ok {
		o.Executing(ctx, callID)
	}
}

// Release stops serving an adopted session: its WebSocket clients are
// closed with code 4003, whose reason names next (the context that
// replaces it, if any), and its parked runs are left to the driver, who
// closes the session.
func (s *Server) Release(contextID, next string) {
	s.mu.Lock()
	c := s.contexts[contextID]
	if c != nil && c.adopted {
		delete(s.contexts, contextID)
	}
	s.mu.Unlock()
	if c == nil || !c.adopted {
		return
	}
	c.unsub()
	reason := "the session ended"
	if next != "" {
		reason = "the terminal switched to context " + next
	}
	if h := c.currentHub(); h != nil {
		h.close(closeSwitched, reason)
	}
}

// Keys of the values a request's context carries for send and admit.
type (
	driverKey struct{}
	wsKey     struct{}
	answerKey struct{}
)

// driverFrom reports whether ctx is the driver's own Submit.
func driverFrom(ctx context.Context) bool {
	v, _ := ctx.Value(driverKey{}).(bool)
	return v
}

// wsCall is a request that came over a WebSocket connection.
type wsCall struct {
	client *wsClient
	// id is the request's JSON-RPC id; stream: its task's events are
	// its responses; legacy: in A2A 0.3's shape.
	id     []byte
	stream bool
	legacy bool
}

func wsFrom(ctx context.Context) *wsCall {
	v, _ := ctx.Value(wsKey{}).(*wsCall)
	return v
}

// answererFrom names who sends a request, for errors about answers that
// came second.
func answererFrom(ctx context.Context) string {
	if v, ok := ctx.Value(answerKey{}).(string); ok {
		return v
	}
	if o := wsFrom(ctx); o != nil && o.client.name != "" {
		return fmt.Sprintf("client %q", o.client.name)
	}
	if lc := liveFrom(ctx); lc != nil && lc.name != "" {
		return fmt.Sprintf("client %q", lc.name)
	}
	return "a client"
}

// askLocal asks the driver's approver about ap and, if it answers before
// anyone else, resumes the parked run with its answer. ctx ends when the
// call is decided elsewhere, which withdraws the terminal's dialog.
func (s *Server) askLocal(ctx context.Context, c *convo, ap *approval) {
	outcome, args, err := c.local.ApproveEdit(ctx, ap.req)
	if err != nil || ctx.Err() != nil {
		return
	}
	select {
	case <-ap.parked:
	case <-ctx.Done():
		return
	}
	t := ap.task
	t.mu.Lock()
	t.settleParking()
	if t.waiting != ap || t.accepted != nil || t.running {
		t.mu.Unlock()
		return // a client's answer came first
	}
	t.accepted = &answer{outcome: outcome, args: args}
	by := cmp.Or(c.localName, "the terminal")
	t.acceptedBy = by
	t.mu.Unlock()
	// The answer joins the task's history as a client's would.
	option := optionFor(outcome)
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{
		"tool_call_id": ap.req.CallID, "selected_option_id": option,
	}))
	m.TaskID, m.ContextID = t.id, c.id
	if _, _, err := s.resume(ctx, &a2a.SendMessageRequest{Message: m}); err != nil {
		s.log.Warn("a2a: the answer of "+by, "task", t.id, "err", err)
	}
}

// deliverUnhubbed hands a task that ended before reaching its context's
// hub (it failed to start) to the WebSocket client that sent it.
func (s *Server) deliverUnhubbed(t *liveTask) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.hub != nil || t.origin == nil {
		return
	}
	for i, ev := range t.log {
		t.origin.offer(&hubEvent{task: t.id, idx: i, ev: ev})
	}
}

// optionFor is the confirmation option of an outcome.
func optionFor(o runtime.Outcome) string {
	switch o {
	case runtime.ProceedOnce:
		return devtool.OptionProceedOnce
	case runtime.ProceedAlways:
		return devtool.OptionProceedAlways
	case runtime.ProceedAlwaysTool:
		return devtool.OptionProceedAlwaysTool
	case runtime.ProceedAlwaysServer:
		return devtool.OptionProceedAlwaysServer
	case runtime.ProceedAlwaysAndSave:
		return devtool.OptionProceedAlwaysAndSave
	}
	return devtool.OptionCancel
}

// OriginKey is the metadata key of a turn's first message that says who
// sent it on a shared session: "terminal" for the driver's own prompts,
// "A2A" or "A2A <name>" for a /ws client's (docs/ws.md).
const OriginKey = "agentry/origin"

// originOf names the sender of a message that starts a task on a shared
// session; "" for the other bindings, whose messages are left as sent.
func originOf(ctx context.Context) string {
	switch o := wsFrom(ctx); {
	case driverFrom(ctx):
		return "terminal"
	case o == nil:
		return ""
	case o.client.name != "":
		return "A2A " + o.client.name
	default:
		return "A2A"
	}
}
