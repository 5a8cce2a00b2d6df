package tui

import (
	"context"
	"errors"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/agentry-dev/agentry/runtime"
)

// inOrder reports whether each of want occurs in s after the one before.
func inOrder(t *testing.T, s string, want ...string) {
	t.Helper()
	at := 0
	for _, w := range want {
		i := strings.Index(s[at:], w)
		if i < 0 {
			t.Errorf("%q is missing, or not after %q, in:\n%s", w, s[:at], s)
			return
		}
		at += i + len(w)
	}
}

func TestRemoteTurnIsShownAsOwn(t *testing.T) {
	s := newTestSession()
	s.register("a2a-1", thoughtEv("**Looking** around"), textEv("The **remote** answer."),
		toolReqEv("c1", "read_file", "ReadFile", "a.go", nil), toolRespEv("c1", "read_file", nil, false),
		usageEv("gemini-2.5-flash", 1000), endEv(runtime.EndCompleted))
	h := newHarness(t, testConfig(s), 80, 24)
	h.remote("a2a-1", "A2A vscode", "hello from the editor")
	if h.m.turn != nil || h.m.busy() {
		t.Fatal("the remote turn still runs after its agent_end")
	}
	inOrder(t, h.scrollback(), "> [A2A vscode] hello from the editor", "✦ Looking", "The remote answer.", "✓ ReadFile a.go")
	if len(s.sentMessages()) != 0 {
		t.Error("a remote turn was sent again")
	}
	if got := s.callLog(); !slices.Equal(got, []string{"stream a2a-1"}) {
		t.Errorf("calls %q", got)
	}
	// The tag is styled on its own, apart from the prompt.
	tagged := regexp.MustCompile(`\x1b\[[0-9;]*m\[A2A vscode\]\x1b\[[0-9;]*m hello`)
	if !slices.ContainsFunc(h.raw, tagged.MatchString) {
		t.Errorf("no styled tag in %q", h.raw)
	}
	if h.m.modelName != "gemini-2.5-flash" || h.m.lastAnswer != "The **remote** answer." {
		t.Errorf("model %q, last answer %q", h.m.modelName, h.m.lastAnswer)
	}
}

func TestRemotePromptWrapsAsOwn(t *testing.T) {
	s := newTestSession()
	s.register("a2a-1", endEv(runtime.EndCompleted))
	h := newHarness(t, testConfig(s), 40, 24)
	h.remote("a2a-1", "A2A vscode", strings.Repeat("word ", 20)+"\nsecond line")
	lines := strings.Split(h.scrollback(), "\n")
	if !strings.HasPrefix(lines[0], "> [A2A vscode] word") {
		t.Fatalf("scrollback:\n%s", h.scrollback())
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "  ") || len([]rune(l)) > h.m.contentWidth() {
			t.Errorf("line %q is not wrapped as a prompt's", l)
		}
	}
	if lines[len(lines)-1] != "  second line" {
		t.Errorf("last line %q", lines[len(lines)-1])
	}
}

// TestRemoteTurnRunsBeforeQueuedPrompt: a remote turn that comes during an
// own turn is shown after it, and before a prompt typed during it, which
// is sent only then.
func TestRemoteTurnRunsBeforeQueuedPrompt(t *testing.T) {
	s := newTestSession()
	s.scripts = [][]runtime.Event{
		{textEv("Mine answered."), endEv(runtime.EndCompleted)},
		{textEv("Later answered."), endEv(runtime.EndCompleted)},
	}
	s.register("a2a-1", textEv("Remote answered."), endEv(runtime.EndCompleted))
	h := newHarness(t, testConfig(s), 80, 24)
	h.hold = true
	h.submit("mine")
	h.remote("a2a-1", "A2A vscode", "from vscode")
	h.submit("later")
	if strings.Contains(h.scrollback(), "from vscode") {
		t.Fatalf("the remote prompt was printed during the own turn:\n%s", h.scrollback())
	}
	inOrder(t, h.view(), "Queued [A2A vscode]: from vscode", "Queued: later")
	h.release()
	if h.m.turn != nil || len(h.m.remote) != 0 || len(h.m.queued) != 0 {
		t.Fatalf("turn %v, remote %d, queued %d", h.m.turn, len(h.m.remote), len(h.m.queued))
	}
	want := []string{"send stream-1", "stream stream-1", "stream a2a-1", "send stream-2", "stream stream-2"}
	if got := s.callLog(); !slices.Equal(got, want) {
		t.Errorf("calls %q, want %q", got, want)
	}
	if sends := s.sentMessages(); len(sends) != 2 || sentText(t, sends[1])[0] != "later" {
		t.Errorf("sends %v", sends)
	}
	inOrder(t, h.scrollback(), "> mine", "Mine answered.", "> [A2A vscode] from vscode", "Remote answered.", "> later", "Later answered.")
}

