package fakegemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genai"
)

// hangGuard bounds how long a test waits for something that should happen
// promptly. It only turns a deadlock into a failure; nothing asserts speed.
const hangGuard = 30 * time.Second

const model = "gemini-2.5-flash"

// collect drains a stream, returning its chunks and the first error.
func collect(seq iter.Seq2[*genai.GenerateContentResponse, error]) ([]*genai.GenerateContentResponse, error) {
	var chunks []*genai.GenerateContentResponse
	for c, err := range seq {
		if err != nil {
			return chunks, err
		}
		chunks = append(chunks, c)
	}
	return chunks, nil
}

func texts(chunks []*genai.GenerateContentResponse) []string {
	var out []string
	for _, c := range chunks {
		out = append(out, c.Text())
	}
	return out
}

// asAPIError extracts a genai.APIError the way agentry's classifiers do: the
// client returns it as a value, not a pointer.
func asAPIError(t *testing.T, err error) genai.APIError {
	t.Helper()
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %v (%T) is not a genai.APIError", err, err)
	}
	return apiErr
}

func TestTextStreamsChunksInOrder(t *testing.T) {
	ctx := t.Context()
	s := New(t)
	s.Enqueue(Text("The capital ", "of France ", "is Paris."))

	chunks, err := collect(s.Client(ctx).Models.GenerateContentStream(ctx, model, genai.Text("capital of France?"), nil))
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	if got, want := texts(chunks), []string{"The capital ", "of France ", "is Paris."}; !reflect.DeepEqual(got, want) {
		t.Fatalf("chunks = %q, want %q", got, want)
	}
	for i, c := range chunks {
		last := i == len(chunks)-1
		if c.ModelVersion != model || c.ResponseID == "" {
			t.Errorf("chunk %d: modelVersion %q, responseId %q", i, c.ModelVersion, c.ResponseID)
		}
		if fr := c.Candidates[0].FinishReason; (fr == genai.FinishReasonStop) != last {
			t.Errorf("chunk %d: finishReason %q", i, fr)
		}
		if (c.UsageMetadata != nil) != last {
			t.Errorf("chunk %d: usageMetadata %+v", i, c.UsageMetadata)
		}
		if c.Candidates[0].Content.Role != genai.RoleModel {
			t.Errorf("chunk %d: role %q", i, c.Candidates[0].Content.Role)
		}
	}
	u := chunks[len(chunks)-1].UsageMetadata
	if u.PromptTokenCount != 5 || u.CandidatesTokenCount != 8 || u.TotalTokenCount != 13 {
		t.Errorf("usage = %+v, want prompt 5 (18 chars), candidates 8 (31 chars)", u)
	}

	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != MethodStream || r.Model != model || r.APIVersion != "v1beta" || r.HTTPMethod != http.MethodPost {
		t.Errorf("request = %s %s %s/%s", r.HTTPMethod, r.APIVersion, r.Model, r.Method)
	}
	if r.Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" || r.RawQuery != "alt=sse" {
		t.Errorf("url = %s?%s", r.Path, r.RawQuery)
	}
	if r.APIKey != DefaultAPIKey || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("api key %q, content type %q", r.APIKey, r.Header.Get("Content-Type"))
	}
	if !strings.HasPrefix(r.Header.Get("X-Goog-Api-Client"), "google-genai-sdk/") {
		t.Errorf("x-goog-api-client = %q", r.Header.Get("X-Goog-Api-Client"))
	}
}

