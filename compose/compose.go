package compose

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/session"

	"github.com/agentry-dev/agentry/agents"
	"github.com/agentry-dev/agentry/compose/routes"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/hooks"
	"github.com/agentry-dev/agentry/ide/idecontext"
	"github.com/agentry-dev/agentry/ide/idediff"
	"github.com/agentry-dev/agentry/internal/envredact"
	"github.com/agentry-dev/agentry/internal/version"
	"github.com/agentry-dev/agentry/loopdetect"
	"github.com/agentry-dev/agentry/masking"
	"github.com/agentry-dev/agentry/mcpauth"
	"github.com/agentry-dev/agentry/mcptools"
	"github.com/agentry-dev/agentry/plugins/lease"
	"github.com/agentry-dev/agentry/processors"
	"github.com/agentry-dev/agentry/routing"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/runtime/llm"
	"github.com/agentry-dev/agentry/sessions"
	"github.com/agentry-dev/agentry/subagents"
	"github.com/agentry-dev/agentry/telemetry"
	"github.com/agentry-dev/agentry/tools"
	"github.com/agentry-dev/agentry/transcript"
)

// Options are what a driver adds to the settings when it builds a session.
type Options struct {
	// SessionID names the session; default a new UUID.
	SessionID string
	// Resolver, when set, is shared with other sessions (a parent agent's,
	// a batch's); otherwise one is built from the settings.
	Resolver runtime.ModelResolver
	// Availability, when set, is the model health state shared with other
	// sessions (a parent agent's, a batch's; see [OpenAvailability]);
	// otherwise the session has its own, or with cluster.enabled the
	// fleet's.
	Availability *routing.Availability
	// FallbackHandler asks a human about fallbacks whose policy says
	// "prompt"; nil (batch runs) makes only silent fallbacks happen.
	FallbackHandler routing.FallbackHandler
	// Retry tunes the model-call retry loop; tests inject its timer.
	Retry runtime.RetryConfig
	// Record, when set, receives every model response in the replay format.
	Record *llm.RecordSink
	// Approver asks a human about calls that need one; nil denies them.
	Approver runtime.Approver
	// IDEDiffs, when set with an Approver, shows write_file and replace
	// confirmations as diffs in the user's IDE, racing the Approver
	// (package ide/idediff); the session and its subagents ask through
	// it. Without an Approver (a batch run) no diff opens, as in
	// gemini-cli. Leave it nil for a session served over A2A (its
	// Approver a protocol.SharedApprover or the server's): the server
	// does not withdraw a call it parked when its approver's context
	// ends, so an IDE answer would leave the task waiting; wrap the
	// terminal's approver given to protocol.WithLocalApprover in
	// idediff.New instead, whose answer the server takes as the
	// terminal's.
	IDEDiffs idediff.Differ
	// SessionService stores the conversation; default in-memory.
	SessionService session.Service
	// Plugins run after the processor chain.
	Plugins []*plugin.Plugin
	// Lease, when set, is asked before every model and tool call of the
	// session and of its subagents; when it fails the turn stops
	// (package plugins/lease). A cluster replica passes its lease of
	// the context.
	Lease func() error
	// Telemetry, when set, is shared by the session and not shut down with
	// it; nil makes the session its own from the telemetry settings.
	Telemetry *telemetry.Telemetry
	// Agents are the subagents the session may hand tasks to, as
	// LoadAgents returns them (a driver that builds many sessions loads
	// them once); nil makes the session load them itself.
	Agents []agents.Definition

	// RemoteAgents, when set, makes the invoke_agent tool of the session
	// (and of the others it builds) reach remote A2A agents, through
	// agents/remote's Invokers; without it remote definitions are left out
	// with a warning.
	RemoteAgents subagents.NewRemoteInvoker

	// Policies are the policy rules of the settings, as LoadPolicies
	// returns them (a driver loads them once and shows their warnings);
	// nil makes the session load them itself and log the warnings.
	Policies *Policies

	// child, when set, makes the session a subagent's child session.
	child *childSpec
	// PreCompress is the PreCompress hook point, run before every
	// compression attempt (see runtime.CompressionConfig).
	PreCompress func(ctx context.Context, trigger string) error
	// Sources add context to every request.
	Sources []processors.ContextSource
	// IDEContext, when set, is the IDE companion's connection: each prompt of the
	// session goes with the editor's context as gemini-cli sends it (see
	// ide/idecontext). Subagents' child sessions do not get it, as in
	// gemini-cli. nil means no IDE, at no cost (an interface holding a nil
	// pointer is not nil: leave the field unset instead).
	IDEContext idecontext.IDE
	// MCPAuthPrompt shows the authorization URL of an MCP server that
	// needs OAuth (package mcpauth) to someone who can open it; nil
	// (headless runs, servers) makes a server without a usable token fail
	// with the error telling the user to run `agentry mcp auth NAME`.
	MCPAuthPrompt mcpauth.Prompt
	// HTTPClient is used for model APIs when set.
	HTTPClient *http.Client
	// Now and NewID make time and ids deterministic in tests.
	Now   func() time.Time
	NewID func() string
	// Logger receives diagnostics; default slog.Default().
	Logger *slog.Logger
}

