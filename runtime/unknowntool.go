package runtime

import (
	"cmp"
	"errors"
	"slices"
	"strings"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/tool"

	"github.com/agentry-dev/agentry/tools"
)

// maxToolSuggestions is how many names a call to an unknown tool is
// offered (gemini-cli's getToolSuggestion topN).
const maxToolSuggestions = 3

// unknownTools answers a call to a tool the session does not offer as
// gemini-cli's scheduler does: a tool_not_registered error naming the
// closest tools, instead of ADK's text for the agent's developer.
type unknownTools struct {
	names []string // the session's tools in the order they were given
}

// onToolError is an ADK OnToolErrorCallback. ADK calls it with a stand-in
// tool when the model names one the agent lacks; errors of real tools
// pass through.
func (u unknownTools) onToolError(ctx agent.Context, t tool.Tool, _ map[string]any, _ error) (map[string]any, error) {
	if slices.Contains(u.names, t.Name()) {
		return nil, nil
	}
	if ss := streamStateFrom(ctx); ss != nil {
		ss.setCall(ctx.FunctionCallID(), &callInfo{errType: tools.ErrToolNotRegistered})
	}
	return nil, errors.New(`Tool "` + t.Name() + `" not found.` + toolSuggestion(t.Name(), u.names))
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
