package routing

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pol builds a policy as gemini-cli's definePolicy does: every kind
// prompt/terminal unless overridden.
func pol(model string, lastResort bool, maxAttempts int) Policy {
	return Policy{Model: model, LastResort: lastResort, MaxAttempts: maxAttempts}.withDefaults()
}

// autoPro is the Pro entry under auto routing.
func autoPro(model string) Policy {
	p := pol(model, false, 3)
	p.Actions[FailureTransient] = ActionSilent
	p.Transitions[FailureTransient] = TransitionSticky
	return p
}

func silent(p Policy) Policy { return Chain{p}.Silent()[0] }

func TestCatalogBuiltinChains(t *testing.T) {
	preview := Access{Preview: true}
	tests := []struct {
		name     string
		acc      Access
		q        ChainQuery
		want     Chain
		wantWrap bool
	}{
		{
			name:     "auto with preview: auto preview chain",
			acc:      preview,
			q:        ChainQuery{Configured: AliasAuto},
			want:     Chain{autoPro(PreviewProModel), pol(PreviewFlashModel, true, 10)},
			wantWrap: true,
		},
		{
			name:     "auto without preview: auto default chain",
			q:        ChainQuery{Configured: AliasAuto},
			want:     Chain{autoPro(DefaultProModel), pol(DefaultFlashModel, true, 10)},
			wantWrap: true,
		},
		{
			name:     "auto-gemini-3 with 3.1 launched",
			acc:      Access{Preview: true, Gemini31: true},
			q:        ChainQuery{Configured: AliasAutoGemini3},
			want:     Chain{autoPro(Preview31ProModel), pol(PreviewFlashModel, true, 10)},
			wantWrap: true,
		},
		{
			name:     "explicit gemini 3 pro: preview chain without auto overrides",
			acc:      preview,
			q:        ChainQuery{Configured: PreviewProModel},
			want:     Chain{pol(PreviewProModel, false, 0), pol(PreviewFlashModel, true, 10)},
			wantWrap: true,
		},
		{
			name: "flash-lite chain is silent",
			q:    ChainQuery{Preferred: FlashLite31Model, Configured: AliasAutoGemini25},
			want: Chain{
				silent(pol(FlashLite31Model, false, 0)),
				silent(pol(DefaultFlashModel, false, 0)),
				silent(pol(DefaultProModel, true, 0)),
			},
			wantWrap: true,
		},
		{
			name: "concrete 2.5 model: single chain",
			acc:  preview,
			q:    ChainQuery{Configured: DefaultProModel},
			want: Chain{pol(DefaultProModel, true, 0)},
		},
		{
			name:     "plan mode: every action silent, transitions kept",
			acc:      preview,
			q:        ChainQuery{Configured: AliasAuto, PlanMode: true},
			want:     Chain{silent(autoPro(PreviewProModel)), silent(pol(PreviewFlashModel, true, 10))},
			wantWrap: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewCatalog(CatalogConfig{Access: tc.acc})
			if err != nil {
				t.Fatal(err)
			}
			got, wrap := c.Resolve(tc.q)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Resolve(%+v) mismatch (-want +got):\n%s", tc.q, diff)
			}
			if wrap != tc.wantWrap {
				t.Errorf("Resolve(%+v) wrap = %v, want %v", tc.q, wrap, tc.wantWrap)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("resolved chain invalid: %v", err)
			}
		})
	}
}

