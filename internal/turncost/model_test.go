package turncost

import (
	"context"
	"errors"
	"iter"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/functiontool"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/tools"
)

// The turn every variant runs: the prompt, the call the model answers it
// with, the tool's output and the model's final answer in three streamed
// chunks.
const (
	prompt      = "Which Go version does the build use, and do the cache package's tests pass? Look it up before you answer, and keep the answer short."
	toolName    = "lookup"
	toolKey     = "build"
	toolOutput  = "go 1.26.5; go test ./internal/cache/... passed (14 tests, 0.41s)"
	modelName   = "gemini-2.5-flash"
	description = "agentry, a coding agent working in the user's workspace"
)

var answerChunks = []string{"The build uses Go 1.26.5, ", "and the cache package's ", "14 tests pass."}

// script is the model's side of a turn, shared by the two scripted
// models: a request whose last content answers a call gets the text
// answer, any other the call. It counts the calls and keeps the size of
// the last request that got the call — the turn's first — so that a
// variant can check what it ran.
type script struct {
	calls    int
	firstLen int
	// onRequest, when set, sees every request (tests only).
	onRequest func(contents []*genai.Content, cfg *genai.GenerateContentConfig)
}

// next records a request and reports whether it gets the call.
func (s *script) next(contents []*genai.Content, cfg *genai.GenerateContentConfig) (call bool) {
	s.calls++
	if s.onRequest != nil {
		s.onRequest(contents, cfg)
	}
	call = len(contents) == 0 || !answers(contents[len(contents)-1])
	if call {
		s.firstLen = len(contents)
	}
	return call
}

// answers reports whether c holds a function response.
func answers(c *genai.Content) bool {
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

// callContent and usage are built afresh for every response, as a model
// client's decoding builds them: ADK writes call ids into the content it
// is given.
func callContent() *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: toolName, Args: map[string]any{"key": toolKey}}}}}
}

func usage() *genai.GenerateContentResponseUsageMetadata {
	return &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 10, CandidatesTokenCount: 3, TotalTokenCount: 13}
}

// adkModel is the scripted model.LLM of the bare ADK variant. Streaming,
// it answers as ADK expects of a streaming model: a partial response per
// text chunk, then the complete one.
type adkModel struct{ script }

var _ model.LLM = (*adkModel)(nil)

// Name implements model.LLM.
func (m *adkModel) Name() string { return modelName }

// GenerateContent implements model.LLM.
func (m *adkModel) GenerateContent(_ context.Context, req *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		if m.next(req.Contents, req.Config) {
			yield(&model.LLMResponse{Content: callContent(), UsageMetadata: usage(), FinishReason: genai.FinishReasonStop, TurnComplete: true}, nil)
			return
		}
		text := ""
		for _, c := range answerChunks {
			text += c
			if stream && !yield(&model.LLMResponse{Content: genai.NewContentFromText(c, genai.RoleModel), Partial: true}, nil) {
				return
			}
		}
		yield(&model.LLMResponse{Content: genai.NewContentFromText(text, genai.RoleModel), UsageMetadata: usage(), FinishReason: genai.FinishReasonStop, TurnComplete: true}, nil)
	}
}

// backend is the scripted llm.Backend of the agentry variants: the same
// answers as raw chunks, which agentry's dispatcher aggregates.
type backend struct{ script }

// GenerateContentStream implements llm.Backend.
func (b *backend) GenerateContentStream(_ context.Context, _ string, contents []*genai.Content, cfg *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		if b.next(contents, cfg) {
			yield(&genai.GenerateContentResponse{
				Candidates:    []*genai.Candidate{{Content: callContent(), FinishReason: genai.FinishReasonStop}},
				UsageMetadata: usage(),
			}, nil)
			return
		}
		for i, c := range answerChunks {
			r := &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: genai.NewContentFromText(c, genai.RoleModel)}}}
			if i == len(answerChunks)-1 {
				r.Candidates[0].FinishReason = genai.FinishReasonStop
				r.UsageMetadata = usage()
			}
			if !yield(r, nil) {
				return
			}
		}
	}
}

// errUtilityCall is what a utility call (a classifier, the loop check,
// compression) gets: the turn has none, and the count it adds fails the
// variant's check.
var errUtilityCall = errors.New("turncost: the scripted model answers no utility call")

// GenerateContent implements llm.Backend; see errUtilityCall.
func (b *backend) GenerateContent(_ context.Context, _ string, contents []*genai.Content, cfg *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	b.next(contents, cfg)
	return nil, errUtilityCall
}

// CountTokens implements llm.Backend.
func (b *backend) CountTokens(context.Context, string, []*genai.Content, *genai.CountTokensConfig) (*genai.CountTokensResponse, error) {
	return &genai.CountTokensResponse{TotalTokens: 10}, nil
}

// lookupArgs and lookupResult are the trivial tool's input and output.
type lookupArgs struct {
	Key string `json:"key" jsonschema:"what to look up"`
}

type lookupResult struct {
	Output string `json:"output"`
}

// newADKTool returns the bare ADK variant's tool, a functiontool, and its
// declaration, which the agentry variants' tool declares too.
func newADKTool(calls *int) (tool.Tool, *genai.FunctionDeclaration, error) {
	t, err := functiontool.New(functiontool.Config{
		Name:        toolName,
		Description: "Looks up a fact about the project's build.",
	}, func(_ agent.Context, a lookupArgs) (lookupResult, error) {
		*calls++
		if a.Key != toolKey {
			return lookupResult{}, errors.New("unknown key " + a.Key)
		}
		return lookupResult{Output: toolOutput}, nil
	})
	if err != nil {
		return nil, nil, err
	}
	d, ok := t.(interface {
		Declaration() *genai.FunctionDeclaration
	})
	if !ok {
		return nil, nil, errors.New("turncost: the function tool has no declaration")
	}
	return t, d.Declaration(), nil
}

// lookupTool is the agentry variants' tool: the same declaration and
// output as the function tool, which agentry's scheduler wraps as
// {"output": …} as the function tool's result is.
type lookupTool struct {
	decl  *genai.FunctionDeclaration
	calls int
}

var _ tools.Tool = (*lookupTool)(nil)

// Name, DisplayName, Kind, Declaration, Describe and Execute implement
// tools.Tool.
func (t *lookupTool) Name() string                            { return toolName }
func (t *lookupTool) DisplayName() string                     { return "Lookup" }
func (t *lookupTool) Kind() tools.Kind                        { return tools.KindRead }
func (t *lookupTool) Declaration() *genai.FunctionDeclaration { return t.decl }
func (t *lookupTool) Describe(args map[string]any) string     { s, _ := args["key"].(string); return s }
func (t *lookupTool) Execute(_ context.Context, c tools.Call) (tools.Result, error) {
	t.calls++
	if k, _ := c.Args["key"].(string); k != toolKey {
		return tools.Result{}, errors.New("unknown key " + k)
	}
	return tools.Result{LLMContent: toolOutput}, nil
}
