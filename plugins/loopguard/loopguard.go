// Package loopguard is gemini-cli's loop detection as an ADK plugin: each
// model call of a stream starts a turn of the stream's loopdetect.Detector
// (the LLM check, when due), streamed text feeds its content detector and
// the calls of each complete response its tool-call detector. The first
// detection of a prompt restarts the invocation with gemini-cli's
// recovery message; the second stops the stream with
// loopdetect.ErrLoopDetected.
package loopguard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/loopdetect"
	"github.com/agentry-dev/agentry/runtime/handle"
	"github.com/agentry-dev/agentry/runtime/llm"
)

// Name is the plugin's name.
const Name = "agentry-loop-detection"

// Config tunes loop detection.
type Config struct {
	// Detector tunes the detectors; its zero value is gemini-cli's.
	Detector loopdetect.Config
	// Model answers the LLM check for a chat model that is not Gemini;
	// empty is the chat model itself. For Gemini, gemini-cli's models
	// answer (gemini-3-flash-preview, confirmed by gemini-3-pro-preview).
	Model string
}

// Caller makes one utility model call (the LLM check), with retries and
// without fallback.
type Caller func(ctx context.Context, req *model.LLMRequest) (*model.LLMResponse, error)

// New returns the plugin. call answers the LLM check; chatModel returns
// the chat model in use, which decides the models the check asks; log
// receives its diagnostics (nil: slog.Default()).
func New(cfg Config, call Caller, chatModel func() string, log *slog.Logger) (*plugin.Plugin, error) {
	if log == nil {
		log = slog.Default()
	}
	g := &guard{cfg: cfg, call: call, model: chatModel, log: log}
	g.newState = func() any { return &loopState{det: loopdetect.New(g.cfg.Detector, g.check)} }
	return plugin.New(plugin.Config{
		Name:                Name,
		BeforeRunCallback:   g.beforeRun,
		BeforeModelCallback: g.before,
		AfterModelCallback:  g.after,
	})
}

// recovery is the cause of an invocation stopped on a first loop
// detection: the stream goes on with gemini-cli's feedback message as a
// new user turn.
type recovery struct{ detail string }

func (r *recovery) Error() string { return "potential loop detected: " + r.detail }

// feedback is gemini-cli's recovery message (client.ts _recoverFromLoop).
func (r *recovery) feedback() *genai.Content {
	detail := r.detail
	if detail == "" {
		detail = "Repetitive patterns identified"
	}
	return genai.NewContentFromText("System: Potential loop detected. Details: "+detail+
		". Please take a step back and confirm you're making forward progress. If not, take a step back, analyze your previous actions and rethink how you're approaching the problem. Avoid repeating the same tool calls or responses without new results.",
		genai.RoleUser)
}

// guard runs gemini-cli's loop detection as an ADK plugin: each model
// call starts a turn (the LLM check), streamed text deltas feed the
// content detector and the calls of each complete response the tool-call
// detector. The detector is the stream's, so every prompt starts afresh,
// as gemini-cli resets it per prompt id.
type guard struct {
	cfg   Config
	call  Caller
	model func() string
	log   *slog.Logger
	// newState makes a stream's loopState; made once, so that looking
	// the state up on every streamed chunk allocates nothing.
	newState func() any
}

// loopKey keys a stream's loopState.
type loopKey struct{}

// loopState is one stream's loop detection.
type loopState struct {
	det *loopdetect.Detector
	// partial says the current model call has streamed partial
	// responses, whose text the detector has already seen.
	partial atomic.Bool
	// recovering says the invocation was stopped for a recovery turn,
	// which the detector watches afresh.
	recovering atomic.Bool
}

// state returns the stream's loop detection, made on first use.
func (g *guard) state(s handle.Stream) *loopState {
	return s.Local(loopKey{}, g.newState).(*loopState)
}

// beforeRun releases the detection latch for a recovery turn.
func (g *guard) beforeRun(ctx agent.InvocationContext) (*genai.Content, error) {
	if s := handle.From(ctx); s != nil {
		if st := g.state(s); st.recovering.Swap(false) {
			st.det.ClearDetection()
		}
	}
	return nil, nil
}

// before is gemini-cli's turnStarted: the LLM check, when due.
func (g *guard) before(ctx agent.Context, req *model.LLMRequest) (*model.LLMResponse, error) {
	s := handle.From(ctx)
	if s == nil {
		return nil, nil
	}
	st := g.state(s)
	st.partial.Store(false)
	d, found, err := st.det.TurnStarted(ctx, handle.PromptText(s.Prompt()), req.Contents)
	if err != nil {
		// The check is advisory: gemini-cli logs a failed check (at debug
		// level) and goes on.
		g.log.DebugContext(ctx, "loop detection: the LLM check failed", "err", err)
		return nil, nil
	}
	if found {
		return nil, g.detected(s, st, d)
	}
	return nil, nil
}

