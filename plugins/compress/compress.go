// Package compress is gemini-cli's chat compression as an ADK plugin, run
// before the request processors: when the last prompt used more than the
// threshold of the model's context window, the older history is summarised
// (package compression), the stored session is rewritten in one
// transaction and the request's contents are rebuilt from it, and the
// stream emits a chat_compressed custom event.
package compress

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/compression"
	"github.com/agentry-dev/agentry/masking"
	"github.com/agentry-dev/agentry/routing"
	"github.com/agentry-dev/agentry/runtime/handle"
	"github.com/agentry-dev/agentry/runtime/llm"
)

// Name is the plugin's name.
const Name = "agentry-compression"

// CustomChatCompressed is the custom event kind emitted when the history
// was summarised. Its data is gemini-cli's ChatCompressionInfo:
// originalTokenCount, newTokenCount and compressionStatus (its numeric
// CompressionStatus, 1 for COMPRESSED), plus status, the status's name.
const CustomChatCompressed = "chat_compressed"

// PreCompressTrigger says why a compression was attempted: gemini-cli's
// PreCompressTrigger values.
const (
	PreCompressAuto   = "auto"
	PreCompressManual = "manual"
)

// Store is what compression needs of the session store: the live session
// a running invocation appends to, and replacing its whole history in one
// transaction. agentry's SQL store (package sessions) is one.
type Store interface {
	Live(ctx context.Context, appName, userID, sessionID string) (session.Session, error)
	ReplaceEvents(ctx context.Context, appName, userID, sessionID string, events []*session.Event, delta map[string]any) error
}

// Config is a session's chat compression settings.
type Config struct {
	// Store holds the session; compression rewrites its history there.
	// Required.
	Store Store
	// Threshold is the fraction of the model's context window the last
	// prompt may use before compressing; 0 is compression.DefaultThreshold.
	Threshold float64
	// UtilityModel summarises; "" is gemini-cli's compression model for a
	// Gemini chat model and the chat model itself for any other backend,
	// which may have no Gemini credentials.
	UtilityModel string
	// TruncateThreshold is the tool-output truncation threshold in
	// characters; 0 is 40,000.
	TruncateThreshold int
	// PreCompress is the PreCompress hook point: it runs, with trigger
	// PreCompressAuto or PreCompressManual, before every compression
	// attempt. Its error is logged; it cannot stop the compression, as in
	// gemini-cli.
	PreCompress func(ctx context.Context, trigger string) error
	// TokenLimit returns a model's context window; nil is
	// compression.TokenLimit.
	TokenLimit func(model string) int
}

// Env is what the compressor reaches of the session it serves.
type Env struct {
	// App, User and Agent name the session's ADK app and user, and the
	// author of the acknowledgement event.
	App, User, Agent string
	// TempDir is the project's temporary directory, where truncated tool
	// outputs are saved. Required.
	TempDir string
	// Call makes the summary and verification calls.
	Call routing.UtilityCaller
	// Model returns the chat model in use.
	Model func() string
	// Now and NewID stamp the summary events.
	Now   func() time.Time
	NewID func() string
	// Settle waits for the processor chain's background work on a
	// session (masking persisting its previous pass), so that a rewrite
	// never races it; nil without a chain.
	Settle func(ctx context.Context, sessionID string) error
	// Logger receives diagnostics; nil is slog.Default().
	Logger *slog.Logger
}

// ErrNoStore and ErrNoTempDir report a compressor without what it
// rewrites and where it saves truncated outputs.
var (
	ErrNoStore   = errors.New("compress: compression needs the session store it rewrites")
	ErrNoTempDir = errors.New("compress: compression needs the temporary directory for the tool outputs it truncates")
)

// New returns the compressor of one session.
func New(cfg Config, env Env) (*Compressor, error) {
	switch {
	case cfg.Store == nil:
		return nil, ErrNoStore
	case env.TempDir == "":
		return nil, ErrNoTempDir
	}
	if env.Logger == nil {
		env.Logger = slog.Default()
	}
	return &Compressor{cfg: cfg, env: env}, nil
}

