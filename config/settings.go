// Package config loads agentry's settings: one typed Settings value built
// with viper from, in increasing precedence, the built-in defaults,
// gemini-cli's ~/.gemini/settings.json (the keys agentry shares with it),
// ~/.agentry/settings.json, the workspace's .gemini/settings.json and
// .agentry/settings.json (read only in a trusted workspace), GEMINI_MODEL and
// AGENTRY_* environment variables and command-line flags. It also decides whether the workspace is trusted and gathers model
// credentials, so that nothing inside an untrusted workspace can raise
// permissions or redirect credentials.
package config

// Approval modes, with gemini-cli's CLI spelling. Their order of
// permissiveness is plan < default < auto_edit < yolo.
const (
	ApprovalPlan     = "plan"
	ApprovalDefault  = "default"
	ApprovalAutoEdit = "auto_edit"
	ApprovalYolo     = "yolo"
)

// DefaultModel is the model used when no setting, variable or flag names one.
const DefaultModel = "gemini-2.5-flash"

// Settings is the whole configuration of one agentry process. The fields
// with json tags come from settings files, AGENTRY_* variables and flags;
// the others are derived while loading and cannot be set from a file.
type Settings struct {
	Model    ModelSettings    `json:"model"`
	General  GeneralSettings  `json:"general"`
	Tools    ToolsSettings    `json:"tools"`
	Context  ContextSettings  `json:"context"`
	Security SecuritySettings `json:"security"`
	Gemini   GeminiSettings   `json:"gemini"`
	OpenAI   OpenAISettings   `json:"openai"`
	Output   OutputSettings   `json:"output"`
	Session  SessionSettings  `json:"session"`
	// Hooks are command hooks by event name (BeforeTool, AfterModel, …),
	// run only in trusted workspaces.
	Hooks       map[string][]HookDefinition `json:"hooks"`
	HooksConfig HooksConfigSettings         `json:"hooksConfig"`
	Telemetry   TelemetrySettings           `json:"telemetry"`
	// MCPServers are MCP servers by name, connected only in trusted
	// workspaces.
	MCPServers map[string]MCPServerSettings `json:"mcpServers"`
	// MCP is gemini-cli's mcp: MCP servers allowed or excluded by name;
	// and agentry's mcp.lazy (docs/mcp.md).
	MCP MCPSettings `json:"mcp"`
	// PolicyPaths are policy files or directories loaded at the user
	// tier in place of ~/.gemini/policies and ~/.agentry/policies
	// (gemini-cli's policyPaths, --policy). See docs/policy.md.
	PolicyPaths []string `json:"policyPaths"`
	// AdminPolicyPaths are policy files or directories loaded at the
	// admin tier beside the system directories (gemini-cli's
	// adminPolicyPaths, --admin-policy); ignored when a system directory
	// holds policies.
	AdminPolicyPaths []string `json:"adminPolicyPaths"`
	// A2A tunes `agentry serve`.
	A2A A2ASettings `json:"a2a"`
	// IDE is gemini-cli's ide: the IDE companion (docs/ide.md).
	IDE IDESettings `json:"ide"`
	// Cluster runs agentry past one machine (docs/deployment.md).
	Cluster ClusterSettings `json:"cluster"`

	// Workspace is the absolute, symlink-resolved workspace directory.
	Workspace string `json:"-"`
	// Home is the agentry home directory (~/.agentry).
	Home string `json:"-"`
	// Trusted reports whether the workspace is trusted; TrustSource says
	// what made it so ("flag", "env", "settings", "trustedFolders") or is
	// empty.
	Trusted     bool   `json:"-"`
	TrustSource string `json:"-"`
	// Credentials are the model credentials from the real environment and,
	// for keys the environment lacks, the allowed .env files.
	Credentials Credentials `json:"-"`
	// Warnings are notes for the user about settings that were ignored.
	Warnings []string `json:"-"`
	// AllowedToolsFlag reports that --allowed-tools was given: its list
	// replaced tools.allowed, as in gemini-cli.
	AllowedToolsFlag bool `json:"-"`

	// adminPolicyDir is AGENTRY_ADMIN_POLICY_DIR (SystemPolicyDirs).
	adminPolicyDir string
}

