package telemetry

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys. The gen_ai.* keys are the OpenTelemetry GenAI semantic
// conventions; the agentry.* keys are this project's own namespace.
const (
	keyOperation    = attribute.Key("gen_ai.operation.name")
	keyRequestModel = attribute.Key("gen_ai.request.model")
	keyInputTokens  = attribute.Key("gen_ai.usage.input_tokens")
	keyOutputTokens = attribute.Key("gen_ai.usage.output_tokens")
	keyCachedTokens = attribute.Key("gen_ai.usage.cache_read.input_tokens")

	keySessionID      = attribute.Key("agentry.session.id")
	keyPromptID       = attribute.Key("agentry.prompt.id")
	keyModelRequested = attribute.Key("agentry.model.requested")
	keyRetryAttempt   = attribute.Key("agentry.retry.attempt")
	keyRetryReason    = attribute.Key("agentry.retry.reason")
	keyFallbackFrom   = attribute.Key("agentry.fallback.from")
	keyFallbackTo     = attribute.Key("agentry.fallback.to")
	keyToolName       = attribute.Key("agentry.tool.name")
	keyToolCallID     = attribute.Key("agentry.tool.call_id")
	keyToolStatus     = attribute.Key("agentry.tool.status")
	keyHookEvent      = attribute.Key("agentry.hook.event")
	keyHookName       = attribute.Key("agentry.hook.name")
	keyHookDecision   = attribute.Key("agentry.hook.decision")

	// Metric-only keys: short, because the metric name already says what
	// they qualify (agentry.tool.calls{status="error"}).
	keyStatus    = attribute.Key("status")
	keyTokenType = attribute.Key("type")
	keyReason    = attribute.Key("reason")
)

// Span and event names; see the package documentation.
const (
	opInvokeAgent = "invoke_agent"
	opChat        = "chat"
	opExecuteTool = "execute_tool"
	opHook        = "hook"

	eventRetry    = "retry"
	eventFallback = "fallback"
)

// Statuses recorded in the status metric attribute.
const (
	statusOK        = "ok"
	statusError     = "error"
	statusCancelled = "cancelled"
	statusTimeout   = "timeout"
)

// outcome classifies err into a low-cardinality status for metrics; the
// message itself goes only to the span status.
func outcome(err error) string {
	switch {
	case err == nil:
		return statusOK
	case errors.Is(err, context.Canceled):
		return statusCancelled
	case errors.Is(err, context.DeadlineExceeded):
		return statusTimeout
	default:
		return statusError
	}
}

// spanName joins an operation and its target, leaving out an empty target
// rather than producing a trailing space.
func spanName(op, target string) string {
	if target == "" {
		return op
	}
	return op + " " + target
}

// handle is what every span handle shares: the owning Telemetry, the span,
// its start time (so the span and the duration histogram agree exactly) and
// a guard that makes End idempotent.
type handle struct {
	t     *Telemetry
	span  trace.Span
	start time.Time
	ended atomic.Bool
}

// begin opens a span at a timestamp the handle keeps.
func (h *handle) begin(ctx context.Context, t *Telemetry, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) context.Context {
	h.t = t
	h.start = time.Now()
	ctx, h.span = t.tracer.Start(ctx, name,
		trace.WithSpanKind(kind),
		trace.WithTimestamp(h.start),
		trace.WithAttributes(attrs...),
	)
	return ctx
}

// claim reports whether this is the first End. A second End (say, a
// deferred one after an explicit one) must neither touch the ended span nor
// count the operation twice.
func (h *handle) claim() bool {
	return h.ended.CompareAndSwap(false, true)
}

// finish ends the span, marking it failed if err is non-nil, and returns
// the elapsed seconds for the duration histogram.
func (h *handle) finish(err error) float64 {
	if err != nil {
		// Only the message is recorded, not a stack or the request, so no
		// prompt text reaches the span.
		h.span.SetStatus(codes.Error, err.Error())
	}
	end := time.Now()
	h.span.End(trace.WithTimestamp(end))
	return end.Sub(h.start).Seconds()
}

// Run is one agent run: one prompt, from submission to the final answer.
// A nil *Run (telemetry off) is a valid no-op.
type Run struct {
	h handle
}

// StartRun opens the root span of an agent run. Model, tool and hook spans
// started from the returned context become its children.
func (t *Telemetry) StartRun(ctx context.Context, sessionID, promptID string) (context.Context, *Run) {
	// The nil check is split from the work so that it inlines into the
	// caller: telemetry off then costs a compare, not a call.
	if t == nil {
		return ctx, nil
	}
	return t.startRun(ctx, sessionID, promptID)
}

