// Package subagents is the invoke_agent tool: a call hands a task to a
// subagent — a local child session built by a Factory the composition root
// provides, or a remote A2A agent reached through a RemoteInvoker — drives
// it through runtime.AgentProtocol, forwards its events to the parent's
// stream and returns its result. Package runtime does not know about it.
package subagents

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/agents"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/runtime/llm"
	"github.com/agentry-dev/agentry/tools"
	"github.com/google/uuid"
)

// gemini-cli's subagent defaults (local-executor.ts).
const (
	// DefaultMaxTurns bounds a subagent's model calls.
	DefaultMaxTurns = 30
	// DefaultTimeout bounds a subagent's time.
	DefaultTimeout = 10 * time.Minute
	// GracePeriod is the recovery turn's own time limit.
	GracePeriod = 60 * time.Second
)

// Termination modes of a subagent, gemini-cli's AgentTerminateMode.
const (
	TerminateGoal           = "GOAL"
	TerminateMaxTurns       = "MAX_TURNS"
	TerminateTimeout        = "TIMEOUT"
	TerminateAborted        = "ABORTED"
	TerminateError          = "ERROR"
	TerminateNoCompleteTask = "ERROR_NO_COMPLETE_TASK_CALL"
)

// errTimeout is the cause of a child stream stopped at its time
// limit.
var errTimeout = errors.New("subagent time limit reached")

// Factory builds the child session of one local subagent call: its own
// agent, tools (the definition's subset of the parent's, plus extra) and
// plugins, over the parent's session store and model availability. The
// child's approvals go to approver.
type Factory func(ctx context.Context, def agents.Definition, sessionID string, extra []tools.Tool, approver runtime.Approver) (Child, error)

// Child is a local subagent's session: the tool drives it through
// AgentProtocol and follows its events live through Subscribe, as
// *runtime.Session does.
type Child interface {
	runtime.AgentProtocol
	// Subscribe calls fn with every event the child emits, until
	// unsubscribe is called.
	Subscribe(fn func(runtime.Event)) (unsubscribe func())
}

// Result is how a subagent's task ended: gemini-cli's
// OutputObject, with the tokens the subagent used.
type Result struct {
	// Agent is the agent's name and ThreadID its child session (local) or
	// A2A context (remote).
	Agent, ThreadID string
	// Result is what the agent submitted, or why it failed.
	Result string
	// TerminateReason is one of the Terminate* modes.
	TerminateReason string
	// Turns counts the agent's model calls.
	Turns int
	// Duration is the wall time of the task.
	Duration time.Duration
	// Usage holds the usage event of each of the agent's model calls,
	// whose _meta carries the token details (total, thoughts, latency).
	Usage []runtime.Event
}

// Text is the result as the parent's model reads it (gemini-cli's
// local-invocation.ts wording).
func (r Result) Text() string {
	return fmt.Sprintf("Subagent '%s' finished.\nTermination Reason: %s\nResult:\n%s", r.Agent, r.TerminateReason, r.Result)
}

// subagentTool is gemini-cli's invoke_agent: one tool naming the agent and
// the task. A call picks the agent's implementation by its kind — a local
// child session, or a remote A2A agent — and drives it through
// AgentProtocol: the child's events reach the parent as tool_update events
// carrying the child's thread id, and the call's result is the child's.
type subagentTool struct {
	defs     map[string]agents.Definition
	names    []string
	decl     *genai.FunctionDeclaration
	newChild Factory
	approver runtime.Approver
	log      *slog.Logger
	// grace is the recovery turn's time limit; tests shorten it.
	grace time.Duration
	// timeout, when set, replaces every local agent's time limit (tests).
	timeout time.Duration
	// remotes runs the calls of remote agents; nil when the session has
	// none.
	remotes RemoteInvoker
	// newID makes the call ids of Run.
	newID func() string
}

