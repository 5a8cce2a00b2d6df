package routing

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPolicyDefaults(t *testing.T) {
	var zero Policy
	for _, k := range failureKinds {
		if got := zero.Action(k); got != ActionPrompt {
			t.Errorf("zero Policy.Action(%s) = %q, want prompt", k, got)
		}
		if got := zero.Transition(k); got != TransitionTerminal {
			t.Errorf("zero Policy.Transition(%s) = %q, want terminal", k, got)
		}
	}
	p := Policy{
		Actions:     map[FailureKind]Action{FailureTransient: ActionSilent, FailureUnknown: ""},
		Transitions: map[FailureKind]Transition{FailureTransient: TransitionSticky},
	}
	if got := p.Action(FailureTransient); got != ActionSilent {
		t.Errorf("Action(transient) = %q, want silent", got)
	}
	if got := p.Action(FailureUnknown); got != ActionPrompt {
		t.Errorf("empty Action(unknown) = %q, want prompt", got)
	}
	if got := p.Transition(FailureTransient); got != TransitionSticky {
		t.Errorf("Transition(transient) = %q, want sticky_retry", got)
	}
	if got := p.Transition(FailureTerminal); got != TransitionTerminal {
		t.Errorf("Transition(terminal) = %q, want terminal", got)
	}
}

func TestPolicyCloneIsDeep(t *testing.T) {
	p := Policy{
		Model:       "m",
		Actions:     map[FailureKind]Action{FailureTerminal: ActionPrompt},
		Transitions: map[FailureKind]Transition{FailureTerminal: TransitionTerminal},
	}
	c := p.Clone()
	c.Actions[FailureTerminal] = ActionSilent
	c.Transitions[FailureTerminal] = TransitionSticky
	if p.Actions[FailureTerminal] != ActionPrompt || p.Transitions[FailureTerminal] != TransitionTerminal {
		t.Errorf("editing a clone changed the original: %+v", p)
	}
	if c := (Policy{Model: "m"}).Clone(); c.Actions != nil || c.Transitions != nil {
		t.Errorf("Clone of nil maps = %+v, want nil maps", c)
	}

	ch := Chain{p}
	cc := ch.Clone()
	cc[0].Model = "x"
	cc[0].Actions[FailureTerminal] = ActionSilent
	if ch[0].Model != "m" || ch[0].Actions[FailureTerminal] != ActionPrompt {
		t.Errorf("editing a chain clone changed the original: %+v", ch)
	}
	if Chain(nil).Clone() != nil {
		t.Error("Chain(nil).Clone() != nil")
	}
}

