package config

import "fmt"

// LoopDetectionSettings tune loop detection (gemini-cli's
// LoopDetectionService). gemini-cli has only the on/off switch
// (model.disableLoopDetection); the thresholds are agentry's, with
// gemini-cli's values as defaults.
type LoopDetectionSettings struct {
	// ToolCallThreshold is how many identical tool calls in a row (or
	// repetitions of a short cycle of calls) make a loop.
	ToolCallThreshold int `json:"toolCallThreshold"`
	// ContentThreshold is how often a 50-character chunk of streamed text
	// must recur, close together, to make a loop.
	ContentThreshold int `json:"contentThreshold"`
	// LLMCheckAfterTurns is the turn of a prompt from which the utility
	// model is asked whether the conversation is stuck; 0 never asks.
	LLMCheckAfterTurns int `json:"llmCheckAfterTurns"`
}

// HookDefinition is one entry of a hook event's list, in gemini-cli's
// settings shape: a matcher and the commands it runs.
type HookDefinition struct {
	// Matcher selects tool names (a regular expression) for tool events,
	// or the exact source, reason or trigger for SessionStart, SessionEnd
	// and PreCompress; "" and "*" match everything.
	Matcher string `json:"matcher,omitempty"`
	// Sequential runs the matched hooks one after another, each seeing the
	// previous one's changes; otherwise they run in parallel.
	Sequential bool `json:"sequential,omitempty"`
	// Hooks are the commands.
	Hooks []HookCommand `json:"hooks"`
}

// HookCommand is one command hook.
type HookCommand struct {
	// Type is "command", the only kind.
	Type string `json:"type"`
	// Command is run by the system shell with the event as JSON on stdin.
	Command string `json:"command"`
	// Name identifies the hook in hooksConfig.disabled and in reports; the
	// command is used when it is empty.
	Name string `json:"name,omitempty"`
	// Description is shown to the user.
	Description string `json:"description,omitempty"`
	// Timeout is in milliseconds; 0 is gemini-cli's 60,000.
	Timeout int `json:"timeout,omitempty"`
	// Env adds variables to the command's environment.
	Env map[string]string `json:"env,omitempty"`
}

// HooksConfigSettings switch hooks on and off.
type HooksConfigSettings struct {
	// Enabled runs the configured hooks (in trusted workspaces only).
	Enabled bool `json:"enabled"`
	// Disabled lists hooks, by name or command, that do not run.
	Disabled []string `json:"disabled"`
	// Notifications runs Notification hooks.
	Notifications bool `json:"notifications"`
}

// TelemetrySettings choose where OpenTelemetry traces and metrics go, in
// gemini-cli's shape. Telemetry is off unless Enabled; then Outfile, when
// set, receives JSON lines, and otherwise an OTLP collector at
// OTLPEndpoint does.
type TelemetrySettings struct {
	// Enabled turns telemetry on.
	Enabled bool `json:"enabled"`
	// OTLPEndpoint is the collector, e.g. http://127.0.0.1:4318 for http
	// or 127.0.0.1:4317 for grpc.
	OTLPEndpoint string `json:"otlpEndpoint"`
	// OTLPProtocol is grpc (the default) or http.
	OTLPProtocol string `json:"otlpProtocol"`
	// Outfile receives spans and metrics as JSON lines instead.
	Outfile string `json:"outfile"`
}