// newSubagentTool returns the invoke_agent tool over the definitions, or
// nil when there are none.
func newSubagentTool(defs []agents.Definition, newChild Factory, approver runtime.Approver) *subagentTool {
	t := &subagentTool{defs: map[string]agents.Definition{}, newChild: newChild, approver: approver, grace: GracePeriod, log: slog.Default(), newID: uuid.NewString}
	for _, d := range defs {
		if d.Kind == agents.KindLocal && newChild == nil {
			continue
		}
		t.defs[d.Name] = d
	}
	if len(t.defs) == 0 {
		return nil
	}
	t.names = slices.Sorted(maps.Keys(t.defs))
	var lines []string
	for _, n := range t.names {
		d := t.defs[n]
		desc := d.Description
		if d.Kind == agents.KindRemote {
			desc = strings.TrimSpace(desc + " (remote agent)")
		}
		lines = append(lines, fmt.Sprintf("- %s: %s", n, desc))
	}
	t.decl = &genai.FunctionDeclaration{
		Name: InvokeAgentToolName,
		Description: "Hands a task to a specialised subagent, which works on it with its own tools and returns its result. Available agents:\n" +
			strings.Join(lines, "\n"),
		ParametersJsonSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"agent_name": map[string]any{"type": "string", "enum": t.names, "description": "The agent to invoke."},
				"prompt":     map[string]any{"type": "string", "description": "The task for the agent, with everything it needs to know."},
			},
			"required": []string{"agent_name", "prompt"},
		},
	}
	return t
}

// ToolConfig configures the invoke_agent tool of a session.
type ToolConfig struct {
	// Agents are the definitions the tool offers.
	Agents []agents.Definition
	// NewChild builds a local agent's child session; without it local
	// definitions are left out.
	NewChild Factory
	// Remotes, when set, makes the RemoteInvoker that runs the calls of
	// remote agents; it is called only when the tool is made.
	Remotes NewRemoteInvoker
	// Approver asks a human about the children's calls that need one.
	Approver runtime.Approver
	// Logger receives diagnostics; default slog.Default().
	Logger *slog.Logger
	// NewID makes the ids of the calls Run makes outside a stream, as the
	// parent session's; default random UUIDs.
	NewID func() string
}

// NewTool returns the invoke_agent tool of cfg and the function
// that releases its remote connections, or a nil tool when no definition
// is usable.
func NewTool(cfg ToolConfig) (tools.Tool, func() error) {
	st := newSubagentTool(cfg.Agents, cfg.NewChild, cfg.Approver)
	if st == nil {
		return nil, func() error { return nil }
	}
	if cfg.Logger != nil {
		st.log = cfg.Logger
	}
	if cfg.NewID != nil {
		st.newID = cfg.NewID
	}
	if cfg.Remotes != nil {
		st.remotes = cfg.Remotes(st.log)
	}
	return st, st.close
}

// CheckAgent reports what in a definition this runtime cannot run: a
// local agent's unknown model. The error names the file and field.
func CheckAgent(def agents.Definition) error {
	if def.Kind != agents.KindLocal || def.Model == "" || def.Model == "inherit" {
		return nil
	}
	if _, err := llm.ParseModel(def.Model); err != nil {
		return &agents.LoadError{File: def.File, Field: "model", Msg: err.Error()}
	}
	return nil
}

// Sampling is the plugin that gives a local agent's model calls
// its definition's sampling: its temperature (default 1) and topP 0.95,
// as gemini-cli's markdown agents have. It runs after the processor
// chain, whose routing sets the model's own generation config.
func Sampling(def agents.Definition) (*plugin.Plugin, error) {
	temperature := float32(1)
	if def.Temperature != nil {
		temperature = float32(*def.Temperature)
	}
	topP := float32(0.95)
	return plugin.New(plugin.Config{
		Name: "agentry-subagent-sampling",
		BeforeModelCallback: func(_ agent.Context, req *model.LLMRequest) (*model.LLMResponse, error) {
			if req.Config == nil {
				req.Config = &genai.GenerateContentConfig{}
			}
			req.Config.Temperature, req.Config.TopP = &temperature, &topP
			return nil, nil
		},
	})
}

// InvokeAgentToolName is the subagent tool's name, gemini-cli's.
const InvokeAgentToolName = "invoke_agent"

var _ runtime.AgentLister = (*subagentTool)(nil)

func (t *subagentTool) Name() string                            { return InvokeAgentToolName }
func (t *subagentTool) DisplayName() string                     { return "Invoke Subagent" }
func (t *subagentTool) Kind() tools.Kind                        { return tools.KindAgent }
func (t *subagentTool) Declaration() *genai.FunctionDeclaration { return t.decl }
func (t *subagentTool) Describe(args map[string]any) string {
	name, _ := args["agent_name"].(string)
	return "Delegating to " + name
}

// Remote implements runtime.RemoteAware: calling a remote agent sends the
// task (and what it holds) off this machine, so the policy asks first.
func (t *subagentTool) Remote(name string) bool {
	return t.defs[name].Kind == agents.KindRemote
}

