package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/version"
	"github.com/agentry-dev/agentry/runtime/llm/chatapi"
)

// DefaultOpenAIBaseURL is the endpoint used when OpenAIConfig.BaseURL is
// empty.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// ErrMalformedToolCall reports a tool call whose arguments are not a JSON
// object. The model produced it, so the dispatcher may retry the turn.
var ErrMalformedToolCall = errors.New("model returned a malformed tool call")

// OpenAIConfig configures the OpenAI-compatible backend.
type OpenAIConfig struct {
	// APIKey is sent as a bearer token. It may be empty: local servers
	// (Ollama, vLLM, llama.cpp) usually need none, and then no Authorization
	// header is sent.
	APIKey string
	// BaseURL is the API root that "/chat/completions" is appended to, such
	// as "http://localhost:11434/v1". Empty means DefaultOpenAIBaseURL.
	BaseURL string
	// UserAgent is sent as the User-Agent header; empty means agentry's
	// own (agentry/<version>).
	UserAgent string
	// HTTPClient is used for every request when set.
	HTTPClient *http.Client
}

// OpenAI is the Backend for servers that speak OpenAI's Chat Completions API:
// OpenAI itself and local servers such as Ollama, vLLM and llama.cpp, which do
// not serve the Responses API that ADK's own OpenAI model uses.
//
// Requests are translated from genai's shape as follows:
//
//   - cfg.SystemInstruction: its text parts, joined by newlines, become one
//     system message ahead of the conversation.
//   - user contents: text parts, joined by newlines, become a user message;
//     inline images (and http(s) image file URIs) become image_url parts, data
//     URLs for inline bytes. Other media cannot be sent and is replaced by a
//     short text note, so the model knows something was left out.
//     FunctionResponse parts become tool messages (tool_call_id is the
//     response's ID, content the JSON of its response map), placed before the
//     user message so they directly follow the assistant's tool calls.
//   - model contents: text parts become the assistant's content and function
//     calls its tool_calls, with the call's ID or, when empty, an ID derived
//     from the call's position that the matching response also gets. Thought
//     parts are never sent back.
//   - tools: every FunctionDeclaration becomes a function tool whose
//     parameters are ParametersJsonSchema, else Parameters converted to JSON
//     Schema, else an empty object schema. Non-function tools (Google Search,
//     code execution, …) are ignored.
//   - ToolConfig.FunctionCallingConfig: NONE→"none", ANY→"required" (a named
//     function when exactly one name is allowed), AUTO and VALIDATED→"auto".
//     AllowedFunctionNames also limits the tools sent, which every server
//     understands, unlike OpenAI's allowed_tools choice.
//   - generation: Temperature, TopP, MaxOutputTokens (max_completion_tokens
//     for api.openai.com, whose reasoning models reject max_tokens; max_tokens
//     elsewhere, the field local servers know), StopSequences, Seed,
//     PresencePenalty, FrequencyPenalty; ResponseMIMEType "application/json"
//     becomes response_format json_schema with ResponseJsonSchema or
//     ResponseSchema, json_object without.
//
// Ignored, because Chat Completions has no counterpart or agentry does not
// need one: TopK, CandidateCount (one choice is always requested), safety
// settings, ThinkingConfig, Labels, CachedContent, ResponseLogprobs and
// Logprobs, ResponseModalities, MediaResolution, SpeechConfig,
// AudioTimestamp, routing and model selection, ImageConfig, ServiceTier,
// Store, HTTPOptions, thought signatures, FunctionDeclaration.Response and
// Behavior, and FunctionResponse scheduling.
//
// Responses come back as genai chunks with one candidate of role "model":
// content (and refusal) deltas as text parts, reasoning_content or reasoning
// deltas (from vLLM, Ollama, llama.cpp) as thought parts, tool calls as
// complete FunctionCall parts once their choice finishes, usage on the last
// chunk. finish_reason maps stop, tool_calls and function_call to STOP,
// length to MAX_TOKENS, content_filter to SAFETY and anything else to OTHER.
//
// The requests go through chatapi, agentry's own Chat Completions client
// (see docs/architecture.md for why not OpenAI's SDK). An OpenAI is safe for
// concurrent use.
type OpenAI struct {
	client  *chatapi.Client
	baseURL string
	// maxCompletionTokens sends the output limit as max_completion_tokens
	// rather than max_tokens.
	maxCompletionTokens bool
}

