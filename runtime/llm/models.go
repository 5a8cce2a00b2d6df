package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentry-dev/agentry/modelid"
)

// ErrUnknownModel reports a model name that no backend serves.
var ErrUnknownModel = errors.New("unknown model")

// Model name schemes. A name without a scheme prefix is a Gemini model or
// alias.
const (
	SchemeGemini         = "gemini"
	SchemeOpenAI         = "openai"
	SchemeReplay         = "replay"
	SchemeReplayNonStric = "replay-nonstrict"
)

// resolveAlias maps a gemini-cli alias to its concrete model with
// modelid's one table, as for a user without preview access: a Ref names
// the model to call, and a parsed name knows nothing of the account.
// Sessions resolve aliases with their account's access before a name gets
// here (the routing service does), so this only decides what an alias that
// reaches a backend unresolved means.
func resolveAlias(name string) (string, bool) {
	if !modelid.IsAlias(name) {
		return name, false
	}
	return modelid.Resolve(name, modelid.Access{}), true
}

// geminiPrefixes are the model-id prefixes served by the Gemini API.
var geminiPrefixes = []string{"gemini-", "gemma-", "learnlm-", "models/", "tunedModels/"}

// Ref is a parsed model name.
type Ref struct {
	// Scheme picks the backend: gemini, openai, replay or replay-nonstrict.
	Scheme string
	// Model is the id sent to the backend; for replay it is the file path.
	Model string
}

// String returns the canonical model name.
func (r Ref) String() string {
	if r.Scheme == SchemeGemini {
		return r.Model
	}
	return r.Scheme + ":" + r.Model
}

// ParseModel parses a model name:
//
//	gemini-2.5-flash, flash, auto, models/…   a Gemini model or alias
//	gemini:<id>                               any Gemini model id
//	openai:<model>                            an OpenAI-compatible server
//	replay:<file.jsonl>                       recorded responses, strict order
//	replay-nonstrict:<file.jsonl>             recorded responses, by method
func ParseModel(name string) (Ref, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return Ref{}, fmt.Errorf("%w: the model name is empty", ErrUnknownModel)
	}
	if scheme, rest, ok := strings.Cut(name, ":"); ok {
		if rest == "" {
			return Ref{}, fmt.Errorf("%w %q: nothing after %q", ErrUnknownModel, name, scheme+":")
		}
		switch scheme {
		case SchemeGemini, SchemeOpenAI, SchemeReplay, SchemeReplayNonStric:
			if scheme == SchemeGemini {
				rest, _ = resolveAlias(rest)
			}
			return Ref{Scheme: scheme, Model: rest}, nil
		}
		return Ref{}, fmt.Errorf("%w %q: unknown scheme %q (want gemini:, openai:, replay: or replay-nonstrict:)", ErrUnknownModel, name, scheme)
	}
	if model, ok := resolveAlias(name); ok {
		return Ref{Scheme: SchemeGemini, Model: model}, nil
	}
	for _, p := range geminiPrefixes {
		if strings.HasPrefix(name, p) {
			return Ref{Scheme: SchemeGemini, Model: strings.TrimPrefix(name, "models/")}, nil
		}
	}
	return Ref{}, fmt.Errorf("%w %q: use a Gemini model (gemini-2.5-flash, or an alias: auto, pro, flash, flash-lite), gemini:<id>, openai:<model> or replay:<file.jsonl>", ErrUnknownModel, name)
}

// ResolverConfig configures a Resolver.
type ResolverConfig struct {
	Gemini GeminiConfig
	OpenAI OpenAIConfig
	// Dir is the directory relative replay paths resolve against.
	Dir string
	// Record, when set, receives every response of every backend.
	Record *RecordSink
	// HTTPClient, when set, is used by the Gemini and OpenAI backends.
	HTTPClient *http.Client
}

// Target is a resolved model: the backend to call and the model id to send.
type Target struct {
	Ref
	Backend Backend
}

// Resolver maps model names to backends. Backends are created on first use
// and shared afterwards: one genai client per process, one replay cursor per
// file, so every session and subagent using replay:f.jsonl consumes the same
// recording in order. It is safe for concurrent use.
type Resolver struct {
	cfg ResolverConfig

	mu      sync.Mutex
	gemini  Backend
	openai  Backend
	replays map[string]Backend
}

// NewResolver returns a Resolver for cfg.
func NewResolver(cfg ResolverConfig) *Resolver {
	if cfg.HTTPClient != nil {
		if cfg.Gemini.HTTPClient == nil {
			cfg.Gemini.HTTPClient = cfg.HTTPClient
		}
		if cfg.OpenAI.HTTPClient == nil {
			cfg.OpenAI.HTTPClient = cfg.HTTPClient
		}
	}
	return &Resolver{cfg: cfg, replays: map[string]Backend{}}
}

// Resolve parses name and returns its backend, creating it if needed. A
// replay file is read and validated here, so a malformed file fails before
// any model call.
func (r *Resolver) Resolve(ctx context.Context, name string) (Target, error) {
	ref, err := ParseModel(name)
	if err != nil {
		return Target{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var b Backend
	switch ref.Scheme {
	case SchemeGemini:
		if r.gemini == nil {
			g, err := NewGemini(ctx, r.cfg.Gemini)
			if err != nil {
				return Target{}, fmt.Errorf("model %q: %w", name, err)
			}
			r.gemini = r.wrap(g)
		}
		b = r.gemini
	case SchemeOpenAI:
		if r.openai == nil {
			o, err := NewOpenAI(r.cfg.OpenAI)
			if err != nil {
				return Target{}, fmt.Errorf("model %q: %w", name, err)
			}
			r.openai = r.wrap(o)
		}
		b = r.openai
	case SchemeReplay, SchemeReplayNonStric:
		path := ref.Model
		if !filepath.IsAbs(path) && r.cfg.Dir != "" {
			path = filepath.Join(r.cfg.Dir, path)
		}
		key := ref.Scheme + "\x00" + path
		if b = r.replays[key]; b == nil {
			rp, err := LoadReplay(path, ref.Scheme == SchemeReplay)
			if err != nil {
				return Target{}, err
			}
			b = r.wrap(rp)
			r.replays[key] = b
		}
	}
	return Target{Ref: ref, Backend: b}, nil
}

func (r *Resolver) wrap(b Backend) Backend {
	if r.cfg.Record != nil {
		return NewRecorder(b, r.cfg.Record)
	}
	return b
}