// NewResolver returns the model resolver for s: credentials from the
// environment, endpoints from the settings.
func NewResolver(s *config.Settings, record *llm.RecordSink, hc *http.Client) *llm.Resolver {
	c := s.Credentials
	geminiURL := s.Gemini.BaseURL
	if geminiURL == "" {
		geminiURL = c.GeminiBaseURL
	}
	openaiURL := s.OpenAI.BaseURL
	if openaiURL == "" {
		openaiURL = c.OpenAIBaseURL
	}
	return llm.NewResolver(llm.ResolverConfig{
		Gemini: llm.GeminiConfig{
			APIKey: c.GeminiAPIKey, VertexAI: c.UseVertexAI, Project: c.GoogleProject, Location: c.GoogleLocation,
			BaseURL: geminiURL, UserAgent: version.UserAgent(),
		},
		OpenAI:     llm.OpenAIConfig{APIKey: c.OpenAIAPIKey, BaseURL: openaiURL},
		Record:     record,
		HTTPClient: hc,
	})
}

// FromSettings builds a session from settings: the workspace and its tools,
// the approval policy, the context files, the processor chain (content,
// then the masking and routing processors as they exist) and the model.
// What it opens is closed with the session, or at once when a later step
// fails.
func FromSettings(ctx context.Context, s *config.Settings, opts Options) (_ *runtime.Session, err error) {
	var cl closers
	defer func() {
		if err != nil {
			_ = cl.closeAll()
		}
	}()
	if opts.Lease != nil {
		p, err := lease.New(opts.Lease)
		if err != nil {
			return nil, err
		}
		// Subagents inherit the plugins, this one with them.
		opts.Plugins, opts.Lease = append(slices.Clip(opts.Plugins), p), nil
	}
	ws, set, err := workspaceTools(s, &cl)
	if err != nil {
		return nil, err
	}
	policy, err := sessionPolicy(s, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", runtime.ErrSetup, err)
	}
	if opts.Approver != nil && opts.IDEDiffs != nil {
		opts.Approver = idediff.New(opts.Approver, opts.IDEDiffs, idediff.WithMode(policy.Mode), idediff.WithLogger(logger(opts)))
	}
	memoryConfig, content, err := contextContent(s, ws, opts)
	if err != nil {
		return nil, err
	}
	avail := opts.Availability
	if avail == nil && s.Cluster.Enabled {
		// A session on its own (agentry run) in a fleet: its model health
		// is the fleet's.
		var closeAvail func() error
		if avail, closeAvail, err = OpenAvailability(ctx, s, opts.Logger); err != nil {
			return nil, err
		}
		cl.add(closeAvail)
	}
	routes, err := NewRouting(s, avail, opts.FallbackHandler, opts.Logger)
	if err != nil {
		return nil, err
	}
	st, err := openStored(ctx, s, opts, ws, &cl)
	if err != nil {
		return nil, err
	}
	hookRunner, err := newHookRunner(s, st.id, ws.Root(), st.transcript, opts.Logger)
	if err != nil {
		return nil, err
	}
	masker, err := masking.New(masking.Config{SpillDir: masking.SessionDir(s.TempDir(), st.id), Logger: opts.Logger})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", runtime.ErrSetup, err)
	}
	compress, err := compression(s, st.svc, preCompressHook(opts, hookRunner))
	if err != nil {
		return nil, err
	}
	resolver := opts.Resolver
	if resolver == nil {
		resolver = NewResolver(s, opts.Record, opts.HTTPClient)
	}
	tel, err := sessionTelemetry(ctx, s, opts, &cl)
	if err != nil {
		return nil, err
	}
	sessionTools, mcpSource, instruction, prompts, err := toolsFor(ctx, s, opts, set, parentOf{
		sessionID: st.id, svc: st.svc, routes: routes, resolver: resolver, tel: tel, policy: policy,
	}, &cl)
	if err != nil {
		return nil, err
	}
	rec, transcriptCfg, err := openTranscript(ws, st, routes, opts, &cl)
	if err != nil {
		return nil, err
	}
	// The one explicit order of the chain: content, then masking, then
	// routing.
	chain := processors.NewChain(content, runtime.MaskingProcessor(masker, st.svc, rec), routing.NewProcessor(routes))
	var prompt runtime.PromptContext
	if opts.IDEContext != nil && opts.child == nil {
		prompt = idecontext.New(opts.IDEContext)
	}
	sess, err := runtime.New(ctx, runtime.Config{
		PromptContext: prompt,
		SessionID:     st.id,
		TempDir:       s.TempDir(),
		Workspace:     ws.Root(),
		Model:         s.Model.Name,
		Resolver:      resolver,
		Routing:       routes,
		Retry:         opts.Retry,
		Instruction:   instruction,
		Chain:         chain,
		Compression:   compress,
		LoopDetection: loopDetection(s),
		Hooks:         hookRunner,
		SessionSource: st.source(),
		Telemetry:     tel,
		Transcript:    &transcriptCfg,
		Recorder:      rec,
		ReloadMemory: func() error {
			m, err := processors.LoadMemory(memoryConfig)
			if err != nil {
				return fmt.Errorf("reload memory: %w", err)
			}
			content.SetMemory(m)
			return nil
		},
		Tools:          sessionTools,
		ToolSource:     mcpSource,
		Prompts:        prompts,
		Policy:         policy,
		Approver:       opts.Approver,
		SessionService: st.svc,
		Plugins:        opts.Plugins,
		MaxTurns:       s.Model.MaxSessionTurns,
		Now:            opts.Now,
		NewID:          opts.NewID,
		Logger:         opts.Logger,
		OnClose:        []func() error{cl.handOver()},
	})
	if err != nil {
		return nil, err
	}
	return sess, nil
}