// MCPSettings are gemini-cli's mcp settings, which policy rules are made
// of (docs/policy.md).
type MCPSettings struct {
	// Allowed lists MCP servers whose tools run without confirmation
	// (outside plan mode); --allowed-mcp-server-names replaces it.
	Allowed []string `json:"allowed"`
	// Excluded lists MCP servers whose tools are denied.
	Excluded []string `json:"excluded"`
	// Lazy starts a server whose tools are cached from an earlier session
	// only when the model first uses it (default true); false starts
	// every server with the session. A server's own lazy setting wins.
	// agentry's own: not read from gemini-cli's settings files.
	Lazy bool `json:"lazy"`
}

// ModelSettings choose the model.
type ModelSettings struct {
	// Name is the model: a Gemini model or alias (gemini-2.5-flash, flash),
	// openai:<model> for an OpenAI-compatible server, or replay:<file> to
	// replay recorded responses.
	Name string `json:"name"`
	// MaxSessionTurns bounds the model calls of one prompt; -1 is unlimited.
	MaxSessionTurns int `json:"maxSessionTurns"`
	// FallbackChains are the user's policy chains: when the model in use is
	// in one of them, a persistent failure falls back along it (wrapping
	// around) instead of the built-in Gemini chains. Models may mix
	// backends ("openai:qwen3" after "gemini-2.5-flash"). Each chain needs
	// exactly one entry with lastResort.
	FallbackChains [][]ModelPolicySettings `json:"fallbackChains"`
	// Configs are per-model request settings by model name: generation
	// config, an instruction added to the system prompt, tools to withhold.
	// They apply on top of the built-in ones for Gemini families.
	Configs map[string]ModelConfigSettings `json:"configs"`
	// Routing tunes the choice of model for "auto".
	Routing RoutingSettings `json:"routing"`
	// PreviewAccess says the account can use preview models (the Gemini 3
	// family): "auto" then routes among them and falls back along the
	// preview chain.
	PreviewAccess bool `json:"previewAccess"`
	// CompressionThreshold is gemini-cli's model.compressionThreshold: the
	// fraction of the model's context window the last prompt may use
	// before the older part of the history is summarised (default 0.5).
	// Values above 1 turn automatic compression off.
	CompressionThreshold float64 `json:"compressionThreshold"`
	// CompressionModel summarises the history; "" picks gemini-cli's
	// compression model for a Gemini chat model and the chat model itself
	// for any other backend.
	CompressionModel string `json:"compressionModel"`
	// DisableLoopDetection is gemini-cli's model.disableLoopDetection.
	DisableLoopDetection bool `json:"disableLoopDetection"`
	// LoopDetection tunes loop detection.
	LoopDetection LoopDetectionSettings `json:"loopDetection"`
}

// ModelPolicySettings are one entry of a fallback chain.
type ModelPolicySettings struct {
	// Model is the model name, as model.name takes it.
	Model string `json:"model"`
	// LastResort marks the model used when every model is unavailable.
	LastResort bool `json:"lastResort,omitempty"`
	// MaxAttempts bounds the attempts on this model before falling back.
	MaxAttempts int `json:"maxAttempts,omitempty"`
	// Actions map a failure kind (terminal, transient, not_found, unknown)
	// to silent (fall back without asking) or prompt (ask, when a driver
	// can; batch runs then stop).
	Actions map[string]string `json:"actions,omitempty"`
	// Transitions map a failure kind to the model's next state: terminal
	// (unavailable) or sticky_retry (one more try per turn).
	Transitions map[string]string `json:"transitions,omitempty"`
}

