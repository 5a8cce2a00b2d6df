package idediff_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentry-dev/agentry/ide/idediff"
	"github.com/agentry-dev/agentry/internal/modeltest"
	"github.com/agentry-dev/agentry/internal/sessiontest"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/tools"
)

// fakeIDE is a Differ whose diffs the test answers.
type fakeIDE struct {
	can     bool
	openErr error
	opened  chan opened    // each OpenDiff, as it starts
	answers chan ideAnswer // what the next OpenDiff returns
	closed  chan string    // each CloseDiff's path
	ended   chan error     // each OpenDiff's end: nil answered, else ctx's error

	mu   sync.Mutex
	open map[string]int // diffs open per path
	max  int            // most diffs open at once for one path
}

type opened struct{ path, content string }

type ideAnswer struct {
	ans idediff.Answer
	err error
}

func newFakeIDE() *fakeIDE {
	return &fakeIDE{
		can: true, opened: make(chan opened, 10), answers: make(chan ideAnswer, 10),
		closed: make(chan string, 10), ended: make(chan error, 10), open: map[string]int{},
	}
}

func (f *fakeIDE) CanDiff() bool { return f.can }

func (f *fakeIDE) OpenDiff(ctx context.Context, path, content string) (idediff.Answer, error) {
	if f.openErr != nil {
		return idediff.Answer{}, f.openErr
	}
	f.mu.Lock()
	f.open[path]++
	f.max = max(f.max, f.open[path])
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.open[path]--
		f.mu.Unlock()
	}()
	f.opened <- opened{path, content}
	select {
	case a := <-f.answers:
		f.ended <- nil
		return a.ans, a.err
	case <-ctx.Done():
		f.ended <- ctx.Err()
		return idediff.Answer{}, ctx.Err()
	}
}

func (f *fakeIDE) CloseDiff(_ context.Context, path string) (*string, error) {
	f.closed <- path
	return nil, nil
}

// human is an inner approver whose answers the test gives, per call id.
type human struct {
	asked     chan runtime.ApprovalRequest
	withdrawn chan error // the cause of each question's withdrawal
	executing chan string

	mu      sync.Mutex
	answers map[string]chan humanAnswer
}

type humanAnswer struct {
	outcome runtime.Outcome
	args    map[string]any
	err     error
}

func newHuman() *human {
	return &human{
		asked: make(chan runtime.ApprovalRequest, 10), withdrawn: make(chan error, 10),
		executing: make(chan string, 10), answers: map[string]chan humanAnswer{},
	}
}

// answer is where call id's answer goes.
func (h *human) answer(id string) chan humanAnswer {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.answers[id]
	if c == nil {
		c = make(chan humanAnswer, 1)
		h.answers[id] = c
	}
	return c
}

func (h *human) Approve(ctx context.Context, req runtime.ApprovalRequest) (runtime.Outcome, error) {
	o, _, err := h.ApproveEdit(ctx, req)
	return o, err
}

func (h *human) ApproveEdit(ctx context.Context, req runtime.ApprovalRequest) (runtime.Outcome, map[string]any, error) {
	h.asked <- req
	select {
	case a := <-h.answer(req.CallID):
		return a.outcome, a.args, a.err
	case <-ctx.Done():
		h.withdrawn <- context.Cause(ctx)
		return runtime.Cancel, nil, context.Cause(ctx)
	}
}

func (h *human) Executing(_ context.Context, callID string) { h.executing <- callID }

