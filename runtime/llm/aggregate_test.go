package llm

import (
	"errors"
	"iter"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"
)

func chunks(rs ...*genai.GenerateContentResponse) iter.Seq2[*genai.GenerateContentResponse, error] {
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		for _, r := range rs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

func chunk(finish genai.FinishReason, parts ...*genai.Part) *genai.GenerateContentResponse {
	return &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{
		Content: &genai.Content{Role: genai.RoleModel, Parts: parts}, FinishReason: finish,
	}}}
}

func collect(t *testing.T, seq iter.Seq2[*model.LLMResponse, error]) ([]*model.LLMResponse, error) {
	t.Helper()
	var out []*model.LLMResponse
	for r, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

func TestAggregate(t *testing.T) {
	usage := &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 3, CandidatesTokenCount: 4, TotalTokenCount: 7}
	withUsage := func(r *genai.GenerateContentResponse) *genai.GenerateContentResponse {
		r.UsageMetadata = usage
		r.ModelVersion = "gemini-x"
		return r
	}
	tests := []struct {
		name      string
		in        []*genai.GenerateContentResponse
		partials  []string // text of each partial
		final     []*genai.Part
		finish    genai.FinishReason
		errorCode string
		usage     bool
	}{
		{
			name:     "text deltas merge into one part",
			in:       []*genai.GenerateContentResponse{chunk("", &genai.Part{Text: "Hel"}), chunk("", &genai.Part{Text: "lo"}), withUsage(chunk(genai.FinishReasonStop, &genai.Part{Text: "!"}))},
			partials: []string{"Hel", "lo", "!"},
			final:    []*genai.Part{{Text: "Hello!"}},
			finish:   genai.FinishReasonStop,
			usage:    true,
		},
		{
			name: "thoughts stay apart from the answer",
			in: []*genai.GenerateContentResponse{
				chunk("", &genai.Part{Text: "plan", Thought: true}), chunk("", &genai.Part{Text: " more", Thought: true}),
				chunk(genai.FinishReasonStop, &genai.Part{Text: "answer"}),
			},
			partials: []string{"plan", " more", "answer"},
			final:    []*genai.Part{{Text: "plan more", Thought: true}, {Text: "answer"}},
			finish:   genai.FinishReasonStop,
		},
		{
			name: "function calls keep their order and take a pending signature",
			in: []*genai.GenerateContentResponse{
				chunk("", &genai.Part{Text: "Reading", ThoughtSignature: []byte("sig")}),
				chunk(genai.FinishReasonStop,
					&genai.Part{FunctionCall: &genai.FunctionCall{ID: "a", Name: "read_file", Args: map[string]any{"file_path": "x"}}},
					&genai.Part{FunctionCall: &genai.FunctionCall{ID: "b", Name: "glob", Args: map[string]any{"pattern": "*"}}, ThoughtSignature: []byte("own")}),
			},
			partials: []string{"Reading"},
			final: []*genai.Part{
				{Text: "Reading", ThoughtSignature: []byte("sig")},
				{FunctionCall: &genai.FunctionCall{ID: "a", Name: "read_file", Args: map[string]any{"file_path": "x"}}, ThoughtSignature: []byte("sig")},
				{FunctionCall: &genai.FunctionCall{ID: "b", Name: "glob", Args: map[string]any{"pattern": "*"}}, ThoughtSignature: []byte("own")},
			},
			finish: genai.FinishReasonStop,
		},
		{
			name:      "a blocked answer becomes an error code",
			in:        []*genai.GenerateContentResponse{{Candidates: []*genai.Candidate{{FinishReason: genai.FinishReasonSafety, FinishMessage: "unsafe"}}}},
			final:     nil,
			finish:    genai.FinishReasonSafety,
			errorCode: "SAFETY",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := collect(t, Aggregate(chunks(tc.in...)))
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != len(tc.partials)+1 {
				t.Fatalf("got %d responses, want %d partials and a final", len(out), len(tc.partials))
			}
			for i, want := range tc.partials {
				r := out[i]
				if !r.Partial || r.Content == nil || len(r.Content.Parts) == 0 {
					t.Fatalf("response %d: want a partial with content, got %+v", i, r)
				}
				var got string
				for _, p := range r.Content.Parts {
					got += p.Text
				}
				if got != want {
					t.Errorf("partial %d text = %q, want %q", i, got, want)
				}
			}
			final := out[len(out)-1]
			if final.Partial || !final.TurnComplete {
				t.Errorf("final: Partial=%v TurnComplete=%v, want false/true", final.Partial, final.TurnComplete)
			}
			if diff := cmp.Diff(tc.final, final.Content.Parts, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("final parts (-want +got):\n%s", diff)
			}
			if final.FinishReason != tc.finish || final.ErrorCode != tc.errorCode {
				t.Errorf("finish=%q code=%q, want %q %q", final.FinishReason, final.ErrorCode, tc.finish, tc.errorCode)
			}
			if tc.usage && (final.UsageMetadata != usage || final.ModelVersion != "gemini-x") {
				t.Errorf("usage/model version not carried to the final response: %+v", final)
			}
		})
	}
}

func TestAggregateErrors(t *testing.T) {
	if _, err := collect(t, Aggregate(chunks())); !errors.Is(err, ErrEmptyResponse) {
		t.Errorf("empty stream: err = %v, want ErrEmptyResponse", err)
	}
	boom := errors.New("connection reset")
	broken := func(yield func(*genai.GenerateContentResponse, error) bool) {
		if yield(chunk("", &genai.Part{Text: "par"}), nil) {
			yield(nil, boom)
		}
	}
	out, err := collect(t, Aggregate(broken))
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	if len(out) != 1 || !out[0].Partial {
		t.Errorf("the delta before the failure must be delivered once, as a partial: %+v", out)
	}
}
