package runtime

import (
	"context"
	"sync/atomic"

	"github.com/agentry-dev/agentry/policy"
	"github.com/agentry-dev/agentry/tools"
)

// toolExclusion is which of a session's tools its policy denies outright,
// so that they are not declared to the model (gemini-cli's
// getExcludedTools; a call to one then gets the guard's "not found"). It
// depends on the approval mode, the engine's rules (an "always" answer
// adds some) and the session's tools (an MCP server's change), so it is
// computed per (mode, rule version, tool snapshot) and cached: a
// model request in which neither changed costs an atomic load and a map
// lookup per tool. It is safe for concurrent use.
type toolExclusion struct {
	policy      *Policy
	interactive bool
	tools       func() *toolSnap // the session's tools now
	cur         atomic.Pointer[exclusionSet]
}

// exclusionSet is one computed exclusion.
type exclusionSet struct {
	mode     ApprovalMode
	version  uint64
	snap     *toolSnap       // the tools it was computed for
	excluded map[string]bool // by tool name; nil when none is
	active   []string        // the others' names, in the session's order
}

func newToolExclusion(p *Policy, interactive bool, ts func() *toolSnap) *toolExclusion {
	return &toolExclusion{policy: p, interactive: interactive, tools: ts}
}

// current returns the exclusion for the policy's mode and rules now.
func (x *toolExclusion) current() *exclusionSet {
	mode := x.policy.Mode()
	engine := x.policy.shared.engine
	version := engine.Version()
	snap := x.tools()
	if s := x.cur.Load(); s != nil && s.mode == mode && s.version == version && s.snap == snap {
		return s
	}
	s := &exclusionSet{mode: mode, version: version, snap: snap, active: make([]string, 0, len(snap.names))}
	em := engineMode(mode)
	for _, name := range snap.names {
		t := snap.byName[name]
		if engine.Excluded(policyTool(t), em, x.interactive) {
			if s.excluded == nil {
				s.excluded = map[string]bool{}
			}
			s.excluded[t.Name()] = true
			continue
		}
		s.active = append(s.active, t.Name())
	}
	x.cur.Store(s)
	return s
}

// excluded reports whether the tool named name is not offered now.
func (x *toolExclusion) excluded(name string) bool { return x.current().excluded[name] }

// activeNames returns the names of the tools offered now, for the guard's
// suggestions; the caller must not modify it.
func (x *toolExclusion) activeNames() []string { return x.current().active }

// policyTool is the engine's view of t for exclusion.
func policyTool(t tools.Tool) policy.Tool {
	pt := policy.Tool{Name: t.Name()}
	if m, ok := t.(mcpTool); ok {
		pt.Server, pt.ServerTool, _ = m.MCP()
		if a, ok := t.(annotated); ok {
			pt.Annotations = a.Annotations()
		}
	}
	return pt
}

// excludedCall tells the user, once per tool in a run, what would let
// the model use t, a tool the policy's defaults keep from it (not a rule
// the user wrote): the model only reads gemini-cli's "not found".
func excludedCall(ctx context.Context, p *Policy, interactive bool, t tools.Tool, args map[string]any) {
	if args == nil {
		args = map[string]any{}
	}
	d, _, _, res := p.decide(t, args, interactive)
	if d != Deny || !defaultDenial(res) {
		return
	}
	policyHint(ctx, streamStateFrom(ctx), p, t.Name(), allowHint(t, args))
}
