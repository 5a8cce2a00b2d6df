package runtime

import (
	"context"
	"errors"
	"io"
	"iter"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/runtime/llm"
)

// TestParitySafetyBlocked: a candidate without content whose finishReason
// is SAFETY is tried four times in all, 1, 2 and 4 s apart, the same
// request each time, then the run fails with an INVALID_STREAM error of
// kind SAFETY_BLOCKED (safety.stream-json.*: four requests, about 1.3, 2.1
// and 4.0 s apart, identical contents; the error printed as "The model
// response was blocked due to safety settings.").
func TestParitySafetyBlocked(t *testing.T) {
	srv := fakegemini.New(t)
	blocked := &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{FinishReason: genai.FinishReasonSafety}}}
	for range 4 {
		srv.Enqueue(fakegemini.Chunks(blocked))
	}
	s, tm := contextSession(t, srv, Config{})
	evs := run(t, s, "go")

	want := geminiCLIRequests(t, "safety.stream-json")
	got := sentContents(srv)
	if len(got) != len(want) {
		t.Fatalf("%d requests, gemini-cli sent %d", len(got), len(want))
	}
	for i := range got {
		if diff := cmp.Diff(shapeOf(want[i]), shapeOf(got[i])); diff != "" {
			t.Errorf("request %d (-gemini-cli +agentry):\n%s", i, diff)
		}
	}
	if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, tm.Delays()); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
	var notices []string
	for _, ev := range customs(evs, CustomModelRetry) {
		notices = append(notices, ev.Custom.Data["message"].(string))
	}
	const why = "Model stream ended due to safety settings (SAFETY) with empty response text"
	wantNotices := []string{
		"Attempt 1 failed: " + why + ". Retrying after 1000ms...",
		"Attempt 2 failed: " + why + ". Retrying after 2000ms...",
		"Attempt 3 failed: " + why + ". Retrying after 4000ms...",
	}
	if diff := cmp.Diff(wantNotices, notices); diff != "" {
		t.Errorf("retry notices (-want +got):\n%s", diff)
	}
	errs := find(evs, EventError)
	if len(errs) != 1 || !errs[0].Error.Fatal || errs[0].Meta["code"] != "INVALID_STREAM" || errs[0].Meta["errorType"] != llm.InvalidSafetyBlocked {
		t.Fatalf("errors = %+v", errs)
	}
	if r := last(evs).AgentEnd.Reason; r != EndFailed {
		t.Errorf("reason %s, want failed", r)
	}
	// Each attempt is a model request in the run's statistics.
	if n := len(find(evs, EventUsage)); n != 4 {
		t.Errorf("%d usage events, want 4", n)
	}
}

// TestParityThinkingOnlyNudge: an answer of thoughts only is retried with
// gemini-cli's nudge as a new part of the last user turn
// (thinking-only.stream-json.requests.json).
func TestParityThinkingOnlyNudge(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(fakegemini.Stream(&genai.Part{Text: "hmm", Thought: true}), fakegemini.Text("ok"))
	s, tm := contextSession(t, srv, Config{})
	evs := run(t, s, "go")
	if r := last(evs).AgentEnd.Reason; r != EndCompleted {
		t.Fatalf("reason %s, events %v", r, types(evs))
	}
	want := geminiCLIRequests(t, "thinking-only.stream-json")
	got := sentContents(srv)
	if len(got) != len(want) {
		t.Fatalf("%d requests, gemini-cli sent %d", len(got), len(want))
	}
	for i := range got {
		if diff := cmp.Diff(shapeOf(want[i]), shapeOf(got[i])); diff != "" {
			t.Errorf("request %d (-gemini-cli +agentry):\n%s", i, diff)
		}
	}
	if diff := cmp.Diff([]time.Duration{time.Second}, tm.Delays()); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
	// The nudge was for that attempt only: the history has the prompt.
	srv.Enqueue(fakegemini.Text("again"))
	run(t, s, "next")
	if got := shapeOf(sentContents(srv)[2]); got[0] != "user: <session_context> | go" {
		t.Errorf("next request = %q", got)
	}
}