func TestRequestBodyIsRecorded(t *testing.T) {
	ctx := t.Context()
	s := New(t)
	s.Enqueue(Text("done"))
	// With a deadline, the client also tells the server its timeout.
	ctx, cancel := context.WithTimeout(ctx, time.Hour)
	defer cancel()

	contents := []*genai.Content{
		genai.NewContentFromText("list files", genai.RoleUser),
		{Role: genai.RoleModel, Parts: []*genai.Part{{
			FunctionCall:     &genai.FunctionCall{ID: "call-1", Name: "ls", Args: map[string]any{"dir": "."}},
			ThoughtSignature: []byte("sig-1"),
		}}},
		{Role: genai.RoleUser, Parts: []*genai.Part{{
			FunctionResponse: &genai.FunctionResponse{ID: "call-1", Name: "ls", Response: map[string]any{"output": "a.go"}},
		}}},
	}
	cfg := &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText("You are agentry.", genai.RoleUser),
		Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{
			{Name: "ls", Description: "List a directory.", ParametersJsonSchema: map[string]any{
				"type": "object", "properties": map[string]any{"dir": map[string]any{"type": "string"}},
			}},
			{Name: "read", Parameters: &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{
				"path": {Type: genai.TypeString},
			}}},
		}}},
		ToolConfig:     &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAuto}},
		Temperature:    genai.Ptr[float32](0.25),
		ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: true, ThinkingBudget: genai.Ptr[int32](1024)},
	}
	if _, err := collect(s.Client(ctx).Models.GenerateContentStream(ctx, model, contents, cfg)); err != nil {
		t.Fatalf("stream: %v", err)
	}

	b := s.Requests()[0].Body
	if b == nil {
		t.Fatal("no body recorded")
	}
	if !reflect.DeepEqual(b.Contents, contents) {
		got, _ := json.Marshal(b.Contents)
		want, _ := json.Marshal(contents)
		t.Errorf("contents = %s\nwant %s", got, want)
	}
	if !reflect.DeepEqual(b.SystemInstruction, cfg.SystemInstruction) {
		t.Errorf("systemInstruction = %+v", b.SystemInstruction)
	}
	if len(b.Tools) != 1 || len(b.Tools[0].FunctionDeclarations) != 2 {
		t.Fatalf("tools = %+v", b.Tools)
	}
	ls, read := b.Tools[0].FunctionDeclarations[0], b.Tools[0].FunctionDeclarations[1]
	if ls.Name != "ls" || ls.Description != "List a directory." || !reflect.DeepEqual(ls.ParametersJsonSchema, cfg.Tools[0].FunctionDeclarations[0].ParametersJsonSchema) {
		t.Errorf("ls declaration = %+v", ls)
	}
	if read.Name != "read" || read.Parameters == nil || read.Parameters.Type != genai.TypeObject || read.Parameters.Properties["path"].Type != genai.TypeString {
		t.Errorf("read declaration = %+v", read)
	}
	if b.ToolConfig == nil || b.ToolConfig.FunctionCallingConfig.Mode != genai.FunctionCallingConfigModeAuto {
		t.Errorf("toolConfig = %+v", b.ToolConfig)
	}
	gc := b.GenerationConfig
	if gc == nil || gc.Temperature == nil || *gc.Temperature != 0.25 || gc.ThinkingConfig == nil || !gc.ThinkingConfig.IncludeThoughts || *gc.ThinkingConfig.ThinkingBudget != 1024 {
		t.Errorf("generationConfig = %+v", gc)
	}
	if got := s.Requests()[0].Header.Get("X-Server-Timeout"); got != "3600" {
		t.Errorf("x-server-timeout = %q, want 3600", got)
	}
	if !strings.Contains(string(s.Requests()[0].Raw), `"systemInstruction"`) {
		t.Errorf("raw body lacks systemInstruction: %s", s.Requests()[0].Raw)
	}
}

func TestFunctionCalls(t *testing.T) {
	ctx := t.Context()
	s := New(t)
	s.Enqueue(
		Call("ls", map[string]any{"dir": "src", "depth": 2, "hidden": true}),
		Parts(&genai.Part{
			FunctionCall:     &genai.FunctionCall{ID: "call-7", Name: "read", Args: map[string]any{"path": "a.go"}},
			ThoughtSignature: []byte{0xde, 0xad, 0xbe, 0xef},
		}),
		Calls(
			&genai.FunctionCall{ID: "a", Name: "read", Args: map[string]any{"path": "a.go"}},
			&genai.FunctionCall{ID: "b", Name: "read", Args: map[string]any{"path": "b.go"}},
		),
	)
	c := s.Client(ctx)

	chunks, err := collect(c.Models.GenerateContentStream(ctx, model, genai.Text("go"), nil))
	if err != nil || len(chunks) != 1 {
		t.Fatalf("call stream: %d chunks, %v", len(chunks), err)
	}
	calls := chunks[0].FunctionCalls()
	// JSON numbers come back as float64, as they do from the real API.
	if len(calls) != 1 || calls[0].Name != "ls" || !reflect.DeepEqual(calls[0].Args, map[string]any{"dir": "src", "depth": 2.0, "hidden": true}) {
		t.Errorf("calls = %+v", calls)
	}
	if chunks[0].Candidates[0].FinishReason != genai.FinishReasonStop {
		t.Errorf("finishReason = %q", chunks[0].Candidates[0].FinishReason)
	}

	chunks, err = collect(c.Models.GenerateContentStream(ctx, model, genai.Text("go"), nil))
	if err != nil || len(chunks) != 1 {
		t.Fatalf("signed call stream: %d chunks, %v", len(chunks), err)
	}
	part := chunks[0].Candidates[0].Content.Parts[0]
	if part.FunctionCall.ID != "call-7" || part.FunctionCall.Name != "read" || string(part.ThoughtSignature) != "\xde\xad\xbe\xef" {
		t.Errorf("part = %+v, call %+v", part, part.FunctionCall)
	}

	resp, err := c.Models.GenerateContent(ctx, model, genai.Text("go"), nil)
	if err != nil {
		t.Fatalf("parallel calls: %v", err)
	}
	calls = resp.FunctionCalls()
	if len(calls) != 2 || calls[0].ID != "a" || calls[1].ID != "b" || calls[1].Args["path"] != "b.go" {
		t.Errorf("parallel calls = %+v", calls)
	}
}