var _ Backend = (*OpenAI)(nil)

// NewOpenAI creates the Chat Completions backend for cfg. It never retries
// a request: agentry's dispatcher owns retries and backoff. Nothing is read
// from the environment (no OPENAI_API_KEY): agentry resolves its
// configuration itself, and an ambient key must not leak to a local server
// configured keyless.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultOpenAIBaseURL
	}
	ua := cfg.UserAgent
	if ua == "" {
		ua = version.UserAgent()
	}
	client, err := chatapi.New(chatapi.Config{BaseURL: base, APIKey: cfg.APIKey, UserAgent: ua, HTTPClient: cfg.HTTPClient})
	if err != nil {
		return nil, fmt.Errorf("OpenAI-compatible %w", err)
	}
	u, _ := url.Parse(base) // chatapi.New parsed it
	return &OpenAI{
		client:              client,
		baseURL:             strings.TrimSuffix(base, "/"),
		maxCompletionTokens: u.Hostname() == "api.openai.com",
	}, nil
}

// GenerateContent implements Backend with one non-streaming request.
func (o *OpenAI) GenerateContent(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	req, err := o.request(model, contents, cfg)
	if err != nil {
		return nil, fmt.Errorf("chat completion request for model %q: %w", model, err)
	}
	res, err := o.client.Create(ctx, req)
	if err != nil {
		return nil, o.wrapErr(ctx, model, err)
	}
	out, err := oaiResponse(res)
	if err != nil {
		return nil, o.wrapErr(ctx, model, err)
	}
	return out, nil
}

// GenerateContentStream implements Backend. The request is sent when the
// sequence is first iterated; stopping the iteration closes the response.
func (o *OpenAI) GenerateContentStream(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		req, err := o.request(model, contents, cfg)
		if err != nil {
			yield(nil, fmt.Errorf("chat completion request for model %q: %w", model, err))
			return
		}
		// Without include_usage, servers send no usage at all on streams.
		req.StreamOptions = &chatapi.StreamOptions{IncludeUsage: true}

		var (
			st       oaiStream
			received bool
		)
		for chunk, err := range o.client.Stream(ctx, req) {
			if err != nil {
				// Tool calls still being accumulated are incomplete: drop them.
				if received {
					err = fmt.Errorf("stream broke off: %w", err)
				}
				yield(nil, o.wrapErr(ctx, model, err))
				return
			}
			received = true
			out, err := st.add(chunk)
			for _, r := range out {
				if !yield(r, nil) {
					return
				}
			}
			if err != nil {
				yield(nil, o.wrapErr(ctx, model, err))
				return
			}
		}
		out, err := st.finish()
		for _, r := range out {
			if !yield(r, nil) {
				return
			}
		}
		if err != nil {
			yield(nil, o.wrapErr(ctx, model, err))
		}
	}
}

// CountTokens implements Backend with an estimate, because Chat Completions
// has no token-counting endpoint. It follows gemini-cli's local estimate
// (estimateTokenCountSync in tokenCalculation.ts): a quarter token per ASCII
// character and 1.5 tokens per other UTF-16 unit of text, the JSON of
// function responses and other non-text parts at four characters a token,
// 3,000 tokens per image and 25,800 per PDF, rounded down. The system
// instruction and the JSON of the tools in cfg count too, as they would in
// the request.
func (o *OpenAI) CountTokens(ctx context.Context, model string, contents []*genai.Content, cfg *genai.CountTokensConfig) (*genai.CountTokensResponse, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	var parts []*genai.Part
	if cfg != nil && cfg.SystemInstruction != nil {
		parts = append(parts, cfg.SystemInstruction.Parts...)
	}
	for _, c := range contents {
		if c != nil {
			parts = append(parts, c.Parts...)
		}
	}
	tokens := oaiEstimateParts(parts)
	if cfg != nil && len(cfg.Tools) > 0 {
		tokens += oaiEstimateJSON(cfg.Tools)
	}
	return &genai.CountTokensResponse{TotalTokens: int32(min(math.Floor(tokens), math.MaxInt32))}, nil
}

// wrapErr names the model and server in err, keeping err in the chain so
// callers can still reach *chatapi.Error (StatusCode, Retry-After) and
// context errors.
func (o *OpenAI) wrapErr(ctx context.Context, model string, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(err, cause) {
		// A cancelled request can surface as a transport error that does not
		// say why; put the cancellation cause in the chain too.
		err = fmt.Errorf("%w: %w", cause, err)
	}
	return fmt.Errorf("chat completion with model %q at %s: %w", model, o.baseURL, err)
}

