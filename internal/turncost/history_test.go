package turncost

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"
)

// The names every variant runs under, so that the history's model events
// are the agent's own in each: ADK rewrites another agent's events into
// "For context: …" text.
const (
	appName   = "agentry"
	userID    = "user"
	agentName = "agentry"
	sessionID = "turncost"
)

// Sizes in characters, cycled through by exchange or by call: a coding
// session's prompts are short, its answers a few paragraphs, and its tool
// outputs (a file read, a test run, a search) a few hundred bytes to a
// few kilobytes.
var (
	promptSizes   = []int{180, 420, 90, 300}
	answerSizes   = []int{600, 1400, 350, 900}
	outputSizes   = []int{2400, 900, 1600, 500, 3200, 700}
	preambleSize  = 120 // the text before an exchange's first call
	historyTools  = []string{"read_file", "run_shell_command", "grep_search", "list_directory"}
	proseWords    = strings.Fields("the a to of and in is that for it on with as this function file test error value we be should not when call can return package change run build handler request session model output")
	codeFragments = []string{
		"func (s *Server) handle(ctx context.Context, req *Request) error {",
		"\tif err := s.validate(req); err != nil {",
		"\t\treturn fmt.Errorf(\"handle %s: %w\", req.ID, err)",
		"\t}",
		"\tresp, err := s.store.Get(ctx, req.Key)",
		"\tfor i, item := range resp.Items {",
		"\t\tout = append(out, item.Name)",
		"// lookup returns the value stored under key, or ErrNotFound.",
		"ok  \tgithub.com/example/project/internal/cache\t0.412s",
		"--- FAIL: TestHandle/empty_key (0.00s)",
		"    handler_test.go:88: got \"\", want \"missing key\"",
		"internal/cache/cache.go:41:\treturn c.items[key], nil",
		"}",
	}
)

// history returns n events (n even, at least 2) of a coding conversation:
// exchanges of a user prompt, one to three tool calls each answered by a
// function response, and the model's answer, with the ids, invocation
// ids, timestamps, usage and call ids a stored ADK session has. The same
// n gives the same events.
func history(n int) []*session.Event {
	if n < 2 || n%2 != 0 {
		panic(fmt.Sprintf("history: %d events; want an even number, at least 2", n))
	}
	r := rand.New(rand.NewPCG(uint64(n), 1))
	out := make([]*session.Event, 0, n)
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	add := func(inv, author string, c *genai.Content, usage bool) {
		i := len(out)
		ev := &session.Event{
			ID:           uuidish(1, i),
			InvocationID: inv,
			Author:       author,
			Timestamp:    t0.Add(time.Duration(i) * 7 * time.Second),
			LLMResponse:  model.LLMResponse{Content: c},
		}
		if usage {
			ev.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(2000 + 40*i), CandidatesTokenCount: 120, TotalTokenCount: int32(2120 + 40*i)}
			ev.FinishReason = genai.FinishReasonStop
		}
		out = append(out, ev)
	}
	calls := 0
	for ex := 0; len(out) < n; ex++ {
		// An exchange of c calls is 2c+2 events; the last one takes what
		// is left.
		c := min(1+ex%3, (n-len(out)-2)/2)
		inv := "e-" + uuidish(2, ex)
		add(inv, "user", genai.NewContentFromText(prose(r, promptSizes[ex%len(promptSizes)]), genai.RoleUser), false)
		for k := range c {
			id := "adk-" + uuidish(3, calls)
			name := historyTools[calls%len(historyTools)]
			var parts []*genai.Part
			if k == 0 {
				parts = append(parts, &genai.Part{Text: prose(r, preambleSize)})
			}
			parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: id, Name: name, Args: callArgs(name, calls)}})
			add(inv, agentName, &genai.Content{Role: genai.RoleModel, Parts: parts}, true)
			resp := map[string]any{"output": code(r, outputSizes[calls%len(outputSizes)])}
			add(inv, agentName, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: id, Name: name, Response: resp}}}}, false)
			calls++
		}
		add(inv, agentName, genai.NewContentFromText(prose(r, answerSizes[ex%len(answerSizes)]), genai.RoleModel), true)
	}
	return out
}

// callArgs are a history call's arguments, shaped as the tool's.
func callArgs(name string, i int) map[string]any {
	switch name {
	case "read_file":
		return map[string]any{"file_path": fmt.Sprintf("internal/cache/cache_%d.go", i)}
	case "run_shell_command":
		return map[string]any{"command": "go test ./internal/cache/...", "description": "Run the cache package's tests."}
	case "grep_search":
		return map[string]any{"pattern": "func \\(c \\*Cache\\) Get", "dir_path": "internal"}
	default:
		return map[string]any{"dir_path": fmt.Sprintf("internal/pkg%d", i)}
	}
}

// uuidish is a deterministic id of a UUID's length and shape.
func uuidish(kind, i int) string {
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", kind, i)
}

// prose is about size characters of words.
func prose(r *rand.Rand, size int) string {
	var b strings.Builder
	for b.Len() < size {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(proseWords[r.IntN(len(proseWords))])
	}
	return b.String()
}

// code is about size characters of source and tool output lines.
func code(r *rand.Rand, size int) string {
	var b strings.Builder
	for b.Len() < size {
		b.WriteString(codeFragments[r.IntN(len(codeFragments))])
		b.WriteByte('\n')
	}
	return b.String()
}