// TestEscDuringRemoteTurn: Esc aborts the remote turn as an own one, puts
// the queued prompt back, and the next remote turn still runs.
func TestEscDuringRemoteTurn(t *testing.T) {
	s := newTestSession()
	s.register("a2a-1", textEv("First working"))
	s.register("a2a-2", textEv("Second answered."), endEv(runtime.EndCompleted))
	h := newHarness(t, testConfig(s), 80, 24)
	h.hold = true
	h.remote("a2a-1", "A2A vscode", "first")
	h.remote("a2a-2", "A2A cli", "second")
	h.submit("typed here")
	h.send(keyEsc)
	if len(s.aborts) != 1 || !errors.Is(s.aborts[0], runtime.ErrAborted) {
		t.Fatalf("aborts = %v", s.aborts)
	}
	if len(h.m.remote) != 1 {
		t.Fatalf("Esc dropped the waiting remote turn: %d wait", len(h.m.remote))
	}
	if h.m.input.Value() != "typed here" || len(h.m.queued) != 0 {
		t.Errorf("input %q, queued %d", h.m.input.Value(), len(h.m.queued))
	}
	if !strings.Contains(h.view(), "Cancelling") {
		t.Errorf("view:\n%s", h.view())
	}
	h.events(endEv(runtime.EndAborted))
	h.release()
	if h.m.turn != nil {
		t.Fatal("a turn still runs")
	}
	inOrder(t, h.scrollback(), "> [A2A vscode] first", "First working", "Request cancelled.", "> [A2A cli] second", "Second answered.")
	if strings.Count(h.scrollback(), "Request cancelled.") != 1 {
		t.Errorf("scrollback:\n%s", h.scrollback())
	}
	if len(s.sentMessages()) != 0 || len(s.aborts) != 1 {
		t.Errorf("sends %d, aborts %d", len(s.sentMessages()), len(s.aborts))
	}
}

func TestCtrlCDuringRemoteTurnAborts(t *testing.T) {
	s := newTestSession()
	s.register("a2a-1", textEv("working"))
	h := newHarness(t, testConfig(s), 80, 24)
	h.hold = true
	h.remote("a2a-1", "A2A", "task")
	h.send(keyCtrlC)
	if len(s.aborts) != 1 || h.quit {
		t.Errorf("aborts %d, quit %v", len(s.aborts), h.quit)
	}
}

func TestRemoteStreamErrorIsShownAndNextRuns(t *testing.T) {
	s := newTestSession()
	s.register("a2a-2", textEv("Second answered."), endEv(runtime.EndCompleted))
	h := newHarness(t, testConfig(s), 80, 24)
	h.hold = true
	h.submitScript("mine", []runtime.Event{endEv(runtime.EndCompleted)})
	h.remote("a2a-gone", "A2A", "lost")
	h.remote("a2a-2", "A2A", "second")
	h.release()
	if h.m.turn != nil {
		t.Fatal("a turn still runs")
	}
	inOrder(t, h.scrollback(), "> [A2A] lost", `✕ unknown stream "a2a-gone"`, "> [A2A] second", "Second answered.")
}

func TestRemoteTurnEscapesAreInert(t *testing.T) {
	s := newTestSession()
	s.register("a2a-1", endEv(runtime.EndCompleted))
	h := newHarness(t, testConfig(s), 80, 24)
	h.hold = true
	h.submitScript("mine", []runtime.Event{endEv(runtime.EndCompleted)})
	origin := "A2A\x1b[2J \x1b]52;c;ZXZpbA==\x07evil\u009b2J"
	h.remote("a2a-1", origin, "hi \x1b[5mblink\x1b[0m\x07 \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ end")
	views := []string{h.m.View().Content}
	h.release()
	bad := []string{"\x1b[2J", "\x1b]52", "\x07", "\u009b", "\x1b[5m", "\x1b]8"}
	for _, out := range append(views, h.raw...) {
		for _, b := range bad {
			if strings.Contains(out, b) {
				t.Errorf("%q reached the terminal: %q", b, out)
			}
		}
	}
	if !strings.Contains(xansi.Strip(views[0]), "Queued [A2A evil2J]: hi blink link end") {
		t.Errorf("view:\n%s", xansi.Strip(views[0]))
	}
	if !strings.Contains(h.scrollback(), "> [A2A evil2J] hi blink link end") {
		t.Errorf("scrollback:\n%s", h.scrollback())
	}
}

