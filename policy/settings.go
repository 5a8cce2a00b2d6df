package policy

// Settings are gemini-cli's settings and flags that map onto rules.
type Settings struct {
	// ToolsExclude is tools.exclude.
	ToolsExclude []string
	// ToolsAllowed is tools.allowed (or --allowed-tools' list when AllowedFlagGiven).
	ToolsAllowed []string
	// ToolsCore is tools.core.
	ToolsCore []string
	// ConfirmationRequired lists tools that always ask.
	ConfirmationRequired []string
	// AllowedFlagGiven is true when --allowed-tools was given: it replaces tools.allowed.
	AllowedFlagGiven bool
	// MCPExcluded is mcp.excluded.
	MCPExcluded []string
	// MCPAllowed is mcp.allowed.
	MCPAllowed []string
	// TrustedServers are the MCP servers with trust: true.
	TrustedServers []string
	// Interactive is true for an interactive session.
	Interactive bool
}

// SettingsRules returns the rules settings imply.
func SettingsRules(s Settings) ([]Rule, error) { return nil, nil }
