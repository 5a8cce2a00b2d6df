package routing

import (
	"fmt"

	"github.com/agentry-dev/agentry/modelid"
)

// CatalogConfig configures a Catalog.
type CatalogConfig struct {
	// Access decides the aliases' targets and whether the preview chain may
	// be used.
	Access Access
	// Chains are user chains from settings; each is validated. A user
	// chain is used when the resolved model is one of its models (first
	// matching chain wins), before the built-in rules; user chains always
	// wrap around. Aliases in a chain are resolved with Access when the
	// catalog is built; auto aliases are rejected because they are not
	// models. Unset actions prompt and unset transitions are terminal, as
	// in the built-in chains.
	Chains []Chain
}

// Catalog resolves the policy chain for a model call: gemini-cli's
// policyCatalog plus resolvePolicyChain, extended with user chains so
// non-Gemini models (openai:…) can fall back too. It is immutable after
// NewCatalog and safe for concurrent use. A nil *Catalog behaves like one
// built from a zero CatalogConfig.
type Catalog struct {
	access  Access
	chains  []Chain // validated, resolved, defaults filled in
	builtin *builtin
}

// NewCatalog validates cfg and returns its Catalog. Errors name the index
// of the offending chain and wrap ErrInvalidChain.
func NewCatalog(cfg CatalogConfig) (*Catalog, error) {
	c := &Catalog{access: cfg.Access, builtin: newBuiltin(cfg.Access)}
	for i, ch := range cfg.Chains {
		if err := ch.Validate(); err != nil {
			return nil, fmt.Errorf("model chain %d: %w", i, err)
		}
		out := make(Chain, len(ch))
		from := make(map[string]string, len(ch))
		for j, p := range ch {
			if IsAutoAlias(p.Model) {
				return nil, fmt.Errorf("model chain %d: %w: %q is an auto-routing alias, not a model; name a model such as %q or %q instead",
					i, ErrInvalidChain, p.Model, AliasPro, DefaultProModel)
			}
			id := ResolveModel(p.Model, cfg.Access)
			if prev, dup := from[id]; dup {
				return nil, fmt.Errorf("model chain %d: %w: %q and %q both resolve to %q; list each model once",
					i, ErrInvalidChain, prev, p.Model, id)
			}
			from[id] = p.Model
			p = p.withDefaults()
			p.Model = id
			out[j] = p
		}
		c.chains = append(c.chains, out)
	}
	return c, nil
}

// Access returns the access the catalog resolves models for, so the
// router's strategies resolve aliases the same way.
func (c *Catalog) Access() Access {
	if c == nil {
		return Access{}
	}
	return c.access
}

// ChainQuery names the model a chain is wanted for. Empty fields are unset.
type ChainQuery struct {
	// Preferred is the model about to be called, if the caller has one (a
	// routed model, a utility call's model, a failed model).
	Preferred string
	// Active is the session's active model (the last one the chat used).
	Active string
	// Configured is the model the user configured, possibly an auto alias.
	// Empty means gemini-cli's default, "auto".
	Configured string
	// PlanMode makes every fallback silent (approval mode plan).
	PlanMode bool
}

// Resolve returns the chain for q, as gemini-cli's resolvePolicyChain does,
// and whether it wraps around. The model is Preferred, else Active, else
// Configured, resolved with [ResolveModel]. The template chain is:
//
//   - the first user chain containing the resolved model;
//   - the flash-lite chain if it resolves to the Flash Lite model;
//   - for the Gemini 3 family or an auto alias (preferred or configured),
//     the preview chain if the user has preview access and the request is
//     for Gemini 3 (the model, or "auto-gemini-3" preferred or configured),
//     otherwise the default 2.5 chain: gemini-cli downgrades proactively
//     instead of failing on a model the user cannot use. The Pro entry gets
//     the auto-routing overrides when an alias was preferred or configured;
//   - otherwise a single-model chain: an explicit model never falls back
//     across families.
//
// The chain is then sliced to start at the resolved model; when it wraps
// (forced for auto aliases, the Gemini 3 family and user chains) the models
// before it follow, so Flash can fall back to Pro. A resolved model missing
// from its template gets a single-model chain. Plan mode makes every
// action silent. Each call returns freshly built policies, so callers may
// edit them.
//
// wrap tells whether the chain wraps around. The chain is already rotated,
// so a fallback handler following gemini-cli's handleFallback calls
// FallbackCandidates on it without wrap.
func (c *Catalog) Resolve(q ChainQuery) (chain Chain, wrap bool) {
	chain, wrap = c.resolve(q)
	out := make(Chain, len(chain))
	for i, p := range chain {
		out[i] = p.withDefaults()
	}
	if q.PlanMode {
		out = out.Silent()
	}
	return out, wrap
}