// Agents implements runtime.AgentLister: the agents a call can name.
func (t *subagentTool) Agents() []runtime.AgentInfo {
	out := make([]runtime.AgentInfo, 0, len(t.names))
	for _, n := range t.names {
		d := t.defs[n]
		out = append(out, runtime.AgentInfo{Name: n, Description: d.Description, Remote: d.Kind == agents.KindRemote})
	}
	return out
}

// close releases the remote agents' connections.
func (t *subagentTool) close() error {
	if t.remotes == nil {
		return nil
	}
	return t.remotes.Close()
}

// Execute runs one subagent call.
func (t *subagentTool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	name, _ := call.Args["agent_name"].(string)
	prompt, _ := call.Args["prompt"].(string)
	parent := runtime.StreamFrom(ctx)
	var sink func(runtime.Event)
	parentID := "session"
	if parent != nil {
		sink = func(ev runtime.Event) { forwardChildEvent(parent, call.ID, name, ev) }
		parentID = parent.SessionID()
	}
	res, err := t.run(ctx, parentID, call.ID, name, prompt, sink)
	if errors.Is(err, runtime.ErrUnknownAgent) {
		return tools.Result{}, tools.Errorf(tools.ErrInvalidParams, "Unknown agent %q; available agents: %s.", name, strings.Join(t.names, ", "))
	}
	if err != nil {
		return tools.Result{}, err
	}
	text := res.Text()
	return tools.Result{
		LLMContent: text,
		Display:    text,
		Data: map[string]any{
			"result": res.Result, "terminate_reason": res.TerminateReason, "turn_count": res.Turns,
			"duration_ms": res.Duration.Milliseconds(), "threadId": res.ThreadID, "agentName": res.Agent,
		},
	}, nil
}

// run runs agent name on prompt for the parent session parentID; callID
// makes a local child's session id stable per call, so a resumed parent
// that repeats the call finds the same child session. sink, when set,
// sees the child's events.
func (t *subagentTool) run(ctx context.Context, parentID, callID, name, prompt string, sink func(runtime.Event)) (Result, error) {
	def, ok := t.defs[name]
	if !ok {
		return Result{}, fmt.Errorf("%w %q", runtime.ErrUnknownAgent, name)
	}
	if strings.TrimSpace(prompt) == "" {
		prompt = "Get Started!" // gemini-cli's empty query
	}
	if def.Kind == agents.KindRemote {
		if t.remotes == nil {
			return Result{}, fmt.Errorf("%w %q: the session reaches no remote agents", runtime.ErrUnknownAgent, name)
		}
		return t.remotes.Invoke(ctx, def, prompt, t.approver, sink)
	}
	return t.runLocal(ctx, def, fmt.Sprintf("%s.%s.%s", parentID, def.Name, callID), prompt, sink)
}

// runLocal runs a local subagent in a child session: the task, then, at
// its turn or time limit or when it stops without complete_task, one
// recovery turn.
func (t *subagentTool) runLocal(ctx context.Context, def agents.Definition, childID, prompt string, sink func(runtime.Event)) (Result, error) {
	start := time.Now()
	res := Result{Agent: def.Name, ThreadID: childID}
	task := &completeTask{}
	clock := &Deadline{}
	child, err := t.newChild(ctx, def, childID, []tools.Tool{task}, ChildApprover(t.approver, def.Label(), clock))
	if err != nil {
		return res, fmt.Errorf("start subagent %s: %w", def.Name, err)
	}
	defer child.Close()
	if sink != nil {
		unsub := child.Subscribe(func(ev runtime.Event) {
			ev.Meta = WithThread(ev.Meta, childID)
			sink(ev)
		})
		defer unsub()
	}
	timeout := DefaultTimeout
	switch {
	case t.timeout > 0:
		timeout = t.timeout
	case def.TimeoutMins > 0:
		timeout = time.Duration(def.TimeoutMins) * time.Minute
	}
	maxTurns := def.MaxTurns
	if maxTurns <= 0 {
		maxTurns = DefaultMaxTurns
	}
	run := childRun{child: child, limit: timeout, clock: clock}
	mode, err := run.stream(ctx, prompt, 0, task)
	if err != nil {
		return res, err
	}
	var reason string
	switch mode {
	case TerminateMaxTurns:
		reason = "You have exceeded the maximum number of turns."
	case TerminateTimeout:
		reason = "You have exceeded the time limit."
	case TerminateNoCompleteTask:
		reason = "You have stopped calling tools without finishing."
	}
	if reason != "" {
		// gemini-cli's one recovery turn, on its own timer and with one
		// model call.
		msg := reason + " You have one final chance to complete the task with a short grace period. You MUST call `complete_task` immediately with your best answer and explain that your investigation was interrupted. Do not call any other tools."
		grace := childRun{child: child, limit: t.grace, clock: clock, usage: run.usage, turns: run.turns}
		m, err := grace.stream(ctx, msg, 1, task)
		if err != nil {
			return res, err
		}
		if m == TerminateGoal {
			mode = TerminateGoal
		}
		run = grace
	}
	res.Turns, res.Usage, res.Duration = run.turns, run.usage, time.Since(start)
	res.TerminateReason, res.Result = mode, task.result()
	switch mode {
	case TerminateGoal:
	case TerminateTimeout:
		res.Result = TimedOut(timeout)
	case TerminateMaxTurns:
		res.Result = fmt.Sprintf("Agent reached max turns limit (%d).", maxTurns)
	case TerminateNoCompleteTask:
		res.Result = "Agent stopped calling tools but did not call 'complete_task'."
	default:
		if res.Result == "" {
			res.Result = "Agent failed."
		}
	}
	return res, nil
}