// after feeds the detectors. Text comes from the partial responses only,
// so the complete response that repeats them is not counted twice; a call
// made without streaming has no partials, and its text counts once.
func (g *guard) after(ctx agent.Context, resp *model.LLMResponse, _ error) (*model.LLMResponse, error) {
	s := handle.From(ctx)
	if s == nil || resp == nil || resp.Content == nil {
		return nil, nil
	}
	st := g.state(s)
	countText := resp.Partial || !st.partial.Load()
	if resp.Partial {
		st.partial.Store(true)
	}
	for _, p := range resp.Content.Parts {
		if p == nil {
			continue
		}
		var d loopdetect.Detection
		var found bool
		switch {
		case p.FunctionCall != nil && !resp.Partial:
			d, found = st.det.AddToolCall(p.FunctionCall.Name, p.FunctionCall.Args)
		case p.Text != "" && !p.Thought && countText:
			d, found = st.det.AddContent(p.Text)
		}
		if found {
			// The response is dropped, as gemini-cli drops the event
			// that tripped the detector: its calls never run.
			return nil, g.detected(s, st, d)
		}
	}
	return nil, nil
}

// detected acts on a detection: the first of a prompt stops the
// invocation for a recovery turn, a later one stops the stream.
func (g *guard) detected(s handle.Stream, st *loopState, d loopdetect.Detection) error {
	g.log.Debug("loop detected", "kind", string(d.Kind), "count", d.Count, "detail", d.Detail)
	if d.Count > 1 {
		s.Cancel(loopdetect.ErrLoopDetected)
		return loopdetect.ErrLoopDetected
	}
	cause := &recovery{detail: d.Detail}
	st.recovering.Store(true)
	s.Restart(cause, cause.feedback())
	return cause
}

// check is the detector's Checker: one utility call through the
// dispatcher (retries, no fallback), returning the JSON object.
func (g *guard) check(ctx context.Context, alias string, contents []*genai.Content, schema map[string]any) (map[string]any, error) {
	m, ok := g.checkModel(alias)
	if !ok {
		return nil, loopdetect.ErrModelUnavailable
	}
	resp, err := g.call(ctx, &model.LLMRequest{
		Model:    m,
		Contents: contents,
		Config: &genai.GenerateContentConfig{
			SystemInstruction:  genai.NewContentFromText(loopdetect.SystemPrompt, genai.RoleUser),
			ResponseMIMEType:   "application/json",
			ResponseJsonSchema: schema,
		},
	})
	if err != nil {
		if alias == loopdetect.ModelDoubleCheck {
			return nil, fmt.Errorf("%w: %w", loopdetect.ErrModelUnavailable, err)
		}
		return nil, err
	}
	return decodeObject(resp)
}

// checkModel resolves a loop-detection alias for the chat model in use.
// A non-Gemini chat model has no stronger model to confirm with, so the
// double-check is skipped and the first verdict stands.
func (g *guard) checkModel(alias string) (string, bool) {
	chat := g.model()
	if ref, err := llm.ParseModel(chat); err == nil && ref.Scheme != llm.SchemeGemini {
		if alias == loopdetect.ModelDoubleCheck {
			return "", false
		}
		if g.cfg.Model != "" {
			return g.cfg.Model, true
		}
		return chat, true
	}
	if alias == loopdetect.ModelDoubleCheck {
		return "gemini-3-pro-preview", true
	}
	return "gemini-3-flash-preview", true
}

// decodeObject returns the JSON object of a utility response's text.
func decodeObject(resp *model.LLMResponse) (map[string]any, error) {
	if resp == nil || resp.Content == nil {
		return nil, errors.New("empty response")
	}
	var b strings.Builder
	for _, p := range resp.Content.Parts {
		if p != nil && !p.Thought {
			b.WriteString(p.Text)
		}
	}
	text := strings.TrimSpace(b.String())
	text = strings.TrimPrefix(strings.TrimPrefix(text, "```json"), "```")
	text = strings.TrimSpace(strings.TrimSuffix(text, "```"))
	var out map[string]any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return nil, fmt.Errorf("loop check reply is not a JSON object: %w", err)
	}
	return out, nil
}