// closers is what a session being assembled must close, in the order it
// was opened. On a failed build FromSettings closes it all, newest first;
// a built session takes it over (handOver) and closes it with itself.
type closers struct {
	fns []func() error
}

// add registers fn to be closed.
func (c *closers) add(fn func() error) { c.fns = append(c.fns, fn) }

// closeAll calls every function, newest first, and forgets them.
func (c *closers) closeAll() error {
	var errs []error
	for i := len(c.fns) - 1; i >= 0; i-- {
		errs = append(errs, c.fns[i]())
	}
	c.fns = nil
	return errors.Join(errs...)
}

// handOver returns the function that closes what is registered so far,
// newest first, for the session to call when it closes.
func (c *closers) handOver() func() error {
	owned := &closers{fns: c.fns}
	c.fns = nil
	return owned.closeAll
}

// workspaceTools opens the workspace of s and its built-in tools, which
// spill output and keep background logs in the project's temporary
// directory.
func workspaceTools(s *config.Settings, cl *closers) (*tools.Workspace, *tools.Set, error) {
	ws, err := tools.NewWorkspace(s.Workspace, s.Context.IncludeDirectories...)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: workspace: %w", runtime.ErrSetup, err)
	}
	if err := os.MkdirAll(s.TempDir(), 0o700); err != nil {
		return nil, nil, &runtime.StorageError{What: "temporary directory", Path: s.TempDir(), Hint: runtime.HomeHint, Err: err}
	}
	set, err := tools.NewSet(tools.Config{
		Workspace:    ws,
		ShellTimeout: time.Duration(s.Tools.Shell.TimeoutSeconds) * time.Second,
		TempDir:      s.TempDir(),
		Exclude:      s.Tools.Exclude,
		Env:          childEnv(s, false),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%w: tools: %w", runtime.ErrSetup, err)
	}
	cl.add(set.Close)
	return ws, set, nil
}

// contextContent loads the context files and returns where they are
// found (for reloads) and the content processor that adds them, the
// workspace listing and the driver's sources to every request.
func contextContent(s *config.Settings, ws *tools.Workspace, opts Options) (processors.MemoryConfig, *processors.Content, error) {
	memoryConfig := MemoryConfig(s, ws.Roots(), opts.Logger)
	memory, err := processors.LoadMemory(memoryConfig)
	if err != nil {
		return memoryConfig, nil, fmt.Errorf("%w: %w", runtime.ErrSetup, err)
	}
	maxItems := s.Context.MaxDirectoryItems
	if maxItems == 0 {
		maxItems = -1 // 0 in settings turns the listing off
	}
	content := processors.NewContent(processors.ContentConfig{
		Roots: ws.Roots(), TempDir: s.TempDir(), Now: opts.Now, MaxItems: maxItems, Memory: memory, Sources: opts.Sources,
		Ignore: func(root string) processors.IgnoreFunc { return ws.Ignorer(root).Ignored },
	})
	return memoryConfig, content, nil
}

// storedSession is the stored session a session continues or starts.
type storedSession struct {
	id  string
	svc session.Service
	// transcript is the transcript file's path, kind "main" or
	// "subagent".
	transcript, kind string
	resumed          bool
}

