package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

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
	// Cancel refuses the call.
	Cancel Outcome = "cancel"
)

// proceeds reports whether o runs the call.
func (o Outcome) proceeds() bool {
	switch o {
	case ProceedOnce, ProceedAlways, ProceedAlwaysTool, ProceedAlwaysServer:
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

// Policy decides which tool calls run without a human, following gemini-cli's
// built-in policy rules: read-only tools always run; auto_edit also runs file
// edits; yolo runs everything; plan runs only read-only tools; user allow
// rules (settings tools.allowed, --allowed-tools) run the tools they name in
// every mode, and a shell rule "run_shell_command(git status)" runs a
// command only when every command in it starts with that prefix and it has
// no redirection. A human's "always" answer adds a session rule that holds
// in the mode it was given in and the more permissive ones, as in
// gemini-cli: it lapses while the session is in a stricter mode (plan
// after default). The mode may change (SetMode). It is safe for
// concurrent use.
type Policy struct {
	mu      sync.RWMutex // guards the fields below
	mode    ApprovalMode
	rules   []allowRule
	servers []serverRule
}

type allowRule struct {
	tool   string
	prefix string // for run_shell_command; "" allows every command
	// minRank is the rank of the least permissive mode the rule holds
	// in: 0 (every mode) for a user's rule, the mode of the answer for a
	// session rule.
	minRank int
}

// serverRule allows every tool of an MCP server (proceed_always_server).
type serverRule struct {
	server  string
	minRank int
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

// NewPolicy returns the policy for an approval mode and allow rules.
func NewPolicy(mode ApprovalMode, allowed []string) (*Policy, error) {
	if err := checkMode(mode); err != nil {
		return nil, err
	}
	p := &Policy{mode: mode}
	for _, a := range allowed {
		r, err := parseAllowRule(a)
		if err != nil {
			return nil, err
		}
		p.rules = append(p.rules, r)
	}
	return p, nil
}

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

func parseAllowRule(s string) (allowRule, error) {
	s = strings.TrimSpace(s)
	name, rest, hasArgs := strings.Cut(s, "(")
	name = strings.TrimSpace(name)
	if name == "ShellTool" {
		name = shellTool
	}
	if name == "" {
		return allowRule{}, fmt.Errorf("allowed tool %q: empty tool name", s)
	}
	if !hasArgs {
		return allowRule{tool: name}, nil
	}
	if !strings.HasSuffix(rest, ")") {
		return allowRule{}, fmt.Errorf("allowed tool %q: missing closing parenthesis", s)
	}
	if name != shellTool {
		return allowRule{}, fmt.Errorf("allowed tool %q: only run_shell_command takes a command prefix", s)
	}
	prefix := strings.TrimSpace(strings.TrimSuffix(rest, ")"))
	if prefix == "" {
		return allowRule{}, fmt.Errorf("allowed tool %q: empty command prefix", s)
	}
	return allowRule{tool: name, prefix: prefix}, nil
}

// AllowAlways adds a session rule after a human chose proceed_always: the
// tool from now on, or for the shell the command's root command. The rule
// holds in the current mode and the more permissive ones.
func (p *Policy) AllowAlways(tool string, args map[string]any) {
	r := allowRule{tool: tool}
	if tool == shellTool {
		cmd, _ := args["command"].(string)
		fields := strings.Fields(cmd)
		if len(fields) == 0 {
			return
		}
		r.prefix = fields[0]
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r.minRank = p.mode.Rank()
	p.rules = append(p.rules, r)
}

// AllowServer adds a session rule after a human chose
// proceed_always_server: every tool of the MCP server named server from
// now on, in the current mode and the more permissive ones. Protected
// paths still ask, as after any "always" answer.
func (p *Policy) AllowServer(server string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.servers = append(p.servers, serverRule{server: server, minRank: p.mode.Rank()})
}

// Decide returns the decision for calling t with args, and for Deny the
// message the model receives.
func (p *Policy) Decide(t tools.Tool, args map[string]any) (Decision, string) {
	d, msg, _ := p.decide(t, args)
	return d, msg
}

// decide is Decide, also returning the mode it decided in: the mode may
// change at any time, and the scheduler's later checks must follow the
// decision.
func (p *Policy) decide(t tools.Tool, args map[string]any) (Decision, string, ApprovalMode) {
	mode := p.Mode()
	d, msg := p.decideIn(mode, t, args)
	return d, msg, mode
}

func (p *Policy) decideIn(mode ApprovalMode, t tools.Tool, args map[string]any) (Decision, string) {
	if mode != ApprovalYolo {
		// Writing a file that configures commands run without a further
		// approval (.git/config, hooks, settings, .env) would turn an
		// edit into a command: only a human or yolo allows it, whatever
		// the mode and the allow rules (an "always" answer included).
		if _, _, ok := protectedTarget(t, args); ok {
			if mode == ApprovalPlan {
				return Deny, planDenied
			}
			return Ask, ""
		}
	}
	if p.matchesRule(mode, t.Name(), args) {
		return Allow, ""
	}
	if m, ok := t.(mcpTool); ok {
		// A server the user marked trust: true runs without asking, as in
		// gemini-cli; plan mode still allows nothing but reading.
		server, _, trust := m.MCP()
		if trust && mode != ApprovalPlan {
			return Allow, ""
		}
		if p.allowsServer(mode, server) {
			return Allow, ""
		}
	}
	kind := t.Kind()
	switch {
	case kind == tools.KindAgent:
		// Handing a task to a local subagent is allowed, as gemini-cli's
		// policy allows invoke_agent; each of the child's calls goes
		// through the child's own policy in the same approval mode. A
		// remote agent gets the task (and whatever it quotes) off this
		// machine: gemini-cli asks first unless in yolo mode or a user
		// rule allows invoke_agent.
		name, _ := args["agent_name"].(string)
		if r, ok := t.(RemoteAware); ok && r.Remote(name) && mode != ApprovalYolo {
			return Ask, ""
		}
		return Allow, ""
	case kind.ReadOnly():
		return Allow, ""
	case mode == ApprovalPlan:
		return Deny, planDenied
	case mode == ApprovalYolo:
		return Allow, ""
	case mode == ApprovalAutoEdit && kind == tools.KindEdit:
		// Only an edit that names the files it writes can be checked
		// against the protected paths; any other asks.
		if _, ok := t.(tools.FileWriter); ok {
			return Allow, ""
		}
	}
	return Ask, ""
}

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

// allowsServer reports whether a session rule allows every tool of
// server in mode.
func (p *Policy) allowsServer(mode ApprovalMode, server string) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return slices.ContainsFunc(p.servers, func(r serverRule) bool {
		return r.server == server && mode.Rank() >= r.minRank
	})
}

func (p *Policy) matchesRule(mode ApprovalMode, name string, args map[string]any) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	var prefixes [][]string
	for _, r := range p.rules {
		if r.tool != name || mode.Rank() < r.minRank {
			continue
		}
		if r.prefix == "" {
			return true
		}
		prefixes = append(prefixes, strings.Fields(r.prefix))
	}
	if len(prefixes) == 0 {
		return false
	}
	cmd, _ := args["command"].(string)
	commands, ok := simpleCommands(cmd)
	if !ok {
		return false
	}
	// Every command in the line must start with an allowed prefix.
	for _, words := range commands {
		if !slices.ContainsFunc(prefixes, func(want []string) bool {
			return len(words) >= len(want) && slices.Equal(words[:len(want)], want)
		}) {
			return false
		}
	}
	return true
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

// UnknownTools returns the tool names of the allow rules that name none of
// the tools known reports, each once, in rule order. Such a rule allows
// nothing: most often the name is misspelt.
func (p *Policy) UnknownTools(known func(name string) bool) []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	var out []string
	for _, r := range p.rules {
		if !known(r.tool) && !slices.Contains(out, r.tool) {
			out = append(out, r.tool)
		}
	}
	return out
}

// needsConfirmation is the error of a call that needs a human in a run
// that has none: gemini-cli's sentence, which the model reads, then what
// would let the call run — the flag, the approval mode or the setting.
func needsConfirmation(t tools.Tool, args map[string]any) error {
	hint := allowHint(t, args)
	if path, why, ok := protectedTarget(t, args); ok {
		hint = fmt.Sprintf("%s configures commands that run without further approval (%s), so writing it needs a human's confirmation in every approval mode but yolo, whatever the allowed tools. To allow it, run with --approval-mode yolo (-y).",
			path, why)
	}
	//lint:ignore ST1005 the model reads gemini-cli's sentence verbatim
	return fmt.Errorf("Tool execution for %q requires user confirmation, which is not supported in non-interactive mode. %s",
		t.DisplayName(), hint)
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
