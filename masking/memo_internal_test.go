package masking

import (
	"strings"
	"sync"
	"testing"

	"google.golang.org/genai"
)

func responses(n int) []*genai.Content {
	var out []*genai.Content
	for i := range n {
		out = append(out,
			&genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: "c", Name: "read"}}}},
			&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
				ID: "c" + strings.Repeat("x", i), Name: "read", Response: map[string]any{"output": strings.Repeat("y", 100+i)},
			}}}})
	}
	return out
}

// TestPlanMeasuresEachResponseOnce: a history's responses are measured by
// the first plan that meets them; a later plan over the same responses
// and a few new ones measures only the new ones, and a replaced response
// is measured again.
func TestPlanMeasuresEachResponseOnce(t *testing.T) {
	m, err := New(Config{SpillDir: t.TempDir(), ProtectTokens: 1_000_000, DisableProtectLatestTurn: true})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	measured := 0
	est := m.estimate
	m.estimate = func(p *genai.Part) int {
		mu.Lock()
		measured++
		mu.Unlock()
		return est(p)
	}
	history := responses(50)
	m.plan(history)
	if measured != 50 {
		t.Fatalf("first plan measured %d responses, want 50", measured)
	}
	history = append(history, responses(3)...)
	m.plan(history)
	if measured != 53 {
		t.Fatalf("second plan measured %d more, want 3", measured-50)
	}
	replaced := *history[1]
	replaced.Parts = []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: "new", Name: "read", Response: map[string]any{"output": "z"}}}}
	history[1] = &replaced
	m.plan(history)
	if measured != 54 {
		t.Fatalf("a replaced response: %d measured, want 1", measured-53)
	}
	// A masked response is recognised from the memo as well.
	masked := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: "m", Name: "read", Response: map[string]any{"output": "<tool_output_masked>x</tool_output_masked>"}}}}}
	history = append(history, masked)
	m.plan(history)
	m.plan(history)
	if measured != 54 {
		t.Fatalf("a masked response was measured: %d", measured)
	}
}

// TestPlanConcurrent runs plans of one masker from several goroutines
// over shared contents, for the race detector.
func TestPlanConcurrent(t *testing.T) {
	m, err := New(Config{SpillDir: t.TempDir(), ProtectTokens: 100, MinPrunableTokens: 1})
	if err != nil {
		t.Fatal(err)
	}
	history := responses(40)
	want := len(m.plan(history))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for range 50 {
				h := history
				if g%2 == 1 {
					h = append(responses(2), history...)
				}
				if n := len(m.plan(h)); g%2 == 0 && n != want {
					t.Errorf("plan found %d candidates, want %d", n, want)
				}
			}
		})
	}
	wg.Wait()
}
