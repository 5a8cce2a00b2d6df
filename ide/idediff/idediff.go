// Package idediff shows an edit awaiting confirmation as a diff in the
// user's IDE, as gemini-cli does: the IDE's companion (docs/ide.md) and
// the session's own approver (the terminal's dialog, the A2A clients) are
// asked at the same time, and the first answer wins. An IDE that accepts
// the diff decides the content written, which may be the user's edit of
// the proposal; one that rejects it cancels the call; an answer from the
// other approver closes the IDE's diff.
package idediff

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/tools"
)

// Answer is the IDE's answer to a diff: accepted with the content the
// user accepted (possibly edited in the diff view), or rejected.
type Answer struct {
	Accepted bool
	Content  string
}

// Differ is the connection to an IDE companion that shows diffs
// (package ide's Client, whose OpenDiff result converts to an Answer:
// idediff.Answer(outcome)).
type Differ interface {
	// CanDiff reports whether the companion is connected and offers
	// openDiff and closeDiff.
	CanDiff() bool
	// OpenDiff shows newContent as the proposed content of path and
	// blocks until the user accepts or rejects it, ctx ends, or the
	// connection is lost (an error).
	OpenDiff(ctx context.Context, path, newContent string) (Answer, error)
	// CloseDiff closes path's diff without a notification
	// (suppressNotification) and returns the content it held, if any.
	CloseDiff(ctx context.Context, path string) (*string, error)
}

// closeTimeout bounds the closeDiff sent once a call is decided
// elsewhere, which must not hold up the call when the IDE hangs.
const closeTimeout = 10 * time.Second

// Option configures an Approver.
type Option func(*Approver)

// WithMode has the Approver read the session's approval mode (usually
// runtime.Policy.Mode): a diff opens only in the default mode, as in
// gemini-cli; in auto_edit, yolo and plan the inner approver alone
// decides. Without it every mode counts as default.
func WithMode(mode func() runtime.ApprovalMode) Option {
	return func(a *Approver) { a.mode = mode }
}

// WithLogger sets where the IDE's failures are logged; default
// slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(a *Approver) { a.log = l }
}

// Approver is a runtime.EditingApprover that races an IDE's diff view
// against an inner approver for the confirmation of write_file and
// replace calls. It is safe for concurrent use.
type Approver struct {
	inner runtime.Approver
	ide   Differ
	mode  func() runtime.ApprovalMode
	log   *slog.Logger

	mu   sync.Mutex
	open map[string]bool // paths with a diff open
}

var (
	_ runtime.EditingApprover   = (*Approver)(nil)
	_ runtime.ExecutionObserver = (*Approver)(nil)
)

// New returns an Approver that asks inner, and ide for the edits it can
// show. inner must not be nil: without a human to ask (a batch run)
// gemini-cli opens no diff either.
func New(inner runtime.Approver, ide Differ, opts ...Option) *Approver {
	a := &Approver{inner: inner, ide: ide, log: slog.Default(), open: map[string]bool{}}
	for _, o := range opts {
		o(a)
	}
	return a
}

// Beside returns an Approver that shows edits in the IDE and answers
// nothing else: for every other request, and while the IDE cannot show a
// diff, it waits until ctx ends. It is the approver an A2A server asks
// beside its clients (protocol.Config.Beside), who answer the rest.
func Beside(ide Differ, opts ...Option) *Approver {
	return New(waitForOthers{}, ide, opts...)
}

// waitForOthers is an approver that leaves every answer to somebody else.
type waitForOthers struct{}

func (waitForOthers) Approve(ctx context.Context, _ runtime.ApprovalRequest) (runtime.Outcome, error) {
	<-ctx.Done()
	return runtime.Cancel, context.Cause(ctx)
}

// Approve implements runtime.Approver.
func (a *Approver) Approve(ctx context.Context, req runtime.ApprovalRequest) (runtime.Outcome, error) {
	o, _, err := a.ApproveEdit(ctx, req)
	return o, err
}

// Executing implements runtime.ExecutionObserver for an inner approver
// that reports the start of calls.
func (a *Approver) Executing(ctx context.Context, callID string) {
	if o, ok := a.inner.(runtime.ExecutionObserver); ok {
		o.Executing(ctx, callID)
	}
}