// Compressor is gemini-cli's tryCompressChat for one session. It runs
// before the request processors on every model call: if the last prompt
// used more than the threshold of the window, it summarises the older
// history, rewrites the stored session and rebuilds the request's contents
// from it, so the request, the next turn and a resumed session all see the
// compressed history.
type Compressor struct {
	cfg Config
	env Env

	mu sync.Mutex
	// lastPrompt is gemini-cli's lastPromptTokenCount: the prompt tokens
	// the model reported for the last call, or the estimate of the
	// history when there is no call yet (a resumed session) or the history
	// was just rewritten. known says it has been set.
	lastPrompt int
	known      bool
	// failed is gemini-cli's hasFailedCompressionAttempt: after a summary
	// that did not shrink the history, automatic attempts only truncate.
	failed bool
}

// Plugin returns the ADK plugin that runs the compressor before the
// processor chain and records the prompt size of every response.
func (c *Compressor) Plugin() (*plugin.Plugin, error) {
	return plugin.New(plugin.Config{
		Name:                Name,
		BeforeModelCallback: c.before,
		AfterModelCallback:  c.after,
	})
}

// after records the prompt size the model reported.
func (c *Compressor) after(_ agent.Context, resp *model.LLMResponse, err error) (*model.LLMResponse, error) {
	if err == nil && resp != nil && resp.UsageMetadata != nil && resp.UsageMetadata.PromptTokenCount > 0 {
		c.mu.Lock()
		c.lastPrompt, c.known = int(resp.UsageMetadata.PromptTokenCount), true
		c.mu.Unlock()
	}
	return nil, nil
}

// before compresses when due. A failed compression never fails the model
// call: the session and the request are left as they were.
func (c *Compressor) before(ctx agent.Context, req *model.LLMRequest) (*model.LLMResponse, error) {
	// Most calls are far from the window: decide that before touching the
	// session.
	c.mu.Lock()
	below := c.known && float64(c.lastPrompt) < c.threshold()*float64(c.limit(c.env.Model()))
	c.mu.Unlock()
	if below {
		return nil, nil
	}
	if c.env.Settle != nil {
		if err := c.env.Settle(ctx, ctx.SessionID()); err != nil {
			return nil, err
		}
	}
	sess, err := c.cfg.Store.Live(ctx, c.env.App, c.env.User, ctx.SessionID())
	if err != nil {
		c.env.Logger.WarnContext(ctx, "compression: cannot load the session", "session", ctx.SessionID(), "err", err)
		return nil, nil
	}
	if _, err := c.run(ctx, ctx.SessionID(), ctx.InvocationID(), eventsOf(sess), false); err != nil {
		c.env.Logger.WarnContext(ctx, "compression failed; the history is unchanged", "session", ctx.SessionID(), "err", err)
	}
	return nil, nil
}

func eventsOf(sess session.Session) []*session.Event {
	events := sess.Events()
	evs := make([]*session.Event, 0, events.Len())
	for ev := range events.All() {
		evs = append(evs, ev)
	}
	return evs
}

// Compress is gemini-cli's /compress: a compression of the session's
// history now, whatever its size, through the same path as the automatic
// one (the PreCompress hook with trigger manual, the summary and its
// verification, the rewrite of the stored session). The session must be
// idle: the caller holds it. It returns what happened — StatusNoop when
// there was nothing to compress, a failed status when the summary did not
// shrink the history — or an error when the session could not be read,
// the summariser failed or the rewrite could not be stored; the history
// is then unchanged. A forced attempt that fails does not stop later
// automatic ones from summarising. It emits no event: the caller reports.
func (c *Compressor) Compress(ctx context.Context, sessionID string) (compression.Info, error) {
	if c.env.Settle != nil {
		if err := c.env.Settle(ctx, sessionID); err != nil {
			return compression.Info{}, err
		}
	}
	sess, err := c.cfg.Store.Live(ctx, c.env.App, c.env.User, sessionID)
	if err != nil {
		return compression.Info{}, fmt.Errorf("load the session: %w", err)
	}
	return c.run(ctx, sessionID, c.env.NewID(), eventsOf(sess), true)
}

