package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// wsNodeModules is the node_modules directory holding the ws package, from
// AGENTRY_TEST_WS_NODE (.ci/run installs it at the version
// examples/ws-node/package.json pins); without it the test fails under CI
// and is skipped elsewhere.
func wsNodeModules(t *testing.T) string {
	t.Helper()
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	data, err := os.ReadFile(example("ws-node/package.json"))
	if err == nil {
		err = json.Unmarshal(data, &pkg)
	}
	if err != nil {
		t.Fatalf("examples/ws-node/package.json: %v", err)
	}
	want := pkg.Dependencies["ws"]
	if !regexp.MustCompile(`^8\.\d+\.\d+$`).MatchString(want) || len(pkg.Dependencies) != 1 {
		t.Fatalf("examples/ws-node/package.json must depend on ws alone, pinned to an exact 8.x version: %v", pkg.Dependencies)
	}
	dir := os.Getenv("AGENTRY_TEST_WS_NODE")
	if dir == "" {
		msg := "AGENTRY_TEST_WS_NODE is not set: install the ws package at the version examples/ws-node/package.json pins, " +
			"`npm install --prefix DIR ws@" + want + "`, and set AGENTRY_TEST_WS_NODE=DIR/node_modules (bash .ci/run does both)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	var got struct {
		Version string `json:"version"`
	}
	data, err = os.ReadFile(filepath.Join(dir, "ws", "package.json"))
	if err == nil {
		err = json.Unmarshal(data, &got)
	}
	if err != nil || got.Version != want {
		t.Fatalf("AGENTRY_TEST_WS_NODE=%s holds ws %q, want %s as examples/ws-node/package.json pins (bash .ci/run installs it): %v", dir, got.Version, want, err)
	}
	return dir
}

// outputBuffer collects a process's output and wakes whoever waits on it.
type outputBuffer struct {
	mu   sync.Mutex
	b    bytes.Buffer
	grew chan struct{}
}

func (o *outputBuffer) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	select {
	case o.grew <- struct{}{}:
	default:
	}
	return o.b.Write(p)
}

func (o *outputBuffer) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// nodeProc is a Node script running against the server.
type nodeProc struct {
	t      *testing.T
	name   string
	cmd    *exec.Cmd
	stdout outputBuffer
	stderr outputBuffer
	exited chan struct{}
}

