package tui

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	xansi "github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/agentry-dev/agentry/runtime"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fakeSession is a scripted Session: each Send starts a stream that yields
// the next script's events; the streams a test registers (other clients'
// turns) yield theirs.
type fakeSession struct {
	id, model string

	mu      sync.Mutex
	scripts [][]runtime.Event
	streams map[string][]runtime.Event // by stream id
	sends   []runtime.Send
	aborts  []error
	calls   []string      // "send <id>", "stream <id>", in call order
	sent    chan struct{} // if set, gets a value per Send
}

// register makes Stream yield events for stream id.
func (f *fakeSession) register(id string, events ...runtime.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.streams == nil {
		f.streams = map[string][]runtime.Event{}
	}
	f.streams[id] = events
}

func (f *fakeSession) callLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeSession) ID() string    { return f.id }
func (f *fakeSession) Model() string { return f.model }
func (f *fakeSession) Close() error  { return nil }
func (f *fakeSession) Events() []runtime.Event {
	return nil
}

func (f *fakeSession) Send(_ context.Context, p runtime.Send) (string, error) {
	f.mu.Lock()
	f.sends = append(f.sends, p)
	n := len(f.sends)
	id := "stream-" + string(rune('0'+n))
	f.calls = append(f.calls, "send "+id)
	f.mu.Unlock()
	if f.sent != nil {
		f.sent <- struct{}{}
	}
	return id, nil
}

func (f *fakeSession) Stream(ctx context.Context, id string) iter.Seq2[runtime.Event, error] {
	f.mu.Lock()
	f.calls = append(f.calls, "stream "+id)
	script, known := f.streams[id]
	if n, ok := strings.CutPrefix(id, "stream-"); ok && !known && len(n) == 1 {
		known = true
		if i := int(n[0] - '1'); i < len(f.scripts) {
			script = f.scripts[i]
		}
	}
	f.mu.Unlock()
	return func(yield func(runtime.Event, error) bool) {
		if !known {
			yield(runtime.Event{}, fmt.Errorf("%w %q", runtime.ErrUnknownStream, id))
			return
		}
		for _, ev := range script {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

func (f *fakeSession) Abort(cause error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.aborts = append(f.aborts, cause)
}

func (f *fakeSession) sentMessages() []runtime.Send {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]runtime.Send(nil), f.sends...)
}

// Test doubles' messages standing for the terminal effects.
type (
	testPrintMsg struct{ text string }
	testClearMsg struct{}
	testClipMsg  struct{ text string }
	testExecMsg  struct {
		cmd  *exec.Cmd
		done func(error) tea.Msg
	}
)

// harness drives a model as the program would, synchronously: commands run
// in place, the mailbox is drained after each, and what would reach the
// terminal is recorded.
type harness struct {
	t      *testing.T
	m      *model
	sess   *fakeSession
	scroll []string // printed text, escapes removed
	raw    []string // printed text as printed
	clears int
	clips  []string
	execs  []testExecMsg
	quit   bool
	// hold keeps turns open: their turnDoneMsg waits in held.
	hold bool
	held []tea.Msg
}

var testNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func testConfig(s *fakeSession) Config {
	return Config{
		Session:       s,
		Workspace:     "/home/u/src/agentry",
		Env:           []string{"HOME=/home/u", "TERM=xterm-256color"},
		ApprovalMode:  func() string { return "default" },
		ContextWindow: func(string) int { return 1_000_000 },
		Now:           func() time.Time { return testNow },
	}
}

func newTestSession() *fakeSession {
	return &fakeSession{id: "3f2a9c1e-5b7d-4e21-9a0c-1d2e3f405162", model: "gemini-2.5-pro"}
}

func newHarness(t *testing.T, cfg Config, w, h int) *harness {
	t.Helper()
	hs := &harness{t: t}
	if s, ok := cfg.Session.(*fakeSession); ok {
		hs.sess = s
	}
	m := newModel(t.Context(), cfg, newMailbox(), colorprofile.ANSI, nil)
	m.fx = effects{
		print:     func(text string) tea.Cmd { return func() tea.Msg { return testPrintMsg{text} } },
		clear:     func() tea.Cmd { return func() tea.Msg { return testClearMsg{} } },
		clipboard: func(text string) tea.Cmd { return func() tea.Msg { return testClipMsg{text} } },
		exec: func(c *exec.Cmd, done func(error) tea.Msg) tea.Cmd {
			return func() tea.Msg { return testExecMsg{c, done} }
		},
		after: func(time.Duration, tea.Msg) tea.Cmd { return nil },
		ready: func() tea.Cmd { return func() tea.Msg { return printReadyMsg{} } },
	}
	hs.m = m
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	hs.run(m.Init())
	return hs
}

// send delivers msg and runs what follows from it.
func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	_, cmd := h.m.Update(msg)
	h.run(cmd)
}

// run runs commands and the messages they produce until none is left.
func (h *harness) run(cmd tea.Cmd) {
	h.t.Helper()
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 || h.m.mb.pending() > 0 {
		if len(queue) == 0 {
			for _, msg := range h.m.mb.drain() {
				if _, ok := msg.(turnDoneMsg); ok && h.hold {
					h.held = append(h.held, msg)
					continue
				}
				queue = append(queue, h.updateCmd(msg))
			}
			continue
		}
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case nil:
		case tea.BatchMsg:
			queue = append(queue, msg...)
		case testPrintMsg:
			if n := lineCount(msg.text); n > frameSpare {
				h.t.Errorf("one print of %d lines: the live region could scroll into the scrollback", n)
			}
			h.raw = append(h.raw, msg.text)
			h.scroll = append(h.scroll, xansi.Strip(msg.text))
			queue = append(queue, h.updateCmd(printedMsg{}))
		case testClearMsg:
			h.clears++
		case testClipMsg:
			h.clips = append(h.clips, msg.text)
		case testExecMsg:
			h.execs = append(h.execs, msg)
		case tea.QuitMsg:
			h.quit = true
		default:
			queue = append(queue, h.updateCmd(msg))
		}
	}
}

