package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"

	"github.com/agentry-dev/agentry/hooks"
	"github.com/agentry-dev/agentry/plugins/compress"
	"github.com/agentry-dev/agentry/plugins/guard"
	"github.com/agentry-dev/agentry/plugins/hookbridge"
	"github.com/agentry-dev/agentry/plugins/loopguard"
	"github.com/agentry-dev/agentry/processors"
	"github.com/agentry-dev/agentry/processors/conversation"
	"github.com/agentry-dev/agentry/routing"
	"github.com/agentry-dev/agentry/runtime/llm"
	"github.com/agentry-dev/agentry/telemetry"
	"github.com/agentry-dev/agentry/tools"
)

// ModelResolver maps model names to backends; *llm.Resolver implements it.
type ModelResolver interface {
	Resolve(ctx context.Context, name string) (llm.Target, error)
}

// Config configures a Session. New fills the defaults.
type Config struct {
	// AppName, AgentName and UserID name the ADK app, agent and user;
	// defaults "agentry", "agentry" and "user".
	AppName, AgentName, UserID string
	// SessionID is the session id; default a new UUID.
	SessionID string
	// Workspace is the primary workspace directory, reported in initialize.
	Workspace string
	// Model is the configured model name (see llm.ParseModel).
	Model string
	// Resolver maps model names to backends. Required.
	Resolver ModelResolver
	// Routing selects the model of every call, handles fallbacks and owns
	// the configured model; nil calls Model directly (with retries, without
	// fallback). Put its processor last in Chain.
	Routing *routing.Service
	// Retry tunes the model-call retry loop; the zero value is gemini-cli's.
	Retry RetryConfig
	// Instruction is the system prompt.
	Instruction string
	// Chain is the request-processor chain; nil runs none.
	Chain *processors.Chain
	// Tools are offered to the model through the scheduler.
	Tools []tools.Tool
	// ToolSource, when set, adds tools that may change during the session
	// (the MCP servers'): each model request declares its current ones
	// after Tools.
	ToolSource ToolSource
	// Policy decides tool approval; default: the default approval mode.
	Policy *Policy
	// Approver asks a human when the policy says Ask; nil denies such calls.
	Approver Approver
	// SessionService stores the conversation; default in-memory.
	SessionService session.Service
	// Compression, when set, summarises the older history before a model
	// call once the last prompt nears the context window (gemini-cli's chat
	// compression). It runs before Chain.
	Compression *CompressionConfig
	// Transcript, when set, records the conversation in gemini-cli's
	// ConversationRecord shape.
	Transcript *TranscriptConfig
	// ReloadMemory, when set, reads the context files again for the
	// session's later requests (Session.ReloadMemory); FromSettings sets
	// it.
	ReloadMemory func() error
	// Telemetry, when set, records spans and metrics of runs, model calls
	// and tool calls. The session does not shut it down: it may serve
	// several sessions.
	Telemetry *telemetry.Telemetry
	// Hooks, when set, runs command hooks at gemini-cli's hook points
	// (after the processor chain and loop detection).
	Hooks *hooks.Runner
	// SessionSource is SessionStart's source: "startup" (the default) or
	// "resume" for a stored session continued.
	SessionSource string
	// LoopDetection, when set, runs gemini-cli's loop detection after the
	// session's guard: a first loop in a prompt gets a recovery turn, a
	// second ends the stream with a LOOP_DETECTED warning.
	LoopDetection *LoopConfig
	// PromptContext, when set, supplies context that goes into the
	// history with each prompt, ahead of it (the IDE's editor context).
	PromptContext PromptContext
	// Plugins run after the processor chain, the session's own guard and
	// loop detection: hooks, telemetry.
	Plugins []*plugin.Plugin
	// MaxTurns bounds the model calls of one stream; 0 or less is unlimited.
	MaxTurns int
	// TempDir is the project's temporary directory: shell output too long
	// for the model is saved whole under
	// <TempDir>/tool-outputs/session-<SessionID>. "" means a private
	// directory in the system's temporary directory.
	TempDir string
	// TruncateThreshold is the length, in characters, beyond which a shell
	// command's output (or an opted-in tool's, see tools.Truncatable) is
	// cut to its first 20 % and last 80 % of the threshold for the model,
	// as gemini-cli's truncateToolOutputThreshold does; 0 means 40,000, a
	// negative value turns truncation off.
	TruncateThreshold int
	// Now and NewID make time and ids deterministic in tests.
	Now   func() time.Time
	NewID func() string
	// Logger receives the session's diagnostics; default slog.Default().
	Logger *slog.Logger
	// OnClose functions run when the session closes.
	OnClose []func() error

	// Prompts, when set, is where the session's MCP prompts come from
	// (Session.Prompts and GetPrompt, for the slash commands).
	Prompts PromptSource

	// Recorder is Transcript's recorder when the caller opened it (for
	// masking's persist hook); the caller closes it (see OnClose).
	Recorder *Recorder
}