// request translates a genai request into a Chat Completions request. It
// only reads contents and cfg.
func (o *OpenAI) request(model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) (*chatapi.Request, error) {
	p := &chatapi.Request{Model: model}
	if cfg != nil && cfg.SystemInstruction != nil {
		if s := oaiJoinText(cfg.SystemInstruction.Parts, "\n"); s != "" {
			p.Messages = append(p.Messages, chatapi.Message{Role: chatapi.RoleSystem, Content: chatapi.TextContent(s)})
		}
	}
	msgs, err := oaiMessages(contents)
	if err != nil {
		return p, err
	}
	p.Messages = append(p.Messages, msgs...)
	if cfg == nil {
		return p, nil
	}
	var fcc *genai.FunctionCallingConfig
	if cfg.ToolConfig != nil {
		fcc = cfg.ToolConfig.FunctionCallingConfig
	}
	if p.Tools, err = oaiTools(cfg.Tools, fcc); err != nil {
		return p, err
	}
	if len(p.Tools) > 0 && fcc != nil {
		// tool_choice without tools is rejected by OpenAI, so it is only set
		// alongside them.
		p.ToolChoice = oaiToolChoice(fcc)
	}
	if err := o.applyGeneration(p, cfg); err != nil {
		return p, err
	}
	return p, nil
}

func (o *OpenAI) applyGeneration(p *chatapi.Request, cfg *genai.GenerateContentConfig) error {
	if cfg.Temperature != nil {
		p.Temperature = new(oaiFloat(*cfg.Temperature))
	}
	if cfg.TopP != nil {
		p.TopP = new(oaiFloat(*cfg.TopP))
	}
	if cfg.PresencePenalty != nil {
		p.PresencePenalty = new(oaiFloat(*cfg.PresencePenalty))
	}
	if cfg.FrequencyPenalty != nil {
		p.FrequencyPenalty = new(oaiFloat(*cfg.FrequencyPenalty))
	}
	if cfg.MaxOutputTokens > 0 {
		if o.maxCompletionTokens {
			p.MaxCompletionTokens = new(int64(cfg.MaxOutputTokens))
		} else {
			p.MaxTokens = new(int64(cfg.MaxOutputTokens))
		}
	}
	if len(cfg.StopSequences) > 0 {
		p.Stop = slices.Clone(cfg.StopSequences)
	}
	if cfg.Seed != nil {
		p.Seed = new(int64(*cfg.Seed))
	}
	if cfg.ResponseMIMEType == "application/json" {
		var schema map[string]any
		switch {
		case cfg.ResponseJsonSchema != nil:
			var err error
			if schema, err = oaiJSONObject(cfg.ResponseJsonSchema); err != nil {
				return fmt.Errorf("response JSON schema: %w", err)
			}
		case cfg.ResponseSchema != nil:
			schema = oaiSchema(cfg.ResponseSchema)
		}
		if schema != nil {
			p.ResponseFormat = &chatapi.ResponseFormat{Type: "json_schema", JSONSchema: &chatapi.JSONSchema{Name: "response", Schema: schema}}
		} else {
			p.ResponseFormat = &chatapi.ResponseFormat{Type: "json_object"}
		}
	}
	return nil
}

// oaiFloat widens a float32 by its shortest decimal form, so 0.2 is sent as
// 0.2 rather than 0.20000000298023224.
func oaiFloat(f float32) float64 {
	v, err := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
	if err != nil {
		return float64(f)
	}
	return v
}

// oaiJoinText joins the non-thought text parts of parts with sep.
func oaiJoinText(parts []*genai.Part, sep string) string {
	var texts []string
	for _, p := range parts {
		if p != nil && !p.Thought && p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, sep)
}

// oaiCallIDs pairs function responses that lack an ID with the calls they
// answer, the way Gemini pairs them: by name, else in order.
type oaiCallIDs struct {
	pending []oaiPendingCall
}

type oaiPendingCall struct{ id, name string }

func (t *oaiCallIDs) called(id, name string) {
	t.pending = append(t.pending, oaiPendingCall{id: id, name: name})
}

