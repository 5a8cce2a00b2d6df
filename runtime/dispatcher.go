package runtime

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/routing"
	"github.com/agentry-dev/agentry/runtime/llm"
	"github.com/agentry-dev/agentry/telemetry"
)

// Metadata keys the dispatcher sets on every complete model response, for the
// translator's usage events.
const (
	metaModel      = "agentry:model"
	metaDurationMs = "agentry:durationMs"
)

// Custom event kinds the dispatcher emits.
const (
	// CustomModelFallback reports a fallback from one model to another:
	// data {failedModel, model, reason, intent, message}; after an upgrade
	// intent there is no model and the data carries the upgrade url.
	CustomModelFallback = "model_fallback"
	// CustomModelRetry reports a failed attempt about to be retried:
	// data {model, attempt, maxAttempts, delayMs, error}.
	CustomModelRetry = "model_retry"
)

// maxFallbacksPerCall bounds the fallbacks of one model call: a handler
// that keeps answering "retry" for a model that keeps failing must not
// loop forever. A chain longer than this is not a real configuration.
const maxFallbacksPerCall = 10

// errConsumerGone ends the retry loop when ADK stopped reading the stream.
var errConsumerGone = errors.New("model response consumer stopped")

// Dispatcher is the ADK model of an agentry session. ADK asks it for every
// model call with the request the processor chain prepared; it picks the
// backend from req.Model, streams the backend's chunks and aggregates them
// into partial deltas and one complete response.
//
// It owns gemini-cli's retry loops: failures before the first chunk are
// classified and retried with backoff; a persistent 429 goes to the
// routing service's fallback handler, and a retry intent re-selects the
// model through the same routing path, so the new model gets its own
// config and tools. A chat stream that ends invalid (blocked, empty, no
// finish reason) or breaks off is retried after 1, 2 and 4 s, unless
// answer text already reached the user: that is reported, never
// replayed into duplicate output.
//
// Its Name is the session's configured model, which ADK puts in req.Model
// before the chain runs; the routing processor rewrites req.Model.
type Dispatcher struct {
	resolver ModelResolver
	routes   *routing.Service
	retry    RetryConfig
	log      *slog.Logger
	tel      *telemetry.Telemetry // nil: no telemetry
	limiter  routing.Limiter      // nil: no fleet limits

	mu    sync.RWMutex
	model string

	// held are the contents of the chat request under way, kept out of
	// ADK's request log (heldContents); nil outside a session.
	held *heldContents
}

// DispatcherConfig configures a Dispatcher.
type DispatcherConfig struct {
	// Resolver maps model names to backends. Required.
	Resolver ModelResolver
	// Model is the configured model when Routing is nil.
	Model string
	// Routing, when set, selects models, owns the configured model and
	// handles fallbacks; without it calls are retried on the same model.
	Routing *routing.Service
	// Retry tunes the retry loop.
	Retry RetryConfig
	// Logger receives retry diagnostics; nil is slog.Default().
	Logger *slog.Logger
	// Telemetry records a span per model call (named after the routed
	// model, with tokens, retries and fallbacks); nil records nothing.
	Telemetry *telemetry.Telemetry
	// Limiter admits each attempt at a model call under fleet-wide limits
	// (concurrent calls, calls a minute); nil is the limiter of Routing's
	// Availability ([routing.WithLimiter]), if any.
	Limiter routing.Limiter
}

// NewDispatcher returns a dispatcher whose configured model is modelName,
// without routing.
func NewDispatcher(resolver ModelResolver, modelName string) *Dispatcher {
	return NewDispatcherWith(DispatcherConfig{Resolver: resolver, Model: modelName})
}

// NewDispatcherWith returns a dispatcher for cfg.
func NewDispatcherWith(cfg DispatcherConfig) *Dispatcher {
	d := &Dispatcher{resolver: cfg.Resolver, routes: cfg.Routing, retry: cfg.Retry.withDefaults(), log: cfg.Logger, model: cfg.Model, tel: cfg.Telemetry}
	if d.log == nil {
		d.log = slog.Default()
	}
	d.limiter = cfg.Limiter
	if d.limiter == nil && d.routes != nil {
		d.limiter = d.routes.Availability().Limiter()
	}
	return d
}