// startRun is StartRun's enabled path.
func (t *Telemetry) startRun(ctx context.Context, sessionID, promptID string) (context.Context, *Run) {
	r := &Run{}
	ctx = r.h.begin(ctx, t, opInvokeAgent, trace.SpanKindInternal,
		keyOperation.String(opInvokeAgent),
		keySessionID.String(sessionID),
		keyPromptID.String(promptID),
	)
	return ctx, r
}

// End closes the run; a non-nil err marks it failed. Later calls do nothing.
func (r *Run) End(err error) {
	if r != nil {
		r.end(err)
	}
}

// end is End's enabled path.
func (r *Run) end(err error) {
	if !r.h.claim() {
		return
	}
	secs := r.h.finish(err)
	r.h.t.runDur.Record(context.Background(), secs, metric.WithAttributes(keyStatus.String(outcome(err))))
}

// ModelCall is one model call through the retry and fallback dispatcher:
// retries and fallbacks are events on it, not separate spans, so the span's
// duration is what the user waited. A nil *ModelCall is a valid no-op.
type ModelCall struct {
	h handle

	mu    sync.Mutex
	model string // the routed model, for span name and metric attributes
}

// StartModelCall opens a "chat <model>" span for the model the caller asked
// for, which may be a routing alias; call SetModel once routing has picked
// the real model.
func (t *Telemetry) StartModelCall(ctx context.Context, model string) (context.Context, *ModelCall) {
	if t == nil {
		return ctx, nil
	}
	return t.startModelCall(ctx, model)
}

// startModelCall is StartModelCall's enabled path.
func (t *Telemetry) startModelCall(ctx context.Context, model string) (context.Context, *ModelCall) {
	m := &ModelCall{model: model}
	ctx = m.h.begin(ctx, t, spanName(opChat, model), trace.SpanKindClient,
		keyOperation.String(opChat),
		keyRequestModel.String(model),
		keyModelRequested.String(model),
	)
	return ctx, m
}

// SetModel renames the span to "chat <routed>" and updates
// gen_ai.request.model; agentry.model.requested keeps what was asked for.
func (m *ModelCall) SetModel(routed string) {
	if m != nil && routed != "" {
		m.setModel(routed)
	}
}

// setModel is SetModel's enabled path.
func (m *ModelCall) setModel(routed string) {
	m.mu.Lock()
	m.model = routed
	m.mu.Unlock()
	m.h.span.SetName(spanName(opChat, routed))
	m.h.span.SetAttributes(keyRequestModel.String(routed))
}

// currentModel returns the routed model under the lock.
func (m *ModelCall) currentModel() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.model
}

// Retry records that attempt (1 for the first retry) is about to be made
// because of reason. reason becomes a metric attribute, so it must be a
// short, bounded class such as "rate_limit" or "unavailable", never an
// error message.
func (m *ModelCall) Retry(attempt int, reason string) {
	if m != nil {
		m.retry(attempt, reason)
	}
}

// retry is Retry's enabled path.
func (m *ModelCall) retry(attempt int, reason string) {
	m.h.span.AddEvent(eventRetry, trace.WithAttributes(
		keyRetryAttempt.Int(attempt),
		keyRetryReason.String(reason),
	))
	m.h.t.modelRetries.Add(context.Background(), 1, metric.WithAttributes(
		keyRequestModel.String(m.currentModel()),
		keyReason.String(reason),
	))
}

// Fallback records a switch from one model to another. It also renames the
// span to the fallback model, as SetModel(to) would, because the span must
// carry the model that actually answered.
func (m *ModelCall) Fallback(from, to string) {
	if m != nil {
		m.fallback(from, to)
	}
}

// fallback is Fallback's enabled path.
func (m *ModelCall) fallback(from, to string) {
	m.h.span.AddEvent(eventFallback, trace.WithAttributes(
		keyFallbackFrom.String(from),
		keyFallbackTo.String(to),
	))
	m.h.t.modelFallback.Add(context.Background(), 1, metric.WithAttributes(
		keyFallbackFrom.String(from),
		keyFallbackTo.String(to),
	))
	if to != "" {
		m.setModel(to)
	}
}

// End closes the call with its token usage (0 when unknown) and error.
// Later calls do nothing.
func (m *ModelCall) End(inputTokens, outputTokens, cachedTokens int, err error) {
	if m != nil {
		m.end(inputTokens, outputTokens, cachedTokens, err)
	}
}