// answered returns the call ID for a response named name with the given id,
// or fallback when nothing pairs with it.
func (t *oaiCallIDs) answered(id, name, fallback string) string {
	match := -1
	for i, c := range t.pending {
		if id != "" && c.id == id {
			match = i
			break
		}
		if id == "" && c.name == name {
			match = i
			break
		}
	}
	if match < 0 && id == "" && len(t.pending) > 0 {
		match = 0
	}
	if match >= 0 {
		if id == "" {
			id = t.pending[match].id
		}
		t.pending = slices.Delete(t.pending, match, match+1)
	}
	if id == "" {
		id = fallback
	}
	return id
}

// oaiMessages converts the conversation into Chat Completions messages.
func oaiMessages(contents []*genai.Content) ([]chatapi.Message, error) {
	var (
		msgs []chatapi.Message
		ids  oaiCallIDs
	)
	for ci, c := range contents {
		if c == nil {
			continue
		}
		if c.Role == genai.RoleModel {
			m, err := oaiAssistantMessage(ci, c, &ids)
			if err != nil {
				return nil, err
			}
			if m != nil {
				msgs = append(msgs, *m)
			}
			continue
		}
		m, err := oaiUserMessages(ci, c, &ids)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m...)
	}
	return msgs, nil
}

// oaiGeneratedCallID is the ID for a call without one. It depends only on the
// call's position, so the same history always produces the same IDs.
func oaiGeneratedCallID(content, part int) string {
	return fmt.Sprintf("call_agentry_%d_%d", content, part)
}

func oaiAssistantMessage(ci int, c *genai.Content, ids *oaiCallIDs) (*chatapi.Message, error) {
	var (
		text  strings.Builder
		calls []chatapi.ToolCall
	)
	for pi, p := range c.Parts {
		switch {
		case p == nil || p.Thought:
			// Thoughts are the model's own scratchpad; servers neither need
			// nor accept them back.
		case p.FunctionCall != nil:
			fc := p.FunctionCall
			id := fc.ID
			if id == "" {
				id = oaiGeneratedCallID(ci, pi)
			}
			ids.called(id, fc.Name)
			args := fc.Args
			if args == nil {
				args = map[string]any{}
			}
			b, err := json.Marshal(args)
			if err != nil {
				return nil, fmt.Errorf("arguments of call to %q: %w", fc.Name, err)
			}
			calls = append(calls, chatapi.ToolCall{
				ID:       id,
				Type:     "function",
				Function: chatapi.FunctionCall{Name: fc.Name, Arguments: string(b)},
			})
		case p.Text != "":
			// A model turn's text parts are pieces of one answer (Gemini
			// splits text around thought signatures), so they join with
			// nothing in between.
			text.WriteString(p.Text)
		}
	}
	if text.Len() == 0 && len(calls) == 0 {
		return nil, nil
	}
	m := &chatapi.Message{Role: chatapi.RoleAssistant, ToolCalls: calls}
	if text.Len() > 0 {
		m.Content = chatapi.TextContent(text.String())
	}
	return m, nil
}

