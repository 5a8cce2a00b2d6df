package config

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

// MCPServerSettings are one MCP server, in gemini-cli's mcpServers shape:
// exactly one of Command (stdio), URL or HTTPURL (streamable HTTP).
type MCPServerSettings struct {
	// Command starts a stdio server, with Args, Env and Cwd.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	// URL and HTTPURL name a streamable HTTP server; Headers go with every
	// request.
	URL     string            `json:"url,omitempty"`
	HTTPURL string            `json:"httpUrl,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Timeout bounds one call, in milliseconds; 0 is 10 minutes.
	Timeout int `json:"timeout,omitempty"`
	// IncludeTools and ExcludeTools filter the server's tools by name;
	// exclusion wins.
	IncludeTools []string `json:"includeTools,omitempty"`
	ExcludeTools []string `json:"excludeTools,omitempty"`
	// Trust runs the server's tools without confirmation.
	Trust bool `json:"trust,omitempty"`
	// Description is shown to the user.
	Description string `json:"description,omitempty"`
}
