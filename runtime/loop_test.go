package runtime

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/loopdetect"
	"github.com/agentry-dev/agentry/tools"
)

// loopEnd checks that a stream ended with gemini-cli's LOOP_DETECTED
// warning (non-fatal) and a completed agent_end.
func loopEnd(t *testing.T, evs []Event) {
	t.Helper()
	errs := find(evs, EventError)
	if len(errs) != 1 || errs[0].Meta["code"] != "LOOP_DETECTED" || errs[0].Error.Fatal ||
		errs[0].Error.Message != "Loop detected, stopping execution" || errs[0].Error.Status != "INTERNAL" {
		t.Fatalf("error events %+v, want one non-fatal LOOP_DETECTED", errs)
	}
	if end := last(evs); end.Type != EventAgentEnd || end.AgentEnd.Reason != EndCompleted {
		t.Fatalf("last event %+v, want agent_end completed", end)
	}
}

// lastUserText is the text of the last user content of a request.
func lastUserText(r recordedRequest) string {
	for i := len(r.Contents) - 1; i >= 0; i-- {
		c := r.Contents[i]
		if c.Role == genai.RoleUser {
			var b strings.Builder
			for _, p := range c.Parts {
				b.WriteString(p.Text)
			}
			return b.String()
		}
	}
	return ""
}

// TestLoopIdenticalToolCalls: the fifth identical call trips the detector
// and is not run; the model gets gemini-cli's recovery message as a new
// turn; calling the tool again stops the stream with LOOP_DETECTED, and
// the session answers the next prompt.
func TestLoopIdenticalToolCalls(t *testing.T) {
	var turns []turn
	for i := range 6 {
		turns = append(turns, callTurn("", fc(fmt.Sprintf("c%d", i), "read", map[string]any{"path": "a.go"})))
	}
	b := newScript(turns...)
	read := &fakeTool{ToolName: "read", ToolKind: tools.KindRead}
	s := newTestSession(t, b, Config{Tools: []tools.Tool{read}, LoopDetection: &LoopConfig{}})
	evs := run(t, s, "fix the bug")
	loopEnd(t, evs)
	if read.Calls() != 4 {
		t.Errorf("the tool ran %d times, want 4: the calls that tripped the detector must not run", read.Calls())
	}
	reqs := b.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d model requests, want 6 (five calls, then the recovery turn)", len(reqs))
	}
	if got := lastUserText(reqs[5]); !strings.HasPrefix(got, "System: Potential loop detected. Details: ") ||
		!strings.Contains(got, "Avoid repeating the same tool calls") {
		t.Errorf("the recovery turn's prompt is %q, want gemini-cli's feedback", got)
	}
	// No call is left unanswered in the session for the next request.
	b.Add(textTurn("Here is what I found."))
	evs = run(t, s, "what now?")
	if end := last(evs); end.AgentEnd.Reason != EndCompleted || len(find(evs, EventError)) != 0 {
		t.Fatalf("the next prompt ended %+v with errors %+v", end.AgentEnd, find(evs, EventError))
	}
	for _, c := range b.Requests()[6].Contents {
		for _, p := range c.Parts {
			if p.FunctionCall != nil && p.FunctionCall.ID == "c5" {
				t.Error("the call that tripped the detector reached the history")
			}
		}
	}
}

// TestLoopRepeatedChunks: a stream chanting the same sentence is stopped
// mid-stream, recovered once, and stopped for good the second time.
func TestLoopRepeatedChunks(t *testing.T) {
	sentence := "I will now check the configuration file again. "
	chant := func() turn {
		var chunks []string
		for range 30 {
			chunks = append(chunks, sentence)
		}
		return textTurn(chunks...)
	}
	b := newScript(chant(), chant())
	s := newTestSession(t, b, Config{LoopDetection: &LoopConfig{}})
	evs := run(t, s, "check the config")
	loopEnd(t, evs)
	reqs := b.Requests()
	if len(reqs) != 2 || !strings.HasPrefix(lastUserText(reqs[1]), "System: Potential loop detected.") {
		t.Fatalf("%d requests (last prompt %q), want the recovery turn second", len(reqs), lastUserText(reqs[len(reqs)-1]))
	}
	b.Add(textTurn("Done."))
	if evs := run(t, s, "and now?"); last(evs).AgentEnd.Reason != EndCompleted {
		t.Fatalf("the session is not usable after a loop: %+v", last(evs))
	}
}

// TestLoopDetectionOff: without LoopConfig the same chant completes.
func TestLoopDetectionOff(t *testing.T) {
	var chunks []string
	for range 30 {
		chunks = append(chunks, "I will now check the configuration file again. ")
	}
	b := newScript(textTurn(chunks...))
	s := newTestSession(t, b, Config{})
	evs := run(t, s, "check the config")
	if len(find(evs, EventError)) != 0 || last(evs).AgentEnd.Reason != EndCompleted {
		t.Fatalf("with loop detection off the stream ended %+v", last(evs))
	}
}

// TestLoopLLMCheck: from the configured turn, the LLM check asks
// gemini-cli's loop-detection model and, on a confident yes, the
// double-check model through the dispatcher; a confirmed loop gets the
// recovery turn.
func TestLoopLLMCheck(t *testing.T) {
	verdict := func(conf float64) turn {
		return textTurn(fmt.Sprintf(`{"unproductive_state_analysis":"going in circles","unproductive_state_confidence":%v}`, conf))
	}
	b := newScript(
		callTurn("", fc("c1", "read", map[string]any{"path": "a"})),
		callTurn("", fc("c2", "read", map[string]any{"path": "b"})),
		verdict(0.95), verdict(0.97), // the check before the third call
		textTurn("I will try something else."),
	)
	read := &fakeTool{ToolName: "read", ToolKind: tools.KindRead}
	s := newTestSession(t, b, Config{Tools: []tools.Tool{read},
		LoopDetection: &LoopConfig{Detector: loopdetect.Config{LLMCheckAfterTurns: 3, LLMCheckInterval: 3}}})
	evs := run(t, s, "explore")
	if end := last(evs); end.AgentEnd.Reason != EndCompleted || len(find(evs, EventError)) != 0 {
		t.Fatalf("ended %+v with errors %+v", end.AgentEnd, find(evs, EventError))
	}
	reqs := b.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	if reqs[2].Model != "gemini-3-flash-preview" || reqs[3].Model != "gemini-3-pro-preview" {
		t.Errorf("the checks asked %s then %s, want gemini-3-flash-preview then gemini-3-pro-preview", reqs[2].Model, reqs[3].Model)
	}
	if reqs[2].Config.SystemInstruction == nil || !strings.Contains(reqs[2].Config.SystemInstruction.Parts[0].Text, "unproductive") {
		t.Error("the check did not carry the loop-detection system prompt")
	}
	if got := lastUserText(reqs[4]); !strings.HasPrefix(got, "System: Potential loop detected. Details: going in circles") {
		t.Errorf("the turn after the check was prompted %q, want the recovery message with the model's analysis", got)
	}
}
