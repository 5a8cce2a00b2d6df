package tui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/tools"
)

func sentText(t *testing.T, s runtime.Send) []string {
	t.Helper()
	if s.Message == nil {
		t.Fatal("the send carries no message")
	}
	var out []string
	for _, p := range s.Message.Content {
		out = append(out, p.Text)
	}
	return out
}

func TestSubmitSendsPromptAndPrintsIt(t *testing.T) {
	s := newTestSession()
	h := newHarness(t, testConfig(s), 80, 24)
	h.submitScript("hello there", []runtime.Event{textEv("Hi!"), endEv(runtime.EndCompleted)})
	sends := s.sentMessages()
	if len(sends) != 1 {
		t.Fatalf("sends = %d, want 1", len(sends))
	}
	if got := sentText(t, sends[0]); len(got) != 1 || got[0] != "hello there" {
		t.Errorf("sent %q", got)
	}
	if !strings.Contains(h.scrollback(), "> hello there") || !strings.Contains(h.scrollback(), "Hi!") {
		t.Errorf("scrollback:\n%s", h.scrollback())
	}
	if h.m.turn != nil || h.m.busy() {
		t.Error("the turn is still running after agent_end")
	}
	if h.m.input.Value() != "" {
		t.Errorf("input = %q after submit", h.m.input.Value())
	}
	if h.m.lastAnswer != "Hi!" {
		t.Errorf("lastAnswer = %q", h.m.lastAnswer)
	}
}

func TestEmptyEnterSendsNothing(t *testing.T) {
	s := newTestSession()
	h := newHarness(t, testConfig(s), 80, 24)
	h.submit("   ")
	if n := len(s.sentMessages()); n != 0 {
		t.Errorf("sends = %d", n)
	}
}

