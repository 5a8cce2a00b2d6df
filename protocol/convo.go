package protocol

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/runtime"
)

// convo is one A2A context: a runtime session (its id is the contextId)
// and the tasks run on it. A context runs one task at a time; the
// session's events and approval requests are routed to the task whose
// stream produced them.
type convo struct {
	s         *Server
	id        string
	workspace string
	sess      Session
	unsub     func()
	// adopted: the session belongs to the driver (Adopt), which closes it.
	adopted bool

	mu sync.Mutex
	// tasks maps a stream id to the task it serves.
	tasks map[string]*liveTask
	// orphans holds events of a stream whose task is not attached yet:
	// Send returns the stream id after the session may already have
	// emitted its first events.
	orphans map[string][]item
	// running is the stream the session emitted last; approvals and
	// execution notices belong to it (a session runs one stream at a
	// time).
	running string
	// active is the task running or waiting for input, if any.
	active *liveTask
	// idleSince is when the last task ended (zero while one is active).
	idleSince time.Time
	// evicted: the session was closed for idleness; a new convo takes
	// the context's next task.
	evicted bool
	// queue holds the tasks waiting for their turn, in arrival order.
	queue []*liveTask
	// hub broadcasts the context's events to WebSocket clients; made by
	// the first client (joinMu serializes joins).
	hub    *hub
	joinMu sync.Mutex
	// local is the driver's own approver (the terminal), asked beside
	// the clients; onTurn hears of turns clients start. Both set by
	// Adopt's options, or local by Config.Beside, whose answers are
	// localName's ("the terminal" when empty).
	local     runtime.EditingApprover
	localName string
	onTurn    func(Turn)
}

// errCancelledQueued ends a task cancelled while it waited for its turn.
var errCancelledQueued = errors.New("the task was cancelled while it waited for its turn")

// claimQueued makes t the active task once the tasks ahead of it have
// ended, in arrival order.
func (c *convo) claimQueued(t *liveTask) error {
	c.mu.Lock()
	if c.evicted {
		c.mu.Unlock()
		return errEvicted
	}
	if c.active == nil && len(c.queue) == 0 {
		c.active = t
		c.mu.Unlock()
		return nil
	}
	c.queue = append(c.queue, t)
	c.mu.Unlock()
	for {
		t.mu.Lock()
		w := t.watch()
		t.mu.Unlock()
		c.mu.Lock()
		mine := c.active == t
		c.mu.Unlock()
		if mine {
			t.unwatch(w)
			return nil
		}
		select {
		case <-w:
			t.unwatch(w)
		case <-t.unqueue:
			t.unwatch(w)
			c.mu.Lock()
			if c.active == t {
				c.mu.Unlock()
				c.release(t)
				return errCancelledQueued
			}
			if i := slices.Index(c.queue, t); i >= 0 {
				c.queue = slices.Delete(c.queue, i, i+1)
			}
			c.mu.Unlock()
			return errCancelledQueued
		case <-c.s.ctx.Done():
			t.unwatch(w)
			return errors.New("the server is shutting down")
		}
	}
}

// currentHub returns the context's hub, or nil before any client.
func (c *convo) currentHub() *hub {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hub
}

// announce tells the driver of a turn a client started.
func (c *convo) announce(stream string, t *liveTask, msg *a2a.Message) {
	if c.onTurn == nil {
		return
	}
	origin := "A2A"
	if t.origin != nil && t.origin.name != "" {
		origin += " " + t.origin.name
	}
	c.onTurn(Turn{StreamID: stream, Origin: origin, Text: strings.TrimSpace(partsText(msg.Parts))})
}

// errEvicted is claim's answer on a context closed for idleness.
var errEvicted = errors.New("context closed for idleness")

// route hands an item to the task of stream (or holds it until the task
// is attached). It never blocks for long: it runs on the session's
// goroutines.
func (c *convo) route(stream string, it item) {
	c.mu.Lock()
	if stream == "" {
		stream = c.running
	} else {
		c.running = stream
	}
	t := c.tasks[stream]
	if t == nil {
		// The whole stream may run before its task attaches (Send
		// returns its id; a replayed model answers at once), so its
		// events wait here, its end included. Every stream on a served
		// session is started by a task, which attaches.
		c.orphans[stream] = append(c.orphans[stream], it)
	} else {
		t.q.push(it)
		if it.ev.Type == runtime.EventAgentEnd {
			delete(c.tasks, stream)
		}
	}
	c.mu.Unlock()
	if t != nil {
		c.s.drain(t)
	}
}

