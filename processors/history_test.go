package processors

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"
)

func text(role, s string) *genai.Content { return genai.NewContentFromText(s, genai.Role(role)) }

func describe(contents []*genai.Content) []string {
	var out []string
	for _, c := range contents {
		var parts []string
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				parts = append(parts, "call:"+p.FunctionCall.Name+"@"+string(p.ThoughtSignature))
			case p.FunctionResponse != nil:
				parts = append(parts, "response:"+p.FunctionResponse.Name)
			case p.Thought:
				parts = append(parts, "thought:"+p.Text)
			default:
				parts = append(parts, p.Text)
			}
		}
		out = append(out, c.Role+" "+strings.Join(parts, "|"))
	}
	return out
}

// TestHistoryShape: thoughts are dropped (their signature kept on the
// turn's first unsigned call), a prompt after an unanswered user turn gets
// gemini-cli's placeholder, and turns of one role are merged, as
// gemini-cli's stripThoughts, closeUnansweredToolResponseTurn and
// coalesceConsecutiveRoles (geminiChat.ts, 0.61.0) shape its requests.
func TestHistoryShape(t *testing.T) {
	call := &genai.Part{FunctionCall: &genai.FunctionCall{Name: "f"}}
	signedCall := &genai.Part{FunctionCall: &genai.FunctionCall{Name: "g"}, ThoughtSignature: []byte("own")}
	response := &genai.Part{FunctionResponse: &genai.FunctionResponse{Name: "f"}}
	thought := &genai.Part{Text: "hmm", Thought: true, ThoughtSignature: []byte("sig")}
	for _, tc := range []struct {
		name string
		in   []*genai.Content
		want []string
	}{
		{"alternating history is kept", []*genai.Content{text("user", "a"), text("model", "b"), text("user", "c")},
			[]string{"user a", "model b", "user c"}},
		{"thought dropped, signature to the call", []*genai.Content{text("user", "a"), {Role: "model", Parts: []*genai.Part{thought, call}}},
			[]string{"user a", "model call:f@sig"}},
		{"a call keeps its own signature", []*genai.Content{text("user", "a"), {Role: "model", Parts: []*genai.Part{thought, signedCall, call}}},
			[]string{"user a", "model call:g@own|call:f@"}},
		{"a thoughts-only turn goes", []*genai.Content{text("user", "a"), {Role: "model", Parts: []*genai.Part{thought}}, text("user", "b")},
			[]string{"user a", "model " + InterruptedResponse, "user b"}},
		{"unanswered responses", []*genai.Content{text("user", "a"), {Role: "model", Parts: []*genai.Part{call}}, {Role: "user", Parts: []*genai.Part{response}}, text("user", "b")},
			[]string{"user a", "model call:f@", "user response:f", "model " + InterruptedResponse, "user b"}},
		{"unanswered prompt", []*genai.Content{text("user", "a"), text("user", "b")},
			[]string{"user a", "model " + InterruptedResponse, "user b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := describe(tc.in)
			got := describe(curateHistory(tc.in))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, describe(tc.in)); diff != "" {
				t.Errorf("the input changed (-before +after):\n%s", diff)
			}
		})
	}

	ctx, prompt := text("user", "<session_context>"), text("user", "go")
	in := []*genai.Content{ctx, text("user", "ide"), prompt, text("model", "ok"), text("user", "next")}
	got := describe(coalesceRoles(in))
	if diff := cmp.Diff([]string{"user <session_context>|ide|go", "model ok", "user next"}, got); diff != "" {
		t.Errorf("coalesced (-want +got):\n%s", diff)
	}
	if len(ctx.Parts) != 1 || len(prompt.Parts) != 1 {
		t.Errorf("coalescing wrote into a caller's content: %v %v", ctx.Parts, prompt.Parts)
	}
}
