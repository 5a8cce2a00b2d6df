package a2acli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/protocol/devtool"
)

// TestExitCode: the one table of the command's exit codes.
func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		state a2a.TaskState
		err   error
		want  int
	}{
		{a2a.TaskStateCompleted, nil, ExitCompleted},
		{a2a.TaskStateFailed, nil, ExitFailed},
		{a2a.TaskStateCanceled, nil, ExitFailed},
		{a2a.TaskStateRejected, nil, ExitFailed},
		{a2a.TaskStateInputRequired, nil, ExitWaiting},
		{a2a.TaskStateAuthRequired, nil, ExitWaiting},
		{"", nil, ExitFailed},
		{a2a.TaskStateWorking, errors.New("connection reset"), ExitFailed},
		{"", &UsageError{"no prompt"}, ExitUsage},
		{a2a.TaskStateCanceled, fmt.Errorf("%w: signal", ErrInterrupted), ExitInterrupted},
	} {
		if got := ExitCode(Outcome{State: c.state}, c.err); got != c.want {
			t.Errorf("ExitCode(%s, %v) = %d, want %d", c.state, c.err, got, c.want)
		}
	}
}

// TestConfigErrors: a configuration Run cannot act on is a *UsageError
// that says what to change, before anything is dialled.
func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{URL: "http://h", Prompt: "p", Transport: "carrier-pigeon"}, `unknown transport "carrier-pigeon": use one of auto, jsonrpc, rest, grpc, live, ws`},
		{Config{URL: "http://h", Prompt: "p", Output: "yaml"}, `unknown output format "yaml"`},
		{Config{URL: "http://h", Prompt: "p", Approve: "maybe"}, `unknown --approve "maybe"`},
		{Config{URL: "http://h", Prompt: "  \n"}, "no prompt: give it as arguments after the URL or on stdin, or follow a task with --task ID"},
		{Config{URL: "http://h", Prompt: "p", Plain: true, Transport: TransportWS}, "--plain does not go with --transport ws"},
		{Config{URL: "127.0.0.1:41242", Prompt: "p"}, "is not an agent's URL"},
		{Config{URL: "ftp://h/x", Prompt: "p"}, "is not an http:// or https:// URL"},
		{Config{URL: "http://h/?token=s3cret", Prompt: "p"}, "the URL carries a token; URLs end up in logs"},
		{Config{URL: "http://user:pw@h/", Prompt: "p"}, "the URL carries credentials"},
		{Config{URL: "ws://h/ws", Prompt: "p", Transport: TransportGRPC}, "is a WebSocket URL, which only --transport ws dials"},
		{Config{URL: "ws://h/ws", Prompt: "p", Plain: true}, "--plain does not go with a ws:// URL"},
	} {
		_, err := Run(t.Context(), c.cfg)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a usage error containing %q", c.cfg, err, c.want)
		}
	}
}

// TestLocate: the URL forms an agent is named by.
func TestLocate(t *testing.T) {
	for _, c := range []struct {
		url, transport string
		base, ws, card string
		wantTransport  string
	}{
		{"http://127.0.0.1:41242", TransportAuto, "http://127.0.0.1:41242", "", "http://127.0.0.1:41242/.well-known/agent-card.json", TransportAuto},
		{"http://127.0.0.1:41242/", TransportGRPC, "http://127.0.0.1:41242", "", "http://127.0.0.1:41242/.well-known/agent-card.json", TransportGRPC},
		{"https://agents.example.com/team/a2a", TransportAuto, "https://agents.example.com/team/a2a", "", "https://agents.example.com/team/a2a/.well-known/agent-card.json", TransportAuto},
		{"http://127.0.0.1:41242/.well-known/agent-card.json", TransportAuto, "http://127.0.0.1:41242", "", "http://127.0.0.1:41242/.well-known/agent-card.json", TransportAuto},
		{"http://h:1/cards/agent.json", TransportREST, "http://h:1", "", "http://h:1/cards/agent.json", TransportREST},
		{"ws://127.0.0.1:41242/ws", TransportAuto, "", "ws://127.0.0.1:41242/ws", "", TransportWS},
		{"wss://h/ws", TransportWS, "", "wss://h/ws", "", TransportWS},
	} {
		cfg := Config{URL: c.url, Transport: c.transport}
		ag, err := locate(&cfg)
		if err != nil {
			t.Errorf("%s: %v", c.url, err)
			continue
		}
		if ag.base != c.base || ag.wsURL != c.ws || cfg.Transport != c.wantTransport {
			t.Errorf("%s: base %q ws %q transport %s; want %q %q %s", c.url, ag.base, ag.wsURL, cfg.Transport, c.base, c.ws, c.wantTransport)
		}
		if c.card != "" && cardURL(c.url) != c.card {
			t.Errorf("%s: card at %s, want %s", c.url, cardURL(c.url), c.card)
		}
	}
}

