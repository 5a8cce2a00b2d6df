package runtime

import "github.com/agentry-dev/agentry/plugins/hookbridge"

// HookStoppedError is the cause of a stream a hook stopped (continue:
// false); see hookbridge.StoppedError.
type HookStoppedError = hookbridge.StoppedError

// mcpTool is implemented by MCP tools: the approval request's and the
// subagents' view of the server behind a tool.
type mcpTool interface {
	MCP() (server, tool string, trust bool)
}