func oaiUserMessages(ci int, c *genai.Content, ids *oaiCallIDs) ([]chatapi.Message, error) {
	var (
		msgs     []chatapi.Message
		parts    []chatapi.ContentPart
		texts    []string
		hasImage bool
	)
	addText := func(s string) {
		texts = append(texts, s)
		parts = append(parts, chatapi.ContentPart{Text: s})
	}
	addMedia := func(mime string, data []byte, uri string) {
		switch {
		case strings.HasPrefix(mime, "image/") && data != nil:
			hasImage = true
			parts = append(parts, chatapi.ContentPart{ImageURL: "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)})
		case strings.HasPrefix(mime, "image/") && (strings.HasPrefix(uri, "https://") || strings.HasPrefix(uri, "http://")):
			hasImage = true
			parts = append(parts, chatapi.ContentPart{ImageURL: uri})
		default:
			if mime == "" {
				mime = "media"
			}
			addText(fmt.Sprintf("[%s content omitted: it cannot be sent to this model]", mime))
		}
	}
	for pi, p := range c.Parts {
		switch {
		case p == nil || p.Thought:
		case p.FunctionResponse != nil:
			fr := p.FunctionResponse
			id := ids.answered(fr.ID, fr.Name, oaiGeneratedCallID(ci, pi))
			resp := fr.Response
			if resp == nil {
				resp = map[string]any{}
			}
			b, err := json.Marshal(resp)
			if err != nil {
				return nil, fmt.Errorf("response of %q: %w", fr.Name, err)
			}
			msgs = append(msgs, chatapi.Message{Role: chatapi.RoleTool, ToolCallID: id, Content: chatapi.TextContent(string(b))})
			// Tool messages carry text only; media a tool returned rides in
			// the user message that follows them.
			for _, fp := range fr.Parts {
				switch {
				case fp == nil:
				case fp.InlineData != nil:
					addMedia(fp.InlineData.MIMEType, fp.InlineData.Data, "")
				case fp.FileData != nil:
					addMedia(fp.FileData.MIMEType, nil, fp.FileData.FileURI)
				}
			}
		case p.Text != "":
			addText(p.Text)
		case p.InlineData != nil:
			addMedia(p.InlineData.MIMEType, p.InlineData.Data, "")
		case p.FileData != nil:
			addMedia(p.FileData.MIMEType, nil, p.FileData.FileURI)
		}
	}
	if len(parts) == 0 {
		return msgs, nil
	}
	user := chatapi.Message{Role: chatapi.RoleUser}
	if hasImage {
		user.Content = &chatapi.Content{Parts: parts}
	} else {
		// A plain string is the form every server accepts.
		user.Content = chatapi.TextContent(strings.Join(texts, "\n"))
	}
	return append(msgs, user), nil
}

// oaiTools converts the function declarations in tools, keeping only the
// allowed ones when fcc names some.
func oaiTools(tools []*genai.Tool, fcc *genai.FunctionCallingConfig) ([]chatapi.Tool, error) {
	var allowed []string
	if fcc != nil && fcc.Mode != genai.FunctionCallingConfigModeNone {
		allowed = fcc.AllowedFunctionNames
	}
	var out []chatapi.Tool
	for _, t := range tools {
		if t == nil {
			continue
		}
		for _, fd := range t.FunctionDeclarations {
			if fd == nil || (len(allowed) > 0 && !slices.Contains(allowed, fd.Name)) {
				continue
			}
			params, err := oaiParameters(fd)
			if err != nil {
				return nil, err
			}
			out = append(out, chatapi.Tool{Type: "function", Function: chatapi.Function{Name: fd.Name, Description: fd.Description, Parameters: params}})
		}
	}
	return out, nil
}

func oaiParameters(fd *genai.FunctionDeclaration) (map[string]any, error) {
	switch {
	case fd.ParametersJsonSchema != nil:
		m, err := oaiJSONObject(fd.ParametersJsonSchema)
		if err != nil {
			return nil, fmt.Errorf("parameters of tool %q: %w", fd.Name, err)
		}
		return m, nil
	case fd.Parameters != nil:
		return oaiSchema(fd.Parameters), nil
	default:
		// Servers expect an object schema even for a tool without arguments.
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
}

// oaiJSONObject returns a JSON schema given in any Go form (a map, a struct,
// raw JSON) as a fresh map, so nothing the caller owns is shared with the
// request.
func oaiJSONObject(v any) (map[string]any, error) {
	var b []byte
	switch v := v.(type) {
	case json.RawMessage:
		b = v
	case []byte:
		b = v
	case string:
		b = []byte(v)
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if m == nil {
		return nil, errors.New("not a JSON object: null")
	}
	return m, nil
}

// oaiSchema converts a genai schema (OpenAPI 3.0 subset, upper-case types)
// into JSON Schema.
func oaiSchema(s *genai.Schema) map[string]any {
	if s == nil {
		return nil
	}
	m := map[string]any{}
	if s.Type != "" && s.Type != genai.TypeUnspecified {
		t := strings.ToLower(string(s.Type))
		if s.Nullable != nil && *s.Nullable {
			m["type"] = []any{t, "null"}
		} else {
			m["type"] = t
		}
	}
	if s.Title != "" {
		m["title"] = s.Title
	}
	if s.Description != "" {
		m["description"] = s.Description
	}
	if s.Format != "" {
		m["format"] = s.Format
	}
	if s.Pattern != "" {
		m["pattern"] = s.Pattern
	}
	if len(s.Enum) > 0 {
		m["enum"] = slices.Clone(s.Enum)
	}
	if s.Default != nil {
		m["default"] = s.Default
	}
	if s.Items != nil {
		m["items"] = oaiSchema(s.Items)
	}
	if len(s.Properties) > 0 {
		props := make(map[string]any, len(s.Properties))
		for k, v := range s.Properties {
			props[k] = oaiSchema(v)
		}
		m["properties"] = props
	}
	if len(s.Required) > 0 {
		m["required"] = slices.Clone(s.Required)
	}
	if len(s.AnyOf) > 0 {
		anyOf := make([]any, 0, len(s.AnyOf))
		for _, v := range s.AnyOf {
			anyOf = append(anyOf, oaiSchema(v))
		}
		m["anyOf"] = anyOf
	}
	for k, v := range map[string]*int64{
		"minItems": s.MinItems, "maxItems": s.MaxItems,
		"minLength": s.MinLength, "maxLength": s.MaxLength,
		"minProperties": s.MinProperties, "maxProperties": s.MaxProperties,
	} {
		if v != nil {
			m[k] = *v
		}
	}
	if s.Minimum != nil {
		m["minimum"] = *s.Minimum
	}
	if s.Maximum != nil {
		m["maximum"] = *s.Maximum
	}
	return m
}

func oaiToolChoice(fcc *genai.FunctionCallingConfig) *chatapi.ToolChoice {
	switch fcc.Mode {
	case genai.FunctionCallingConfigModeNone:
		return &chatapi.ToolChoice{Mode: "none"}
	case genai.FunctionCallingConfigModeAny:
		if len(fcc.AllowedFunctionNames) == 1 {
			return &chatapi.ToolChoice{Function: fcc.AllowedFunctionNames[0]}
		}
		return &chatapi.ToolChoice{Mode: "required"}
	case genai.FunctionCallingConfigModeAuto, genai.FunctionCallingConfigModeValidated:
		return &chatapi.ToolChoice{Mode: "auto"}
	default:
		// Unspecified: leave the server's default, which is auto with tools.
		return nil
	}
}

// oaiFinishReason maps a Chat Completions finish_reason onto genai's.
func oaiFinishReason(r string) genai.FinishReason {
	switch r {
	case "":
		return ""
	case "stop", "tool_calls", "function_call":
		// Gemini reports STOP for a turn that ends in function calls.
		return genai.FinishReasonStop
	case "length":
		return genai.FinishReasonMaxTokens
	case "content_filter":
		return genai.FinishReasonSafety
	default:
		return genai.FinishReasonOther
	}
}

// oaiUsage maps usage onto genai's. OpenAI counts reasoning tokens inside
// completion_tokens while Gemini counts thoughts apart from candidates, so
// they are moved across to keep Gemini's sum prompt+candidates+thoughts.
func oaiUsage(u *chatapi.Usage) *genai.GenerateContentResponseUsageMetadata {
	thoughts := u.CompletionTokensDetails.ReasoningTokens
	return &genai.GenerateContentResponseUsageMetadata{
		PromptTokenCount:        oaiInt32(u.PromptTokens),
		CandidatesTokenCount:    oaiInt32(max(u.CompletionTokens-thoughts, 0)),
		TotalTokenCount:         oaiInt32(u.TotalTokens),
		CachedContentTokenCount: oaiInt32(u.PromptTokensDetails.CachedTokens),
		ThoughtsTokenCount:      oaiInt32(thoughts),
	}
}

func oaiInt32(n chatapi.Int) int32 {
	return int32(min(max(n, 0), math.MaxInt32))
}

// oaiCallArgs decodes a tool call's accumulated argument text.
func oaiCallArgs(name, text string) (map[string]any, error) {
	if strings.TrimSpace(text) == "" {
		// Some servers send no arguments at all for a parameterless tool.
		return map[string]any{}, nil
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(text), &args); err != nil {
		return nil, fmt.Errorf("%w: arguments of %q are not a JSON object (%w): %s", ErrMalformedToolCall, name, err, oaiClip(text, 1000))
	}
	if args == nil {
		args = map[string]any{}
	}
	return args, nil
}

func oaiClip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary.
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

func oaiCandidate(version, id string, parts ...*genai.Part) *genai.GenerateContentResponse {
	return &genai.GenerateContentResponse{
		Candidates:   []*genai.Candidate{{Content: &genai.Content{Role: genai.RoleModel, Parts: parts}}},
		ModelVersion: version,
		ResponseID:   id,
	}
}

// oaiResponse converts a non-streaming completion.
func oaiResponse(res *chatapi.Completion) (*genai.GenerateContentResponse, error) {
	out := oaiCandidate(string(res.Model), string(res.ID))
	if res.Usage != nil {
		out.UsageMetadata = oaiUsage(res.Usage)
	}
	if len(res.Choices) == 0 {
		return out, nil
	}
	ch := &res.Choices[0]
	msg := &ch.Message
	var parts []*genai.Part
	if r := msg.ReasoningText(); r != "" {
		parts = append(parts, &genai.Part{Text: r, Thought: true})
	}
	if msg.Content != "" {
		parts = append(parts, &genai.Part{Text: string(msg.Content)})
	}
	if msg.Refusal != "" {
		parts = append(parts, &genai.Part{Text: string(msg.Refusal)})
	}
	for _, tc := range msg.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue // custom tools are never declared by agentry
		}
		name := string(tc.Function.Name)
		if name == "" {
			return nil, fmt.Errorf("%w: tool call %q has no name", ErrMalformedToolCall, tc.ID)
		}
		args, err := oaiCallArgs(name, string(tc.Function.Arguments))
		if err != nil {
			return nil, err
		}
		parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: string(tc.ID), Name: name, Args: args}})
	}
	// Older OpenAI-compatible servers still answer with function_call.
	if fc := msg.FunctionCall; fc != nil && fc.Name != "" {
		args, err := oaiCallArgs(string(fc.Name), string(fc.Arguments))
		if err != nil {
			return nil, err
		}
		parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{Name: string(fc.Name), Args: args}})
	}
	out.Candidates[0].Content.Parts = parts
	out.Candidates[0].FinishReason = oaiFinishReason(string(ch.FinishReason))
	return out, nil
}