// resolve is Resolve for the hot path of every model call: its policies
// share their maps with the catalog's templates (or have none, which the
// accessors read as the defaults) and must not be modified, and plan mode
// is ignored — only the fallback handler reads actions, through Resolve.
func (c *Catalog) resolve(q ChainQuery) (chain Chain, wrap bool) {
	acc := c.Access()
	preferred := NormalizeModelID(q.Preferred)
	configured := NormalizeModelID(q.Configured)
	if configured == "" {
		configured = AliasAuto
	}
	model := preferred
	if model == "" {
		model = NormalizeModelID(q.Active)
	}
	if model == "" {
		model = configured
	}

	// The family the user asked for, before access downgrades it.
	gemini3 := IsGemini3(model)
	resolved := ResolveModel(model, acc)
	autoPreferred := preferred != "" && IsAutoAlias(preferred)
	autoConfigured := IsAutoAlias(configured)
	wrap = autoPreferred || autoConfigured || gemini3

	var tmpl Chain
	if uc := c.userChain(resolved); uc != nil {
		tmpl = uc
		wrap = true
	} else if resolved == DefaultFlashLiteModel {
		tmpl = c.templates().flashLite
	} else if gemini3 || autoPreferred || autoConfigured {
		preview := acc.Preview &&
			(gemini3 || preferred == AliasAutoGemini3 || configured == AliasAutoGemini3)
		tmpl = c.templates().family[b2i(preview)][b2i(autoPreferred || autoConfigured)]
	} else {
		return Chain{{Model: resolved, LastResort: true}}, wrap
	}
	return startAt(tmpl, resolved, wrap), wrap
}

// builtin holds the built-in chain templates, built once per catalog.
type builtin struct {
	flashLite Chain
	family    [2][2]Chain // [preview][auto]
}

func newBuiltin(acc Access) *builtin {
	b := &builtin{flashLite: flashLiteChain()}
	for _, preview := range []bool{false, true} {
		for _, auto := range []bool{false, true} {
			b.family[b2i(preview)][b2i(auto)] = familyChain(acc, preview, auto)
		}
	}
	return b
}

// templates returns the built-in templates; a zero Catalog builds them on
// each call, a catalog from NewCatalog once.
func (c *Catalog) templates() *builtin {
	if c == nil || c.builtin == nil {
		return newBuiltin(c.Access())
	}
	return c.builtin
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// userChain returns the first user chain containing model, or nil.
func (c *Catalog) userChain(model string) Chain {
	if c == nil {
		return nil
	}
	for _, ch := range c.chains {
		if ch.Index(model) >= 0 {
			return ch
		}
	}
	return nil
}

// startAt rotates or slices tmpl to begin at model; a model not in tmpl
// gets a single-model chain, since the user asked for it specifically.
func startAt(tmpl Chain, model string, wrap bool) Chain {
	i := tmpl.Index(model)
	if i < 0 {
		return Chain{newPolicy(Policy{Model: model, LastResort: true})}
	}
	out := make(Chain, 0, len(tmpl))
	out = append(out, tmpl[i:]...)
	if wrap {
		out = append(out, tmpl[:i]...)
	}
	return out
}

// newPolicy is gemini-cli's definePolicy: p with every unset action prompt
// and every unset transition terminal.
func newPolicy(p Policy) Policy {
	return p.withDefaults()
}

// familyChain is gemini-cli's getModelPolicyChain: Pro then Flash (the last
// resort, 10 attempts) of the preview or the default family. Under auto
// routing a transient Pro failure falls back silently to Flash and leaves
// Pro sticky, so the next turn tries Pro again, with 3 attempts.
func familyChain(acc Access, preview bool, auto bool) Chain {
	pro := Policy{Model: DefaultProModel}
	flash := Policy{Model: DefaultFlashModel, LastResort: true, MaxAttempts: 10}
	if preview {
		pro.Model = modelid.PreviewPro(acc)
		flash.Model = PreviewFlashModel
	}
	if auto {
		pro.MaxAttempts = 3
		pro.Actions = map[FailureKind]Action{FailureTransient: ActionSilent}
		pro.Transitions = map[FailureKind]Transition{FailureTransient: TransitionSticky}
	}
	return Chain{newPolicy(pro), newPolicy(flash)}
}

// flashLiteChain is the chain of utility calls on Flash Lite: every
// fallback is silent because the user never chose these models.
func flashLiteChain() Chain {
	return Chain{
		newPolicy(Policy{Model: DefaultFlashLiteModel}),
		newPolicy(Policy{Model: DefaultFlashModel}),
		newPolicy(Policy{Model: DefaultProModel, LastResort: true}),
	}.Silent()
}