// TimedOut is gemini-cli's result text for an agent stopped at its time
// limit: "Agent timed out after 10 minutes.", for local and remote agents
// alike.
func TimedOut(limit time.Duration) string {
	return fmt.Sprintf("Agent timed out after %s.", minutes(limit))
}

// minutes is gemini-cli's "N minutes".
func minutes(d time.Duration) string {
	if m := int(d.Minutes()); m == 1 {
		return "1 minute"
	} else if m > 0 {
		return fmt.Sprintf("%d minutes", m)
	}
	return d.String()
}

// WithThread returns meta with an agent's thread id, copied so that the
// agent's own event stays as it was: how a child's events are forwarded to
// its parent's stream.
func WithThread(meta map[string]any, thread string) map[string]any {
	out := make(map[string]any, len(meta)+1)
	maps.Copy(out, meta)
	out["threadId"] = thread
	return out
}

// childRun drives one stream of a local child and tallies its model calls.
type childRun struct {
	child Child
	limit time.Duration
	clock *Deadline
	turns int
	usage []runtime.Event
}

// stream sends text to the child and waits for its stream to end, within
// limit, and says how it ended. A parent that gives up aborts the child
// (its shell commands too) and gets the cause back as the error.
func (r *childRun) stream(ctx context.Context, text string, maxTurns int, task *completeTask) (mode string, err error) {
	id, err := r.child.Send(runtime.WithMaxTurns(ctx, maxTurns), runtime.TextMessage(text))
	if err != nil {
		return "", fmt.Errorf("subagent: %w", err)
	}
	r.clock.Start(r.limit, func() { r.child.Abort(errTimeout) })
	defer r.clock.Stop()
	stop := context.AfterFunc(ctx, func() { r.child.Abort(context.Cause(ctx)) })
	defer stop()
	var end *runtime.AgentEnd
	var failure *runtime.ErrorData
	for ev, err := range r.child.Stream(context.WithoutCancel(ctx), id) {
		if err != nil {
			return "", err
		}
		switch ev.Type {
		case runtime.EventUsage:
			r.turns++
			r.usage = append(r.usage, ev)
		case runtime.EventError:
			if ev.Error.Fatal {
				failure = ev.Error
			}
		case runtime.EventAgentEnd:
			end = ev.AgentEnd
		}
	}
	if cause := context.Cause(ctx); cause != nil {
		return TerminateAborted, cause
	}
	switch {
	case task.done():
		return TerminateGoal, nil
	case end != nil && end.Reason == runtime.EndMaxTurns:
		return TerminateMaxTurns, nil
	case end != nil && end.Reason == runtime.EndAborted:
		return TerminateTimeout, nil
	case failure != nil:
		task.fail("Agent failed: " + failure.Message)
		return TerminateError, nil
	}
	return TerminateNoCompleteTask, nil
}

// Parent is the session a batch line's subagent runs under: its id and
// its tools, as *runtime.Session gives them.
type Parent interface {
	ID() string
	Tool(name string) tools.Tool
}