// oaiStream turns streamed chunks into genai chunks. Text and reasoning pass
// straight through; tool calls are accumulated until their choice finishes,
// because agentry's dispatcher expects each call whole and once; usage is
// kept for the last chunk, since some servers repeat it on every chunk.
type oaiStream struct {
	version string
	id      string
	calls   []*oaiToolCall
	usage   *genai.GenerateContentResponseUsageMetadata
}

type oaiToolCall struct {
	index    int64
	id, name string
	args     strings.Builder
}

// legacyCallIndex keys the deprecated single function_call delta.
const legacyCallIndex = -1

func (s *oaiStream) add(c *chatapi.Chunk) ([]*genai.GenerateContentResponse, error) {
	if c.Model != "" {
		s.version = string(c.Model)
	}
	if c.ID != "" {
		s.id = string(c.ID)
	}
	if c.Usage != nil {
		s.usage = oaiUsage(c.Usage)
	}
	var out []*genai.GenerateContentResponse
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // only one choice is requested
		}
		d := &ch.Delta
		if r := d.ReasoningText(); r != "" {
			out = append(out, oaiCandidate(s.version, s.id, &genai.Part{Text: r, Thought: true}))
		}
		if d.Content != "" {
			out = append(out, oaiCandidate(s.version, s.id, &genai.Part{Text: string(d.Content)}))
		}
		if d.Refusal != "" {
			out = append(out, oaiCandidate(s.version, s.id, &genai.Part{Text: string(d.Refusal)}))
		}
		for _, tc := range d.ToolCalls {
			s.addCall(int64(tc.Index), string(tc.ID), string(tc.Function.Name), string(tc.Function.Arguments))
		}
		// Older OpenAI-compatible servers still stream function_call.
		if fc := d.FunctionCall; fc != nil && (fc.Name != "" || fc.Arguments != "") {
			s.addCall(legacyCallIndex, "", string(fc.Name), string(fc.Arguments))
		}
		if ch.FinishReason != "" {
			parts, err := s.flushCalls()
			if err != nil {
				return out, err
			}
			r := oaiCandidate(s.version, s.id, parts...)
			r.Candidates[0].FinishReason = oaiFinishReason(string(ch.FinishReason))
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *oaiStream) addCall(index int64, id, name, args string) {
	var tc *oaiToolCall
	for i := len(s.calls) - 1; i >= 0; i-- {
		if s.calls[i].index == index {
			tc = s.calls[i]
			break
		}
	}
	// A new ID at a known index is a new call: some servers number every
	// call 0 and send each one whole.
	if tc == nil || (id != "" && tc.id != "" && id != tc.id) {
		tc = &oaiToolCall{index: index}
		s.calls = append(s.calls, tc)
	}
	if id != "" {
		tc.id = id
	}
	// The name comes whole in one delta; some servers repeat it in later
	// ones, so it is not concatenated.
	if name != "" && tc.name == "" {
		tc.name = name
	}
	tc.args.WriteString(args)
}