func TestNewlineKeys(t *testing.T) {
	h := newHarness(t, testConfig(newTestSession()), 80, 24)
	h.typeText("a")
	h.send(keyCtrlJ)
	h.typeText("b")
	h.send(keyAltCR)
	h.typeText(`c\`)
	h.send(keyEnter)
	h.typeText("d")
	if got := h.m.input.Value(); got != "a\nb\nc\nd" {
		t.Errorf("input = %q", got)
	}
	if n := len(h.sess.sentMessages()); n != 0 {
		t.Errorf("sent %d messages", n)
	}
}

func TestExpandAndDisplayContent(t *testing.T) {
	s := newTestSession()
	cfg := testConfig(s)
	var expanded string
	cfg.Expand = func(_ context.Context, in string) ([]runtime.ContentPart, error) {
		expanded = in
		return []runtime.ContentPart{runtime.TextPart("look at @a.go"), runtime.TextPart("\n--- Content from referenced files ---")}, nil
	}
	h := newHarness(t, cfg, 80, 24)
	h.submitScript("look at @a.go", []runtime.Event{endEv(runtime.EndCompleted)})
	if expanded != "look at @a.go" {
		t.Errorf("Expand got %q", expanded)
	}
	sends := s.sentMessages()
	if got := sentText(t, sends[0]); len(got) != 2 {
		t.Errorf("parts = %q", got)
	}
	if sends[0].Message.DisplayContent != "look at @a.go" {
		t.Errorf("DisplayContent = %q", sends[0].Message.DisplayContent)
	}
	if !strings.Contains(h.scrollback(), "> look at @a.go") {
		t.Errorf("scrollback:\n%s", h.scrollback())
	}
}

func TestExpandErrorEndsTurn(t *testing.T) {
	s := newTestSession()
	cfg := testConfig(s)
	cfg.Expand = func(context.Context, string) ([]runtime.ContentPart, error) { return nil, errTest }
	h := newHarness(t, cfg, 80, 24)
	h.submit("read @x")
	if len(s.sentMessages()) != 0 || h.m.turn != nil {
		t.Fatal("a failed expansion still sent or left the turn running")
	}
	if !strings.Contains(h.scrollback(), "Exiting due to an error processing the @ command: test failure") {
		t.Errorf("scrollback:\n%s", h.scrollback())
	}
}

func TestHistoryWalk(t *testing.T) {
	s := newTestSession()
	h := newHarness(t, testConfig(s), 80, 24)
	h.m.hist.stored = []string{"stored newest", "stored older"}
	h.submitScript("first", []runtime.Event{endEv(runtime.EndCompleted)})
	h.submitScript("second", []runtime.Event{endEv(runtime.EndCompleted)})
	h.typeText("draft")
	for i, want := range []string{"second", "first", "stored newest", "stored older", "stored older"} {
		h.send(keyUp)
		if got := h.m.input.Value(); got != want {
			t.Errorf("Up #%d: input = %q, want %q", i+1, got, want)
		}
	}
	for i, want := range []string{"stored newest", "first", "second", "draft"} {
		h.send(keyDown)
		if got := h.m.input.Value(); got != want {
			t.Errorf("Down #%d: input = %q, want %q", i+1, got, want)
		}
	}
}

func TestHistoryUpInsideMultilineMovesCursor(t *testing.T) {
	h := newHarness(t, testConfig(newTestSession()), 80, 24)
	h.m.hist.stored = []string{"old"}
	h.typeText("line1\nline2")
	h.send(keyUp) // to line 1, not history
	if got := h.m.input.Value(); got != "line1\nline2" {
		t.Fatalf("input = %q", got)
	}
	h.send(keyUp)
	if got := h.m.input.Value(); got != "old" {
		t.Errorf("input = %q, want the history entry", got)
	}
}

type memHistory struct{ added []string }

func (m *memHistory) Add(p string) error { m.added = append(m.added, p); return nil }
func (m *memHistory) Entries() []string  { return nil }

func TestHistoryAdd(t *testing.T) {
	s := newTestSession()
	cfg := testConfig(s)
	mh := &memHistory{}
	cfg.History = mh
	h := newHarness(t, cfg, 80, 24)
	h.submitScript("remember me", []runtime.Event{endEv(runtime.EndCompleted)})
	if len(mh.added) != 1 || mh.added[0] != "remember me" {
		t.Errorf("added %q", mh.added)
	}
}

func TestTabCompletionCycles(t *testing.T) {
	cfg := testConfig(newTestSession())
	var asked []string
	cfg.Complete = func(in string) []string {
		asked = append(asked, in)
		return []string{"/resume", "/rewind"}
	}
	h := newHarness(t, cfg, 80, 24)
	h.typeText("/re")
	h.send(keyTab)
	if got := h.m.input.Value(); got != "/resume" {
		t.Errorf("first Tab: %q", got)
	}
	if !strings.Contains(h.view(), "/rewind") {
		t.Errorf("the candidates are not shown:\n%s", h.view())
	}
	h.send(keyTab)
	if got := h.m.input.Value(); got != "/rewind" {
		t.Errorf("second Tab: %q", got)
	}
	h.send(keyTab)
	if got := h.m.input.Value(); got != "/resume" {
		t.Errorf("third Tab: %q", got)
	}
	if len(asked) != 1 || asked[0] != "/re" {
		t.Errorf("Complete asked %q", asked)
	}
	h.typeText(" x")
	h.send(keyTab)
	if len(asked) != 2 || asked[1] != "/resume x" {
		t.Errorf("Complete asked %q", asked)
	}
	if got := h.m.input.Value(); got != "/resume /resume" {
		t.Errorf("a Tab after typing replaces the last token: %q", got)
	}
}

func TestPaste(t *testing.T) {
	s := newTestSession()
	h := newHarness(t, testConfig(s), 80, 24)
	h.send(tea.PasteMsg{Content: "small\r\npaste"})
	if got := h.m.input.Value(); got != "small\npaste" {
		t.Errorf("input = %q", got)
	}
	h.m.input.Reset()
	big := strings.Repeat("x\ty\n", 100)
	h.send(tea.PasteMsg{Content: big})
	if got := h.m.input.Value(); got != "[Pasted text #1: 101 lines]" {
		t.Errorf("input = %q", got)
	}
	h.typeText(" explain")
	h.sess.scripts = append(h.sess.scripts, []runtime.Event{endEv(runtime.EndCompleted)})
	h.send(keyEnter)
	if got := sentText(t, s.sentMessages()[0]); got[0] != big+" explain" {
		t.Errorf("sent %q…", got[0][:40])
	}
	if !strings.Contains(h.scrollback(), "> [Pasted text #1: 101 lines] explain") {
		t.Errorf("scrollback:\n%s", h.scrollback())
	}
}

func TestPasteCap(t *testing.T) {
	h := newHarness(t, testConfig(newTestSession()), 80, 24)
	h.send(tea.PasteMsg{Content: strings.Repeat("é", maxPaste)}) // 2 bytes a rune
	if len(h.m.pastes) != 1 {
		t.Fatalf("pastes = %d", len(h.m.pastes))
	}
	for _, p := range h.m.pastes {
		if len(p) > maxPaste || !strings.HasSuffix(p, "é") {
			t.Errorf("paste kept %d bytes ending %q", len(p), p[len(p)-2:])
		}
	}
	if !strings.Contains(h.m.notice, "cut to its first 1024 KiB") {
		t.Errorf("notice = %q", h.m.notice)
	}
}

func TestEscAbortsTurnAndSessionStaysUsable(t *testing.T) {
	s := newTestSession()
	h := newHarness(t, testConfig(s), 80, 24)
	h.hold = true
	h.submit("long task")
	h.events(textEv("Working on"))
	h.send(keyEsc)
	if len(s.aborts) != 1 || !errors.Is(s.aborts[0], runtime.ErrAborted) {
		t.Fatalf("aborts = %v", s.aborts)
	}
	if !strings.Contains(h.view(), "Cancelling") {
		t.Errorf("view:\n%s", h.view())
	}
	h.events(endEv(runtime.EndAborted))
	h.release()
	if h.m.turn != nil {
		t.Fatal("the turn still runs")
	}
	if !strings.Contains(h.scrollback(), "Working on") || !strings.Contains(h.scrollback(), "Request cancelled.") {
		t.Errorf("scrollback:\n%s", h.scrollback())
	}
	h.submitScript("next", []runtime.Event{textEv("ok"), endEv(runtime.EndCompleted)})
	if n := len(s.sentMessages()); n != 2 {
		t.Errorf("sends = %d, want 2", n)
	}
}

func TestCtrlCDuringTurnAborts(t *testing.T) {
	s := newTestSession()
	h := newHarness(t, testConfig(s), 80, 24)
	h.hold = true
	h.submit("task")
	h.send(keyCtrlC)
	if len(s.aborts) != 1 {
		t.Fatalf("aborts = %d", len(s.aborts))
	}
	if h.quit {
		t.Error("Ctrl+C during a turn quit")
	}
}

func TestCtrlCIdle(t *testing.T) {
	now := testNow
	cfg := testConfig(newTestSession())
	cfg.Now = func() time.Time { return now }
	h := newHarness(t, cfg, 80, 24)
	h.typeText("some text")
	h.send(keyCtrlC)
	if h.m.input.Value() != "" || h.quit {
		t.Fatalf("input %q, quit %v", h.m.input.Value(), h.quit)
	}
	h.send(keyCtrlC)
	if h.quit || !strings.Contains(h.view(), "Press Ctrl+C again to exit.") {
		t.Fatalf("first press on an empty prompt: quit %v, view:\n%s", h.quit, h.view())
	}
	now = now.Add(exitWindow + time.Millisecond)
	h.send(keyCtrlC)
	if h.quit {
		t.Fatal("a press after the window quit")
	}
	now = now.Add(exitWindow - time.Millisecond)
	h.send(keyCtrlC)
	if !h.quit {
		t.Fatal("a second press within the window did not quit")
	}
}

func TestCtrlD(t *testing.T) {
	h := newHarness(t, testConfig(newTestSession()), 80, 24)
	h.typeText("ab")
	h.send(tea.KeyPressMsg{Code: tea.KeyLeft})
	h.send(keyCtrlD)
	if h.quit || h.m.input.Value() != "a" {
		t.Fatalf("Ctrl+D on text: quit %v, input %q", h.quit, h.m.input.Value())
	}
	h.m.input.Reset()
	h.send(keyCtrlD)
	if !h.quit {
		t.Fatal("Ctrl+D on an empty prompt did not quit")
	}
}

func TestCtrlLClearsWhenIdleOnly(t *testing.T) {
	h := newHarness(t, testConfig(newTestSession()), 80, 24)
	h.send(keyCtrlL)
	if h.clears != 1 {
		t.Fatalf("clears = %d", h.clears)
	}
	h.hold = true
	h.submit("task")
	h.send(keyCtrlL)
	if h.clears != 1 {
		t.Fatal("the screen was cleared while a stream ran")
	}
	h.events(endEv(runtime.EndCompleted))
	h.release()
	if h.clears != 2 {
		t.Errorf("clears = %d after the turn, want 2", h.clears)
	}
}

func TestThoughts(t *testing.T) {
	h := newHarness(t, testConfig(newTestSession()), 80, 24)
	h.hold = true
	h.submit("q")
	h.events(thoughtEv("**Planning** I will look\nat everything carefully."))
	if v := h.view(); !strings.Contains(v, "✦ Planning (Ctrl+T shows thoughts)") || strings.Contains(v, "carefully") {
		t.Errorf("collapsed thought, view:\n%s", v)
	}
	h.events(textEv("Answer."))
	if sb := h.scrollback(); !strings.Contains(sb, "✦ Planning") || strings.Contains(sb, "carefully") {
		t.Errorf("collapsed thought, scrollback:\n%s", sb)
	}
	h.send(keyCtrlT)
	h.events(thoughtEv("Second thought, in full."), textEv("More."))
	if sb := h.scrollback(); !strings.Contains(sb, "✦ Second thought, in full.") {
		t.Errorf("shown thought, scrollback:\n%s", sb)
	}
}

func TestModelTextEscapesAreRemoved(t *testing.T) {
	h := newHarness(t, testConfig(newTestSession()), 80, 24)
	h.submitScript("q", []runtime.Event{textEv("safe \x1b]52;c;ZXZpbA==\x07text \x1b[2Jend"), endEv(runtime.EndCompleted)})
	for _, raw := range h.raw {
		if strings.Contains(raw, "\x1b]52") || strings.Contains(raw, "\x1b[2J") {
			t.Errorf("an escape of the model reached the terminal: %q", raw)
		}
	}
	if !strings.Contains(h.scrollback(), "safe text end") {
		t.Errorf("scrollback:\n%s", h.scrollback())
	}
}

func TestLongAnswerIsPrintedBlockByBlock(t *testing.T) {
	h := newHarness(t, testConfig(newTestSession()), 80, 24)
	h.hold = true
	h.submit("q")
	for i := 0; i < 50; i++ {
		h.events(textEv("Paragraph number " + strings.Repeat("x", i%7) + " ends here.\n\n"))
	}
	h.events(textEv("The last one is still"))
	if n := strings.Count(h.scrollback(), "ends here."); n != 50 {
		t.Errorf("%d completed paragraphs printed, want 50", n)
	}
	v := h.view()
	if strings.Contains(v, "ends here") || !strings.Contains(v, "The last one is still") {
		t.Errorf("the live region holds more than the open block:\n%s", v)
	}
}

func TestResizeReflowsLiveBlock(t *testing.T) {
	h := newHarness(t, testConfig(newTestSession()), 120, 40)
	h.hold = true
	h.submit("q")
	h.events(textEv(strings.Repeat("word ", 30)))
	wide := lineCount(h.view())
	h.send(tea.WindowSizeMsg{Width: 50, Height: 20})
	if narrow := lineCount(h.view()); narrow <= wide {
		t.Errorf("lines at 50 columns %d, at 120 %d", narrow, wide)
	}
	for _, l := range strings.Split(h.view(), "\n") {
		if len([]rune(l)) > 50 {
			t.Errorf("line wider than 50: %q", l)
		}
	}
}

func TestToolStatusAndOutput(t *testing.T) {
	h := newHarness(t, testConfig(newTestSession()), 80, 24)
	h.hold = true
	h.submit("q")
	h.events(toolReqEv("c1", "run_shell_command", "Shell", "make", nil))
	if !strings.Contains(h.view(), "Shell make (pending)") {
		t.Errorf("pending, view:\n%s", h.view())
	}
	h.m.mb.push(toolExecutingMsg{"c1"})
	h.run(nil)
	if strings.Contains(h.view(), "(pending)") {
		t.Errorf("running, view:\n%s", h.view())
	}
	h.events(toolUpdateEv("c1", "step 1\r\nprogress 10%\rprogress 99%\n\x1b[31mred\x1b[0m\n"))
	v := h.view()
	if !strings.Contains(v, "progress 99%") || strings.Contains(v, "progress 10%") || !strings.Contains(v, "│ red") {
		t.Errorf("output, view:\n%s", v)
	}
	h.events(toolRespEv("c1", "run_shell_command", nil, false))
	if strings.Contains(h.view(), "make") {
		t.Errorf("the finished tool stays live:\n%s", h.view())
	}
	if sb := h.scrollback(); !strings.Contains(sb, "✓ Shell make") || !strings.Contains(sb, "progress 99%") {
		t.Errorf("scrollback:\n%s", sb)
	}
}

func TestExecutingBeforeRequest(t *testing.T) {
	h := newHarness(t, testConfig(newTestSession()), 80, 24)
	h.hold = true
	h.submit("q")
	h.m.mb.push(toolExecutingMsg{"c1"})
	h.run(nil)
	h.events(toolReqEv("c1", "read_file", "ReadFile", "a.go", nil))
	if strings.Contains(h.view(), "(pending)") {
		t.Errorf("view:\n%s", h.view())
	}
}

func TestErrorsWarningsAndCustomEvents(t *testing.T) {
	h := newHarness(t, testConfig(newTestSession()), 80, 24)
	h.submitScript("q", []runtime.Event{
		{Type: runtime.EventCustom, Custom: &runtime.Custom{Kind: runtime.CustomModelRetry, Data: map[string]any{"message": "Trying again in 5 seconds…"}}},
		{Type: runtime.EventCustom, Custom: &runtime.Custom{Kind: runtime.CustomModelFallback, Data: map[string]any{"message": "Switched to flash"}}},
		{Type: runtime.EventCustom, Custom: &runtime.Custom{Kind: runtime.CustomChatCompressed, Data: map[string]any{"originalTokenCount": 1000, "newTokenCount": 200}}},
		{Type: runtime.EventError, Error: &runtime.ErrorData{Message: "Loop detected, stopping execution"}},
		{Type: runtime.EventError, Error: &runtime.ErrorData{Message: "quota exhausted", Fatal: true}},
		endEv(runtime.EndFailed),
	})
	sb := h.scrollback()
	for _, want := range []string{"Trying again in 5 seconds…", "⚠ Switched to flash", "Chat history compressed from 1000 to 200 tokens.",
		"⚠ Loop detected, stopping execution", "✕ quota exhausted"} {
		if !strings.Contains(sb, want) {
			t.Errorf("scrollback lacks %q:\n%s", want, sb)
		}
	}
	if h.m.turn != nil {
		t.Error("the turn still runs")
	}
}

func TestFooterContextLeftAndModel(t *testing.T) {
	h := newHarness(t, testConfig(newTestSession()), 120, 40)
	h.submitScript("q", []runtime.Event{
		{Type: runtime.EventSessionUpdate, SessionUpdate: &runtime.SessionUpdate{Model: "gemini-2.5-flash"}},
		usageEv("gemini-2.5-flash", 400_000),
		endEv(runtime.EndCompleted),
	})
	if f := h.view(); !strings.Contains(f, "gemini-2.5-flash · default · 60% context left · session 3f2a9c1e") {
		t.Errorf("footer:\n%s", f)
	}
	cfg := testConfig(newTestSession())
	cfg.ContextWindow = nil
	h = newHarness(t, cfg, 120, 40)
	if strings.Contains(h.view(), "context left") {
		t.Error("context left shown without ContextWindow")
	}
}

func TestQueuedPromptRunsAfterTurn(t *testing.T) {
	s := newTestSession()
	h := newHarness(t, testConfig(s), 80, 24)
	h.hold = true
	h.submit("first")
	h.submit("second")
	if n := len(s.sentMessages()); n != 1 {
		t.Fatalf("sends = %d while the first turn runs", n)
	}
	if !strings.Contains(h.view(), "Queued: second") {
		t.Errorf("view:\n%s", h.view())
	}
	h.events(endEv(runtime.EndCompleted))
	h.release()
	sends := s.sentMessages()
	if len(sends) != 2 || sentText(t, sends[1])[0] != "second" {
		t.Fatalf("sends = %d", len(sends))
	}
}

func TestEscPutsQueuedPromptBack(t *testing.T) {
	h := newHarness(t, testConfig(newTestSession()), 80, 24)
	h.hold = true
	h.submit("first")
	h.submit("second")
	h.send(keyEsc)
	if len(h.m.queued) != 0 || h.m.input.Value() != "second" {
		t.Errorf("queued %d, input %q", len(h.m.queued), h.m.input.Value())
	}
}

// Slash commands.

func TestQuitCommands(t *testing.T) {
	for _, c := range []string{"/quit", "/exit"} {
		h := newHarness(t, testConfig(newTestSession()), 80, 24)
		h.submit(c)
		if !h.quit {
			t.Errorf("%s did not quit", c)
		}
	}
}

func TestClearSwitchesAndClears(t *testing.T) {
	cfg := testConfig(newTestSession())
	next := &fakeSession{id: "9999aaaa-new", model: "gemini-2.5-flash"}
	var ids []string
	cfg.Switch = func(_ context.Context, id string) (Session, error) {
		ids = append(ids, id)
		return next, nil
	}
	h := newHarness(t, cfg, 120, 24)
	h.hold = true
	h.submit("task")
	h.submit("/clear")
	if len(ids) != 0 || !strings.Contains(h.m.notice, "/clear cannot run while") {
		t.Fatalf("ids %q, notice %q", ids, h.m.notice)
	}
	h.events(endEv(runtime.EndCompleted))
	h.release()
	h.submit("/clear")
	if len(ids) != 1 || ids[0] != "" || h.clears != 1 {
		t.Fatalf("ids %q, clears %d", ids, h.clears)
	}
	if h.m.session != next || !strings.Contains(h.view(), "session 9999aaaa") {
		t.Errorf("footer:\n%s", h.view())
	}
	h.submit("/new") // gemini-cli's alias
	if len(ids) != 2 || ids[1] != "" || h.clears != 2 {
		t.Fatalf("/new: ids %q, clears %d", ids, h.clears)
	}
}

// TestBuiltins: Builtins lists the terminal's own commands with their
// aliases, and a copy: a driver cannot change them.
func TestBuiltins(t *testing.T) {
	b := Builtins()
	names := map[string][]string{}
	for _, c := range b {
		names[c.Name] = c.Aliases
	}
	for name, aliases := range map[string][]string{"clear": {"new"}, "quit": {"exit"}, "help": {"?"}, "copy": nil, "resume": nil, "rewind": nil} {
		got, ok := names[name]
		if !ok || !slices.Equal(got, aliases) {
			t.Errorf("/%s: present %v, aliases %q, want %q", name, ok, got, aliases)
		}
	}
	b[0].Name = "changed"
	if Builtins()[0].Name == "changed" {
		t.Error("Builtins returns the terminal's own table")
	}
}

func TestRewindPicker(t *testing.T) {
	cfg := testConfig(newTestSession())
	cfg.Messages = func(context.Context) ([]Message, error) {
		return []Message{
			{ID: "m1", Role: "user", Text: "first prompt"},
			{ID: "m2", Role: "model", Text: "answer"},
			{ID: "m3", Role: "user", Text: "second prompt"},
		}, nil
	}
	var rewound string
	cfg.Rewind = func(_ context.Context, id string) error {
		rewound = id
		return nil
	}
	h := newHarness(t, cfg, 80, 24)
	h.submit("/rewind")
	v := h.view()
	if !strings.Contains(v, "Rewind to before which prompt?") || !strings.Contains(v, "● 2. second prompt") || strings.Contains(v, "answer") {
		t.Fatalf("picker:\n%s", v)
	}
	h.send(keyUp)
	h.send(keyEnter)
	if rewound != "m1" {
		t.Errorf("rewound to %q", rewound)
	}
	if h.m.input.Value() != "first prompt" || h.m.picker != nil {
		t.Errorf("input %q, picker open %v", h.m.input.Value(), h.m.picker != nil)
	}
}

func TestResumePickerAndPrintsConversation(t *testing.T) {
	cfg := testConfig(newTestSession())
	resumed := &fakeSession{id: "abcdef12-old", model: "gemini-2.5-pro"}
	cfg.Sessions = func(context.Context) ([]SessionInfo, error) {
		return []SessionInfo{{ID: "abcdef12-old", Title: "Fix the build", Updated: testNow, Messages: 4}}, nil
	}
	var switched []string
	cfg.Switch = func(_ context.Context, id string) (Session, error) {
		switched = append(switched, id)
		return resumed, nil
	}
	calls := 0
	cfg.Messages = func(context.Context) ([]Message, error) {
		calls++
		if calls == 1 {
			return nil, nil // nothing stored for the new session
		}
		return []Message{{ID: "m1", Role: "user", Text: "why does it fail?"}, {ID: "m2", Role: "model", Text: "Because of **this**."}}, nil
	}
	h := newHarness(t, cfg, 80, 24)
	h.submit("/resume")
	if v := h.view(); !strings.Contains(v, "Fix the build") || !strings.Contains(v, "4 messages") {
		t.Fatalf("picker:\n%s", v)
	}
	h.send(keyEnter)
	if len(switched) != 1 || switched[0] != "abcdef12-old" {
		t.Fatalf("switched %q", switched)
	}
	sb := h.scrollback()
	if !strings.Contains(sb, "Resumed session abcdef12-old.") || !strings.Contains(sb, "> why does it fail?") || !strings.Contains(sb, "Because of this.") {
		t.Errorf("scrollback:\n%s", sb)
	}
	h.submit("/resume other-id")
	if len(switched) != 2 || switched[1] != "other-id" {
		t.Errorf("switched %q", switched)
	}
}

func TestCopy(t *testing.T) {
	h := newHarness(t, testConfig(newTestSession()), 80, 24)
	h.submit("/copy")
	if len(h.clips) != 0 || !strings.Contains(h.m.notice, "No output in history.") {
		t.Fatalf("clips %q, notice %q", h.clips, h.m.notice)
	}
	h.submitScript("q", []runtime.Event{textEv("Before the tool."), toolReqEv("c1", "ls", "ReadFolder", ".", nil),
		toolRespEv("c1", "ls", nil, false), textEv("The **answer**."), endEv(runtime.EndCompleted)})
	h.submit("/copy")
	if len(h.clips) != 1 || h.clips[0] != "The **answer**." {
		t.Errorf("clips %q", h.clips)
	}
}

func TestRunCommand(t *testing.T) {
	cfg := testConfig(newTestSession())
	cfg.ParseCommand = func(line string) ([]string, string, bool) {
		f := strings.Fields(strings.TrimPrefix(line, "/"))
		if f[0] != "stats" && f[0] != "fail" {
			return nil, "", false
		}
		return f[:1], strings.Join(f[1:], " "), true
	}
	var ran [][]string
	cfg.RunCommand = func(_ context.Context, path []string, args string, out func(string)) error {
		ran = append(ran, append(path, args))
		if path[0] == "fail" {
			return errors.New("it broke")
		}
		out("Tokens: 1200\n")
		return nil
	}
	h := newHarness(t, cfg, 80, 24)
	h.submit("/stats model")
	if len(ran) != 1 || strings.Join(ran[0], "|") != "stats|model" {
		t.Fatalf("ran %q", ran)
	}
	if !strings.Contains(h.scrollback(), "Tokens: 1200") {
		t.Errorf("scrollback:\n%s", h.scrollback())
	}
	h.submit("/fail")
	if !strings.Contains(h.scrollback(), "it broke") {
		t.Errorf("scrollback:\n%s", h.scrollback())
	}
	if last := h.raw[len(h.raw)-1]; !strings.Contains(last, "\x1b[31m") {
		t.Errorf("the error is not red: %q", last)
	}
	h.submit("/nosuch")
	if !strings.Contains(h.scrollback(), "Unknown command: /nosuch") {
		t.Errorf("scrollback:\n%s", h.scrollback())
	}
	// While a turn runs, RunCommand decides.
	h.hold = true
	h.submit("task")
	h.submit("/stats")
	if len(ran) != 3 {
		t.Errorf("ran %d commands", len(ran))
	}
	// Double slashes are prompts.
	h.release()
	h.sess.scripts = nil
	h.submit("//not a command")
	sends := h.sess.sentMessages()
	if got := sentText(t, sends[len(sends)-1]); got[0] != "//not a command" {
		t.Errorf("sent %q", got)
	}
}

func TestShellCommand(t *testing.T) {
	s := newTestSession()
	cfg := testConfig(s)
	var got []string
	cfg.Shell = func(_ context.Context, command string, out func(string)) (string, error) {
		got = append(got, command)
		out("file1\nfile2\n")
		return "I ran the following shell command: " + command, nil
	}
	h := newHarness(t, cfg, 80, 24)
	h.submit("!ls -1")
	if len(got) != 1 || got[0] != "ls -1" {
		t.Fatalf("ran %q", got)
	}
	if sb := h.scrollback(); !strings.Contains(sb, "! ls -1") || !strings.Contains(sb, "file2") {
		t.Errorf("scrollback:\n%s", sb)
	}
	if len(s.sentMessages()) != 0 {
		t.Fatal("a ! command called the model")
	}
	if !h.m.shellMode {
		t.Error("typing ! on an empty prompt did not enter shell mode")
	}
	h.send(keyEsc)
	h.submitScript("what did it print?", []runtime.Event{endEv(runtime.EndCompleted)})
	parts := sentText(t, s.sentMessages()[0])
	if len(parts) != 2 || parts[0] != "I ran the following shell command: ls -1" || parts[1] != "what did it print?" {
		t.Errorf("parts %q", parts)
	}
	h.submitScript("again", []runtime.Event{endEv(runtime.EndCompleted)})
	if parts := sentText(t, s.sentMessages()[1]); len(parts) != 1 {
		t.Errorf("the shell result was sent twice: %q", parts)
	}
}

func TestShellModeToggle(t *testing.T) {
	cfg := testConfig(newTestSession())
	var got []string
	cfg.Shell = func(_ context.Context, command string, out func(string)) (string, error) {
		got = append(got, command)
		return "", nil
	}
	h := newHarness(t, cfg, 80, 24)
	h.typeText("!")
	if !h.m.shellMode || h.m.input.Value() != "" || !strings.Contains(h.view(), "shell mode") {
		t.Fatalf("shell mode %v, input %q", h.m.shellMode, h.m.input.Value())
	}
	h.submit("pwd")
	if len(got) != 1 || got[0] != "pwd" {
		t.Errorf("ran %q", got)
	}
	h.send(keyEsc)
	if h.m.shellMode {
		t.Error("Esc did not leave shell mode")
	}
}

func TestShellCancel(t *testing.T) {
	cfg := testConfig(newTestSession())
	started := make(chan struct{})
	cfg.Shell = func(ctx context.Context, command string, out func(string)) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	}
	h := newHarness(t, cfg, 80, 24)
	h.typeText("!sleep 100")
	_, c := h.m.Update(keyEnter)
	// The runner blocks until cancelled: run the commands on their own
	// goroutine and hand their messages back afterwards.
	msgs := make(chan []tea.Msg)
	go func() { msgs <- runAll(c) }()
	<-started
	h.send(keyEsc)
	for _, msg := range <-msgs {
		h.run(func() tea.Msg { return msg })
	}
	h.run(nil)
	if h.m.shell != nil || !strings.Contains(h.scrollback(), "Command was cancelled.") {
		t.Errorf("shell %v, scrollback:\n%s", h.m.shell, h.scrollback())
	}
}

// runAll runs a command tree and returns the messages it produced.
func runAll(c tea.Cmd) []tea.Msg {
	if c == nil {
		return nil
	}
	switch msg := c().(type) {
	case nil:
		return nil
	case tea.BatchMsg:
		var out []tea.Msg
		for _, cc := range msg {
			out = append(out, runAll(cc)...)
		}
		return out
	default:
		return []tea.Msg{msg}
	}
}

func TestResumeAtStartThenInitialPrompt(t *testing.T) {
	s := newTestSession()
	cfg := testConfig(s)
	cfg.Messages = func(context.Context) ([]Message, error) {
		return []Message{{Role: "user", Text: "earlier question"}, {Role: "model", Text: "earlier **answer**"}}, nil
	}
	cfg.InitialPrompt = "and now?"
	s.scripts = [][]runtime.Event{{textEv("now this"), endEv(runtime.EndCompleted)}}
	h := newHarness(t, cfg, 80, 24)
	sb := h.scrollback()
	i, j, k := strings.Index(sb, "> earlier question"), strings.Index(sb, "earlier answer"), strings.Index(sb, "> and now?")
	if i < 0 || j < i || k < j {
		t.Errorf("scrollback:\n%s", sb)
	}
	if n := len(s.sentMessages()); n != 1 {
		t.Errorf("sends = %d", n)
	}
}

func TestInitialPromptWithoutMessages(t *testing.T) {
	s := newTestSession()
	cfg := testConfig(s)
	cfg.InitialPrompt = "hi"
	h := newHarness(t, cfg, 80, 24)
	if n := len(s.sentMessages()); n != 1 {
		t.Errorf("sends = %d", n)
	}
	if h.quit {
		t.Error("the terminal quit after -i's prompt")
	}
}

// Dialogs.

func TestDialogAnswers(t *testing.T) {
	editReq := runtime.ApprovalRequest{CallID: "c1", Tool: "write_file", Kind: tools.KindEdit,
		Diff: &tools.FileDiff{Path: "/w/a.txt", Before: "a\n", After: "b\n"}}
	execReq := runtime.ApprovalRequest{CallID: "c1", Tool: "run_shell_command", DisplayName: "Shell", Kind: tools.KindExecute, Args: map[string]any{"command": "rm -rf build"}}
	mcpReq := runtime.ApprovalRequest{CallID: "c1", Tool: "s__t", Kind: tools.KindExecute, MCP: &runtime.MCPDetails{ServerName: "s", ToolName: "t"}}
	// security.disableAlwaysAllow: Allow once, then No.
	hidden := execReq
	hidden.AlwaysHidden = true
	// Without security.enablePermanentToolApproval: Allow once, for this
	// session, then No.
	noSave := execReq
	noSave.SaveHidden = true
	noSaveMCP := mcpReq
	noSaveMCP.SaveHidden = true
	for _, tc := range []struct {
		name string
		req  runtime.ApprovalRequest
		keys []tea.KeyPressMsg
		want runtime.Outcome
	}{
		{"enter allows once", editReq, []tea.KeyPressMsg{keyEnter}, runtime.ProceedOnce},
		{"down enter", editReq, []tea.KeyPressMsg{keyDown, keyEnter}, runtime.ProceedAlways},
		{"down up enter", execReq, []tea.KeyPressMsg{keyDown, keyUp, keyEnter}, runtime.ProceedOnce},
		{"number", execReq, []tea.KeyPressMsg{runeKey('2')}, runtime.ProceedAlways},
		{"esc", execReq, []tea.KeyPressMsg{keyEsc}, runtime.Cancel},
		{"last option", editReq, []tea.KeyPressMsg{runeKey('5')}, runtime.Cancel},
		{"save", editReq, []tea.KeyPressMsg{runeKey('3')}, runtime.ProceedAlwaysAndSave},
		{"save command", execReq, []tea.KeyPressMsg{runeKey('3')}, runtime.ProceedAlwaysAndSave},
		{"mcp tool", mcpReq, []tea.KeyPressMsg{runeKey('2')}, runtime.ProceedAlwaysTool},
		{"mcp server", mcpReq, []tea.KeyPressMsg{runeKey('3')}, runtime.ProceedAlwaysServer},
		{"mcp save", mcpReq, []tea.KeyPressMsg{runeKey('4')}, runtime.ProceedAlwaysAndSave},
		{"always hidden", hidden, []tea.KeyPressMsg{runeKey('2')}, runtime.Cancel},
		{"save hidden", noSave, []tea.KeyPressMsg{runeKey('3')}, runtime.Cancel},
		{"save hidden mcp", noSaveMCP, []tea.KeyPressMsg{runeKey('4')}, runtime.Cancel},
		{"out of range number", execReq, []tea.KeyPressMsg{runeKey('9'), keyEnter}, runtime.ProceedOnce},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testConfig(newTestSession()), 80, 24)
			a := h.openDialog(tc.req)
			for _, k := range tc.keys {
				h.send(k)
			}
			select {
			case ans := <-a.answer:
				if ans.outcome != tc.want {
					t.Errorf("outcome %q, want %q", ans.outcome, tc.want)
				}
			default:
				t.Fatal("no answer")
			}
			if h.m.dialog.a != nil || len(h.m.approvals) != 0 {
				t.Error("the dialog stays open")
			}
		})
	}
}

func TestDialogQueueAndWithdrawal(t *testing.T) {
	h := newHarness(t, testConfig(newTestSession()), 80, 24)
	a1 := h.openDialog(runtime.ApprovalRequest{CallID: "c1", Tool: "t1", Kind: tools.KindExecute, Args: map[string]any{"command": "one"}})
	a2 := &approval{req: runtime.ApprovalRequest{CallID: "c2", Tool: "t2", Kind: tools.KindExecute, Args: map[string]any{"command": "two"}}, answer: make(chan approvalAnswer, 1)}
	a3 := &approval{req: runtime.ApprovalRequest{CallID: "c3", Tool: "t3", Kind: tools.KindFetch}, answer: make(chan approvalAnswer, 1)}
	h.m.mb.push(approvalMsg{a2})
	h.m.mb.push(approvalMsg{a3})
	h.run(nil)
	if v := h.view(); !strings.Contains(v, "(1 of 3)") || !strings.Contains(v, "one") {
		t.Fatalf("view:\n%s", v)
	}
	h.m.mb.push(approvalGoneMsg{a2})
	h.run(nil)
	h.send(keyEnter)
	if (<-a1.answer).outcome != runtime.ProceedOnce {
		t.Error("a1")
	}
	if h.m.dialog.a != a3 || !strings.Contains(h.view(), "Do you want to proceed?") {
		t.Fatalf("view:\n%s", h.view())
	}
	h.m.mb.push(approvalGoneMsg{a3})
	h.run(nil)
	if h.m.dialog.a != nil || !strings.Contains(h.view(), "Type your message") {
		t.Errorf("view:\n%s", h.view())
	}
	select {
	case <-a2.answer:
		t.Error("a withdrawn request was answered")
	default:
	}
}

func TestDialogCtrlCCancelsAndAborts(t *testing.T) {
	s := newTestSession()
	h := newHarness(t, testConfig(s), 80, 24)
	a := h.openDialog(runtime.ApprovalRequest{CallID: "c1", Tool: "t", Kind: tools.KindExecute})
	h.send(keyCtrlC)
	if (<-a.answer).outcome != runtime.Cancel || len(s.aborts) != 1 {
		t.Errorf("aborts %d", len(s.aborts))
	}
}

func TestModifyWithoutEditor(t *testing.T) {
	h := newHarness(t, testConfig(newTestSession()), 80, 24)
	h.openDialog(runtime.ApprovalRequest{CallID: "c1", Tool: "write_file", Kind: tools.KindEdit,
		Diff: &tools.FileDiff{Path: "/w/a.txt", Before: "a\n", After: "b\n"}})
	h.send(runeKey('4')) // Modify with external editor
	if !strings.Contains(h.view(), "No external editor is available. Please run /editor to configure one.") {
		t.Errorf("view:\n%s", h.view())
	}
	if h.m.dialog.a == nil {
		t.Error("the dialog closed")
	}
}

func TestModifyWithEditor(t *testing.T) {
	cfg := testConfig(newTestSession())
	cfg.Editor = "myeditor --wait"
	var modified string
	cfg.ModifyArgs = func(req runtime.ApprovalRequest, content string) (map[string]any, error) {
		modified = content
		return map[string]any{"file_path": req.Diff.Path, "content": content, "modified_by_user": true}, nil
	}
	h := newHarness(t, cfg, 80, 24)
	a := h.openDialog(runtime.ApprovalRequest{CallID: "c1", Tool: "write_file", Kind: tools.KindEdit,
		Diff: &tools.FileDiff{Path: "/w/a.txt", Before: "one\n", After: "two\n"}})
	h.send(runeKey('4')) // Modify with external editor
	if len(h.execs) != 1 {
		t.Fatalf("execs = %d", len(h.execs))
	}
	e := h.execs[0]
	if got := strings.Join(e.cmd.Args[:2], " "); got != "myeditor --wait" {
		t.Errorf("editor args %q", e.cmd.Args)
	}
	file := e.cmd.Args[2]
	dir := filepath.Dir(file)
	for path, want := range map[string]os.FileMode{dir: 0o700, file: 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s mode %v, want %v", path, fi.Mode().Perm(), want)
		}
	}
	if b, _ := os.ReadFile(file); string(b) != "two\n" {
		t.Errorf("the file holds %q", b)
	}
	if err := os.WriteFile(file, []byte("three\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.send(e.done(nil))
	if modified != "three\n" {
		t.Errorf("ModifyArgs got %q", modified)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the temp dir is left: %v", err)
	}
	if v := h.view(); !strings.Contains(v, "+three") || !strings.Contains(v, "-one") || !strings.Contains(v, "Apply this change?") {
		t.Errorf("view:\n%s", v)
	}
	h.send(keyEnter)
	ans := <-a.answer
	if ans.outcome != runtime.ProceedOnce || ans.args["content"] != "three\n" {
		t.Errorf("answer %+v", ans)
	}
}

func TestPastedBangLineRunsShell(t *testing.T) {
	cfg := testConfig(newTestSession())
	var got []string
	cfg.Shell = func(_ context.Context, command string, out func(string)) (string, error) {
		got = append(got, command)
		return "", nil
	}
	h := newHarness(t, cfg, 80, 24)
	h.send(tea.PasteMsg{Content: "!git log -1"})
	h.send(keyEnter)
	if len(got) != 1 || got[0] != "git log -1" || h.m.shellMode {
		t.Errorf("ran %q, shell mode %v", got, h.m.shellMode)
	}
}

func TestSmallTerminalKeepsFrameBound(t *testing.T) {
	for _, size := range [][2]int{{40, 10}, {30, 6}, {80, 8}} {
		h := newHarness(t, testConfig(newTestSession()), size[0], size[1])
		h.openDialog(runtime.ApprovalRequest{CallID: "c1", Tool: "write_file", Kind: tools.KindEdit,
			Diff: &tools.FileDiff{Path: "/w/a.txt", Before: strings.Repeat("old\n", 50), After: strings.Repeat("new\n", 50)}})
		h.events(textEv(strings.Repeat("streaming text ", 40)))
		if n := lineCount(h.m.View().Content); n > max(size[1]-frameSpare, 1) {
			t.Errorf("%dx%d: the live region has %d lines", size[0], size[1], n)
		}
	}
}

// TestSubmitPrompt: a command whose result is a prompt (an MCP prompt)
// sends its content as the user's turn, its typed line shown once; while
// a turn runs it is queued and sent after it.
func TestSubmitPrompt(t *testing.T) {
	cfg := testConfig(newTestSession())
	cfg.ParseCommand = func(line string) ([]string, string, bool) {
		return []string{"greet"}, strings.TrimSpace(strings.TrimPrefix(line, "/greet")), strings.HasPrefix(line, "/greet")
	}
	cfg.RunCommand = func(_ context.Context, _ []string, args string, _ func(string)) error {
		return &SubmitPrompt{Display: "/greet " + args, Content: []runtime.ContentPart{
			runtime.TextPart("Say hello to " + args + "."), {Type: runtime.PartMedia, Data: "cG5n", MimeType: "image/png"}}}
	}
	cfg.ListCommands = func() []Command { return []Command{{Name: "greet", Description: "[MCP] Greet someone", Args: "NAME"}} }
	h := newHarness(t, cfg, 80, 24)
	h.sess.scripts = [][]runtime.Event{{textEv("Hello, Ada!"), endEv(runtime.EndCompleted)}}
	h.submit("/greet Ada")
	sends := h.sess.sentMessages()
	if len(sends) != 1 {
		t.Fatalf("%d sends, want 1", len(sends))
	}
	m := sends[0].Message
	if len(m.Content) != 2 || m.Content[0].Text != "Say hello to Ada." || m.Content[1].MimeType != "image/png" || m.DisplayContent != "/greet Ada" {
		t.Errorf("sent %+v", m)
	}
	if sb := h.scrollback(); strings.Count(sb, "/greet Ada") != 1 || !strings.Contains(sb, "Hello, Ada!") {
		t.Errorf("scrollback:\n%s", sb)
	}
	if strings.Contains(h.scrollback(), "result is a prompt") {
		t.Error("the submission was shown as an error")
	}

	// Queued behind a running turn.
	h.hold = true
	h.submit("task")
	h.submit("/greet Bob")
	if n := len(h.sess.sentMessages()); n != 2 {
		t.Fatalf("%d sends while the turn runs, want 2", n)
	}
	h.release()
	sends = h.sess.sentMessages()
	if len(sends) != 3 || sends[2].Message.Content[0].Text != "Say hello to Bob." {
		t.Errorf("after the turn: %d sends", len(sends))
	}

	h.submit("/help")
	if !strings.Contains(h.scrollback(), "[MCP] Greet someone") {
		t.Errorf("/help does not list ListCommands':\n%s", h.scrollback())
	}
}