func TestChainValidate(t *testing.T) {
	lr := func(m string) Policy { return Policy{Model: m, LastResort: true} }
	tests := []struct {
		name  string
		chain Chain
		want  string // substring of the error; "" = valid
	}{
		{name: "single last resort", chain: Chain{lr("a")}},
		{name: "last resort not last", chain: Chain{lr("a"), {Model: "b"}}},
		{name: "full policy", chain: Chain{{
			Model:       "a",
			Actions:     map[FailureKind]Action{FailureTerminal: ActionPrompt, FailureTransient: ActionSilent, FailureNotFound: ActionPrompt, FailureUnknown: ActionSilent},
			Transitions: map[FailureKind]Transition{FailureTerminal: TransitionTerminal, FailureTransient: TransitionSticky},
			MaxAttempts: 3,
		}, lr("b")}},
		{name: "nil", chain: nil, want: "no models"},
		{name: "empty", chain: Chain{}, want: "no models"},
		{name: "no last resort", chain: Chain{{Model: "a"}, {Model: "b"}}, want: "no model is marked lastResort"},
		{name: "single model not last resort", chain: Chain{{Model: "a"}}, want: "no model is marked lastResort"},
		{name: "two last resorts", chain: Chain{lr("a"), lr("b")}, want: `both "a" and "b" are marked lastResort`},
		{name: "empty model name", chain: Chain{{Model: ""}, lr("b")}, want: "entry 0 has no model name"},
		{name: "blank model name", chain: Chain{lr("a"), {Model: "  "}}, want: "entry 1 has no model name"},
		{name: "bare models/ prefix", chain: Chain{lr("a"), {Model: "models/"}}, want: "entry 1 has no model name"},
		{name: "duplicate model", chain: Chain{{Model: "a"}, lr("a")}, want: `"a" appears twice (entries 0 and 1)`},
		{name: "duplicate after normalizing", chain: Chain{{Model: "models/a"}, lr("gemini:a")}, want: `"a" appears twice`},
		{name: "unknown action kind", chain: Chain{{Model: "a", Actions: map[FailureKind]Action{"quota": ActionSilent}}, lr("b")}, want: `unknown failure kind "quota" in actions`},
		{name: "unknown action", chain: Chain{{Model: "a", Actions: map[FailureKind]Action{FailureTerminal: "ask"}}, lr("b")}, want: `unknown action "ask" for terminal`},
		{name: "unknown transition kind", chain: Chain{{Model: "a", Transitions: map[FailureKind]Transition{"Terminal": TransitionTerminal}}, lr("b")}, want: `unknown failure kind "Terminal" in transitions`},
		{name: "unknown transition", chain: Chain{{Model: "a", Transitions: map[FailureKind]Transition{FailureTransient: "healthy"}}, lr("b")}, want: `unknown transition "healthy" for transient`},
		{name: "negative maxAttempts", chain: Chain{{Model: "a", MaxAttempts: -1}, lr("b")}, want: "maxAttempts is -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.chain.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidChain) {
				t.Fatalf("Validate() = %v, want ErrInvalidChain", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestChainAccessors(t *testing.T) {
	c := Chain{{Model: "a"}, {Model: "models/b", MaxAttempts: 2}, {Model: "c", LastResort: true}}
	for _, tc := range []struct {
		model string
		want  int
	}{{"a", 0}, {"b", 1}, {"gemini:b", 1}, {"models/c", 2}, {"x", -1}, {"", -1}} {
		if got := c.Index(tc.model); got != tc.want {
			t.Errorf("Index(%q) = %d, want %d", tc.model, got, tc.want)
		}
	}
	if p, ok := c.Policy("b"); !ok || p.MaxAttempts != 2 {
		t.Errorf("Policy(b) = %+v, %v", p, ok)
	}
	if _, ok := c.Policy("x"); ok {
		t.Error("Policy(x) found")
	}
	if p, ok := c.LastResort(); !ok || p.Model != "c" {
		t.Errorf("LastResort() = %+v, %v; want c", p, ok)
	}
	if _, ok := c[:2].LastResort(); ok {
		t.Error("LastResort() found one in a chain without")
	}
	if diff := cmp.Diff([]string{"a", "models/b", "c"}, c.Models()); diff != "" {
		t.Errorf("Models() mismatch (-want +got):\n%s", diff)
	}
}

func TestChainSilent(t *testing.T) {
	c := Chain{
		{Model: "a", Actions: map[FailureKind]Action{FailureTerminal: ActionPrompt}, Transitions: map[FailureKind]Transition{FailureTransient: TransitionSticky}},
		{Model: "b", LastResort: true},
	}
	s := c.Silent()
	for _, p := range s {
		for _, k := range failureKinds {
			if p.Action(k) != ActionSilent || p.Actions[k] != ActionSilent {
				t.Errorf("Silent(): %s action for %s = %q", p.Model, k, p.Actions[k])
			}
		}
	}
	if s[0].Transition(FailureTransient) != TransitionSticky || !s[1].LastResort {
		t.Errorf("Silent() changed more than the actions: %+v", s)
	}
	if c[0].Actions[FailureTerminal] != ActionPrompt || c[1].Actions != nil {
		t.Errorf("Silent() changed the original: %+v", c)
	}
}

func TestFallbackCandidates(t *testing.T) {
	abc := Chain{{Model: "a"}, {Model: "b"}, {Model: "c", LastResort: true}}
	tests := []struct {
		name   string
		failed string
		wrap   bool
		want   []string
	}{
		{name: "after middle", failed: "b", want: []string{"c"}},
		{name: "after middle wrapping", failed: "b", wrap: true, want: []string{"c", "a"}},
		{name: "after first", failed: "a", want: []string{"b", "c"}},
		{name: "after first wrapping", failed: "a", wrap: true, want: []string{"b", "c"}},
		{name: "after last", failed: "c", want: []string{}},
		{name: "after last wrapping", failed: "c", wrap: true, want: []string{"a", "b"}},
		{name: "normalized failed", failed: "models/b", want: []string{"c"}},
		{name: "unknown failed is the whole chain", failed: "x", want: []string{"a", "b", "c"}},
		{name: "unknown failed wrapping is the whole chain", failed: "x", wrap: true, want: []string{"a", "b", "c"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := FallbackCandidates(abc, tc.failed, tc.wrap)
			if diff := cmp.Diff(tc.want, got.Models()); diff != "" {
				t.Errorf("FallbackCandidates mismatch (-want +got):\n%s", diff)
			}
			// The result must not alias the chain's backing array.
			if len(got) > 0 {
				got[0].Model = "changed"
				_ = append(got, Policy{Model: "appended"})
			}
			if diff := cmp.Diff([]string{"a", "b", "c"}, abc.Models()); diff != "" {
				t.Errorf("FallbackCandidates result aliases the chain (-want +got):\n%s", diff)
			}
		})
	}
	if got := FallbackCandidates(nil, "a", true); len(got) != 0 {
		t.Errorf("FallbackCandidates(nil) = %v", got)
	}
}

func TestSelectForAvailability(t *testing.T) {
	chain := Chain{{Model: "a"}, {Model: "b", LastResort: true}, {Model: "c"}}
	tests := []struct {
		name  string
		chain Chain
		setup func(a *Availability)
		want  Selection
	}{
		{name: "first available", chain: chain, want: Selection{Model: "a"}},
		{name: "skips unavailable", chain: chain, setup: func(a *Availability) { a.MarkTerminal("a", ReasonQuota) }, want: Selection{Model: "b", Skipped: []Skipped{{"a", ReasonQuota}}}},
		{name: "sticky attempts", chain: chain, setup: func(a *Availability) { a.MarkRetryOncePerTurn("a", 3) }, want: Selection{Model: "a", Attempts: 3}},
		{
			name:  "none available: last resort",
			chain: chain,
			setup: func(a *Availability) {
				a.MarkTerminal("a", ReasonQuota)
				a.MarkTerminal("b", ReasonQuota)
				a.MarkTerminal("c", ReasonCapacity)
			},
			want: Selection{Model: "b"},
		},
		{
			name:  "none available, no last resort: default pro",
			chain: Chain{{Model: "a"}},
			setup: func(a *Availability) { a.MarkTerminal("a", ReasonQuota) },
			want:  Selection{Model: DefaultProModel},
		},
		{name: "empty chain: default pro", chain: nil, want: Selection{Model: DefaultProModel}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAvailability()
			if tc.setup != nil {
				tc.setup(a)
			}
			if diff := cmp.Diff(tc.want, SelectionForAvailability(tc.chain, a)); diff != "" {
				t.Errorf("SelectionForAvailability mismatch (-want +got):\n%s", diff)
			}
			if got := SelectForAvailability(tc.chain, a); got != tc.want.Model {
				t.Errorf("SelectForAvailability = %q, want %q", got, tc.want.Model)
			}
		})
	}
}
