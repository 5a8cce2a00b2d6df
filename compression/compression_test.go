package compression

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/agentry-dev/agentry/masking"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"
)

// fakeCaller answers utility calls from a script and records the requests.
type fakeCaller struct {
	mu      sync.Mutex
	replies []reply
	reqs    []*model.LLMRequest
}

type reply struct {
	text string
	err  error
}

func newFake(replies ...reply) *fakeCaller { return &fakeCaller{replies: replies} }

func (f *fakeCaller) call(_ context.Context, req *model.LLMRequest) (*model.LLMResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, req)
	if len(f.replies) == 0 {
		return nil, errors.New("fakeCaller: unexpected call")
	}
	r := f.replies[0]
	if len(f.replies) > 1 {
		f.replies = f.replies[1:]
	}
	if r.err != nil {
		return nil, r.err
	}
	return &model.LLMResponse{Content: genai.NewContentFromText(r.text, genai.RoleModel)}, nil
}

func (f *fakeCaller) calls() []*model.LLMRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*model.LLMRequest(nil), f.reqs...)
}

// summaries is gemini-cli's test double: a first summary, then the
// verified one.
func summaries() *fakeCaller {
	return newFake(reply{text: "Initial Summary"}, reply{text: "Verified Summary"})
}

const testModel = "gemini-2.5-pro"

func testConfig(t *testing.T, f *fakeCaller) Config {
	t.Helper()
	return Config{Model: testModel, Caller: f.call, TempDir: t.TempDir()}
}

func fr(name string, resp map[string]any) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{genai.NewPartFromFunctionResponse(name, resp)}}
}

func fourTurns() []*genai.Content {
	return []*genai.Content{
		text(genai.RoleUser, "msg1"),
		text(genai.RoleModel, "msg2"),
		text(genai.RoleUser, "msg3"),
		text(genai.RoleModel, "msg4"),
	}
}

// compress runs Compress and checks that history was left as build made it.
func compress(t *testing.T, cfg Config, build func() []*genai.Content, tokens int, force, failedBefore bool) ([]*genai.Content, Info, error) {
	t.Helper()
	history := build()
	got, info, err := Compress(context.Background(), cfg, history, tokens, force, failedBefore)
	if d := cmp.Diff(build(), history); d != "" {
		t.Errorf("Compress modified its input (-want +got):\n%s", d)
	}
	return got, info, err
}

func TestCompressEmptyHistory(t *testing.T) {
	f := summaries()
	for _, force := range []bool{false, true} {
		got, info, err := Compress(context.Background(), testConfig(t, f), nil, 600_000, force, false)
		if err != nil || got != nil || info != (Info{Status: StatusNoop}) {
			t.Errorf("force=%v: got %v, %+v, %v; want nil, NOOP with zero counts", force, got, info, err)
		}
	}
	if n := len(f.calls()); n != 0 {
		t.Errorf("%d utility calls, want none", n)
	}
}

func TestCompressBelowThreshold(t *testing.T) {
	f := summaries()
	cfg := testConfig(t, f)
	cfg.TokenLimit = func(string) int { return 1000 }
	cfg.Threshold = 0.7
	// 600 < 0.7 × 1000.
	got, info, err := compress(t, cfg, fourTurns, 600, false, false)
	if err != nil || got != nil {
		t.Fatalf("got %v, %v; want nil history", got, err)
	}
	if want := (Info{OriginalTokens: 600, NewTokens: 600, Status: StatusNoop}); info != want {
		t.Errorf("info = %+v, want %+v", info, want)
	}
	// The default threshold is 0.5: 600 ≥ 500 compresses.
	cfg.Threshold = 0
	if _, info, _ := compress(t, cfg, fourTurns, 600, false, false); info.Status != StatusCompressed {
		t.Errorf("at the default threshold: %s, want COMPRESSED", info.Status)
	}
	if n := len(f.calls()); n != 2 {
		t.Errorf("%d utility calls, want 2 (only the second attempt)", n)
	}
}