func TestStreamSendsEachPartAsAChunk(t *testing.T) {
	ctx := t.Context()
	s := New(t)
	s.Enqueue(Stream(
		&genai.Part{Text: "Planning.", Thought: true},
		genai.NewPartFromText("Reading it."),
		&genai.Part{FunctionCall: &genai.FunctionCall{Name: "read", Args: map[string]any{"path": "x"}}, ThoughtSignature: []byte("s")},
	))
	chunks, err := collect(s.Client(ctx).Models.GenerateContentStream(ctx, model, genai.Text("go"), nil))
	if err != nil || len(chunks) != 3 {
		t.Fatalf("%d chunks, %v", len(chunks), err)
	}
	if p := chunks[0].Candidates[0].Content.Parts[0]; !p.Thought || p.Text != "Planning." {
		t.Errorf("chunk 0 = %+v", p)
	}
	if chunks[1].Text() != "Reading it." || chunks[2].FunctionCalls()[0].Name != "read" {
		t.Errorf("chunks 1-2 = %q, %+v", chunks[1].Text(), chunks[2].FunctionCalls())
	}
	if chunks[2].Candidates[0].FinishReason != genai.FinishReasonStop || chunks[1].Candidates[0].FinishReason != "" {
		t.Errorf("finish reasons = %q, %q", chunks[1].Candidates[0].FinishReason, chunks[2].Candidates[0].FinishReason)
	}
}

func TestUnaryMergesChunks(t *testing.T) {
	ctx := t.Context()
	s := New(t)
	s.Enqueue(
		Stream(&genai.Part{Text: "Hmm, ", Thought: true}, &genai.Part{Text: "thinking.", Thought: true}, genai.NewPartFromText("Par"), genai.NewPartFromText("is")),
		Chunks(
			&genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: genai.NewContentFromText("cut ", genai.RoleModel)}}},
			&genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: genai.NewContentFromText("short", genai.RoleModel), FinishReason: genai.FinishReasonMaxTokens}}},
		),
	)
	c := s.Client(ctx)

	resp, err := c.Models.GenerateContent(ctx, model, genai.Text("capital?"), nil)
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	parts := resp.Candidates[0].Content.Parts
	if len(parts) != 2 || parts[0].Text != "Hmm, thinking." || !parts[0].Thought || parts[1].Text != "Paris" || parts[1].Thought {
		t.Errorf("parts = %+v", parts)
	}
	if resp.Candidates[0].FinishReason != genai.FinishReasonStop || resp.UsageMetadata == nil || resp.ModelVersion != model {
		t.Errorf("finishReason %q, usage %+v, modelVersion %q", resp.Candidates[0].FinishReason, resp.UsageMetadata, resp.ModelVersion)
	}

	resp, err = c.Models.GenerateContent(ctx, model, genai.Text("again"), nil)
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	if resp.Text() != "cut short" || resp.Candidates[0].FinishReason != genai.FinishReasonMaxTokens || resp.UsageMetadata != nil {
		t.Errorf("verbatim chunks merged to %q, %q, usage %+v", resp.Text(), resp.Candidates[0].FinishReason, resp.UsageMetadata)
	}
	if got := s.Requests()[1]; got.Method != MethodGenerate || got.RawQuery != "" {
		t.Errorf("unary request = %s?%s", got.Method, got.RawQuery)
	}
}

func TestChunksAreSentVerbatim(t *testing.T) {
	ctx := t.Context()
	s := New(t)
	want := &genai.GenerateContentResponse{
		Candidates: []*genai.Candidate{{
			Content:      genai.NewContentFromText("", genai.RoleModel),
			FinishReason: genai.FinishReasonMalformedFunctionCall,
		}},
		ModelVersion: "gemini-2.5-pro-preview",
		ResponseID:   "resp-1",
	}
	st := Chunks(want)
	want.ResponseID = "changed after Chunks" // Chunks snapshots its input.
	s.Enqueue(st)
	chunks, err := collect(s.Client(ctx).Models.GenerateContentStream(ctx, model, genai.Text("go"), nil))
	if err != nil || len(chunks) != 1 {
		t.Fatalf("%d chunks, %v", len(chunks), err)
	}
	got := chunks[0]
	if got.ResponseID != "resp-1" || got.ModelVersion != "gemini-2.5-pro-preview" || got.Candidates[0].FinishReason != genai.FinishReasonMalformedFunctionCall || got.UsageMetadata != nil {
		t.Errorf("chunk = %+v", got)
	}
}