// MCPServerSettings are one entry of the settings' mcpServers map, in
// gemini-cli's shape (the JSON names are gemini-cli's, so the same
// settings file works for both): exactly one of Command (stdio), URL
// (streamable HTTP or SSE, see Type) or HTTPURL (streamable HTTP).
type MCPServerSettings struct {
	// Command starts a stdio server; Args are its arguments.
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Env is added to the base environment of a stdio server. Values may
	// refer to environment variables as $VAR or ${VAR}, as gemini-cli
	// expands them, including ones the base environment withholds.
	Env map[string]string `json:"env,omitempty"`
	// Cwd is a stdio server's working directory (default: the caller's).
	Cwd string `json:"cwd,omitempty"`
	// URL is an HTTP endpoint. As in gemini-cli, Type "http" speaks
	// streamable HTTP, Type "sse" the older HTTP+SSE transport, and no
	// Type tries streamable HTTP and falls back to SSE when that fails.
	URL string `json:"url,omitempty"`
	// Type is the transport of URL: "http", "sse" or "" (either).
	Type string `json:"type,omitempty"`
	// HTTPURL is gemini-cli's older spelling of a streamable HTTP endpoint.
	HTTPURL string `json:"httpUrl,omitempty"`
	// Headers are sent with every HTTP request; values may refer to
	// environment variables like Env's.
	Headers map[string]string `json:"headers,omitempty"`
	// OAuth configures OAuth for an HTTP server (gemini-cli's
	// mcpServers.<name>.oauth); see MCPOAuthSettings.
	OAuth *MCPOAuthSettings `json:"oauth,omitempty"`
	// AuthProviderType is gemini-cli's authProviderType. Only
	// "dynamic_discovery" (OAuth discovered from the server, the default)
	// is supported; Google credentials and service-account impersonation
	// are refused.
	AuthProviderType string `json:"authProviderType,omitempty"`
	// Timeout is the per-call timeout in milliseconds; zero means 10
	// minutes (gemini-cli's MCP_DEFAULT_TIMEOUT_MSEC). It also bounds connecting and listing tools, but
	// never to less than 30 seconds.
	Timeout int `json:"timeout,omitempty"`
	// IncludeTools, when non-empty, lists the only tools offered; an entry
	// "name(...)" also matches name, as in gemini-cli.
	IncludeTools []string `json:"includeTools,omitempty"`
	// ExcludeTools lists tools never offered; it wins over IncludeTools.
	ExcludeTools []string `json:"excludeTools,omitempty"`
	// Trust lets this server's tools run without confirmation (the policy
	// layer decides; mcptools only reports it through Tool.MCP).
	Trust bool `json:"trust,omitempty"`
	// Description is a human description of the server.
	Description string `json:"description,omitempty"`
	// Lazy, when set, overrides mcp.lazy for this server: false starts
	// it with every session even when its tools are cached.
	Lazy *bool `json:"lazy,omitempty"`
}

// MCP transport types (MCPServerSettings.Type), gemini-cli's spelling.
const (
	MCPTypeHTTP = "http"
	MCPTypeSSE  = "sse"
)

// Validate reports whether c names exactly one transport and has sane
// values. name is the server's key in mcpServers; errors mention it and the
// offending field so the user can find the entry.
func (c MCPServerSettings) Validate(name string) error {
	set := 0
	for _, v := range []string{c.Command, c.URL, c.HTTPURL} {
		if v != "" {
			set++
		}
	}
	switch {
	case set == 0:
		return fmt.Errorf("mcp server %q: one of command, url or httpUrl is required", name)
	case set > 1:
		// gemini-cli silently prefers httpUrl, then url, then command; a
		// config naming two is almost certainly a mistake, so say so.
		return fmt.Errorf("mcp server %q: only one of command, url or httpUrl may be set", name)
	}
	if c.Timeout < 0 {
		return fmt.Errorf("mcp server %q: timeout must not be negative (got %d)", name, c.Timeout)
	}
	switch c.Type {
	case "", MCPTypeHTTP, MCPTypeSSE:
	default:
		return fmt.Errorf("mcp server %q: type must be %q or %q (got %q)", name, MCPTypeHTTP, MCPTypeSSE, c.Type)
	}
	if c.Type != "" && c.URL == "" {
		return fmt.Errorf("mcp server %q: type needs url", name)
	}
	if c.Command == "" {
		if len(c.Args) > 0 {
			return fmt.Errorf("mcp server %q: args needs command", name)
		}
		if len(c.Env) > 0 {
			return fmt.Errorf("mcp server %q: env needs command", name)
		}
		if c.Cwd != "" {
			return fmt.Errorf("mcp server %q: cwd needs command", name)
		}
	} else if len(c.Headers) > 0 {
		return fmt.Errorf("mcp server %q: headers needs url or httpUrl", name)
	}
	return c.validateAuth(name)
}