// run is one compression attempt over the session's events. The request
// being built gets the rewritten history from the conversation processor,
// which runs after this plugin and finds the session rewritten. An error
// leaves the session as it was.
func (c *Compressor) run(ctx context.Context, sessionID, invocationID string, evs []*session.Event, force bool) (compression.Info, error) {
	hist, pending := splitPending(evs)
	if len(hist) == 0 {
		return compression.Info{Status: compression.StatusNoop}, nil
	}
	chatModel := c.env.Model()
	limitOf := c.limit
	threshold := c.threshold()
	c.mu.Lock()
	if !c.known {
		// A session that has not called the model in this process
		// (resumed) starts from an estimate, as gemini-cli's GeminiChat does.
		c.lastPrompt, c.known = masking.EstimateTokens(partsOf(hist)), true
	}
	lastPrompt, failed := c.lastPrompt, c.failed
	c.mu.Unlock()
	// The threshold is checked here as well as in Compress, so that the
	// hook runs only when a compression is attempted, and the common turn
	// costs no more than this comparison.
	if !force && float64(lastPrompt) < threshold*float64(limitOf(chatModel)) {
		return compression.Info{OriginalTokens: lastPrompt, NewTokens: lastPrompt, Status: compression.StatusNoop}, nil
	}
	trigger := PreCompressAuto
	if force {
		trigger = PreCompressManual
	}
	if c.cfg.PreCompress != nil {
		if err := c.cfg.PreCompress(ctx, trigger); err != nil {
			c.env.Logger.WarnContext(ctx, "PreCompress hook failed", "err", err)
		}
	}
	contents := make([]*genai.Content, len(hist))
	for i, ev := range hist {
		contents[i] = ev.Content
	}
	newHist, info, err := compression.Compress(ctx, compression.Config{
		Model:             chatModel,
		UtilityModel:      c.utilityModel(chatModel),
		Threshold:         threshold,
		Caller:            c.env.Call,
		TempDir:           c.env.TempDir,
		TokenLimit:        limitOf,
		TruncateThreshold: c.cfg.TruncateThreshold,
		Logger:            c.env.Logger,
	}, contents, lastPrompt, force, failed)
	if err != nil {
		// A summariser that fails would likely fail again: like an
		// inflated summary, it leaves later automatic attempts to
		// truncation alone.
		c.setFailed(force)
		return info, fmt.Errorf("summarise the history: %w", err)
	}
	switch info.Status {
	case compression.StatusFailedInflatedTokenCount:
		c.setFailed(force)
		return info, nil
	case compression.StatusCompressed, compression.StatusContentTruncated:
	default:
		return info, nil
	}
	rewritten := c.rewrite(ctx, invocationID, hist, pending, evs, newHist, info)
	if err := c.cfg.Store.ReplaceEvents(ctx, c.env.App, c.env.User, sessionID, rewritten, nil); err != nil {
		return compression.Info{OriginalTokens: lastPrompt, NewTokens: lastPrompt, Status: compression.StatusNoop},
			fmt.Errorf("store the compressed history: %w", err)
	}
	c.mu.Lock()
	c.lastPrompt = info.NewTokens
	c.mu.Unlock()
	c.env.Logger.InfoContext(ctx, "chat history compressed", "session", sessionID, "status", string(info.Status),
		"tokens_before", info.OriginalTokens, "tokens_after", info.NewTokens)
	if info.Status == compression.StatusCompressed {
		if s := handle.From(ctx); s != nil {
			s.Custom(CustomChatCompressed, map[string]any{
				"originalTokenCount": info.OriginalTokens,
				"newTokenCount":      info.NewTokens,
				"compressionStatus":  info.Status.Code(),
				"status":             string(info.Status),
			})
		}
	}
	return info, nil
}

// threshold is the configured fraction of the window.
func (c *Compressor) threshold() float64 {
	if c.cfg.Threshold == 0 {
		return compression.DefaultThreshold
	}
	return c.cfg.Threshold
}

