package runtime

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/platform"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/hooks"
	"github.com/agentry-dev/agentry/plugins/compress"
	"github.com/agentry-dev/agentry/plugins/guard"
	"github.com/agentry-dev/agentry/plugins/hookbridge"
	"github.com/agentry-dev/agentry/processors"
	"github.com/agentry-dev/agentry/runtime/handle"
	"github.com/agentry-dev/agentry/telemetry"
	"github.com/agentry-dev/agentry/tools"
	"github.com/agentry-dev/agentry/transcript"
)

// Session is the ADK-backed AgentProtocol. It owns one ADK runner and one
// ADK session; streams run one at a time, in Send order, on a goroutine the
// session starts when work arrives and stops when the queue is empty.
type Session struct {
	cfg        sessionConfig
	runner     *runner.Runner
	svc        session.Service
	dispatch   *Dispatcher
	log        *slog.Logger
	rec        transcriptRecorder   // nil without a transcript
	compressor *compress.Compressor // nil without compression
	chain      *processors.Chain    // nil without request processors
	hooks      *hookbridge.Bridge   // nil without hooks
	promptCtx  PromptContext        // nil without one
	tel        *telemetry.Telemetry

	// streams runs the session's streams and keeps its event log: ids,
	// one total order for the log and subscribers, per-stream replay.
	streams *StreamQueue

	mu          sync.Mutex // guards the field below
	initialized bool
}

// stream is one Send's activity.
type stream struct {
	id      string
	content *genai.Content
	display string
	meta    map[string]any
	// ctx and cancel are the stream's, set when it starts running.
	ctx    context.Context
	cancel context.CancelCauseFunc
	// maxTurns, when positive, overrides the session's model-call limit.
	maxTurns int
}

var _ AgentProtocol = (*Session)(nil)

// ID returns the session id.
func (s *Session) ID() string { return s.cfg.sessionID }

// Model returns the configured model name that the next stream starts with.
func (s *Session) Model() string { return s.dispatch.Model() }

// Send implements AgentProtocol. A ctx from WithMaxTurns gives the
// stream its own model-call limit.
func (s *Session) Send(ctx context.Context, p Send) (string, error) {
	if (p.Message == nil) == (p.Update == nil) {
		return "", fmt.Errorf("%w: set exactly one of message and update", ErrInvalidSend)
	}
	if p.Update != nil {
		if p.Update.Model != "" {
			if err := s.dispatch.SetModel(p.Update.Model); err != nil {
				return "", fmt.Errorf("%w: %w", ErrInvalidSend, err)
			}
		}
		return "", nil
	}
	content, err := toGenaiContent(p.Message.Content)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidSend, err)
	}
	st := &stream{
		id:       s.cfg.newID(),
		content:  content,
		display:  p.Message.DisplayContent,
		meta:     p.Meta,
		maxTurns: maxTurnsFrom(ctx),
	}
	// The queue runs the stream after Send returns its id, so none of its
	// events is emitted before.
	err = s.streams.Add(st.id, func(ctx context.Context, cancel context.CancelCauseFunc) {
		st.ctx, st.cancel = ctx, cancel
		s.run(st)
	})
	if err != nil {
		return "", err
	}
	return st.id, nil
}

// Abort implements AgentProtocol.
func (s *Session) Abort(cause error) { s.streams.Abort(cause) }