// New builds a session: an ADK LLM agent whose model is the dispatcher and
// whose tools are scheduled, run by an ADK runner whose first plugin is the
// processor chain.
func New(ctx context.Context, cfg Config) (*Session, error) {
	if cfg.Resolver == nil {
		return nil, errors.New("runtime: a model resolver is required")
	}
	if cfg.Routing != nil && cfg.Model == "" {
		cfg.Model = cfg.Routing.Model()
	}
	if _, err := llm.ParseModel(cfg.Model); err != nil {
		return nil, err
	}
	sc := sessionConfig{
		appName: or(cfg.AppName, "agentry"), agentName: or(cfg.AgentName, "agentry"),
		userID: or(cfg.UserID, "user"), sessionID: cfg.SessionID,
		workspace: cfg.Workspace, maxTurns: cfg.MaxTurns, resolver: cfg.Resolver,
		sessionSource: or(cfg.SessionSource, "startup"),
		now:           cfg.Now, newID: cfg.NewID, closers: cfg.OnClose,
		reloadMemory: cfg.ReloadMemory, prompts: cfg.Prompts,
	}
	if sc.now == nil {
		sc.now = defaultNow
	}
	if sc.newID == nil {
		sc.newID = defaultID
	}
	if sc.sessionID == "" {
		sc.sessionID = sc.newID()
	}
	policy := cfg.Policy
	if policy == nil {
		var err error
		if policy, err = NewPolicy("default", nil); err != nil {
			return nil, err
		}
	}
	if err := policy.AddToolRules(cfg.Tools); err != nil {
		return nil, fmt.Errorf("runtime: policy rules of the tools: %w", err)
	}
	sc.policy = policy
	sc.approver = cfg.Approver
	dispatch := NewDispatcherWith(DispatcherConfig{
		Resolver: cfg.Resolver, Model: cfg.Model, Routing: cfg.Routing, Retry: cfg.Retry, Logger: cfg.Logger,
		Telemetry: cfg.Telemetry,
	})
	dispatch.held = newHeldContents()
	if cfg.Routing != nil {
		// The classifiers' utility calls go through this session's
		// dispatcher, which only exists once the routing service does.
		cfg.Routing.UseUtility(dispatch.Call)
	}
	limit := newOutputLimit(cfg.TruncateThreshold, cfg.TempDir, sc.sessionID, cfg.Logger)
	var hb *hookbridge.Bridge
	if cfg.Hooks != nil {
		hb = hookbridge.New(cfg.Hooks, cfg.Telemetry)
	}
	adkTools := make([]tool.Tool, 0, len(cfg.Tools))
	seen := make(map[string]bool, len(cfg.Tools))
	// The exclusion reads the tool table, built below from wrap.
	excl := newToolExclusion(policy, cfg.Approver != nil, func() *toolSnap { return sc.tools.current() })
	wrap := func(t tools.Tool) *scheduledTool {
		return &scheduledTool{t: t, policy: policy, approver: cfg.Approver, limit: limit, tel: cfg.Telemetry, hooks: hb, excl: excl}
	}
	for _, t := range cfg.Tools {
		if seen[t.Name()] {
			return nil, fmt.Errorf("runtime: two tools are named %q", t.Name())
		}
		seen[t.Name()] = true
		adkTools = append(adkTools, wrap(t))
	}
	toolLog := cfg.Logger
	if toolLog == nil {
		toolLog = slog.Default()
	}
	sc.tools = newToolTable(cfg.Tools, cfg.ToolSource, wrap, policy.AddToolRules, toolLog)
	instruction := cfg.Instruction
	svc := cfg.SessionService
	if svc == nil {
		svc = session.InMemoryService()
	}
	// ADK builds only the current turn; the conversation processor, first
	// in the chain, gives every request the whole history from its cache.
	procs := []processors.RequestProcessor{conversation.New(sessionEvents(svc))}
	if cfg.ToolSource != nil {
		// Before the chain's own processors, which may withhold tools.
		procs = append(procs, toolsProcessor{sc.tools})
	}
	if cfg.Chain != nil {
		procs = append(procs, cfg.Chain.Processors()...)
	}
	chain := processors.NewChain(procs...)
	ag, err := llmagent.New(llmagent.Config{
		Name:        sc.agentName,
		Description: "agentry, a coding agent working in the user's workspace",
		Model:       dispatch,
		// A provider, not Instruction: ADK would treat {braces} in the
		// prompt as state placeholders.
		InstructionProvider: func(agent.ReadonlyContext) (string, error) { return instruction, nil },
		Tools:               adkTools,
		IncludeContents:     llmagent.IncludeContentsNone,
		// Last, after every plugin's callback.
		BeforeModelCallbacks: []llmagent.BeforeModelCallback{dispatch.held.callback},
	})
	if err != nil {
		return nil, fmt.Errorf("runtime: create agent: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	// activeModel is the model of the last call, or the configured one.
	routes := cfg.Routing
	activeModel := func() string {
		if routes != nil {
			if m := routes.ActiveModel(); m != "" {
				return m
			}
		}
		return dispatch.Model()
	}
	// The session's own plugins by name; PluginOrder orders them.
	own := map[string]*plugin.Plugin{}
	var compressor *compress.Compressor
	if cc := cfg.Compression; cc != nil {
		env := compress.Env{
			App: sc.appName, User: sc.userID, Agent: sc.agentName, TempDir: cfg.TempDir,
			Call: dispatch.Call, Model: activeModel, Now: sc.now, NewID: sc.newID, Logger: log,
		}
		env.Settle = chain.Settle
		var err error
		if compressor, err = compress.New(*cc, env); err != nil {
			return nil, fmt.Errorf("runtime: %w", err)
		}
		p, err := compressor.Plugin()
		if err != nil {
			return nil, fmt.Errorf("runtime: compression: %w", err)
		}
		own[p.Name()] = p
	}
	cp, err := chain.Plugin()
	if err != nil {
		return nil, fmt.Errorf("runtime: processor chain: %w", err)
	}
	own[cp.Name()] = cp
	sg, err := guard.New(guard.Config{Active: excl.activeNames,
		Unregistered: func(ctx context.Context, id, name string, args map[string]any) {
			unregisteredCall(ctx, id)
			if t := sc.tools.current().byName[name]; t != nil && excl.excluded(name) {
				excludedCall(ctx, policy, cfg.Approver != nil, t, args)
			}
		}})
	if err != nil {
		return nil, fmt.Errorf("runtime: session guard: %w", err)
	}
	own[sg.Name()] = sg
	if cfg.LoopDetection != nil {
		p, err := loopguard.New(*cfg.LoopDetection, dispatch.Call, activeModel, log)
		if err != nil {
			return nil, fmt.Errorf("runtime: loop detection: %w", err)
		}
		own[p.Name()] = p
	}
	if hb != nil {
		p, err := hb.Plugin()
		if err != nil {
			return nil, fmt.Errorf("runtime: hooks: %w", err)
		}
		own[p.Name()] = p
	}
	plugins := orderPlugins(own, cfg.Plugins)
	r, err := runner.New(runner.Config{
		AppName: sc.appName, Agent: ag, SessionService: newADKView(svc),
		PluginConfig: runner.PluginConfig{Plugins: plugins}, AutoCreateSession: true,
	})
	if err != nil {
		return nil, fmt.Errorf("runtime: create runner: %w", err)
	}
	var rec transcriptRecorder
	switch {
	case cfg.Recorder != nil:
		rec = cfg.Recorder
	case cfg.Transcript != nil:
		opened, err := OpenRecorder(*cfg.Transcript, sc.sessionID, sc.now, sc.newID, activeModel, log)
		if err != nil {
			return nil, &StorageError{What: "transcript", Path: cfg.Transcript.Path, Hint: HomeHint, Err: err}
		}
		sc.closers = append(sc.closers, opened.Close)
		rec = opened
	}
	return &Session{
		cfg: sc, runner: r, svc: svc, dispatch: dispatch, log: log, rec: rec, compressor: compressor, chain: chain,
		tel: cfg.Telemetry, hooks: hb, promptCtx: cfg.PromptContext,
		streams: NewStreamQueue(ctx, sc.now),
	}, nil
}

// PluginOrder is the one order of a session's own plugins, by name: chat
// compression (it rewrites the history the chain then sees), the request
// processor chain (the first point where the request is whole), the
// session guard, loop detection, then command hooks (which see the
// processed request). A driver's plugins (Config.Plugins) come after them.
func PluginOrder() []string {
	return []string{compress.Name, processors.PluginName, guard.Name, loopguard.Name, hookbridge.Name}
}

// orderPlugins returns the session's own plugins in PluginOrder, leaving
// out those it lacks, then extra.
func orderPlugins(own map[string]*plugin.Plugin, extra []*plugin.Plugin) []*plugin.Plugin {
	out := make([]*plugin.Plugin, 0, len(own)+len(extra))
	for _, name := range PluginOrder() {
		if p := own[name]; p != nil {
			out = append(out, p)
		}
	}
	return append(out, extra...)
}

// unregisteredCall records that call id of the stream in ctx named a tool
// the session lacks, for its tool_response's error type.
func unregisteredCall(ctx context.Context, id string) {
	if ss := streamStateFrom(ctx); ss != nil {
		ss.setCall(id, &callInfo{errType: tools.ErrToolNotRegistered})
	}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