// TestCatalogResolveModels covers every branch of resolvePolicyChain by the
// order of the resolved chain.
func TestCatalogResolveModels(t *testing.T) {
	var (
		none    = Access{}
		preview = Access{Preview: true}
	)
	users := []Chain{
		{{Model: "openai:llama3"}, {Model: DefaultFlashModel, LastResort: true}},
		{{Model: "openai:gpt-4o"}, {Model: "replay:r.jsonl", LastResort: true}},
		{{Model: "openai:gpt-4o"}, {Model: "openai:other", LastResort: true}}, // shadowed by the chain above
	}
	tests := []struct {
		name     string
		acc      Access
		users    []Chain
		q        ChainQuery
		want     []string
		wantWrap bool
	}{
		// Precedence: preferred, then active, then configured.
		{name: "preferred wins", acc: preview, q: ChainQuery{Preferred: "p-model", Active: "a-model", Configured: "c-model"}, want: []string{"p-model"}},
		{name: "active without preferred", acc: preview, q: ChainQuery{Active: "a-model", Configured: "c-model"}, want: []string{"a-model"}},
		{name: "configured without both", acc: preview, q: ChainQuery{Configured: "c-model"}, want: []string{"c-model"}},
		{name: "blank preferred is unset", acc: preview, q: ChainQuery{Preferred: "  ", Active: "a-model", Configured: "c-model"}, want: []string{"a-model"}},
		{name: "empty query is auto", q: ChainQuery{}, want: []string{DefaultProModel, DefaultFlashModel}, wantWrap: true},
		{name: "preferred is normalized", acc: preview, q: ChainQuery{Preferred: "models/" + DefaultProModel, Configured: "x"}, want: []string{DefaultProModel}},

		// Flash Lite.
		{name: "flash-lite alias configured", q: ChainQuery{Configured: AliasFlashLite}, want: []string{FlashLite31Model, DefaultFlashModel, DefaultProModel}, wantWrap: true},
		{name: "flash-lite preferred under auto", acc: preview, q: ChainQuery{Preferred: FlashLite31Model, Configured: AliasAuto}, want: []string{FlashLite31Model, DefaultFlashModel, DefaultProModel}, wantWrap: true},
		{name: "2.5 flash lite is an ordinary model", acc: preview, q: ChainQuery{Configured: Flash25LiteModel}, want: []string{Flash25LiteModel}},

		// Auto aliases.
		{name: "auto, preview", acc: preview, q: ChainQuery{Configured: AliasAuto}, want: []string{PreviewProModel, PreviewFlashModel}, wantWrap: true},
		{name: "auto, no preview", acc: none, q: ChainQuery{Configured: AliasAuto}, want: []string{DefaultProModel, DefaultFlashModel}, wantWrap: true},
		{name: "auto-gemini-3, preview", acc: preview, q: ChainQuery{Configured: AliasAutoGemini3}, want: []string{PreviewProModel, PreviewFlashModel}, wantWrap: true},
		{name: "auto-gemini-3, no preview downgrades", acc: none, q: ChainQuery{Configured: AliasAutoGemini3}, want: []string{DefaultProModel, DefaultFlashModel}, wantWrap: true},
		{name: "auto-gemini-2.5 even with preview", acc: preview, q: ChainQuery{Configured: AliasAutoGemini25}, want: []string{DefaultProModel, DefaultFlashModel}, wantWrap: true},
		{name: "auto preferred over concrete configured", acc: preview, q: ChainQuery{Preferred: AliasAutoGemini25, Configured: DefaultProModel}, want: []string{DefaultProModel, DefaultFlashModel}, wantWrap: true},
		{name: "auto configured, concrete preferred", acc: preview, q: ChainQuery{Preferred: DefaultProModel, Configured: AliasAutoGemini25}, want: []string{DefaultProModel, DefaultFlashModel}, wantWrap: true},
		{name: "auto configured, routed to 2.5 flash: wraps to pro", acc: preview, q: ChainQuery{Preferred: DefaultFlashModel, Configured: AliasAuto}, want: []string{DefaultFlashModel, DefaultProModel}, wantWrap: true},
		{name: "auto configured, active preview flash: wraps to pro", acc: preview, q: ChainQuery{Active: PreviewFlashModel, Configured: AliasAuto}, want: []string{PreviewFlashModel, PreviewProModel}, wantWrap: true},
		{name: "auto-gemini-3 configured, preferred 2.5 flash: preview chain lacks it", acc: preview, q: ChainQuery{Preferred: DefaultFlashModel, Configured: AliasAutoGemini3}, want: []string{DefaultFlashModel}, wantWrap: true},
		{name: "auto configured, preferred openai: not in chain", acc: preview, q: ChainQuery{Preferred: "openai:gpt-4o", Configured: AliasAuto}, want: []string{"openai:gpt-4o"}, wantWrap: true},

		// Gemini 3 family without an alias.
		{name: "gemini 3 pro, preview", acc: preview, q: ChainQuery{Configured: PreviewProModel}, want: []string{PreviewProModel, PreviewFlashModel}, wantWrap: true},
		{name: "gemini 3 flash wraps to pro", acc: preview, q: ChainQuery{Configured: PreviewFlashModel}, want: []string{PreviewFlashModel, PreviewProModel}, wantWrap: true},
		{name: "gemini 3 flash, no preview: 2.5 flash then pro", acc: none, q: ChainQuery{Configured: PreviewFlashModel}, want: []string{DefaultFlashModel, DefaultProModel}, wantWrap: true},
		{name: "gemini 3 pro with 3.1 launched", acc: Access{Preview: true, Gemini31: true}, q: ChainQuery{Configured: PreviewProModel}, want: []string{Preview31ProModel, PreviewFlashModel}, wantWrap: true},
		{name: "gemini 3.1 pro before launch: single", acc: preview, q: ChainQuery{Configured: Preview31ProModel}, want: []string{Preview31ProModel}, wantWrap: true},
		{name: "custom tools variant", acc: Access{Preview: true, Gemini31: true, CustomTools: true}, q: ChainQuery{Configured: AliasPro}, want: []string{Preview31CustomToolsModel, PreviewFlashModel}, wantWrap: true},
		{name: "flash alias, preview", acc: preview, q: ChainQuery{Configured: AliasFlash}, want: []string{PreviewFlashModel, PreviewProModel}, wantWrap: true},
		{name: "pro alias, no preview", acc: none, q: ChainQuery{Configured: AliasPro}, want: []string{DefaultProModel, DefaultFlashModel}, wantWrap: true},

		// Concrete and foreign models: single chains.
		{name: "2.5 pro", acc: preview, q: ChainQuery{Configured: DefaultProModel}, want: []string{DefaultProModel}},
		{name: "2.5 flash", acc: preview, q: ChainQuery{Configured: "gemini:" + DefaultFlashModel}, want: []string{DefaultFlashModel}},
		{name: "custom model", acc: preview, q: ChainQuery{Configured: "my-custom-model"}, want: []string{"my-custom-model"}},
		{name: "openai", acc: preview, q: ChainQuery{Configured: "openai:gpt-4o"}, want: []string{"openai:gpt-4o"}},
		{name: "replay", acc: preview, q: ChainQuery{Configured: "replay:x.jsonl"}, want: []string{"replay:x.jsonl"}},

		// User chains.
		{name: "user mixed chain from its head", acc: preview, users: users, q: ChainQuery{Configured: "openai:llama3"}, want: []string{"openai:llama3", DefaultFlashModel}, wantWrap: true},
		{name: "user mixed chain wraps from flash", acc: preview, users: users, q: ChainQuery{Preferred: DefaultFlashModel, Configured: "openai:llama3"}, want: []string{DefaultFlashModel, "openai:llama3"}, wantWrap: true},
		{name: "user chain for a configured gemini model", acc: preview, users: users, q: ChainQuery{Configured: "models/" + DefaultFlashModel}, want: []string{DefaultFlashModel, "openai:llama3"}, wantWrap: true},
		{name: "user chain beats the built-in auto chain", acc: preview, users: users, q: ChainQuery{Active: DefaultFlashModel, Configured: AliasAuto}, want: []string{DefaultFlashModel, "openai:llama3"}, wantWrap: true},
		{name: "first matching user chain wins", acc: preview, users: users, q: ChainQuery{Configured: "openai:gpt-4o"}, want: []string{"openai:gpt-4o", "replay:r.jsonl"}, wantWrap: true},
		{name: "replay model in a user chain", acc: preview, users: users, q: ChainQuery{Configured: "replay:r.jsonl"}, want: []string{"replay:r.jsonl", "openai:gpt-4o"}, wantWrap: true},
		{name: "model in no user chain", acc: preview, users: users, q: ChainQuery{Configured: DefaultProModel}, want: []string{DefaultProModel}},
		{name: "auto model in no user chain", acc: preview, users: users, q: ChainQuery{Configured: AliasAuto}, want: []string{PreviewProModel, PreviewFlashModel}, wantWrap: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewCatalog(CatalogConfig{Access: tc.acc, Chains: tc.users})
			if err != nil {
				t.Fatal(err)
			}
			got, wrap := c.Resolve(tc.q)
			if diff := cmp.Diff(tc.want, got.Models()); diff != "" {
				t.Errorf("Resolve(%+v) models mismatch (-want +got):\n%s", tc.q, diff)
			}
			if wrap != tc.wantWrap {
				t.Errorf("Resolve(%+v) wrap = %v, want %v", tc.q, wrap, tc.wantWrap)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("resolved chain invalid: %v", err)
			}
		})
	}
}