// ModelConfigSettings are one model's request settings.
type ModelConfigSettings struct {
	// Temperature, TopP, TopK and MaxOutputTokens are sampling settings.
	Temperature *float32 `json:"temperature,omitempty"`
	TopP        *float32 `json:"topP,omitempty"` // see Temperature
	TopK        *float32 `json:"topK,omitempty"` // see Temperature
	// MaxOutputTokens bounds the response.
	MaxOutputTokens int32 `json:"maxOutputTokens,omitempty"`
	// IncludeThoughts asks for the model's thoughts (Gemini).
	IncludeThoughts *bool `json:"includeThoughts,omitempty"`
	// ThinkingBudget is the thinking budget in tokens (Gemini 2.5).
	ThinkingBudget *int32 `json:"thinkingBudget,omitempty"`
	// ThinkingLevel is LOW, MEDIUM, HIGH or MINIMAL (Gemini 3).
	ThinkingLevel string `json:"thinkingLevel,omitempty"`
	// Instruction is appended to the system prompt for this model.
	Instruction string `json:"instruction,omitempty"`
	// ExcludeTools are tools this model is not offered.
	ExcludeTools []string `json:"excludeTools,omitempty"`
}

// RoutingSettings tune model routing.
type RoutingSettings struct {
	// ClassifierModel serves the routing classifiers' calls; empty is
	// gemini-cli's classifier model.
	ClassifierModel string `json:"classifierModel"`
	// NumericalRouting uses the complexity-score classifier for Gemini 3.
	NumericalRouting bool `json:"numericalRouting"`
	// NumericalThreshold is the score (1-100) from which the Pro model is
	// chosen; 0 is gemini-cli's 90.
	NumericalThreshold int `json:"numericalThreshold"`
	// PlanRouting sends plan-mode prompts of "auto" to the Pro model.
	PlanRouting bool `json:"planRouting"`
}

// GeneralSettings hold the approval mode.
type GeneralSettings struct {
	// DefaultApprovalMode is plan, default, auto_edit or yolo.
	DefaultApprovalMode string `json:"defaultApprovalMode"`
	// MaxAttempts bounds the attempts of one model call on one model
	// (1-10) when its fallback policy does not say.
	MaxAttempts int `json:"maxAttempts"`
}

// ToolsSettings configure the built-in tools.
type ToolsSettings struct {
	// Allowed lists tools that run without confirmation, by name
	// ("write_file") or, for run_shell_command, by command prefix
	// ("run_shell_command(git status)").
	Allowed []string `json:"allowed"`
	// Exclude lists tools that are not offered to the model at all; a
	// policy rule also denies them.
	Exclude []string `json:"exclude"`
	// Core, when set, lists the only tools that run: each is allowed,
	// every other tool denied (outside plan mode), as gemini-cli's
	// tools.core.
	Core []string `json:"core"`
	// ConfirmationRequired lists tools that always ask first.
	ConfirmationRequired []string `json:"confirmationRequired"`
	// Shell configures run_shell_command.
	Shell ShellSettings `json:"shell"`
}

// ShellSettings configure run_shell_command.
type ShellSettings struct {
	// TimeoutSeconds bounds one command; 0 means no limit.
	TimeoutSeconds int `json:"timeoutSeconds"`
}

// ContextSettings control the context the model receives.
type ContextSettings struct {
	// FileName lists the context file names looked up from the workspace up
	// to its git root and in ~/.agentry, in priority order.
	FileName []string `json:"fileName"`
	// IncludeDirectories are extra workspace roots (absolute, or relative to
	// the workspace). File tools may read and write inside them.
	IncludeDirectories []string `json:"includeDirectories"`
	// MaxDirectoryItems bounds the directory listing in the session context.
	MaxDirectoryItems int `json:"maxDirectoryItems"`
}

