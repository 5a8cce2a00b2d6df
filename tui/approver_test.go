package tui

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/tools"
)

func TestApproverWithoutTerminal(t *testing.T) {
	ap := NewApprover()
	if _, err := ap.Approve(t.Context(), runtime.ApprovalRequest{Tool: "x"}); !errors.Is(err, runtime.ErrNoHuman) {
		t.Errorf("err = %v, want ErrNoHuman", err)
	}
	mb := newMailbox()
	if err := ap.attach(mb); err != nil {
		t.Fatal(err)
	}
	if err := ap.attach(newMailbox()); !errors.Is(err, errAttached) {
		t.Errorf("a second attach: %v", err)
	}
	// A terminal that quit answers nobody.
	mb.close()
	if _, err := ap.Approve(t.Context(), runtime.ApprovalRequest{Tool: "x"}); !errors.Is(err, runtime.ErrNoHuman) {
		t.Errorf("after close: err = %v, want ErrNoHuman", err)
	}
	ap.detach(mb)
	if _, err := ap.Approve(t.Context(), runtime.ApprovalRequest{Tool: "x"}); !errors.Is(err, runtime.ErrNoHuman) {
		t.Errorf("after detach: err = %v, want ErrNoHuman", err)
	}
	// A context already ended is not asked about.
	ap.attach(newMailbox())
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(errTest)
	if o, err := ap.Approve(ctx, runtime.ApprovalRequest{Tool: "x"}); o != runtime.Cancel || !errors.Is(err, errTest) {
		t.Errorf("ended context: %q, %v", o, err)
	}
}

// ui runs a model on its own goroutine as the program would, answering
// every dialog but the one for callID skip with the option key answer.
type ui struct {
	m      *model
	wake   chan struct{}
	stop   chan struct{}
	done   chan struct{}
	shown  chan string // call ids whose dialog was shown, once each
	skip   string
	answer rune
}

func startUI(t *testing.T, ap *Approver, skip string, answer rune) *ui {
	t.Helper()
	mb := newMailbox()
	u := &ui{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		shown: make(chan string, 100), skip: skip, answer: answer}
	mb.start(func(tea.Msg) {
		select {
		case u.wake <- struct{}{}:
		default:
		}
	})
	if err := ap.attach(mb); err != nil {
		t.Fatal(err)
	}
	u.m = newModel(t.Context(), testConfig(newTestSession()), mb, colorprofile.ANSI, nil)
	u.m.fx.print = func(string) tea.Cmd { return nil }
	u.m.fx.after = func(time.Duration, tea.Msg) tea.Cmd { return nil }
	u.m.printing = false
	go u.loop()
	t.Cleanup(func() {
		u.halt()
		ap.detach(mb)
		mb.close()
	})
	return u
}

func (u *ui) halt() {
	select {
	case <-u.stop:
	default:
		close(u.stop)
	}
	<-u.done
}

func (u *ui) loop() {
	defer close(u.done)
	seen := map[string]bool{}
	for {
		select {
		case <-u.stop:
			return
		case <-u.wake:
		}
		u.m.Update(wakeMsg{})
		for _, a := range u.m.approvals {
			if id := a.req.CallID; !seen[id] {
				seen[id] = true
				u.shown <- id
			}
		}
		for u.m.dialog.a != nil && u.m.dialog.a.req.CallID != u.skip {
			u.m.Update(runeKey(u.answer))
		}
	}
}

func TestApproverConcurrentRequestsAndCancellation(t *testing.T) {
	ap := NewApprover()
	u := startUI(t, ap, "cancel-me", '1')

	ctx, cancel := context.WithCancel(t.Context())
	type result struct {
		o   runtime.Outcome
		err error
	}
	cancelled := make(chan result, 1)
	go func() {
		o, err := ap.Approve(ctx, runtime.ApprovalRequest{CallID: "cancel-me", Tool: "t", Kind: tools.KindExecute})
		cancelled <- result{o, err}
	}()
	const n = 20
	var wg sync.WaitGroup
	results := make([]result, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, args, err := ap.ApproveEdit(t.Context(), runtime.ApprovalRequest{CallID: fmt.Sprint("c", i), Tool: "t", Kind: tools.KindExecute})
			if args != nil {
				err = fmt.Errorf("args %v", args)
			}
			results[i] = result{o, err}
		}()
	}
	for id := range u.shown {
		if id == "cancel-me" {
			break
		}
	}
	cancel()
	if r := <-cancelled; r.o != runtime.Cancel || !errors.Is(r.err, context.Canceled) {
		t.Errorf("the cancelled request: %q, %v", r.o, r.err)
	}
	wg.Wait()
	for i, r := range results {
		if r.o != runtime.ProceedOnce || r.err != nil {
			t.Errorf("request %d: %q, %v", i, r.o, r.err)
		}
	}
	u.halt()
	// The loop may have stopped before it read the last messages (the
	// cancelled request's withdrawal, pushed before its Approve
	// returned): they are read here, after it.
	u.m.Update(wakeMsg{})
	if len(u.m.approvals) != 0 || u.m.dialog.a != nil {
		t.Errorf("%d requests left in the queue", len(u.m.approvals))
	}
}

// TestApproverAlwaysOutcomes: the MCP dialog's session answers and the
// "future sessions" answer come back as gemini-cli's outcomes, for the
// session's policy to add rules; the approver keeps nothing itself.
func TestApproverAlwaysOutcomes(t *testing.T) {
	mcp := runtime.ApprovalRequest{CallID: "c1", Tool: "s__a", Kind: tools.KindExecute, MCP: &runtime.MCPDetails{ServerName: "s", ToolName: "a"}}
	exec := runtime.ApprovalRequest{CallID: "c1", Tool: "run_shell_command", Kind: tools.KindExecute, Args: map[string]any{"command": "git status"}}
	for _, tc := range []struct {
		req  runtime.ApprovalRequest
		key  rune
		want runtime.Outcome
	}{
		{mcp, '2', runtime.ProceedAlwaysTool},
		{mcp, '3', runtime.ProceedAlwaysServer},
		{mcp, '4', runtime.ProceedAlwaysAndSave},
		{exec, '3', runtime.ProceedAlwaysAndSave},
	} {
		ap := NewApprover()
		u := startUI(t, ap, "", tc.key)
		if o, err := ap.Approve(t.Context(), tc.req); o != tc.want || err != nil {
			t.Errorf("%s key %c: %q, %v; want %q", tc.req.Tool, tc.key, o, err, tc.want)
		}
		u.halt()
		ap.detach(u.m.mb)
		// With the terminal gone, nothing is allowed by the approver.
		tc.req.CallID = "c2"
		if _, err := ap.Approve(t.Context(), tc.req); !errors.Is(err, runtime.ErrNoHuman) {
			t.Errorf("%s: without a terminal: %v, want ErrNoHuman", tc.req.Tool, err)
		}
	}
}

func TestApproverExecuting(t *testing.T) {
	ap := NewApprover()
	ap.Executing(t.Context(), "c1") // no terminal: nothing happens
	mb := newMailbox()
	ap.attach(mb)
	ap.Executing(t.Context(), "c1")
	msgs := mb.drain()
	if len(msgs) != 1 || msgs[0] != (toolExecutingMsg{"c1"}) {
		t.Errorf("messages %v", msgs)
	}
}
