package runtime

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/compression"
	"github.com/agentry-dev/agentry/processors/conversation"
	"github.com/agentry-dev/agentry/sessions"
	"github.com/agentry-dev/agentry/tools"
)

func openTestStore(t *testing.T, path string) *sessions.Store {
	t.Helper()
	st, err := sessions.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// adkContinue is the user turn ADK appends when the history ends on a
// model turn.
const adkContinue = "Continue processing previous requests as instructed. Exit or provide a summary if no more outputs are needed."

// usageTurn is a text turn whose response reports promptTokens.
func usageTurn(text string, promptTokens int32) turn {
	tn := textTurn(text)
	tn.Chunks[0].UsageMetadata = &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: promptTokens, TotalTokenCount: promptTokens + 1}
	return tn
}

// TestRequestContentsMatchesADK pins the contents of a session's requests
// — the conversation processor's cached build — to a whole build of the
// stored events: tool calls with and without model ids, text turns, a
// continuation turn.
func TestRequestContentsMatchesADK(t *testing.T) {
	store := openTestStore(t, filepath.Join(t.TempDir(), "s.db"))
	b := newScript(
		callTurn("reading", fc("", "read", map[string]any{"n": 1.0})),
		callTurn("", fc("call-7", "read", map[string]any{"n": 2.0})),
		textTurn("done one"),
		textTurn("done two"),
	)
	var mu sync.Mutex
	var mismatches []string
	checks := 0
	check, err := plugin.New(plugin.Config{Name: "check", BeforeModelCallback: func(ctx agent.Context, req *model.LLMRequest) (*model.LLMResponse, error) {
		sess, err := store.Live(ctx, ctx.AppName(), ctx.UserID(), ctx.SessionID())
		if err != nil {
			return nil, err
		}
		mine := mustBuild(t, collect(sess.Events()))
		mu.Lock()
		defer mu.Unlock()
		checks++
		if d := cmp.Diff(req.Contents, mine); d != "" {
			mismatches = append(mismatches, d)
		}
		return nil, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	s := newTestSession(t, b, Config{
		SessionService: store, Plugins: []*plugin.Plugin{check},
		Tools: []tools.Tool{&fakeTool{ToolName: "read", ToolKind: tools.KindRead}},
	})
	run(t, s, "first")
	run(t, s, "second")
	if checks != 4 {
		t.Fatalf("%d model calls checked, want 4", checks)
	}
	for _, d := range mismatches {
		t.Errorf("the request's contents differ from a whole build (-request +whole):\n%s", d)
	}
	if got := mustBuild(t, collect(mustLive(t, store, s).Events())); len(got) == 0 || got[len(got)-1].Parts[0].Text != adkContinue {
		t.Errorf("a history ending on a model turn gets no continuation turn: %v", got)
	}
}

// TestCompressionRewritesSession runs gemini-cli's compression inside a
// session: once a response reports a prompt over half the window, the next
// model call summarises the older 70 %, the request and the stored session
// carry the summary, the acknowledgement and the kept tail, and the stream
// reports chat_compressed.
func TestCompressionRewritesSession(t *testing.T) {
	dir := t.TempDir()
	store := openTestStore(t, filepath.Join(dir, "s.db"))
	long := strings.Repeat("an old and long answer ", 200)
	b := newScript(
		usageTurn(long, 10),
		callTurn("", fc("call-1", "read", map[string]any{"path": "a.go"})),
		usageTurn("read it", 600),
		// The summary, then the verification.
		textTurn("<state_snapshot>draft</state_snapshot>"),
		textTurn("<state_snapshot>final</state_snapshot>"),
		textTurn("third answer"),
		textTurn("fourth answer"),
	)
	var hooks []string
	s := newTestSession(t, b, Config{
		SessionService: store, TempDir: dir,
		Tools: []tools.Tool{&fakeTool{ToolName: "read", ToolKind: tools.KindRead}},
		Compression: &CompressionConfig{
			Store:      store,
			TokenLimit: func(string) int { return 1000 },
			PreCompress: func(_ context.Context, trigger string) error {
				hooks = append(hooks, trigger)
				return errors.New("hook says no")
			},
		},
	})
	run(t, s, "first question")
	run(t, s, "second question")
	if len(hooks) != 0 {
		t.Fatalf("PreCompress ran below the threshold: %v", hooks)
	}
	evs := run(t, s, "third question")
	if d := cmp.Diff([]string{PreCompressAuto}, hooks); d != "" {
		t.Errorf("PreCompress triggers (-want +got):\n%s", d)
	}
	var compressed *Custom
	for _, ev := range find(evs, EventCustom) {
		if ev.Custom.Kind == CustomChatCompressed {
			compressed = ev.Custom
		}
	}
	if compressed == nil {
		t.Fatalf("no chat_compressed event in %v", types(evs))
	}
	if compressed.Data["originalTokenCount"] != 600 || compressed.Data["compressionStatus"] != 1 {
		t.Errorf("chat_compressed data = %v", compressed.Data)
	}

	reqs := b.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d model requests, want 6", len(reqs))
	}
	for i, r := range reqs[3:5] {
		if r.Model != "gemini-2.5-flash" {
			t.Errorf("utility call %d went to %s, want gemini-2.5-flash", i, r.Model)
		}
	}
	if first := reqs[3].Contents[0].Parts[0].Text; first != "first question" {
		t.Errorf("the summariser saw %q first, want the original history", first)
	}
	wantTexts := []string{
		"<state_snapshot>final</state_snapshot>", compression.Ack,
		"second question", "fc:read", "fr:read", "read it",
		"third question",
	}
	if d := cmp.Diff(wantTexts, summarize(reqs[5].Contents)); d != "" {
		t.Errorf("the chat request after compression (-want +got):\n%s", d)
	}
	// The stored session holds the same history, and the next turn builds
	// on it without compressing again.
	reopened := openTestStore(t, filepath.Join(dir, "s.db"))
	stored := mustBuild(t, collect(mustLive(t, reopened, s).Events()))
	if d := cmp.Diff(append(wantTexts, "third answer", adkContinue), summarize(stored)); d != "" {
		t.Errorf("the stored session after compression (-want +got):\n%s", d)
	}
	run(t, s, "fourth question")
	if len(hooks) != 1 {
		t.Errorf("compression attempted again right after compressing: %v", hooks)
	}
	if got := summarize(b.Requests()[6].Contents); got[0] != "<state_snapshot>final</state_snapshot>" || got[len(got)-1] != "fourth question" {
		t.Errorf("the next turn's request = %v", got)
	}
}

// TestCompressionFailureLeavesSession checks that a summariser that fails
// leaves the stored session and the request as they were, and that the
// turn goes on.
func TestCompressionFailureLeavesSession(t *testing.T) {
	dir := t.TempDir()
	store := openTestStore(t, filepath.Join(dir, "s.db"))
	b := newScript(
		usageTurn(strings.Repeat("long ", 500), 900),
		turn{Err: errors.New("summariser is down")},
		textTurn("second answer"),
	)
	s := newTestSession(t, b, Config{
		SessionService: store, TempDir: dir,
		Compression: &CompressionConfig{Store: store, TokenLimit: func(string) int { return 1000 }},
	})
	run(t, s, "first question")
	before := mustBuild(t, collect(mustLive(t, store, s).Events()))
	evs := run(t, s, "second question")
	if got := last(evs).AgentEnd; got == nil || got.Reason != EndCompleted {
		t.Fatalf("the turn did not complete: %v", types(evs))
	}
	reqs := b.Requests()
	wantReq := append(summarize(before[:len(before)-1]), "second question")
	if d := cmp.Diff(wantReq, summarize(reqs[2].Contents)); d != "" {
		t.Errorf("the request after a failed compression (-want +got):\n%s", d)
	}
	for _, ev := range find(evs, EventCustom) {
		if ev.Custom.Kind == CustomChatCompressed {
			t.Errorf("chat_compressed emitted for a failed compression")
		}
	}
}

func collect(evs session.Events) []*session.Event {
	var out []*session.Event
	for ev := range evs.All() {
		out = append(out, ev)
	}
	return out
}

func mustLive(t *testing.T, st *sessions.Store, s *Session) session.Session {
	t.Helper()
	sess, err := st.Live(context.Background(), s.cfg.appName, s.cfg.userID, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// mustBuild is the whole request-contents build of a session's events.
func mustBuild(t *testing.T, evs []*session.Event) []*genai.Content {
	t.Helper()
	out, err := conversation.Build("agentry", evs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSessionCompress forces a compression between prompts, as
// gemini-cli's /compress: below the threshold the history is summarised
// anyway through the plugin's path (the PreCompress hook says manual),
// the stored session is rewritten, chat_compressed is emitted, and the
// next prompt builds on the summary.
func TestSessionCompress(t *testing.T) {
	dir := t.TempDir()
	store := openTestStore(t, filepath.Join(dir, "s.db"))
	long := strings.Repeat("an old and long answer ", 200)
	b := newScript(
		usageTurn(long, 10),
		usageTurn("second answer", 20),
		usageTurn("third answer", 3000),
		textTurn("<state_snapshot>draft</state_snapshot>"),
		textTurn("<state_snapshot>final</state_snapshot>"),
		textTurn("fourth answer"),
	)
	var hooks []string
	s := newTestSession(t, b, Config{
		SessionService: store, TempDir: dir,
		Compression: &CompressionConfig{
			Store: store, TokenLimit: func(string) int { return 1_000_000 },
			PreCompress: func(_ context.Context, trigger string) error {
				hooks = append(hooks, trigger)
				return nil
			},
		},
	})
	run(t, s, "first question")
	run(t, s, "second question")
	run(t, s, "third question")
	if len(hooks) != 0 {
		t.Fatalf("compression attempted far below the threshold: %v", hooks)
	}
	info, err := s.Compress(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != compression.StatusCompressed || info.OriginalTokens != 3000 || info.NewTokens >= info.OriginalTokens {
		t.Errorf("Compress() = %+v, want COMPRESSED from 3000 tokens to fewer", info)
	}
	if d := cmp.Diff([]string{PreCompressManual}, hooks); d != "" {
		t.Errorf("PreCompress triggers (-want +got):\n%s", d)
	}
	evs := s.Events()
	lastEv := evs[len(evs)-1]
	if lastEv.Type != EventCustom || lastEv.Custom.Kind != CustomChatCompressed || lastEv.Custom.Data["originalTokenCount"] != 3000 {
		t.Errorf("last event = %+v, want chat_compressed", lastEv)
	}
	stored := summarize(mustBuild(t, collect(mustLive(t, store, s).Events())))
	if len(stored) < 2 || stored[0] != "<state_snapshot>final</state_snapshot>" || stored[1] != compression.Ack {
		t.Errorf("the stored session after /compress = %v", stored)
	}
	run(t, s, "fourth question")
	reqs := b.Requests()
	if got := summarize(reqs[len(reqs)-1].Contents); got[0] != "<state_snapshot>final</state_snapshot>" || got[len(got)-1] != "fourth question" {
		t.Errorf("the next prompt's request = %v", got)
	}
}

// TestCompressNothingToDo: a session with no history has nothing to
// compress, and says so without a model call.
func TestCompressNothingToDo(t *testing.T) {
	dir := t.TempDir()
	store := openTestStore(t, filepath.Join(dir, "s.db"))
	b := newScript()
	s := newTestSession(t, b, Config{SessionService: store, TempDir: dir, Compression: &CompressionConfig{Store: store}})
	info, err := s.Compress(t.Context())
	if err != nil || info.Status != compression.StatusNoop {
		t.Errorf("Compress() = %+v, %v; want NOOP", info, err)
	}
	if n := len(b.Requests()); n != 0 {
		t.Errorf("%d model calls", n)
	}
}

// TestCompressFailureReported: a summariser that fails makes Compress
// fail, the history unchanged.
func TestCompressFailureReported(t *testing.T) {
	dir := t.TempDir()
	store := openTestStore(t, filepath.Join(dir, "s.db"))
	b := newScript(
		usageTurn(strings.Repeat("long ", 500), 90),
		usageTurn("second", 95),
		turn{Err: errors.New("summariser is down")},
	)
	s := newTestSession(t, b, Config{SessionService: store, TempDir: dir, Compression: &CompressionConfig{Store: store}})
	run(t, s, "first question")
	run(t, s, "second question")
	before := summarize(mustBuild(t, collect(mustLive(t, store, s).Events())))
	if _, err := s.Compress(t.Context()); err == nil || !strings.Contains(err.Error(), "summariser is down") {
		t.Errorf("Compress() error = %v, want the summariser's", err)
	}
	if d := cmp.Diff(before, summarize(mustBuild(t, collect(mustLive(t, store, s).Events())))); d != "" {
		t.Errorf("the history changed after a failed compression (-before +after):\n%s", d)
	}
	for _, ev := range s.Events() {
		if ev.Type == EventCustom && ev.Custom.Kind == CustomChatCompressed {
			t.Error("chat_compressed emitted for a failed compression")
		}
	}
}

// TestCompressWithoutStore: a session on a store it cannot rewrite has no
// compression, and says why.
func TestCompressWithoutStore(t *testing.T) {
	s := newTestSession(t, newScript(), Config{})
	_, err := s.Compress(t.Context())
	if !errors.Is(err, ErrNoCompression) || !strings.Contains(err.Error(), "sqlite or postgres") {
		t.Errorf("Compress() = %v, want ErrNoCompression naming the stores", err)
	}
}

// TestCompressBusy: while a prompt runs (here parked on a confirmation)
// the session is busy and Compress refuses with ErrBusy; once it ends the
// session is idle again.
func TestCompressBusy(t *testing.T) {
	dir := t.TempDir()
	store := openTestStore(t, filepath.Join(dir, "s.db"))
	asked, answer := make(chan struct{}), make(chan Outcome)
	approver := approverFunc(func(ctx context.Context, _ ApprovalRequest) (Outcome, error) {
		close(asked)
		return <-answer, nil
	})
	b := newScript(callTurn("", fc("w", "write_file", nil)), textTurn("done"),
		textTurn("<state_snapshot>draft</state_snapshot>"), textTurn("<state_snapshot>final</state_snapshot>"))
	edit := &fakeTool{ToolName: "write_file", ToolKind: tools.KindEdit}
	s := newTestSession(t, b, Config{SessionService: store, TempDir: dir, Compression: &CompressionConfig{Store: store},
		Tools: []tools.Tool{edit}, Approver: approver})
	if err := s.Busy(); err != nil {
		t.Fatalf("a new session is busy: %v", err)
	}
	id, err := s.Send(t.Context(), TextMessage("write"))
	if err != nil {
		t.Fatal(err)
	}
	<-asked
	if err := s.Busy(); !errors.Is(err, ErrBusy) {
		t.Errorf("Busy() while parked on a confirmation = %v, want ErrBusy", err)
	}
	if _, err := s.Compress(t.Context()); !errors.Is(err, ErrBusy) {
		t.Errorf("Compress() while a prompt runs = %v, want ErrBusy", err)
	}
	answer <- ProceedOnce
	collectStream(t, s, id)
	if _, err := s.Compress(t.Context()); err != nil {
		t.Errorf("Compress() after the prompt ended = %v", err)
	}
	if err := s.Busy(); err != nil {
		t.Errorf("Busy() after the prompt ended = %v", err)
	}
}