// startNode runs a script of dir with node; it is killed at the end of the
// test if it is still running.
func startNode(t *testing.T, e *env, node, dir, token string, args ...string) *nodeProc {
	t.Helper()
	p := &nodeProc{t: t, name: strings.Join(args, " "), exited: make(chan struct{})}
	p.stdout.grew = make(chan struct{}, 1)
	p.stderr.grew = p.stdout.grew
	p.cmd = exec.Command(node, args...)
	p.cmd.Dir = dir
	p.cmd.Env = append([]string{"HOME=" + e.home, "AGENTRY_A2A_TOKEN=" + token}, e.vars...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

func (p *nodeProc) dump() string {
	return "stdout:\n" + p.stdout.String() + "\nstderr:\n" + p.stderr.String()
}

// waitFor waits, within a bound, for the script's stdout to match re and
// returns the match; server is the server's output, for failures.
func (p *nodeProc) waitFor(re *regexp.Regexp, server func() string) []string {
	p.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		if m := re.FindStringSubmatch(p.stdout.String()); m != nil {
			return m
		}
		select {
		case <-p.stdout.grew:
		case <-p.exited:
			if m := re.FindStringSubmatch(p.stdout.String()); m != nil {
				return m
			}
			p.t.Fatalf("%s exited (%v) without printing %s\n%s\nserver:\n%s", p.name, p.cmd.ProcessState, re, p.dump(), server())
		case <-deadline:
			p.t.Fatalf("%s printed no %s in 60s\n%s\nserver:\n%s", p.name, re, p.dump(), server())
		}
	}
}

// wait waits, within a bound, for the script to exit and returns its exit
// code.
func (p *nodeProc) wait(server func() string) int {
	p.t.Helper()
	select {
	case <-p.exited:
	case <-time.After(60 * time.Second):
		p.t.Fatalf("%s did not exit in 60s\n%s\nserver:\n%s", p.name, p.dump(), server())
	}
	return p.cmd.ProcessState.ExitCode()
}

// watchScript watches a session over /ws without sending anything: it
// prints every frame, one a line, and exits 0 once a task (the one its
// second argument names, if any) has completed and the connection has
// closed: it closes itself when it names a task.
const watchScript = `import WebSocket from "ws";
const [url, taskId] = process.argv.slice(2);
const ws = new WebSocket(url, ["a2a.v1"], { headers: { Authorization: "Bearer " + process.env.AGENTRY_A2A_TOKEN } });
let done = false;
ws.on("message", (data) => {
  console.log(String(data));
  const u = JSON.parse(data).params?.event?.statusUpdate;
  if (u && (!taskId || u.taskId === taskId) && u.status.state === "TASK_STATE_COMPLETED") {
    done = true;
    if (taskId) ws.close(1000);
  }
});
ws.on("unexpected-response", (_req, res) => { console.error("HTTP " + res.statusCode); process.exit(1); });
ws.on("error", (err) => { console.error(err.message); process.exit(1); });
ws.on("close", (code, reason) => { console.error("closed " + code + " " + reason); process.exit(done ? 0 : 1); });
`

// nodeScripts makes a directory holding the example client, the watcher
// and node_modules (a link to modules), from which the scripts resolve ws.
func nodeScripts(t *testing.T, modules string) string {
	t.Helper()
	dir := t.TempDir()
	copyExample(t, "ws-node/client.mjs", filepath.Join(dir, "client.mjs"))
	if err := os.WriteFile(filepath.Join(dir, "watch.mjs"), []byte(watchScript), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// newGate makes a FIFO outside the workspace (which agentry may scan): a
// shell command that reads it waits until the test opens it.
func newGate(t *testing.T) string {
	t.Helper()
	gate := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Unblock openGate if the command never read the gate.
		if f, err := os.OpenFile(gate, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	return gate
}

// openGate lets the command reading gate go on, once it reads it.
func openGate(t *testing.T, gate string, dump func() string) {
	t.Helper()
	opened := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(gate, os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString("open\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		opened <- err
	}()
	select {
	case err := <-opened:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the shell command never read the gate\n%s", dump())
	}
}

// watchedFrames decodes what the watcher printed and checks that it is
// session/attached to contextID followed by session/event notifications
// without a gap: from eventId 1 if it asked for every event
// (lastEventId=0, replayed), else from the turn so far (a task whose
// eventId is the last it covers) when it joined mid-turn, or the next
// event.
func watchedFrames(t *testing.T, watch *nodeProc, contextID string, replayed bool) (attached int64, events []wsFrame) {
	t.Helper()
	var frames []wsFrame
	for _, l := range strings.Split(strings.TrimSpace(watch.stdout.String()), "\n") {
		var f wsFrame
		if err := json.Unmarshal([]byte(l), &f); err != nil {
			t.Fatalf("the watcher printed %q: %v", l, err)
		}
		frames = append(frames, f)
	}
	att := frames[0].Params
	if frames[0].Method != "session/attached" || contextID != "" && att.ContextID != contextID || att.Gap || replayed && int64(att.Replayed) != att.LastEventID {
		t.Fatalf("first frame %+v, want session/attached to %s (replaying every event so far: %v)", frames[0], contextID, replayed)
	}
	first := int64(1)
	if !replayed {
		first = att.LastEventID // the turn so far
		if len(frames) > 1 && frames[1].Params.EventID == first+1 {
			first++ // it joined an idle session
		}
	}
	for i, f := range frames[1:] {
		if f.Method != "session/event" || f.ID != nil || f.Params.EventID != first+int64(i) {
			t.Fatalf("frame %d: method %q, id %s, eventId %d; want session/event %d", i+1, f.Method, f.ID, f.Params.EventID, first+int64(i))
		}
	}
	return att.LastEventID, frames[1:]
}

// wsFrame is a frame the watcher printed: session/attached or
// session/event.
type wsFrame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ContextID   string `json:"contextId"`
		LastEventID int64  `json:"lastEventId"`
		Replayed    int    `json:"replayed"`
		Gap         bool   `json:"gap"`
		EventID     int64  `json:"eventId"`
		Event       struct {
			Task *struct {
				ID        string `json:"id"`
				ContextID string `json:"contextId"`
			} `json:"task"`
			StatusUpdate *struct {
				TaskID    string `json:"taskId"`
				ContextID string `json:"contextId"`
				Status    struct {
					State   string `json:"state"`
					Message *struct {
						Parts []struct {
							Text *string        `json:"text"`
							Data map[string]any `json:"data"`
						} `json:"parts"`
					} `json:"message"`
				} `json:"status"`
				Metadata map[string]struct {
					Kind string `json:"kind"`
				} `json:"metadata"`
			} `json:"statusUpdate"`
		} `json:"event"`
	} `json:"params"`
}

// TestWSNodeExample: examples/ws-node/client.mjs on the live session
// endpoint of `agentry serve`, with a second one and a plain ws watcher on
// the same session. The first client's prompt runs a shell command that
// needs confirmation, which it allows (--yes), and prints the streamed
// answer. The watcher joins by contextId with lastEventId=0 and gets that
// turn as session/event notifications, the part before it joined replayed
// and the rest live (the command waits on a FIFO the test opens only once
// everyone has joined). The second client joins mid-turn: its prompt
// queues behind the turn, which it prints marked as another's, then it
// prints its own answer. A wrong token is refused with the server's
// message.
func TestWSNodeExample(t *testing.T) {
	modules := wsNodeModules(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("AGENTRY_TEST_WS_NODE is set but node is not on PATH: %v", err)
	}
	const token = "e2e-ws-node-token-0123456789abcdef"
	e := newEnv(t)
	e.set("AGENTRY_A2A_TOKEN=" + token)
	gate := newGate(t)
	replay := e.replayFile(
		[]map[string]any{text("I'll wait for the gate."), call("run_shell_command", map[string]any{"command": "cat " + gate})},
		[]map[string]any{text("The gate opened.")},
		[]map[string]any{text("Second answer.")},
	)
	srv := e.serve("--port", "0", "-w", e.ws, "-m", "replay:"+replay)
	dir := nodeScripts(t, modules)
	wsURL := "ws" + strings.TrimPrefix(srv.url, "http") + "/ws"
	taskLine := regexp.MustCompile(`(?m)^task (\S+) in context (\S+)$`)

	first := startNode(t, e, node, dir, token, "client.mjs", srv.url, "Open the gate.", "--yes")
	m := first.waitFor(taskLine, srv.errText)
	task1, contextID := m[1], m[2]
	if !strings.Contains(first.stdout.String(), "attached to context "+contextID+"\n") {
		t.Errorf("the first client printed no session/attached for its context:\n%s", first.dump())
	}
	watch := startNode(t, e, node, dir, token, "watch.mjs", wsURL+"?contextId="+url.QueryEscape(contextID)+"&lastEventId=0", task1)
	watch.waitFor(regexp.MustCompile(`"method":"session/attached"`), srv.errText)
	second := startNode(t, e, node, dir, token, "client.mjs", wsURL+"?contextId="+url.QueryEscape(contextID), "And then?")
	m = second.waitFor(taskLine, srv.errText)
	task2 := m[1]
	if m[2] != contextID || task2 == task1 {
		t.Errorf("the second client's task %s in context %s, want a new task in %s", task2, m[2], contextID)
	}
	// Everyone has joined; the shell command reads the gate once the
	// first client has allowed it.
	openGate(t, gate, func() string { return "first client:\n" + first.dump() + "\nserver:\n" + srv.errText() })

	// The first client: its turn, the confirmation allowed, the answer,
	// and the second client's turn queued, marked as another's.
	if code := first.wait(srv.errText); code != 0 {
		t.Fatalf("the first client exited %d\n%s\nserver:\n%s", code, first.dump(), srv.errText())
	}
	out := first.stdout.String()
	inOrder(t, "first client", out,
		"I'll wait for the gate.\n",
		"[tool] run_shell_command PENDING: cat "+gate+"\n",
		"[confirm] proceed_once: cat "+gate+"\n",
		"[tool] run_shell_command EXECUTING: ",
		"[tool] run_shell_command SUCCEEDED: ",
		"The gate opened.\n",
		"task "+task1[len(task1)-8:]+": completed\n",
	)
	if !strings.Contains(out, "[other turn "+task2[len(task2)-8:]+"] submitted: And then?\n") {
		t.Errorf("the first client did not show the second client's turn as another's:\n%s", out)
	}

	// The watcher: every event of the session from the first, the answer
	// live.
	if code := watch.wait(srv.errText); code != 0 {
		t.Fatalf("the watcher exited %d\n%s", code, watch.dump())
	}
	joined, events := watchedFrames(t, watch, contextID, true)
	saw := turnSeen(t, events, contextID, task1)
	if saw["EXECUTING run_shell_command"] == 0 || saw["I'll wait for the gate."] == 0 {
		t.Errorf("the watcher missed the turn's start: %v\n%s", saw, watch.stdout.String())
	}
	if id := saw["The gate opened."]; id <= joined {
		t.Errorf("the answer came as event %d, want one after the watcher joined (%d)\n%s", id, joined, watch.stdout.String())
	}

	// The second client: the first turn as another's, then its own.
	if code := second.wait(srv.errText); code != 0 {
		t.Fatalf("the second client exited %d\n%s\nserver:\n%s", code, second.dump(), srv.errText())
	}
	out = second.stdout.String()
	inOrder(t, "second client", out,
		"attached to context "+contextID+" (turn "+task1+" running)\n",
		"[other turn "+task1[len(task1)-8:]+"] The gate opened.\n",
		"[other turn "+task1[len(task1)-8:]+"] completed\n",
		"Second answer.\n",
		"task "+task2[len(task2)-8:]+": completed\n",
	)
	if !regexp.MustCompile(`(?m)^Second answer\.$`).MatchString(out) {
		t.Errorf("the second client marked its own answer as another's:\n%s", out)
	}
	if strings.Contains(out, "[confirm]") {
		t.Errorf("the second client answered a confirmation of a turn it did not start:\n%s", out)
	}

	// A wrong token: the handshake's refusal, with the server's message.
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	bad := exec.CommandContext(ctx, node, "client.mjs", srv.url, "hello")
	bad.Dir = dir
	bad.Env = append(append([]string{"HOME=" + e.home}, e.vars...), "AGENTRY_A2A_TOKEN=not-the-token")
	var stderr bytes.Buffer
	bad.Stderr = &stderr
	if err := bad.Run(); bad.ProcessState == nil || bad.ProcessState.ExitCode() != 1 || !strings.Contains(stderr.String(), "HTTP 401: ") {
		t.Errorf("with a wrong token: %v, stderr:\n%s", err, stderr.String())
	}
}

// TestWSNodeWatchesAHeadlessRun: a plain ws watcher joins the session of
// `agentry run --a2a-port 0` (the default of its /ws) mid-turn and sees
// the turn to its end, its last events included, before the run, done,
// closes the connection 1001.
func TestWSNodeWatchesAHeadlessRun(t *testing.T) {
	modules := wsNodeModules(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("AGENTRY_TEST_WS_NODE is set but node is not on PATH: %v", err)
	}
	const token = "e2e-ws-node-token-0123456789abcdef"
	e := newEnv(t)
	e.set("AGENTRY_A2A_TOKEN=" + token)
	gate := newGate(t)
	replay := e.replayFile(
		[]map[string]any{call("run_shell_command", map[string]any{"command": "cat " + gate})},
		[]map[string]any{text("The run is done.")},
	)
	run := e.cmd("run", "--a2a-port", "0", "--yolo", "-m", "replay:"+replay, "-p", "Wait for the gate.")
	var stdout, stderr outputBuffer
	stderr.grew = make(chan struct{}, 1)
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = run.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = run.Process.Kill()
			<-exited
		}
	})
	serving := regexp.MustCompile(`(?m)^agentry run: serving session (\S+) over A2A at (http://\S+)$`)
	var m []string
	for deadline := time.After(60 * time.Second); m == nil; {
		if m = serving.FindStringSubmatch(stderr.String()); m != nil {
			break
		}
		select {
		case <-stderr.grew:
		case <-exited:
			t.Fatalf("agentry run exited before serving:\n%s", stderr.String())
		case <-deadline:
			t.Fatalf("agentry run printed no serving line in 60s:\n%s", stderr.String())
		}
	}
	session := m[1]
	dir := nodeScripts(t, modules)
	watch := startNode(t, e, node, dir, token, "watch.mjs", "ws"+strings.TrimPrefix(m[2], "http")+"/ws")
	watch.waitFor(regexp.MustCompile(`"method":"session/attached"`), stderr.String)
	openGate(t, gate, func() string { return "agentry run:\n" + stderr.String() })

	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("agentry run did not end\n%s", stderr.String())
	}
	if code := run.ProcessState.ExitCode(); code != 0 || !strings.Contains(stdout.String(), "The run is done.") {
		t.Fatalf("agentry run exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if code := watch.wait(stderr.String); code != 0 {
		t.Fatalf("the watcher exited %d\n%s", code, watch.dump())
	}
	if !strings.Contains(watch.stderr.String(), "closed 1001 the server is shutting down") {
		t.Errorf("the watcher was not closed 1001 by the ending run:\n%s", watch.stderr.String())
	}
	_, events := watchedFrames(t, watch, session, false)
	if events[0].Params.Event.Task == nil {
		t.Fatalf("the watcher's first event is not the turn so far: %+v", events[0])
	}
	task := events[0].Params.Event.Task.ID
	saw := turnSeen(t, events, session, task)
	if saw["SUCCEEDED run_shell_command"] == 0 || saw["The run is done."] == 0 || saw["TASK_STATE_COMPLETED"] == 0 {
		t.Errorf("the watcher missed the end of the run's turn: %v\n%s", saw, watch.stdout.String())
	}
}

