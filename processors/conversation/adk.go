package conversation

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool/toolconfirmation"
	"google.golang.org/genai"
)

// This file holds the steps of ADK v2.2.0's default contents building
// (internal/llminternal/contents_processor.go: buildContentsDefault and
// ContentsRequestProcessor), which the processor runs incrementally. Each step
// keeps ADK's semantics, its corner cases included; the differential test
// in adk_test.go pins the result to ADK's own over generated
// histories.

// adkContinueText is the user turn ADK appends when the contents end on a
// turn that is not the user's.
const adkContinueText = "Continue processing previous requests as instructed. Exit or provide a summary if no more outputs are needed."

// adkClientIDPrefix starts the call ids ADK gives calls the model left
// without one; ADK strips them from request contents.
const adkClientIDPrefix = "adk-"

// adkCredentialCall is ADK's credential-request function, left out of
// request contents as its confirmation function is.
const adkCredentialCall = "adk_request_credential"

// scope is what an agent's view of a session depends on besides the
// events: its name, branch and isolation scope.
type scope struct {
	agent, branch, isolation string
}

// filterEvent is ADK's per-event filter: it returns the event as the
// agent sees it (another agent's event converted to a user turn) and
// whether the agent sees it at all.
func (s scope) filterEvent(ev *session.Event) (*session.Event, bool) {
	content := ev.LLMResponse.Content
	if (content == nil || content.Role == "" || len(content.Parts) == 0) &&
		ev.LLMResponse.InputTranscription == nil && ev.LLMResponse.OutputTranscription == nil {
		return nil, false
	}
	if !belongsToBranch(s.branch, ev) {
		return nil, false
	}
	if ev.IsolationScope != s.isolation {
		return nil, false
	}
	if excludedEvent(ev) {
		return nil, false
	}
	if ev.Author != s.agent && ev.Author != "user" {
		return convertForeignEvent(ev), true
	}
	return ev, true
}

func belongsToBranch(branch string, ev *session.Event) bool {
	if branch == "" || ev.Branch == "" || ev.Branch == branch {
		return true
	}
	return strings.HasPrefix(branch, ev.Branch+".")
}

func excludedEvent(ev *session.Event) bool {
	c := ev.LLMResponse.Content
	if c == nil {
		return false
	}
	for _, p := range c.Parts {
		if p == nil {
			continue
		}
		if p.FunctionCall != nil {
			switch p.FunctionCall.Name {
			case adkCredentialCall, toolconfirmation.FunctionCallName:
				return true
			}
		}
		if p.FunctionResponse != nil {
			switch p.FunctionResponse.Name {
			case adkCredentialCall, toolconfirmation.FunctionCallName:
				return true
			}
		}
	}
	return false
}

// convertForeignEvent is ADK's ConvertForeignEvent: another agent's turn
// as "For context:" user text.
func convertForeignEvent(ev *session.Event) *session.Event {
	content := ev.LLMResponse.Content
	if content == nil || len(content.Parts) == 0 {
		return ev
	}
	converted := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: "For context:"}}}
	for _, p := range content.Parts {
		switch {
		case p == nil:
			converted.Parts = append(converted.Parts, p)
		case p.Text != "":
			converted.Parts = append(converted.Parts, &genai.Part{Text: fmt.Sprintf("[%s] said: %s", ev.Author, p.Text)})
		case p.FunctionCall != nil:
			converted.Parts = append(converted.Parts, &genai.Part{
				Text: fmt.Sprintf("[%s] called tool `%s` with parameters: %s", ev.Author, p.FunctionCall.Name, stringify(p.FunctionCall.Args)),
			})
		case p.FunctionResponse != nil:
			converted.Parts = append(converted.Parts, &genai.Part{
				Text: fmt.Sprintf("[%s] `%s` tool returned result: %v", ev.Author, p.FunctionResponse.Name, stringify(p.FunctionResponse.Response)),
			})
		default:
			converted.Parts = append(converted.Parts, p)
		}
	}
	return &session.Event{
		Timestamp:   ev.Timestamp,
		Author:      "user",
		LLMResponse: model.LLMResponse{Content: converted},
		Branch:      ev.Branch,
	}
}

func stringify(v any) string {
	s, _ := json.Marshal(v)
	return string(s)
}

func hasTranscription(ev *session.Event) bool {
	return ev.LLMResponse.InputTranscription != nil || ev.LLMResponse.OutputTranscription != nil
}