func TestErrorsSurfaceAsAPIError(t *testing.T) {
	quota := func(id, delay string) []map[string]any {
		return []map[string]any{
			{"@type": TypeHelp, "links": []any{map[string]any{"description": "Learn more about Gemini API quotas", "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}}},
			{"@type": TypeQuotaFailure, "violations": []any{map[string]any{
				"quotaMetric":     "generativelanguage.googleapis.com/generate_content_free_tier_requests",
				"quotaId":         id,
				"quotaDimensions": map[string]any{"location": "global", "model": model},
				"quotaValue":      map[string]string{"GenerateRequestsPerMinutePerProjectPerModel-FreeTier": "10", "GenerateRequestsPerDayPerProjectPerModel-FreeTier": "250"}[id],
			}}},
			{"@type": TypeRetryInfo, "retryDelay": delay},
		}
	}
	tests := []struct {
		name        string
		step        Step
		code        int
		status      string
		message     string // substring
		details     []map[string]any
		wantDetails bool
	}{
		{
			name: "per-minute quota", step: RateLimitPerMinute(15 * time.Second),
			code: 429, status: "RESOURCE_EXHAUSTED", message: "Please retry in 15s.",
			details: quota("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "15s"), wantDetails: true,
		},
		{
			name: "per-day quota", step: RateLimitPerDay(),
			code: 429, status: "RESOURCE_EXHAUSTED", message: "limit: 250, model: " + model,
			details: quota("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "42s"), wantDetails: true,
		},
		{name: "unavailable", step: Unavailable(), code: 503, status: "UNAVAILABLE", message: "The model is overloaded."},
		{name: "not found", step: NotFound(), code: 404, status: "NOT_FOUND", message: "models/" + model + " is not found"},
		{
			name: "custom", step: APIError(400, "INVALID_ARGUMENT", "bad schema", ErrorInfo("BAD", "example.com", map[string]string{"k": "v"})),
			code: 400, status: "INVALID_ARGUMENT", message: "bad schema",
			details:     []map[string]any{{"@type": TypeErrorInfo, "reason": "BAD", "domain": "example.com", "metadata": map[string]any{"k": "v"}}},
			wantDetails: true,
		},
		{
			// The body's code, not the HTTP status, becomes APIError.Code.
			name: "raw body", step: Error(503, ErrorBody(500, "INTERNAL", "raw")),
			code: 500, status: "INTERNAL", message: "raw",
		},
	}
	for _, tt := range tests {
		for _, method := range []string{MethodStream, MethodGenerate} {
			t.Run(tt.name+"/"+method, func(t *testing.T) {
				ctx := t.Context()
				s := New(t)
				s.Enqueue(tt.step)
				c := s.Client(ctx)
				var err error
				if method == MethodStream {
					var chunks []*genai.GenerateContentResponse
					chunks, err = collect(c.Models.GenerateContentStream(ctx, model, genai.Text("hi"), nil))
					if len(chunks) != 0 {
						t.Errorf("got %d chunks before the error", len(chunks))
					}
				} else {
					_, err = c.Models.GenerateContent(ctx, model, genai.Text("hi"), nil)
				}
				apiErr := asAPIError(t, err)
				if apiErr.Code != tt.code || apiErr.Status != tt.status || !strings.Contains(apiErr.Message, tt.message) {
					t.Errorf("APIError = %d %s %q", apiErr.Code, apiErr.Status, apiErr.Message)
				}
				if tt.wantDetails && !reflect.DeepEqual(normalize(t, apiErr.Details), normalize(t, tt.details)) {
					t.Errorf("details = %v\nwant %v", apiErr.Details, tt.details)
				}
				if !tt.wantDetails && len(apiErr.Details) != 0 {
					t.Errorf("details = %v, want none", apiErr.Details)
				}
			})
		}
	}
}

// normalize round-trips v through JSON so that expectations written with
// typed maps compare equal to what the client decoded.
func normalize(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCodeAssistArrayWrappedError(t *testing.T) {
	ctx := t.Context()
	s := New(t)
	s.Enqueue(
		CodeAssistError(429, "RESOURCE_EXHAUSTED", "Quota exceeded.", ErrorInfo("RATE_LIMIT_EXCEEDED", "cloudcode-pa.googleapis.com", nil), RetryInfo(1500*time.Millisecond)),
		CodeAssistError(503, "UNAVAILABLE", "overloaded"),
	)
	c := s.Client(ctx)

	_, err := collect(c.Models.GenerateContentStream(ctx, model, genai.Text("hi"), nil))
	apiErr := asAPIError(t, err)
	// The client cannot decode the array, so it falls back to the HTTP
	// status line and the raw body; classifiers must parse Message.
	if apiErr.Code != 429 || apiErr.Status != "429 Too Many Requests" || len(apiErr.Details) != 0 {
		t.Errorf("APIError = %d %q details %v", apiErr.Code, apiErr.Status, apiErr.Details)
	}
	var wrapped []struct {
		Error genai.APIError `json:"error"`
	}
	if err := json.Unmarshal([]byte(apiErr.Message), &wrapped); err != nil || len(wrapped) != 1 {
		t.Fatalf("Message %q is not the array-wrapped body: %v", apiErr.Message, err)
	}
	inner := wrapped[0].Error
	if inner.Code != 429 || inner.Status != "RESOURCE_EXHAUSTED" || len(inner.Details) != 2 || inner.Details[0]["reason"] != "RATE_LIMIT_EXCEEDED" || inner.Details[1]["retryDelay"] != "1.5s" {
		t.Errorf("inner error = %+v", inner)
	}

	_, err = c.Models.GenerateContent(ctx, model, genai.Text("hi"), nil)
	if apiErr := asAPIError(t, err); apiErr.Code != 503 || apiErr.Status != "503 Service Unavailable" {
		t.Errorf("unary APIError = %d %q", apiErr.Code, apiErr.Status)
	}
}

func TestMidStreamError(t *testing.T) {
	ctx := t.Context()
	s := New(t)
	body := ErrorBody(500, "INTERNAL", "An internal error has occurred.")
	s.Enqueue(MidStreamError([]string{"partial ", "answer"}, body), MidStreamError([]string{"x"}, body))
	c := s.Client(ctx)

	chunks, err := collect(c.Models.GenerateContentStream(ctx, model, genai.Text("hi"), nil))
	if got := texts(chunks); !reflect.DeepEqual(got, []string{"partial ", "answer"}) {
		t.Errorf("chunks before the error = %q", got)
	}
	if apiErr := asAPIError(t, err); apiErr.Code != 500 || apiErr.Status != "INTERNAL" {
		t.Errorf("APIError = %+v", apiErr)
	}
	for _, ch := range chunks {
		if ch.Candidates[0].FinishReason != "" {
			t.Errorf("chunk %q has finishReason %q", ch.Text(), ch.Candidates[0].FinishReason)
		}
	}

	_, err = c.Models.GenerateContent(ctx, model, genai.Text("hi"), nil)
	if apiErr := asAPIError(t, err); apiErr.Code != 500 || apiErr.Status != "INTERNAL" {
		t.Errorf("unary APIError = %+v", apiErr)
	}
}

func TestMidStreamCut(t *testing.T) {
	ctx := t.Context()
	s := New(t)
	s.Enqueue(MidStreamCut("partial ", "answer"), MidStreamCut(), MidStreamCut("x"))
	c := s.Client(ctx)

	chunks, err := collect(c.Models.GenerateContentStream(ctx, model, genai.Text("hi"), nil))
	if got := texts(chunks); !reflect.DeepEqual(got, []string{"partial ", "answer"}) {
		t.Errorf("chunks before the cut = %q", got)
	}
	// The client returns the scanner's error unwrapped; it is not an APIError.
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("error = %v (%T), want io.ErrUnexpectedEOF", err, err)
	}

	chunks, err = collect(c.Models.GenerateContentStream(ctx, model, genai.Text("hi"), nil))
	if len(chunks) != 0 || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut before any event: %d chunks, error %v", len(chunks), err)
	}

	_, err = c.Models.GenerateContent(ctx, model, genai.Text("hi"), nil)
	var apiErr genai.APIError
	if err == nil || errors.As(err, &apiErr) {
		t.Errorf("unary cut: error %v, want a transport error", err)
	}
}

func TestUnfinishedEmptyAndMalformedStreams(t *testing.T) {
	ctx := t.Context()
	s := New(t)
	s.Enqueue(
		Unfinished("no ", "finish"),
		Empty(),
		Step{},
		Events(`{"candidates":[{"content":{"parts":[{"text":"ok"}],"role":"model"}}]}`, `{not json`),
		Events(`[{"error":{"code":500,"message":"boom","status":"INTERNAL"}}]`),
	)
	c := s.Client(ctx)

	chunks, err := collect(c.Models.GenerateContentStream(ctx, model, genai.Text("hi"), nil))
	if err != nil || !reflect.DeepEqual(texts(chunks), []string{"no ", "finish"}) || chunks[1].Candidates[0].FinishReason != "" {
		t.Errorf("unfinished: %q, %v", texts(chunks), err)
	}
	for _, name := range []string{"Empty", "zero Step"} {
		chunks, err = collect(c.Models.GenerateContentStream(ctx, model, genai.Text("hi"), nil))
		if err != nil || len(chunks) != 0 {
			t.Errorf("%s: %d chunks, %v", name, len(chunks), err)
		}
	}
	var apiErr genai.APIError
	chunks, err = collect(c.Models.GenerateContentStream(ctx, model, genai.Text("hi"), nil))
	if len(chunks) != 1 || err == nil || errors.As(err, &apiErr) {
		t.Errorf("malformed event: %d chunks, %v", len(chunks), err)
	}
	// An array-wrapped error inside the stream is not decoded either.
	_, err = collect(c.Models.GenerateContentStream(ctx, model, genai.Text("hi"), nil))
	if err == nil || errors.As(err, &apiErr) || !strings.Contains(err.Error(), "unmarshal") {
		t.Errorf("array-wrapped stream error: %v", err)
	}
}

// newServed returns an option and a channel that receives once per finished
// handler.
func newServed() (Option, <-chan struct{}) {
	ch := make(chan struct{}, 16)
	return withServed(func() { ch <- struct{}{} }), ch
}

func receive(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(hangGuard):
		t.Fatalf("%s did not happen", what)
	}
}

func TestHangReturnsWhenClientCancels(t *testing.T) {
	for _, tt := range []struct {
		name   string
		step   Step
		stream bool
		chunks int
	}{
		{name: "stream after a chunk", step: Hang("thinking…"), stream: true, chunks: 1},
		{name: "stream before any chunk", step: Hang(), stream: true},
		{name: "unary", step: Hang("ignored")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opt, served := newServed()
			s := New(t, opt)
			s.Enqueue(tt.step)
			c := s.Client(t.Context())
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()

			type result struct {
				chunks []*genai.GenerateContentResponse
				err    error
			}
			done := make(chan result, 1)
			go func() {
				if tt.stream {
					chunks, err := collect(c.Models.GenerateContentStream(ctx, model, genai.Text("hi"), nil))
					done <- result{chunks, err}
					return
				}
				_, err := c.Models.GenerateContent(ctx, model, genai.Text("hi"), nil)
				done <- result{nil, err}
			}()
			if _, err := s.WaitRequests(ctx, 1); err != nil {
				t.Fatal(err)
			}
			cancel()

			var r result
			select {
			case r = <-done:
			case <-time.After(hangGuard):
				t.Fatal("the client did not return after cancel")
			}
			if !errors.Is(r.err, context.Canceled) {
				t.Errorf("error = %v (%T), want context.Canceled", r.err, r.err)
			}
			if len(r.chunks) > tt.chunks {
				t.Errorf("got %d chunks, want at most %d", len(r.chunks), tt.chunks)
			}
			receive(t, served, "handler return")
		})
	}
}

func TestHangDeliversItsChunksFirst(t *testing.T) {
	s := New(t)
	s.Enqueue(Hang("one", "two"))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var got []string
	var err error
	for c, e := range s.Client(ctx).Models.GenerateContentStream(ctx, model, genai.Text("hi"), nil) {
		if e != nil {
			err = e
			break
		}
		got = append(got, c.Text())
		if len(got) == 2 {
			// Both chunks arrived while the server still holds the stream
			// open: only now does the test abort.
			cancel()
		}
	}
	if !reflect.DeepEqual(got, []string{"one", "two"}) || !errors.Is(err, context.Canceled) {
		t.Errorf("chunks %q, error %v", got, err)
	}
}

func TestHangLimitFailsTest(t *testing.T) {
	tb := newRecordingTB(t)
	s := New(tb, WithHangLimit(time.Millisecond))
	s.Enqueue(Hang("x"))
	chunks, err := collect(s.Client(t.Context()).Models.GenerateContentStream(t.Context(), model, genai.Text("hi"), nil))
	if err != nil || len(chunks) != 1 {
		t.Errorf("%d chunks, %v", len(chunks), err)
	}
	tb.runCleanup()
	if errs := tb.errors(); len(errs) != 1 || !strings.Contains(errs[0], "Hang step was not released") {
		t.Errorf("recorded errors = %q", errs)
	}
}

func TestSlow(t *testing.T) {
	t.Run("paces every chunk", func(t *testing.T) {
		ctx := t.Context()
		s := New(t)
		s.Enqueue(Slow(Text("a", "b", "c"), time.Millisecond), Slow(Unavailable(), time.Millisecond))
		c := s.Client(ctx)
		chunks, err := collect(c.Models.GenerateContentStream(ctx, model, genai.Text("hi"), nil))
		if err != nil || !reflect.DeepEqual(texts(chunks), []string{"a", "b", "c"}) {
			t.Errorf("chunks %q, %v", texts(chunks), err)
		}
		_, err = c.Models.GenerateContent(ctx, model, genai.Text("hi"), nil)
		if asAPIError(t, err).Code != 503 {
			t.Errorf("error = %v", err)
		}
	})
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("cancel stream=%v", stream), func(t *testing.T) {
			opt, served := newServed()
			s := New(t, opt)
			s.Enqueue(Slow(Text("never sent"), time.Hour))
			c := s.Client(t.Context())
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				if stream {
					_, err := collect(c.Models.GenerateContentStream(ctx, model, genai.Text("hi"), nil))
					done <- err
					return
				}
				_, err := c.Models.GenerateContent(ctx, model, genai.Text("hi"), nil)
				done <- err
			}()
			if _, err := s.WaitRequests(ctx, 1); err != nil {
				t.Fatal(err)
			}
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("error = %v, want context.Canceled", err)
				}
			case <-time.After(hangGuard):
				t.Fatal("the client did not return after cancel")
			}
			// The handler itself gave up, long before its hour of pacing and
			// before the test's cleanup would have released it.
			receive(t, served, "handler return")
		})
	}
}