// SecuritySettings decide workspace trust. They are honoured only in the
// user settings file: a workspace cannot vouch for itself.
type SecuritySettings struct {
	// TrustedFolders lists directories whose subtrees are trusted.
	TrustedFolders []string `json:"trustedFolders"`
	// A2A secures `agentry serve`. Like every security.* key it is read
	// from the user settings file only.
	A2A A2ASecuritySettings `json:"a2a"`
	// EnvironmentVariableRedaction decides which of agentry's environment
	// variables shell commands, hooks and MCP stdio servers see, as
	// gemini-cli's setting of the same name does.
	EnvironmentVariableRedaction EnvRedactionSettings `json:"environmentVariableRedaction"`
	// DisableAlwaysAllow hides the "always" answers of confirmations and
	// ignores saved "always" rules (gemini-cli's setting of the same
	// name).
	DisableAlwaysAllow bool `json:"disableAlwaysAllow"`
	// EnablePermanentToolApproval offers the "… all future sessions"
	// answer (proceed_always_and_save) in confirmations, which saves a
	// policy rule; off by default, as gemini-cli's setting of the same
	// name.
	EnablePermanentToolApproval bool `json:"enablePermanentToolApproval"`
}

// EnvRedactionSettings are security.environmentVariableRedaction. agentry's
// own secrets (AGENTRY_A2A_TOKEN, …) are never passed, whatever they say.
type EnvRedactionSettings struct {
	// Allowed names are always passed.
	Allowed []string `json:"allowed"`
	// Blocked names are never passed.
	Blocked []string `json:"blocked"`
	// Enabled withholds variables whose name or value looks like a secret
	// (*TOKEN*, *KEY*, *SECRET*, PEM keys, GitHub tokens, …). On by
	// default, unlike gemini-cli.
	Enabled bool `json:"enabled"`
}

// A2ASecuritySettings secure the A2A server.
type A2ASecuritySettings struct {
	// Token is the bearer token clients must send; AGENTRY_A2A_TOKEN
	// overrides it, and without either the server makes a random one.
	Token string `json:"token"`
	// AllowedRoots are the directories a client's workspace may lie in;
	// default the server's workspace.
	AllowedRoots []string `json:"allowedRoots"`
	// AllowedHosts are Host header values accepted besides the loopback
	// names of the server's port.
	AllowedHosts []string `json:"allowedHosts"`
	// AllowedOrigins are browser origins allowed to call the server;
	// default none.
	AllowedOrigins []string `json:"allowedOrigins"`
	// AllowPrivatePush lets push notifications go to loopback and
	// private-network webhooks (an IDE on this machine). Off by default:
	// a client could otherwise make the server call internal services.
	AllowPrivatePush bool `json:"allowPrivatePush"`
}

// A2ASettings tune the A2A server.
type A2ASettings struct {
	// MaxTasks bounds the tasks running at once (0: 16).
	MaxTasks int `json:"maxTasks"`
	// OnDisconnect is what happens to a run whose streaming client
	// disconnects: auto (abort unless the task has a push config), abort
	// or continue.
	OnDisconnect string `json:"onDisconnect"`
	// MaxBodyBytes bounds a request body (0: 4 MiB).
	MaxBodyBytes int64 `json:"maxBodyBytes"`
	// MaxConnections bounds the connections open at once (0: 1024);
	// more are closed as soon as they are accepted.
	MaxConnections int `json:"maxConnections"`
	// MaxConnectionsPerAddress bounds the connections open at once from
	// one IP address (0: 128); raise it when clients share an address
	// (a reverse proxy).
	MaxConnectionsPerAddress int `json:"maxConnectionsPerAddress"`
	// IdleMinutes closes a conversation's session after this many minutes
	// without a task; its next message reopens it from the session store
	// (0: 30; -1: never). With the memory store sessions are never closed.
	IdleMinutes int `json:"idleMinutes"`
	// RequireExtension makes the development-tool extension required:
	// the card says so and a message from a client that does not
	// activate it is refused (-32008). Reads never need it. Off by
	// default: a client without it gets plain A2A.
	RequireExtension bool `json:"requireExtension"`
	// PlainApprovals decides a tool call that needs approval in a task
	// started without the extension: "ask" (the default) parks the task
	// input-required with a plain-text question answered by yes, always
	// or no; "policy" asks nobody and denies what the approval policy
	// does not allow, as a batch run does.
	PlainApprovals string `json:"plainApprovals"`
	// GCPercent is the garbage collector's target for `agentry serve`,
	// as GOGC (0: 200). Above Go's 100 the heap may grow to three times
	// the live data, which keeps collection rare enough that 200 streams
	// of 100 deltas a second keep their added latency under 5 ms on two
	// cores. The GOGC environment variable, when set, wins.
	GCPercent int `json:"gcPercent"`
	// WS limits the live session endpoint, GET /ws (docs/ws.md).
	WS A2AWSSettings `json:"ws"`
	// Live is the policy of gRPC SendLiveMessage streams (docs/live.md).
	Live A2ALiveSettings `json:"live"`
}