// aggregateTranscriptions is ADK's folding of live transcription events
// into text turns.
func aggregateTranscriptions(filtered []*session.Event) []*session.Event {
	out := make([]*session.Event, 0, len(filtered))
	var in, outText string
	for i := 0; i < len(filtered); i++ {
		ev := filtered[i]
		content := ev.LLMResponse.Content
		if content == nil || len(content.Parts) == 0 {
			if t := ev.LLMResponse.InputTranscription; t != nil && t.Text != "" {
				in += t.Text
				if i != len(filtered)-1 {
					if n := filtered[i+1].LLMResponse.InputTranscription; n != nil && n.Text != "" {
						continue
					}
				}
				nev := cloneEvent(ev)
				nev.LLMResponse.InputTranscription = nil
				nev.LLMResponse.Content = &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: in}}}
				ev = nev
				in = ""
			} else if t := ev.LLMResponse.OutputTranscription; t != nil && t.Text != "" {
				outText += t.Text
				if i != len(filtered)-1 {
					if n := filtered[i+1].LLMResponse.OutputTranscription; n != nil && n.Text != "" {
						continue
					}
				}
				nev := cloneEvent(ev)
				nev.LLMResponse.OutputTranscription = nil
				nev.LLMResponse.Content = &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: outText}}}
				ev = nev
				outText = ""
			}
		}
		out = append(out, ev)
	}
	return out
}

func functionCalls(c *genai.Content) []*genai.FunctionCall {
	if c == nil {
		return nil
	}
	var out []*genai.FunctionCall
	for _, p := range c.Parts {
		if p != nil && p.FunctionCall != nil {
			out = append(out, p.FunctionCall)
		}
	}
	return out
}

func functionResponses(c *genai.Content) []*genai.FunctionResponse {
	if c == nil {
		return nil
	}
	var out []*genai.FunctionResponse
	for _, p := range c.Parts {
		if p != nil && p.FunctionResponse != nil {
			out = append(out, p.FunctionResponse)
		}
	}
	return out
}

func hasFunctionResponse(c *genai.Content) bool {
	if c == nil {
		return false
	}
	for _, p := range c.Parts {
		if p != nil && p.FunctionResponse != nil {
			return true
		}
	}
	return false
}

// rearrangeLatest is ADK's rearrangeEventsForLatestFunctionResponse over
// the filtered events of which events is the tail; prev is the event
// before the tail (nil when the tail is the whole) and whole the number of
// filtered events in all. The call the latest response answers must lie
// in the tail (the cache checks that the tail's ids are not in the cached
// part), so searching the tail is searching the whole. moved reports
// whether the latest response was rearranged.
func rearrangeLatest(events []*session.Event, prev *session.Event, whole int) (_ []*session.Event, moved bool, _ error) {
	if whole < 2 || len(events) == 0 {
		return events, false, nil
	}
	last := events[len(events)-1]
	lastResponses := functionResponses(last.LLMResponse.Content)
	if len(lastResponses) == 0 {
		return events, false, nil
	}
	responseIDs := make(map[string]struct{}, len(lastResponses))
	for _, r := range lastResponses {
		responseIDs[r.ID] = struct{}{}
	}
	before := prev
	if len(events) >= 2 {
		before = events[len(events)-2]
	}
	if before != nil {
		for _, c := range functionCalls(before.LLMResponse.Content) {
			if _, ok := responseIDs[c.ID]; ok {
				return events, false, nil
			}
		}
	}
	callIdx := -1
	var callIDs map[string]struct{}
search:
	for i := len(events) - 2; i >= 0; i-- {
		calls := functionCalls(events[i].LLMResponse.Content)
		for _, c := range calls {
			if _, ok := responseIDs[c.ID]; !ok {
				continue
			}
			callIdx = i
			callIDs = make(map[string]struct{}, len(calls))
			for _, cc := range calls {
				callIDs[cc.ID] = struct{}{}
			}
			for id := range responseIDs {
				if _, ok := callIDs[id]; !ok {
					return nil, false, fmt.Errorf("validation failed: last response event has IDs not in the matching call event. Call IDs: %v, Response IDs: %v", callIDs, responseIDs)
				}
			}
			responseIDs = callIDs
			break search
		}
	}
	if callIdx == -1 {
		return nil, false, fmt.Errorf("no function call event found for function responses ids: %v", responseIDs)
	}
	result := append([]*session.Event(nil), events[:callIdx+1]...)
	var merge []*session.Event
	for i := callIdx + 1; i < len(events)-1; i++ {
		ev := events[i]
		if len(functionCalls(ev.LLMResponse.Content)) > 0 {
			result = append(result, ev)
			continue
		}
		responses := functionResponses(ev.LLMResponse.Content)
		if len(responses) == 0 {
			continue
		}
		related := false
		for _, r := range responses {
			if _, ok := responseIDs[r.ID]; ok {
				related = true
				break
			}
		}
		if related {
			merge = append(merge, ev)
		} else {
			result = append(result, ev)
		}
	}
	merge = append(merge, last)
	merged, err := mergeResponseEvents(merge)
	if err != nil {
		return nil, false, err
	}
	return append(result, merged), true, nil
}