// ApproveEdit implements runtime.EditingApprover. A write_file or replace
// call with a preview (ApprovalRequest.Diff), in the default approval
// mode, while the IDE can diff and has no diff open for the same file,
// opens the file's proposed content in the IDE and asks the inner
// approver at once:
//
//   - the IDE accepts: proceed_once, the call's content replaced by the
//     accepted content (write_file's content; for replace, old_string the
//     file as previewed and new_string the accepted content, as
//     runtime.ModifiedArgs makes them) and marked tools.ModifiedByUser so
//     the result tells the model, as gemini-cli does on every accept with
//     content, changed or not; the inner approver's context is cancelled,
//     which withdraws its question;
//   - the IDE rejects: cancel, the inner approver withdrawn likewise;
//   - the inner approver answers (or fails) first: the IDE's diff is
//     closed without a notification and the inner answer stands, its
//     modified arguments included;
//   - OpenDiff fails (no companion, connection lost): the inner approver
//     alone decides.
//
// Every other request goes to the inner approver unchanged.
func (a *Approver) ApproveEdit(ctx context.Context, req runtime.ApprovalRequest) (runtime.Outcome, map[string]any, error) {
	path, content, ok := a.diffable(req)
	if !ok || !a.claim(path) {
		return a.askInner(ctx, req)
	}
	defer a.release(path)

	innerCtx, cancelInner := context.WithCancel(ctx)
	defer cancelInner()
	ideCtx, cancelIDE := context.WithCancel(ctx)
	defer cancelIDE()

	type innerResult struct {
		outcome runtime.Outcome
		args    map[string]any
		err     error
	}
	type ideResult struct {
		ans Answer
		err error
	}
	innerDone := make(chan innerResult, 1)
	ideDone := make(chan ideResult, 1)
	go func() {
		o, args, err := a.askInner(innerCtx, req)
		innerDone <- innerResult{o, args, err}
	}()
	go func() {
		ans, err := a.ide.OpenDiff(ideCtx, path, content)
		ideDone <- ideResult{ans, err}
	}()

	// shown: the editor may be showing the diff, which must be closed
	// when the call is decided elsewhere or ctx ends.
	shown := true
	for {
		select {
		case r := <-innerDone:
			// The answer came from elsewhere (or ctx ended): the
			// editor's view goes, without a notification, and
			// OpenDiff stops waiting for one.
			if shown {
				a.closeDiff(ctx, path)
			}
			if ideDone != nil {
				cancelIDE()
				<-ideDone
			}
			return r.outcome, r.args, r.err
		case r := <-ideDone:
			ideDone = nil
			if r.err != nil {
				// The inner approver alone decides. A diff whose wait
				// ended with ctx may still be on screen; one that
				// failed (no companion, connection lost) is not.
				if ctx.Err() == nil {
					shown = false
					a.log.Warn("ide: the diff could not be shown; the confirmation is asked without it", "path", path, "err", r.err)
				}
				continue
			}
			// The IDE answered first: the other question is withdrawn.
			cancelInner()
			<-innerDone
			if !r.ans.Accepted {
				return runtime.Cancel, nil, nil
			}
			if r.ans.Content == "" {
				// gemini-cli applies no payload without content.
				return runtime.ProceedOnce, nil, nil
			}
			args, err := runtime.ModifiedArgs(req, r.ans.Content)
			if err != nil {
				return runtime.Cancel, nil, err
			}
			args[tools.ModifiedByUser] = true
			return runtime.ProceedOnce, args, nil
		}
	}
}

// diffable returns the file and the full content an edit request
// proposes, when the IDE is to show it.
func (a *Approver) diffable(req runtime.ApprovalRequest) (path, content string, ok bool) {
	if req.Tool != "write_file" && req.Tool != "replace" {
		return "", "", false
	}
	if req.Diff == nil || req.Diff.Path == "" {
		return "", "", false
	}
	if a.mode != nil && a.mode() != runtime.ApprovalDefault {
		return "", "", false
	}
	if !a.ide.CanDiff() {
		return "", "", false
	}
	return req.Diff.Path, req.Diff.After, true
}

// claim marks path's diff open, unless one already is: a second call on
// the same file is asked without the IDE while the first one's diff is
// shown.
func (a *Approver) claim(path string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.open[path] {
		return false
	}
	a.open[path] = true
	return true
}

func (a *Approver) release(path string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.open, path)
}

// askInner asks the inner approver, with its modified arguments when it
// has them.
func (a *Approver) askInner(ctx context.Context, req runtime.ApprovalRequest) (runtime.Outcome, map[string]any, error) {
	if e, ok := a.inner.(runtime.EditingApprover); ok {
		return e.ApproveEdit(ctx, req)
	}
	o, err := a.inner.Approve(ctx, req)
	return o, nil, err
}

// closeDiff closes path's diff in the IDE, even after ctx ended (an
// aborted run must not leave the view open).
func (a *Approver) closeDiff(ctx context.Context, path string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
	defer cancel()
	if _, err := a.ide.CloseDiff(cctx, path); err != nil {
		a.log.Warn("ide: closing the diff", "path", path, "err", err)
	}
}