// TestCompressRequests checks both utility requests and the new history.
func TestCompressRequests(t *testing.T) {
	f := summaries()
	cfg := testConfig(t, f)
	// Five turns: the split keeps the last user turn.
	build := func() []*genai.Content {
		return []*genai.Content{
			text(genai.RoleUser, "This is the first message."),
			text(genai.RoleModel, "This is the second message."),
			text(genai.RoleUser, "This is the third message."),
			text(genai.RoleModel, "This is the fourth message."),
			text(genai.RoleUser, "This is the fifth message."),
		}
	}
	// 600,000 > 0.5 × 1,048,576.
	got, info, err := compress(t, cfg, build, 600_000, false, false)
	if err != nil {
		t.Fatal(err)
	}
	history := build()
	want := []*genai.Content{
		text(genai.RoleUser, "Verified Summary"),
		text(genai.RoleModel, "Got it. Thanks for the additional context!"),
		history[4],
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("new history (-want +got):\n%s", d)
	}
	wantInfo := Info{OriginalTokens: 600_000, NewTokens: estimate(want), Status: StatusCompressed}
	if info != wantInfo {
		t.Errorf("info = %+v, want %+v", info, wantInfo)
	}

	reqs := f.calls()
	if len(reqs) != 2 {
		t.Fatalf("%d utility calls, want 2", len(reqs))
	}
	system := &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText(Prompt(testModel, ""), genai.RoleUser)}
	toCompress := history[:4]
	wantSummary := &model.LLMRequest{
		Model: "gemini-2.5-pro",
		Contents: append(append([]*genai.Content(nil), toCompress...), text(genai.RoleUser,
			"Generate a new <state_snapshot> based on the provided history.\n\nFirst, reason in your scratchpad. Then, generate the updated <state_snapshot>.")),
		Config: system,
	}
	if d := cmp.Diff(wantSummary, reqs[0]); d != "" {
		t.Errorf("summary request (-want +got):\n%s", d)
	}
	wantVerify := &model.LLMRequest{
		Model: "gemini-2.5-pro",
		Contents: append(append([]*genai.Content(nil), toCompress...),
			text(genai.RoleModel, "Initial Summary"),
			text(genai.RoleUser, "Critically evaluate the <state_snapshot> you just generated. Did you omit any specific technical details, file paths, tool results, or user constraints mentioned in the history? If anything is missing or could be more precise, generate a FINAL, improved <state_snapshot>. Otherwise, repeat the exact same <state_snapshot> again.")),
		Config: system,
	}
	if d := cmp.Diff(wantVerify, reqs[1]); d != "" {
		t.Errorf("verification request (-want +got):\n%s", d)
	}
}

func estimate(contents []*genai.Content) int {
	return countOf(Config{}, contents)
}

func countOf(cfg Config, contents []*genai.Content) int {
	return cfg.count(context.Background(), discard(), contents)
}

func TestCompressEverything(t *testing.T) {
	f := summaries()
	got, info, err := compress(t, testConfig(t, f), fourTurns, 600_000, false, false)
	if err != nil || info.Status != StatusCompressed {
		t.Fatalf("got %+v, %v", info, err)
	}
	// The history ends on a model turn without a call, so all of it is
	// summarised.
	want := []*genai.Content{text(genai.RoleUser, "Verified Summary"), text(genai.RoleModel, Ack)}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("new history (-want +got):\n%s", d)
	}
	if n := len(f.calls()[0].Contents); n != 5 {
		t.Errorf("summary request has %d contents, want the 4 turns and the anchor", n)
	}
}

func TestCompressForced(t *testing.T) {
	f := summaries()
	got, info, err := compress(t, testConfig(t, f), fourTurns, 100, true, false)
	if err != nil || info.Status != StatusCompressed || got == nil {
		t.Fatalf("got %v, %+v, %v; want COMPRESSED", got, info, err)
	}
	// Forcing also overrides an earlier failure.
	f = summaries()
	if _, info, _ := compress(t, testConfig(t, f), fourTurns, 100, true, true); info.Status != StatusCompressed || len(f.calls()) != 2 {
		t.Errorf("forced after a failure: %s with %d calls, want COMPRESSED with 2", info.Status, len(f.calls()))
	}
}