// A2ALiveSettings are a2a.live: the policy of gRPC SendLiveMessage
// streams.
type A2ALiveSettings struct {
	// IdleMinutes cancels a task a live stream has been on when it waits
	// for input this long with no answer (default 10; at least 1: a run
	// must not stay parked for ever).
	IdleMinutes int `json:"idleMinutes"`
}

// A2AWSSettings are a2a.ws: the live session endpoint's limits. Zero is
// the default of each.
type A2AWSSettings struct {
	// MaxFrameBytes bounds a client's frame (0: 1 MiB); a larger one
	// closes the connection with 1009.
	MaxFrameBytes int64 `json:"maxFrameBytes"`
	// QueueFrames bounds the frames waiting for a slow client (0: 8192);
	// past it the client is closed with 4000.
	QueueFrames int `json:"queueFrames"`
	// MaxClients bounds the clients of one session (0: 32).
	MaxClients int `json:"maxClients"`
	// PingSeconds is the keep-alive period, within which each ping's pong
	// is due (0: 30; -1: no pings).
	PingSeconds int `json:"pingSeconds"`
	// IdleMinutes closes a connection without a frame either way for this
	// long (0: 30; -1: never).
	IdleMinutes int `json:"idleMinutes"`
	// ReplayEvents is how many of a session's events are kept for clients
	// that reconnect (0: 4096).
	ReplayEvents int `json:"replayEvents"`
}

// ClusterSettings run agentry past one machine: agentry serve replicas
// sharing PostgreSQL, and model health shared by every process of the
// fleet (docs/deployment.md).
type ClusterSettings struct {
	// Enabled makes agentry serve one replica among others that share
	// session.postgresDsn (session.store must be postgres), and shares
	// the model availability state through it. Default false: one
	// process, on its own.
	Enabled bool `json:"enabled"`
	// AdvertiseURL is the base URL the other replicas reach this one at
	// (http://host:port); default the URL agentry serve listens on.
	AdvertiseURL string `json:"advertiseUrl"`
	// ModelLimits caps the calls to a model across the fleet, by model
	// name: {"gemini-2.5-flash": {"maxConcurrent": 8, "requestsPerMinute": 600}}.
	ModelLimits map[string]ModelLimit `json:"modelLimits"`
}

// ModelLimit is a fleet-wide cap on the calls to one model; zero is no
// cap.
type ModelLimit struct {
	// MaxConcurrent is how many calls may run at once.
	MaxConcurrent int `json:"maxConcurrent"`
	// RequestsPerMinute is how many calls may start in a minute.
	RequestsPerMinute int `json:"requestsPerMinute"`
}

// IDESettings are gemini-cli's ide settings.
type IDESettings struct {
	// Enabled connects the session to the companion of the IDE agentry
	// runs in (gemini-cli's ide.enabled, default false). Read from
	// gemini-cli's settings files too, but, like every workspace setting,
	// from a workspace's files only when it is trusted: an untrusted
	// repository cannot make agentry connect to anything.
	Enabled bool `json:"enabled"`
}