func TestCatalogUserChainPolicies(t *testing.T) {
	c, err := NewCatalog(CatalogConfig{
		Access: Access{Preview: true},
		Chains: []Chain{{
			{Model: "openai:llama3", Actions: map[FailureKind]Action{FailureTransient: ActionSilent}, MaxAttempts: 2},
			{Model: AliasFlash, LastResort: true, Transitions: map[FailureKind]Transition{FailureTransient: TransitionSticky}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	llama := pol("openai:llama3", false, 2)
	llama.Actions[FailureTransient] = ActionSilent
	flash := pol(PreviewFlashModel, true, 0) // the alias resolved with the catalog's access
	flash.Transitions[FailureTransient] = TransitionSticky

	got, wrap := c.Resolve(ChainQuery{Configured: AliasFlash})
	if diff := cmp.Diff(Chain{flash, llama}, got); diff != "" || !wrap {
		t.Errorf("Resolve(flash) wrap=%v mismatch (-want +got):\n%s", wrap, diff)
	}
	got, _ = c.Resolve(ChainQuery{Configured: "openai:llama3", PlanMode: true})
	if diff := cmp.Diff(Chain{silent(llama), silent(flash)}, got); diff != "" {
		t.Errorf("plan mode mismatch (-want +got):\n%s", diff)
	}
}

func TestCatalogResolveReturnsFreshClones(t *testing.T) {
	c, err := NewCatalog(CatalogConfig{
		Access: Access{Preview: true},
		Chains: []Chain{{{Model: "openai:a"}, {Model: "openai:b", LastResort: true}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []ChainQuery{
		{Configured: AliasAuto},
		{Configured: AliasFlashLite},
		{Configured: DefaultProModel},
		{Configured: "openai:a"},
		{Configured: AliasAuto, PlanMode: true},
	} {
		first, _ := c.Resolve(q)
		want, _ := c.Resolve(q)
		for i := range first {
			first[i].Model = "mutated"
			first[i].LastResort = !first[i].LastResort
			for _, k := range failureKinds {
				first[i].Actions[k] = "mutated"
				first[i].Transitions[k] = "mutated"
			}
		}
		again, _ := c.Resolve(q)
		if diff := cmp.Diff(want, again); diff != "" {
			t.Errorf("Resolve(%+v) changed after mutating an earlier result (-want +got):\n%s", q, diff)
		}
	}
}

func TestNewCatalogErrors(t *testing.T) {
	ok := Chain{{Model: "openai:a"}, {Model: "openai:b", LastResort: true}}
	tests := []struct {
		name   string
		chains []Chain
		want   []string
	}{
		{name: "invalid second chain", chains: []Chain{ok, {{Model: "x"}}}, want: []string{"model chain 1", "no model is marked lastResort"}},
		{name: "empty chain", chains: []Chain{{}}, want: []string{"model chain 0", "no models"}},
		{name: "auto alias", chains: []Chain{{{Model: AliasAuto}, {Model: "x", LastResort: true}}}, want: []string{"model chain 0", `"auto" is an auto-routing alias`}},
		{name: "alias duplicates its target", chains: []Chain{{{Model: AliasPro}, {Model: DefaultProModel, LastResort: true}}}, want: []string{"model chain 0", `"pro" and "gemini-2.5-pro" both resolve to "gemini-2.5-pro"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewCatalog(CatalogConfig{Chains: tc.chains})
			if c != nil || !errors.Is(err, ErrInvalidChain) {
				t.Fatalf("NewCatalog = %v, %v; want nil, ErrInvalidChain", c, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestCatalogDoesNotKeepConfig(t *testing.T) {
	user := Chain{{Model: "openai:a"}, {Model: "openai:b", LastResort: true}}
	cfg := CatalogConfig{Chains: []Chain{user}}
	c, err := NewCatalog(cfg)
	if err != nil {
		t.Fatal(err)
	}
	user[0].Model = "openai:changed"
	if got, _ := c.Resolve(ChainQuery{Configured: "openai:a"}); got.Index("openai:b") != 1 {
		t.Errorf("editing the config after NewCatalog changed the catalog: %v", got.Models())
	}
}

func TestNilCatalog(t *testing.T) {
	var c *Catalog
	if c.Access() != (Access{}) {
		t.Error("nil Catalog has access")
	}
	got, wrap := c.Resolve(ChainQuery{Configured: AliasAuto})
	if diff := cmp.Diff([]string{DefaultProModel, DefaultFlashModel}, got.Models()); diff != "" || !wrap {
		t.Errorf("nil Catalog Resolve wrap=%v mismatch (-want +got):\n%s", wrap, diff)
	}
}

func TestCatalogConcurrentResolve(t *testing.T) {
	c, err := NewCatalog(CatalogConfig{
		Access: Access{Preview: true},
		Chains: []Chain{{{Model: "openai:a"}, {Model: DefaultFlashModel, LastResort: true}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				q := []ChainQuery{{Configured: AliasAuto}, {Preferred: DefaultFlashModel}, {Configured: "openai:a", PlanMode: true}}[(g+i)%3]
				ch, _ := c.Resolve(q)
				ch[0].Actions[FailureTerminal] = ActionSilent
			}
		}()
	}
	wg.Wait()
}
