package llm

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"

	"google.golang.org/genai"
)

// ErrNoCredentials reports a backend that cannot run for lack of credentials.
var ErrNoCredentials = errors.New("no model credentials")

// GeminiConfig configures the Gemini backend.
type GeminiConfig struct {
	// APIKey is the API key: a Gemini API key, or with VertexAI a Google
	// Cloud API key (Vertex AI express mode, which needs no project).
	APIKey string
	// VertexAI selects Vertex AI instead of the Gemini API: with APIKey in
	// express mode, else with Project and Location and application default
	// credentials.
	VertexAI bool
	Project  string
	Location string
	// BaseURL overrides the API endpoint: a gateway, or a fake server in tests.
	BaseURL string
	// HTTPClient is used for every request when set.
	HTTPClient *http.Client
	// UserAgent is sent as the x-goog-api-client and user-agent headers.
	UserAgent string
}

// Gemini is the Backend for Gemini models, through the genai client.
type Gemini struct {
	client *genai.Client
}

// vertexCredentialsHelp says what Vertex AI needs, as gemini-cli's auth
// check says it.
const vertexCredentialsHelp = "Vertex AI (GOOGLE_GENAI_USE_VERTEXAI) needs GOOGLE_API_KEY (express mode), " +
	"or GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION with application default credentials " +
	"(gcloud auth application-default login, or GOOGLE_APPLICATION_CREDENTIALS)"

// NewGemini creates the genai client for cfg. It fails with ErrNoCredentials
// when neither an API key nor Vertex AI is configured, or when Vertex AI
// has neither a key nor a project with application default credentials.
func NewGemini(ctx context.Context, cfg GeminiConfig) (*Gemini, error) {
	cc := &genai.ClientConfig{HTTPClient: cfg.HTTPClient}
	switch {
	case cfg.VertexAI && cfg.APIKey != "":
		// Express mode, preferred to a project as gemini-cli prefers it:
		// the key goes alone, without project or location.
		cc.Backend = genai.BackendVertexAI
		cc.APIKey = cfg.APIKey
	case cfg.VertexAI:
		cc.Backend = genai.BackendVertexAI
		cc.Project = cfg.Project
		cc.Location = cfg.Location
		if cc.Project == "" || cc.Location == "" {
			return nil, fmt.Errorf("%w: %s", ErrNoCredentials, vertexCredentialsHelp)
		}
	default:
		if cfg.APIKey == "" {
			return nil, fmt.Errorf("%w: set GEMINI_API_KEY (or GOOGLE_API_KEY), or GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_API_KEY or with GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION", ErrNoCredentials)
		}
		cc.Backend = genai.BackendGeminiAPI
		cc.APIKey = cfg.APIKey
	}
	cc.HTTPOptions.BaseURL = cfg.BaseURL
	if cfg.UserAgent != "" {
		cc.HTTPOptions.Headers = http.Header{}
		cc.HTTPOptions.Headers.Set("x-goog-api-client", cfg.UserAgent)
		cc.HTTPOptions.Headers.Set("user-agent", cfg.UserAgent)
	}
	client, err := genai.NewClient(ctx, cc)
	if err != nil && cfg.VertexAI && cfg.APIKey == "" {
		// With a project, the client's only failure is finding the
		// application default credentials.
		return nil, fmt.Errorf("%w: %s: %v", ErrNoCredentials, vertexCredentialsHelp, err)
	}
	if err != nil {
		return nil, fmt.Errorf("create Gemini client: %w", err)
	}
	return &Gemini{client: client}, nil
}

// GenerateContent implements Backend.
func (g *Gemini) GenerateContent(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	return g.client.Models.GenerateContent(ctx, model, contents, withInstructionRole(cfg))
}

// GenerateContentStream implements Backend.
func (g *Gemini) GenerateContentStream(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	return g.client.Models.GenerateContentStream(ctx, model, contents, withInstructionRole(cfg))
}

// withInstructionRole is cfg with its system instruction's role set, as
// the genai client sets it, on a copy: the client would write the role
// into the caller's instruction, which Backend's contract keeps unchanged.
func withInstructionRole(cfg *genai.GenerateContentConfig) *genai.GenerateContentConfig {
	if cfg == nil || cfg.SystemInstruction == nil || cfg.SystemInstruction.Role != "" {
		return cfg
	}
	cc := *cfg
	si := *cfg.SystemInstruction
	si.Role = genai.RoleUser
	cc.SystemInstruction = &si
	return &cc
}

// CountTokens implements Backend.
func (g *Gemini) CountTokens(ctx context.Context, model string, contents []*genai.Content, cfg *genai.CountTokensConfig) (*genai.CountTokensResponse, error) {
	return g.client.Models.CountTokens(ctx, model, contents, cfg)
}