// source is SessionStart's source for the session.
func (st storedSession) source() string {
	if st.resumed {
		return "resume"
	}
	return "startup"
}

// openStored finds or creates the stored session of opts (a new id when
// none is given) with its transcript path. A session created here that
// nothing of a conversation reaches — its run failed first: no
// credentials, a bad model — is deleted again when it closes, so that it
// is never listed or resumed as the latest.
func openStored(ctx context.Context, s *config.Settings, opts Options, ws *tools.Workspace, cl *closers) (storedSession, error) {
	// The session id names the spill directories, so it is fixed here.
	st := storedSession{id: opts.SessionID, svc: opts.SessionService, kind: "main"}
	if st.id == "" {
		newID := opts.NewID
		if newID == nil {
			newID = uuid.NewString
		}
		st.id = newID()
	}
	if st.svc == nil {
		st.svc = session.InMemoryService()
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	newTranscript, parent := runtime.TranscriptPath(s.TempDir(), now(), st.id), ""
	if opts.child != nil {
		parent = opts.child.parent
		newTranscript, st.kind = runtime.SubagentTranscriptPath(s.TempDir(), parent, st.id), "subagent"
	}
	var err error
	st.transcript, st.resumed, err = runtime.EnsureSession(ctx, st.svc, st.id, ws.Root(), parent, newTranscript)
	if err != nil {
		if _, ok := st.svc.(runtime.RewritableStore); ok && s.Session.Store != config.SessionStorePostgres && runtime.StorageFailure(err) {
			// The store opened, but the disk under it filled up (or
			// failed) before the session could be written.
			return st, &runtime.StorageError{What: "session store", Path: s.SessionDBPath(), Hint: runtime.SessionStoreHint, Err: err}
		}
		return st, err
	}
	if !st.resumed {
		cl.add(func() error { return runtime.DropIfEmpty(context.WithoutCancel(ctx), st.svc, st.id, st.transcript) })
	}
	return st, nil
}

// preCompressHook is the PreCompress hook point: the driver's, or the
// settings' command hooks for it.
func preCompressHook(opts Options, hookRunner *hooks.Runner) func(ctx context.Context, trigger string) error {
	if opts.PreCompress != nil || hookRunner == nil || !hookRunner.Has(hooks.PreCompress) {
		return opts.PreCompress
	}
	return func(ctx context.Context, trigger string) error {
		_, err := hookRunner.Run(ctx, hooks.PreCompress, trigger, map[string]any{"trigger": trigger})
		return err
	}
}

// compression returns the chat compression of a session over svc.
// Masking and compression write the session back, which only a
// rewritable store supports; the in-memory service gets neither.
func compression(s *config.Settings, svc session.Service, preCompress func(ctx context.Context, trigger string) error) (*runtime.CompressionConfig, error) {
	store, rewritable := svc.(runtime.RewritableStore)
	if !rewritable {
		return nil, nil
	}
	if m := s.Model.CompressionModel; m != "" {
		if _, err := llm.ParseModel(m); err != nil {
			return nil, fmt.Errorf("%w: settings model.compressionModel: %w", runtime.ErrSetup, err)
		}
	}
	return &runtime.CompressionConfig{
		Store: store, Threshold: s.Model.CompressionThreshold, UtilityModel: s.Model.CompressionModel,
		PreCompress: preCompress,
	}, nil
}

// loopDetection is the loop detection the settings ask for, nil when off.
func loopDetection(s *config.Settings) *runtime.LoopConfig {
	if s.Model.DisableLoopDetection {
		return nil
	}
	ld := s.Model.LoopDetection
	return &runtime.LoopConfig{Detector: loopdetect.Config{
		ToolCallThreshold:  ld.ToolCallThreshold,
		ContentThreshold:   ld.ContentThreshold,
		LLMCheckAfterTurns: ld.LLMCheckAfterTurns,
		DisableLLMCheck:    ld.LLMCheckAfterTurns == 0,
	}}
}

// sessionPolicy returns a session's approval policy: a subagent's child
// shares its parent's engine (in the parent's current mode); any other
// session gets an engine of its own over the settings' policies.
func sessionPolicy(s *config.Settings, opts Options) (*runtime.Policy, error) {
	if c := opts.child; c != nil && c.policy != nil {
		return c.policy.ForSubagent(c.def.Name), nil
	}
	p := opts.Policies
	if p == nil {
		p = LoadPolicies(s, opts.Approver != nil)
		for _, w := range p.Warnings {
			logger(opts).Warn(w)
		}
	}
	return p.Policy(s, runtime.ApprovalMode(s.General.DefaultApprovalMode))
}

// parentOf is what a session shares with the child sessions of its
// subagents.
type parentOf struct {
	sessionID string
	svc       session.Service
	routes    *routing.Service
	resolver  runtime.ModelResolver
	tel       *telemetry.Telemetry
	// policy is the parent's approval policy: a child runs in the mode
	// the parent is in when the child starts, which may no longer be the
	// settings' (Session.SetApprovalMode).
	policy *runtime.Policy
}

// toolsFor returns the tools, the MCP servers' tools, the system prompt
// and the MCP prompts of a session. A main session gets the built-in tools
// and invoke_agent (when subagents are defined), with agentry's prompt, and
// its MCP servers' tools as a source that changes when a server's list
// does; their prompts are its slash commands. A child gets its
// definition's subset of the parent's tools (the parent's MCP tools as
// they are when it starts, over the parent's connections) and
// complete_task, never another agent tool; its prompt is its definition's.
func toolsFor(ctx context.Context, s *config.Settings, opts Options, set *tools.Set, p parentOf, cl *closers) ([]tools.Tool, runtime.ToolSource, string, runtime.PromptSource, error) {
	if c := opts.child; c != nil {
		all := set.Tools()
		if c.mcp != nil {
			all = append(all, c.mcp.Current()...)
		}
		sessionTools, missing := c.tools(all)
		if len(missing) > 0 {
			logger(opts).Warn("subagent tools not found; the agent runs without them", "agent", c.def.Name,
				"err", &agents.LoadError{File: c.def.File, Field: "tools", Msg: "no tool named " + strings.Join(missing, ", ")})
		}
		return sessionTools, nil, c.def.SystemPrompt + subagents.Rules, nil, nil
	}
	sessionTools := set.Tools()
	taken := []string{subagents.InvokeAgentToolName}
	for _, t := range sessionTools {
		taken = append(taken, t.Name())
	}
	source, closeMCP, prompts, err := mcpToolset(ctx, s, taken, opts.Logger, opts.MCPAuthPrompt)
	if err != nil {
		return nil, nil, "", nil, err
	}
	cl.add(closeMCP)
	st, closeAgents := subagentsFor(s, opts, childSessions(s, opts, p, source))
	if st != nil {
		sessionTools = append(sessionTools, st)
		cl.add(closeAgents)
	}
	return sessionTools, source, runtime.SystemPrompt, prompts, nil
}

// childSessions returns the factory of a session's subagent child
// sessions: FromSettings again, over the parent's store, availability,
// telemetry and resolver, in the parent's current approval mode, with the
// definition's model, turn limit and sampling.
func childSessions(s *config.Settings, opts Options, p parentOf, mcpTools runtime.ToolSource) subagents.Factory {
	return func(ctx context.Context, def agents.Definition, id string, extra []tools.Tool, approver runtime.Approver) (subagents.Child, error) {
		cs := *s
		if p.policy != nil {
			cs.General.DefaultApprovalMode = string(p.policy.Mode())
		}
		if def.Model != "" && def.Model != "inherit" {
			cs.Model.Name = def.Model
		}
		cs.Model.MaxSessionTurns = def.MaxTurns
		if cs.Model.MaxSessionTurns <= 0 {
			cs.Model.MaxSessionTurns = subagents.DefaultMaxTurns
		}
		sampling, err := subagents.Sampling(def)
		if err != nil {
			return nil, err
		}
		child, err := FromSettings(ctx, &cs, Options{
			SessionID: id, SessionService: p.svc, Availability: p.routes.Availability(), Telemetry: p.tel,
			Resolver: p.resolver, Approver: approver, Logger: opts.Logger, Now: opts.Now, NewID: opts.NewID,
			Retry: opts.Retry, HTTPClient: opts.HTTPClient, Plugins: append([]*plugin.Plugin{sampling}, opts.Plugins...),
			child: &childSpec{def: def, extra: extra, mcp: mcpTools, parent: p.sessionID, policy: p.policy},
		})
		if err != nil {
			return nil, err
		}
		return child, nil
	}
}

// openTranscript opens the session's transcript. It is opened before the
// chain, so that masking's persist hook can update it.
func openTranscript(ws *tools.Workspace, st storedSession, routes *routing.Service, opts Options, cl *closers) (*runtime.Recorder, runtime.TranscriptConfig, error) {
	cfg := runtime.TranscriptConfig{
		Path: st.transcript, ProjectHash: transcript.ProjectHash(ws.Root()), Directories: ws.Roots(),
		Kind: st.kind,
	}
	now, newID := opts.Now, opts.NewID
	if now == nil {
		now = time.Now
	}
	if newID == nil {
		newID = uuid.NewString
	}
	// The model of the last call, or the configured one, as the session
	// reports it.
	activeModel := func() string {
		if m := routes.ActiveModel(); m != "" {
			return m
		}
		return routes.Model()
	}
	rec, err := runtime.OpenRecorder(cfg, st.id, now, newID, activeModel, logger(opts))
	if err != nil {
		return nil, cfg, &runtime.StorageError{What: "transcript", Path: st.transcript, Hint: runtime.HomeHint, Err: err}
	}
	cl.add(rec.Close)
	return rec, cfg, nil
}

// logger is opts' logger or slog.Default().
func logger(opts Options) *slog.Logger {
	if opts.Logger != nil {
		return opts.Logger
	}
	return slog.Default()
}

// NewRouting returns the model routing service of one session built from
// the settings (see routes.New); avail may be shared with other sessions,
// nil gives the session its own. Settings that cannot be used are a setup
// error (runtime.ErrSetup) naming the setting.
func NewRouting(s *config.Settings, avail *routing.Availability, handler routing.FallbackHandler, log *slog.Logger) (*routing.Service, error) {
	svc, err := routes.New(s, avail, handler, log)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", runtime.ErrSetup, err)
	}
	return svc, nil
}

