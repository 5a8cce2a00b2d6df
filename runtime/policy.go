package runtime

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/agentry-dev/agentry/policy"
	"github.com/agentry-dev/agentry/tools"
)

// ApprovalMode is how much the approval policy lets run without a human,
// with gemini-cli's CLI spelling (settings general.defaultApprovalMode,
// --approval-mode).
type ApprovalMode string

// Approval modes, in order of permissiveness.
const (
	// ApprovalPlan runs only read-only tools and denies the rest.
	ApprovalPlan ApprovalMode = "plan"
	// ApprovalDefault runs read-only tools and asks for the rest.
	ApprovalDefault ApprovalMode = "default"
	// ApprovalAutoEdit also runs file edits.
	ApprovalAutoEdit ApprovalMode = "auto_edit"
	// ApprovalYolo runs everything.
	ApprovalYolo ApprovalMode = "yolo"
)

// Rank orders the approval modes by permissiveness: plan 0, default 1,
// auto_edit 2, yolo 3. It returns -1 for an unknown mode.
func (m ApprovalMode) Rank() int {
	switch m {
	case ApprovalPlan:
		return 0
	case ApprovalDefault:
		return 1
	case ApprovalAutoEdit:
		return 2
	case ApprovalYolo:
		return 3
	}
	return -1
}

// Decision is what the approval policy decides for one tool call.
type Decision int

// Policy decisions.
const (
	// Allow runs the call.
	Allow Decision = iota
	// Ask needs a human: an interactive driver asks one; a batch run denies.
	Ask
	// Deny refuses the call.
	Deny
)

// String returns the decision's name.
func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	}
	return "deny"
}

// Outcome is a human's answer to an approval request, with gemini-cli's
// ToolConfirmationOutcome spelling.
type Outcome string

// Approval outcomes.
const (
	// ProceedOnce runs this call.
	ProceedOnce Outcome = "proceed_once"
	// ProceedAlways runs this call and, for the rest of the session, the
	// tool's later calls; for run_shell_command, the later commands that
	// start with this command's first word.
	ProceedAlways Outcome = "proceed_always"
	// ProceedAlwaysTool runs this call and the MCP tool's later calls for
	// the rest of the session (gemini-cli's "Allow tool for this
	// session"); for a tool of no MCP server it is ProceedAlways.
	ProceedAlwaysTool Outcome = "proceed_always_tool"
	// ProceedAlwaysServer runs this call and, for the rest of the
	// session, every tool of its MCP server (gemini-cli's "Allow all
	// server tools for this session"); for a tool of no MCP server it is
	// ProceedAlways.
	ProceedAlwaysServer Outcome = "proceed_always_server"
	// ProceedAlwaysAndSave is ProceedAlways whose rules are also saved
	// to a policy file, so that later sessions allow the same calls
	// (gemini-cli's "Allow … for all future sessions").
	ProceedAlwaysAndSave Outcome = "proceed_always_and_save"
	// Cancel refuses the call.
	Cancel Outcome = "cancel"
)

// proceeds reports whether o runs the call.
func (o Outcome) proceeds() bool {
	switch o {
	case ProceedOnce, ProceedAlways, ProceedAlwaysTool, ProceedAlwaysServer, ProceedAlwaysAndSave:
		return true
	}
	return false
}

// ApprovalRequest describes a tool call waiting for a human.
type ApprovalRequest struct {
	CallID      string
	Tool        string
	DisplayName string
	Description string
	Kind        tools.Kind
	Args        map[string]any
	// MCP is set for a tool of an MCP server: gemini-cli's McpDetails.
	MCP *MCPDetails
	// Diff is the change an edit tool's call would make (tools.Previewer),
	// for the prompt to show; nil for other tools or when the preview
	// failed (the call will then fail the same way when it runs).
	Diff *tools.FileDiff
	// AlwaysHidden is set when no "always" answer may be offered
	// (security.disableAlwaysAllow, or a workspace that is not trusted, as
	// gemini-cli's confirmation dialog): only once and cancel (and modify).
	AlwaysHidden bool
	// SaveHidden is set when the "… all future sessions" answer
	// (ProceedAlwaysAndSave) may not be offered: gemini-cli offers it only
	// with security.enablePermanentToolApproval. AlwaysHidden hides it too.
	SaveHidden bool
}

// MCPDetails name the MCP server and tool behind a call, for approval
// prompts (gemini-cli's ToolMcpConfirmationDetails).
type MCPDetails struct {
	ServerName string
	ToolName   string
}