func (s *oaiStream) flushCalls() ([]*genai.Part, error) {
	calls := s.calls
	s.calls = nil
	var parts []*genai.Part
	for _, tc := range calls {
		if tc.name == "" {
			return nil, fmt.Errorf("%w: tool call %q has no name; arguments: %s", ErrMalformedToolCall, tc.id, oaiClip(tc.args.String(), 1000))
		}
		args, err := oaiCallArgs(tc.name, tc.args.String())
		if err != nil {
			return nil, err
		}
		parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: tc.id, Name: tc.name, Args: args}})
	}
	return parts, nil
}

// finish returns the chunks due when the stream ends: calls whose choice
// never finished, then the usage.
func (s *oaiStream) finish() ([]*genai.GenerateContentResponse, error) {
	var out []*genai.GenerateContentResponse
	if len(s.calls) > 0 {
		parts, err := s.flushCalls()
		if err != nil {
			return nil, err
		}
		out = append(out, oaiCandidate(s.version, s.id, parts...))
	}
	if s.usage != nil {
		r := oaiCandidate(s.version, s.id)
		r.UsageMetadata = s.usage
		out = append(out, r)
	}
	return out, nil
}

// Token estimate constants from gemini-cli's tokenCalculation.ts.
const (
	oaiCharsPerToken         = 4
	oaiNonASCIITokensPerChar = 1.5
	oaiImageTokens           = 3000
	oaiPDFTokens             = 25800
	// Past this many characters gemini-cli stops looking at each one.
	oaiMaxCharsForHeuristic = 100_000
)

