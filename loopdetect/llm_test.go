package loopdetect_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/loopdetect"
)

// reply is one scripted Checker answer.
type reply struct {
	resp map[string]any
	err  error
}

// fakeChecker answers with replies in order (the last one repeating) and
// records the calls.
type fakeChecker struct {
	mu       sync.Mutex
	replies  []reply
	models   []string
	contents [][]*genai.Content
	schemas  []map[string]any
}

func (f *fakeChecker) check(_ context.Context, model string, contents []*genai.Content, schema map[string]any) (map[string]any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.models = append(f.models, model)
	f.contents = append(f.contents, contents)
	f.schemas = append(f.schemas, schema)
	if len(f.replies) == 0 {
		return nil, errors.New("no reply scripted")
	}
	r := f.replies[0]
	if len(f.replies) > 1 {
		f.replies = f.replies[1:]
	}
	return r.resp, r.err
}

func (f *fakeChecker) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.models)
}

func conf(c float64, analysis string) reply {
	return reply{resp: map[string]any{"unproductive_state_confidence": c, "unproductive_state_analysis": analysis}}
}

// turnResult is what one TurnStarted returned.
type turnResult struct {
	det loopdetect.Detection
	ok  bool
	err error
}

// advance runs n turns and returns the last turn's result.
func advance(t *testing.T, d *loopdetect.Detector, n int, history []*genai.Content) turnResult {
	t.Helper()
	var r turnResult
	for range n {
		r.det, r.ok, r.err = d.TurnStarted(t.Context(), "", history)
	}
	return r
}

func TestLLMCheckScheduling(t *testing.T) {
	errAPI := errors.New("API error")
	tests := []struct {
		name    string
		replies []reply
		// turns is run in order; checks[i] is the expected total number of
		// model calls after turns[i] turns more.
		turns  []int
		checks []int
	}{
		{"not before turn 30", []reply{conf(0.1, "")}, []int{29}, []int{0}},
		{"on turn 30", []reply{conf(0.1, "")}, []int{29, 1}, []int{0, 1}},
		// Interval = round(5 + 10·(1 − 0.0)) = 15: next check on turn 45.
		{"confidence 0 waits the maximum", []reply{conf(0, "")}, []int{30, 14, 1}, []int{1, 1, 2}},
		// Interval = round(5 + 10·0.5) = 10: next check on turn 40.
		{"confidence 0.5", []reply{conf(0.5, "Looks okay")}, []int{30, 9, 1}, []int{1, 1, 2}},
		// Interval = round(5 + 10·0.25) = round(7.5) = 8 (halves round up, as Math.round).
		{"confidence 0.75 rounds half up", []reply{conf(0.75, "")}, []int{30, 7, 1}, []int{1, 1, 2}},
		// 0.9 then double-check 0.89: interval from the double-check, round(6.1) = 6.
		{"double-check disagrees", []reply{conf(0.9, "Flash says loop"), conf(0.89, "Main says no loop")}, []int{30, 5, 1}, []int{2, 2, 3}},
		// A failed call leaves the interval at 10.
		{"error keeps interval", []reply{{err: errAPI}}, []int{30, 9, 1}, []int{1, 1, 2}},
		{"malformed keeps interval", []reply{{resp: map[string]any{"unproductive_state_confidence": "high"}}}, []int{30, 9, 1}, []int{1, 1, 2}},
		{"malformed double-check keeps interval", []reply{conf(0.95, ""), {resp: map[string]any{}}, conf(0.1, "")}, []int{30, 9, 1}, []int{2, 2, 3}},
		// Out-of-range confidences are clamped to [5, 15].
		{"negative confidence clamps to max", []reply{conf(-3, "")}, []int{30, 14, 1}, []int{1, 1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeChecker{replies: tt.replies}
			d := loopdetect.New(loopdetect.Config{}, f.check)
			for i, n := range tt.turns {
				r := advance(t, d, n, nil)
				if r.ok {
					t.Fatalf("step %d: unexpected detection %+v", i, r.det)
				}
				if got := f.calls(); got != tt.checks[i] {
					t.Fatalf("step %d (+%d turns): %d model calls, want %d", i, n, got, tt.checks[i])
				}
			}
		})
	}
}