func (h *harness) updateCmd(msg tea.Msg) tea.Cmd {
	_, cmd := h.m.Update(msg)
	return cmd
}

// release delivers the held turn ends.
func (h *harness) release() {
	h.t.Helper()
	held := h.held
	h.held = nil
	h.hold = false
	for _, msg := range held {
		h.send(msg)
	}
}

// remote delivers a turn another client started, as Run's reader of
// Config.Turns does.
func (h *harness) remote(streamID, origin, text string) {
	h.t.Helper()
	h.m.mb.push(remoteTurnMsg{Turn{StreamID: streamID, Origin: origin, Text: text}})
	h.run(nil)
}

// events delivers events of the current turn's stream.
func (h *harness) events(evs ...runtime.Event) {
	h.t.Helper()
	if h.m.turn == nil {
		h.t.Fatal("no turn runs")
	}
	for _, ev := range evs {
		h.m.mb.push(streamEventMsg{h.m.turn.id, ev})
	}
	h.run(nil)
}

// Keys.
var (
	keyEnter = tea.KeyPressMsg{Code: tea.KeyEnter}
	keyEsc   = tea.KeyPressMsg{Code: tea.KeyEscape}
	keyUp    = tea.KeyPressMsg{Code: tea.KeyUp}
	keyDown  = tea.KeyPressMsg{Code: tea.KeyDown}
	keyTab   = tea.KeyPressMsg{Code: tea.KeyTab}
	keyCtrlC = tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	keyCtrlD = tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
	keyCtrlJ = tea.KeyPressMsg{Code: 'j', Mod: tea.ModCtrl}
	keyCtrlL = tea.KeyPressMsg{Code: 'l', Mod: tea.ModCtrl}
	keyCtrlT = tea.KeyPressMsg{Code: 't', Mod: tea.ModCtrl}
	keyAltCR = tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt}
)

func runeKey(r rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: r, Text: string(r)} }

// typeText types s key by key.
func (h *harness) typeText(s string) {
	h.t.Helper()
	for _, r := range s {
		if r == '\n' {
			h.send(keyCtrlJ)
			continue
		}
		h.send(runeKey(r))
	}
}

// submit types s and presses Enter.
func (h *harness) submit(s string) {
	h.t.Helper()
	h.typeText(s)
	h.send(keyEnter)
}

// view is the live region without escapes, trailing spaces trimmed.
func (h *harness) view() string {
	return trimLines(xansi.Strip(h.m.View().Content))
}

// scrollback is everything printed, escapes removed.
func (h *harness) scrollback() string { return strings.Join(h.scroll, "\n") }

// screen is what the terminal shows: the end of the scrollback with the
// live region below it, Height lines.
func (h *harness) screen() string {
	var lines []string
	if len(h.scroll) > 0 {
		lines = strings.Split(h.scrollback(), "\n")
	}
	lines = append(lines, strings.Split(h.view(), "\n")...)
	if n := h.m.height; len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for len(lines) < h.m.height {
		lines = append(lines, "")
	}
	return trimLines(strings.Join(lines, "\n"))
}

func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// golden compares got with testdata/name.golden (-update rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

// Event helpers.
func textEv(s string) runtime.Event {
	return runtime.Event{Type: runtime.EventMessage, Message: &runtime.Message{Role: runtime.RoleAgent, Content: []runtime.ContentPart{runtime.TextPart(s)}}}
}

func thoughtEv(s string) runtime.Event {
	return runtime.Event{Type: runtime.EventMessage, Message: &runtime.Message{Role: runtime.RoleAgent,
		Content: []runtime.ContentPart{{Type: runtime.PartThought, Thought: s}}}}
}

func toolReqEv(id, name, display, desc string, args map[string]any) runtime.Event {
	return runtime.Event{Type: runtime.EventToolRequest, ToolRequest: &runtime.ToolRequest{
		RequestID: id, Name: name, Args: args, Display: &runtime.ToolDisplay{Name: display, Description: desc}}}
}

func toolUpdateEv(id, text string) runtime.Event {
	return runtime.Event{Type: runtime.EventToolUpdate, ToolUpdate: &runtime.ToolUpdate{
		RequestID: id, Content: []runtime.ContentPart{runtime.TextPart(text)}}}
}

func toolRespEv(id, name string, display *runtime.ToolDisplay, isErr bool) runtime.Event {
	return runtime.Event{Type: runtime.EventToolResponse, ToolResponse: &runtime.ToolResponse{
		RequestID: id, Name: name, Display: display, IsError: isErr}}
}

func endEv(r runtime.EndReason) runtime.Event {
	return runtime.Event{Type: runtime.EventAgentEnd, AgentEnd: &runtime.AgentEnd{Reason: r}}
}

func usageEv(model string, in int) runtime.Event {
	return runtime.Event{Type: runtime.EventUsage, Usage: &runtime.Usage{Model: model, InputTokens: &in}}
}

var errTest = errors.New("test failure")
