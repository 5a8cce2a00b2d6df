package runtime

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
	"github.com/agentry-dev/agentry/runtime/llm"
	"github.com/agentry-dev/agentry/tools"
)

// gemini-cli's subagent defaults (local-executor.ts).
const (
	// DefaultSubagentMaxTurns bounds a subagent's model calls.
	DefaultSubagentMaxTurns = 30
	// DefaultSubagentTimeout bounds a subagent's time.
	DefaultSubagentTimeout = 10 * time.Minute
	// SubagentGracePeriod is the recovery turn's own time limit.
	SubagentGracePeriod = 60 * time.Second
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

// errSubagentTimeout is the cause of a child stream stopped at its time
// limit.
var errSubagentTimeout = errors.New("subagent time limit reached")

// SubagentFactory builds the child session of one local subagent call:
// its own agent, tools (the definition's subset of the parent's, plus
// extra) and plugins, over the parent's session store and model
// availability. The child's approvals go to approver.
type SubagentFactory func(ctx context.Context, def agents.Definition, sessionID string, extra []tools.Tool, approver Approver) (*Session, error)

// ErrUnknownAgent reports an agent name no definition gives.
var ErrUnknownAgent = errors.New("unknown agent")

// SubagentResult is how a subagent's task ended: gemini-cli's
// OutputObject, with the tokens the subagent used.
type SubagentResult struct {
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
	Usage []Event
}

// Text is the result as the parent's model reads it (gemini-cli's
// local-invocation.ts wording).
func (r SubagentResult) Text() string {
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
	newChild SubagentFactory
	approver Approver
	log      *slog.Logger
	// grace is the recovery turn's time limit; tests shorten it.
	grace time.Duration
	// timeout, when set, replaces every local agent's time limit (tests).
	timeout time.Duration
	// remotes runs the calls of remote agents; nil when the session has
	// none.
	remotes RemoteInvoker
}

// newSubagentTool returns the invoke_agent tool over the definitions, or
// nil when there are none.
func newSubagentTool(defs []agents.Definition, newChild SubagentFactory, approver Approver) *subagentTool {
	t := &subagentTool{defs: map[string]agents.Definition{}, newChild: newChild, approver: approver, grace: SubagentGracePeriod, log: slog.Default()}
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

// SubagentToolConfig configures the invoke_agent tool of a session.
type SubagentToolConfig struct {
	// Agents are the definitions the tool offers.
	Agents []agents.Definition
	// NewChild builds a local agent's child session; without it local
	// definitions are left out.
	NewChild SubagentFactory
	// Remotes, when set, makes the RemoteInvoker that runs the calls of
	// remote agents; it is called only when the tool is made.
	Remotes NewRemoteInvoker
	// Approver asks a human about the children's calls that need one.
	Approver Approver
	// Logger receives diagnostics; default slog.Default().
	Logger *slog.Logger
}

// NewSubagentTool returns the invoke_agent tool of cfg and the function
// that releases its remote connections, or a nil tool when no definition
// is usable.
func NewSubagentTool(cfg SubagentToolConfig) (tools.Tool, func() error) {
	st := newSubagentTool(cfg.Agents, cfg.NewChild, cfg.Approver)
	if st == nil {
		return nil, func() error { return nil }
	}
	if cfg.Logger != nil {
		st.log = cfg.Logger
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

// SubagentSampling is the plugin that gives a local agent's model calls
// its definition's sampling: its temperature (default 1) and topP 0.95,
// as gemini-cli's markdown agents have. It runs after the processor
// chain, whose routing sets the model's own generation config.
func SubagentSampling(def agents.Definition) (*plugin.Plugin, error) {
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

func (t *subagentTool) Name() string                            { return InvokeAgentToolName }
func (t *subagentTool) DisplayName() string                     { return "Invoke Agent" }
func (t *subagentTool) Kind() tools.Kind                        { return tools.KindAgent }
func (t *subagentTool) Declaration() *genai.FunctionDeclaration { return t.decl }
func (t *subagentTool) Describe(args map[string]any) string {
	name, _ := args["agent_name"].(string)
	return "Delegating to " + name
}

// remote reports whether name is a remote agent: calling one sends the
// task (and what it holds) off this machine, so the policy asks first.
func (t *subagentTool) remote(name string) bool {
	return t.defs[name].Kind == agents.KindRemote
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
	parent := StreamFrom(ctx)
	var sink func(Event)
	parentID := "session"
	if parent != nil {
		sink = func(ev Event) { forwardChildEvent(parent, call.ID, name, ev) }
		parentID = parent.SessionID()
	}
	res, err := t.run(ctx, parentID, call.ID, name, prompt, sink)
	if errors.Is(err, ErrUnknownAgent) {
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
func (t *subagentTool) run(ctx context.Context, parentID, callID, name, prompt string, sink func(Event)) (SubagentResult, error) {
	def, ok := t.defs[name]
	if !ok {
		return SubagentResult{}, fmt.Errorf("%w %q", ErrUnknownAgent, name)
	}
	if strings.TrimSpace(prompt) == "" {
		prompt = "Get Started!" // gemini-cli's empty query
	}
	if def.Kind == agents.KindRemote {
		if t.remotes == nil {
			return SubagentResult{}, fmt.Errorf("%w %q: the session reaches no remote agents", ErrUnknownAgent, name)
		}
		return t.remotes.Invoke(ctx, def, prompt, sink)
	}
	return t.runLocal(ctx, def, fmt.Sprintf("%s.%s.%s", parentID, def.Name, callID), prompt, sink)
}

// runLocal runs a local subagent in a child session: the task, then, at
// its turn or time limit or when it stops without complete_task, one
// recovery turn.
func (t *subagentTool) runLocal(ctx context.Context, def agents.Definition, childID, prompt string, sink func(Event)) (SubagentResult, error) {
	start := time.Now()
	res := SubagentResult{Agent: def.Name, ThreadID: childID}
	task := &completeTask{}
	clock := &deadline{}
	child, err := t.newChild(ctx, def, childID, []tools.Tool{task}, childApprover{t.approver, def.Label(), clock})
	if err != nil {
		return res, fmt.Errorf("start subagent %s: %w", def.Name, err)
	}
	defer child.Close()
	if sink != nil {
		unsub := child.Subscribe(func(ev Event) {
			ev.Meta = withThread(ev.Meta, childID)
			sink(ev)
		})
		defer unsub()
	}
	timeout := DefaultSubagentTimeout
	switch {
	case t.timeout > 0:
		timeout = t.timeout
	case def.TimeoutMins > 0:
		timeout = time.Duration(def.TimeoutMins) * time.Minute
	}
	maxTurns := def.MaxTurns
	if maxTurns <= 0 {
		maxTurns = DefaultSubagentMaxTurns
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
		res.Result = fmt.Sprintf("Agent timed out after %s.", minutes(timeout))
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

// minutes is gemini-cli's "N minutes".
func minutes(d time.Duration) string {
	if m := int(d.Minutes()); m == 1 {
		return "1 minute"
	} else if m > 0 {
		return fmt.Sprintf("%d minutes", m)
	}
	return d.String()
}

// withThread returns meta with the child's thread id, copied so that the
// child's own event stays as it was.
func withThread(meta map[string]any, thread string) map[string]any {
	out := make(map[string]any, len(meta)+1)
	maps.Copy(out, meta)
	out["threadId"] = thread
	return out
}

// childRun drives one stream of a local child and tallies its model calls.
type childRun struct {
	child *Session
	limit time.Duration
	clock *deadline
	turns int
	usage []Event
}

// stream sends text to the child and waits for its stream to end, within
// limit, and says how it ended. A parent that gives up aborts the child
// (its shell commands too) and gets the cause back as the error.
func (r *childRun) stream(ctx context.Context, text string, maxTurns int, task *completeTask) (mode string, err error) {
	id, err := r.child.send(ctx, TextMessage(text), maxTurns)
	if err != nil {
		return "", fmt.Errorf("subagent: %w", err)
	}
	r.clock.start(r.limit, func() { r.child.Abort(errSubagentTimeout) })
	defer r.clock.stop()
	stop := context.AfterFunc(ctx, func() { r.child.Abort(context.Cause(ctx)) })
	defer stop()
	var end *AgentEnd
	var failure *ErrorData
	for ev, err := range r.child.Stream(context.WithoutCancel(ctx), id) {
		if err != nil {
			return "", err
		}
		switch ev.Type {
		case EventUsage:
			r.turns++
			r.usage = append(r.usage, ev)
		case EventError:
			if ev.Error.Fatal {
				failure = ev.Error
			}
		case EventAgentEnd:
			end = ev.AgentEnd
		}
	}
	if cause := context.Cause(ctx); cause != nil {
		return TerminateAborted, cause
	}
	switch {
	case task.done():
		return TerminateGoal, nil
	case end != nil && end.Reason == EndMaxTurns:
		return TerminateMaxTurns, nil
	case end != nil && end.Reason == EndAborted:
		return TerminateTimeout, nil
	case failure != nil:
		task.fail("Agent failed: " + failure.Message)
		return TerminateError, nil
	}
	return TerminateNoCompleteTask, nil
}

// RunAgent runs the named subagent on prompt as a child of s, outside any
// stream of s (a batch line that names an agent), and returns how it
// ended. onEvent, when set, sees the child's events. The agent must be one
// the session's invoke_agent offers; otherwise the error is
// ErrUnknownAgent.
func (s *Session) RunAgent(ctx context.Context, name, prompt string, onEvent func(Event)) (SubagentResult, error) {
	t, _ := s.cfg.tools[InvokeAgentToolName].(*subagentTool)
	if t == nil {
		return SubagentResult{}, fmt.Errorf("%w %q: no agents are defined", ErrUnknownAgent, name)
	}
	if _, ok := t.defs[name]; !ok {
		return SubagentResult{}, fmt.Errorf("%w %q (the agents are %s)", ErrUnknownAgent, name, strings.Join(t.names, ", "))
	}
	return t.run(ctx, s.cfg.sessionID, s.cfg.newID(), name, prompt, onEvent)
}

// forwardChildEvent shows a child's event on the parent's stream as a
// tool_update of the invoke_agent call: the child's thread id and event
// in data, a one-line summary as content. The child's usage goes too, so
// that the parent's totals count the subagent's tokens.
func forwardChildEvent(parent Stream, callID, agent string, ev Event) {
	switch ev.Type {
	case EventMessage, EventToolRequest, EventToolUpdate, EventToolResponse, EventError, EventUsage:
	default:
		return
	}
	if ev.Type == EventMessage && ev.Message.Role != RoleAgent {
		return
	}
	var text string
	switch {
	case ev.Message != nil:
		for _, p := range ev.Message.Content {
			switch p.Type {
			case PartText:
				text += p.Text
			case PartThought:
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
	up := &ToolUpdate{
		RequestID: callID,
		Data:      map[string]any{"threadId": thread, "agentName": agent, "event": &child},
	}
	if text != "" {
		up.Content = []ContentPart{TextPart(text)}
	}
	parent.Emit(Event{Type: EventToolUpdate, ToolUpdate: up})
}

// childApprover sends a child's confirmations to the parent's driver,
// naming the agent that asks; without a parent approver they are denied,
// as in a batch run.
type childApprover struct {
	parent Approver
	agent  string
	// clock is the child's time limit, paused while a human decides, as
	// gemini-cli pauses a subagent's deadline during a confirmation.
	clock *deadline
}

// Executing passes the start of a child's call to a parent approver that
// reports it (the A2A server shows the child's approved call running).
func (a childApprover) Executing(ctx context.Context, callID string) {
	if o, ok := a.parent.(ExecutionObserver); ok {
		o.Executing(ctx, callID)
	}
}

func (a childApprover) Approve(ctx context.Context, req ApprovalRequest) (Outcome, error) {
	if a.parent == nil {
		return Cancel, nil
	}
	req.DisplayName = a.agent + " › " + req.DisplayName
	a.clock.pause()
	defer a.clock.resume()
	return a.parent.Approve(ctx, req)
}

// deadline is a subagent run's time limit that can be paused. Its zero
// value is stopped; pause and resume nest.
type deadline struct {
	mu      sync.Mutex
	timer   *time.Timer
	fire    func()
	left    time.Duration // time left when the timer is not running
	since   time.Time     // when the running timer was started
	paused  int
	running bool
	fired   bool // the limit was used up: resume must not arm it again
}

// start runs the limit d, calling fire when it is used up.
func (d *deadline) start(limit time.Duration, fire func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fire, d.left, d.running, d.fired = fire, limit, true, false
	if d.paused == 0 {
		d.since, d.timer = time.Now(), time.AfterFunc(limit, fire)
	}
}

// stop ends the limit.
func (d *deadline) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.running = false
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
}

func (d *deadline) pause() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.paused++
	if d.paused == 1 && d.timer != nil {
		if d.timer.Stop() {
			d.left -= time.Since(d.since)
		} else {
			d.fired = true
		}
		d.timer = nil
	}
}

func (d *deadline) resume() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.paused--
	if d.paused == 0 && d.running && !d.fired && d.timer == nil {
		d.since, d.timer = time.Now(), time.AfterFunc(max(d.left, 0), d.fire)
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

// SubagentRules are gemini-cli's rules appended to a subagent's system
// prompt.
const SubagentRules = `

# Rules
- You are a subagent working on a task handed to you by another agent; nobody can answer questions while you work.
- When the task is done, you MUST call the ` + "`complete_task`" + ` tool with your final result. Call it alone in its turn, as your last action.
- Work only with the tools you have; do not ask the user for anything.`
