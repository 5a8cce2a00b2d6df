package llm

import (
	"errors"
	"iter"
	"strings"

	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"
)

// ErrEmptyResponse reports a model stream that ended without any chunk.
var ErrEmptyResponse = errors.New("model returned an empty response stream")

// Aggregate turns a backend's raw chunk stream into what ADK expects from a
// streaming model: one partial response per chunk that carries text or
// thoughts (the deltas drivers print as they arrive), then one complete,
// non-partial response holding the merged text, every function call and the
// final usage. Only that last response is stored in the session and has its
// function calls executed, so a call is never run twice.
func Aggregate(chunks iter.Seq2[*genai.GenerateContentResponse, error]) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		var a aggregator
		for chunk, err := range chunks {
			if err != nil {
				yield(nil, err)
				return
			}
			if chunk == nil {
				continue
			}
			if partial := a.add(chunk); partial != nil {
				if !yield(partial, nil) {
					return
				}
			}
		}
		final := a.final()
		if final == nil {
			yield(nil, ErrEmptyResponse)
			return
		}
		yield(final, nil)
	}
}

// aggregator accumulates chunks the way ADK's own streaming aggregator does:
// consecutive text parts of the same kind (answer or thought) merge into one
// part, every other part keeps its place, and a thought signature that
// arrived on a text chunk rides on the next function call if that call has
// none (Gemini requires it there).
type aggregator struct {
	seen     bool
	parts    []*genai.Part
	text     strings.Builder
	thought  bool
	textSig  []byte
	pending  []byte // signature waiting for a function call
	last     *model.LLMResponse
	usage    *genai.GenerateContentResponseUsageMetadata
	finish   genai.FinishReason
	finMsg   string
	citation *genai.CitationMetadata
	ground   *genai.GroundingMetadata
	version  string
}

func (a *aggregator) add(chunk *genai.GenerateContentResponse) *model.LLMResponse {
	resp := ToLLMResponse(chunk)
	a.seen = true
	a.last = resp
	if resp.UsageMetadata != nil {
		a.usage = resp.UsageMetadata
	}
	if resp.FinishReason != "" {
		a.finish = resp.FinishReason
		if len(chunk.Candidates) > 0 && chunk.Candidates[0] != nil {
			a.finMsg = chunk.Candidates[0].FinishMessage
		}
	}
	if resp.CitationMetadata != nil {
		a.citation = resp.CitationMetadata
	}
	if resp.GroundingMetadata != nil {
		a.ground = resp.GroundingMetadata
	}
	if resp.ModelVersion != "" {
		a.version = resp.ModelVersion
	}
	if resp.Content == nil {
		return nil
	}
	hasText := false
	for _, p := range resp.Content.Parts {
		if p == nil {
			continue
		}
		switch {
		case p.Text != "":
			hasText = true
			if a.text.Len() > 0 && p.Thought != a.thought {
				a.flushText()
			}
			if a.text.Len() == 0 {
				a.thought = p.Thought
			}
			if len(p.ThoughtSignature) > 0 {
				if a.textSig == nil {
					a.textSig = p.ThoughtSignature
				}
				a.pending = p.ThoughtSignature
			}
			a.text.WriteString(p.Text)
		case p.FunctionCall != nil:
			a.flushText()
			fc := *p
			if len(fc.ThoughtSignature) == 0 && a.pending != nil {
				fc.ThoughtSignature = a.pending
			}
			a.pending = nil
			a.parts = append(a.parts, &fc)
		case isEmptyPart(p):
			// Gemini 3 ends some streams with an empty part; it carries nothing.
			if len(p.ThoughtSignature) > 0 {
				a.pending = p.ThoughtSignature
			}
		default:
			a.flushText()
			a.parts = append(a.parts, p)
		}
	}
	if !hasText {
		return nil
	}
	resp.Partial = true
	return resp
}

func isEmptyPart(p *genai.Part) bool {
	return p.Text == "" && p.InlineData == nil && p.FileData == nil && p.FunctionCall == nil &&
		p.FunctionResponse == nil && p.ExecutableCode == nil && p.CodeExecutionResult == nil &&
		p.VideoMetadata == nil
}

func (a *aggregator) flushText() {
	if a.text.Len() == 0 {
		return
	}
	a.parts = append(a.parts, &genai.Part{Text: a.text.String(), Thought: a.thought, ThoughtSignature: a.textSig})
	a.text.Reset()
	a.thought = false
	a.textSig = nil
}

func (a *aggregator) final() *model.LLMResponse {
	if !a.seen {
		return nil
	}
	a.flushText()
	out := &model.LLMResponse{
		Content:           &genai.Content{Role: genai.RoleModel, Parts: a.parts},
		UsageMetadata:     a.usage,
		CitationMetadata:  a.citation,
		GroundingMetadata: a.ground,
		FinishReason:      a.finish,
		ModelVersion:      a.version,
		TurnComplete:      true,
	}
	if len(a.parts) == 0 && a.last.ErrorCode != "" {
		out.ErrorCode = a.last.ErrorCode
		out.ErrorMessage = a.last.ErrorMessage
	} else if a.finish != "" && a.finish != genai.FinishReasonStop && len(a.parts) == 0 {
		out.ErrorCode = string(a.finish)
		out.ErrorMessage = a.finMsg
	}
	return out
}
