package routing

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"
)

// ModelConfig is what one model needs on top of the request ADK built: its
// generation config, an addition to the system instruction and the tools it
// must not be offered. gemini-cli keeps the same per-model settings in its
// ModelConfigService; a fallback that changes the model changes all of them.
type ModelConfig struct {
	// Temperature, TopP, TopK and MaxOutputTokens are the sampling
	// settings; unset (nil, 0) leaves the request's own.
	Temperature *float32 `json:"temperature,omitempty"`
	TopP        *float32 `json:"topP,omitempty"` // see Temperature
	TopK        *float32 `json:"topK,omitempty"` // see Temperature
	// MaxOutputTokens bounds the response; see Temperature.
	MaxOutputTokens int32 `json:"maxOutputTokens,omitempty"`
	// IncludeThoughts, ThinkingBudget and ThinkingLevel form the thinking
	// config; a model with none of them gets no thinking config at all,
	// which is what servers without thinking support need.
	IncludeThoughts *bool  `json:"includeThoughts,omitempty"`
	ThinkingBudget  *int32 `json:"thinkingBudget,omitempty"` // tokens; 0 turns thinking off
	// ThinkingLevel is LOW or HIGH (Gemini 3).
	ThinkingLevel string `json:"thinkingLevel,omitempty"`
	// Instruction is appended to the system instruction.
	Instruction string `json:"instruction,omitempty"`
	// ExcludeTools are tool names this model is not offered.
	ExcludeTools []string `json:"excludeTools,omitempty"`
}

// merge returns c with the fields o sets.
func (c ModelConfig) merge(o ModelConfig) ModelConfig {
	if o.Temperature != nil {
		c.Temperature = o.Temperature
	}
	if o.TopP != nil {
		c.TopP = o.TopP
	}
	if o.TopK != nil {
		c.TopK = o.TopK
	}
	if o.MaxOutputTokens != 0 {
		c.MaxOutputTokens = o.MaxOutputTokens
	}
	if o.IncludeThoughts != nil {
		c.IncludeThoughts = o.IncludeThoughts
	}
	if o.ThinkingBudget != nil {
		c.ThinkingBudget = o.ThinkingBudget
	}
	if o.ThinkingLevel != "" {
		c.ThinkingLevel = o.ThinkingLevel
	}
	if o.Instruction != "" {
		c.Instruction = o.Instruction
	}
	if o.ExcludeTools != nil {
		c.ExcludeTools = o.ExcludeTools
	}
	return c
}

// validate checks the fields whose values are constrained.
func (c ModelConfig) validate() error {
	switch strings.ToUpper(c.ThinkingLevel) {
	case "", "LOW", "MEDIUM", "HIGH", "MINIMAL":
	default:
		return fmt.Errorf("thinkingLevel %q: use LOW, MEDIUM, HIGH or MINIMAL", c.ThinkingLevel)
	}
	if c.MaxOutputTokens < 0 {
		return fmt.Errorf("maxOutputTokens %d: must be positive", c.MaxOutputTokens)
	}
	return nil
}

// DefaultThinkingBudget is gemini-cli's thinking budget for Gemini 2.5 chat
// models (DEFAULT_THINKING_MODE).
const DefaultThinkingBudget int32 = 8192

// familyConfig is gemini-cli's chat-base config for a model family:
// chat-base-2.5 for Gemini 2.x, chat-base-3 for Gemini 3 and Gemma 4, and
// nothing for other servers, whose defaults are their own.
func familyConfig(m string) ModelConfig {
	id := NormalizeModelID(m)
	if strings.Contains(id, ":") || !(strings.HasPrefix(id, "gemini-") || strings.HasPrefix(id, "gemma-")) {
		return ModelConfig{}
	}
	c := ModelConfig{
		Temperature: ptr[float32](1), TopP: ptr[float32](0.95), TopK: ptr[float32](64),
		IncludeThoughts: ptr(true),
	}
	if IsGemini3(id) || strings.HasPrefix(id, "gemma-4") || strings.HasPrefix(id, "gemini-3") {
		c.ThinkingLevel = "HIGH"
	} else if strings.HasPrefix(id, "gemini-2.5") {
		c.ThinkingBudget = ptr(DefaultThinkingBudget)
	} else {
		// Older Gemini and Gemma models do not think.
		c.IncludeThoughts = nil
	}
	return c
}

func ptr[T any](v T) *T { return &v }

// ModelConfigs holds the per-model configs: gemini-cli's family defaults
// overlaid with the user's settings. It is immutable and safe for
// concurrent use.
type ModelConfigs struct {
	user  map[string]ModelConfig
	cache sync.Map // model id → ModelConfig, built on first use
}

