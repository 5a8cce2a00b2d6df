package policy

import (
	"errors"
	"fmt"
)

// Outcome is the user's "always" answer to a confirmation.
type Outcome string

// The outcomes that add rules.
const (
	// ProceedAlways allows the call (narrowed as the tool narrows it) for the session.
	ProceedAlways Outcome = "proceed_always"
	// ProceedAlwaysAndSave also persists the rule (a Saver, user tier 4.95).
	ProceedAlwaysAndSave Outcome = "proceed_always_and_save"
	// ProceedAlwaysTool allows an MCP tool for the session.
	ProceedAlwaysTool Outcome = "proceed_always_tool"
	// ProceedAlwaysServer allows every tool of an MCP server for the session.
	ProceedAlwaysServer Outcome = "proceed_always_server"
)

// SourceConfirmed is the Source of the rules AlwaysRules returns.
const SourceConfirmed = "Dynamic (Confirmed)"

var (
	// ErrInvalidOutcome is returned by AlwaysRules for an outcome that is not an "always" one.
	ErrInvalidOutcome = errors.New("policy: not an always outcome")
	// ErrNoNarrowing is returned by AlwaysRules for a tool that must be
	// narrowed (a path, a pattern, a command) when the call lacks the argument.
	ErrNoNarrowing = errors.New("policy: the call lacks the argument the rule is narrowed by")
)

// modesByPermissiveness is gemini-cli's MODES_BY_PERMISSIVENESS.
var modesByPermissiveness = [...]Mode{ModePlan, ModeDefault, ModeAutoEdit, ModeYolo}

// narrowedBy is the argument each narrowing tool's always rule is pinned to.
var narrowedBy = map[string]string{
	"read_file": "file_path", "write_file": "file_path", "replace": "file_path",
	"list_directory": "dir_path", "glob": "pattern", "grep_search": "pattern",
	"read_many_files": "include",
}

// ParamArgsPattern is the argsPattern pinning a top-level argument to a
// value: NUL, "name":<JSON value>, NUL, regex-escaped. gemini-cli writes
// "\\0" where it means NUL, so its rules never match; this one does.
func ParamArgsPattern(name string, value any) string {
	enc := appendStable(nil, value, false)
	return `\x00` + escapeRegex(`"`+name+`":`+string(enc)) + `\x00`
}

// AlwaysRules returns the rules an "always" answer to a call adds, and
// whether the session switches to autoEdit (proceed_always on replace or
// write_file). The rules allow in the call's mode and every more
// permissive one (plan < default < autoEdit < yolo), at priority 3.95, or
// 4.95 for ProceedAlwaysAndSave (to be persisted with a Saver):
//
//   - run_shell_command: one rule per distinct root command of the
//     unwrapped command line (commandPrefix), or the whole command when none
//     can be found; AllowRedirection when the command redirects;
//   - read_file, write_file, replace: file_path; list_directory: dir_path;
//     glob, grep_search: pattern; read_many_files: include — each pinned by
//     ParamArgsPattern;
//   - an MCP tool (Call.Server set): ProceedAlwaysServer allows every tool
//     of the server (mcp_<srv>_*), the other outcomes the tool; MCPName set;
//   - any other tool: the tool, whatever its arguments.
//
// ProceedAlwaysTool and ProceedAlwaysServer add nothing for a built-in tool.
func AlwaysRules(c Call, o Outcome) (rules []Rule, switchToAutoEdit bool, err error) {
	switch o {
	case ProceedAlways, ProceedAlwaysAndSave, ProceedAlwaysTool, ProceedAlwaysServer:
	default:
		return nil, false, fmt.Errorf("%w: %q", ErrInvalidOutcome, o)
	}
	mode := c.Mode
	switch mode {
	case "":
		mode = ModeDefault
	case "auto_edit":
		mode = ModeAutoEdit
	}
	var modes []Mode
	for i, m := range modesByPermissiveness {
		if m == mode {
			modes = append([]Mode(nil), modesByPermissiveness[i:]...)
		}
	}
	tier := float64(TierWorkspace) // gemini-cli's session rules: 3.95
	if o == ProceedAlwaysAndSave {
		tier = float64(TierUser)
	}
	prio := tier + float64(alwaysFrac)/1000
	base := Rule{Decision: Allow, Priority: prio, Modes: modes, Source: SourceConfirmed}
	if c.Server != "" {
		tool := c.ServerTool
		if tool == "" {
			tool = c.Tool
		}
		r := base
		r.MCPName = c.Server
		r.ToolName = formatMCPToolName(c.Server, tool)
		if o == ProceedAlwaysServer {
			r.ToolName = formatMCPToolName(c.Server, "*")
		}
		return []Rule{r}, false, nil
	}
	if o != ProceedAlways && o != ProceedAlwaysAndSave {
		return nil, false, nil
	}
	switchToAutoEdit = o == ProceedAlways && (c.Tool == "replace" || c.Tool == "write_file")
	if isShellTool(c.Tool) {
		command, _ := c.Args["command"].(string)
		if command == "" {
			return nil, switchToAutoEdit, fmt.Errorf("%w: %s needs command", ErrNoNarrowing, c.Tool)
		}
		stripped := stripShellWrapper(command)
		var prefixes []string
		for _, r := range commandRoots(stripped, nil) {
			if !slicesContains(prefixes, r) {
				prefixes = append(prefixes, r)
			}
		}
		if len(prefixes) == 0 {
			prefixes = []string{command}
		}
		redir := hasRedirection(stripped, nil)
		for _, p := range prefixes {
			r := base
			r.ToolName = c.Tool
			r.CommandPrefix = p
			r.ArgsPattern = CommandPrefixPattern(p)
			r.AllowRedirection = redir
			r.Modes = append([]Mode(nil), modes...)
			rules = append(rules, r)
		}
		return rules, switchToAutoEdit, nil
	}
	r := base
	r.ToolName = c.Tool
	if arg, ok := narrowedBy[c.Tool]; ok {
		v, present := c.Args[arg]
		if !present || v == nil {
			return nil, switchToAutoEdit, fmt.Errorf("%w: %s needs %s", ErrNoNarrowing, c.Tool, arg)
		}
		r.ArgsPattern = ParamArgsPattern(arg, v)
	}
	return []Rule{r}, switchToAutoEdit, nil
}
