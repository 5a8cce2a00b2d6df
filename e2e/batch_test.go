package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/internal/fakegemini"
)

// capacity429 is a 429 for exhausted model capacity that asks for a retry
// after delay: the retry loop honours the delay as it is (a per-minute
// quota error would wait at least the 5 s initial backoff), so a test can
// mix in many 429s and stay fast.
func capacity429(delay time.Duration) fakegemini.Step {
	return fakegemini.APIError(http.StatusTooManyRequests, "RESOURCE_EXHAUSTED",
		"No capacity available for this model. MODEL_CAPACITY_EXHAUSTED",
		fakegemini.ErrorInfo("MODEL_CAPACITY_EXHAUSTED", "googleapis.com", nil),
		fakegemini.RetryInfo(delay))
}

// batchInput writes a batch input file of lines.
func (e *env) batchInput(lines ...string) string {
	e.t.Helper()
	return e.writeFile(filepath.Join(e.t.TempDir(), "in.jsonl"), strings.Join(lines, "\n")+"\n")
}

func request(id, prompt, model string) string {
	m := map[string]string{"id": id, "prompt": prompt}
	if model != "" {
		m["model"] = model
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// results decodes a batch output, failing on a torn or repeated line.
func results(t *testing.T, out string) map[string]map[string]any {
	t.Helper()
	if out != "" && !strings.HasSuffix(out, "\n") {
		t.Errorf("output does not end with a newline: ...%q", out[max(0, len(out)-80):])
	}
	got := map[string]map[string]any{}
	for _, l := range lines(t, out) {
		id, _ := l["id"].(string)
		if _, dup := got[id]; dup {
			t.Errorf("id %q appears twice", id)
		}
		got[id] = l
	}
	return got
}

// TestBatch429s: 200 prompts, 8 at a time, each on its own model queue of
// the fake so every answer can be checked against its id; every fifth
// prompt's first call gets a 429 and is retried. All succeed, each id
// once, with its own answer and usage.
func TestBatch429s(t *testing.T) {
	srv := fakegemini.New(t)
	e := newEnv(t)
	e.set("GEMINI_API_KEY="+fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL="+srv.URL)
	const n = 200
	var in []string
	for i := range n {
		model := fmt.Sprintf("gemini-batch-%03d", i)
		if i%5 == 0 {
			srv.EnqueueFor(model, capacity429(10*time.Millisecond))
		}
		srv.EnqueueFor(model, fakegemini.Text("answer ", fmt.Sprint(i)))
		in = append(in, request(fmt.Sprintf("p%03d", i), "question "+fmt.Sprint(i), model))
	}
	r := e.run("", "batch", "-c", "8", e.batchInput(in...))
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	got := results(t, r.stdout)
	if len(got) != n {
		t.Errorf("%d results, want %d", len(got), n)
	}
	for i := range n {
		res := got[fmt.Sprintf("p%03d", i)]
		usage, _ := res["usage"].(map[string]any)
		if res["status"] != "success" || res["response"] != fmt.Sprintf("answer %d", i) || usage["total_tokens"] == 0.0 {
			t.Errorf("p%03d: %v", i, res)
		}
	}
	if reqs := len(srv.Requests()); reqs != n+n/5 {
		t.Errorf("%d model requests, want %d (one per prompt, one more per 429)", reqs, n+n/5)
	}
	if r.stderr != "" {
		t.Errorf("stderr is not a terminal, yet got:\n%s", r.stderr)
	}
}

// TestBatchFallsBackOnce: the configured model is out of daily quota. The
// prompts share one availability state, so once a prompt has found that
// out, no later prompt tries the model: at most the first -c prompts
// (those already running) call it, not all 200.
func TestBatchFallsBackOnce(t *testing.T) {
	const n, c = 200, 8
	srv := fakegemini.New(t, fakegemini.AllowUnused())
	for range n {
		srv.EnqueueFor("gemini-2.5-pro", fakegemini.RateLimitPerDay())
	}
	for range n {
		srv.EnqueueFor("gemini-2.5-flash", fakegemini.Text("from flash"))
	}
	e := newEnv(t)
	e.set("GEMINI_API_KEY="+fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL="+srv.URL)
	e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), `{"model": {"fallbackChains": [[
		{"model": "gemini-2.5-pro", "actions": {"terminal": "silent"}},
		{"model": "gemini-2.5-flash", "lastResort": true, "actions": {"terminal": "silent"}}
	]]}}`)
	var in []string
	for i := range n {
		in = append(in, request(fmt.Sprintf("p%03d", i), "hello", ""))
	}
	r := e.run("", "batch", "-m", "gemini-2.5-pro", "-c", fmt.Sprint(c), e.batchInput(in...))
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	got := results(t, r.stdout)
	for id, res := range got {
		if res["status"] != "success" || res["response"] != "from flash" {
			t.Errorf("%s: %v", id, res)
		}
	}
	if len(got) != n {
		t.Errorf("%d results, want %d", len(got), n)
	}
	pro, flash := 0, 0
	for _, req := range srv.Requests() {
		switch req.Model {
		case "gemini-2.5-pro":
			pro++
		case "gemini-2.5-flash":
			flash++
		}
	}
	// A prompt starts only when an earlier one has finished, and a
	// prompt can finish only after its pro call failed and marked pro
	// unavailable: only the first c prompts can have called pro.
	if pro < 1 || pro > c || flash != n {
		t.Errorf("pro called %d times (want 1 to %d), flash %d times (want %d)", pro, c, flash, n)
	}
}

// TestBatchBadLine: a bad line in the middle becomes an error result named
// after its line; the other prompts run and the exit code is 1.
func TestBatchBadLine(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(fakegemini.Text("ok"), fakegemini.Text("ok"), fakegemini.Text("ok"), fakegemini.Text("ok"))
	e := newEnv(t)
	e.set("GEMINI_API_KEY="+fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL="+srv.URL)
	r := e.run("", "batch", "-m", "gemini-2.5-flash", "-c", "2", e.batchInput(
		request("a", "p", ""),
		request("b", "p", ""),
		`{"id": "c", "prompt": "p"`,
		"",
		request("d", "p", ""),
		request("e", "p", ""),
	))
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstderr:\n%s", r.code, r.stderr)
	}
	got := results(t, r.stdout)
	if len(got) != 5 {
		t.Errorf("%d results, want 5:\n%s", len(got), r.stdout)
	}
	for _, id := range []string{"a", "b", "d", "e"} {
		if got[id]["status"] != "success" || got[id]["response"] != "ok" {
			t.Errorf("%s: %v", id, got[id])
		}
	}
	bad := got["line-3"]
	errObj, _ := bad["error"].(map[string]any)
	if bad["status"] != "error" || errObj["type"] != "FatalInputError" || errObj["exit_code"] != 42.0 ||
		!strings.HasPrefix(errObj["message"].(string), "line 3: not a JSON object") {
		t.Errorf("bad line's result: %v", bad)
	}
}

// TestBatchResumeAfterKill: 200 prompts, 8 at a time, with a 429 before
// every fifth prompt's answer, killed with SIGKILL mid-way, are finished
// by --resume: every id ends up in the output exactly once with its own
// answer and no line is torn, even when the kill cut a line short.
func TestBatchResumeAfterKill(t *testing.T) {
	const n = 200
	srv := fakegemini.New(t, fakegemini.AllowUnused())
	var in []string
	for i := range n {
		model := fmt.Sprintf("gemini-slow-%03d", i)
		if i%5 == 0 {
			srv.EnqueueFor(model, capacity429(10*time.Millisecond))
		}
		// The first run's answer is slow, so the kill finds prompts
		// running; the last step is for the prompts it has to redo.
		srv.EnqueueFor(model, fakegemini.Slow(fakegemini.Text("slow ", fmt.Sprint(i)), 20*time.Millisecond), fakegemini.Text("answer ", fmt.Sprint(i)))
		in = append(in, request(fmt.Sprintf("p%03d", i), "question", model))
	}
	e := newEnv(t)
	e.set("GEMINI_API_KEY="+fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL="+srv.URL)
	input := e.batchInput(in...)
	out := filepath.Join(e.t.TempDir(), "out.jsonl")

	c := e.cmd("batch", "-c", "8", "-o", out, input)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second) // hang guard only
	for {
		b, _ := os.ReadFile(out)
		if bytes.Count(b, []byte("\n")) >= 20 {
			break
		}
		if time.Now().After(deadline) {
			c.Process.Kill()
			t.Fatalf("no 20 results written; stderr:\n%s", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := c.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	first, _ := os.ReadFile(out)
	if bytes.Count(first, []byte("\n")) >= n {
		t.Fatalf("the batch finished before the kill; the test proves nothing:\n%s", first)
	}
	// A kill in the middle of a write leaves a torn line; one cannot be
	// produced on demand, so add one as it would look.
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	torn := `{"id":"p199","status":"succ`
	if _, err := f.WriteString(torn); err != nil {
		t.Fatal(err)
	}
	f.Close()

	r := e.run("", "batch", "-c", "8", "-o", out, "--resume", input)
	if r.code != 0 {
		t.Fatalf("resume: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	final, _ := os.ReadFile(out)
	if !bytes.HasPrefix(final, first) {
		t.Errorf("--resume changed the lines the first run wrote")
	}
	got := results(t, string(final))
	if len(got) != n {
		t.Errorf("%d results, want %d:\n%s", len(got), n, final)
	}
	for i := range n {
		res := got[fmt.Sprintf("p%03d", i)]
		if res["status"] != "success" || !strings.HasSuffix(fmt.Sprint(res["response"]), " "+fmt.Sprint(i)) {
			t.Errorf("p%03d: %v", i, res)
		}
	}
}

// BenchmarkBatch1000 runs 1,000 one-turn prompts, 16 at a time, on the
// replay backend: every prompt replays the one recorded answer. It
// reports the wall time and the peak resident set size of the process.
func BenchmarkBatch1000(b *testing.B) {
	const n = 1000
	dir := b.TempDir()
	var replay, in strings.Builder
	line, err := json.Marshal(map[string]any{"method": "generateContentStream", "response": []any{map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": []any{map[string]any{"text": "the answer"}}},
			"finishReason": "STOP",
		}},
		"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
	}}})
	if err != nil {
		b.Fatal(err)
	}
	replay.Write(line)
	replay.WriteByte('\n')
	for i := range n {
		in.WriteString(request(fmt.Sprintf("p%04d", i), "question", ""))
		in.WriteByte('\n')
	}
	replayPath, inPath := filepath.Join(dir, "replay.jsonl"), filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(replayPath, []byte(replay.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(inPath, []byte(in.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	home := b.TempDir()
	var wall time.Duration
	var peakKB int64
	for b.Loop() {
		ws, err := os.MkdirTemp(dir, "ws")
		if err != nil {
			b.Fatal(err)
		}
		out := filepath.Join(ws, "out.jsonl")
		c := exec.Command(binary, "batch", "-w", ws, "-m", "replay:"+replayPath, "-c", "16", "-o", out, inPath)
		c.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
		start := time.Now()
		if msg, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, msg)
		}
		wall = max(wall, time.Since(start))
		if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peakKB = max(peakKB, ru.Maxrss)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			b.Fatal(err)
		}
		if lines := bytes.Count(got, []byte("\n")); lines != n || bytes.Count(got, []byte(`"status":"success"`)) != n {
			b.Fatalf("%d lines, %d successes, want %d", lines, bytes.Count(got, []byte(`"status":"success"`)), n)
		}
	}
	b.ReportMetric(float64(wall.Milliseconds()), "max-wall-ms")
	b.ReportMetric(float64(peakKB)/1024, "peak-RSS-MB")
}

// TestBatchAgent: a line naming an agent hands its prompt to that agent;
// its complete_task result is the response and its tokens the usage. An
// unknown agent, and an agent that never calls complete_task, give error
// results; the other lines are unaffected.
func TestBatchAgent(t *testing.T) {
	e := newEnv(t)
	e.writeFile("notes.txt", "the answer is 42\n")
	e.writeFile(filepath.Join(e.home, ".agentry", "agents", "reader.md"), readerAgent)
	// a: the reader reads and completes.
	replay := e.replayFile(
		[]map[string]any{call("read_file", map[string]any{"file_path": "notes.txt"})},
		[]map[string]any{call("complete_task", map[string]any{"result": "notes.txt says the answer is 42"})},
	)
	// c: the reader answers without complete_task, and again in its grace
	// turn.
	noComplete := e.replayFile(
		[]map[string]any{text("It says 42.")},
		[]map[string]any{text("I said: 42.")},
	)
	in := e.batchInput(
		`{"id": "a", "agent": "reader", "prompt": "What does notes.txt say?"}`,
		`{"id": "b", "agent": "writer", "prompt": "Write it."}`,
		`{"id": "c", "agent": "reader", "prompt": "And now?", "model": "replay:`+noComplete+`"}`,
	)
	r := e.run("", "batch", "-c", "1", "-m", "replay:"+replay, in)
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	got := results(t, r.stdout)
	a := got["a"]
	if usage, _ := a["usage"].(map[string]any); a["status"] != "success" || a["response"] != "notes.txt says the answer is 42" || usage["total_tokens"] != 220.0 {
		t.Errorf("a: %v", a)
	}
	errB, _ := got["b"]["error"].(map[string]any)
	if got["b"]["status"] != "error" || errB["type"] != "FatalInputError" || errB["exit_code"] != 42.0 ||
		errB["message"] != `unknown agent "writer" (the agents are reader)` {
		t.Errorf("b: %v", got["b"])
	}
	errC, _ := got["c"]["error"].(map[string]any)
	if got["c"]["status"] != "error" || errC["type"] != "SubagentNoCompleteTaskError" ||
		errC["message"] != "Agent stopped calling tools but did not call 'complete_task'." {
		t.Errorf("c: %v", got["c"])
	}
}

// TestBatchReplayPerPrompt: a replay model replays its file from the
// start for every prompt, as "agentry run" would for each: one recording
// (here a tool call, then the answer) answers every prompt, at any
// concurrency.
func TestBatchReplayPerPrompt(t *testing.T) {
	e := newEnv(t)
	e.writeFile("notes.txt", "the answer is 42\n")
	replay := e.replayFile(
		[]map[string]any{call("read_file", map[string]any{"file_path": "notes.txt"})},
		[]map[string]any{text("notes.txt says 42")},
	)
	var in []string
	for i := range 6 {
		in = append(in, request(fmt.Sprintf("q%d", i), "What does notes.txt say?", ""))
	}
	r := e.run("", "batch", "-c", "3", "-m", "replay:"+replay, e.batchInput(in...))
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	got := results(t, r.stdout)
	for i := range 6 {
		res := got[fmt.Sprintf("q%d", i)]
		if usage, _ := res["usage"].(map[string]any); res["status"] != "success" || res["response"] != "notes.txt says 42" || usage["total_tokens"] != 220.0 {
			t.Errorf("q%d: %v", i, res)
		}
	}
}

// TestBatchDuplicateID: a line reusing an earlier line's id is an error
// that names both lines, under the line's own name: the id keeps the one
// result of its first line.
func TestBatchDuplicateID(t *testing.T) {
	e := newEnv(t)
	replay := e.replayFile([]map[string]any{text("ok")})
	r := e.run("", "batch", "-m", "replay:"+replay, e.batchInput(
		request("a", "first", ""),
		request("b", "second", ""),
		request("a", "third", ""),
	))
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	got := results(t, r.stdout) // fails on an id with two results
	if len(got) != 3 || got["a"]["status"] != "success" || got["b"]["status"] != "success" {
		t.Errorf("results:\n%s", r.stdout)
	}
	errObj, _ := got["line-3"]["error"].(map[string]any)
	if got["line-3"]["status"] != "error" || errObj["message"] != `line 3: duplicate id "a": line 1 has it already; this line is not run` {
		t.Errorf("line 3: %v", got["line-3"])
	}
}

// TestBatchRetryFailed: --resume --retry-failed runs again the ids whose
// result is an error and replaces their lines; the successes are kept as
// they were, and the file holds one line per id.
func TestBatchRetryFailed(t *testing.T) {
	e := newEnv(t)
	good := e.replayFile([]map[string]any{text("fine")})
	later := filepath.Join(t.TempDir(), "later.jsonl") // does not exist yet
	input := e.batchInput(
		request("a", "p", ""),
		request("b", "p", "replay:"+later),
		request("c", "p", ""),
	)
	out := filepath.Join(t.TempDir(), "out.jsonl")
	if r := e.run("", "batch", "-m", "replay:"+good, "-o", out, input); r.code != 1 {
		t.Fatalf("exit %d, want 1 (b fails)\n%s", r.code, r.stderr)
	}
	first, _ := os.ReadFile(out)
	if got := results(t, string(first)); got["b"]["status"] != "error" || got["a"]["status"] != "success" {
		t.Fatalf("first run:\n%s", first)
	}
	if r := e.run("", "batch", "-m", "replay:"+good, "--retry-failed", input); r.code != 42 || !strings.Contains(r.stderr, "--retry-failed goes with --resume") {
		t.Errorf("--retry-failed alone: exit %d, %s", r.code, r.stderr)
	}
	// --resume alone keeps the failure.
	if r := e.run("", "batch", "-m", "replay:"+good, "-o", out, "--resume", input); r.code != 0 {
		t.Fatalf("--resume: exit %d\n%s", r.code, r.stderr)
	}
	if again, _ := os.ReadFile(out); string(again) != string(first) {
		t.Errorf("--resume with every id done changed the file:\n%s", again)
	}
	e.writeFile(later, `{"method":"generateContentStream","response":[{"candidates":[{"content":{"role":"model","parts":[{"text":"b at last"}]},"finishReason":"STOP"}]}]}`+"\n")
	r := e.run("", "batch", "-m", "replay:"+good, "-o", out, "--resume", "--retry-failed", input)
	if r.code != 0 {
		t.Fatalf("--retry-failed: exit %d\n%s", r.code, r.stderr)
	}
	final, _ := os.ReadFile(out)
	got := results(t, string(final))
	if len(got) != 3 || got["b"]["status"] != "success" || got["b"]["response"] != "b at last" {
		t.Errorf("after --retry-failed:\n%s", final)
	}
	// a and c were not run again: their lines are the first run's.
	for _, l := range strings.SplitAfter(string(first), "\n") {
		if l != "" && !strings.Contains(l, `"id":"b"`) && !strings.Contains(string(final), l) {
			t.Errorf("the line %q was rewritten", l)
		}
	}
}

// TestBatchWorkspaceConfinedToW: a line's workspace must lie inside -w,
// symlinks resolved. "../evil", an absolute path and a symlink inside -w
// leading out are refused, each line naming itself and the path, and the
// hooks of the workspace they name never run, --trust-workspace or not;
// a subdirectory of -w (its hooks included) still works, and so do the
// other lines.
func TestBatchWorkspaceConfinedToW(t *testing.T) {
	e := newEnv(t)
	parent := t.TempDir()
	w := filepath.Join(parent, "w")
	evil := filepath.Join(parent, "evil")
	markers := t.TempDir()
	hooked := func(dir, marker string) {
		settings := map[string]any{"hooks": map[string]any{"SessionStart": []any{map[string]any{
			"hooks": []any{map[string]any{"type": "command", "command": "touch " + filepath.Join(markers, marker)}},
		}}}}
		data, _ := json.Marshal(settings)
		e.writeFile(filepath.Join(dir, ".agentry", "settings.json"), string(data))
	}
	hooked(evil, "evil-hook-ran")
	hooked(filepath.Join(w, "sub"), "sub-hook-ran")
	if err := os.Symlink(evil, filepath.Join(w, "out")); err != nil {
		t.Fatal(err)
	}
	replay := e.replayFile([]map[string]any{text("ok")})
	line := func(id, ws string) string {
		b, _ := json.Marshal(map[string]string{"id": id, "prompt": "p", "workspace": ws})
		return string(b)
	}
	r := e.run("", "batch", "-m", "replay:"+replay, "-w", w, "--trust-workspace", "-c", "1", e.batchInput(
		line("up", "../evil"),
		line("abs", evil),
		line("link", "out"),
		line("linkdeep", "out/.agentry/.."),
		line("sub", "sub"),
		request("plain", "p", ""),
	))
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	got := results(t, r.stdout)
	for n, tc := range []struct{ id, ws string }{{"up", "../evil"}, {"abs", evil}, {"link", "out"}, {"linkdeep", "out/.agentry/.."}} {
		errObj, _ := got[tc.id]["error"].(map[string]any)
		msg, _ := errObj["message"].(string)
		want := fmt.Sprintf("line %d: workspace %q", n+1, tc.ws)
		if got[tc.id]["status"] != "error" || errObj["exit_code"] != 42.0 || !strings.HasPrefix(msg, want) || !strings.Contains(msg, w) {
			t.Errorf("%s: %v, want an input error starting %q and naming -w", tc.id, got[tc.id], want)
		}
	}
	for _, id := range []string{"sub", "plain"} {
		if got[id]["status"] != "success" {
			t.Errorf("%s: %v", id, got[id])
		}
	}
	if _, err := os.Stat(filepath.Join(markers, "evil-hook-ran")); !os.IsNotExist(err) {
		t.Errorf("a hook of a workspace outside -w ran (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(markers, "sub-hook-ran")); err != nil {
		t.Errorf("the hook of a trusted workspace inside -w did not run: %v\n%s", err, r.stderr)
	}
}