func TestPerModelQueues(t *testing.T) {
	ctx := t.Context()
	s := New(t)
	s.EnqueueFor("models/gemini-2.5-pro", RateLimitPerDay(), Text("pro"))
	s.EnqueueFor("gemini-2.5-flash", Text("flash"))
	s.Enqueue(Text("shared"))
	c := s.Client(ctx)

	call := func(m string) (string, error) {
		chunks, err := collect(c.Models.GenerateContentStream(ctx, m, genai.Text("hi"), nil))
		return strings.Join(texts(chunks), ""), err
	}
	if _, err := call("gemini-2.5-pro"); asAPIError(t, err).Code != 429 {
		t.Errorf("pro #1: %v", err)
	}
	for _, tt := range []struct{ model, want string }{
		{"gemini-2.5-flash", "flash"},
		{"gemini-2.5-pro", "pro"},
		// Both model queues are empty now; the shared queue answers.
		{"models/gemini-2.5-pro", "shared"},
	} {
		if got, err := call(tt.model); err != nil || got != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.model, got, err, tt.want)
		}
	}
	var models []string
	for _, r := range s.Requests() {
		models = append(models, r.Model)
	}
	if want := []string{"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.5-pro"}; !reflect.DeepEqual(models, want) {
		t.Errorf("request models = %q, want %q", models, want)
	}
	if s.Pending() != 0 {
		t.Errorf("pending = %d", s.Pending())
	}
}