func oaiEstimateParts(parts []*genai.Part) float64 {
	var tokens float64
	for _, p := range parts {
		switch {
		case p == nil:
		case p.Text != "":
			tokens += oaiEstimateText(p.Text)
		case p.FunctionResponse != nil:
			fr := p.FunctionResponse
			tokens += float64(oaiUTF16Len(fr.Name)) / oaiCharsPerToken
			if fr.Response != nil {
				tokens += oaiEstimateJSON(fr.Response)
			}
			for _, fp := range fr.Parts {
				switch {
				case fp == nil:
				case fp.InlineData != nil && oaiMediaTokens(fp.InlineData.MIMEType) > 0:
					tokens += oaiMediaTokens(fp.InlineData.MIMEType)
				case fp.FileData != nil && oaiMediaTokens(fp.FileData.MIMEType) > 0:
					tokens += oaiMediaTokens(fp.FileData.MIMEType)
				default:
					tokens += oaiEstimateJSON(fp)
				}
			}
		case p.InlineData != nil && oaiMediaTokens(p.InlineData.MIMEType) > 0:
			tokens += oaiMediaTokens(p.InlineData.MIMEType)
		case p.FileData != nil && oaiMediaTokens(p.FileData.MIMEType) > 0:
			tokens += oaiMediaTokens(p.FileData.MIMEType)
		case isEmptyPart(p):
			// An empty text part, which gemini-cli counts as no text.
		default:
			tokens += oaiEstimateJSON(p)
		}
	}
	return tokens
}

// oaiEstimateText counts like gemini-cli, which walks UTF-16 units: a quarter
// token per ASCII unit, 1.5 per other unit (so 3 for a character outside the
// Basic Multilingual Plane, which takes two units).
func oaiEstimateText(s string) float64 {
	if n := oaiUTF16Len(s); n > oaiMaxCharsForHeuristic {
		return float64(n) / oaiCharsPerToken
	}
	var tokens float64
	for _, r := range s {
		if r <= 127 {
			tokens += 1.0 / oaiCharsPerToken
		} else {
			tokens += oaiNonASCIITokensPerChar * float64(max(utf16.RuneLen(r), 1))
		}
	}
	return tokens
}

func oaiEstimateJSON(v any) float64 {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return float64(oaiUTF16Len(string(b))) / oaiCharsPerToken
}

func oaiMediaTokens(mime string) float64 {
	switch {
	case strings.HasPrefix(mime, "image/"):
		return oaiImageTokens
	case strings.HasPrefix(mime, "application/pdf"):
		return oaiPDFTokens
	}
	return 0
}

func oaiUTF16Len(s string) int {
	n := 0
	for _, r := range s {
		n += max(utf16.RuneLen(r), 1)
	}
	return n
}
