package fakegemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"google.golang.org/genai"
)

// Request is one HTTP request received by the fake.
type Request struct {
	// Method is the API method: [MethodStream], [MethodGenerate] or
	// [MethodCountTokens] (empty for an unsupported path).
	Method string
	// Model is the requested model without its "models/" prefix, e.g.
	// "gemini-2.5-flash" (tuned models keep their "tunedModels/" prefix).
	Model string
	// APIVersion is the version segment of the path, "v1beta" by default.
	APIVersion string
	// APIKey is the x-goog-api-key header.
	APIKey string
	// HTTPMethod is the HTTP verb, POST for every model call.
	HTTPMethod string
	// Path is the request URL's path, e.g.
	// "/v1beta/models/gemini-2.5-flash:streamGenerateContent".
	Path string
	// RawQuery is the request URL's query: "alt=sse" for streaming, empty
	// otherwise.
	RawQuery string
	// Header holds all request headers (user-agent, x-goog-api-client,
	// x-server-timeout when the context has a deadline, ...).
	Header http.Header
	// Body is the decoded JSON body, nil when the request had none.
	Body *RequestBody
	// Raw is the body exactly as received, for fields Body does not model.
	Raw []byte
}

// RequestBody is the JSON body of a generation or countTokens request, decoded
// into genai types. The client moves system instruction, tools and tool config
// out of GenerateContentConfig to the top level, and the sampling and thinking
// settings into GenerationConfig; countTokens on the Gemini API only sends
// Contents.
type RequestBody struct {
	// Contents is the conversation history, oldest first.
	Contents []*genai.Content `json:"contents,omitempty"`
	// SystemInstruction is the system prompt, if any.
	SystemInstruction *genai.Content `json:"systemInstruction,omitempty"`
	// Tools are the declared tools (function declarations, built-ins).
	Tools []*genai.Tool `json:"tools,omitempty"`
	// ToolConfig is the function calling configuration, if any.
	ToolConfig *genai.ToolConfig `json:"toolConfig,omitempty"`
	// GenerationConfig holds temperature, thinking config, response schema
	// and the like; nil when the call had no such settings.
	GenerationConfig *genai.GenerationConfig `json:"generationConfig,omitempty"`
	// SafetySettings are the request's safety settings, if any.
	SafetySettings []*genai.SafetySetting `json:"safetySettings,omitempty"`
	// CachedContent names a cached content resource, if any.
	CachedContent string `json:"cachedContent,omitempty"`
}

// LastUserText is the text of the last user turn of a generation request
// (its text parts joined), "" when it has none.
func (r *Request) LastUserText() string {
	if r.Body == nil {
		return ""
	}
	for i := len(r.Body.Contents) - 1; i >= 0; i-- {
		c := r.Body.Contents[i]
		if c == nil || c.Role != genai.RoleUser {
			continue
		}
		var b strings.Builder
		for _, p := range c.Parts {
			if p != nil {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}

// parsePath fills Method, Model and APIVersion from a path of the form
// /{version}/models/{model}:{method}, or Vertex AI express mode's
// /{version}/publishers/google/models/{model}:{method}.
func (r *Request) parsePath() error {
	version, rest, ok := strings.Cut(strings.TrimPrefix(r.Path, "/"), "/")
	if !ok {
		return errors.New("path has no API version")
	}
	r.APIVersion = version
	i := strings.LastIndex(rest, ":")
	if i < 0 {
		return errors.New("path has no :method suffix")
	}
	resource, method := rest[:i], rest[i+1:]
	resource = strings.TrimPrefix(resource, "publishers/google/")
	if !strings.HasPrefix(resource, "models/") && !strings.HasPrefix(resource, "tunedModels/") {
		return fmt.Errorf("resource %q is not a model", resource)
	}
	r.Model = modelKey(resource)
	switch method {
	case MethodStream, MethodGenerate, MethodCountTokens:
		r.Method = method
		return nil
	default:
		return fmt.Errorf("method %q is not faked", method)
	}
}

// summary describes the request briefly for failure messages: the number of
// contents and what the last one holds, which usually identifies the turn.
func (r *Request) summary() string {
	if r.Body == nil || len(r.Body.Contents) == 0 {
		return "no contents"
	}
	last := r.Body.Contents[len(r.Body.Contents)-1]
	var parts []string
	if last != nil {
		for _, p := range last.Parts {
			parts = append(parts, describePart(p))
		}
	}
	role := ""
	if last != nil {
		role = last.Role
	}
	return fmt.Sprintf("%d content(s), last from %q: %s", len(r.Body.Contents), role, strings.Join(parts, ", "))
}

// describePart renders a part in a few words for failure messages.
func describePart(p *genai.Part) string {
	switch {
	case p == nil:
		return "nil part"
	case p.FunctionCall != nil:
		return "functionCall " + p.FunctionCall.Name
	case p.FunctionResponse != nil:
		return "functionResponse " + p.FunctionResponse.Name
	case p.Text != "":
		t := p.Text
		if utf8.RuneCountInString(t) > 60 {
			t = string([]rune(t)[:60]) + "…"
		}
		return fmt.Sprintf("text %q", t)
	default:
		return "other part"
	}
}

// estimateTokens approximates a token count from a character count: one
// token per four characters, rounded up. Exactness does not matter, only that
// counts are deterministic and grow with the text.
func estimateTokens(chars int) int32 {
	return int32((chars + 3) / 4)
}

// contentChars counts the characters of the text and function call/response
// payloads in contents.
func contentChars(contents ...*genai.Content) int {
	n := 0
	for _, c := range contents {
		if c == nil {
			continue
		}
		for _, p := range c.Parts {
			n += partChars(p)
		}
	}
	return n
}

func partChars(p *genai.Part) int {
	if p == nil {
		return 0
	}
	n := utf8.RuneCountInString(p.Text)
	if p.FunctionCall != nil {
		b, _ := json.Marshal(p.FunctionCall)
		n += len(b)
	}
	if p.FunctionResponse != nil {
		b, _ := json.Marshal(p.FunctionResponse)
		n += len(b)
	}
	return n
}

// estimateRequestTokens is the prompt size of a request: its contents plus
// its system instruction.
func estimateRequestTokens(b *RequestBody) int32 {
	if b == nil {
		return 0
	}
	return estimateTokens(contentChars(append([]*genai.Content{b.SystemInstruction}, b.Contents...)...))
}