// MemoryConfig is where the settings s find context files: the agentry
// home and gemini-cli's ~/.gemini, then roots (the workspace's
// directories), under the settings' context file names and the
// workspace's trust.
func MemoryConfig(s *config.Settings, roots []string, log *slog.Logger) processors.MemoryConfig {
	return processors.MemoryConfig{
		GlobalDirs: []string{s.Home, filepath.Join(filepath.Dir(s.Home), ".gemini")},
		Roots:      roots,
		FileNames:  s.Context.FileName,
		Trusted:    s.Trusted,
		Logger:     log,
	}
}

// sessionTelemetry returns the telemetry of a session: the shared one of
// opts, or one made from the settings (nil when off), whose flush and
// close it adds to cl.
func sessionTelemetry(ctx context.Context, s *config.Settings, opts Options, cl *closers) (*telemetry.Telemetry, error) {
	if opts.Telemetry != nil || !s.Telemetry.Enabled {
		return opts.Telemetry, nil
	}
	tel, closeTel, err := OpenTelemetry(ctx, s, opts.Logger)
	if err != nil {
		return nil, err
	}
	cl.add(closeTel)
	return tel, nil
}

// OpenTelemetry starts the telemetry the settings ask for (nil when off)
// and returns the function that flushes and closes it, bounded by
// telemetry.DefaultFlushTimeout so that an unreachable collector costs
// the exit at most that and one warning on log (default slog.Default()).
// Drivers that run many sessions share one through Options.Telemetry. The
// exporter outlives ctx's cancellation: it must last until the final
// flush.
func OpenTelemetry(ctx context.Context, s *config.Settings, log *slog.Logger) (*telemetry.Telemetry, func() error, error) {
	if !s.Telemetry.Enabled {
		return nil, func() error { return nil }, nil
	}
	if log == nil {
		log = slog.Default()
	}
	cfg := telemetry.Config{Endpoint: s.Telemetry.OTLPEndpoint, File: s.Telemetry.Outfile, Logger: log}
	switch {
	case s.Telemetry.Outfile != "":
		cfg.Exporter = telemetry.ExporterFile
	case s.Telemetry.OTLPProtocol == "http":
		cfg.Exporter = telemetry.ExporterOTLPHTTP
	default:
		cfg.Exporter = telemetry.ExporterOTLPGRPC
	}
	tel, err := telemetry.New(context.WithoutCancel(ctx), cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: settings telemetry: %w", runtime.ErrSetup, err)
	}
	return tel, func() error { return tel.Shutdown(context.Background()) }, nil
}