// attach binds a stream to its task, handing over what it already
// emitted.
func (c *convo) attach(stream string, t *liveTask) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t.stream = stream
	for _, it := range c.orphans[stream] {
		t.q.push(it)
	}
	ended := false
	for _, it := range c.orphans[stream] {
		ended = ended || it.ev.Type == runtime.EventAgentEnd
	}
	delete(c.orphans, stream)
	if !ended {
		c.tasks[stream] = t
	}
}

// claim makes t the context's active task, or says which task is.
func (c *convo) claim(t *liveTask) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.evicted {
		return errEvicted
	}
	if a := c.active; a != nil && a != t {
		return c.busyError(a)
	}
	c.active = t
	return nil
}

// evictIfIdle marks the context evicted if it has been idle longer than
// timeout; it then takes no task.
func (c *convo) evictIfIdle(now time.Time, timeout time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.adopted || c.active != nil || len(c.queue) > 0 || c.idleSince.IsZero() || now.Sub(c.idleSince) <= timeout {
		return false
	}
	c.evicted = true
	return true
}

// busy returns the error for a new task while another is active, or nil.
func (c *convo) busy() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.active != nil:
		return c.busyError(c.active)
	case len(c.queue) > 0:
		return c.busyError(c.queue[0])
	}
	return nil
}

func (c *convo) busyError(a *liveTask) error {
	if w := a.waitingFor(); w != "" {
		return a2a.NewError(a2a.ErrInvalidRequest, fmt.Sprintf(
			"context %s has task %s waiting for a confirmation of tool call %s: answer it (a message with that taskId and a ToolCallConfirmation, or the text yes, always or no) or cancel the task first",
			c.id, a.id, w))
	}
	return a2a.NewError(a2a.ErrInvalidRequest, fmt.Sprintf(
		"context %s is busy with task %s: send the next message when it ends, or cancel it", c.id, a.id))
}

// activePlain reports whether the context's active task is a plain one.
func (c *convo) activePlain() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.active != nil && c.active.pl != nil
}

// release ends t's claim on the context.
func (c *convo) release(t *liveTask) {
	c.mu.Lock()
	var next *liveTask
	if c.active == t {
		c.active = nil
		c.idleSince = time.Now()
		if len(c.queue) > 0 {
			next = c.queue[0]
			c.queue = slices.Delete(c.queue, 0, 1)
			c.active = next
			c.idleSince = time.Time{}
		}
	}
	c.mu.Unlock()
	if next != nil {
		next.mu.Lock()
		next.signal()
		next.mu.Unlock()
	}
}

// approver is a context's runtime.Approver: a call that needs the user
// parks its run and surfaces as a PENDING ToolCall followed by
// input-required; the client's ToolCallConfirmation resumes it.
type approver struct{ c *convo }

var (
	_ runtime.EditingApprover   = approver{}
	_ runtime.ExecutionObserver = approver{}
)

func (a approver) Approve(ctx context.Context, req runtime.ApprovalRequest) (runtime.Outcome, error) {
	o, _, err := a.ApproveEdit(ctx, req)
	return o, err
}

// ApproveEdit waits for the client's answer. The run's context ends the
// wait when the task is cancelled or the session closes. A task without
// the extension, on a server whose plain approvals follow the policy,
// has nobody to ask.
func (a approver) ApproveEdit(ctx context.Context, req runtime.ApprovalRequest) (runtime.Outcome, map[string]any, error) {
	if a.c.s.cfg.PlainApprovals == PlainApprovalsPolicy && a.c.activePlain() {
		return runtime.Cancel, nil, runtime.ErrNoHuman
	}
	ap := &approval{req: req, answer: make(chan answer, 1), parked: make(chan struct{})}
	a.c.route("", item{approval: ap})
	if a.c.local != nil {
		// The driver's terminal asks too; whoever answers first wins.
		// An answer from a client ends the terminal's dialog.
		lctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go a.c.s.askLocal(lctx, a.c, ap)
	}
	select {
	case ans := <-ap.answer:
		return ans.outcome, ans.args, nil
	case <-ctx.Done():
		return runtime.Cancel, nil, context.Cause(ctx)
	}
}