// Approver asks a human whether a tool call may run. Interactive drivers
// (the A2A server, a terminal) provide one; batch runs have none, so every
// call that needs a human is denied there.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (Outcome, error)
}

// ErrNoHuman is returned by an Approver that has nobody to ask about this
// call (an A2A client that cannot answer questions): the call is denied as
// in a run without an Approver.
var ErrNoHuman = errors.New("no human to ask")

// EditingApprover is an Approver whose human may change the call before
// approving it, such as the content of a file an edit writes. The
// scheduler uses ApproveEdit in place of Approve when the approver has it.
type EditingApprover interface {
	Approver
	// ApproveEdit is Approve returning, with a proceed outcome, the
	// arguments the call runs with instead of the model's; nil keeps them.
	ApproveEdit(ctx context.Context, req ApprovalRequest) (Outcome, map[string]any, error)
}

// ExecutionObserver is implemented by an Approver that reports when a
// call, approved or allowed by the policy, starts to execute (the A2A
// server's EXECUTING status). Executing is called on the scheduler's
// goroutine after the call's tool_request event and before any of its
// tool_update events.
type ExecutionObserver interface {
	Executing(ctx context.Context, callID string)
}

// Policy decides which tool calls run without a human. It puts agentry's
// hardening in front of gemini-cli's policy engine (package policy): a
// write to a protected path (tools.ProtectedPath) asks in every mode but
// yolo (plan denies), whatever the rules say; every other call is decided
// by the engine's rules — the bundled defaults, the policy files, the
// settings' rules and the session's "always" answers, each holding in the
// mode it was given in and the more permissive ones. The mode may change
// (SetMode). It is safe for concurrent use.
type Policy struct {
	mu       sync.RWMutex // guards mode
	mode     ApprovalMode
	shared   *policyShared
	subagent string // the subagent whose calls this policy decides, "" for the main agent
}

// policyShared is what a session's policy shares with the policies of its
// subagents' child sessions: one engine, so that an "always" answer given
// in one holds in the others, as gemini-cli's one engine does.
type policyShared struct {
	engine     *policy.Engine
	trusted    bool
	saver      *policy.Saver
	hideAlways bool
	permanent  bool     // security.enablePermanentToolApproval
	allowed    []string // tools.allowed / --allowed-tools, for UnknownTools

	mu      sync.Mutex
	derived map[string]bool // keys of the rules derived from tools (remote agents, trusted servers)

	hinted sync.Map // tool name → true once the user was told what would allow it
}

// PolicyOption configures a Policy made by NewPolicyWith.
type PolicyOption func(*policyShared)

// WithTrusted tells the engine the workspace is trusted: gemini-cli's
// shell heuristics ask before git in an untrusted folder.
func WithTrusted(trusted bool) PolicyOption {
	return func(s *policyShared) { s.trusted = trusted }
}

// WithSaver persists the rules of proceed_always_and_save answers; without
// one such an answer holds for the session only.
func WithSaver(sv *policy.Saver) PolicyOption {
	return func(s *policyShared) { s.saver = sv }
}

// WithoutAlwaysOptions hides the "always" answers from approval requests
// (security.disableAlwaysAllow); the engine should be made with
// policy.WithoutAlwaysAllow too.
func WithoutAlwaysOptions() PolicyOption {
	return func(s *policyShared) { s.hideAlways = true }
}

// WithPermanentApproval offers the "… all future sessions" answer
// (proceed_always_and_save) in approval requests
// (security.enablePermanentToolApproval); without it requests have
// SaveHidden set.
func WithPermanentApproval() PolicyOption {
	return func(s *policyShared) { s.permanent = true }
}

// Offered reports whether an approval request offers outcome o: once and
// cancel always; the "always" answers unless AlwaysHidden; the save answer
// unless SaveHidden too.
func (r ApprovalRequest) Offered(o Outcome) bool {
	switch o {
	case ProceedOnce, Cancel:
		return true
	case ProceedAlwaysAndSave:
		return !r.AlwaysHidden && !r.SaveHidden
	case ProceedAlways, ProceedAlwaysTool, ProceedAlwaysServer:
		return !r.AlwaysHidden
	}
	return false
}

// alwaysHidden reports whether a request hides the "always" answers:
// security.disableAlwaysAllow, or a workspace that is not trusted.
func (s *policyShared) alwaysHidden() bool { return s.hideAlways || !s.trusted }

