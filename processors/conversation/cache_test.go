package conversation

import (
	"fmt"
	"testing"

	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"
)

func turnEvents(from, turns int) []*session.Event {
	var out []*session.Event
	for i := from; i < from+turns; i++ {
		id := fmt.Sprintf("adk-call-%d", i)
		out = append(out,
			&session.Event{ID: fmt.Sprintf("u%d", i), Author: "user", LLMResponse: model.LLMResponse{Content: genai.NewContentFromText("prompt", genai.RoleUser)}},
			&session.Event{ID: fmt.Sprintf("c%d", i), Author: "agentry", LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: id, Name: "read"}}}}}},
			&session.Event{ID: fmt.Sprintf("r%d", i), Author: "agentry", LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: id, Name: "read", Response: map[string]any{"output": "x"}}}}}}},
			&session.Event{ID: fmt.Sprintf("m%d", i), Author: "agentry", LLMResponse: model.LLMResponse{Content: genai.NewContentFromText("done", genai.RoleModel)}},
		)
	}
	return out
}

// TestConversationBuildsOnlyNewEvents checks the cache's bookkeeping: a
// call builds the events after the cached part; a rewritten event or a
// cut history is built again from the prompt before it; a response to a
// cached call rebuilds the whole.
func TestConversationBuildsOnlyNewEvents(t *testing.T) {
	sc := scope{agent: "agentry"}
	k := &conversationCache{}
	events := turnEvents(0, 50)
	step := func(name string, want int) {
		t.Helper()
		before := k.built
		out, err := k.build(sc, events)
		if err != nil {
			t.Fatal(err)
		}
		if got := k.built - before; got != want {
			t.Errorf("%s: built %d events, want %d", name, got, want)
		}
		whole, err := buildAll(sc, events)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != len(whole) {
			t.Errorf("%s: %d contents, a whole build has %d", name, len(out), len(whole))
		}
	}
	step("first call", 200)
	events = append(events, turnEvents(50, 1)[:3]...)
	step("a new turn's calls", 3)
	step("no new event", 0)
	events = append(events, turnEvents(50, 1)[3])
	step("the answer", 1)

	masked := *events[10]
	masked.LLMResponse.Content = &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: "adk-call-2", Name: "read", Response: map[string]any{"output": "masked"}}}}}
	events[10] = &masked
	step("a masked response, built again from its prompt on", len(events)-8)

	late := &session.Event{ID: "late", Author: "agentry", LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: "adk-call-7", Name: "read", Response: map[string]any{"output": "late"}}}}}}}
	events = append(events, late, turnEvents(60, 1)[0])
	step("a response to a cached call", 2+len(events))

	events = events[:40]
	step("a rewind", 40)

	events = append(events, turnEvents(70, 1)...)
	step("a turn after the rewind", 4)
	events = events[:40]
	step("a rewind to where a call's events began", 0)
	events = append(events, turnEvents(80, 2)...)
	step("two turns", 8)
	masked2 := *events[46]
	masked2.LLMResponse.Content = &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: "adk-call-81", Name: "read", Response: map[string]any{"output": "masked"}}}}}
	events[46] = &masked2
	step("a masked response in the last turn", 4)
}