// NewModelConfigs returns the configs with user overrides by model name
// (normalised as availability ids). An invalid override names its model.
func NewModelConfigs(user map[string]ModelConfig) (*ModelConfigs, error) {
	m := &ModelConfigs{user: make(map[string]ModelConfig, len(user))}
	for _, name := range slices.Sorted(maps.Keys(user)) {
		c := user[name]
		if err := c.validate(); err != nil {
			return nil, fmt.Errorf("model config %q: %w", name, err)
		}
		m.user[NormalizeModelID(name)] = c
	}
	return m, nil
}

// For returns the config of model. The result shares its pointers with
// every other call for the same model and must not be modified.
func (m *ModelConfigs) For(model string) ModelConfig {
	if m == nil {
		return familyConfig(model)
	}
	if c, ok := m.cache.Load(model); ok {
		return c.(ModelConfig)
	}
	c := familyConfig(model)
	if u, ok := m.user[NormalizeModelID(model)]; ok {
		c = c.merge(u)
	}
	m.cache.Store(model, c)
	return c
}

// snapshot is a request's model-dependent fields as the chain left them
// before the first model config was applied, so that a later model's
// config is applied to them rather than on top of the previous model's.
type snapshot struct {
	temperature, topP, topK *float32
	maxOutputTokens         int32
	thinking                *genai.ThinkingConfig
	sys                     *genai.Content
	tools                   []*genai.Tool
	dict                    map[string]any
}

func takeSnapshot(req *model.LLMRequest) snapshot {
	s := snapshot{dict: req.Tools}
	if c := req.Config; c != nil {
		s.temperature, s.topP, s.topK = c.Temperature, c.TopP, c.TopK
		s.maxOutputTokens, s.thinking = c.MaxOutputTokens, c.ThinkingConfig
		s.sys, s.tools = c.SystemInstruction, c.Tools
	}
	return s
}

// apply rewrites req for model: req.Model, the generation fields, the
// system instruction and the tool subset, all derived from the snapshot.
// It writes into req.Config, which ADK builds afresh for every request;
// what the snapshot points to is never modified. Fields the model config
// does not own — a hook's, say — survive.
func (s *snapshot) apply(req *model.LLMRequest, name string, c ModelConfig) {
	req.Model = name
	if req.Config == nil {
		req.Config = &genai.GenerateContentConfig{}
	}
	cfg := req.Config
	cfg.Temperature, cfg.TopP, cfg.TopK = or(c.Temperature, s.temperature), or(c.TopP, s.topP), or(c.TopK, s.topK)
	cfg.MaxOutputTokens = s.maxOutputTokens
	if c.MaxOutputTokens != 0 {
		cfg.MaxOutputTokens = c.MaxOutputTokens
	}
	cfg.ThinkingConfig = s.thinking
	if c.IncludeThoughts != nil || c.ThinkingBudget != nil || c.ThinkingLevel != "" {
		tc := &genai.ThinkingConfig{}
		if s.thinking != nil {
			*tc = *s.thinking
		}
		if c.IncludeThoughts != nil {
			tc.IncludeThoughts = *c.IncludeThoughts
		}
		if c.ThinkingBudget != nil {
			tc.ThinkingBudget = c.ThinkingBudget
		}
		if c.ThinkingLevel != "" {
			tc.ThinkingLevel = genai.ThinkingLevel(strings.ToUpper(c.ThinkingLevel))
		}
		cfg.ThinkingConfig = tc
	}
	cfg.SystemInstruction, cfg.Tools, req.Tools = s.sys, s.tools, s.dict
	if c.Instruction != "" {
		sys := &genai.Content{Role: genai.RoleUser}
		if s.sys != nil {
			sys.Role = s.sys.Role
			sys.Parts = append(sys.Parts, s.sys.Parts...)
		}
		sys.Parts = append(sys.Parts, genai.NewPartFromText(c.Instruction))
		cfg.SystemInstruction = sys
	}
	if len(c.ExcludeTools) > 0 {
		cfg.Tools, req.Tools = excludeTools(s.tools, s.dict, c.ExcludeTools)
	}
}

func or[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

// excludeTools returns copies of the declarations and the dispatch map
// without the named tools: removing a declaration alone would leave the
// tool callable by a model that guesses its name.
func excludeTools(decls []*genai.Tool, dict map[string]any, names []string) ([]*genai.Tool, map[string]any) {
	out := make([]*genai.Tool, 0, len(decls))
	for _, t := range decls {
		if t == nil || len(t.FunctionDeclarations) == 0 {
			out = append(out, t)
			continue
		}
		ct := *t
		ct.FunctionDeclarations = slices.DeleteFunc(slices.Clone(t.FunctionDeclarations), func(fd *genai.FunctionDeclaration) bool {
			return fd != nil && slices.Contains(names, fd.Name)
		})
		if len(ct.FunctionDeclarations) > 0 || ct.GoogleSearch != nil || ct.CodeExecution != nil {
			out = append(out, &ct)
		}
	}
	var d map[string]any
	if dict != nil {
		d = maps.Clone(dict)
		for _, n := range names {
			delete(d, n)
		}
	}
	return out, d
}
