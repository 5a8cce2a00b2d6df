package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"sync"

	"google.golang.org/genai"
)

// Recorder is a Backend that passes calls to another Backend and appends
// every response to a JSONL file in the replay format, so a live run can be
// replayed later with replay:<file>. Like gemini-cli's recording content
// generator it keeps only candidates and usage metadata, and writes a stream
// once it has ended; a stream that fails is not recorded.
type Recorder struct {
	inner Backend
	sink  *RecordSink
}

// RecordSink serialises lines from any number of Recorders onto one writer.
type RecordSink struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

// NewRecordSink returns a sink writing to w.
func NewRecordSink(w io.Writer) *RecordSink { return &RecordSink{w: w} }

// Err returns the first write error, if any.
func (s *RecordSink) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *RecordSink) write(method string, response any) {
	resp, err := json.Marshal(response)
	if err == nil {
		var line []byte
		line, err = json.Marshal(Recorded{Method: method, Response: resp})
		if err == nil {
			line = append(line, '\n')
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.err == nil {
				_, s.err = s.w.Write(line)
			}
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = fmt.Errorf("record %s response: %w", method, err)
	}
}

// NewRecorder wraps inner so its responses go to sink.
func NewRecorder(inner Backend, sink *RecordSink) *Recorder {
	return &Recorder{inner: inner, sink: sink}
}

// recordedResponse keeps the fields a replay needs.
type recordedResponse struct {
	Candidates    []*genai.Candidate                          `json:"candidates,omitempty"`
	UsageMetadata *genai.GenerateContentResponseUsageMetadata `json:"usageMetadata,omitempty"`
}

func trim(r *genai.GenerateContentResponse) recordedResponse {
	return recordedResponse{Candidates: r.Candidates, UsageMetadata: r.UsageMetadata}
}

// GenerateContent implements Backend.
func (r *Recorder) GenerateContent(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	resp, err := r.inner.GenerateContent(ctx, model, contents, cfg)
	if err == nil {
		r.sink.write(MethodGenerateContent, trim(resp))
	}
	return resp, err
}

// GenerateContentStream implements Backend.
func (r *Recorder) GenerateContentStream(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		var chunks []recordedResponse
		for c, err := range r.inner.GenerateContentStream(ctx, model, contents, cfg) {
			if err != nil {
				yield(nil, err)
				return
			}
			chunks = append(chunks, trim(c))
			if !yield(c, nil) {
				return
			}
		}
		r.sink.write(MethodGenerateContentStream, chunks)
	}
}

// CountTokens implements Backend.
func (r *Recorder) CountTokens(ctx context.Context, model string, contents []*genai.Content, cfg *genai.CountTokensConfig) (*genai.CountTokensResponse, error) {
	resp, err := r.inner.CountTokens(ctx, model, contents, cfg)
	if err == nil {
		r.sink.write(MethodCountTokens, &genai.CountTokensResponse{TotalTokens: resp.TotalTokens, CachedContentTokenCount: resp.CachedContentTokenCount})
	}
	return resp, err
}