func TestCompressVerificationFallsBack(t *testing.T) {
	f := newFake(reply{text: "Initial Summary"}, reply{text: "   "})
	got, info, err := compress(t, testConfig(t, f), fourTurns, 600_000, false, false)
	if err != nil || info.Status != StatusCompressed {
		t.Fatalf("got %+v, %v", info, err)
	}
	if s := got[0].Parts[0].Text; s != "Initial Summary" {
		t.Errorf("summary = %q, want the initial one", s)
	}
}

func TestCompressIgnoresThoughts(t *testing.T) {
	caller := func(_ context.Context, req *model.LLMRequest) (*model.LLMResponse, error) {
		return &model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
			{Text: "thinking", Thought: true}, {Text: " <state_snapshot>a"}, {Text: "b</state_snapshot>\n"},
		}}}, nil
	}
	cfg := Config{Model: testModel, Caller: caller, TempDir: t.TempDir()}
	got, _, err := compress(t, cfg, fourTurns, 600_000, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if s := got[0].Parts[0].Text; s != "<state_snapshot>ab</state_snapshot>" {
		t.Errorf("summary = %q", s)
	}
}

func TestCompressEmptySummary(t *testing.T) {
	f := newFake(reply{text: "   "})
	cfg := testConfig(t, f)
	cfg.TokenLimit = func(string) int { return 1000 }
	got, info, err := compress(t, cfg, fourTurns, 800, false, false)
	if err != nil || got != nil {
		t.Fatalf("got %v, %v; want nil history", got, err)
	}
	if want := (Info{OriginalTokens: 800, NewTokens: 800, Status: StatusFailedEmptySummary}); info != want {
		t.Errorf("info = %+v, want %+v", info, want)
	}
}

func TestCompressInflated(t *testing.T) {
	f := newFake(reply{text: strings.Repeat("a", 1000)})
	got, info, err := compress(t, testConfig(t, f), fourTurns, 100, true, false)
	if err != nil || got != nil {
		t.Fatalf("got %v, %v; want nil history", got, err)
	}
	// 1,000 characters of summary and the acknowledgement: 250 + 10.
	if want := (Info{OriginalTokens: 100, NewTokens: 260, Status: StatusFailedInflatedTokenCount}); info != want {
		t.Errorf("info = %+v, want %+v", info, want)
	}
}

func TestCompressAnchorsOnPreviousSnapshot(t *testing.T) {
	f := summaries()
	cfg := testConfig(t, f)
	cfg.TokenLimit = func(string) int { return 1000 }
	build := func() []*genai.Content {
		h := fourTurns()
		h[0] = text(genai.RoleUser, "<state_snapshot>old</state_snapshot>")
		return h
	}
	if _, _, err := compress(t, cfg, build, 800, false, false); err != nil {
		t.Fatal(err)
	}
	contents := f.calls()[0].Contents
	want := "A previous <state_snapshot> exists in the history. You MUST integrate all still-relevant information from that snapshot into the new one, updating it with the more recent events. Do not lose established constraints or critical knowledge.\n\nFirst, reason in your scratchpad. Then, generate the updated <state_snapshot>."
	if got := contents[len(contents)-1].Parts[0].Text; got != want {
		t.Errorf("anchor = %q", got)
	}
}

func TestCompressPromptAndUtilityModel(t *testing.T) {
	f := summaries()
	cfg := testConfig(t, f)
	cfg.Model = "gemini:gemini-3.1-pro-preview"
	cfg.ApprovedPlanPath = "/custom/plan/path.md"
	if _, _, err := compress(t, cfg, fourTurns, 600_000, false, false); err != nil {
		t.Fatal(err)
	}
	req := f.calls()[0]
	if req.Model != "gemini-3-pro-preview" {
		t.Errorf("utility model = %q, want gemini-3-pro-preview", req.Model)
	}
	sys := req.Config.SystemInstruction.Parts[0].Text
	if !strings.Contains(sys, "### APPROVED PLAN PRESERVATION") || !strings.Contains(sys, "/custom/plan/path.md") {
		t.Errorf("system instruction lacks the plan section")
	}

	f = summaries()
	cfg = testConfig(t, f)
	cfg.UtilityModel = "gemini-2.5-flash-lite"
	if _, _, err := compress(t, cfg, fourTurns, 600_000, false, false); err != nil {
		t.Fatal(err)
	}
	req = f.calls()[0]
	if req.Model != "gemini-2.5-flash-lite" {
		t.Errorf("utility model = %q, want the configured one", req.Model)
	}
	if strings.Contains(req.Config.SystemInstruction.Parts[0].Text, "APPROVED PLAN") {
		t.Errorf("plan section without a plan")
	}
}