func TestRemoteTurnWithoutOriginIsMarked(t *testing.T) {
	s := newTestSession()
	s.register("a2a-1", endEv(runtime.EndCompleted))
	h := newHarness(t, testConfig(s), 80, 24)
	h.remote("a2a-1", "\x1b[2J", "hi")
	if !strings.Contains(h.scrollback(), "> [remote] hi") {
		t.Errorf("scrollback:\n%s", h.scrollback())
	}
}

// TestRemoteTurnWaitsForCommand: a remote turn that comes while a slash
// command runs is shown once the command ends.
func TestRemoteTurnWaitsForCommand(t *testing.T) {
	s := newTestSession()
	s.register("a2a-1", textEv("Remote answered."), endEv(runtime.EndCompleted))
	cfg := testConfig(s)
	cfg.ParseCommand = func(string) ([]string, string, bool) { return []string{"slow"}, "", true }
	unblock := make(chan struct{})
	cfg.RunCommand = func(ctx context.Context, _ []string, _ string, out func(string)) error {
		<-unblock
		out("slow done")
		return nil
	}
	h := newHarness(t, cfg, 80, 24)
	h.typeText("/slow")
	_, c := h.m.Update(keyEnter)
	msgs := make(chan []tea.Msg)
	go func() { msgs <- runAll(c) }()
	h.remote("a2a-1", "A2A", "from elsewhere")
	if h.m.turn != nil || len(h.m.remote) != 1 || strings.Contains(h.scrollback(), "from elsewhere") {
		t.Fatalf("the remote turn did not wait for the command; scrollback:\n%s", h.scrollback())
	}
	close(unblock)
	for _, msg := range <-msgs {
		h.run(func() tea.Msg { return msg })
	}
	h.run(nil)
	inOrder(t, h.scrollback(), "> /slow", "slow done", "> [A2A] from elsewhere", "Remote answered.")
}

// TestPickerRefusesWhileRemoteTurnRuns: a remote turn can start while the
// /resume picker is open; picking then does not switch under it.
func TestPickerRefusesWhileRemoteTurnRuns(t *testing.T) {
	s := newTestSession()
	s.register("a2a-1", textEv("working"))
	cfg := testConfig(s)
	cfg.Sessions = func(context.Context) ([]SessionInfo, error) {
		return []SessionInfo{{ID: "abcdef12-old", Title: "Old"}}, nil
	}
	var switched []string
	cfg.Switch = func(_ context.Context, id string) (Session, error) {
		switched = append(switched, id)
		return newTestSession(), nil
	}
	h := newHarness(t, cfg, 80, 24)
	h.submit("/resume")
	if h.m.picker == nil {
		t.Fatal("no picker")
	}
	h.hold = true
	h.remote("a2a-1", "A2A", "task")
	h.send(keyEnter)
	if len(switched) != 0 || !strings.Contains(h.m.notice, "/resume cannot run while") {
		t.Errorf("switched %q, notice %q", switched, h.m.notice)
	}
}

// TestQuitLeavesRemoteTurnRunning: quitting aborts the terminal's own
// turn, not another client's.
func TestQuitLeavesRemoteTurnRunning(t *testing.T) {
	s := newTestSession()
	s.register("a2a-1", textEv("working"))
	h := newHarness(t, testConfig(s), 80, 24)
	h.hold = true
	h.remote("a2a-1", "A2A", "task")
	h.m.shutdown()
	if len(s.aborts) != 0 {
		t.Errorf("aborts %v", s.aborts)
	}
	own := newHarness(t, testConfig(newTestSession()), 80, 24)
	own.hold = true
	own.submit("mine")
	own.m.shutdown()
	if len(own.sess.aborts) != 1 {
		t.Errorf("own turn: aborts %v", own.sess.aborts)
	}
}

// TestRunShowsTurns: Run reads Config.Turns, and stops reading it when it
// returns.
func TestRunShowsTurns(t *testing.T) {
	s := newTestSession()
	s.register("a2a-1", textEv("Remote answered."), endEv(runtime.EndCompleted))
	cfg := testConfig(s)
	cfg.Env = append(cfg.Env, "TTY_FORCE=1", "NO_COLOR=1")
	turns := make(chan Turn)
	cfg.Turns = turns
	pw, out, errc := runTerminal(t.Context(), cfg)
	seen := out.wait("Remote answered.")
	turns <- Turn{StreamID: "a2a-1", Origin: "A2A vscode", Text: "from vscode"}
	<-seen
	io.WriteString(pw, "/quit\r")
	if err := <-errc; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(out.String(), "[A2A vscode]") {
		t.Errorf("no origin in the output: %q", out.String())
	}
	select {
	case turns <- Turn{StreamID: "late"}:
		t.Error("Turns is still read after Run returned")
	default:
	}
}
