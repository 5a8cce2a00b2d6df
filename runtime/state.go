package runtime

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/agentry-dev/agentry/loopdetect"
	"github.com/agentry-dev/agentry/telemetry"
	"github.com/agentry-dev/agentry/tools"
)

// streamState is what one running stream shares with the pieces ADK calls
// on its behalf — the dispatcher, the tool scheduler, the session guard —
// carried on the invocation's context.
type streamState struct {
	session  *Session
	stream   *stream
	model    string // the resolved model the stream started with
	maxTurns int
	turns    atomic.Int64

	mu    sync.Mutex
	calls map[string]*callInfo // by function call id
	// loop is the prompt's loop detector, made on first use; guarded by mu.
	loop *loopdetect.Detector
	// loopPartial says the current model call has streamed partial
	// responses, whose text the detector has already seen.
	loopPartial atomic.Bool
	// asks are the calls a BeforeTool hook said need confirmation;
	// guarded by mu.
	asks map[string]bool
	// runSpan is the run's telemetry span; nil without telemetry.
	runSpan *telemetry.Run
	// invCancel cancels the current invocation only (the stream goes on);
	// guarded by mu.
	invCancel context.CancelCauseFunc
}

// callInfo is what the scheduler learned about one tool call, for the
// tool_response event and the run's statistics.
type callInfo struct {
	tool       tools.Tool
	result     tools.Result
	errType    tools.ErrorType
	errDisplay string // the failed tool's own summary of its error, if any
	decision   string // accept, reject, modify, auto_accept
	durationMs int64
	outputFile string // where a truncated output was saved whole
}

type streamStateKey struct{}

func withStreamState(ctx context.Context, ss *streamState) context.Context {
	return context.WithValue(ctx, streamStateKey{}, ss)
}

func streamStateFrom(ctx context.Context) *streamState {
	ss, _ := ctx.Value(streamStateKey{}).(*streamState)
	return ss
}

func (ss *streamState) turnCount() int { return int(ss.turns.Load()) }

// cancel stops the stream's invocation with cause.
func (ss *streamState) cancel(cause error) { ss.stream.cancel(cause) }

// restart stops the current invocation with cause but not the stream,
// which starts another (a loop-recovery turn).
func (ss *streamState) restart(cause error) {
	ss.mu.Lock()
	cancel := ss.invCancel
	ss.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}

// setInvocation records the cancel function of a new invocation.
func (ss *streamState) setInvocation(cancel context.CancelCauseFunc) {
	ss.mu.Lock()
	ss.invCancel = cancel
	ss.mu.Unlock()
}

// forceAsk makes call id need confirmation whatever the policy says.
func (ss *streamState) forceAsk(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.asks == nil {
		ss.asks = map[string]bool{}
	}
	ss.asks[id] = true
}

// mustAsk reports whether a hook asked for call id to be confirmed.
func (ss *streamState) mustAsk(id string) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.asks[id]
}

func (ss *streamState) setCall(id string, info *callInfo) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.calls == nil {
		ss.calls = map[string]*callInfo{}
	}
	ss.calls[id] = info
}

func (ss *streamState) call(id string) *callInfo {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.calls[id]
}

// FatalToolError is the cause of a stream stopped because a tool failed in a
// way no model can recover from, such as a full disk.
type FatalToolError struct {
	Tool string
	Err  error
}

// Error says which tool failed and how.
func (e *FatalToolError) Error() string {
	return fmt.Sprintf("Error executing tool %s: %v", e.Tool, e.Err)
}

// Unwrap returns the tool's error.
func (e *FatalToolError) Unwrap() error { return e.Err }