func TestResponderAnswersUnscriptedRequests(t *testing.T) {
	ctx := t.Context()
	s := New(t, WithResponder(func(r *Request) (Step, bool) {
		if r.LastUserText() == "unanswered" {
			return Step{}, false
		}
		return Text("echo: " + r.LastUserText()), true
	}))
	s.Enqueue(Text("scripted"))
	c := s.Client(ctx)
	call := func(prompt string) string {
		chunks, err := collect(c.Models.GenerateContentStream(ctx, "gemini-2.5-flash", genai.Text(prompt), nil))
		if err != nil {
			t.Fatalf("%s: %v", prompt, err)
		}
		return strings.Join(texts(chunks), "")
	}
	// The script comes first; the responder answers what it leaves.
	for _, tt := range []struct{ prompt, want string }{
		{"one", "scripted"},
		{"two", "echo: two"},
		{"three", "echo: three"},
	} {
		if got := call(tt.prompt); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.prompt, got, tt.want)
		}
	}
	rec := newRecordingTB(t)
	s2 := New(rec, WithResponder(func(*Request) (Step, bool) { return Step{}, false }))
	_, err := collect(s2.Client(ctx).Models.GenerateContentStream(ctx, "gemini-2.5-flash", genai.Text("x"), nil))
	if err == nil {
		t.Error("a request the responder declines succeeded")
	}
	rec.runCleanup()
	if len(rec.errors()) == 0 {
		t.Error("a request the responder declines did not fail the test")
	}
}

