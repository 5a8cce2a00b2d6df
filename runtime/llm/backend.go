// Package llm holds agentry's model backends: Gemini through the genai client,
// OpenAI-compatible Chat Completions servers, and the replay of recorded
// responses. Every backend speaks the same small, genai-shaped interface, so
// the runtime's dispatcher can aggregate, record and retry the same way for
// all of them.
package llm

import (
	"context"
	"iter"

	"google.golang.org/genai"
)

// Backend is one source of model responses. Its methods mirror the genai
// Models service (and gemini-cli's ContentGenerator), so a stream is a
// sequence of raw GenerateContentResponse chunks: aggregation into partial
// and final responses happens once, above the backend.
//
// A Backend must not mutate contents or cfg: the dispatcher may hand the same
// request to another backend after a failure, and the contents are the
// session's history, shared by every request. A backend that needs them
// changed copies what it changes.
type Backend interface {
	// GenerateContent returns one complete response.
	GenerateContent(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error)
	// GenerateContentStream yields response chunks as they arrive. An error
	// ends the stream; chunks already yielded stay valid.
	GenerateContentStream(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error]
	// CountTokens counts the tokens of contents for model.
	CountTokens(ctx context.Context, model string, contents []*genai.Content, cfg *genai.CountTokensConfig) (*genai.CountTokensResponse, error)
}