// workspace is a directory with f.txt, and its write_file and replace.
func workspace(t *testing.T, content string) (dir, file string, ts []tools.Tool) {
	t.Helper()
	dir = t.TempDir()
	file = filepath.Join(dir, "f.txt")
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := tools.NewWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	set, err := tools.NewSet(tools.Config{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	for _, name := range []string{"write_file", "replace"} {
		tl, ok := set.Lookup(name)
		if !ok {
			t.Fatalf("no %s tool", name)
		}
		ts = append(ts, tl)
	}
	return dir, file, ts
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// callResponse runs a session whose model makes call and then stops,
// with approver; it returns the function response the model got.
func callResponse(t *testing.T, ts []tools.Tool, approver runtime.Approver, call map[string]any, name string) map[string]any {
	t.Helper()
	script := modeltest.NewScript(
		modeltest.CallTurn("", modeltest.FC("c1", name, call)),
		modeltest.TextTurn("done"),
	)
	policy, err := runtime.NewPolicy(runtime.ApprovalDefault, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := sessiontest.NewSession(t, script, runtime.Config{Tools: ts, Policy: policy, Approver: approver})
	sessiontest.Run(t, s, "edit it")
	reqs := script.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	frs := modeltest.FunctionResponses(reqs[1])
	if len(frs) != 1 {
		t.Fatalf("%d function responses, want 1", len(frs))
	}
	return frs[0].Response
}

// TestIDEAccepts: the IDE's diff, the whole proposed file, wins the race;
// the content the user accepted in it (changed from the proposal) is
// written, the model is told with gemini-cli's words, and the terminal's
// question is withdrawn.
func TestIDEAccepts(t *testing.T) {
	for _, tc := range []struct {
		tool     string
		args     func(file string) map[string]any
		proposed string
		said     string
	}{
		{
			tool: "replace",
			args: func(f string) map[string]any {
				return map[string]any{"file_path": f, "instruction": "i", "old_string": "two\n", "new_string": "2\n"}
			},
			proposed: "one\n2\nthree\n",
			said:     " The confirmation step modified the `new_string` content to be: one\nTWO (mine)\nthree\n.",
		},
		{
			tool:     "write_file",
			args:     func(f string) map[string]any { return map[string]any{"file_path": f, "content": "new\n"} },
			proposed: "new\n",
			said:     " User modified the `content` to be: one\nTWO (mine)\nthree\n Here is the updated code:",
		},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			_, file, ts := workspace(t, "one\ntwo\nthree\n")
			ide, h := newFakeIDE(), newHuman()
			const accepted = "one\nTWO (mine)\nthree\n"
			go func() {
				o := <-ide.opened
				if o.path != file || o.content != tc.proposed {
					t.Errorf("OpenDiff(%q, %q), want (%q, %q)", o.path, o.content, file, tc.proposed)
				}
				<-h.asked // the terminal is asked too
				ide.answers <- ideAnswer{ans: idediff.Answer{Accepted: true, Content: accepted}}
			}()
			resp := callResponse(t, ts, idediff.New(h, ide), tc.args(file), tc.tool)
			out, _ := resp["output"].(string)
			if !strings.Contains(out, tc.said) {
				t.Errorf("tool result %q\nlacks %q", resp, tc.said)
			}
			if got := readFile(t, file); got != accepted {
				t.Errorf("file = %q, want the accepted %q", got, accepted)
			}
			if err := <-h.withdrawn; !errors.Is(err, context.Canceled) {
				t.Errorf("the terminal's question ended with %v, want context.Canceled", err)
			}
			if len(ide.closed) != 0 {
				t.Error("CloseDiff called for a diff the IDE answered")
			}
		})
	}
}

// TestIDERejects: the IDE's rejection cancels the call as the terminal's
// would, and withdraws the terminal's question.
func TestIDERejects(t *testing.T) {
	_, file, ts := workspace(t, "one\ntwo\n")
	ide, h := newFakeIDE(), newHuman()
	go func() {
		<-ide.opened
		<-h.asked
		ide.answers <- ideAnswer{ans: idediff.Answer{Accepted: false}}
	}()
	resp := callResponse(t, ts, idediff.New(h, ide), map[string]any{"file_path": file, "content": "x\n"}, "write_file")
	if resp["error"] != "User denied execution." {
		t.Errorf("tool result %v, want the error User denied execution.", resp)
	}
	if got := readFile(t, file); got != "one\ntwo\n" {
		t.Errorf("file = %q, want it untouched", got)
	}
	<-h.withdrawn
}

// TestTerminalFirst: the inner approver's answer stands — its modified
// arguments included — and the IDE's diff is closed (closeDiff, no
// notification) and stops waiting.
func TestTerminalFirst(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer humanAnswer
		want   string
	}{
		{"allow", humanAnswer{outcome: runtime.ProceedAlways}, "x\n"},
		{"allow and save", humanAnswer{outcome: runtime.ProceedAlwaysAndSave}, "x\n"},
		{"modify", humanAnswer{outcome: runtime.ProceedOnce, args: map[string]any{"content": "edited\n"}}, "edited\n"},
		{"cancel", humanAnswer{outcome: runtime.Cancel}, "one\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, file, ts := workspace(t, "one\n")
			ide, h := newFakeIDE(), newHuman()
			go func() {
				<-ide.opened
				<-h.asked
				a := tc.answer
				if a.args != nil {
					a.args["file_path"] = file
				}
				h.answer("c1") <- a
			}()
			callResponse(t, ts, idediff.New(h, ide), map[string]any{"file_path": file, "content": "x\n"}, "write_file")
			if got := <-ide.closed; got != file {
				t.Errorf("CloseDiff(%q), want %q", got, file)
			}
			if err := <-ide.ended; !errors.Is(err, context.Canceled) {
				t.Errorf("OpenDiff ended with %v, want its context cancelled", err)
			}
			if got := readFile(t, file); got != tc.want {
				t.Errorf("file = %q, want %q", got, tc.want)
			}
		})
	}
}

func editRequest(path string) runtime.ApprovalRequest { return editCall("c1", path) }

