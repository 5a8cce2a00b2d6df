package llm

import (
	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"
)

// ToLLMResponse converts one genai response into ADK's response shape, with
// the same rules as ADK's Gemini model: the first candidate's content, or an
// error code from a content-less finish reason or a blocked prompt.
func ToLLMResponse(res *genai.GenerateContentResponse) *model.LLMResponse {
	if len(res.Candidates) > 0 && res.Candidates[0] != nil {
		c := res.Candidates[0]
		out := &model.LLMResponse{
			GroundingMetadata: c.GroundingMetadata,
			FinishReason:      c.FinishReason,
			CitationMetadata:  c.CitationMetadata,
			AvgLogprobs:       c.AvgLogprobs,
			LogprobsResult:    c.LogprobsResult,
			UsageMetadata:     res.UsageMetadata,
			ModelVersion:      res.ModelVersion,
		}
		if (c.Content != nil && len(c.Content.Parts) > 0) || c.FinishReason == genai.FinishReasonStop {
			out.Content = c.Content
		} else {
			out.ErrorCode = string(c.FinishReason)
			out.ErrorMessage = c.FinishMessage
		}
		return out
	}
	if res.PromptFeedback != nil && res.PromptFeedback.BlockReason != "" {
		return &model.LLMResponse{
			ErrorCode:     string(res.PromptFeedback.BlockReason),
			ErrorMessage:  res.PromptFeedback.BlockReasonMessage,
			UsageMetadata: res.UsageMetadata,
			ModelVersion:  res.ModelVersion,
		}
	}
	// Some streams open with usage-only chunks; they are valid and empty.
	return &model.LLMResponse{
		Content:       &genai.Content{Role: genai.RoleModel},
		UsageMetadata: res.UsageMetadata,
		ModelVersion:  res.ModelVersion,
	}
}
