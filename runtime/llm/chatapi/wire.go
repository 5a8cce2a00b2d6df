// Package chatapi is a small client for OpenAI's Chat Completions API, the
// dialect that OpenAI and local servers (Ollama, vLLM, llama.cpp) share. It
// speaks exactly the subset agentry's OpenAI backend uses: one POST to
// {base}/chat/completions, unary or streamed as server-sent events. It never
// retries; the caller owns retries and backoff.
package chatapi

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// Request is the body of a chat completion request. Optional fields are
// omitted from the JSON when nil or empty.
type Request struct {
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	// Stream is set by Client.Stream.
	Stream        bool           `json:"stream,omitempty"`
	StreamOptions *StreamOptions `json:"stream_options,omitempty"`
	Tools         []Tool         `json:"tools,omitempty"`
	ToolChoice    *ToolChoice    `json:"tool_choice,omitempty"`
	Temperature   *float64       `json:"temperature,omitempty"`
	TopP          *float64       `json:"top_p,omitempty"`
	// PresencePenalty and FrequencyPenalty range over [-2, 2].
	PresencePenalty  *float64 `json:"presence_penalty,omitempty"`
	FrequencyPenalty *float64 `json:"frequency_penalty,omitempty"`
	// MaxTokens is the output limit local servers know; OpenAI's reasoning
	// models want MaxCompletionTokens instead.
	MaxTokens           *int64          `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int64          `json:"max_completion_tokens,omitempty"`
	Stop                []string        `json:"stop,omitempty"`
	Seed                *int64          `json:"seed,omitempty"`
	ResponseFormat      *ResponseFormat `json:"response_format,omitempty"`
}

// StreamOptions configures a streamed response.
type StreamOptions struct {
	// IncludeUsage asks for a last chunk carrying the token usage; without
	// it servers send no usage at all on streams.
	IncludeUsage bool `json:"include_usage"`
}

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one message of the conversation.
type Message struct {
	Role string `json:"role"`
	// Content is omitted when nil, as for an assistant message that only
	// calls tools.
	Content *Content `json:"content,omitempty"`
	// ToolCalls are an assistant message's calls.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// Content is a message's content: Text, or Parts when Parts is not nil.
type Content struct {
	Text  string
	Parts []ContentPart
}

// TextContent returns content that is the text s.
func TextContent(s string) *Content { return &Content{Text: s} }

// MarshalJSON encodes c as a JSON string, or as an array of parts.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.Parts != nil {
		return marshal(c.Parts)
	}
	return marshal(c.Text)
}

// ContentPart is one part of a user message: text, or an image.
type ContentPart struct {
	// Text is the text of a text part.
	Text string
	// ImageURL, when set, makes this an image part: an http(s) URL or a
	// data URL.
	ImageURL string
}

// MarshalJSON encodes p as {"type":"text",…} or {"type":"image_url",…}.
func (p ContentPart) MarshalJSON() ([]byte, error) {
	if p.ImageURL != "" {
		return marshal(struct {
			Type     string   `json:"type"`
			ImageURL imageURL `json:"image_url"`
		}{"image_url", imageURL{p.ImageURL}})
	}
	return marshal(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{"text", p.Text})
}

type imageURL struct {
	URL string `json:"url"`
}

// ToolCall is a function call in an assistant message of the request.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // always "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall names a function and carries its arguments as JSON text.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is a function the model may call.
type Tool struct {
	Type     string   `json:"type"` // always "function"
	Function Function `json:"function"`
}

// Function declares a function: its name, description and JSON Schema
// parameters.
type Function struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
}

// ToolChoice is "none", "auto" or "required" (Mode), or one named function
// the model must call (Function).
type ToolChoice struct {
	Mode     string
	Function string
}

// MarshalJSON encodes c as its mode string, or as
// {"type":"function","function":{"name":…}}.
func (c ToolChoice) MarshalJSON() ([]byte, error) {
	if c.Function != "" {
		type name struct {
			Name string `json:"name"`
		}
		return marshal(struct {
			Type     string `json:"type"`
			Function name   `json:"function"`
		}{"function", name{c.Function}})
	}
	return marshal(c.Mode)
}

// ResponseFormat asks for JSON output: "json_object", or "json_schema" with
// JSONSchema.
type ResponseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *JSONSchema `json:"json_schema,omitempty"`
}

// JSONSchema is the schema of a json_schema response format.
type JSONSchema struct {
	Name   string         `json:"name"`
	Schema map[string]any `json:"schema"`
}

// marshal encodes v without escaping <, > and &, as the request as a whole
// is encoded: tool descriptions and prompts are full of them.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Completion is a non-streamed response.
type Completion struct {
	ID      String   `json:"id"`
	Model   String   `json:"model"`
	Choices []Choice `json:"choices"`
	// Usage is nil when the server sent none.
	Usage *Usage `json:"usage"`
}

// Choice is one choice of a Completion.
type Choice struct {
	Index        Int             `json:"index"`
	FinishReason String          `json:"finish_reason"`
	Message      ResponseMessage `json:"message"`
}

// Chunk is one event of a streamed response.
type Chunk struct {
	ID      String        `json:"id"`
	Model   String        `json:"model"`
	Choices []ChunkChoice `json:"choices"`
	// Usage is nil except on the chunk that carries it.
	Usage *Usage `json:"usage"`
	// Error is set on an error event (an object or a string).
	Error json.RawMessage `json:"error"`
}

// ChunkChoice is one choice's delta in a Chunk.
type ChunkChoice struct {
	Index        Int             `json:"index"`
	FinishReason String          `json:"finish_reason"`
	Delta        ResponseMessage `json:"delta"`
}

// ResponseMessage is a Completion's message or a Chunk's delta.
type ResponseMessage struct {
	Content String `json:"content"`
	Refusal String `json:"refusal"`
	// ReasoningContent (vLLM, llama.cpp) and Reasoning (Ollama,
	// OpenRouter) carry reasoning text; see ReasoningText.
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
	ToolCalls        []ToolCallDelta `json:"tool_calls"`
	// FunctionCall is the single call older servers send instead of
	// ToolCalls.
	FunctionCall *FunctionCallDelta `json:"function_call"`
}

// ReasoningText returns the reasoning text of m: reasoning_content, else
// reasoning, when it is a non-empty JSON string.
func (m *ResponseMessage) ReasoningText() string {
	for _, raw := range []json.RawMessage{m.ReasoningContent, m.Reasoning} {
		var s string
		if len(raw) > 0 && json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// ToolCallDelta is a tool call of a response: whole in a Completion, a piece
// of one in a Chunk (Index says which call it continues).
type ToolCallDelta struct {
	Index    Int               `json:"index"`
	ID       String            `json:"id"`
	Type     String            `json:"type"`
	Function FunctionCallDelta `json:"function"`
}

// FunctionCallDelta is a function call's name and (a piece of) its
// arguments text.
type FunctionCallDelta struct {
	Name      String `json:"name"`
	Arguments String `json:"arguments"`
}

// Usage is the token usage of a response.
type Usage struct {
	PromptTokens        Int `json:"prompt_tokens"`
	CompletionTokens    Int `json:"completion_tokens"`
	TotalTokens         Int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens Int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens Int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// String is a string read leniently, since OpenAI-compatible servers differ
// in what they send: null is "", a string is itself, and any other value is
// its JSON text (so arguments sent as an object still arrive).
type String string

// UnmarshalJSON implements json.Unmarshaler.
func (s *String) UnmarshalJSON(b []byte) error {
	switch {
	case bytes.Equal(b, []byte("null")):
		*s = ""
	case len(b) > 0 && b[0] == '"':
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = String(v)
	default:
		*s = String(b)
	}
	return nil
}

// Int is an integer read leniently: null, and anything that is not a
// number or a numeric string, is 0.
type Int int64

// UnmarshalJSON implements json.Unmarshaler.
func (n *Int) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var v string
		if json.Unmarshal(b, &v) == nil {
			b = []byte(v)
		}
	}
	*n = 0
	if v, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		*n = Int(v)
	} else if f, err := strconv.ParseFloat(string(b), 64); err == nil && f >= math.MinInt64 && f < math.MaxInt64 {
		*n = Int(f)
	}
	return nil
}
