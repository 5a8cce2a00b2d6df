package policy

import (
	"errors"
	"fmt"
)

// Decision is what a rule decides for a tool call.
type Decision int

// The decisions. The zero Decision is invalid.
const (
	// Allow runs the call without asking.
	Allow Decision = iota + 1
	// AskUser asks the user to confirm the call.
	AskUser
	// Deny refuses the call.
	Deny
)

// String returns gemini-cli's name of the decision: "allow", "ask_user" or "deny".
func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case AskUser:
		return "ask_user"
	case Deny:
		return "deny"
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// ParseDecision parses "allow", "ask_user" or "deny".
func ParseDecision(s string) (Decision, error) {
	switch s {
	case "allow":
		return Allow, nil
	case "ask_user":
		return AskUser, nil
	case "deny":
		return Deny, nil
	}
	return 0, fmt.Errorf("%w: %q", ErrInvalidDecision, s)
}

// Mode is an approval mode.
type Mode string

// The approval modes.
const (
	ModeDefault  Mode = "default"
	ModeAutoEdit Mode = "autoEdit"
	ModeYolo     Mode = "yolo"
	ModePlan     Mode = "plan"
)

// Sentinel errors.
var (
	// ErrInvalidMode is returned by ParseMode for an unknown mode.
	ErrInvalidMode = errors.New("policy: invalid approval mode")
	// ErrInvalidDecision is returned for an unknown decision.
	ErrInvalidDecision = errors.New("policy: invalid decision")
	// ErrInvalidRule is returned by New and Add for a rule that cannot be used.
	ErrInvalidRule = errors.New("policy: invalid rule")
	// ErrUnsupportedRegex is returned for a JavaScript regular expression
	// RE2 cannot express (lookarounds, backreferences).
	ErrUnsupportedRegex = errors.New("policy: regular expression not supported")
	// ErrCorrupted is the warning a Saver returns when it found its file
	// corrupted and moved it aside.
	ErrCorrupted = errors.New("policy: corrupted policy file")
)

// ParseMode parses an approval mode; it accepts "auto_edit" as well as "autoEdit".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "default":
		return ModeDefault, nil
	case "autoEdit", "auto_edit":
		return ModeAutoEdit, nil
	case "yolo":
		return ModeYolo, nil
	case "plan":
		return ModePlan, nil
	}
	return "", fmt.Errorf("%w: %q", ErrInvalidMode, s)
}

// Tier is where a rule comes from; a higher tier wins.
type Tier int

// The tiers.
const (
	TierDefault   Tier = 1
	TierExtension Tier = 2
	TierWorkspace Tier = 3
	TierUser      Tier = 4
	TierAdmin     Tier = 5
)

// String returns the tier's name as gemini-cli writes it in messages: "Default", "Extension", ...
func (t Tier) String() string {
	switch t {
	case TierDefault:
		return "Default"
	case TierExtension:
		return "Extension"
	case TierWorkspace:
		return "Workspace"
	case TierUser:
		return "User"
	case TierAdmin:
		return "Admin"
	}
	return fmt.Sprintf("Tier(%d)", int(t))
}

// Rule is one rule after loading. A commandPrefix list is expanded into one
// Rule per prefix.
type Rule struct {
	// ToolName is the tool the rule is for: "" or "*" any tool, "mcp_*" any
	// MCP tool, "mcp_<srv>_*" any tool of one server; MCP tools in full form
	// mcp_<srv>_<tool>. Any other "*" is literal.
	ToolName string
	// MCPName constrains the MCP server: "" unconstrained, "*" any server.
	MCPName string
	// Subagent constrains the subagent that issued the call.
	Subagent string
	// ArgsPattern is a regular expression source (JavaScript syntax as
	// written, translated to RE2 by New) matched against the call's stable
	// arguments JSON.
	ArgsPattern string
	// CommandPrefix is set when the rule came from commandPrefix (kept for
	// saving); ArgsPattern then holds its regular expression (New builds it
	// when ArgsPattern is empty).
	CommandPrefix string
	// Decision is what the rule decides.
	Decision Decision
	// Priority is the effective priority: tier + p/1000.
	Priority float64
	// Modes are the approval modes the rule applies in; nil: every mode.
	Modes []Mode
	// Interactive constrains interactivity; nil: both.
	Interactive *bool
	// ToolAnnotations must all equal the call's annotations.
	ToolAnnotations map[string]any
	// AllowRedirection keeps an allowed shell command allowed when it
	// redirects to a file.
	AllowRedirection bool
	// DenyMessage is shown when the rule denies.
	DenyMessage string
	// Source names where the rule came from: "<Tier>: <file>",
	// "Settings (tools.allowed)", "Dynamic (Confirmed)", ...
	Source string
}

// Call is one tool call to decide.
type Call struct {
	// Tool is the name the model called; MCP tools as declared to the model.
	Tool string
	// Server is the MCP server's name, "" for a built-in tool. When set,
	// the call is matched under gemini-cli's name for it,
	// mcp_<Server>_<ServerTool> (ServerTool defaulting to Tool), whatever
	// name it was declared under.
	Server string
	// ServerTool is the tool's own name on its MCP server ("" for built-in).
	ServerTool string
	// Args are the call's arguments.
	Args map[string]any
	// Annotations are the MCP tool's annotations (readOnlyHint, ...); nil for built-ins.
	Annotations map[string]any
	// Subagent is the subagent that issued the call, "" for the main agent.
	Subagent string
	// Mode is the session's approval mode ("" is default; "auto_edit" is
	// read as autoEdit).
	Mode Mode
	// Interactive is true when someone can answer an ask.
	Interactive bool
	// Trusted is true when the workspace is trusted.
	Trusted bool
	// Workspace is the workspace root. The shell heuristics use it to tell
	// whether a read-only command's paths (and dir_path) stay inside, and
	// additional_permissions paths are checked against it. "": unknown, so
	// any absolute, home-relative or climbing path counts as outside.
	Workspace string
}

// Result is the decision for a Call.
type Result struct {
	// Decision is the decision.
	Decision Decision
	// DenyMessage is the deciding rule's denyMessage, "" when none.
	DenyMessage string
	// Rule is the deciding rule; nil when no rule matched.
	Rule *Rule
}