// WithAllowedTools names the tools.allowed rules the engine was given, so
// that UnknownTools can report the ones that name no tool.
func WithAllowedTools(allowed []string) PolicyOption {
	return func(s *policyShared) { s.allowed = slices.Clone(allowed) }
}

// ErrUnknownApprovalMode reports an approval mode that is none of plan,
// default, auto_edit and yolo.
var ErrUnknownApprovalMode = errors.New("unknown approval mode")

func checkMode(mode ApprovalMode) error {
	if mode.Rank() < 0 {
		return fmt.Errorf("%w %q (want plan, default, auto_edit or yolo)", ErrUnknownApprovalMode, mode)
	}
	return nil
}

// engineMode is gemini-cli's spelling of an approval mode.
func engineMode(m ApprovalMode) policy.Mode {
	if m == ApprovalAutoEdit {
		return policy.ModeAutoEdit
	}
	return policy.Mode(m)
}

// NewPolicy returns the policy of an approval mode and allow rules
// (settings tools.allowed): the engine's bundled defaults and the rules
// policy.SettingsRules makes of allowed.
func NewPolicy(mode ApprovalMode, allowed []string) (*Policy, error) {
	for _, a := range allowed {
		if err := checkAllowRule(a); err != nil {
			return nil, err
		}
	}
	settings, err := policy.SettingsRules(policy.Settings{ToolsAllowed: allowed})
	if err != nil {
		return nil, err
	}
	engine, err := policy.New(append(policy.Defaults(), settings...))
	if err != nil {
		return nil, err
	}
	return NewPolicyWith(mode, engine, WithAllowedTools(allowed))
}

// NewPolicyWith returns the policy of an approval mode deciding through
// engine.
func NewPolicyWith(mode ApprovalMode, engine *policy.Engine, opts ...PolicyOption) (*Policy, error) {
	if err := checkMode(mode); err != nil {
		return nil, err
	}
	if engine == nil {
		return nil, errors.New("runtime: NewPolicyWith needs an engine")
	}
	s := &policyShared{engine: engine, derived: map[string]bool{}}
	for _, o := range opts {
		o(s)
	}
	return &Policy{mode: mode, shared: s}, nil
}

// ForSubagent returns the policy of a subagent's child session: the same
// engine (the session's "always" answers hold there, and the child's hold
// here), the parent's current mode, and the subagent's name in every call,
// for rules with a subagent key.
func (p *Policy) ForSubagent(name string) *Policy {
	return &Policy{mode: p.Mode(), shared: p.shared, subagent: name}
}

// Engine returns the engine the policy decides through.
func (p *Policy) Engine() *policy.Engine { return p.shared.engine }

// Mode returns the approval mode.
func (p *Policy) Mode() ApprovalMode {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.mode
}

// SetMode changes the approval mode for the calls decided from now on
// (gemini-cli's Shift+Tab, agentry's /approval-mode); a call already
// waiting for a human still waits. An unknown mode is refused with
// ErrUnknownApprovalMode and the mode is left as it was.
func (p *Policy) SetMode(mode ApprovalMode) error {
	if err := checkMode(mode); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = mode
	return nil
}

const shellTool = "run_shell_command"

// checkAllowRule refuses a tools.allowed entry gemini-cli could not use.
func checkAllowRule(s string) error {
	s = strings.TrimSpace(s)
	name, rest, hasArgs := strings.Cut(s, "(")
	name = strings.TrimSpace(name)
	if name == "" {
		return fmt.Errorf("allowed tool %q: empty tool name", s)
	}
	if !hasArgs {
		return nil
	}
	if !strings.HasSuffix(rest, ")") {
		return fmt.Errorf("allowed tool %q: missing closing parenthesis", s)
	}
	if strings.TrimSpace(strings.TrimSuffix(rest, ")")) == "" {
		return fmt.Errorf("allowed tool %q: empty argument", s)
	}
	return nil
}

// ruleName is the tool name of an allow rule: "run_shell_command" for
// "run_shell_command(git)" and gemini-cli's legacy "ShellTool(git)".
func ruleName(s string) string {
	name, _, _ := strings.Cut(strings.TrimSpace(s), "(")
	name = strings.TrimSpace(name)
	if name == "ShellTool" {
		return shellTool
	}
	return name
}