func TestLLMCheckVerdicts(t *testing.T) {
	errAPI := errors.New("API error")
	tests := []struct {
		name       string
		replies    []reply
		wantModels []string
		want       loopdetect.Detection
		wantOK     bool
		wantErr    error
	}{
		{
			name:       "low confidence",
			replies:    []reply{conf(0.5, "Looks okay")},
			wantModels: []string{"loop-detection"},
		},
		{
			name:       "confirmed at exactly the threshold",
			replies:    []reply{conf(0.9, "Flash says loop"), conf(0.9, "Main says loop")},
			wantModels: []string{"loop-detection", "loop-detection-double-check"},
			want:       loopdetect.Detection{Kind: loopdetect.KindLLM, Detail: "Main says loop", Confidence: 0.9, Count: 1, ConfirmedBy: "loop-detection-double-check"},
			wantOK:     true,
		},
		{
			name:       "double-check disagrees",
			replies:    []reply{conf(0.9, "Flash says loop"), conf(0.89, "Main says no loop")},
			wantModels: []string{"loop-detection", "loop-detection-double-check"},
		},
		{
			name:       "double-check model unavailable",
			replies:    []reply{conf(0.95, "Flash says loop"), {err: fmt.Errorf("quota: %w", loopdetect.ErrModelUnavailable)}},
			wantModels: []string{"loop-detection", "loop-detection-double-check"},
			want:       loopdetect.Detection{Kind: loopdetect.KindLLM, Detail: "Flash says loop", Confidence: 0.95, Count: 1, ConfirmedBy: "loop-detection"},
			wantOK:     true,
		},
		{
			name:       "double-check fails",
			replies:    []reply{conf(0.95, "Flash says loop"), {err: errAPI}},
			wantModels: []string{"loop-detection", "loop-detection-double-check"},
			wantErr:    errAPI,
		},
		{
			name:       "first check fails",
			replies:    []reply{{err: errAPI}},
			wantModels: []string{"loop-detection"},
			wantErr:    errAPI,
		},
		{
			name:       "first model unavailable is just an error",
			replies:    []reply{{err: loopdetect.ErrModelUnavailable}},
			wantModels: []string{"loop-detection"},
			wantErr:    loopdetect.ErrModelUnavailable,
		},
		{name: "nil response", replies: []reply{{}}, wantModels: []string{"loop-detection"}},
		{name: "confidence missing", replies: []reply{{resp: map[string]any{"unproductive_state_analysis": "loop"}}}, wantModels: []string{"loop-detection"}},
		{name: "confidence not a number", replies: []reply{{resp: map[string]any{"unproductive_state_confidence": "0.99"}}}, wantModels: []string{"loop-detection"}},
		{
			name:       "malformed double-check",
			replies:    []reply{conf(0.99, "loop"), {resp: map[string]any{"unproductive_state_analysis": "loop"}}},
			wantModels: []string{"loop-detection", "loop-detection-double-check"},
		},
		{
			name:       "analysis missing",
			replies:    []reply{conf(0.99, "flash"), {resp: map[string]any{"unproductive_state_confidence": 1}}},
			wantModels: []string{"loop-detection", "loop-detection-double-check"},
			want:       loopdetect.Detection{Kind: loopdetect.KindLLM, Confidence: 1, Count: 1, ConfirmedBy: "loop-detection-double-check"},
			wantOK:     true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeChecker{replies: tt.replies}
			d := loopdetect.New(loopdetect.Config{}, f.check)
			advance(t, d, 29, nil)
			r := advance(t, d, 1, nil)
			if diff := cmp.Diff(tt.wantModels, f.models); diff != "" {
				t.Errorf("models called (-want +got):\n%s", diff)
			}
			if r.ok != tt.wantOK {
				t.Errorf("detected = %v, want %v", r.ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, r.det); diff != "" {
				t.Errorf("detection (-want +got):\n%s", diff)
			}
			if tt.wantErr == nil && r.err != nil || tt.wantErr != nil && !errors.Is(r.err, tt.wantErr) {
				t.Errorf("error = %v, want %v", r.err, tt.wantErr)
			}
			for i, s := range f.schemas {
				if diff := cmp.Diff(loopdetect.ResponseSchema(), s); diff != "" {
					t.Errorf("schema of call %d (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

func TestLLMDetectionAfterShortInterval(t *testing.T) {
	// gemini-cli: "should detect a cognitive loop when confidence is high".
	// 0.85 → interval round(6.5) = 7, so the next check is turn 37.
	f := &fakeChecker{replies: []reply{conf(0.85, "Repetitive actions")}}
	d := loopdetect.New(loopdetect.Config{}, f.check)
	if r := advance(t, d, 36, nil); r.ok || f.calls() != 1 {
		t.Fatalf("after 36 turns: detected %v, %d calls; want no detection, 1 call", r.ok, f.calls())
	}
	f.replies = []reply{conf(0.95, "Repetitive actions")}
	r := advance(t, d, 1, nil)
	if !r.ok || r.det.Kind != loopdetect.KindLLM || r.det.Count != 1 || r.det.ConfirmedBy != loopdetect.ModelDoubleCheck {
		t.Fatalf("turn 37 = %+v, %v; want an LLM detection confirmed by the double-check", r.det, r.ok)
	}
	if f.calls() != 3 {
		t.Errorf("%d model calls, want 3", f.calls())
	}
	// Latched: further turns return it without asking again.
	if again := advance(t, d, 20, nil); !again.ok || again.det != r.det || f.calls() != 3 {
		t.Errorf("latched turns = %+v, %v with %d calls; want the same detection and no new calls", again.det, again.ok, f.calls())
	}
	// Reset restarts the turn count.
	d.Reset()
	if r := advance(t, d, 29, nil); r.ok || f.calls() != 3 {
		t.Errorf("after Reset: detected %v, %d calls; want no check before turn 30", r.ok, f.calls())
	}
}

func TestLLMCheckDisabled(t *testing.T) {
	f := &fakeChecker{replies: []reply{conf(1, "loop")}}
	for name, d := range map[string]*loopdetect.Detector{
		"DisableLLMCheck": loopdetect.New(loopdetect.Config{DisableLLMCheck: true}, f.check),
		"nil Checker":     loopdetect.New(loopdetect.Config{}, nil),
	} {
		if r := advance(t, d, 100, nil); r.ok || r.err != nil {
			t.Errorf("%s: got %+v, %v, %v", name, r.det, r.ok, r.err)
		}
	}
	if f.calls() != 0 {
		t.Errorf("%d model calls with the check disabled", f.calls())
	}
}

func TestLLMCheckCustomConfig(t *testing.T) {
	f := &fakeChecker{replies: []reply{conf(0.6, ""), conf(0.7, "")}}
	d := loopdetect.New(loopdetect.Config{LLMCheckAfterTurns: 3, LLMCheckInterval: 2, LLMConfidence: 0.5}, f.check)
	advance(t, d, 2, nil)
	if f.calls() != 0 {
		t.Fatal("checked before LLMCheckAfterTurns")
	}
	r := advance(t, d, 1, nil)
	if !r.ok || r.det.Confidence != 0.7 {
		t.Errorf("with LLMConfidence 0.5, 0.6 then 0.7 = %+v, %v; want a detection at 0.7", r.det, r.ok)
	}
}

func text(role, s string) *genai.Content {
	return &genai.Content{Role: role, Parts: []*genai.Part{{Text: s}}}
}

func fcall(name string) *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: name, Args: map[string]any{}}}}}
}

func fresp(name string) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: name, Response: map[string]any{"output": "ok"}}}}}
}

