package llm

import (
	"bytes"
	"context"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const twoMethods = `{"method":"countTokens","response":{"totalTokens":42}}

{"method":"generateContentStream","response":[{"candidates":[{"content":{"role":"model","parts":[{"text":"a"}]}}]},{"candidates":[{"content":{"role":"model","parts":[{"text":"b"}]},"finishReason":"STOP"}]}]}
{"method":"generateContent","response":{"candidates":[{"content":{"role":"model","parts":[{"text":"one"}]},"finishReason":"STOP"}]}}
`

func streamText(t *testing.T, b Backend) (string, error) {
	t.Helper()
	var got strings.Builder
	for c, err := range b.GenerateContentStream(t.Context(), "m", nil, nil) {
		if err != nil {
			return got.String(), err
		}
		got.WriteString(c.Candidates[0].Content.Parts[0].Text)
	}
	return got.String(), nil
}

func TestReplayStrict(t *testing.T) {
	r, err := LoadReplay(writeFile(t, "r.jsonl", twoMethods), true)
	if err != nil {
		t.Fatal(err)
	}
	// The next line is countTokens: a stream call is a mismatch that names
	// the file and line, and consumes nothing.
	if _, err := streamText(t, r); !errors.Is(err, ErrReplayMismatch) || !strings.Contains(err.Error(), "r.jsonl:1") {
		t.Fatalf("stream before countTokens: err = %v, want ErrReplayMismatch naming r.jsonl:1", err)
	}
	ct, err := r.CountTokens(t.Context(), "m", nil, nil)
	if err != nil || ct.TotalTokens != 42 {
		t.Fatalf("CountTokens = %+v, %v", ct, err)
	}
	if got, err := streamText(t, r); err != nil || got != "ab" {
		t.Fatalf("stream = %q, %v; want \"ab\"", got, err)
	}
	one, err := r.GenerateContent(t.Context(), "m", nil, nil)
	if err != nil || one.Candidates[0].Content.Parts[0].Text != "one" {
		t.Fatalf("GenerateContent = %+v, %v", one, err)
	}
	if _, err := streamText(t, r); !errors.Is(err, ErrReplayExhausted) {
		t.Fatalf("after the last line: err = %v, want ErrReplayExhausted", err)
	}
}

func TestReplayNonStrict(t *testing.T) {
	r, err := LoadReplay(writeFile(t, "r.jsonl", twoMethods), false)
	if err != nil {
		t.Fatal(err)
	}
	// Non-strict takes the next line recorded for the method asked.
	if got, err := streamText(t, r); err != nil || got != "ab" {
		t.Fatalf("stream = %q, %v", got, err)
	}
	if _, err := r.GenerateContent(t.Context(), "m", nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.GenerateContent(t.Context(), "m", nil, nil); !errors.Is(err, ErrReplayExhausted) {
		t.Fatalf("second generateContent: err = %v, want ErrReplayExhausted", err)
	}
	if r.Remaining() != 1 {
		t.Errorf("Remaining = %d, want 1 (the countTokens line)", r.Remaining())
	}
}

func TestReplayCancelled(t *testing.T) {
	r, err := LoadReplay(writeFile(t, "r.jsonl", twoMethods), false)
	if err != nil {
		t.Fatal(err)
	}
	cause := errors.New("stop now")
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(cause)
	for _, err := range r.GenerateContentStream(ctx, "m", nil, nil) {
		if !errors.Is(err, cause) {
			t.Fatalf("err = %v, want the context's cause", err)
		}
	}
}

func TestLoadReplayErrors(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"not json", `{"method":"generateContent",`, "r.jsonl:1"},
		{"unknown method", `{"method":"generate","response":{}}`, `unknown method "generate"`},
		{"missing method", `{"response":{}}`, `missing "method"`},
		{"missing response", `{"method":"generateContent"}`, `missing "response"`},
		{"stream must be an array", `{"method":"generateContentStream","response":{"candidates":[]}}`, "generateContentStream response"},
		{"empty stream", `{"method":"generateContentStream","response":[]}`, "at least one chunk"},
		{"unknown field", `{"method":"generateContent","response":{},"extra":1}`, `unknown field "extra"`},
		{"second line bad", "{\"method\":\"countTokens\",\"response\":{}}\nnope", "r.jsonl:2"},
		{"empty file", "\n\n", "holds no responses"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadReplay(writeFile(t, "r.jsonl", tc.content), true)
			if !errors.Is(err, ErrBadReplayFile) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrBadReplayFile containing %q", err, tc.want)
			}
		})
	}
	if _, err := LoadReplay(filepath.Join(t.TempDir(), "absent.jsonl"), true); !errors.Is(err, ErrBadReplayFile) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want ErrBadReplayFile wrapping ErrNotExist", err)
	}
}

// TestRecordReplayRoundTrip records a replayed run and replays the recording:
// both produce the same chunks, and the recording keeps only candidates and
// usage, in gemini-cli's format.
func TestRecordReplayRoundTrip(t *testing.T) {
	src := writeFile(t, "src.jsonl", twoMethods)
	orig, err := LoadReplay(src, true)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	sink := NewRecordSink(&buf)
	rec := NewRecorder(orig, sink)
	var first []*genai.GenerateContentResponse
	if _, err := rec.CountTokens(t.Context(), "m", nil, nil); err != nil {
		t.Fatal(err)
	}
	for c, err := range rec.GenerateContentStream(t.Context(), "m", nil, nil) {
		if err != nil {
			t.Fatal(err)
		}
		first = append(first, c)
	}
	if _, err := rec.GenerateContent(t.Context(), "m", nil, nil); err != nil {
		t.Fatal(err)
	}
	if sink.Err() != nil {
		t.Fatal(sink.Err())
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], `{"method":"generateContentStream","response":[{"candidates":`) {
		t.Fatalf("recording:\n%s", buf.String())
	}
	again, err := LoadReplay(writeFile(t, "rec.jsonl", buf.String()), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.CountTokens(t.Context(), "m", nil, nil); err != nil {
		t.Fatal(err)
	}
	var second []*genai.GenerateContentResponse
	for c, err := range again.GenerateContentStream(t.Context(), "m", nil, nil) {
		if err != nil {
			t.Fatal(err)
		}
		second = append(second, c)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("replayed recording differs (-recorded +replayed):\n%s", diff)
	}
}

func TestRecorderSkipsFailedStreams(t *testing.T) {
	var buf bytes.Buffer
	rec := NewRecorder(failing{}, NewRecordSink(&buf))
	var gotErr error
	for _, err := range rec.GenerateContentStream(t.Context(), "m", nil, nil) {
		gotErr = err
	}
	if gotErr == nil {
		t.Fatal("want the stream's error")
	}
	if buf.Len() != 0 {
		t.Errorf("a failed stream was recorded: %s", buf.String())
	}
}

type failing struct{ Backend }

func (failing) GenerateContentStream(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		if yield(&genai.GenerateContentResponse{}, nil) {
			yield(nil, errors.New("broken"))
		}
	}
}