// turnSeen checks that every event is of contextID and returns, for the
// events of task, the eventId of each text ("The text."), tool call
// status ("EXECUTING run_shell_command") and state
// ("TASK_STATE_COMPLETED"), the first of each.
func turnSeen(t *testing.T, events []wsFrame, contextID, task string) map[string]int64 {
	t.Helper()
	saw := map[string]int64{}
	note := func(k string, id int64) {
		if saw[k] == 0 {
			saw[k] = id
		}
	}
	for _, f := range events {
		p := f.Params
		if tk := p.Event.Task; tk != nil && tk.ContextID != contextID {
			t.Errorf("event %d: a task of context %s, want %s", p.EventID, tk.ContextID, contextID)
		}
		u := p.Event.StatusUpdate
		if u == nil {
			continue
		}
		if u.ContextID != contextID {
			t.Errorf("event %d: context %s, want %s", p.EventID, u.ContextID, contextID)
		}
		if u.TaskID != task {
			continue
		}
		note(u.Status.State, p.EventID)
		if u.Status.Message == nil {
			continue
		}
		kind := u.Metadata[devtoolURI].Kind
		for _, part := range u.Status.Message.Parts {
			switch {
			case kind == "TEXT_CONTENT" && part.Text != nil:
				note(*part.Text, p.EventID)
			case kind == "TOOL_CALL_UPDATE" && part.Data != nil:
				note(fmt.Sprintf("%v %v", part.Data["status"], part.Data["tool_name"]), p.EventID)
			}
		}
	}
	return saw
}

// inOrder checks that out holds each of want, in that order.
func inOrder(t *testing.T, name, out string, want ...string) {
	t.Helper()
	rest := out
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("%s: no %q (after the previous lines) in:\n%s", name, w, out)
			return
		}
		rest = rest[i+len(w):]
	}
}