func TestLLMCheckContents(t *testing.T) {
	task := text("user", "Please analyze the conversation history to determine the possibility that the conversation is stuck in a repetitive, non-productive state. Consider the original user request when evaluating whether repeated tool calls represent legitimate batch work or an actual loop. Provide your response in the requested JSON format.")
	// 25 entries; the last 20 start with a function response and end with a
	// function call, both of which are dropped.
	var long []*genai.Content
	for i := range 25 {
		switch {
		case i == 5:
			long = append(long, fresp("r5"))
		case i == 24:
			long = append(long, fcall("c24"))
		default:
			long = append(long, text("model", fmt.Sprint("turn ", i)))
		}
	}
	tests := []struct {
		name    string
		request string
		history []*genai.Content
		want    []*genai.Content
	}{
		{
			name:    "user request wrapped",
			request: "Add license headers to all files",
			history: []*genai.Content{text("model", "Some response")},
			want:    []*genai.Content{text("user", "<original_user_request>\nAdd license headers to all files\n</original_user_request>"), text("model", "Some response"), task},
		},
		{
			name:    "no user request",
			history: []*genai.Content{text("model", "Some response")},
			want:    []*genai.Content{text("model", "Some response"), task},
		},
		{
			name:    "history starting with a function call",
			history: []*genai.Content{fcall("someTool"), text("model", "Some follow up text")},
			want:    []*genai.Content{text("user", "Recent conversation history:"), fcall("someTool"), text("model", "Some follow up text"), task},
		},
		{
			name:    "function call after the user request needs no prefix",
			request: "go",
			history: []*genai.Content{fcall("someTool"), fresp("someTool"), text("model", "done")},
			want:    []*genai.Content{text("user", "<original_user_request>\ngo\n</original_user_request>"), fcall("someTool"), fresp("someTool"), text("model", "done")},
		},
		{
			name:    "last 20 turns, dangling ends trimmed",
			history: long,
			want:    append(append([]*genai.Content{}, long[6:24]...), task),
		},
		{
			name:    "empty history",
			history: nil,
			want:    []*genai.Content{task},
		},
	}
	tests[3].want = append(tests[3].want, task)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeChecker{replies: []reply{conf(0.1, "")}}
			d := loopdetect.New(loopdetect.Config{}, f.check)
			before := append([]*genai.Content{}, tt.history...)
			for range 30 {
				if _, _, err := d.TurnStarted(t.Context(), tt.request, tt.history); err != nil {
					t.Fatal(err)
				}
			}
			if f.calls() != 1 {
				t.Fatalf("%d model calls, want 1", f.calls())
			}
			if diff := cmp.Diff(tt.want, f.contents[0]); diff != "" {
				t.Errorf("contents (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tt.history, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("caller's history modified (-before +after):\n%s", diff)
			}
		})
	}
}