// TestRetryNoticeConnectionRefused: a refused connection is retried with
// one notice per attempt naming the attempt, the reason and the delay.
func TestRetryNoticeConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	tm := &timers{}
	s := newTestSession(t, nil, Config{
		Resolver: llm.NewResolver(llm.ResolverConfig{Gemini: llm.GeminiConfig{APIKey: "k", BaseURL: "http://" + addr}}),
		Retry:    RetryConfig{NewTimer: tm.New, Rand: func() float64 { return 0.5 }, MaxAttempts: 3},
	})
	evs := run(t, s, "hi")
	var notices []string
	for _, ev := range customs(evs, CustomModelRetry) {
		notices = append(notices, ev.Custom.Data["message"].(string))
	}
	why := "dial tcp " + addr + ": connect: connection refused"
	want := []string{
		"Attempt 1 failed: " + why + ". Retrying after 5000ms...",
		"Attempt 2 failed: " + why + ". Retrying after 10000ms...",
	}
	if diff := cmp.Diff(want, notices); diff != "" {
		t.Errorf("notices (-want +got):\n%s", diff)
	}
	if r := last(evs).AgentEnd.Reason; r != EndFailed {
		t.Errorf("reason %s", r)
	}
}

// TestRetryNudgeShapes: the nudge joins the last user turn, or follows a
// closing model turn after function responses, as gemini-cli's
// applyRetryNudge (geminiChat.ts, 0.61.0) places it; other kinds get none.
func TestRetryNudgeShapes(t *testing.T) {
	prompt := func() []*genai.Content { return []*genai.Content{genai.NewContentFromText("go", genai.RoleUser)} }
	responses := func() []*genai.Content {
		return []*genai.Content{
			genai.NewContentFromText("go", genai.RoleUser),
			{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "f"}}}},
			{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: "f"}}}},
		}
	}
	for _, tc := range []struct {
		name     string
		contents []*genai.Content
		kind     string
		want     []string
	}{
		{"thinking only", prompt(), llm.InvalidThinkingOnlyResponse, []string{"user: go | \n" + thinkingOnlyNudge}},
		{"no text", prompt(), llm.InvalidNoResponseText, []string{"user: go | \n" + noResponseTextNudge}},
		{"after tools", responses(), llm.InvalidNoResponseText, []string{"user: go", "model: call f", "user: response f", "model: [Tool execution completed.]", "user: " + noResponseTextNudge}},
		{"blocked", prompt(), llm.InvalidSafetyBlocked, []string{"user: go"}},
	} {
		orig := shapeOf(tc.contents)
		got := shapeOf(applyRetryNudge(slices.Clone(tc.contents), tc.kind))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
		if diff := cmp.Diff(orig, shapeOf(tc.contents)); diff != "" {
			t.Errorf("%s: the request's contents changed:\n%s", tc.name, diff)
		}
	}
}

// brokenThenText is a backend whose first stream sends a thought and then
// breaks off; the second answers.
type brokenThenText struct{ calls int }

func (b *brokenThenText) GenerateContent(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	return nil, errors.New("unused")
}

func (b *brokenThenText) GenerateContentStream(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	b.calls++
	first := b.calls == 1
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		if first {
			if yield(&genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "hmm", Thought: true}}}}}}, nil) {
				yield(nil, io.ErrUnexpectedEOF)
			}
			return
		}
		for _, c := range textTurn("fine").Chunks {
			if !yield(c, nil) {
				return
			}
		}
	}
}

func (b *brokenThenText) CountTokens(context.Context, string, []*genai.Content, *genai.CountTokensConfig) (*genai.CountTokensResponse, error) {
	return &genai.CountTokensResponse{}, nil
}

// TestBrokenStreamBeforeAnswerIsRetried: a stream that breaks off after
// thoughts but before any answer text is tried again after 1 s, as
// gemini-cli retries a mid-stream network error; once answer text was
// shown, TestMidStreamErrorIsReported holds.
func TestBrokenStreamBeforeAnswerIsRetried(t *testing.T) {
	b := &brokenThenText{}
	tm := &timers{}
	s := newTestSession(t, b, Config{Retry: RetryConfig{NewTimer: tm.New}})
	evs := run(t, s, "hi")
	if r := last(evs).AgentEnd.Reason; r != EndCompleted || b.calls != 2 {
		t.Fatalf("reason %s after %d calls, events %v", r, b.calls, types(evs))
	}
	if diff := cmp.Diff([]time.Duration{time.Second}, tm.Delays()); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
	retries := customs(evs, CustomModelRetry)
	if len(retries) != 1 || retries[0].Custom.Data["message"] != "Attempt 1 failed: unexpected EOF. Retrying after 1000ms..." {
		t.Errorf("retries = %+v", retries)
	}
}
