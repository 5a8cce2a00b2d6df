package policy

import (
	"regexp"
	"sync"
)

// Settings are gemini-cli's settings and flags that map onto rules.
type Settings struct {
	// ToolsExclude is tools.exclude: each denied (4.4).
	ToolsExclude []string
	// ToolsAllowed is tools.allowed, or --allowed-tools' list when
	// AllowedFlagGiven: each allowed (4.3); run_shell_command(git) allows
	// the prefix git and denies every other shell command (4.29).
	ToolsAllowed []string
	// ToolsCore is tools.core: each allowed (4.25), every other tool denied
	// (4.24), outside plan mode.
	ToolsCore []string
	// ConfirmationRequired is tools.confirmationRequired: each asks (4.35).
	ConfirmationRequired []string
	// AllowedFlagGiven is true when --allowed-tools was given: its list,
	// passed in ToolsAllowed, replaces tools.allowed.
	AllowedFlagGiven bool
	// MCPExcluded is mcp.excluded: the servers' tools denied (4.9).
	MCPExcluded []string
	// MCPAllowed is mcp.allowed (or --allowed-mcp-server-names): the
	// servers' tools allowed outside plan mode (4.1).
	MCPAllowed []string
	// TrustedServers are the MCP servers with trust: true: their tools
	// allowed outside plan mode (4.2).
	TrustedServers []string
	// Interactive is true for an interactive session; a non-interactive one
	// also excludes ask_user.
	Interactive bool
	// MCPServers are every configured MCP server's name, and
	// MCPAutoAllowInHeadless is mcp.autoAllowInHeadless: in a
	// non-interactive session every server neither allowed nor trusted has
	// its tools allowed outside plan mode (4.1).
	MCPServers             []string
	MCPAutoAllowInHeadless bool
}

var narrowedToolRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([a-zA-Z0-9_-]+)\(([^\n\r\x{2028}\x{2029}]*)\)$`) })

func shellAlias(t string) string {
	if isShellTool(t) {
		return shellToolName
	}
	return t
}

// SettingsRules returns the rules gemini-cli derives from settings and
// flags (its createPolicyEngineConfig), with their priorities:
// mcp.excluded 4.9, tools.exclude 4.4, tools.confirmationRequired 4.35,
// tools.allowed 4.3 (its shell narrowing 4.29), tools.core 4.25 (its
// allowlist enforcement 4.24), trusted servers 4.2, mcp.allowed 4.1.
func SettingsRules(s Settings) ([]Rule, error) {
	user := float64(TierUser) // float arithmetic as gemini-cli does it
	nonPlan := func() []Mode { return []Mode{ModeDefault, ModeAutoEdit, ModeYolo} }
	mcpName := func(srv string) string {
		if srv == "*" {
			return mcpToolPrefix + "*"
		}
		return mcpToolPrefix + srv + "_*"
	}
	var rules []Rule
	for _, srv := range s.MCPExcluded {
		rules = append(rules, Rule{ToolName: mcpName(srv), MCPName: srv, Decision: Deny, Priority: user + 0.9, Source: "Settings (MCP Excluded)"})
	}
	exclude := s.ToolsExclude
	if !s.Interactive && !slicesContains(exclude, "ask_user") {
		exclude = append(append([]string(nil), exclude...), "ask_user")
	}
	for _, t := range exclude {
		rules = append(rules, Rule{ToolName: t, Decision: Deny, Priority: user + 0.4, Source: "Settings (Tools Excluded)"})
	}
	mapTools := func(tools []string, prio float64, source string, modes func() []Mode, narrowDeny bool) {
		var narrowed []string
		m := func() []Mode {
			if modes == nil {
				return nil
			}
			return modes()
		}
		for _, t := range tools {
			if sm := narrowedToolRE().FindStringSubmatch(t); sm != nil {
				name := shellAlias(sm[1])
				if name != shellToolName {
					rules = append(rules, Rule{ToolName: name, Decision: Allow, Priority: prio, Source: source, Modes: m()})
					continue
				}
				if !slicesContains(narrowed, name) {
					narrowed = append(narrowed, name)
				}
				if sm[2] != "" {
					rules = append(rules, Rule{ToolName: name, Decision: Allow, Priority: prio, Source: source, Modes: m(),
						ArgsPattern: CommandPrefixPattern(sm[2]), CommandPrefix: sm[2]})
				}
				continue
			}
			rules = append(rules, Rule{ToolName: shellAlias(t), Decision: Allow, Priority: prio, Source: source, Modes: m()})
		}
		if narrowDeny {
			for _, n := range narrowed {
				rules = append(rules, Rule{ToolName: n, Decision: Deny, Priority: prio - 0.01, Source: source + " (Narrowing Enforcement)", Modes: m()})
			}
		}
	}
	if len(s.ToolsAllowed) > 0 {
		mapTools(s.ToolsAllowed, user+0.3, "Settings (Tools Allowed)", nil, true)
	}
	for _, t := range s.ConfirmationRequired {
		rules = append(rules, Rule{ToolName: shellAlias(t), Decision: AskUser, Priority: user + 0.35, Source: "Settings (Confirmation Required)"})
	}
	if len(s.ToolsCore) > 0 {
		mapTools(s.ToolsCore, user+0.25, "Settings (Core Tools)", nonPlan, false)
		rules = append(rules, Rule{ToolName: "*", Decision: Deny, Priority: user + 0.25 - 0.01, Source: "Settings (Core Tools Allowlist Enforcement)", Modes: nonPlan()})
	}
	for _, srv := range s.TrustedServers {
		rules = append(rules, Rule{ToolName: mcpToolPrefix + srv + "_*", MCPName: srv, Decision: Allow, Priority: user + 0.2, Source: "Settings (MCP Trusted)", Modes: nonPlan()})
	}
	for _, srv := range s.MCPAllowed {
		rules = append(rules, Rule{ToolName: mcpName(srv), MCPName: srv, Decision: Allow, Priority: user + 0.1, Source: "Settings (MCP Allowed)", Modes: nonPlan()})
	}
	if !s.Interactive && s.MCPAutoAllowInHeadless {
		for _, srv := range s.MCPServers {
			if slicesContains(s.MCPAllowed, srv) || slicesContains(s.MCPAllowed, "*") || slicesContains(s.TrustedServers, srv) {
				continue
			}
			rules = append(rules, Rule{ToolName: mcpName(srv), MCPName: srv, Decision: Allow, Priority: user + 0.1, Source: "Settings (Headless MCP Auto-Allow)", Modes: nonPlan()})
		}
	}
	for i := range rules {
		if rules[i].ArgsPattern != "" {
			if _, err := checkJSRegexp(rules[i].ArgsPattern); err != nil {
				return nil, err
			}
		}
	}
	return rules, nil
}
