package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/runstats"
	"github.com/agentry-dev/agentry/runtime"
)

func TestParseBatchLine(t *testing.T) {
	seen := map[string]int{"taken": 1}
	req, bad := parseBatchLine([]byte(`{"id":"x1","prompt":"fix it","model":"flash","workspace":"sub","approval_mode":"yolo"}`), 2, seen)
	if bad != nil {
		t.Fatalf("valid line: %+v", bad.Error)
	}
	want := batchRequest{line: 2, ID: "x1", Prompt: "fix it", Model: "flash", Workspace: "sub", ApprovalMode: "yolo"}
	if diff := cmp.Diff(want, req, cmp.AllowUnexported(batchRequest{})); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	if seen["x1"] != 2 {
		t.Errorf("seen = %v, want x1 on line 2", seen)
	}
	// An agent is accepted by the parser; running it is what fails.
	if _, bad := parseBatchLine([]byte(`{"id":"x2","prompt":"p","agent":"reviewer"}`), 3, seen); bad != nil {
		t.Errorf("agent line: %+v", bad.Error)
	}
}

func TestParseBatchLineErrors(t *testing.T) {
	for _, tc := range []struct {
		name, line, id, msg string
	}{
		{"invalid JSON", `{"id":"a",`, "line-7", `line 7: not a JSON object: unexpected end of JSON input`},
		{"not an object", `["a","b"]`, "line-7", `line 7: not a JSON object: json: cannot unmarshal array into Go value of type map[string]json.RawMessage`},
		{"null", `null`, "line-7", `line 7: not a JSON object: null`},
		{"missing id", `{"prompt":"p"}`, "line-7", `line 7: missing "id"`},
		{"empty id", `{"id":" ","prompt":"p"}`, "line-7", `line 7: "id" is empty`},
		{"id not a string", `{"id":5,"prompt":"p"}`, "line-7", `line 7: "id" must be a string`},
		{"missing prompt", `{"id":"a"}`, "a", `line 7: missing "prompt"`},
		{"empty prompt", `{"id":"a","prompt":"  "}`, "a", `line 7: "prompt" is empty`},
		{"prompt not a string", `{"id":"a","prompt":["p"]}`, "a", `line 7: "prompt" must be a string`},
		// Its result goes under the line's name: "taken" has its own.
		{"duplicate id", `{"id":"taken","prompt":"p"}`, "line-7", `line 7: duplicate id "taken": line 3 has it already; this line is not run`},
		{"unknown approval mode", `{"id":"a","prompt":"p","approval_mode":"always"}`, "a", `line 7: unknown approval_mode "always" (want plan, default, auto_edit or yolo)`},
		{"unknown model", `{"id":"a","prompt":"p","model":"gpt-4"}`, "a", `line 7: model: unknown model "gpt-4": use a Gemini model (gemini-2.5-flash, or an alias: auto, pro, flash, flash-lite), gemini:<id>, openai:<model> or replay:<file.jsonl>`},
		{"unknown field", `{"id":"a","prompt":"p","approvalMode":"yolo"}`, "a", `line 7: unknown field "approvalMode" (the fields are id, prompt, model, agent, workspace, approval_mode)`},
		{"every problem at once", `{"prompt":"","model":3,"approval_mode":"x"}`, "line-7", `line 7: "model" must be a string; missing "id"; "prompt" is empty; unknown approval_mode "x" (want plan, default, auto_edit or yolo)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[string]int{"taken": 3}
			_, bad := parseBatchLine([]byte(tc.line), 7, seen)
			if bad == nil {
				t.Fatalf("%s: accepted", tc.line)
			}
			want := batchResult{ID: tc.id, Status: "error", Usage: batchUsage{Models: map[string]runstats.ModelStreamTokens{}},
				Error: &batchErr{Type: "FatalInputError", Message: tc.msg, ExitCode: 42}}
			if diff := cmp.Diff(want, *bad); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseBatchLineReservesFailedIDs: a bad line's id cannot be reused by
// a later line, which would give the id two results.
func TestParseBatchLineReservesFailedIDs(t *testing.T) {
	seen := map[string]int{}
	if _, bad := parseBatchLine([]byte(`{"id":"a","prompt":"p","approval_mode":"x"}`), 1, seen); bad == nil {
		t.Fatal("bad line accepted")
	}
	_, bad := parseBatchLine([]byte(`{"id":"a","prompt":"p"}`), 2, seen)
	if bad == nil || bad.ID != "line-2" || bad.Error.Message != `line 2: duplicate id "a": line 1 has it already; this line is not run` {
		t.Errorf("reused id: %+v", bad)
	}
}

func TestReadLine(t *testing.T) {
	r := bufio.NewReaderSize(strings.NewReader("short\n"+strings.Repeat("x", 40)+"\n\nlast"), 16)
	var got []string
	for {
		line, tooLong, err := readLine(r, 20)
		if err != nil {
			break
		}
		if tooLong {
			got = append(got, "<too long>")
			continue
		}
		got = append(got, string(line))
	}
	if diff := cmp.Diff([]string{"short", "<too long>", "", "last"}, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func TestScanResults(t *testing.T) {
	a := `{"id":"a","status":"success"}` + "\n"
	b := `{"id":"b","status":"error"}` + "\n"
	for _, tc := range []struct {
		name, file string
		done       []string
		complete   int
	}{
		{"empty", "", nil, 0},
		{"complete lines", a + b, []string{"a", "b"}, len(a + b)},
		{"blank line kept", a + "\n" + b, []string{"a", "b"}, len(a + "\n" + b)},
		{"torn last line", a + b + `{"id":"c","sta`, []string{"a", "b"}, len(a + b)},
		// Whole JSON without its newline was still cut before the newline
		// was written: it is redone rather than trusted.
		{"last line without newline", a + `{"id":"c","status":"success"}`, []string{"a"}, len(a)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done, complete, err := scanResults(strings.NewReader(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for id := range done {
				ids = append(ids, id)
			}
			if diff := cmp.Diff(tc.done, ids, cmpSorted()); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if complete != int64(tc.complete) {
				t.Errorf("complete = %d, want %d", complete, tc.complete)
			}
		})
	}
	_, _, err := scanResults(strings.NewReader(a + "garbage\n" + b))
	if err == nil || !strings.Contains(err.Error(), "line 2 of the output file is not a batch result") {
		t.Errorf("garbage line: err = %v", err)
	}
	if code, _ := exitFor(err); code != runtime.ExitInput {
		t.Errorf("garbage line: exit %d, want %d", code, runtime.ExitInput)
	}
}

// cmpSorted compares string slices as sets.
func cmpSorted() cmp.Option {
	return cmp.Transformer("sort", func(in []string) []string {
		out := append([]string(nil), in...)
		for i := range out {
			for j := i + 1; j < len(out); j++ {
				if out[j] < out[i] {
					out[i], out[j] = out[j], out[i]
				}
			}
		}
		return out
	})
}

// TestOpenBatchOutputResume: --resume cuts a torn last line off the file
// before appending, so the next line starts on a line of its own.
func TestOpenBatchOutputResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	a := `{"id":"a","status":"success"}` + "\n"
	if err := os.WriteFile(path, []byte(a+`{"id":"b","sta`), 0o644); err != nil {
		t.Fatal(err)
	}
	f, done, err := openBatchOutput(path, true, false)
	if err != nil {
		t.Fatal(err)
	}
	if !done["a"] || done["b"] || len(done) != 1 {
		t.Errorf("done = %v, want only a", done)
	}
	if _, err := f.Write([]byte(`{"id":"b","status":"success"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, _ := os.ReadFile(path)
	if want := a + `{"id":"b","status":"success"}` + "\n"; string(got) != want {
		t.Errorf("file = %q, want %q", got, want)
	}
	// Without --resume the file starts over.
	f, done, err = openBatchOutput(path, false, false)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got, _ := os.ReadFile(path); len(got) != 0 || len(done) != 0 {
		t.Errorf("without --resume: file %q, done %v", got, done)
	}
}

// TestBatchResultGolden pins the output line's shape: field names and
// order, usage always present, error only when not a success.
func TestBatchResultGolden(t *testing.T) {
	c := &batchCollector{metrics: runstats.New()}
	for _, ev := range conversation(runtime.Event{Type: runtime.EventAgentEnd, AgentEnd: &runtime.AgentEnd{Reason: runtime.EndCompleted}}) {
		c.observe(ev)
	}
	ok := c.result(newBatchResult("fix-1"))
	ok.DurationMs = 1500
	bad := inputFailure("line-3", "line 3: missing \"prompt\"")
	var got bytes.Buffer
	for _, r := range []batchResult{ok, bad} {
		line, err := encodeResult(r)
		if err != nil {
			t.Fatal(err)
		}
		got.Write(line)
	}
	want := `{"id":"fix-1","status":"success","response":"Done; I could not run the tests.","usage":{"input_tokens":190,"output_tokens":15,"total_tokens":210,"models":{"gemini-2.5-flash":{"total_tokens":210,"input_tokens":190,"output_tokens":15,"cached":10,"input":180}}},"duration_ms":1500}
{"id":"line-3","status":"error","response":"","usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0,"models":{}},"error":{"type":"FatalInputError","message":"line 3: missing \"prompt\"","exit_code":42},"duration_ms":0}
`
	if diff := cmp.Diff(want, got.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func TestBatchCollectorEnds(t *testing.T) {
	fatal := runtime.Event{Type: runtime.EventError, Meta: map[string]any{"errorName": "FatalAuthenticationError", "exitCode": 41},
		Error: &runtime.ErrorData{Status: "UNAUTHENTICATED", Message: "no model credentials", Fatal: true}}
	end := func(r runtime.EndReason) runtime.Event {
		return runtime.Event{Type: runtime.EventAgentEnd, AgentEnd: &runtime.AgentEnd{Reason: r}}
	}
	for _, tc := range []struct {
		name   string
		evs    []runtime.Event
		status string
		err    *batchErr
	}{
		{"completed", []runtime.Event{end(runtime.EndCompleted)}, "success", nil},
		{"aborted", []runtime.Event{end(runtime.EndAborted)}, "cancelled", nil},
		{"fatal", []runtime.Event{fatal, end(runtime.EndFailed)}, "error", &batchErr{"FatalAuthenticationError", "no model credentials", 41}},
		{"failed without a reason", []runtime.Event{end(runtime.EndFailed)}, "error", &batchErr{"Error", "the agent stopped because of a failure", 1}},
		{"max turns", []runtime.Event{end(runtime.EndMaxTurns)}, "error", &batchErr{"FatalTurnLimitedError", "Reached max session turns for this session. Increase the number of turns by specifying model.maxSessionTurns in settings.json.", 53}},
		{"no end", nil, "error", &batchErr{"Error", "the agent's stream ended without an agent_end event", 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &batchCollector{metrics: runstats.New()}
			for _, ev := range tc.evs {
				c.observe(ev)
			}
			r := c.result(newBatchResult("x"))
			if r.Status != tc.status {
				t.Errorf("status = %q, want %q", r.Status, tc.status)
			}
			if diff := cmp.Diff(tc.err, r.Error); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBatchProgressRender(t *testing.T) {
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	p := &batchProgress{start: start, now: func() time.Time { return start.Add(10 * time.Second) }, total: 200}
	if got, want := p.render(batchCounts{ok: 35, failed: 2}), "[###-----------------] 37/200  ok 35  err 2  3.7/s"; got != want {
		t.Errorf("render = %q, want %q", got, want)
	}
	for range 10 {
		p.skip()
	}
	if got, want := p.render(batchCounts{ok: 190}), "[####################] 200/200  ok 190  err 0  skipped 10  19.0/s"; got != want {
		t.Errorf("render = %q, want %q", got, want)
	}
	p.total = 0
	if got, want := p.render(batchCounts{ok: 1}), "11 done  ok 1  err 0  skipped 10  0.1/s"; got != want {
		t.Errorf("render = %q, want %q", got, want)
	}
	// Not a terminal: nothing is drawn.
	var b bytes.Buffer
	q := newBatchProgress(&b)
	q.update(batchCounts{ok: 1}, true)
	q.finish()
	if b.Len() != 0 {
		t.Errorf("progress on a non-terminal: %q", b.String())
	}
}

func TestCountLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.jsonl")
	content := "{\"id\":\"a\"}\n\n   \n" + strings.Repeat("y", 200<<10) + "\n{\"id\":\"b\"}"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := countLines(path); got != 3 {
		t.Errorf("countLines = %d, want 3", got)
	}
}

// batchCommand runs `agentry batch` in-process with args, as Main would
// once the command is registered.
func batchCommand(t *testing.T, ctx context.Context, sigs chan os.Signal, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	exit := 0
	cmd := newBatchCommand(stdio{in: strings.NewReader(""), out: &out, err: &errb}, sigs, &exit)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatalf("batch %q: %v", args, err)
	}
	return out.String(), errb.String(), exit
}

// fakeEnv points agentry at srv with a fresh home and workspace.
func fakeEnv(t *testing.T, srv *fakegemini.Server) (ws string) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("GEMINI_API_KEY", fakegemini.DefaultAPIKey)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", srv.URL)
	return t.TempDir()
}

func resultIDs(t *testing.T, s string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON line: %q: %v", line, err)
		}
		id, _ := m["id"].(string)
		if _, dup := out[id]; dup {
			t.Errorf("id %q written twice", id)
		}
		out[id] = m
	}
	return out
}

// TestBatchCancel: Ctrl-C aborts the running prompts, which are not
// written, keeps the finished ones and exits 130; --resume then runs only
// the aborted ones.
func TestBatchCancel(t *testing.T) {
	srv := fakegemini.New(t)
	srv.EnqueueFor("gemini-done", fakegemini.Text("done"))
	srv.EnqueueFor("gemini-hang-1", fakegemini.Hang("partial "))
	srv.EnqueueFor("gemini-hang-2", fakegemini.Hang())
	ws := fakeEnv(t, srv)
	in := filepath.Join(ws, "in.jsonl")
	out := filepath.Join(ws, "out.jsonl")
	if err := os.WriteFile(in, []byte(`{"id":"done","prompt":"p","model":"gemini-done"}
{"id":"hang-1","prompt":"p","model":"gemini-hang-1"}
{"id":"hang-2","prompt":"p","model":"gemini-hang-2"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // hang guard
	defer cancel()
	sigs := make(chan os.Signal, 1)
	type ran struct {
		stderr string
		code   int
	}
	first := make(chan ran, 1)
	go func() {
		_, stderr, code := batchCommand(t, ctx, sigs, "-w", ws, "-c", "3", "-o", out, in)
		first <- ran{stderr, code}
	}()
	if _, err := srv.WaitRequests(ctx, 3); err != nil {
		t.Fatal(err)
	}
	// Wait for the finished prompt's line, so the signal finds exactly
	// the two hanging prompts running.
	for {
		b, _ := os.ReadFile(out)
		if bytes.HasSuffix(b, []byte("\n")) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the finished prompt's result was never written")
		case <-time.After(10 * time.Millisecond):
		}
	}
	sigs <- os.Interrupt
	r := <-first
	if r.code != runtime.ExitCancelled || !strings.Contains(r.stderr, "1 succeeded, 0 failed, 2 stopped") {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	b, _ := os.ReadFile(out)
	got := resultIDs(t, string(b))
	if len(got) != 1 || got["done"]["status"] != "success" {
		t.Fatalf("after Ctrl-C the output is:\n%s", b)
	}

	srv.EnqueueFor("gemini-hang-1", fakegemini.Text("one"))
	srv.EnqueueFor("gemini-hang-2", fakegemini.Text("two"))
	_, stderr, code := batchCommand(t, ctx, make(chan os.Signal), "-w", ws, "-c", "3", "-o", out, "--resume", in)
	if code != 0 {
		t.Fatalf("resume: exit %d, stderr:\n%s", code, stderr)
	}
	b, _ = os.ReadFile(out)
	got = resultIDs(t, string(b))
	for id, resp := range map[string]string{"done": "done", "hang-1": "one", "hang-2": "two"} {
		if got[id]["status"] != "success" || got[id]["response"] != resp {
			t.Errorf("%s: %v", id, got[id])
		}
	}
	if len(got) != 3 {
		t.Errorf("output:\n%s", b)
	}
}

// TestBatchFlagErrors: bad flags fail before any prompt runs, with run's
// exit code for input errors.
func TestBatchFlagErrors(t *testing.T) {
	srv := fakegemini.New(t)
	ws := fakeEnv(t, srv)
	in := filepath.Join(ws, "in.jsonl")
	if err := os.WriteFile(in, []byte(`{"id":"a","prompt":"p"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-c", "0", in}, "--concurrency must be at least 1"},
		{[]string{"--resume", in}, "--resume needs -o FILE"},
		{[]string{"-y", "--approval-mode", "plan", in}, "cannot use both --yolo"},
		{[]string{filepath.Join(ws, "missing.jsonl")}, "batch input:"},
		{[]string{"--approval-mode", "always", in}, "approval"},
	} {
		stdout, stderr, code := batchCommand(t, context.Background(), make(chan os.Signal), append([]string{"-w", ws}, tc.args...)...)
		if code == 0 || !strings.Contains(stderr, tc.msg) || stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", tc.args, code, stdout, stderr)
		}
	}
	if len(srv.Requests()) != 0 {
		t.Errorf("a model was called: %d requests", len(srv.Requests()))
	}
}

// TestOpenBatchOutputRetryFailed: --retry-failed removes the error lines
// (and a torn last line) and leaves their ids to run again; the success
// lines stay as they were, in their order.
func TestOpenBatchOutputRetryFailed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	a := `{"id":"a","status":"success","response":"x"}` + "\n"
	b := `{"id":"b","status":"error"}` + "\n"
	c := `{"id":"c","status":"success"}` + "\n"
	if err := os.WriteFile(path, []byte(a+b+"\n"+c+`{"id":"d","sta`), 0o600); err != nil {
		t.Fatal(err)
	}
	f, done, err := openBatchOutput(path, true, true)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]bool{"a": true, "c": true}, done); diff != "" {
		t.Errorf("done (-want +got):\n%s", diff)
	}
	if _, err := f.Write([]byte(`{"id":"b","status":"success"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, _ := os.ReadFile(path)
	if want := a + "\n" + c + `{"id":"b","status":"success"}` + "\n"; string(got) != want {
		t.Errorf("file = %q, want %q", got, want)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the file's own 0600", info.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %q", left)
	}
}

// TestLineWorkspaceConfined: a line's workspace resolves, symlinks
// included, inside -w or the line is refused, naming itself and the path.
func TestLineWorkspaceConfined(t *testing.T) {
	parent, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(parent, "w")
	for _, d := range []string{filepath.Join(base, "sub", "deep"), filepath.Join(parent, "evil"), filepath.Join(parent, "w-sibling")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"out":     filepath.Join(parent, "evil"),
		"up":      "..",
		"in":      "sub",
		"sub/top": "../..",
	} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	b := &batch{base: &config.Settings{Workspace: base}}
	tests := []struct {
		ws   string
		want string // "" for -w itself; "!" for outside -w; "?" for unresolvable
	}{
		{"", ""},
		{".", ""},
		{base, ""},
		{"sub", filepath.Join(base, "sub")},
		{"./sub/deep/..", filepath.Join(base, "sub")},
		{filepath.Join(base, "sub", "deep"), filepath.Join(base, "sub", "deep")},
		{"in/deep", filepath.Join(base, "sub", "deep")},
		{"missing", "?"},
		{"out/missing/..", "?"},
		{"../evil", "!"},
		{"..", "!"},
		{"../w-sibling", "!"},
		{filepath.Join(parent, "evil"), "!"},
		{"/", "!"},
		{"out", "!"},
		{"out/..", "!"},
		{"up", "!"},
		{"sub/top", "!"},
		{"missing/../../evil", "?"},
	}
	for _, tc := range tests {
		got, err := b.lineWorkspace(batchRequest{line: 3, Workspace: tc.ws})
		switch {
		case tc.want == "?":
			var ie *inputError
			if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), fmt.Sprintf("line 3: workspace %q in %s cannot be used: ", tc.ws, base)) {
				t.Errorf("%q: %q, %v; want it refused as a path that does not resolve", tc.ws, got, err)
			}
		case tc.want == "!":
			var ie *inputError
			if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), fmt.Sprintf("line 3: workspace %q resolves to ", tc.ws)) || !strings.Contains(err.Error(), base) {
				t.Errorf("%q: %q, %v; want it refused as bad input naming the line, the path and -w", tc.ws, got, err)
			}
		case err != nil || got != tc.want:
			t.Errorf("%q: %q, %v; want %q", tc.ws, got, err, tc.want)
		}
	}
}