// Executing reports a call starting.
func (a approver) Executing(ctx context.Context, callID string) {
	a.c.route("", item{executing: callID})
	if o, ok := a.c.local.(runtime.ExecutionObserver); ok {
		o.Executing(ctx, callID)
	}
}

// approval is a call waiting for the client.
type approval struct {
	req    runtime.ApprovalRequest
	answer chan answer
	// task and parked are set when the call's task has parked on it
	// (input-required published): parked is closed then.
	task       *liveTask
	parked     chan struct{}
	parkedOnce sync.Once
	// idlePoke, once the idle policy's timer runs for the call, restarts
	// it (armIdle); under its task's lock.
	idlePoke chan struct{}
}

// park records that t waits on the call.
func (ap *approval) park(t *liveTask) {
	ap.parkedOnce.Do(func() {
		ap.task = t
		close(ap.parked)
	})
}

// answer is the client's decision, with the arguments to run (nil keeps
// the model's).
type answer struct {
	outcome runtime.Outcome
	args    map[string]any
}

// decide turns a ToolCallConfirmation into the answer for ap, checking
// the option and any modified content against the call.
func (ap *approval) decide(c devtool.ToolCallConfirmation) (answer, error) {
	var ans answer
	switch c.SelectedOptionID {
	case devtool.OptionProceedOnce:
		ans.outcome = runtime.ProceedOnce
	case devtool.OptionProceedAlways:
		ans.outcome = runtime.ProceedAlways
	case devtool.OptionProceedAlwaysTool:
		ans.outcome = runtime.ProceedAlwaysTool
	case devtool.OptionProceedAlwaysServer:
		ans.outcome = runtime.ProceedAlwaysServer
	case devtool.OptionProceedAlwaysAndSave:
		ans.outcome = runtime.ProceedAlwaysAndSave
	case devtool.OptionCancel:
		ans.outcome = runtime.Cancel
	default:
		return ans, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf(
			"selected_option_id %q is not an option of tool call %s (want %s, %s or %s)",
			c.SelectedOptionID, c.ToolCallID, devtool.OptionProceedOnce, devtool.OptionProceedAlways, devtool.OptionCancel))
	}
	if !ap.req.Offered(ans.outcome) {
		// Not among the request's options: "always" answers are off
		// (security.disableAlwaysAllow, an untrusted workspace) or the
		// save answer is (security.enablePermanentToolApproval unset).
		why := `"always" answers are disabled (security.disableAlwaysAllow, or the workspace is not trusted)`
		if !ap.req.AlwaysHidden {
			why = "saving a rule for future sessions is disabled (security.enablePermanentToolApproval is not set)"
		}
		return ans, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf(
			"selected_option_id %q is not an option of tool call %s: %s; want one of %s",
			c.SelectedOptionID, c.ToolCallID, why, strings.Join(offeredIDs(ap.req), ", ")))
	}
	if c.FileDetails == nil || ans.outcome == runtime.Cancel {
		return ans, nil
	}
	args, err := runtime.ModifiedArgs(ap.req, c.FileDetails.NewContent)
	if err != nil {
		return ans, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("tool call %s: %v", c.ToolCallID, err))
	}
	ans.args = args
	return ans, nil
}

// offeredIDs are the option ids a request offers, as the A2A client was
// sent them.
func offeredIDs(req runtime.ApprovalRequest) []string {
	ids := []string{devtool.OptionProceedOnce}
	if req.Offered(runtime.ProceedAlways) {
		ids = append(ids, devtool.OptionProceedAlways)
	}
	if req.Offered(runtime.ProceedAlwaysAndSave) {
		ids = append(ids, devtool.OptionProceedAlwaysAndSave)
	}
	return append(ids, devtool.OptionCancel)
}