func TestAPIKeyRequired(t *testing.T) {
	ctx := t.Context()
	s := New(t, WithAPIKey("secret"))
	s.Enqueue(Text("welcome"))

	if cfg := s.ClientConfig(); cfg.APIKey != "secret" {
		t.Errorf("ClientConfig().APIKey = %q", cfg.APIKey)
	}
	chunks, err := collect(s.Client(ctx).Models.GenerateContentStream(ctx, model, genai.Text("hi"), nil))
	if err != nil || texts(chunks)[0] != "welcome" {
		t.Fatalf("right key: %q, %v", texts(chunks), err)
	}

	cfg := s.ClientConfig()
	cfg.APIKey = "wrong"
	wrong, err := genai.NewClient(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = wrong.Models.GenerateContent(ctx, model, genai.Text("hi"), nil)
	if apiErr := asAPIError(t, err); apiErr.Code != 403 || apiErr.Status != "PERMISSION_DENIED" || apiErr.Details[0]["reason"] != "API_KEY_INVALID" {
		t.Errorf("wrong key: %+v", apiErr)
	}

	// The genai client refuses to run without a key, so send one by hand.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/v1beta/models/"+model+":generateContent", strings.NewReader(`{"contents":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no key: status %d", resp.StatusCode)
	}
	if n := len(s.Requests()); n != 3 {
		t.Errorf("recorded %d requests, want 3 (rejected ones included)", n)
	}
}

func TestCountTokens(t *testing.T) {
	ctx := t.Context()
	s := New(t)
	s.Enqueue(Text("generation step, untouched by countTokens"))
	s.EnqueueCountTokens(TokenCount(42), APIError(400, "INVALID_ARGUMENT", "too big"))
	c := s.Client(ctx)
	count := func() (int32, error) {
		resp, err := c.Models.CountTokens(ctx, model, genai.Text("hello world!"), nil)
		if err != nil {
			return 0, err
		}
		return resp.TotalTokens, nil
	}

	if n, err := count(); err != nil || n != 42 {
		t.Errorf("scripted: %d, %v", n, err)
	}
	if _, err := count(); asAPIError(t, err).Code != 400 {
		t.Errorf("scripted error: %v", err)
	}
	// "hello world!" is 12 characters: 3 tokens.
	if n, err := count(); err != nil || n != 3 {
		t.Errorf("estimate: %d, %v", n, err)
	}
	if r := s.Requests()[0]; r.Method != MethodCountTokens || r.Body == nil || r.Body.Contents[0].Parts[0].Text != "hello world!" {
		t.Errorf("request = %+v", r)
	}
	if s.Pending() != 1 {
		t.Errorf("pending = %d, want the generation step", s.Pending())
	}
	if _, err := collect(c.Models.GenerateContentStream(ctx, model, genai.Text("hi"), nil)); err != nil {
		t.Error(err)
	}
}

