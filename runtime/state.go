package runtime

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/runtime/handle"
	"github.com/agentry-dev/agentry/telemetry"
	"github.com/agentry-dev/agentry/tools"
)

// Stream is the running stream, as the code acting on its behalf sees it
// (plugins, tools that run other agents): handle.Stream, whose methods
// know no runtime types, plus its events and its approver. Callbacks and
// tools reach it with StreamFrom.
type Stream interface {
	handle.Stream
	// Emit adds ev to the stream.
	Emit(ev Event)
	// Approver is the session's approver; nil denies what needs one.
	Approver() Approver
}

// StreamFrom returns the stream ctx carries, or nil outside a stream.
func StreamFrom(ctx context.Context) Stream {
	s, _ := handle.From(ctx).(Stream)
	return s
}

// streamState is what one running stream shares with the session core ADK
// calls on its behalf — the dispatcher, the tool scheduler, the session
// guard — carried on the invocation's context. It is the stream's Stream.
type streamState struct {
	session  *Session
	stream   *stream
	initial  bool   // the session's first stream
	model    string // the resolved model the stream started with
	maxTurns int    // the stream's model-call limit; 0 or less: none

	mu    sync.Mutex
	calls map[string]*callInfo // by function call id
	// locals are the plugins' per-stream values; guarded by mu.
	locals map[any]any
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

var _ Stream = (*streamState)(nil)

func withStreamState(ctx context.Context, ss *streamState) context.Context {
	return handle.With(ctx, ss)
}

func streamStateFrom(ctx context.Context) *streamState {
	ss, _ := handle.From(ctx).(*streamState)
	return ss
}

// SessionID implements handle.Stream.
func (ss *streamState) SessionID() string { return ss.session.cfg.sessionID }

// ID implements handle.Stream.
func (ss *streamState) ID() string { return ss.stream.id }

// Initial implements handle.Stream.
func (ss *streamState) Initial() bool { return ss.initial }

// Prompt implements handle.Stream.
func (ss *streamState) Prompt() *genai.Content { return ss.stream.content }

// Emit implements Stream.
func (ss *streamState) Emit(ev Event) { ss.session.emit(ss.stream, ev) }

// Approver implements Stream.
func (ss *streamState) Approver() Approver { return ss.session.cfg.approver }

// Custom implements handle.Stream.
func (ss *streamState) Custom(kind string, data map[string]any) {
	if kind == CustomChatCompressed {
		// The compression plugin rewrote the stored history.
		ss.session.historyRewritten()
	}
	ss.Emit(Event{Type: EventCustom, Custom: &Custom{Kind: kind, Data: data}})
}

// Warn implements handle.Stream.
func (ss *streamState) Warn(code, message string) {
	ss.Emit(Event{Type: EventError, Meta: map[string]any{"code": code},
		Error: &ErrorData{Status: StatusInternal, Message: message}})
}

// Cancel implements handle.Stream.
func (ss *streamState) Cancel(cause error) { ss.cancel(cause) }

// Restart implements handle.Stream.
func (ss *streamState) Restart(cause error, next *genai.Content) {
	ss.restart(&restartCause{cause: cause, next: next})
}

// RequireApproval implements handle.Stream.
func (ss *streamState) RequireApproval(callID string) { ss.forceAsk(callID) }

// Local implements handle.Stream.
func (ss *streamState) Local(key any, init func() any) any {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	v, ok := ss.locals[key]
	if !ok {
		if ss.locals == nil {
			ss.locals = map[any]any{}
		}
		v = init()
		ss.locals[key] = v
	}
	return v
}

// restartCause is the cause of an invocation stopped by Restart: the
// stream goes on with next.
type restartCause struct {
	cause error
	next  *genai.Content
}

func (r *restartCause) Error() string { return r.cause.Error() }

func (r *restartCause) Unwrap() error { return r.cause }

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
