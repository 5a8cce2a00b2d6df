package runtime

import (
	"encoding/json"
	"testing"

	"google.golang.org/genai"
)

// TestStreamedThoughtsAndText checks the agent messages of streamed
// chunks of each shape: one text part, one thought, several text parts,
// thoughts and text mixed (thoughts first, in their own message with
// _meta.source), and a call that is no message content.
func TestStreamedThoughtsAndText(t *testing.T) {
	chunk := func(parts ...*genai.Part) *genai.GenerateContentResponse {
		return &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: &genai.Content{Role: genai.RoleModel, Parts: parts}}}}
	}
	last := chunk(&genai.Part{Text: "end."})
	last.Candidates[0].FinishReason = genai.FinishReasonStop
	b := newScript(turn{Chunks: []*genai.GenerateContentResponse{
		chunk(&genai.Part{Text: "one "}),
		chunk(&genai.Part{Text: "pondering", Thought: true, ThoughtSignature: []byte("sig")}),
		chunk(&genai.Part{Text: "two "}, &genai.Part{Text: "three "}),
		chunk(&genai.Part{Text: "more thought", Thought: true}, &genai.Part{Text: "four "}, &genai.Part{Text: "again", Thought: true}),
		chunk(&genai.Part{InlineData: &genai.Blob{Data: []byte("png"), MIMEType: "image/png"}}),
		last,
	}})
	s := newTestSession(t, b, Config{})
	var got []string
	for _, ev := range run(t, s, "go") {
		if ev.Type != EventMessage || ev.Message.Role != RoleAgent {
			continue
		}
		msg, _ := json.Marshal(ev.Message)
		meta, _ := json.Marshal(ev.Meta)
		got = append(got, string(meta)+" "+string(msg))
	}
	want := []string{
		`null {"role":"agent","content":[{"type":"text","text":"one "}]}`,
		`{"source":"agent"} {"role":"agent","content":[{"type":"thought","thought":"pondering","thoughtSignature":"c2ln"}]}`,
		`null {"role":"agent","content":[{"type":"text","text":"two "},{"type":"text","text":"three "}]}`,
		`{"source":"agent"} {"role":"agent","content":[{"type":"thought","thought":"more thought"},{"type":"thought","thought":"again"}]}`,
		`null {"role":"agent","content":[{"type":"text","text":"four "}]}`,
		`null {"role":"agent","content":[{"type":"text","text":"end."}]}`,
	}
	if len(got) != len(want) {
		t.Fatalf("agent messages:\n%s\nwant:\n%s", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("message %d = %s, want %s", i, got[i], want[i])
		}
	}
}