// GeminiSettings configure the Gemini backend.
type GeminiSettings struct {
	// BaseURL overrides the Gemini API endpoint (a gateway, or a local fake
	// server in tests).
	BaseURL string `json:"baseUrl"`
}

// OpenAISettings configure OpenAI-compatible backends (OpenAI, Ollama, vLLM,
// llama.cpp).
type OpenAISettings struct {
	// BaseURL is the server's API root, e.g. http://127.0.0.1:11434/v1.
	BaseURL string `json:"baseUrl"`
}

// Session stores.
const (
	SessionStoreSQLite   = "sqlite"
	SessionStorePostgres = "postgres"
	SessionStoreMemory   = "memory"
)

// SessionSettings choose where conversations are stored.
type SessionSettings struct {
	// Store is sqlite (the default: one file under the agentry home),
	// postgres, or memory (nothing is kept after the run).
	Store string `json:"store"`
	// Path is the SQLite file; empty is <home>/sessions.db.
	Path string `json:"path"`
	// PostgresDSN is the PostgreSQL connection string for the postgres
	// store, e.g. postgres://user@127.0.0.1:5432/agentry.
	PostgresDSN string `json:"postgresDsn"`
}

// OutputSettings choose the batch output format.
type OutputSettings struct {
	// Format is text, json, stream-json or events.
	Format string `json:"format"`
}

// Credentials are the model credentials gathered from the environment.
type Credentials struct {
	// GeminiAPIKey is the key the Gemini backend sends: GEMINI_API_KEY,
	// else GOOGLE_API_KEY, for the Gemini API; GOOGLE_API_KEY for Vertex
	// AI, where a key without a project is express mode (as gemini-cli).
	GeminiAPIKey   string
	UseVertexAI    bool   // GOOGLE_GENAI_USE_VERTEXAI
	GoogleProject  string // GOOGLE_CLOUD_PROJECT
	GoogleLocation string // GOOGLE_CLOUD_LOCATION
	GeminiBaseURL  string // GOOGLE_GEMINI_BASE_URL
	OpenAIAPIKey   string // OPENAI_API_KEY
	OpenAIBaseURL  string // OPENAI_BASE_URL
}

// Defaults returns the built-in settings.
func Defaults() Settings {
	return Settings{
		Model: ModelSettings{Name: DefaultModel, MaxSessionTurns: -1, CompressionThreshold: 0.5,
			Routing:       RoutingSettings{NumericalRouting: true, PlanRouting: true},
			LoopDetection: LoopDetectionSettings{ToolCallThreshold: 5, ContentThreshold: 10, LLMCheckAfterTurns: 30}},
		General:     GeneralSettings{DefaultApprovalMode: ApprovalDefault, MaxAttempts: 10},
		Tools:       ToolsSettings{Shell: ShellSettings{TimeoutSeconds: 600}},
		Context:     ContextSettings{FileName: []string{"AGENTRY.md", "GEMINI.md"}, MaxDirectoryItems: 200},
		Output:      OutputSettings{Format: "text"},
		Session:     SessionSettings{Store: SessionStoreSQLite},
		HooksConfig: HooksConfigSettings{Enabled: true, Notifications: true},
		Security:    SecuritySettings{EnvironmentVariableRedaction: EnvRedactionSettings{Enabled: true}},
		Telemetry:   TelemetrySettings{OTLPProtocol: "grpc"},
		A2A:         A2ASettings{Live: A2ALiveSettings{IdleMinutes: DefaultLiveIdleMinutes}},
		MCP:         MCPSettings{Lazy: true},
	}
}

// DefaultLiveIdleMinutes is a2a.live.idleMinutes's default.
const DefaultLiveIdleMinutes = 10
