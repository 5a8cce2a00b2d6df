// Package config loads agentry's settings: one typed Settings value built
// with viper from, in increasing precedence, the built-in defaults,
// ~/.agentry/settings.json, <workspace>/.agentry/settings.json (read only in
// a trusted workspace), AGENTRY_* environment variables and command-line
// flags. It also decides whether the workspace is trusted and gathers model
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

	// Workspace is the absolute, symlink-resolved workspace directory.
	Workspace string `json:"-"`
	// Home is the agentry home directory (~/.agentry).
	Home string `json:"-"`
	// Trusted reports whether the workspace is trusted; TrustSource says
	// what made it so ("flag", "env", "settings") or is empty.
	Trusted     bool   `json:"-"`
	TrustSource string `json:"-"`
	// Credentials are the model credentials from the real environment and,
	// for keys the environment lacks, the allowed .env files.
	Credentials Credentials `json:"-"`
	// Warnings are notes for the user about settings that were ignored.
	Warnings []string `json:"-"`
}

// ModelSettings choose the model.
type ModelSettings struct {
	// Name is the model: a Gemini model or alias (gemini-2.5-flash, flash),
	// openai:<model> for an OpenAI-compatible server, or replay:<file> to
	// replay recorded responses.
	Name string `json:"name"`
	// MaxSessionTurns bounds the model calls of one prompt; -1 is unlimited.
	MaxSessionTurns int `json:"maxSessionTurns"`
}

// GeneralSettings hold the approval mode.
type GeneralSettings struct {
	// DefaultApprovalMode is plan, default, auto_edit or yolo.
	DefaultApprovalMode string `json:"defaultApprovalMode"`
}

// ToolsSettings configure the built-in tools.
type ToolsSettings struct {
	// Allowed lists tools that run without confirmation, by name
	// ("write_file") or, for run_shell_command, by command prefix
	// ("run_shell_command(git status)").
	Allowed []string `json:"allowed"`
	// Exclude lists tools that are not offered to the model at all.
	Exclude []string `json:"exclude"`
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

// OutputSettings choose the batch output format.
type OutputSettings struct {
	// Format is text, json, stream-json or events.
	Format string `json:"format"`
}

// Credentials are the model credentials gathered from the environment.
type Credentials struct {
	GeminiAPIKey   string // GEMINI_API_KEY, else GOOGLE_API_KEY
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
		Model:   ModelSettings{Name: DefaultModel, MaxSessionTurns: -1},
		General: GeneralSettings{DefaultApprovalMode: ApprovalDefault},
		Tools:   ToolsSettings{Shell: ShellSettings{TimeoutSeconds: 600}},
		Context: ContextSettings{FileName: []string{"AGENTRY.md", "GEMINI.md"}, MaxDirectoryItems: 200},
		Output:  OutputSettings{Format: "text"},
	}
}