func editCall(id, path string) runtime.ApprovalRequest {
	return runtime.ApprovalRequest{
		CallID: id, Tool: "write_file", Kind: tools.KindEdit,
		Args: map[string]any{"file_path": path, "content": "after"},
		Diff: &tools.FileDiff{Path: path, Before: "before", After: "after"},
	}
}

// TestOpenDiffFails: with the IDE gone the inner approver alone decides,
// and no closeDiff is sent.
func TestOpenDiffFails(t *testing.T) {
	ide, h := newFakeIDE(), newHuman()
	ide.openErr = errors.New("connection lost")
	logged := make(chan string, 1)
	log := slog.New(logTo(logged))
	go func() {
		<-logged // the failure was seen: now the terminal answers
		h.answer("c1") <- humanAnswer{outcome: runtime.ProceedOnce, args: map[string]any{"content": "theirs"}}
	}()
	o, args, err := idediff.New(h, ide, idediff.WithLogger(log)).ApproveEdit(t.Context(), editRequest("/w/f"))
	if o != runtime.ProceedOnce || args["content"] != "theirs" || err != nil {
		t.Errorf("ApproveEdit = %s, %v, %v; want the inner answer", o, args, err)
	}
	if len(ide.closed) != 0 {
		t.Error("CloseDiff called after OpenDiff failed")
	}
}

// logTo is a slog handler sending each record's message to c.
type logTo chan string

func (c logTo) Enabled(context.Context, slog.Level) bool      { return true }
func (c logTo) Handle(_ context.Context, r slog.Record) error { c <- r.Message; return nil }
func (c logTo) WithAttrs([]slog.Attr) slog.Handler            { return c }
func (c logTo) WithGroup(string) slog.Handler                 { return c }

// TestNoDiff: the requests the IDE is not asked about go to the inner
// approver alone.
func TestNoDiff(t *testing.T) {
	mode := func(m runtime.ApprovalMode) idediff.Option {
		return idediff.WithMode(func() runtime.ApprovalMode { return m })
	}
	shell := runtime.ApprovalRequest{CallID: "c1", Tool: "run_shell_command", Kind: tools.KindExecute, Args: map[string]any{"command": "ls"}}
	noPreview := editRequest("/w/f")
	noPreview.Diff = nil
	for _, tc := range []struct {
		name string
		req  runtime.ApprovalRequest
		can  bool
		opts []idediff.Option
	}{
		{"auto_edit", editRequest("/w/f"), true, []idediff.Option{mode(runtime.ApprovalAutoEdit)}},
		{"yolo", editRequest("/w/f"), true, []idediff.Option{mode(runtime.ApprovalYolo)}},
		{"plan", editRequest("/w/f"), true, []idediff.Option{mode(runtime.ApprovalPlan)}},
		{"cannot diff", editRequest("/w/f"), false, nil},
		{"other tool", shell, true, nil},
		{"no preview", noPreview, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ide, h := newFakeIDE(), newHuman()
			ide.can = tc.can
			h.answer("c1") <- humanAnswer{outcome: runtime.ProceedAlways}
			o, _, err := idediff.New(h, ide, tc.opts...).ApproveEdit(t.Context(), tc.req)
			if o != runtime.ProceedAlways || err != nil {
				t.Errorf("ApproveEdit = %s, %v; want the inner answer", o, err)
			}
			if len(ide.opened) != 0 {
				t.Error("a diff was opened")
			}
		})
	}
	// In the default mode the same request opens one.
	ide, h := newFakeIDE(), newHuman()
	h.answer("c1") <- humanAnswer{outcome: runtime.ProceedOnce}
	if _, _, err := idediff.New(h, ide, mode(runtime.ApprovalDefault)).ApproveEdit(t.Context(), editRequest("/w/f")); err != nil {
		t.Fatal(err)
	}
	if len(ide.opened) != 1 {
		t.Error("no diff opened in the default mode")
	}
}

// TestAcceptWithoutContent: an accept with empty content runs the call
// as proposed, as gemini-cli applies no payload then.
func TestAcceptWithoutContent(t *testing.T) {
	ide, h := newFakeIDE(), newHuman()
	ide.answers <- ideAnswer{ans: idediff.Answer{Accepted: true}}
	a := idediff.New(h, ide)
	go func() { <-h.asked }()
	o, args, err := a.ApproveEdit(t.Context(), editRequest("/w/f"))
	if o != runtime.ProceedOnce || args != nil || err != nil {
		t.Errorf("ApproveEdit = %s, %v, %v; want proceed_once with the model's arguments", o, args, err)
	}
}

