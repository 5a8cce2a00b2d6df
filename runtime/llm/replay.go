package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"sync"

	"google.golang.org/genai"
)

// Replay file methods, as gemini-cli's --fake-responses files name them.
const (
	MethodGenerateContent       = "generateContent"
	MethodGenerateContentStream = "generateContentStream"
	MethodCountTokens           = "countTokens"
	MethodEmbedContent          = "embedContent"
)

var (
	// ErrBadReplayFile reports a replay file that cannot be read or parsed.
	ErrBadReplayFile = errors.New("bad replay file")
	// ErrReplayExhausted reports a model call after the last recorded response.
	ErrReplayExhausted = errors.New("replay exhausted")
	// ErrReplayMismatch reports, in strict mode, a call whose method differs
	// from the next recorded response's.
	ErrReplayMismatch = errors.New("replay mismatch")
)

// Recorded is one line of a replay file: gemini-cli's FakeResponse.
type Recorded struct {
	Method string `json:"method"`
	// Response is a GenerateContentResponse for generateContent, an array of
	// them for generateContentStream, a CountTokensResponse for countTokens
	// and an EmbedContentResponse for embedContent.
	Response json.RawMessage `json:"response"`
}

type replayEntry struct {
	method string
	line   int
	one    *genai.GenerateContentResponse
	chunks []*genai.GenerateContentResponse
	count  *genai.CountTokensResponse
}

// Replay is the Backend that answers with the responses recorded in a JSONL
// file in gemini-cli's --fake-responses format. Strict mode replays lines in
// order and fails when the next line is for another method; non-strict mode
// takes the next line recorded for the method asked, so background calls in
// another order still match. Replay is safe for concurrent use; calls
// consume lines one by one.
type Replay struct {
	path   string
	strict bool

	mu      sync.Mutex
	entries []*replayEntry // non-strict removes used entries
	next    int            // strict cursor
}

// LoadReplay reads and validates the whole file, so a malformed file fails
// before any model call. Errors name the file and line and wrap
// ErrBadReplayFile.
func LoadReplay(path string, strict bool) (*Replay, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadReplayFile, err)
	}
	r := &Replay{path: path, strict: strict}
	line := 0
	for text := range bytes.Lines(data) {
		line++
		text = bytes.TrimSpace(text)
		if len(text) == 0 {
			continue
		}
		e, err := parseReplayLine(text)
		if err != nil {
			return nil, fmt.Errorf("%w: %s:%d: %w", ErrBadReplayFile, path, line, err)
		}
		e.line = line
		r.entries = append(r.entries, e)
	}
	if len(r.entries) == 0 {
		return nil, fmt.Errorf("%w: %s holds no responses", ErrBadReplayFile, path)
	}
	return r, nil
}

func parseReplayLine(text []byte) (*replayEntry, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	var rec Recorded
	if err := dec.Decode(&rec); err != nil {
		return nil, fmt.Errorf("not a {\"method\", \"response\"} JSON object: %w", err)
	}
	if len(rec.Response) == 0 || string(rec.Response) == "null" {
		return nil, errors.New(`missing "response"`)
	}
	e := &replayEntry{method: rec.Method}
	var err error
	switch rec.Method {
	case MethodGenerateContent:
		err = json.Unmarshal(rec.Response, &e.one)
	case MethodGenerateContentStream:
		if err = json.Unmarshal(rec.Response, &e.chunks); err == nil && len(e.chunks) == 0 {
			err = errors.New("a generateContentStream response must hold at least one chunk")
		}
	case MethodCountTokens:
		err = json.Unmarshal(rec.Response, &e.count)
	case MethodEmbedContent:
		// Kept so strict mode sees the line; agentry never embeds.
	case "":
		return nil, errors.New(`missing "method"`)
	default:
		return nil, fmt.Errorf("unknown method %q (want generateContent, generateContentStream, countTokens or embedContent)", rec.Method)
	}
	if err != nil {
		return nil, fmt.Errorf("%s response: %w", rec.Method, err)
	}
	return e, nil
}

// take returns the next recorded response for method, as gemini-cli's
// FakeContentGenerator.getNextResponse does.
func (r *Replay) take(method string, request func() any) (*replayEntry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.strict {
		for i, e := range r.entries {
			if e.method == method {
				r.entries = append(r.entries[:i], r.entries[i+1:]...)
				return e, nil
			}
		}
		return nil, fmt.Errorf("%w: no more responses for %s in %s, got request:\n%s", ErrReplayExhausted, method, r.path, describeRequest(request()))
	}
	if r.next >= len(r.entries) {
		return nil, fmt.Errorf("%w: no more responses for %s in %s (all %d used), got request:\n%s", ErrReplayExhausted, method, r.path, len(r.entries), describeRequest(request()))
	}
	e := r.entries[r.next]
	if e.method != method {
		return nil, fmt.Errorf("%w: %s:%d is a %s response but the call is %s", ErrReplayMismatch, r.path, e.line, e.method, method)
	}
	r.next++
	return e, nil
}

func describeRequest(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	const limit = 2000
	if len(b) > limit {
		return string(b[:limit]) + "…"
	}
	return string(b)
}

type replayRequest struct {
	Model    string                       `json:"model"`
	Contents []*genai.Content             `json:"contents,omitempty"`
	Config   *genai.GenerateContentConfig `json:"config,omitempty"`
}

// GenerateContent implements Backend.
func (r *Replay) GenerateContent(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	e, err := r.take(MethodGenerateContent, func() any { return replayRequest{model, contents, cfg} })
	if err != nil {
		return nil, err
	}
	return e.one, nil
}

// GenerateContentStream implements Backend.
func (r *Replay) GenerateContentStream(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		if err := context.Cause(ctx); err != nil {
			yield(nil, err)
			return
		}
		e, err := r.take(MethodGenerateContentStream, func() any { return replayRequest{model, contents, cfg} })
		if err != nil {
			yield(nil, err)
			return
		}
		for _, c := range e.chunks {
			if err := context.Cause(ctx); err != nil {
				yield(nil, err)
				return
			}
			if !yield(c, nil) {
				return
			}
		}
	}
}

// CountTokens implements Backend.
func (r *Replay) CountTokens(ctx context.Context, model string, contents []*genai.Content, _ *genai.CountTokensConfig) (*genai.CountTokensResponse, error) {
	e, err := r.take(MethodCountTokens, func() any { return replayRequest{Model: model, Contents: contents} })
	if err != nil {
		return nil, err
	}
	return e.count, nil
}

// Remaining returns how many recorded responses have not been used.
func (r *Replay) Remaining() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.strict {
		return len(r.entries) - r.next
	}
	return len(r.entries)
}