// limit is model's context window.
func (c *Compressor) limit(model string) int {
	if c.cfg.TokenLimit != nil {
		return c.cfg.TokenLimit(model)
	}
	return compression.TokenLimit(model)
}

// Reset forgets the prompt size and failures of a history that a rewind
// replaced.
func (c *Compressor) Reset() {
	c.mu.Lock()
	c.known, c.failed = false, false
	c.mu.Unlock()
}

func (c *Compressor) setFailed(force bool) {
	if force {
		return
	}
	c.mu.Lock()
	c.failed = true
	c.mu.Unlock()
}

// utilityModel picks the summarising model for chatModel.
func (c *Compressor) utilityModel(chatModel string) string {
	if c.cfg.UtilityModel != "" {
		return c.cfg.UtilityModel
	}
	if ref, err := llm.ParseModel(chatModel); err == nil && ref.Scheme != llm.SchemeGemini {
		return chatModel
	}
	return compression.DefaultUtilityModel(chatModel)
}

// rewrite returns the session's new event list. For a summary: the
// summary (a user event) and its acknowledgement (a model event), then the
// session's events from the first kept one on, the kept history's contents
// as Compress returned them (old function responses may be truncated). For
// a truncation: every event, with the history's new contents. Events are
// new values; the session's are not changed.
func (c *Compressor) rewrite(ctx context.Context, invocationID string, hist, pending, evs []*session.Event, newHist []*genai.Content, info compression.Info) []*session.Event {
	replaced := make(map[*session.Event]*genai.Content, len(hist))
	var out []*session.Event
	from := 0 // index in evs of the first event kept
	if info.Status == compression.StatusCompressed {
		kept := len(newHist) - 2
		first := len(hist) - kept
		for j := range kept {
			replaced[hist[first+j]] = newHist[2+j]
		}
		switch {
		case kept > 0:
			from = indexOfEvent(evs, hist[first])
		case len(pending) > 0:
			from = indexOfEvent(evs, pending[0])
		default:
			from = len(evs)
		}
		now := c.env.Now()
		summary := &session.Event{
			ID: c.env.NewID(), InvocationID: invocationID, Author: "user", Timestamp: now,
			LLMResponse: model.LLMResponse{
				Content: newHist[0],
				CustomMetadata: map[string]any{"agentry:compression": map[string]any{
					"originalTokenCount": info.OriginalTokens, "newTokenCount": info.NewTokens,
				}},
			},
		}
		ack := &session.Event{
			ID: c.env.NewID(), InvocationID: invocationID, Author: c.env.Agent, Timestamp: now,
			LLMResponse: model.LLMResponse{Content: newHist[1]},
		}
		out = append(out, summary, ack)
	} else {
		for i, ev := range hist {
			replaced[ev] = newHist[i]
		}
	}
	for _, ev := range evs[from:] {
		if nc, ok := replaced[ev]; ok {
			cp := *ev
			cp.LLMResponse.Content = nc
			ev = &cp
		}
		out = append(out, ev)
	}
	return out
}

func indexOfEvent(evs []*session.Event, ev *session.Event) int {
	for i, e := range evs {
		if e == ev {
			return i
		}
	}
	return len(evs)
}

// splitPending returns the session's events that carry history content,
// without the trailing user events — the prompt or the function responses
// about to be sent, which gemini-cli keeps outside the history it
// compresses — and those trailing events.
func splitPending(evs []*session.Event) (hist, pending []*session.Event) {
	for _, ev := range evs {
		if hasHistoryContent(ev) {
			hist = append(hist, ev)
		}
	}
	n := len(hist)
	for n > 0 && hist[n-1].Content.Role == genai.RoleUser {
		n--
	}
	return hist[:n], hist[n:]
}

// hasHistoryContent reports whether ADK puts ev's content in a request.
func hasHistoryContent(ev *session.Event) bool {
	return ev != nil && !ev.Partial && ev.Content != nil && ev.Content.Role != "" && len(ev.Content.Parts) > 0
}

func partsOf(evs []*session.Event) []*genai.Part {
	var parts []*genai.Part
	for _, ev := range evs {
		parts = append(parts, ev.Content.Parts...)
	}
	return parts
}