// Run runs the named subagent on prompt as a child of parent, outside any
// stream of parent (a batch line that names an agent), and returns how it
// ended. onEvent, when set, sees the child's events. The agent must be one
// the parent's invoke_agent offers; otherwise the error is
// runtime.ErrUnknownAgent.
func Run(ctx context.Context, parent Parent, name, prompt string, onEvent func(runtime.Event)) (Result, error) {
	t, _ := parent.Tool(InvokeAgentToolName).(*subagentTool)
	if t == nil {
		return Result{}, fmt.Errorf("%w %q: no agents are defined", runtime.ErrUnknownAgent, name)
	}
	if _, ok := t.defs[name]; !ok {
		return Result{}, fmt.Errorf("%w %q (the agents are %s)", runtime.ErrUnknownAgent, name, strings.Join(t.names, ", "))
	}
	return t.run(ctx, parent.ID(), t.newID(), name, prompt, onEvent)
}

// forwardChildEvent shows a child's event on the parent's stream as a
// tool_update of the invoke_agent call: the child's thread id and event
// in data, a one-line summary as content. The child's usage goes too, so
// that the parent's totals count the subagent's tokens.
func forwardChildEvent(parent runtime.Stream, callID, agent string, ev runtime.Event) {
	switch ev.Type {
	case runtime.EventMessage, runtime.EventToolRequest, runtime.EventToolUpdate, runtime.EventToolResponse, runtime.EventError, runtime.EventUsage:
	default:
		return
	}
	if ev.Type == runtime.EventMessage && ev.Message.Role != runtime.RoleAgent {
		return
	}
	var text string
	switch {
	case ev.Message != nil:
		for _, p := range ev.Message.Content {
			switch p.Type {
			case runtime.PartText:
				text += p.Text
			case runtime.PartThought:
				text += p.Thought // a thought part's text is in Thought
			}
		}
	case ev.ToolRequest != nil:
		text = fmt.Sprintf("[%s] calling %s", agent, ev.ToolRequest.Name)
	case ev.ToolResponse != nil:
		text = fmt.Sprintf("[%s] %s finished", agent, ev.ToolResponse.Name)
	case ev.Error != nil:
		text = fmt.Sprintf("[%s] %s", agent, ev.Error.Message)
	}
	thread, _ := ev.Meta["threadId"].(string)
	child := ev
	up := &runtime.ToolUpdate{
		RequestID: callID,
		Data:      map[string]any{"threadId": thread, "agentName": agent, "event": &child},
	}
	if text != "" {
		up.Content = []runtime.ContentPart{runtime.TextPart(text)}
	}
	parent.Emit(runtime.Event{Type: runtime.EventToolUpdate, ToolUpdate: up})
}

// ChildApprover returns the approver of a subagent's calls: it sends
// them to the parent's approver named "<agent> › <tool>", pausing clock
// (when set) while the parent decides; without a parent approver they are
// declined, as in a batch run. An editing parent's modified arguments
// (runtime.EditingApprover) and the start of an approved call
// (runtime.ExecutionObserver) pass through. Local subagents and the
// remote agents of package agents/remote use it.
func ChildApprover(parent runtime.Approver, agent string, clock *Deadline) runtime.EditingApprover {
	return childApprover{parent: parent, agent: agent, clock: clock}
}

// childApprover is ChildApprover's approver.
type childApprover struct {
	parent runtime.Approver
	agent  string
	// clock is the child's time limit, paused while a human decides, as
	// gemini-cli pauses a subagent's deadline during a confirmation; nil
	// when the caller has none.
	clock *Deadline
}

var (
	_ runtime.EditingApprover   = childApprover{}
	_ runtime.ExecutionObserver = childApprover{}
)

// Executing passes the start of a child's call to a parent approver that
// reports it (the A2A server shows the child's approved call running).
func (a childApprover) Executing(ctx context.Context, callID string) {
	if o, ok := a.parent.(runtime.ExecutionObserver); ok {
		o.Executing(ctx, callID)
	}
}

func (a childApprover) Approve(ctx context.Context, req runtime.ApprovalRequest) (runtime.Outcome, error) {
	o, _, err := a.ApproveEdit(ctx, req)
	return o, err
}

// ApproveEdit implements runtime.EditingApprover: the parent's modified
// arguments when it is an editing approver, nil otherwise.
func (a childApprover) ApproveEdit(ctx context.Context, req runtime.ApprovalRequest) (runtime.Outcome, map[string]any, error) {
	if a.parent == nil {
		return runtime.Cancel, nil, nil
	}
	req.DisplayName = a.agent + " › " + req.DisplayName
	if a.clock != nil {
		a.clock.Pause()
		defer a.clock.Resume()
	}
	if e, ok := a.parent.(runtime.EditingApprover); ok {
		return e.ApproveEdit(ctx, req)
	}
	o, err := a.parent.Approve(ctx, req)
	return o, nil, err
}