// newHookRunner returns the command hooks of the settings, or nil when
// there are none or they are switched off. Hooks run commands the
// settings name, so they run only in a trusted workspace, as gemini-cli
// loads settings hooks only in trusted folders.
func newHookRunner(s *config.Settings, sessionID, projectDir, transcriptPath string, log *slog.Logger) (*hooks.Runner, error) {
	if len(s.Hooks) == 0 || !s.HooksConfig.Enabled {
		return nil, nil
	}
	if !s.Trusted {
		if log == nil {
			log = slog.Default()
		}
		log.Warn("hooks are not run in an untrusted workspace; trust it (--trust-workspace or security.trustedFolders) to run them", "workspace", projectDir)
		return nil, nil
	}
	st := hooks.Settings{Hooks: map[hooks.Event][]hooks.Definition{}, HooksConfig: hooks.HooksConfig{
		Enabled: &s.HooksConfig.Enabled, Disabled: s.HooksConfig.Disabled, Notifications: &s.HooksConfig.Notifications,
	}}
	for event, defs := range s.Hooks {
		out := make([]hooks.Definition, len(defs))
		for i, d := range defs {
			out[i] = hooks.Definition{Matcher: d.Matcher, Sequential: d.Sequential}
			for _, c := range d.Hooks {
				out[i].Hooks = append(out[i].Hooks, hooks.Command{
					Type: c.Type, Command: c.Command, Name: c.Name, Description: c.Description, Timeout: c.Timeout, Env: c.Env,
				})
			}
		}
		st.Hooks[hooks.Event(event)] = out
	}
	r, err := hooks.New(hooks.Config{
		Settings: st, ProjectDir: projectDir, SessionID: sessionID, TranscriptPath: transcriptPath, Logger: log,
		Env: childEnv(s, false),
	})
	if err != nil {
		return nil, fmt.Errorf("%w: settings %w", runtime.ErrSetup, err)
	}
	return r, nil
}

