package llm

import (
	"strings"

	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"
)

// Kinds of InvalidStreamError, with gemini-cli's spelling.
const (
	InvalidNoFinishReason       = "NO_FINISH_REASON"
	InvalidNoResponseText       = "NO_RESPONSE_TEXT"
	InvalidMalformedCall        = "MALFORMED_FUNCTION_CALL"
	InvalidUnexpectedToolCall   = "UNEXPECTED_TOOL_CALL"
	InvalidMaxTokens            = "MAX_TOKENS_EXCEEDED"
	InvalidSafetyBlocked        = "SAFETY_BLOCKED"
	InvalidRecitationBlocked    = "RECITATION_BLOCKED"
	InvalidOtherBlocked         = "OTHER_BLOCKED"
	InvalidThinkingOnlyResponse = "THINKING_ONLY_RESPONSE"
)

// InvalidStreamError reports a model stream that ended without a usable
// answer: no finish reason, a malformed call, or no text at all (blocked,
// out of tokens, thoughts only). gemini-cli retries such a stream and
// fails the turn when it stays invalid.
type InvalidStreamError struct {
	// Type is one of the Invalid* kinds.
	Type string
	// Message is gemini-cli's description of the kind.
	Message string
}

// Error returns the description.
func (e *InvalidStreamError) Error() string { return e.Message }

// CheckStream applies gemini-cli's validity rules (geminiChat.ts
// processStreamResponse) to the complete response of a model stream; nil
// (a stream without any chunk) is a stream without a finish reason.
// afterToolResponse says the request answered function calls: the model
// may then end its turn silently.
func CheckStream(resp *model.LLMResponse, afterToolResponse bool) *InvalidStreamError {
	var parts []*genai.Part
	var finish genai.FinishReason
	if resp != nil {
		finish = resp.FinishReason
		if resp.Content != nil {
			parts = resp.Content.Parts
		}
	}
	thoughts, answered := false, false
	for _, p := range parts {
		switch {
		case p == nil:
		case p.FunctionCall != nil:
			return nil // a tool call is always an answer
		case p.Thought:
			thoughts = true
		case !answered && p.Text != "":
			// Aggregate merges a stream's text into one part, so judging
			// part by part is judging the whole text.
			answered = visibleText(p.Text) != ""
		}
	}
	switch {
	case finish == "" && !afterToolResponse:
		return &InvalidStreamError{InvalidNoFinishReason, "Model stream ended without a finish reason."}
	case finish == genai.FinishReasonMalformedFunctionCall:
		return &InvalidStreamError{InvalidMalformedCall, "Model stream ended with malformed function call."}
	case finish == genai.FinishReasonUnexpectedToolCall:
		return &InvalidStreamError{InvalidUnexpectedToolCall, "Model stream ended with unexpected tool call."}
	}
	if answered {
		return nil
	}
	switch {
	case finish == genai.FinishReasonMaxTokens:
		return &InvalidStreamError{InvalidMaxTokens, "Model stream ended due to token limit exhaustion (MAX_TOKENS) with empty response text."}
	case finish == genai.FinishReasonSafety:
		return &InvalidStreamError{InvalidSafetyBlocked, "Model stream ended due to safety settings (SAFETY) with empty response text."}
	case finish == genai.FinishReasonRecitation:
		return &InvalidStreamError{InvalidRecitationBlocked, "Model stream ended due to recitation settings (RECITATION) with empty response text."}
	case finish == genai.FinishReasonOther:
		return &InvalidStreamError{InvalidOtherBlocked, "Model stream ended due to other settings (OTHER) with empty response text."}
	case thoughts:
		return &InvalidStreamError{InvalidThinkingOnlyResponse, "Model stream ended with empty response text but contained reasoning thoughts."}
	case !afterToolResponse:
		return &InvalidStreamError{InvalidNoResponseText, "Model stream ended with empty response text."}
	}
	return nil
}

// Compiled on first use: visibleText needs them only for text that holds
// an invisible character or a comment.
var (
	invisibleChars = lazyRegexp("[\u200B-\u200D\uFEFF\u200E\u200F]")
	htmlComment    = lazyRegexp(`(?s)<!--.*?-->`)
)

// visibleText is the answer text as gemini-cli judges it: without
// zero-width characters and HTML comments, trimmed.
func visibleText(s string) string {
	if !strings.ContainsAny(s, "\u200b\u200c\u200d\ufeff\u200e\u200f") && !strings.Contains(s, "<!--") {
		return strings.TrimSpace(s) // the usual case, without allocating
	}
	s = invisibleChars().ReplaceAllString(s, "")
	for {
		next := htmlComment().ReplaceAllString(s, "")
		if next == s {
			break
		}
		s = next
	}
	return strings.TrimSpace(s)
}