// call is the engine's view of a call of t.
func (p *Policy) call(mode ApprovalMode, t tools.Tool, args map[string]any, interactive bool) policy.Call {
	c := policy.Call{
		Tool: t.Name(), Args: args, Subagent: p.subagent, Mode: engineMode(mode),
		Interactive: interactive, Trusted: p.shared.trusted,
	}
	if m, ok := t.(mcpTool); ok {
		c.Server, c.ServerTool, _ = m.MCP()
		if a, ok := t.(annotated); ok {
			c.Annotations = a.Annotations()
		}
	}
	return c
}

// annotated is implemented by MCP tools with annotations (readOnlyHint,
// …), which rules may match.
type annotated interface {
	Annotations() map[string]any
}

// AlwaysOutcome adds the session rules of a human's "always" answer to a
// call of t (proceed_always, proceed_always_tool, proceed_always_server,
// proceed_always_and_save), through policy.AlwaysRules: they hold in the
// current mode and the more permissive ones. switchToAutoEdit reports
// that the answer was proceed_always on a file edit, after which gemini-cli
// switches the session to auto_edit (the caller does). For
// proceed_always_and_save the rules are also saved through the policy's
// Saver; a failure to save is returned as saveErr while the session rules
// still hold.
func (p *Policy) AlwaysOutcome(t tools.Tool, args map[string]any, o Outcome) (switchToAutoEdit bool, saveErr, err error) {
	return p.always(p.call(p.Mode(), t, args, true), o)
}

func (p *Policy) always(c policy.Call, o Outcome) (switchToAutoEdit bool, saveErr, err error) {
	rules, sw, err := policy.AlwaysRules(c, policy.Outcome(o))
	if err != nil {
		return false, nil, err
	}
	if err := p.shared.engine.Add(rules...); err != nil {
		return false, nil, err
	}
	if o == ProceedAlwaysAndSave && len(rules) > 0 {
		if p.shared.saver == nil {
			saveErr = errors.New("no policy file to save to")
		} else {
			saveErr = p.shared.saver.Save(rules...)
		}
	}
	return sw && o == ProceedAlways, saveErr, nil
}

// AllowAlways adds the session rules of a proceed_always answer to a call
// of the built-in tool named tool: for run_shell_command its root
// commands, for another tool the tool (or the argument gemini-cli narrows
// it by). It does not switch the mode.
func (p *Policy) AllowAlways(tool string, args map[string]any) {
	_, _, _ = p.always(policy.Call{Tool: tool, Args: args, Subagent: p.subagent, Mode: engineMode(p.Mode()),
		Interactive: true, Trusted: p.shared.trusted}, ProceedAlways)
}

// AllowServer adds the session rule of a proceed_always_server answer:
// every tool of the MCP server named server, in the current mode and the
// more permissive ones. Protected paths still ask, as after any "always"
// answer.
func (p *Policy) AllowServer(server string) {
	_, _, _ = p.always(policy.Call{Tool: server + "__*", Server: server, ServerTool: "*", Subagent: p.subagent,
		Mode: engineMode(p.Mode()), Interactive: true, Trusted: p.shared.trusted}, ProceedAlwaysServer)
}

// readOnlyPriority is the priority of gemini-cli's read-only.toml rules.
const readOnlyPriority = 1.05

// defaultDecision reports gemini-cli's read-only tools its bundled
// policies leave to the default decision (ask, or deny without a human):
// agentry adds no read-only rule for them either.
func defaultDecision(tool string) bool { return tool == "read_many_files" }

