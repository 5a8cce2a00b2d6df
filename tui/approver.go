package tui

import (
	"context"
	"errors"
	"sync"

	"github.com/agentry-dev/agentry/runtime"
)

// errAttached reports a second Run using an Approver that one is using.
var errAttached = errors.New("tui: the approver is in use by another Run")

// Approver asks the terminal's user whether a tool call may run. Create it
// with NewApprover and hand it to the session's composition and to
// Config.Approver: while Run runs, each request opens a dialog (requests
// arriving together wait in a queue); without a running terminal it
// returns runtime.ErrNoHuman. It is safe for concurrent use.
type Approver struct {
	mu sync.Mutex
	mb *mailbox
}

var (
	_ runtime.EditingApprover   = (*Approver)(nil)
	_ runtime.ExecutionObserver = (*Approver)(nil)
)

// NewApprover returns an Approver with no terminal attached.
func NewApprover() *Approver { return &Approver{} }

// approval is one request waiting for the user's answer.
type approval struct {
	req    runtime.ApprovalRequest
	answer chan approvalAnswer // buffered: the model's one send never blocks
}

// approvalAnswer is the user's answer: an outcome of the dialog and, after
// "Modify with external editor", the arguments the call runs with.
type approvalAnswer struct {
	outcome runtime.Outcome
	args    map[string]any
}

// approvalMsg brings a request into the program.
type approvalMsg struct{ a *approval }

// approvalGoneMsg withdraws a request whose context ended.
type approvalGoneMsg struct{ a *approval }

// toolExecutingMsg reports that a call started to execute.
type toolExecutingMsg struct{ callID string }

func (ap *Approver) attach(mb *mailbox) error {
	ap.mu.Lock()
	defer ap.mu.Unlock()
	if ap.mb != nil {
		return errAttached
	}
	ap.mb = mb
	return nil
}

func (ap *Approver) detach(mb *mailbox) {
	ap.mu.Lock()
	defer ap.mu.Unlock()
	if ap.mb == mb {
		ap.mb = nil
	}
}

// Approve implements runtime.Approver.
func (ap *Approver) Approve(ctx context.Context, req runtime.ApprovalRequest) (runtime.Outcome, error) {
	o, _, err := ap.ApproveEdit(ctx, req)
	return o, err
}

// ApproveEdit implements runtime.EditingApprover: it blocks until the user
// answers the request's dialog, ctx ends (the dialog closes; the outcome
// is Cancel with ctx's cause) or the terminal quits (runtime.ErrNoHuman).
// The outcome is gemini-cli's for the option chosen (the MCP dialog's
// proceed_always_tool and proceed_always_server, the "future sessions"
// options' proceed_always_and_save): the session's policy adds the rules.
func (ap *Approver) ApproveEdit(ctx context.Context, req runtime.ApprovalRequest) (runtime.Outcome, map[string]any, error) {
	ap.mu.Lock()
	mb := ap.mb
	ap.mu.Unlock()
	if mb == nil {
		return "", nil, runtime.ErrNoHuman
	}
	if err := context.Cause(ctx); err != nil {
		return runtime.Cancel, nil, err
	}
	a := &approval{req: req, answer: make(chan approvalAnswer, 1)}
	mb.push(approvalMsg{a})
	select {
	case ans := <-a.answer:
		return ans.outcome, ans.args, nil
	case <-ctx.Done():
		mb.push(approvalGoneMsg{a})
		return runtime.Cancel, nil, context.Cause(ctx)
	case <-mb.done:
		return "", nil, runtime.ErrNoHuman
	}
}

// Executing implements runtime.ExecutionObserver: the tool's line in the
// terminal turns from pending to running.
func (ap *Approver) Executing(_ context.Context, callID string) {
	ap.mu.Lock()
	mb := ap.mb
	ap.mu.Unlock()
	if mb != nil {
		mb.push(toolExecutingMsg{callID})
	}
}
