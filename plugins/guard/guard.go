// Package guard is the session guard as an ADK plugin: it counts the model
// calls of each stream and stops the stream at its limit, as gemini-cli's
// maxSessionTurns does, and answers a call to a tool the session does not
// offer as gemini-cli's scheduler does, naming the closest tools.
package guard

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/runtime/handle"
)

// Name is the plugin's name.
const Name = "agentry-session-guard"

// ErrMaxTurns is the cause of a stream stopped at its model-call limit.
var ErrMaxTurns = errors.New("maximum session turns exceeded")

// maxToolSuggestions is how many names a call to an unknown tool is
// offered (gemini-cli's getToolSuggestion topN).
const maxToolSuggestions = 3

// Config configures the guard.
type Config struct {
	// Tools are the names of the session's tools, in the order they were
	// given (the order that breaks ties between suggestions).
	Tools []string
	// Active, when set, returns the names of the tools the session offers
	// the model now, in the same order (the policy may leave some of Tools
	// out): a call to any other is one to an unknown tool, and only these
	// are suggested. Nil: all of Tools.
	Active func() []string
	// Unregistered, when set, is told of every call to a tool the session
	// lacks (or does not offer now), by function call id, with the name
	// and arguments the model gave, before the model gets its error.
	Unregistered func(ctx context.Context, callID, name string, args map[string]any)
}

// New returns the plugin.
func New(cfg Config) (*plugin.Plugin, error) {
	g := &guard{tools: slices.Clone(cfg.Tools), active: cfg.Active, unregistered: cfg.Unregistered}
	return plugin.New(plugin.Config{
		Name:                Name,
		BeforeModelCallback: g.beforeModel,
		OnToolErrorCallback: g.onToolError,
	})
}

// counterKey keys a stream's counter.
type counterKey struct{}

// counter is one stream's model calls and their limit.
type counter struct {
	limit atomic.Int64 // 0 or less: unlimited
	n     atomic.Int64
}

func newCounter() any { return new(counter) }

func counterOf(s handle.Stream) *counter { return s.Local(counterKey{}, newCounter).(*counter) }

// Limit sets the model-call limit of stream s; 0 or less is unlimited. The
// session sets it before the stream's first model call.
func Limit(s handle.Stream, maxTurns int) { counterOf(s).limit.Store(int64(maxTurns)) }

// Turns returns the model calls the guard has counted in stream s,
// including one it stopped at the limit.
func Turns(s handle.Stream) int { return int(counterOf(s).n.Load()) }

type guard struct {
	tools        []string
	active       func() []string
	unregistered func(ctx context.Context, callID, name string, args map[string]any)
}

// declared is implemented by the session's real tools; ADK's stand-in for
// an unknown tool lacks it.
type declared interface {
	Declaration() *genai.FunctionDeclaration
}

// beforeModel counts the stream's model calls and stops the stream at its
// limit.
func (g *guard) beforeModel(ctx agent.Context, _ *model.LLMRequest) (*model.LLMResponse, error) {
	s := handle.From(ctx)
	if s == nil {
		return nil, nil
	}
	c := counterOf(s)
	n := c.n.Add(1)
	if limit := c.limit.Load(); limit > 0 && n > limit {
		s.Cancel(ErrMaxTurns)
		return nil, ErrMaxTurns
	}
	return nil, nil
}

// onToolError is an ADK OnToolErrorCallback. ADK calls it with a stand-in
// tool when the model names one the agent lacks; errors of real tools
// pass through.
func (g *guard) onToolError(ctx agent.Context, t tool.Tool, args map[string]any, _ error) (map[string]any, error) {
	names := g.tools
	if g.active != nil {
		names = g.active()
	}
	if _, real := t.(declared); real || slices.Contains(names, t.Name()) {
		return nil, nil
	}
	if g.unregistered != nil {
		g.unregistered(ctx, ctx.FunctionCallID(), t.Name(), args)
	}
	return nil, errors.New(`Tool "` + t.Name() + `" not found.` + toolSuggestion(t.Name(), names))
}

// toolSuggestion is gemini-cli's getToolSuggestion: the names closest to
// name by Levenshtein distance, ties in the tools' order, as
// ` Did you mean "a"?` or ` Did you mean one of: "a", "b", "c"?`.
func toolSuggestion(name string, names []string) string {
	type match struct {
		name string
		dist int
	}
	ms := make([]match, len(names))
	for i, n := range names {
		ms[i] = match{n, levenshtein(name, n)}
	}
	slices.SortStableFunc(ms, func(a, b match) int { return cmp.Compare(a.dist, b.dist) })
	ms = ms[:min(len(ms), maxToolSuggestions)]
	if len(ms) == 0 {
		return ""
	}
	quoted := make([]string, len(ms))
	for i, m := range ms {
		quoted[i] = `"` + m.name + `"`
	}
	if len(ms) > 1 {
		return " Did you mean one of: " + strings.Join(quoted, ", ") + "?"
	}
	return " Did you mean " + quoted[0] + "?"
}

// levenshtein is the edit distance between a and b in characters
// (fast-levenshtein counts UTF-16 code units; for tool names, which are
// ASCII, the two agree).
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) == 0 {
		return len(rb)
	}
	row := make([]int, len(rb)+1)
	for j := range row {
		row[j] = j
	}
	for i, ca := range ra {
		prev := row[0]
		row[0] = i + 1
		for j, cb := range rb {
			cost := 1
			if ca == cb {
				cost = 0
			}
			cur := min(prev+cost, row[j]+1, row[j+1]+1)
			prev, row[j+1] = row[j+1], cur
		}
	}
	return row[len(rb)]
}