// TestAborted: a run aborted while both wait closes the IDE's diff too.
func TestAborted(t *testing.T) {
	ide, h := newFakeIDE(), newHuman()
	ctx, cancel := context.WithCancelCause(t.Context())
	errAbort := errors.New("aborted")
	go func() {
		<-ide.opened
		<-h.asked
		cancel(errAbort)
	}()
	o, _, err := idediff.New(h, ide).ApproveEdit(ctx, editRequest("/w/f"))
	if o != runtime.Cancel || !errors.Is(err, errAbort) {
		t.Errorf("ApproveEdit = %s, %v; want cancel with the abort's cause", o, err)
	}
	if got := <-ide.closed; got != "/w/f" {
		t.Errorf("CloseDiff(%q), want /w/f", got)
	}
}

// TestOneDiffPerPath: while a file's diff is open, another call on the
// same file is asked without the IDE; a call on another file gets its
// own diff, and once the first is decided the next call on the file
// opens one again.
func TestOneDiffPerPath(t *testing.T) {
	ide, h := newFakeIDE(), newHuman()
	a := idediff.New(h, ide)
	first := make(chan runtime.Outcome, 1)
	go func() {
		o, _, _ := a.ApproveEdit(t.Context(), editRequest("/w/f"))
		first <- o
	}()
	<-ide.opened
	<-h.asked
	// A second call on /w/f while the first's diff is open.
	h.answer("c2") <- humanAnswer{outcome: runtime.ProceedOnce}
	if o, _, err := a.ApproveEdit(t.Context(), editCall("c2", "/w/f")); o != runtime.ProceedOnce || err != nil {
		t.Fatalf("second call: %s, %v", o, err)
	}
	<-h.asked
	if len(ide.opened) != 0 {
		t.Fatal("a second diff opened for the same file")
	}
	// Another file gets its own diff at the same time.
	other := make(chan runtime.Outcome, 1)
	go func() {
		o, _, _ := a.ApproveEdit(t.Context(), editCall("c3", "/w/g"))
		other <- o
	}()
	if o := <-ide.opened; o.path != "/w/g" {
		t.Fatalf("opened %q, want /w/g", o.path)
	}
	<-h.asked
	ide.answers <- ideAnswer{ans: idediff.Answer{Accepted: false}}
	ide.answers <- ideAnswer{ans: idediff.Answer{Accepted: false}}
	<-h.withdrawn
	<-h.withdrawn
	if o1, o2 := <-first, <-other; o1 != runtime.Cancel || o2 != runtime.Cancel {
		t.Fatalf("outcomes %s, %s; want both cancelled by the IDE", o1, o2)
	}
	// Back to back: the next call on /w/f opens its diff.
	go func() { <-h.asked }()
	ide.answers <- ideAnswer{ans: idediff.Answer{Accepted: true, Content: "mine"}}
	o, args, err := a.ApproveEdit(t.Context(), editCall("c4", "/w/f"))
	if o != runtime.ProceedOnce || args["content"] != "mine" || args[tools.ModifiedByUser] != true || err != nil {
		t.Errorf("third call: %s, %v, %v", o, args, err)
	}
	if got := (<-ide.opened).path; got != "/w/f" {
		t.Errorf("third call opened %q", got)
	}
	ide.mu.Lock()
	defer ide.mu.Unlock()
	if ide.max != 1 {
		t.Errorf("%d diffs open at once for one file", ide.max)
	}
}

// TestExecutingForwarded: the inner approver still hears calls start.
func TestExecutingForwarded(t *testing.T) {
	h := newHuman()
	idediff.New(h, newFakeIDE()).Executing(t.Context(), "c7")
	if got := <-h.executing; got != "c7" {
		t.Errorf("Executing(%q), want c7", got)
	}
}

// TestReplaceArgs: an accepted replace becomes a replacement of the
// whole file as previewed by the accepted content, as runtime.ModifiedArgs
// makes it.
func TestReplaceArgs(t *testing.T) {
	ide, h := newFakeIDE(), newHuman()
	ide.answers <- ideAnswer{ans: idediff.Answer{Accepted: true, Content: "whole\n"}}
	go func() { <-h.asked }()
	req := runtime.ApprovalRequest{
		CallID: "c1", Tool: "replace", Kind: tools.KindEdit,
		Args: map[string]any{"file_path": "f", "instruction": "i", "old_string": "a", "new_string": "b", "allow_multiple": true},
		Diff: &tools.FileDiff{Path: "/w/f", Before: "xa\nya\n", After: "xb\nyb\n"},
	}
	_, args, err := idediff.New(h, ide).ApproveEdit(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"file_path": "f", "instruction": "i", "old_string": "xa\nya\n", "new_string": "whole\n", "allow_multiple": false, tools.ModifiedByUser: true}
	if fmt.Sprint(args) != fmt.Sprint(want) {
		t.Errorf("args = %v\nwant %v", args, want)
	}
	if o := <-ide.opened; o.content != "xb\nyb\n" {
		t.Errorf("OpenDiff content %q, want the previewed file", o.content)
	}
}