// TestPick: an answer is an option's key, its id or a word for it; the
// options the server did not offer cannot be picked.
func TestPick(t *testing.T) {
	cr := &devtool.ConfirmationRequest{Options: []devtool.ConfirmationOption{
		{ID: devtool.OptionProceedOnce, Name: "Allow once"},
		{ID: devtool.OptionProceedAlwaysServer, Name: "Allow every tool of the server"},
		{ID: devtool.OptionCancel, Name: "Reject"},
	}}
	cs := choices(cr)
	if keys := fmt.Sprint(cs[0].key, cs[1].key, cs[2].key); keys != "y2n" {
		t.Errorf("keys %s, want y, 2, n", keys)
	}
	for in, want := range map[string]string{
		"y": devtool.OptionProceedOnce, " Yes ": devtool.OptionProceedOnce, "once": devtool.OptionProceedOnce,
		"2": devtool.OptionProceedAlwaysServer, "proceed_always_server": devtool.OptionProceedAlwaysServer,
		"n": devtool.OptionCancel, "NO": devtool.OptionCancel, "cancel": devtool.OptionCancel,
		"a": "", "always": "", "s": "", "save": "", "": "", "yess": "",
	} {
		got, ok := pick(cs, in)
		if got != want || ok != (want != "") {
			t.Errorf("pick(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// TestPickSave: "always and save" is s, save or its id when offered.
func TestPickSave(t *testing.T) {
	cs := choices(&devtool.ConfirmationRequest{Options: []devtool.ConfirmationOption{
		{ID: devtool.OptionProceedOnce}, {ID: devtool.OptionProceedAlways}, {ID: devtool.OptionProceedAlwaysAndSave}, {ID: devtool.OptionCancel},
	}})
	for _, in := range []string{"s", "save", "proceed_always_and_save"} {
		if got, ok := pick(cs, in); !ok || got != devtool.OptionProceedAlwaysAndSave {
			t.Errorf("pick(%q) = %q, %v", in, got, ok)
		}
	}
}

// TestAskerReadFails: once the answers' reader ends, every later
// question fails at once; a reader that cannot be opened fails the first.
func TestAskerReadFails(t *testing.T) {
	tc := devtool.ToolCall{ToolCallID: "c1", ToolName: "write_file", Status: devtool.StatusPending,
		ConfirmationRequest: &devtool.ConfirmationRequest{
			Options:         []devtool.ConfirmationOption{{ID: devtool.OptionProceedOnce, Name: "Allow once"}, {ID: devtool.OptionCancel, Name: "Reject"}},
			FileEditDetails: &devtool.FileDiff{FileName: "a.txt", FilePath: "/w/a.txt", NewContent: "hi\n", FormattedDiff: "@@ -0,0 +1 @@\n+hi\x1b[2J"},
		}}
	var w bytes.Buffer
	a := &asker{approve: ApproveAsk, w: &w, open: func() (io.Reader, error) { return strings.NewReader("y\n"), nil }}
	if opt, declined, err := a.confirm(t.Context(), tc); opt != devtool.OptionProceedOnce || declined != nil || err != nil {
		t.Fatalf("first confirm: %s %v %v", opt, declined, err)
	}
	if !strings.Contains(w.String(), "file: /w/a.txt\n  @@ -0,0 +1 @@\n  +hi\n") || strings.Contains(w.String(), "\x1b") {
		t.Errorf("the file edit is not shown, or not stripped:\n%q", w.String())
	}
	opt, declined, err := a.confirm(t.Context(), tc)
	if opt != devtool.OptionCancel || !errors.Is(declined, errNoAnswer) || err != nil {
		t.Errorf("after the input ended: %s %v %v; want cancel, declined", opt, declined, err)
	}
	if _, err := a.question(t.Context(), "Which file?"); !errors.Is(err, errNoAnswer) {
		t.Errorf("question after the input ended: %v", err)
	}
	b := &asker{approve: ApproveAsk, w: io.Discard, open: func() (io.Reader, error) { return nil, errors.New("no terminal") }}
	if _, declined, _ := b.confirm(t.Context(), tc); !errors.Is(declined, errNoAnswer) || !strings.Contains(declined.Error(), "no terminal") {
		t.Errorf("no reader: %v", declined)
	}
}

// TestReattachPending: following a task that already waits for a
// confirmation finds the call in its history and asks about it.
func TestReattachPending(t *testing.T) {
	var snapshot *a2a.Task
	for _, s := range recorded(t, "ext") {
		for _, ev := range s {
			if u, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && u.Status.State == a2a.TaskStateInputRequired {
				snapshot = &a2a.Task{ID: u.TaskID, ContextID: u.ContextID, Status: u.Status}
			}
		}
	}
	// The task as GetTask returns it: the earlier status messages in its
	// history.
	for _, ev := range recorded(t, "ext")[0] {
		if u, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && u.Status.Message != nil {
			snapshot.History = append(snapshot.History, u.Status.Message)
		}
	}
	conn := &scriptConn{streams: [][]a2a.Event{{snapshot}, recorded(t, "ext")[1]}}
	var out, errb bytes.Buffer
	cfg := Config{URL: "http://127.0.0.1:41242", TaskID: "task-1", Out: &out, Err: &errb,
		Answers: func() (io.Reader, error) { return strings.NewReader("n\n"), nil }}
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	cfg.after = never
	r := &run{cfg: &cfg, conn: conn, out: newTextOutput(&out, &errb, false), ask: newAsker(&cfg), t: newTracker()}
	o, err := r.run(t.Context())
	if err != nil || o.State != a2a.TaskStateCompleted {
		t.Fatalf("%+v %v\n%s", o, err, errb.String())
	}
	if len(conn.sent) != 1 {
		t.Fatalf("%d requests sent, want the answer alone", len(conn.sent))
	}
	if d, ok := conn.sent[0].Message.Parts[0].Content.(a2a.Data); !ok || d.Value.(map[string]any)["selected_option_id"] != devtool.OptionCancel {
		t.Errorf("the answer: %+v", conn.sent[0].Message.Parts)
	}
	if !strings.Contains(errb.String(), "? run_shell_command needs your approval") {
		t.Errorf("the reattached confirmation was not asked:\n%s", errb.String())
	}
}

// blockingConn streams one event, tells the test, then waits for the
// run's context to end.
type blockingConn struct {
	scriptConn
	started chan struct{}
}

func (b *blockingConn) send(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if !yield(&a2a.Task{ID: "task-9", ContextID: "context-9", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}, nil) {
			return
		}
		close(b.started)
		<-ctx.Done()
		yield(nil, context.Cause(ctx))
	}
}

// TestInterrupt: a run whose context ends cancels its task and reports
// ErrInterrupted (exit code 130).
func TestInterrupt(t *testing.T) {
	conn := &blockingConn{started: make(chan struct{})}
	cfg := Config{URL: "http://127.0.0.1:41242", Prompt: "work", Out: io.Discard, Err: io.Discard}
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(t.Context())
	go func() {
		<-conn.started
		cancel(errors.New("interrupt"))
	}()
	r := &run{cfg: &cfg, conn: conn, out: newTextOutput(io.Discard, io.Discard, false), ask: newAsker(&cfg), t: newTracker()}
	o, err := r.run(ctx)
	if !errors.Is(err, ErrInterrupted) || ExitCode(o, err) != ExitInterrupted {
		t.Fatalf("%+v %v, want ErrInterrupted", o, err)
	}
	if fmt.Sprint(conn.canceled) != "[task-9]" || o.State != a2a.TaskStateCanceled {
		t.Errorf("canceled %v, state %s; want task-9 canceled", conn.canceled, o.State)
	}
}

// watchConn is a scriptConn whose task, read while the question is
// asked, still waits, then has moved on: somebody else answered.
type watchConn struct {
	scriptConn
	reads   int
	resumed bool
}

func (w *watchConn) get(context.Context, a2a.TaskID) (*a2a.Task, error) {
	w.reads++
	state := a2a.TaskStateInputRequired
	if w.reads > 1 {
		state = a2a.TaskStateWorking
	}
	return &a2a.Task{ID: "task-1", ContextID: "context-1", Status: a2a.TaskStatus{State: state}}, nil
}

func (w *watchConn) resume(ctx context.Context, id a2a.TaskID) iter.Seq2[a2a.Event, error] {
	w.resumed = true
	return w.scriptConn.resume(ctx, id)
}

// runResult is what a run started by startWatched returned.
type runResult struct {
	o   Outcome
	err error
}

// startWatched starts a text run of a prompt over c in the background:
// its confirmation asked on a reader that says nothing, its watch on
// timers' clock.
func startWatched(t *testing.T, c conn, out, errb *bytes.Buffer, timers *proctest.Timers) <-chan runResult {
	t.Helper()
	silent, w := io.Pipe()
	t.Cleanup(func() { w.Close() })
	cfg := Config{URL: "http://127.0.0.1:41242", Prompt: "run the command", Out: out, Err: errb,
		Answers: func() (io.Reader, error) { return silent, nil }}
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	cfg.after = timers.After
	r := &run{cfg: &cfg, conn: c, out: newTextOutput(out, errb, false), ask: newAsker(&cfg), t: newTracker()}
	done := make(chan runResult, 1)
	go func() {
		o, err := r.run(t.Context())
		done <- runResult{o, err}
	}()
	return done
}

// TestAnsweredElsewhere: while the confirmation is asked on a stdin that
// says nothing, the task is read on the watch's clock; once it no longer
// waits (a shared session's terminal, IDE or other client answered), the
// question is withdrawn and the task followed on to its end, with no
// answer sent.
func TestAnsweredElsewhere(t *testing.T) {
	ext := recorded(t, "ext")
	conn := &watchConn{scriptConn: scriptConn{streams: [][]a2a.Event{ext[0], ext[1]}}}
	var out, errb bytes.Buffer
	var timers proctest.Timers
	done := startWatched(t, conn, &out, &errb, &timers)
	timers.Fire(t, defaultWatchEvery) // still waiting: the question stands
	timers.Fire(t, defaultWatchEvery) // answered elsewhere
	res := <-done
	if res.err != nil || res.o.State != a2a.TaskStateCompleted {
		t.Fatalf("%+v %v\n%s", res.o, res.err, errb.String())
	}
	if len(conn.sent) != 1 || !conn.resumed {
		t.Fatalf("%d requests sent (want the prompt alone), resumed %v", len(conn.sent), conn.resumed)
	}
	for _, want := range []string{"Answer [y/a/n]: ", "run_shell_command was answered elsewhere; following the task", "✓ run_shell_command"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
	if out.String() != "I'll run it.\nDone: proof.txt holds a2a-ok." {
		t.Errorf("stdout %q", out.String())
	}
}

// endedConn is a watchConn whose task had ended by the time it is
// followed again: resume fails at once and GetTask gives the task.
type endedConn struct{ watchConn }

func (e *endedConn) resume(context.Context, a2a.TaskID) iter.Seq2[a2a.Event, error] {
	e.resumed = true
	return func(yield func(a2a.Event, error) bool) { yield(nil, a2a.ErrUnsupportedOperation) }
}

func (e *endedConn) get(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	if !e.resumed {
		return e.watchConn.get(ctx, id)
	}
	answer := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("Done after all."))
	confirmed := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"tool_call_id": "c1", "selected_option_id": "proceed_once"}))
	early := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("I'll run it."))
	return &a2a.Task{ID: "task-1", ContextID: "context-1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted},
		History: []*a2a.Message{early, confirmed, answer}}, nil
}

// TestAnsweredElsewhereAfterTheEnd: a task answered elsewhere that ended
// before it is followed again is read with GetTask, and what it said
// after the answer is shown.
func TestAnsweredElsewhereAfterTheEnd(t *testing.T) {
	conn := &endedConn{watchConn{scriptConn: scriptConn{streams: [][]a2a.Event{recorded(t, "ext")[0]}}}}
	var out, errb bytes.Buffer
	var timers proctest.Timers
	done := startWatched(t, conn, &out, &errb, &timers)
	timers.Fire(t, defaultWatchEvery)
	timers.Fire(t, defaultWatchEvery)
	if res := <-done; res.err != nil || res.o.State != a2a.TaskStateCompleted {
		t.Fatalf("%+v %v\n%s", res.o, res.err, errb.String())
	}
	if out.String() != "I'll run it.\nDone after all." {
		t.Errorf("stdout %q, want the answer given after the confirmation", out.String())
	}
}