func TestWaitRequests(t *testing.T) {
	s := New(t)
	s.EnqueueCountTokens(TokenCount(1))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.WaitRequests(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled wait: %v", err)
	}
	if _, err := s.Client(t.Context()).Models.CountTokens(t.Context(), model, genai.Text("x"), nil); err != nil {
		t.Fatal(err)
	}
	reqs, err := s.WaitRequests(t.Context(), 1)
	if err != nil || len(reqs) != 1 {
		t.Errorf("wait: %d requests, %v", len(reqs), err)
	}
}

// recordingTB is a testing.TB whose failures are recorded rather than
// reported, so tests can assert that the fake fails a test. Cleanups run
// when runCleanup is called (and at the latest when the real test ends).
type recordingTB struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func newRecordingTB(t *testing.T) *recordingTB {
	r := &recordingTB{TB: t}
	t.Cleanup(r.runCleanup)
	return r
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recordingTB) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}

func (r *recordingTB) runCleanup() {
	r.mu.Lock()
	fs := r.cleanups
	r.cleanups = nil
	r.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

func (r *recordingTB) errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

func TestExhaustedScriptFailsTest(t *testing.T) {
	tb := newRecordingTB(t)
	s := New(tb)
	s.Enqueue(Text("only one"))
	c := s.Client(t.Context())
	if _, err := collect(c.Models.GenerateContentStream(t.Context(), model, genai.Text("first"), nil)); err != nil {
		t.Fatal(err)
	}
	if errs := tb.errors(); len(errs) != 0 {
		t.Fatalf("errors after a scripted call: %q", errs)
	}

	_, err := collect(c.Models.GenerateContentStream(t.Context(), model, genai.Text("one more please"), nil))
	apiErr := asAPIError(t, err)
	if apiErr.Code != 500 || apiErr.Status != "INTERNAL" || !strings.Contains(apiErr.Message, "script exhausted") || !strings.Contains(apiErr.Message, `"one more please"`) {
		t.Errorf("APIError = %+v", apiErr)
	}
	errs := tb.errors()
	if len(errs) != 1 || !strings.Contains(errs[0], "script exhausted") || !strings.Contains(errs[0], "request #2, streamGenerateContent") {
		t.Errorf("recorded errors = %q", errs)
	}
}

func TestUnusedStepsFailTest(t *testing.T) {
	tb := newRecordingTB(t)
	s := New(tb)
	s.Enqueue(Text("never requested"))
	s.EnqueueFor("gemini-2.5-pro", Unavailable())
	s.EnqueueCountTokens(TokenCount(3))
	tb.runCleanup()
	errs := tb.errors()
	if len(errs) != 1 || !strings.Contains(errs[0], "3 scripted step(s) were never requested") || !strings.Contains(errs[0], "gemini-2.5-pro: Unavailable") {
		t.Errorf("recorded errors = %q", errs)
	}

	tb = newRecordingTB(t)
	s = New(tb, AllowUnused())
	s.Enqueue(Text("spare"))
	tb.runCleanup()
	if errs := tb.errors(); len(errs) != 0 {
		t.Errorf("AllowUnused: recorded errors = %q", errs)
	}
}

func TestMisusedStepsFailTest(t *testing.T) {
	tb := newRecordingTB(t)
	s := New(tb)
	s.Enqueue(TokenCount(5))
	s.EnqueueCountTokens(Text("not a count"))
	c := s.Client(t.Context())

	_, err := c.Models.GenerateContent(t.Context(), model, genai.Text("hi"), nil)
	if apiErr := asAPIError(t, err); apiErr.Code != 500 || !strings.Contains(apiErr.Message, "countTokens step") {
		t.Errorf("generate with a count step: %+v", apiErr)
	}
	_, err = c.Models.CountTokens(t.Context(), model, genai.Text("hi"), nil)
	if apiErr := asAPIError(t, err); apiErr.Code != 500 || !strings.Contains(apiErr.Message, "generation step") {
		t.Errorf("count with a text step: %+v", apiErr)
	}
	if errs := tb.errors(); len(errs) != 2 {
		t.Errorf("recorded errors = %q", errs)
	}
}

func TestUnaryCannotCarryMalformedEvents(t *testing.T) {
	tb := newRecordingTB(t)
	s := New(tb)
	s.Enqueue(Events(`{not json`))
	_, err := s.Client(t.Context()).Models.GenerateContent(t.Context(), model, genai.Text("hi"), nil)
	if apiErr := asAPIError(t, err); apiErr.Code != 500 {
		t.Errorf("APIError = %+v", apiErr)
	}
	if errs := tb.errors(); len(errs) != 1 || !strings.Contains(errs[0], "neither a response nor an error") {
		t.Errorf("recorded errors = %q", errs)
	}
}