// end is End's enabled path.
func (m *ModelCall) end(inputTokens, outputTokens, cachedTokens int, err error) {
	if !m.h.claim() {
		return
	}
	m.h.span.SetAttributes(
		keyInputTokens.Int(inputTokens),
		keyOutputTokens.Int(outputTokens),
		keyCachedTokens.Int(cachedTokens),
	)
	secs := m.h.finish(err)
	ctx := context.Background()
	model := keyRequestModel.String(m.currentModel())
	status := keyStatus.String(outcome(err))
	m.h.t.modelCalls.Add(ctx, 1, metric.WithAttributes(model, status))
	m.h.t.modelDur.Record(ctx, secs, metric.WithAttributes(model, status))
	// Zero counts add nothing to a sum, and skipping them keeps a model
	// without caching from growing an always-zero "cached" series.
	for _, tok := range [...]struct {
		kind string
		n    int
	}{{"input", inputTokens}, {"output", outputTokens}, {"cached", cachedTokens}} {
		if tok.n > 0 {
			m.h.t.modelTokens.Add(ctx, int64(tok.n), metric.WithAttributes(model, keyTokenType.String(tok.kind)))
		}
	}
}

// ToolCall is one tool call. A nil *ToolCall is a valid no-op.
type ToolCall struct {
	h    handle
	name string
}

// StartToolCall opens an "execute_tool <name>" span. callID is the model's
// tool call id, which links the span to the transcript.
func (t *Telemetry) StartToolCall(ctx context.Context, name, callID string) (context.Context, *ToolCall) {
	if t == nil {
		return ctx, nil
	}
	return t.startToolCall(ctx, name, callID)
}

// startToolCall is StartToolCall's enabled path.
func (t *Telemetry) startToolCall(ctx context.Context, name, callID string) (context.Context, *ToolCall) {
	c := &ToolCall{name: name}
	ctx = c.h.begin(ctx, t, spanName(opExecuteTool, name), trace.SpanKindInternal,
		keyOperation.String(opExecuteTool),
		keyToolName.String(name),
		keyToolCallID.String(callID),
	)
	return ctx, c
}

// End closes the call with status "success", "error" or "cancelled". The
// span status is Error when err is non-nil, or when status is "error"
// without an err (a tool that reported failure in its result). Later calls
// do nothing.
func (c *ToolCall) End(status string, err error) {
	if c != nil {
		c.end(status, err)
	}
}

// end is End's enabled path.
func (c *ToolCall) end(status string, err error) {
	if !c.h.claim() {
		return
	}
	c.h.span.SetAttributes(keyToolStatus.String(status))
	if err == nil && status == statusError {
		c.h.span.SetStatus(codes.Error, "tool reported an error")
	}
	secs := c.h.finish(err)
	attrs := metric.WithAttributes(keyToolName.String(c.name), keyStatus.String(status))
	c.h.t.toolCalls.Add(context.Background(), 1, attrs)
	c.h.t.toolDur.Record(context.Background(), secs, attrs)
}

// Hook is one command hook run. A nil *Hook is a valid no-op.
type Hook struct {
	h     handle
	event string
}

// StartHook opens a "hook <event>" span for the hook called name.
func (t *Telemetry) StartHook(ctx context.Context, event, name string) (context.Context, *Hook) {
	if t == nil {
		return ctx, nil
	}
	return t.startHook(ctx, event, name)
}

// startHook is StartHook's enabled path.
func (t *Telemetry) startHook(ctx context.Context, event, name string) (context.Context, *Hook) {
	h := &Hook{event: event}
	ctx = h.h.begin(ctx, t, spanName(opHook, event), trace.SpanKindInternal,
		keyHookEvent.String(event),
		keyHookName.String(name),
	)
	return ctx, h
}

// End closes the hook run with its decision (e.g. "allow", "deny", or ""
// when the hook made none) and error. Later calls do nothing.
func (h *Hook) End(decision string, err error) {
	if h != nil {
		h.end(decision, err)
	}
}

// end is End's enabled path.
func (h *Hook) end(decision string, err error) {
	if !h.h.claim() {
		return
	}
	h.h.span.SetAttributes(keyHookDecision.String(decision))
	secs := h.h.finish(err)
	ctx := context.Background()
	event := keyHookEvent.String(h.event)
	status := keyStatus.String(outcome(err))
	h.h.t.hookRuns.Add(ctx, 1, metric.WithAttributes(event, keyHookDecision.String(decision), status))
	h.h.t.hookDur.Record(ctx, secs, metric.WithAttributes(event, status))
}