// rearrangeHistory is ADK's rearrangeEventsForFunctionResponsesInHistory
// over events, part of whole filtered events: each call event followed by
// its responses, merged into one event when they are several; responses
// nothing calls are dropped. Under the cache's id check, rearranging a tail
// on its own gives what rearranging the whole gives for that tail.
func rearrangeHistory(events []*session.Event, whole int) ([]*session.Event, error) {
	if whole < 2 {
		return events, nil
	}
	var responseAt map[string]int
	for i, ev := range events {
		for _, r := range functionResponses(ev.LLMResponse.Content) {
			if responseAt == nil {
				responseAt = map[string]int{}
			}
			responseAt[r.ID] = i
		}
	}
	out := make([]*session.Event, 0, len(events))
	for _, ev := range events {
		if hasFunctionResponse(ev.LLMResponse.Content) {
			continue
		}
		calls := functionCalls(ev.LLMResponse.Content)
		out = append(out, ev)
		if len(calls) == 0 {
			continue
		}
		var idx []int
		for _, c := range calls {
			if i, ok := responseAt[c.ID]; ok && !containsInt(idx, i) {
				idx = append(idx, i)
			}
		}
		switch len(idx) {
		case 0:
		case 1:
			out = append(out, events[idx[0]])
		default:
			sort.Ints(idx)
			merge := make([]*session.Event, len(idx))
			for k, i := range idx {
				merge[k] = events[i]
			}
			merged, err := mergeResponseEvents(merge)
			if err != nil {
				return nil, fmt.Errorf("failed to merge response events: %w", err)
			}
			out = append(out, merged)
		}
	}
	return out, nil
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// mergeResponseEvents is ADK's mergeFunctionResponseEvents: the first
// event's parts, later responses replacing those with the same id or
// appended, other parts appended.
func mergeResponseEvents(events []*session.Event) (*session.Event, error) {
	if len(events) == 0 {
		return nil, fmt.Errorf("at least one function_response event is required")
	}
	merged := cloneEvent(events[0])
	if merged.LLMResponse.Content == nil {
		return nil, fmt.Errorf("content for the first event should not be nil")
	}
	parts := merged.LLMResponse.Content.Parts
	if len(parts) == 0 {
		return nil, fmt.Errorf("there should be at least one function_response part")
	}
	at := map[string]int{}
	for i, p := range parts {
		if p != nil && p.FunctionResponse != nil {
			at[p.FunctionResponse.ID] = i
		}
	}
	for _, ev := range events[1:] {
		if len(ev.LLMResponse.Content.Parts) == 0 {
			return nil, fmt.Errorf("event should contain at least one part")
		}
		for _, p := range ev.LLMResponse.Content.Parts {
			if p != nil && p.FunctionResponse != nil {
				if i, ok := at[p.FunctionResponse.ID]; ok {
					parts[i] = p
				} else {
					parts = append(parts, p)
					at[p.FunctionResponse.ID] = len(parts) - 1
				}
				continue
			}
			parts = append(parts, p)
		}
	}
	merged.LLMResponse.Content.Parts = parts
	return merged, nil
}

// cloneEvent copies what contents building reads of an event: its
// content's role and part list (the parts themselves are shared).
func cloneEvent(e *session.Event) *session.Event {
	n := &session.Event{
		ID: e.ID, Timestamp: e.Timestamp, InvocationID: e.InvocationID, Branch: e.Branch,
		IsolationScope: e.IsolationScope, Author: e.Author, Actions: e.Actions,
	}
	if c := e.LLMResponse.Content; c != nil {
		n.LLMResponse.Content = &genai.Content{Role: c.Role, Parts: append(make([]*genai.Part, 0, len(c.Parts)), c.Parts...)}
	}
	return n
}

// requestContent is an event's content as ADK puts it in a request: a
// copy without nil or empty parts, with ADK's own call ids removed; nil
// when nothing is left. Part structs are copied, their payloads (texts,
// argument and response maps, blobs) shared: processors that change a
// content replace it, they never write it.
func requestContent(ev *session.Event) *genai.Content {
	c := ev.LLMResponse.Content
	if c == nil {
		return nil
	}
	out := &genai.Content{Role: c.Role, Parts: make([]*genai.Part, 0, len(c.Parts))}
	for _, p := range c.Parts {
		if p == nil || reflect.ValueOf(*p).IsZero() {
			continue
		}
		np := *p
		if fc := p.FunctionCall; fc != nil && strings.HasPrefix(fc.ID, adkClientIDPrefix) {
			f := *fc
			f.ID = ""
			np.FunctionCall = &f
		}
		if fr := p.FunctionResponse; fr != nil && strings.HasPrefix(fr.ID, adkClientIDPrefix) {
			f := *fr
			f.ID = ""
			np.FunctionResponse = &f
		}
		out.Parts = append(out.Parts, &np)
	}
	if len(out.Parts) == 0 {
		return nil
	}
	return out
}