// AddToolRules adds the rules a session's tools imply: gemini-cli's
// ask_user rule for each remote agent an invoke_agent tool can call
// (priority 1.13: a user's rule still allows it), the allow rule of each
// MCP server with trust: true (mcpServers.<s>.trust), and an allow rule
// at read-only.toml's priority for each built-in tool of a read-only kind
// (tools.Kind.ReadOnly). A policy shared with child sessions adds each
// once.
func (p *Policy) AddToolRules(ts []tools.Tool) error {
	var trusted []string
	var rules []policy.Rule
	for _, t := range ts {
		if m, ok := t.(mcpTool); ok {
			if server, _, trust := m.MCP(); trust && !slices.Contains(trusted, server) {
				trusted = append(trusted, server)
			}
		} else if t.Kind().ReadOnly() && !defaultDecision(t.Name()) {
			// A built-in tool that only reads runs, as gemini-cli's
			// read-only.toml allows its read-only tools by name: the
			// same rule for agentry's tools it does not name.
			rules = append(rules, policy.Rule{ToolName: t.Name(), Decision: policy.Allow, Priority: readOnlyPriority,
				Source: "Default: read-only tool"})
		}
		if l, ok := t.(AgentLister); ok {
			for _, a := range l.Agents() {
				if a.Remote {
					rules = append(rules, remoteAgentRule(t.Name(), a.Name))
				}
			}
		}
	}
	if len(trusted) > 0 {
		rs, err := policy.SettingsRules(policy.Settings{TrustedServers: trusted})
		if err != nil {
			return err
		}
		rules = append(rules, rs...)
	}
	s := p.shared
	s.mu.Lock()
	defer s.mu.Unlock()
	var fresh []policy.Rule
	for _, r := range rules {
		key := fmt.Sprintf("%s\x00%s\x00%s\x00%v\x00%v", r.ToolName, r.MCPName, r.ArgsPattern, r.Decision, r.Priority)
		if !s.derived[key] {
			s.derived[key] = true
			fresh = append(fresh, r)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	return s.engine.Add(fresh...)
}

// remoteAgentRule is gemini-cli's rule for a remote subagent: calling it
// asks, since the task leaves the machine.
func remoteAgentRule(tool, agent string) policy.Rule {
	return policy.Rule{
		ToolName:    tool,
		ArgsPattern: `"agent_name":\s*"` + regexp.QuoteMeta(agent) + `"`,
		Decision:    policy.AskUser,
		Priority:    1.13,
		Source:      "Remote agent (" + agent + ")",
	}
}

// Decide returns the decision for calling t with args in a session with a
// human to ask (an approver), and for Deny the message the model receives.
func (p *Policy) Decide(t tools.Tool, args map[string]any) (Decision, string) {
	d, msg, _, _ := p.decide(t, args, true)
	return d, msg
}

// decide is Decide for a session with or without a human, also returning
// the mode it decided in (the mode may change at any time, and the
// scheduler's later checks must follow the decision) and the engine's
// result.
func (p *Policy) decide(t tools.Tool, args map[string]any, interactive bool) (Decision, string, ApprovalMode, policy.Result) {
	mode := p.Mode()
	if mode != ApprovalYolo {
		// Writing a file that configures commands run without a further
		// approval (.git/config, hooks, settings, .env) would turn an
		// edit into a command: only a human or yolo allows it, whatever
		// the mode and the rules (an "always" answer included).
		if _, _, ok := protectedTarget(t, args); ok {
			if mode == ApprovalPlan {
				return Deny, planDenied, mode, policy.Result{Decision: policy.Deny}
			}
			return Ask, "", mode, policy.Result{Decision: policy.AskUser}
		}
	}
	res := p.shared.engine.Check(p.call(mode, t, args, interactive))
	switch res.Decision {
	case policy.Allow:
		return Allow, "", mode, res
	case policy.AskUser:
		return Ask, "", mode, res
	}
	return Deny, denialMessage(res.DenyMessage), mode, res
}

// denialMessage is gemini-cli's text of a call the policy denies.
func denialMessage(denyMessage string) string {
	if denyMessage == "" {
		return policyDenied
	}
	return policyDenied + " " + denyMessage
}

// policyDenied is gemini-cli's text of a call a rule denies.
const policyDenied = "Tool execution denied by policy."

// planDenied is the message of a call plan mode refuses.
const planDenied = "Tool execution denied by policy. You are in Plan Mode with access to read-only tools. Execution of scripts (including those from skills) is blocked."

// protectedTarget returns the first protected path (tools.ProtectedPath)
// a call of t would write, and why it is protected. A call whose paths do
// not resolve writes nothing: it fails the same way when it runs.
func protectedTarget(t tools.Tool, args map[string]any) (path, why string, ok bool) {
	fw, isWriter := t.(tools.FileWriter)
	if !isWriter {
		return "", "", false
	}
	paths, err := fw.WritePaths(args)
	if err != nil {
		return "", "", false
	}
	for _, p := range paths {
		if why, ok := tools.ProtectedPath(p); ok {
			return p, why, true
		}
	}
	return "", "", false
}

// simpleCommands parses a shell line into the words of its simple commands.
// It fails — so the call needs a human — for anything it cannot prove is
// only those commands: a redirection, command or process substitution,
// subshell, compound command, function, background job, assignment or
// variable expansion.
func simpleCommands(cmd string) ([][]string, bool) {
	file, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil || len(file.Stmts) == 0 {
		return nil, false
	}
	var commands [][]string
	ok := true
	syntax.Walk(file, func(node syntax.Node) bool {
		if !ok {
			return false
		}
		if node == nil { // Walk's end-of-children marker
			return true
		}
		switch n := node.(type) {
		case *syntax.File, *syntax.BinaryCmd:
		case *syntax.Stmt:
			if len(n.Redirs) > 0 || n.Background || n.Coprocess || n.Negated {
				ok = false
			}
		case *syntax.CallExpr:
			if len(n.Assigns) > 0 || len(n.Args) == 0 {
				ok = false
				return false
			}
			words := make([]string, 0, len(n.Args))
			for _, w := range n.Args {
				lit, isLit := literalWord(w)
				if !isLit {
					ok = false
					return false
				}
				words = append(words, lit)
			}
			commands = append(commands, words)
			return false
		default:
			ok = false
			return false
		}
		return true
	})
	return commands, ok && len(commands) > 0
}

// literalWord returns the value of a word made only of literal text and
// quotes without expansions.
func literalWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, qp := range p.Parts {
				lit, isLit := qp.(*syntax.Lit)
				if !isLit {
					return "", false
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// UnknownTools returns the tool names of the allow rules (tools.allowed,
// --allowed-tools) that name none of the tools known reports, each once,
// in rule order. Such a rule allows nothing: most often the name is
// misspelt.
func (p *Policy) UnknownTools(known func(name string) bool) []string {
	var out []string
	for _, r := range p.shared.allowed {
		name := ruleName(r)
		if !known(name) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// needsConfirmation is the error the model reads for a call that needs a
// human in a run that has none: gemini-cli's sentence, with the tool's
// display name. What would let the call run is for the user
// (confirmationHint), not the model.
func needsConfirmation(t tools.Tool) error {
	//lint:ignore ST1005 the model reads gemini-cli's sentence verbatim
	return fmt.Errorf("Tool execution for %q requires user confirmation, which is not supported in non-interactive mode.",
		t.DisplayName())
}

// confirmationHint tells the user what would let a call that needs a
// human run in a run without one: the flag, the approval mode or the
// setting.
func confirmationHint(t tools.Tool, args map[string]any) string {
	if path, why, ok := protectedTarget(t, args); ok {
		return fmt.Sprintf("%s configures commands that run without further approval (%s), so writing it needs a human's confirmation in every approval mode but yolo, whatever the allowed tools. To allow it, run with --approval-mode yolo (-y).",
			path, why)
	}
	return allowHint(t, args)
}

// hintOnce reports whether the hint for the tool named tool has not been
// given yet in this run (the session and its subagents), and marks it
// given.
func (p *Policy) hintOnce(tool string) bool {
	_, given := p.shared.hinted.LoadOrStore(tool, true)
	return !given
}

// allowHint names what would allow a call that needs approval: an allow
// rule for it (as a flag and as a setting), or the approval mode that
// runs it.
func allowHint(t tools.Tool, args map[string]any) string {
	rules := []string{t.Name()}
	mode := "--approval-mode yolo"
	switch {
	case t.Name() == shellTool:
		commands, ok := simpleCommands(stringArg(args, "command"))
		if !ok {
			return "To allow it, run with --approval-mode yolo (-y): no --allowed-tools rule matches a command line with redirections, substitutions or variables."
		}
		rules = nil
		for _, words := range commands {
			if r := shellTool + "(" + words[0] + ")"; !slices.Contains(rules, r) {
				rules = append(rules, r)
			}
		}
	case t.Kind() == tools.KindEdit:
		mode = "--approval-mode auto_edit"
	}
	quoted := make([]string, len(rules))
	for i, r := range rules {
		quoted[i] = strconv.Quote(r)
	}
	flag := strings.Join(rules, ",")
	if strings.ContainsAny(flag, "() ") {
		flag = "'" + flag + "'"
	}
	setting := strings.Join(quoted, ", ") + " to tools.allowed in settings.json"
	if m, ok := t.(mcpTool); ok {
		server, _, _ := m.MCP()
		setting += fmt.Sprintf(" (or \"trust\": true to mcpServers.%s)", server)
	}
	return fmt.Sprintf("To allow it, run with --allowed-tools %s or %s, or add %s.", flag, mode, setting)
}

func stringArg(args map[string]any, key string) string {
	s, _ := args[key].(string)
	return s
}

// RemoteAware is implemented by a tool of kind tools.KindAgent that can
// hand its task to an agent on another machine: the approval policy asks
// before such a call unless in yolo mode or a rule allows it.
type RemoteAware interface {
	// Remote reports whether the agent called name is remote.
	Remote(name string) bool
}