// Name implements model.LLM: the configured model.
func (d *Dispatcher) Name() string { return d.Model() }

// Model returns the configured model.
func (d *Dispatcher) Model() string {
	if d.routes != nil {
		return d.routes.Model()
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.model
}

// SetModel changes the configured model for later calls. The name must
// parse; its backend is created on first use.
func (d *Dispatcher) SetModel(name string) error {
	if _, err := llm.ParseModel(name); err != nil {
		return err
	}
	if d.routes != nil {
		d.routes.SetModel(name)
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.model = name
	return nil
}

// reportedModel is the model a stream reports before its first call, and
// checks that a backend serves it: an auto alias is reported as itself,
// since the router picks the model per prompt; any other name as the model
// it resolves to with the session's access, which is the model routing
// will call unless it falls back.
func (d *Dispatcher) reportedModel(ctx context.Context) (string, error) {
	name := d.Model()
	resolved := name
	if d.routes != nil {
		resolved = d.routes.Resolve(name)
	}
	target, err := d.resolver.Resolve(ctx, resolved)
	if err != nil {
		return "", err
	}
	if routing.IsAutoAlias(name) {
		return name, nil
	}
	return target.String(), nil
}

// GenerateContent implements model.LLM for the session's chat calls.
func (d *Dispatcher) GenerateContent(ctx context.Context, req *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		if d.held != nil {
			d.held.restore(req)
		}
		if req.Model == "" {
			req.Model = d.Model()
		}
		err := d.generate(ctx, req, stream, true, func(r *model.LLMResponse) bool { return yield(r, nil) })
		if err != nil && !errors.Is(err, errConsumerGone) {
			yield(nil, err)
		}
	}
}

// Call makes one non-streaming utility call (a classifier's) through the
// same backends and retry loop, without the chat's fallback handler, as
// gemini-cli's BaseLlmClient does in non-interactive runs.
func (d *Dispatcher) Call(ctx context.Context, req *model.LLMRequest) (*model.LLMResponse, error) {
	var out *model.LLMResponse
	err := d.generate(ctx, req, false, false, func(r *model.LLMResponse) bool { out = r; return true })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// generate runs the retry loop around one model call. chat calls may fall
// back and announce model changes on the stream; utility calls do neither.
func (d *Dispatcher) generate(ctx context.Context, req *model.LLMRequest, stream, chat bool, yield func(*model.LLMResponse) bool) (err error) {
	if err := context.Cause(ctx); err != nil {
		return err
	}
	routes := d.routes
	maxAttempts := d.retry.MaxAttempts
	var activeBefore string
	// The routing processor's decision for a chat call, found by the
	// invocation it was made in; utility calls have none.
	var prepared *routing.Prepared
	if routes != nil {
		activeBefore = routes.ActiveModel()
		if chat {
			prepared = routes.Prepared(invocationID(ctx))
		}
		sel := routes.Execute(req, prepared)
		maxAttempts = sel.MaxAttempts
	}
	if d.tel != nil {
		// The span is named after the routed model; a fallback renames it.
		var mc *telemetry.ModelCall
		ctx, mc = d.tel.StartModelCall(ctx, req.Model)
		var usage *genai.GenerateContentResponseUsageMetadata
		inner := yield
		yield = func(r *model.LLMResponse) bool {
			if r != nil && r.UsageMetadata != nil {
				usage = r.UsageMetadata
			}
			return inner(r)
		}
		defer func() {
			var in, out, cached int
			if usage != nil {
				in, out, cached = int(usage.PromptTokenCount), int(usage.CandidatesTokenCount), int(usage.CachedContentTokenCount)
			}
			if errors.Is(err, errConsumerGone) {
				mc.End(in, out, cached, nil)
				return
			}
			mc.End(in, out, cached, err)
		}()
		ctx = withModelCall(ctx, mc)
	}
	ss := streamStateFrom(ctx)
	if chat {
		d.announce(ss, req.Model)
	}
	// gemini-cli's streamWithRetries: a stream that started and then
	// failed is tried again, at most four times in all.
	streamAttempts := 1
	if chat {
		streamAttempts = min(d.retry.MaxAttempts, maxStreamAttempts)
	}
	var invalid *llm.InvalidStreamError
	for n := 1; ; n++ {
		ca := callAttempt{invalid: invalid}
		err = d.connect(ctx, req, prepared, stream, chat, &activeBefore, &maxAttempts, ss, &ca, yield)
		if err == nil || errors.Is(err, errConsumerGone) {
			return err
		}
		var inv *llm.InvalidStreamError
		isInvalid := errors.As(err, &inv)
		if isInvalid {
			invalid = inv
		}
		if cause := context.Cause(ctx); cause != nil {
			err = cause
			break
		}
		// Text the user has seen cannot be taken back: a retry would
		// print a second answer after the first half of one.
		var broken *brokenStreamError
		if !(isInvalid || errors.As(err, &broken)) || ca.shown || n >= streamAttempts {
			break
		}
		delay := time.Second << (n - 1)
		d.retried(ctx, ss, req.Model, n, streamAttempts, delay, err, chat, "invalid_stream")
		if serr := d.sleep(ctx, delay); serr != nil {
			err = serr
			break
		}
	}
	if broken, ok := err.(*brokenStreamError); ok {
		err = broken.err
	}
	if _, ok := err.(*llm.InvalidStreamError); ok {
		return err
	}
	return fmt.Errorf("model %s: %w", req.Model, err)
}

// callAttempt is what one stream attempt needs from the loop around it
// and tells it back.
type callAttempt struct {
	// invalid is the previous attempt's invalid stream, whose kind may
	// call for a nudge.
	invalid *llm.InvalidStreamError
	// started is set once a response of this attempt reached ADK, shown
	// once answer text did.
	started, shown bool
}

// brokenStreamError is a retryable failure after a stream had started.
type brokenStreamError struct{ err error }

func (e *brokenStreamError) Error() string { return e.err.Error() }
func (e *brokenStreamError) Unwrap() error { return e.err }

// connect runs the backoff loop of one stream attempt: failures before the
// stream starts are retried and may fall back to another model; a failure
// after it started ends the loop.
func (d *Dispatcher) connect(ctx context.Context, req *model.LLMRequest, prepared *routing.Prepared, stream, chat bool, activeBefore *string, maxAttempts *int, ss *streamState, ca *callAttempt, yield func(*model.LLMResponse) bool) error {
	routes := d.routes
	bo := newQuotaBackOff(d.retry)
	var attempt, capacityFailures, fallbacks int
	// fallback asks the routing service what to do after a persistent
	// failure; nil means retry at once on the model it re-selected.
	fallback := func(cerr error) error {
		if routes == nil || !chat || fallbacks >= maxFallbacksPerCall {
			return backoff.Permanent(cerr)
		}
		fallbacks++
		failed := req.Model
		fb := routes.HandleFallback(ctx, failed, cerr)
		if !fb.Retry {
			if fb.Intent == routing.IntentUpgrade {
				// The user chose to raise their limits: say where.
				d.emitCustom(ss, CustomModelFallback, map[string]any{
					"failedModel": failed, "reason": string(fb.Kind), "intent": string(fb.Intent), "url": routing.UpgradeURL,
					"message": fmt.Sprintf("Model %s failed (%s); to raise your limits, see %s", failed, fb.Kind, routing.UpgradeURL),
				})
			}
			return backoff.Permanent(cerr)
		}
		sel := routes.Reselect(req, prepared, failed, *activeBefore)
		*activeBefore = routes.ActiveModel()
		*maxAttempts = sel.MaxAttempts
		attempt, capacityFailures = 0, 0
		bo.now()
		modelCallFrom(ctx).Fallback(failed, req.Model)
		d.fellBack(ss, failed, req.Model, fb)
		return nil
	}
	op := func() error {
		if err := context.Cause(ctx); err != nil {
			return backoff.Permanent(err)
		}
		attempt++
		err := d.attempt(ctx, req, stream, chat, ca, yield)
		if err == nil {
			if routes != nil {
				routes.MarkHealthy(req.Model)
			}
			return nil
		}
		var inv *llm.InvalidStreamError
		switch {
		case errors.Is(err, errConsumerGone), errors.As(err, &inv):
			return backoff.Permanent(err)
		case ca.started:
			if context.Cause(ctx) == nil && llm.IsRetryable(err) {
				err = &brokenStreamError{err}
			}
			return backoff.Permanent(err)
		}
		if cause := context.Cause(ctx); cause != nil {
			return backoff.Permanent(cause)
		}
		return d.decide(err, attempt, *maxAttempts, &capacityFailures, routes != nil && chat, bo, fallback)
	}
	notify := func(err error, delay time.Duration) {
		d.retried(ctx, ss, req.Model, attempt, *maxAttempts, delay, err, chat, retryReason(err))
	}
	var timer backoff.Timer
	if d.retry.NewTimer != nil {
		timer = d.retry.NewTimer()
	}
	err := backoff.RetryNotifyWithTimer(op, backoff.WithContext(bo, ctx), notify, timer)
	if err == nil || errors.Is(err, errConsumerGone) {
		return err
	}
	// The invocation's cause (an abort) explains a cancelled request
	// better than the transport's error does.
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	return err
}

// retried records a failed attempt about to be retried after delay: a log
// line, the telemetry event and, for chat calls, a model_retry event whose
// message is gemini-cli's notice.
func (d *Dispatcher) retried(ctx context.Context, ss *streamState, model string, attempt, maxAttempts int, delay time.Duration, err error, chat bool, reason string) {
	d.log.Debug("model call failed; retrying", "model", model, "attempt", attempt, "delay", delay, "err", err)
	modelCallFrom(ctx).Retry(attempt, reason)
	if chat && delay > 0 {
		d.emitCustom(ss, CustomModelRetry, map[string]any{
			"model": model, "attempt": attempt, "maxAttempts": maxAttempts,
			"delayMs": delay.Milliseconds(), "error": err.Error(), "reason": reason,
			"message": retryNotice(attempt, err, delay),
		})
	}
}

// sleep waits delay on the retry timer, or until ctx ends.
func (d *Dispatcher) sleep(ctx context.Context, delay time.Duration) error {
	var timer backoff.Timer = &realTimer{}
	if d.retry.NewTimer != nil {
		timer = d.retry.NewTimer()
	}
	timer.Start(delay)
	defer timer.Stop()
	select {
	case <-timer.C():
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// decide classifies a failed attempt as gemini-cli's retryWithBackoff does
// and sets the next delay; it returns the error to retry on, or a
// permanent one to give up with.
func (d *Dispatcher) decide(err error, attempt, maxAttempts int, capacityFailures *int, canFallBack bool, bo *quotaBackOff, fallback func(error) error) error {
	cerr := llm.Classify(err)
	var (
		terminal  *llm.TerminalQuotaError
		notFound  *llm.ModelNotFoundError
		retryable *llm.RetryableQuotaError
		validate  *llm.ValidationRequiredError
	)
	switch {
	case errors.As(cerr, &terminal), errors.As(cerr, &notFound):
		silent, delay := false, time.Duration(0)
		if terminal != nil && terminal.IsCapacity() {
			if !canFallBack {
				// Unattended: capacity comes back; keep trying.
				silent, delay = true, terminal.RetryDelay
			} else if *capacityFailures++; *capacityFailures < silentCapacityAttempts {
				silent, delay = true, terminal.RetryDelay
				if delay == 0 {
					delay = firstCapacityDelay
					if *capacityFailures > 1 {
						delay = secondCapacityDelay
					}
				}
			}
		}
		if !silent {
			if ferr := fallback(cerr); ferr != nil {
				return ferr
			}
			return cerr
		}
		retryable = &llm.RetryableQuotaError{Message: terminal.Message, RetryDelay: delay, Err: terminal}
		if delay > 0 {
			bo.current = delay
		}
	case errors.As(cerr, &validate):
		// Verification needs a human and a browser; no driver offers that.
		return backoff.Permanent(cerr)
	case errors.As(cerr, &retryable):
	}
	status, _ := llm.HTTPStatus(err)
	if retryable != nil || status >= 500 && status < 600 {
		if attempt >= maxAttempts {
			if ferr := fallback(cerr); ferr != nil {
				return ferr
			}
			return cerr
		}
		if retryable != nil && retryable.RetryDelay > 0 {
			bo.server(retryable.RetryDelay)
		} else {
			bo.exponential()
		}
		return cerr
	}
	if attempt >= maxAttempts || !llm.IsRetryable(err) {
		return backoff.Permanent(cerr)
	}
	bo.exponential()
	return cerr
}

// attempt makes one call on req.Model with a copy of the request, yielding
// its responses and recording in ca what reached ADK. A chat call's
// complete response is checked before ADK sees it: an invalid one is an
// *llm.InvalidStreamError.
func (d *Dispatcher) attempt(ctx context.Context, req *model.LLMRequest, stream, chat bool, ca *callAttempt, yield func(*model.LLMResponse) bool) error {
	target, err := d.resolver.Resolve(ctx, req.Model)
	if err != nil {
		return backoff.Permanent(err)
	}
	if d.limiter != nil {
		// The fleet's limits: wait for a slot and the minute's budget,
		// held until this attempt's response ends.
		release, err := d.limiter.Acquire(ctx, routing.NormalizeModelID(req.Model))
		if err != nil {
			if cause := context.Cause(ctx); cause != nil {
				return backoff.Permanent(cause)
			}
			return backoff.Permanent(fmt.Errorf("fleet limit of %s: %w", req.Model, err))
		}
		defer release()
	}
	// Each attempt gets its own copy: a backend or a transport that
	// touches the request must not change what the next attempt sends.
	contents, cfg := cloneRequest(req.Contents, req.Config)
	afterTools := chat && answersCalls(contents)
	if chat && ca.invalid != nil {
		contents = applyRetryNudge(contents, ca.invalid.Type)
	}
	start := time.Now()
	var responses iter.Seq2[*model.LLMResponse, error]
	if stream {
		responses = llm.Aggregate(target.Backend.GenerateContentStream(ctx, target.Model, contents, cfg))
	} else {
		responses = func(yield func(*model.LLMResponse, error) bool) {
			resp, err := target.Backend.GenerateContent(ctx, target.Model, contents, cfg)
			if err != nil {
				yield(nil, err)
				return
			}
			out := llm.ToLLMResponse(resp)
			out.TurnComplete = true
			yield(out, nil)
		}
	}
	for resp, err := range responses {
		if chat && errors.Is(err, llm.ErrEmptyResponse) {
			// No chunk at all: gemini-cli judges it like a stream that
			// ended without a finish reason.
			resp, err = &model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel}, TurnComplete: true}, nil
		}
		if err != nil {
			return err
		}
		if !resp.Partial {
			if chat {
				if inv := llm.CheckStream(resp, afterTools); inv != nil {
					d.emitUsage(ctx, target.String(), resp.UsageMetadata, time.Since(start))
					return inv
				}
			}
			if resp.CustomMetadata == nil {
				resp.CustomMetadata = map[string]any{}
			}
			resp.CustomMetadata[metaModel] = target.String()
			resp.CustomMetadata[metaDurationMs] = time.Since(start).Milliseconds()
		} else if chat && !ca.shown && hasAnswerText(resp) {
			ca.shown = true
		}
		ca.started = true
		if !yield(resp) {
			return errConsumerGone
		}
	}
	return nil
}

// answersCalls reports whether the request's last turn answers function
// calls: gemini-cli's isOriginalFunctionResponse.
func answersCalls(contents []*genai.Content) bool {
	if len(contents) == 0 || contents[len(contents)-1] == nil {
		return false
	}
	for _, p := range contents[len(contents)-1].Parts {
		if p != nil && p.FunctionResponse != nil {
			return true
		}
	}
	return false
}

// hasAnswerText reports whether a partial response carries answer text,
// not thoughts.
func hasAnswerText(resp *model.LLMResponse) bool {
	if resp.Content == nil {
		return false
	}
	for _, p := range resp.Content.Parts {
		if p != nil && !p.Thought && p.Text != "" {
			return true
		}
	}
	return false
}

// emitUsage reports the tokens of a model call ADK never sees (an invalid
// stream that is retried or fails the turn), so the run's statistics count
// it as gemini-cli's do.
func (d *Dispatcher) emitUsage(ctx context.Context, model string, md *genai.GenerateContentResponseUsageMetadata, took time.Duration) {
	ss := streamStateFrom(ctx)
	if ss == nil {
		return
	}
	ss.session.emit(ss.stream, usageEvent(model, md, took.Milliseconds()))
}

// announce emits session_update{model} when a chat call goes to another
// model than the stream last reported.
func (d *Dispatcher) announce(ss *streamState, name string) {
	if ss == nil {
		return
	}
	ref, err := llm.ParseModel(name)
	if err != nil {
		return
	}
	shown := ref.String()
	ss.mu.Lock()
	changed := ss.model != shown
	ss.model = shown
	ss.mu.Unlock()
	if changed {
		ss.session.emit(ss.stream, Event{Type: EventSessionUpdate, SessionUpdate: &SessionUpdate{Model: shown}})
	}
}

// fellBack makes a fallback visible: a custom event naming both models and
// the reason, then session_update with the new model.
func (d *Dispatcher) fellBack(ss *streamState, failed, now string, fb routing.Fallback) {
	msg := fmt.Sprintf("Model %s failed (%s); switched to fallback model %s", failed, fb.Kind, now)
	if fb.Intent != routing.IntentRetryAlways {
		msg = fmt.Sprintf("Model %s failed (%s); retrying with %s", failed, fb.Kind, now)
	}
	d.log.Info("model fallback", "failed", failed, "model", now, "reason", string(fb.Kind), "intent", string(fb.Intent))
	d.emitCustom(ss, CustomModelFallback, map[string]any{
		"failedModel": failed, "model": now, "reason": string(fb.Kind), "intent": string(fb.Intent), "message": msg,
	})
	d.announce(ss, now)
}

func (d *Dispatcher) emitCustom(ss *streamState, kind string, data map[string]any) {
	if ss == nil {
		return
	}
	ss.session.emit(ss.stream, Event{Type: EventCustom, Custom: &Custom{Kind: kind, Data: data}})
}

// cloneRequest copies the contents list and cfg, so that an attempt cannot
// change the next one's request by changing the list (setting, appending or
// reordering contents) or the configuration. The contents themselves are
// shared: they are the session's history, handed to every request, and a
// backend does not modify them (llm.Backend's contract; a retry nudge
// copies the content it extends).
func cloneRequest(contents []*genai.Content, cfg *genai.GenerateContentConfig) ([]*genai.Content, *genai.GenerateContentConfig) {
	out := slices.Clone(contents)
	if cfg == nil {
		return out, nil
	}
	cc := *cfg
	cc.Tools = append([]*genai.Tool(nil), cfg.Tools...)
	if cfg.HTTPOptions != nil {
		h := *cfg.HTTPOptions
		h.Headers = h.Headers.Clone()
		cc.HTTPOptions = &h
	}
	return out, &cc
}

var _ model.LLM = (*Dispatcher)(nil)

// invocationID is the id of the ADK invocation a chat call belongs to: ADK
// calls a model.LLM with the invocation's context. "" outside one.
func invocationID(ctx context.Context) string {
	if ic, ok := ctx.(interface{ InvocationID() string }); ok {
		return ic.InvocationID()
	}
	return ""
}

type modelCallKey struct{}

// withModelCall carries a model call's telemetry to the retry loop's
// callbacks.
func withModelCall(ctx context.Context, mc *telemetry.ModelCall) context.Context {
	return context.WithValue(ctx, modelCallKey{}, mc)
}

// modelCallFrom returns the model call's telemetry; nil (a no-op) without.
func modelCallFrom(ctx context.Context) *telemetry.ModelCall {
	mc, _ := ctx.Value(modelCallKey{}).(*telemetry.ModelCall)
	return mc
}

// retryReason is a short category of a failed attempt, for a metric
// attribute (never the error's text).
func retryReason(err error) string {
	cerr := llm.Classify(err)
	var (
		retryable *llm.RetryableQuotaError
		terminal  *llm.TerminalQuotaError
	)
	switch {
	case errors.As(cerr, &retryable), errors.As(cerr, &terminal):
		return "rate_limit"
	}
	if status, ok := llm.HTTPStatus(err); ok && status >= 500 {
		return "server_error"
	}
	return "network"
}