// Deadline is a subagent call's time limit that can be paused while a
// human decides about one of its calls. Its zero value is stopped; Pause
// and Resume nest. It is safe for concurrent use.
type Deadline struct {
	// AfterFunc starts a timer that calls f after d and returns the
	// function that stops it, reporting whether it stopped the timer
	// before it fired; nil is time.AfterFunc's. Tests give a fake one.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)

	mu      sync.Mutex
	stopFn  func() bool // stops the running timer; nil when none runs
	fire    func()
	left    time.Duration // time left when the timer is not running
	since   time.Time     // when the running timer was started
	paused  int
	running bool
	fired   bool // the limit was used up: Resume must not arm it again
}

// arm starts the timer for d; d.mu is held.
func (d *Deadline) arm(limit time.Duration) {
	d.since = time.Now()
	if d.AfterFunc != nil {
		d.stopFn = d.AfterFunc(limit, d.fire)
		return
	}
	d.stopFn = time.AfterFunc(limit, d.fire).Stop
}

// Start runs the limit, calling fire when it is used up.
func (d *Deadline) Start(limit time.Duration, fire func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fire, d.left, d.running, d.fired = fire, limit, true, false
	if d.paused == 0 {
		d.arm(limit)
	}
}

// Stop ends the limit.
func (d *Deadline) Stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.running = false
	if d.stopFn != nil {
		d.stopFn()
		d.stopFn = nil
	}
}

// Pause stops the clock until the matching Resume.
func (d *Deadline) Pause() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.paused++
	if d.paused == 1 && d.stopFn != nil {
		if d.stopFn() {
			d.left -= time.Since(d.since)
		} else {
			d.fired = true
		}
		d.stopFn = nil
	}
}

// Resume restarts the clock, with the time that was left, once every
// Pause has been resumed.
func (d *Deadline) Resume() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.paused--
	if d.paused == 0 && d.running && !d.fired && d.stopFn == nil {
		d.arm(max(d.left, 0))
	}
}

// completeTask is the child's complete_task tool: the call that ends the
// subagent's loop with its result (the scheduler stops the loop on
// taskCompleted).
type completeTask struct {
	mu        sync.Mutex
	submitted bool
	output    string
}

// CompleteTaskToolName is gemini-cli's name for the subagent's
// terminating tool.
const CompleteTaskToolName = "complete_task"

func (c *completeTask) Name() string        { return CompleteTaskToolName }
func (c *completeTask) DisplayName() string { return "Complete Task" }
func (c *completeTask) Kind() tools.Kind    { return tools.KindThink }
func (c *completeTask) Declaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{
		Name:        CompleteTaskToolName,
		Description: "Submits the final result of your task and finishes. Call it alone, once, when the task is done.",
		ParametersJsonSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"result": map[string]any{"type": "string", "description": "The final result of the task."}},
			"required":   []string{"result"},
		},
	}
}
func (c *completeTask) Describe(map[string]any) string { return "Completing the task" }

func (c *completeTask) Execute(_ context.Context, call tools.Call) (tools.Result, error) {
	result, _ := call.Args["result"].(string)
	if strings.TrimSpace(result) == "" {
		return tools.Result{}, tools.Errorf(tools.ErrInvalidParams, "Missing required \"result\" argument. You must provide your final result when calling complete_task.")
	}
	c.mu.Lock()
	c.submitted, c.output = true, result
	c.mu.Unlock()
	return tools.Result{
		LLMContent: "Result submitted and task completed.",
		Data:       map[string]any{"taskCompleted": true, "submittedOutput": result},
	}, nil
}

func (c *completeTask) done() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.submitted
}

func (c *completeTask) result() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.output
}

func (c *completeTask) fail(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.submitted {
		c.output = msg
	}
}

// Rules are gemini-cli's rules appended to a subagent's system
// prompt.
const Rules = `

# Rules
- You are a subagent working on a task handed to you by another agent; nobody can answer questions while you work.
- When the task is done, you MUST call the ` + "`complete_task`" + ` tool with your final result. Call it alone in its turn, as your last action.
- Work only with the tools you have; do not ask the user for anything.`
