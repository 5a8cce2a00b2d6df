package runtime

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"

	"github.com/agentry-dev/agentry/tools"
)

// ToolSource is a set of tools that may change while a session runs: the
// MCP servers' tools, which a server can replace by announcing a new list
// (notifications/tools/list_changed) or which a server started late lists
// afresh. The session declares the source's current tools in every model
// request, after its fixed tools.
type ToolSource interface {
	// Version changes whenever Current would return a different set. It
	// is called before every model request, so it must be cheap.
	Version() uint64
	// Current returns the tools as of the latest version.
	Current() []tools.Tool
}

// toolTable is a session's tools: the fixed ones of Config.Tools and the
// current ones of a ToolSource, rebuilt only when the source's version
// changes.
type toolTable struct {
	src  ToolSource // nil: the fixed tools only
	wrap func(tools.Tool) *scheduledTool
	// rules adds the policy rules a set of the source's tools implies (a
	// trusted server's); it skips rules it already has.
	rules func([]tools.Tool) error
	log   *slog.Logger

	mu   sync.Mutex // serialises rebuilds
	snap atomic.Pointer[toolSnap]
}

// toolSnap is one version of a session's tools.
type toolSnap struct {
	version uint64
	fixed   int // how many of names are fixed tools
	byName  map[string]tools.Tool
	names   []string         // fixed tools first, in Config order
	dynamic []*scheduledTool // the source's tools, as declared
}

func newToolTable(fixed []tools.Tool, src ToolSource, wrap func(tools.Tool) *scheduledTool, rules func([]tools.Tool) error, log *slog.Logger) *toolTable {
	t := &toolTable{src: src, wrap: wrap, rules: rules, log: log}
	s := &toolSnap{byName: make(map[string]tools.Tool, len(fixed)), fixed: len(fixed)}
	for _, tl := range fixed {
		s.byName[tl.Name()] = tl
		s.names = append(s.names, tl.Name())
	}
	if src != nil {
		s = t.rebuild(s, src.Version(), src.Current())
	}
	t.snap.Store(s)
	return t
}

// current returns the tools as of the source's latest version. When
// nothing changed it costs the source's Version and one atomic load.
func (t *toolTable) current() *toolSnap {
	s := t.snap.Load()
	if t.src == nil {
		return s
	}
	v := t.src.Version()
	if v == s.version {
		return s
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if s = t.snap.Load(); s.version == v {
		return s
	}
	s = t.rebuild(s, v, t.src.Current())
	t.snap.Store(s)
	return s
}

// rebuild returns a snapshot of the fixed tools of prev and the source's
// tools ts at version v. A source tool named like a fixed one is left out.
func (t *toolTable) rebuild(prev *toolSnap, v uint64, ts []tools.Tool) *toolSnap {
	s := &toolSnap{version: v, fixed: prev.fixed, byName: make(map[string]tools.Tool, prev.fixed+len(ts)),
		names: append([]string(nil), prev.names[:prev.fixed]...)}
	for _, name := range s.names {
		s.byName[name] = prev.byName[name]
	}
	for _, tl := range ts {
		if _, dup := s.byName[tl.Name()]; dup {
			t.log.Warn("tool left out: another tool of the session has its name", "tool", tl.Name())
			continue
		}
		s.byName[tl.Name()] = tl
		s.names = append(s.names, tl.Name())
		s.dynamic = append(s.dynamic, t.wrap(tl))
	}
	if t.rules != nil {
		if err := t.rules(ts); err != nil {
			t.log.Warn("policy rules of the MCP tools", "err", err)
		}
	}
	return s
}

// toolsProcessor declares the source's current tools in every model
// request, so that a changed set is seen from the next request on, and
// ADK dispatches calls through the request's own tool map.
type toolsProcessor struct{ t *toolTable }

// ProcessRequest adds the current dynamic tools to req.
func (p toolsProcessor) ProcessRequest(ctx agent.Context, req *model.LLMRequest) error {
	for _, st := range p.t.current().dynamic {
		// The tool's own ProcessRequest leaves out what the policy denies.
		if err := st.ProcessRequest(ctx, req); err != nil {
			return err
		}
	}
	return nil
}

// Name identifies the processor.
func (toolsProcessor) Name() string { return "agentry-dynamic-tools" }