// Close implements AgentProtocol. It aborts every stream and waits for the
// running one to emit its agent_end.
func (s *Session) Close() error {
	if !s.streams.Close() {
		return nil
	}
	if s.hooks != nil {
		s.hooks.SessionHook(hooks.SessionEnd, "exit", map[string]any{"reason": "exit"}, s.log.Warn)
	}
	var errs []error
	for _, c := range s.cfg.closers {
		if err := c(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ReloadMemory reads the context files (the memory) again: the
// session's later requests carry what they hold now, as after
// gemini-cli's /memory refresh. A session not built from settings has no
// files to read, and nothing happens.
func (s *Session) ReloadMemory() error {
	if s.cfg.reloadMemory == nil {
		return nil
	}
	return s.cfg.reloadMemory()
}

// Events implements AgentProtocol: every event so far, except that the
// text deltas of an ended (and followed or replayed) stream are merged,
// each run of them being one
// event with the run's first delta's id and the run's whole text (see
// AgentProtocol.Events for what makes a run). A long-lived session thus
// keeps an answer's text, not an event per streamed delta.
func (s *Session) Events() []Event { return s.streams.Events() }

// Subscribe follows every stream of the session as one feed, for a
// server that serves the session (see AgentProtocol): fn is called with
// every event emitted from now on, in order, from the emitting goroutine;
// fn must not block for long, and may call Send, Abort and Events but not
// Close. Subscribers are called in the one order of the log. The returned
// function unsubscribes.
func (s *Session) Subscribe(fn func(Event)) (unsubscribe func()) { return s.streams.Subscribe(fn) }

// Stream implements AgentProtocol: called before the stream's agent_end,
// it yields every event of the stream as emitted; called after, it
// replays the stream as Events has it, each run of text deltas merged
// into one event carrying the run's text and its first delta's id.
func (s *Session) Stream(ctx context.Context, streamID string) iter.Seq2[Event, error] {
	return s.streams.Stream(ctx, streamID)
}

// emit stamps and logs an event of st.
func (s *Session) emit(st *stream, ev Event) Event { return s.streams.Emit(st.id, ev) }

// run executes one stream from its user message to its agent_end.
func (s *Session) run(st *stream) {
	s.mu.Lock()
	first := !s.initialized
	s.initialized = true
	s.mu.Unlock()
	if first {
		s.emit(st, Event{Type: EventInitialize, Initialize: &Initialize{
			SessionID: s.cfg.sessionID, Workspace: s.cfg.workspace, AgentID: s.cfg.agentName,
		}})
	}
	s.emit(st, Event{Type: EventMessage, Meta: st.meta, Message: &Message{Role: RoleUser, Content: userDisplay(st)}})
	// The prompt's context (the editor's) is taken before it is recorded,
	// and goes ahead of it once the hooks have seen the prompt alone.
	promptParts := s.promptContext(st.ctx)
	if s.rec != nil {
		s.rec.User(recordedPrompt(promptParts, st))
	}
	s.emit(st, Event{Type: EventAgentStart})

	ss := &streamState{session: s, stream: st, initial: first, maxTurns: s.cfg.maxTurns}
	if st.maxTurns > 0 {
		ss.maxTurns = st.maxTurns
	}
	guard.Limit(ss, ss.maxTurns)
	ctx := withStreamState(st.ctx, ss)
	if s.tel != nil {
		var span *telemetry.Run
		ctx, span = s.tel.StartRun(ctx, s.cfg.sessionID, st.id)
		ss.runSpan = span
	}

	shown, err := s.dispatch.reportedModel(ctx)
	if err != nil {
		s.finish(st, ss, nil, err)
		return
	}
	ss.model = shown
	s.emit(st, Event{Type: EventSessionUpdate, SessionUpdate: &SessionUpdate{Model: ss.model}})
	if context.Cause(ctx) != nil {
		s.finish(st, ss, nil, nil)
		return
	}

	// One tool call at a time, in the model's order: edits and shell
	// commands must not interleave, and replayed runs stay deterministic.
	ctx = platform.WithTaskRunner(ctx, func(ctx context.Context, tasks []func(context.Context)) {
		for _, task := range tasks {
			task(ctx)
		}
	})
	tr := newTranslator(s, st, ss)
	var runErr error
	content := st.content
	if s.hooks != nil {
		if first {
			// gemini-cli's SessionStart: its context goes with the first
			// prompt.
			content = s.hooks.SessionStart(ctx, ss, s.cfg.sessionSource, content)
		}
		var err error
		if content, err = s.hooks.BeforeAgent(ctx, ss, content); err != nil {
			st.cancel(err)
			s.finish(st, ss, tr, nil)
			return
		}
	}
	content = withPromptParts(promptParts, content)
	stopHookActive := false
	for {
		// Each invocation has its own context, so that a first loop
		// detection can stop it and go on with a recovery turn while the
		// stream (and an Abort of it) carries on.
		invCtx, invCancel := context.WithCancelCause(ctx)
		ss.setInvocation(invCancel)
		runErr = nil
		var response string
		for ev, err := range s.runner.Run(invCtx, s.cfg.userID, s.cfg.sessionID, content, agent.RunConfig{StreamingMode: agent.StreamingModeSSE}) {
			if err != nil {
				if runErr == nil {
					runErr = err
				}
				continue
			}
			if !ev.Partial && ev.Content != nil && ev.Content.Role == genai.RoleModel {
				if t := handle.PromptText(ev.Content); t != "" {
					response = t
				}
			}
			tr.translate(ev)
			if s.rec != nil {
				s.rec.Event(ev)
			}
		}
		// A plugin may stop the invocation for another one (a loop
		// detection's recovery turn).
		var restart *restartCause
		recovering := errors.As(context.Cause(invCtx), &restart) && context.Cause(ctx) == nil
		invCancel(nil)
		if !recovering {
			if s.hooks == nil || runErr != nil || context.Cause(ctx) != nil {
				break
			}
			// gemini-cli's AfterAgent: a hook that blocks or stops asks
			// for another turn, its reason as the prompt.
			s.settle()
			next := s.hooks.AfterAgent(ctx, ss, handle.PromptText(st.content), response, stopHookActive)
			if next == nil {
				break
			}
			stopHookActive = true
			content = withPromptParts(s.promptContext(ctx), next)
			continue
		}
		s.settle()
		s.closeDanglingCalls(st, tr, restart.cause, nil)
		content = withPromptParts(s.promptContext(ctx), restart.next)
	}
	s.settle()
	s.finish(st, ss, tr, runErr)
}

// settle waits for the processor chain's background work: a run that
// ends, even aborted, leaves the session, the spill files and the
// transcript in step before the next prompt, a rewind or an exit. The
// chain has settled after the last model call in the usual case; an error
// here is one nothing else reported.
func (s *Session) settle() {
	if s.chain == nil {
		return
	}
	if err := s.chain.Settle(context.WithoutCancel(s.streams.Context()), s.cfg.sessionID); err != nil {
		s.log.Error("request processors: background work failed; the next model call retries it", "session", s.cfg.sessionID, "err", err)
	}
}

// finish closes unanswered tool calls and emits the stream's last events.
func (s *Session) finish(st *stream, ss *streamState, tr *translator, runErr error) {
	// From here on the stream only reports: a Rewind after its agent_end
	// waits for it rather than failing as busy.
	s.streams.MarkEnded()
	cause := context.Cause(st.ctx)
	// The span ends before agent_end, so a driver that exports on
	// agent_end has it.
	ss.runSpan.End(runEndErr(cause, runErr))
	// Only a cut-off run can leave a call unanswered: ADK answers every
	// call before a run ends on its own.
	if tr != nil && (cause != nil || runErr != nil) {
		s.closeDanglingCalls(st, tr, cause, runErr)
	}
	switch {
	case errors.As(cause, new(*HookStoppedError)):
		ev := s.emit(st, Event{Type: EventError, Meta: map[string]any{"code": "HOOK_STOPPED"},
			Error: &ErrorData{Status: StatusCancelled, Message: cause.Error()}})
		if s.rec != nil {
			s.rec.Note(transcript.TypeWarning, ev.Error.Message)
		}
		s.emit(st, Event{Type: EventAgentEnd, AgentEnd: &AgentEnd{Reason: EndCompleted}})
	case errors.Is(cause, ErrLoopDetected):
		// gemini-cli's LoopDetected: a warning, not a failure; the stream
		// ends as a completed one.
		ev := s.emit(st, Event{Type: EventError, Meta: map[string]any{"code": "LOOP_DETECTED"},
			Error: &ErrorData{Status: StatusInternal, Message: loopDetectedMessage}})
		if s.rec != nil {
			s.rec.Note(transcript.TypeWarning, ev.Error.Message)
		}
		s.emit(st, Event{Type: EventAgentEnd, AgentEnd: &AgentEnd{Reason: EndCompleted}})
	case errors.Is(cause, ErrMaxTurns):
		s.emit(st, Event{Type: EventAgentEnd, AgentEnd: &AgentEnd{Reason: EndMaxTurns, Data: map[string]any{
			"code": "MAX_TURNS_EXCEEDED", "maxTurns": ss.maxTurns, "turnCount": guard.Turns(ss) - 1,
		}}})
	case cause != nil && !isFailureCause(cause):
		s.emit(st, Event{Type: EventAgentEnd, AgentEnd: &AgentEnd{Reason: EndAborted}})
	case cause != nil || runErr != nil:
		err := cause
		if err == nil {
			err = runErr
		}
		ev := s.emit(st, errorEvent(err))
		if s.rec != nil {
			s.rec.Note(transcript.TypeError, ev.Error.Message)
		}
		s.emit(st, Event{Type: EventAgentEnd, AgentEnd: &AgentEnd{Reason: EndFailed}})
	default:
		reason := EndCompleted
		if tr != nil {
			reason = tr.endReason()
		}
		s.emit(st, Event{Type: EventAgentEnd, AgentEnd: &AgentEnd{Reason: reason}})
	}
}

// isFailureCause reports whether an invocation was cancelled because it
// failed (a fatal tool error) rather than stopped on request.
func isFailureCause(cause error) bool {
	var fatal *FatalToolError
	return errors.As(cause, &fatal)
}

// closeDanglingCalls answers every function call of the session that has no
// response — a call cut off by an abort — with a synthetic error response,
// so the next request's history is one Gemini accepts, and tells drivers
// with a tool_response.
func (s *Session) closeDanglingCalls(st *stream, tr *translator, cause, runErr error) {
	ctx := context.WithoutCancel(st.ctx)
	resp, err := s.svc.Get(ctx, &session.GetRequest{AppName: s.cfg.appName, UserID: s.cfg.userID, SessionID: s.cfg.sessionID})
	if err != nil {
		s.log.Warn("cannot load session to close unanswered tool calls", "session", s.cfg.sessionID, "err", err)
		return
	}
	sess := resp.Session
	answered := map[string]bool{}
	var open []*genai.FunctionCall
	var invocation string
	for ev := range sess.Events().All() {
		if ev.Content == nil {
			continue
		}
		for _, p := range ev.Content.Parts {
			switch {
			case p.FunctionResponse != nil:
				answered[p.FunctionResponse.ID] = true
			case p.FunctionCall != nil:
				open = append(open, p.FunctionCall)
				invocation = ev.InvocationID
			}
		}
	}
	reason := cause
	if reason == nil {
		reason = runErr
	}
	if reason == nil {
		reason = errors.New("the run ended before the tool answered")
	}
	var parts []*genai.Part
	for _, fc := range open {
		if answered[fc.ID] {
			continue
		}
		msg := fmt.Sprintf("[Operation Cancelled] Reason: %v", reason)
		parts = append(parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{
			ID: fc.ID, Name: fc.Name, Response: map[string]any{"error": msg},
		}})
		tr.cancelledCall(fc, msg)
	}
	if len(parts) == 0 {
		return
	}
	ev := session.NewEvent(ctx, invocation)
	ev.Author = s.cfg.agentName
	ev.Content = &genai.Content{Role: genai.RoleUser, Parts: parts}
	if err := s.svc.AppendEvent(ctx, sess, ev); err != nil {
		s.log.Warn("cannot close unanswered tool calls", "session", s.cfg.sessionID, "err", err)
		return
	}
	if s.rec != nil {
		s.rec.Event(ev)
	}
}

func userDisplay(st *stream) []ContentPart {
	if st.display != "" {
		return []ContentPart{TextPart(st.display)}
	}
	return fromGenaiParts(st.content.Parts)
}

// sessionConfig is the resolved configuration of a Session.
type sessionConfig struct {
	reloadMemory                          func() error
	appName, agentName, userID, sessionID string
	workspace                             string
	sessionSource                         string // SessionStart's source: startup or resume
	maxTurns                              int
	resolver                              ModelResolver
	tools                                 *toolTable
	policy                                *Policy
	approver                              Approver
	now                                   func() time.Time
	newID                                 func() string
	closers                               []func() error
	prompts                               PromptSource
}

func defaultNow() time.Time { return time.Now() }

func defaultID() string { return uuid.NewString() }

// runEndErr is the error a run's span ends with: its failure, if any; an
// abort or a turn limit is not one.
func runEndErr(cause, runErr error) error {
	switch {
	case cause != nil && isFailureCause(cause):
		return cause
	case cause != nil:
		return nil
	}
	return runErr
}

// ToolInfo describes one tool a session offers the model.
type ToolInfo struct {
	Name        string
	DisplayName string
	Description string
	Kind        tools.Kind
	// MCPServer and MCPTool name the MCP server behind the tool and the
	// tool's name there; both "" for a tool of no MCP server.
	MCPServer, MCPTool string
}

// AllowedToolsWarning returns the warning for allow rules (settings
// tools.allowed, --allowed-tools) that name no tool of the session, with
// the tools there are; "" when every rule names one. Such a rule allows
// nothing, and the calls it was meant for are denied: a driver shows the
// warning once, before the run.
func (s *Session) AllowedToolsWarning() string {
	byName := s.cfg.tools.current().byName
	unknown := s.cfg.policy.UnknownTools(func(name string) bool { return byName[name] != nil })
	if len(unknown) == 0 {
		return ""
	}
	names := make([]string, 0, len(byName))
	for _, t := range s.Tools() {
		names = append(names, t.Name)
	}
	what := "a tool that does not exist"
	if len(unknown) > 1 {
		what = "tools that do not exist"
	}
	return fmt.Sprintf("--allowed-tools (tools.allowed) names %s: %s; the tools are %s", what, strings.Join(unknown, ", "), strings.Join(names, ", "))
}

// Tool returns the session's tool called name, or nil.
func (s *Session) Tool(name string) tools.Tool { return s.cfg.tools.current().byName[name] }

// Tools lists the session's tools, sorted by name.
func (s *Session) Tools() []ToolInfo {
	byName := s.cfg.tools.current().byName
	out := make([]ToolInfo, 0, len(byName))
	for _, t := range byName {
		info := ToolInfo{Name: t.Name(), DisplayName: t.DisplayName(), Description: t.Declaration().Description, Kind: t.Kind()}
		if m, ok := t.(mcpTool); ok {
			info.MCPServer, info.MCPTool, _ = m.MCP()
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b ToolInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// AgentInfo describes a subagent a session can hand tasks to.
type AgentInfo struct {
	Name        string
	Description string
	// Remote is set for an agent on another machine (an A2A agent).
	Remote bool
}

// AgentLister is implemented by a tool of kind tools.KindAgent that hands
// tasks to named agents (invoke_agent): Session.Agents lists them.
type AgentLister interface {
	Agents() []AgentInfo
}

// Agents lists the subagents the session's tools can hand tasks to,
// sorted by name.
func (s *Session) Agents() []AgentInfo {
	var out []AgentInfo
	for _, t := range s.cfg.tools.current().byName {
		if l, ok := t.(AgentLister); ok {
			out = append(out, l.Agents()...)
		}
	}
	slices.SortFunc(out, func(a, b AgentInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Workspace returns the session's primary workspace directory.
func (s *Session) Workspace() string { return s.cfg.workspace }

// Busy returns an error wrapping ErrBusy while a stream runs or waits to
// (a prompt, a confirmation it is parked on) or a rewind or compression
// holds the session, nil when the session is idle. A stream that has
// emitted its agent_end counts as over.
func (s *Session) Busy() error {
	if s.streams.Busy() {
		return fmt.Errorf("%w: a prompt is running; wait for it to end, or abort it", ErrBusy)
	}
	return nil
}

// ApprovalMode returns the session's approval mode.
func (s *Session) ApprovalMode() ApprovalMode { return s.cfg.policy.Mode() }

// SetApprovalMode changes the session's approval mode for the tool calls
// decided from now on, and tells model routing (plan mode may route to
// another model, as in gemini-cli). Session rules from "always" answers
// hold in the mode they were given in and the more permissive ones. An
// unknown mode is refused with ErrUnknownApprovalMode.
func (s *Session) SetApprovalMode(mode ApprovalMode) error {
	if err := s.cfg.policy.SetMode(mode); err != nil {
		return err
	}
	if r := s.dispatch.routes; r != nil {
		r.SetApprovalMode(string(mode))
	}
	return nil
}