// childEnv is the environment of the processes a session starts (shell
// commands, hooks, MCP stdio servers): agentry's own, less what
// security.environmentVariableRedaction withholds. enabled forces the
// name and value rules on.
func childEnv(s *config.Settings, enabled bool) []string {
	r := s.Security.EnvironmentVariableRedaction
	c := envredact.Config{Enabled: r.Enabled || enabled, Allowed: r.Allowed, Blocked: r.Blocked}
	return c.Environ(os.Environ())
}

// connectedServers are the MCP servers of the settings that are
// connected at all: with mcp.allowed set only those it names, and none
// that mcp.excluded names, as gemini-cli's isBlockedBySettings (the
// policy rules of both settings still apply to the tools of the others).
func connectedServers(s *config.Settings, log *slog.Logger) map[string]config.MCPServerSettings {
	out := make(map[string]config.MCPServerSettings, len(s.MCPServers))
	for name, sc := range s.MCPServers {
		if len(s.MCP.Allowed) > 0 && !slices.Contains(s.MCP.Allowed, name) || slices.Contains(s.MCP.Excluded, name) {
			log.Info("MCP server not connected: mcp.allowed does not name it or mcp.excluded does", "server", name)
			continue
		}
		out[name] = sc
	}
	return out
}

// mcpToolset connects to the MCP servers of the settings and returns
// their tools as a source that changes when a server's list does, with the
// function that closes the servers (their processes are gone when it
// returns) and their prompts, the session's slash commands (mcpPrompts).
// MCP servers run commands and reach services the settings name, so they
// are connected only in a trusted workspace, as gemini-cli does. A server
// that fails is reported and left out; a tool named like one of taken (the
// built-in tools) or that tools.exclude names is left out. Servers whose
// tools are cached in ~/.agentry/cache/mcp start on first use (mcp.lazy, a
// server's lazy).
func mcpToolset(ctx context.Context, s *config.Settings, taken []string, log *slog.Logger, prompt mcpauth.Prompt) (runtime.ToolSource, func() error, runtime.PromptSource, error) {
	none := func() error { return nil }
	if len(s.MCPServers) == 0 {
		return nil, none, nil, nil
	}
	if log == nil {
		log = slog.Default()
	}
	if !s.Trusted {
		log.Warn("MCP servers are not connected in an untrusted workspace; trust it (--trust-workspace or security.trustedFolders) to use them", "workspace", s.Workspace)
		return nil, none, nil, nil
	}
	servers := connectedServers(s, log)
	if len(servers) == 0 {
		return nil, none, nil, nil
	}
	cacheDir := ""
	if s.Home != "" {
		cacheDir = filepath.Join(s.Home, "cache", "mcp")
	}
	// As in gemini-cli, stdio servers get a redacted environment even
	// with redaction off; what a server's own env names is still passed.
	m, err := mcptools.New(mcptools.Config{
		Servers: servers, EnvFunc: func() []string { return childEnv(s, true) }, ExpandEnv: os.Environ(), Logger: log,
		ClientName: "agentry", ClientVersion: version.Version(),
		CacheDir: cacheDir, Lazy: s.MCP.Lazy, Taken: append(slices.Clone(taken), s.Tools.Exclude...),
		OAuth: MCPOAuth(s, prompt, log),
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: settings mcpServers: %w", runtime.ErrSetup, err)
	}
	_, errs := m.Tools(ctx)
	for _, err := range errs {
		if are := (*mcpauth.AuthRequiredError)(nil); errors.As(err, &are) {
			log.Warn(are.Error() + "; its tools are left out")
			continue
		}
		log.Warn("MCP server unavailable; its tools are left out", "err", err)
	}
	return m, m.Close, newMCPPrompts(ctx, m, log), nil
}

// mcpTool is implemented by MCP tools: their server and tool names.
type mcpTool interface {
	MCP() (server, tool string, trust bool)
}

// childSpec is what makes a session a subagent's child.
type childSpec struct {
	def   agents.Definition
	extra []tools.Tool
	mcp   runtime.ToolSource
	// parent is the parent session's id.
	parent string
	// policy is the parent's approval policy, whose engine the child
	// shares (nil: the child has its own).
	policy *runtime.Policy
}

// tools returns the child's tools: those of all its definition allows,
// then the extra ones (complete_task); and the plain names in the
// definition's list that match none of all (a typo, or a tool excluded by
// the settings).
func (c *childSpec) tools(all []tools.Tool) (out []tools.Tool, missing []string) {
	have := map[string]bool{}
	for _, t := range all {
		have[t.Name()] = true
	}
	for _, name := range c.def.Tools {
		if !strings.ContainsAny(name, "*?[") && !strings.HasPrefix(name, "mcp_") && !have[name] {
			missing = append(missing, name)
		}
	}
	for _, t := range all {
		allowed := c.def.AllowsTool(t.Name())
		if m, ok := t.(mcpTool); ok {
			server, tool, _ := m.MCP()
			allowed = c.def.AllowsMCPTool(server, tool, t.Name())
		}
		if allowed {
			out = append(out, t)
		}
	}
	return append(out, c.extra...), missing
}

// LoadAgents returns the subagent definitions a session built from s can
// run — the user's, and a trusted workspace's (see agents.Load) — and
// every problem found: files that do not load, shadowed names, an
// untrusted workspace's definitions, and definitions subagents.CheckAgent rejects
// (left out).
func LoadAgents(s *config.Settings) ([]agents.Definition, []error) {
	defs, errs := agents.Load(agents.LoadConfig{Workspace: s.Workspace, Home: filepath.Dir(s.Home), Trusted: s.Trusted})
	usable := make([]agents.Definition, 0, len(defs))
	for _, d := range defs {
		if err := subagents.CheckAgent(d); err != nil {
			errs = append(errs, err)
			continue
		}
		usable = append(usable, d)
	}
	return usable, errs
}

// subagentsFor returns the invoke_agent tool of a session, or nil when no
// subagent is defined. Definitions come from opts.Agents or, when nil,
// from LoadAgents, whose problems are logged.
func subagentsFor(s *config.Settings, opts Options, newChild subagents.Factory) (tools.Tool, func() error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	defs := opts.Agents
	if defs == nil {
		var errs []error
		defs, errs = LoadAgents(s)
		for _, err := range errs {
			log.Warn("subagent definition left out", "err", err)
		}
	}
	if opts.RemoteAgents == nil {
		defs = slices.DeleteFunc(slices.Clone(defs), func(d agents.Definition) bool {
			if d.Kind == agents.KindRemote {
				log.Warn("remote agent left out: this session was built without a way to reach remote agents (Options.RemoteAgents)", "agent", d.Name)
				return true
			}
			return false
		})
	}
	return subagents.NewTool(subagents.ToolConfig{
		Agents: defs, NewChild: newChild, Remotes: opts.RemoteAgents, Approver: opts.Approver, Logger: log, NewID: opts.NewID,
	})
}

// OpenStore opens the session store the settings name: the SQLite file
// under the agentry home (the default), PostgreSQL, or memory. A process
// opens it once and hands it to every session it builds; close releases
// it.
func OpenStore(ctx context.Context, s *config.Settings, log *slog.Logger) (svc session.Service, close func() error, err error) {
	if log == nil {
		log = slog.Default()
	}
	switch s.Session.Store {
	case config.SessionStoreMemory:
		return session.InMemoryService(), func() error { return nil }, nil
	case config.SessionStorePostgres:
		if s.Session.PostgresDSN == "" {
			return nil, nil, fmt.Errorf("%w: session.store is postgres but session.postgresDsn is empty; set it (or AGENTRY_SESSION_POSTGRESDSN) to a connection string such as postgres://user@127.0.0.1:5432/agentry", runtime.ErrSetup)
		}
		st, err := sessions.OpenPostgres(ctx, s.Session.PostgresDSN, sessions.WithLogger(log))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: session store: %w", runtime.ErrSetup, err)
		}
		return st, st.Close, nil
	default:
		path := s.SessionDBPath()
		st, err := sessions.OpenSQLite(ctx, path, sessions.WithLogger(log))
		if err != nil {
			return nil, nil, &runtime.StorageError{What: "session store", Path: path, Hint: runtime.SessionStoreHint, Err: err}
		}
		return st, st.Close, nil
	}
}