func TestCompressCallerError(t *testing.T) {
	boom := errors.New("boom")
	for _, replies := range [][]reply{{{err: boom}}, {{text: "Initial Summary"}, {err: boom}}} {
		f := newFake(replies...)
		got, info, err := compress(t, testConfig(t, f), fourTurns, 600_000, false, false)
		if !errors.Is(err, boom) {
			t.Errorf("err = %v, want boom", err)
		}
		if got != nil {
			t.Errorf("new history %v, want nil", got)
		}
		if want := (Info{OriginalTokens: 600_000, NewTokens: 600_000, Status: StatusNoop}); info != want {
			t.Errorf("info = %+v, want %+v", info, want)
		}
	}
}

func TestCompressConfigErrors(t *testing.T) {
	f := summaries()
	for name, cfg := range map[string]Config{
		"no caller":          {TempDir: t.TempDir()},
		"no temp dir":        {Caller: f.call},
		"negative threshold": {Caller: f.call, TempDir: t.TempDir(), Threshold: -1},
	} {
		if _, _, err := Compress(context.Background(), cfg, fourTurns(), 1, true, false); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// budgetHistory is gemini-cli's reverse-token-budget test history: two
// 170,000-character grep results, each over the 50,000-token budget alone
// (42,500 tokens plus the older one's).
func budgetHistory() []*genai.Content {
	large := strings.Repeat("a", 170_000)
	return []*genai.Content{
		text(genai.RoleUser, "old msg"),
		text(genai.RoleModel, "old resp"),
		text(genai.RoleUser, "msg 1"),
		fr("grep", map[string]any{"content": large}),
		text(genai.RoleModel, "resp 2"),
		fr("grep", map[string]any{"content": large}),
	}
}

var spillName = regexp.MustCompile(`^grep_compression_[0-9a-f]{16}\.txt$`)

func TestCompressTruncatesOlderFunctionResponses(t *testing.T) {
	f := summaries()
	cfg := testConfig(t, f)
	got, info, err := compress(t, cfg, budgetHistory, 600_000, true, false)
	if err != nil || info.Status != StatusCompressed {
		t.Fatalf("got %+v, %v", info, err)
	}
	kept := got[2:]
	if len(kept) != 4 {
		t.Fatalf("kept %d turns, want 4", len(kept))
	}
	older := kept[1].Parts[0].FunctionResponse
	out, _ := older.Response["output"].(string)
	if !strings.HasPrefix(out, "Output too large. Showing first 8,000 and last 32,000 characters. For full output see: ") {
		t.Errorf("older response not truncated: %.120q", out)
	}
	if older.Name != "grep" || len(older.Response) != 1 {
		t.Errorf("truncated response = %s %v keys", older.Name, len(older.Response))
	}
	// The newest response is within the budget and kept whole.
	if d := cmp.Diff(budgetHistory()[5], kept[3]); d != "" {
		t.Errorf("newest response changed (-want +got):\n%s", d)
	}

	dir := filepath.Join(cfg.TempDir, masking.ToolOutputsDir)
	files, err := os.ReadDir(dir)
	if err != nil || len(files) != 1 || !spillName.MatchString(files[0].Name()) {
		t.Fatalf("spill files = %v, %v; want one grep_compression_<hash>.txt", files, err)
	}
	path := filepath.Join(dir, files[0].Name())
	if !strings.Contains(out, "For full output see: "+path+"\n") {
		t.Errorf("message does not name %s", path)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != strings.Repeat("a", 170_000) {
		t.Errorf("spilled %d bytes, %v; want the whole output", len(b), err)
	}
}

func TestCompressTruncatedJSONResponse(t *testing.T) {
	f := summaries()
	cfg := testConfig(t, f)
	build := func() []*genai.Content {
		h := budgetHistory()
		// Neither output nor content: the indented JSON is truncated.
		h[3] = fr("grep", map[string]any{"lines": strings.Repeat("b", 170_000), "n": 2.0})
		return h
	}
	got, _, err := compress(t, cfg, build, 600_000, true, false)
	if err != nil {
		t.Fatal(err)
	}
	out := got[3].Parts[0].FunctionResponse.Response["output"].(string)
	if !strings.Contains(out, "For full output see: ") || !strings.Contains(out, "{\n  \"lines\": \"bbb") {
		t.Errorf("output = %.200q", out)
	}
}

func TestCompressKeepsResponseWhenSpillFails(t *testing.T) {
	f := summaries()
	cfg := testConfig(t, f)
	// A file where the directory should be makes every spill fail.
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.TempDir = blocker
	got, info, err := compress(t, cfg, budgetHistory, 600_000, true, false)
	if err != nil || info.Status != StatusCompressed {
		t.Fatalf("got %+v, %v", info, err)
	}
	if d := cmp.Diff(budgetHistory()[3:], got[2+1:]); d != "" {
		t.Errorf("kept tail changed (-want +got):\n%s", d)
	}
}

// TestCompressSummarisesOriginal follows gemini-cli's high-fidelity test:
// the summariser sees the untruncated history when it fits the window,
// while the kept tail is truncated.
func TestCompressSummarisesOriginal(t *testing.T) {
	massive := strings.Repeat("a", 300_000)
	build := func() []*genai.Content {
		return []*genai.Content{
			fr("grep", map[string]any{"content": massive}),
			text(genai.RoleUser, "msg 2"),
			text(genai.RoleModel, "resp 2"),
			text(genai.RoleUser, "preserved msg"),
			fr("massive_preserved", map[string]any{"content": massive}),
		}
	}
	f := summaries()
	got, info, err := compress(t, testConfig(t, f), build, 600_000, true, false)
	if err != nil || info.Status != StatusCompressed {
		t.Fatalf("got %+v, %v", info, err)
	}
	if d := cmp.Diff(build()[0], f.calls()[0].Contents[0]); d != "" {
		t.Errorf("summariser saw a changed response (-want +got):\n%s", d)
	}
	var preserved *genai.FunctionResponse
	for _, c := range got[2:] {
		if p := c.Parts[0]; p.FunctionResponse != nil && p.FunctionResponse.Name == "massive_preserved" {
			preserved = p.FunctionResponse
		}
	}
	if preserved == nil || !strings.HasPrefix(preserved.Response["output"].(string), "Output too large.") {
		t.Errorf("preserved response not truncated")
	}
}

// TestCompressSummarisesTruncated: when the original part to summarise
// exceeds the window, the summariser gets the truncated one.
func TestCompressSummarisesTruncated(t *testing.T) {
	build := func() []*genai.Content {
		return []*genai.Content{
			fr("grep", map[string]any{"content": strings.Repeat("a", 300_000)}),
			text(genai.RoleUser, "msg 2"),
			text(genai.RoleModel, "resp 2"),
		}
	}
	f := summaries()
	cfg := testConfig(t, f)
	cfg.TokenLimit = func(string) int { return 60_000 } // below the 75,000 tokens
	if _, info, err := compress(t, cfg, build, 1000, true, false); err != nil || info.Status != StatusCompressed {
		t.Fatalf("got %+v, %v", info, err)
	}
	out, _ := f.calls()[0].Contents[0].Parts[0].FunctionResponse.Response["output"].(string)
	if !strings.HasPrefix(out, "Output too large.") {
		t.Errorf("summariser saw the original response")
	}
}

func TestCompressAfterFailureTruncatesOnly(t *testing.T) {
	f := summaries()
	cfg := testConfig(t, f)
	got, info, err := compress(t, cfg, budgetHistory, 600_000, false, true)
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != StatusContentTruncated || info.NewTokens >= 600_000 || info.NewTokens != estimate(got) {
		t.Errorf("info = %+v, want CONTENT_TRUNCATED with the estimate", info)
	}
	if len(got) != len(budgetHistory()) {
		t.Fatalf("truncated history has %d turns, want %d", len(got), len(budgetHistory()))
	}
	if out, _ := got[3].Parts[0].FunctionResponse.Response["output"].(string); !strings.HasPrefix(out, "Output too large.") {
		t.Errorf("older response not truncated")
	}
	if d := cmp.Diff(budgetHistory()[5], got[5]); d != "" {
		t.Errorf("newest response changed (-want +got):\n%s", d)
	}
	if n := len(f.calls()); n != 0 {
		t.Errorf("%d utility calls, want none", n)
	}

	// Nothing to gain: the estimate is not below the last prompt's count.
	// fourTurns estimates at 4 tokens; 4 ≥ 0.5 × 8 passes the threshold.
	cfg.TokenLimit = func(string) int { return 8 }
	got, info, err = compress(t, cfg, fourTurns, 4, false, true)
	if err != nil || got != nil {
		t.Fatalf("got %v, %v; want nil history", got, err)
	}
	if want := (Info{OriginalTokens: 4, NewTokens: 4, Status: StatusNoop}); info != want {
		t.Errorf("info = %+v, want %+v", info, want)
	}
	if n := len(f.calls()); n != 0 {
		t.Errorf("%d utility calls, want none", n)
	}
}

func TestCompressNothingToSplit(t *testing.T) {
	// A single user turn: the only split point is 0, so there is nothing
	// to summarise.
	f := summaries()
	build := func() []*genai.Content { return []*genai.Content{text(genai.RoleUser, "hi")} }
	got, info, err := compress(t, testConfig(t, f), build, 600_000, true, false)
	if err != nil || got != nil || info.Status != StatusNoop {
		t.Errorf("got %v, %+v, %v; want NOOP", got, info, err)
	}
	if n := len(f.calls()); n != 0 {
		t.Errorf("%d utility calls, want none", n)
	}
}

func TestCompressCountsMediaWithCountTokens(t *testing.T) {
	build := func() []*genai.Content {
		h := fourTurns()
		return append(h, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
			genai.NewPartFromText("look"), {InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{1}}},
		}})
	}
	var counted [][]*genai.Content
	cfg := testConfig(t, summaries())
	cfg.CountTokens = func(_ context.Context, c []*genai.Content) (int, error) {
		counted = append(counted, c)
		return 42, nil
	}
	got, info, err := compress(t, cfg, build, 600_000, false, false)
	if err != nil || got == nil || info != (Info{OriginalTokens: 600_000, NewTokens: 42, Status: StatusCompressed}) {
		t.Fatalf("got %+v, %v; want the API's count", info, err)
	}
	if len(counted) != 1 || len(counted[0]) != 1 || len(counted[0][0].Parts) != 4 {
		t.Errorf("CountTokens got %v, want one user content with all four parts", counted)
	}

	// A failing count falls back to the estimate; text alone is never sent.
	cfg = testConfig(t, summaries())
	cfg.CountTokens = func(context.Context, []*genai.Content) (int, error) { return 0, errors.New("no") }
	got, info, err = compress(t, cfg, build, 600_000, false, false)
	if err != nil || info.NewTokens != estimate(got) || info.NewTokens < 3000 {
		t.Errorf("new tokens = %d, %v; want the estimate %d", info.NewTokens, err, estimate(got))
	}
	cfg = testConfig(t, summaries())
	cfg.CountTokens = func(context.Context, []*genai.Content) (int, error) {
		t.Error("CountTokens called for text")
		return 0, nil
	}
	if _, _, err := compress(t, cfg, fourTurns, 600_000, false, false); err != nil {
		t.Fatal(err)
	}
}

func TestStatusCode(t *testing.T) {
	for s, want := range map[Status]int{
		StatusCompressed: 1, StatusFailedInflatedTokenCount: 2, StatusFailedTokenCountError: 3,
		StatusFailedEmptySummary: 4, StatusNoop: 5, StatusContentTruncated: 6, "bogus": 0,
	} {
		if got := s.Code(); got != want {
			t.Errorf("%s.Code() = %d, want %d", s, got, want)
		}
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