func TestResetDuringLLMCheck(t *testing.T) {
	// The model call runs without the lock; a verdict arriving after Reset
	// belongs to the previous prompt and must be dropped.
	started, release := make(chan struct{}), make(chan struct{})
	check := func(ctx context.Context, model string, _ []*genai.Content, _ map[string]any) (map[string]any, error) {
		if model == loopdetect.ModelLoopDetection {
			close(started)
			<-release
		}
		return map[string]any{"unproductive_state_confidence": 1.0, "unproductive_state_analysis": "loop"}, nil
	}
	d := loopdetect.New(loopdetect.Config{}, check)
	advance(t, d, 29, nil)
	done := make(chan turnResult)
	go func() {
		var r turnResult
		r.det, r.ok, r.err = d.TurnStarted(context.Background(), "", nil)
		done <- r
	}()
	<-started
	// Other callbacks are not blocked by the model call.
	if _, ok := d.AddContent("text while the model thinks"); ok {
		t.Error("unexpected detection")
	}
	d.Reset()
	close(release)
	if r := <-done; r.ok || r.err != nil {
		t.Errorf("TurnStarted across Reset = %+v, %v, %v; want the verdict dropped", r.det, r.ok, r.err)
	}
	if det, ok := d.AddContent("more text"); ok {
		t.Errorf("stale verdict latched: %+v", det)
	}
}

func TestConcurrentUse(t *testing.T) {
	f := &fakeChecker{replies: []reply{conf(0.2, "")}}
	d := loopdetect.New(loopdetect.Config{}, f.check)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				switch (g + i) % 4 {
				case 0:
					d.AddContent(fmt.Sprintf("delta %d of %d ", i, g))
				case 1:
					d.AddToolCall("read_file", map[string]any{"file_path": fmt.Sprint(i)})
				case 2:
					_, _, _ = d.TurnStarted(context.Background(), "req", nil)
				case 3:
					if i%50 == 3 {
						d.ClearDetection()
					}
				}
			}
		})
	}
	wg.Wait()
	if f.calls() == 0 {
		t.Error("the LLM check never ran in 200 turns")
	}
}
