package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
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

// devtoolURI is the development-tool extension agentry serve offers.
const devtoolURI = "https://github.com/google-gemini/gemini-cli/blob/main/docs/a2a/developer-profile/v0/spec.md"

// serveProc is a running `agentry serve`.
type serveProc struct {
	t   *testing.T
	cmd *exec.Cmd
	url string

	mu     sync.Mutex
	stderr bytes.Buffer
	waited chan struct{}
}

// serveStderr collects the server's stderr while the test reads it.
type serveStderr struct{ s *serveProc }

func (w serveStderr) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.stderr.Write(p)
}

func (s *serveProc) errText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

var listeningRE = regexp.MustCompile(`(?m)^agentry serve: listening on (http://\S+) \(agent card \S+/\.well-known/agent-card\.json\)$`)

// serve starts `agentry serve` in the environment and waits for the line
// naming its URL. The server is killed at the end of the test if it is
// still running.
func (e *env) serve(args ...string) *serveProc {
	e.t.Helper()
	return e.startServe(e.cmd(append([]string{"serve"}, args...)...))
}

// startServe starts cmd, an `agentry serve` however it is spelt, as serve
// does.
func (e *env) startServe(cmd *exec.Cmd) *serveProc {
	e.t.Helper()
	s := e.launchServe(cmd)
	s.waitListening(30 * time.Second)
	return s
}

// launchServe starts cmd without waiting for it to listen; the process is
// killed at the end of the test if it is still running.
func (e *env) launchServe(cmd *exec.Cmd) *serveProc {
	e.t.Helper()
	s := &serveProc{t: e.t, cmd: cmd, waited: make(chan struct{})}
	s.cmd.Stdout = io.Discard
	s.cmd.Stderr = serveStderr{s}
	if err := s.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { _ = s.cmd.Wait(); close(s.waited) }()
	e.t.Cleanup(func() {
		select {
		case <-s.waited:
		default:
			_ = s.cmd.Process.Kill()
			<-s.waited
		}
	})
	return s
}

// waitListening waits, at most limit, for the line naming the server's
// URL.
func (s *serveProc) waitListening(limit time.Duration) {
	s.t.Helper()
	deadline := time.After(limit)
	for {
		if m := listeningRE.FindStringSubmatch(s.errText()); m != nil {
			s.url = m[1]
			return
		}
		select {
		case <-s.waited:
			s.t.Fatalf("agentry serve exited (%v) before listening; stderr:\n%s", s.cmd.ProcessState, s.errText())
		case <-deadline:
			s.t.Fatalf("agentry serve printed no listening line in %v; stderr:\n%s", limit, s.errText())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// waitFor waits for stderr to match re and returns the match.
func (s *serveProc) waitFor(re *regexp.Regexp) []string {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(s.errText()); m != nil {
			return m
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.t.Fatalf("stderr never matched %s:\n%s", re, s.errText())
	return nil
}

// interrupt sends SIGINT and waits for the server to exit; it returns the
// exit code.
func (s *serveProc) interrupt() int {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		s.t.Fatal(err)
	}
	select {
	case <-s.waited:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.waited
		s.t.Fatalf("agentry serve did not exit after SIGINT; stderr:\n%s", s.errText())
	}
	return s.cmd.ProcessState.ExitCode()
}

// a2aJSModules is the node_modules directory holding @a2a-js/sdk, from
// AGENTRY_TEST_A2A_JS (.ci/run installs it); without it the test fails
// under CI and is skipped elsewhere.
func a2aJSModules(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("AGENTRY_TEST_A2A_JS")
	if dir == "" {
		msg := "AGENTRY_TEST_A2A_JS is not set: install the A2A JavaScript SDK at the version .ci/run pins, " +
			"`npm install --prefix DIR @a2a-js/sdk@$(sed -n 's/^a2a_js_version=//p' .ci/run)`, " +
			"and set AGENTRY_TEST_A2A_JS=DIR/node_modules (bash .ci/run does both)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "@a2a-js", "sdk", "package.json")); err != nil {
		t.Fatalf("AGENTRY_TEST_A2A_JS=%s holds no @a2a-js/sdk: %v", dir, err)
	}
	return dir
}

// runA2AJS runs the Node script testdata/a2a-js/<script> against srv
// with arg and decodes the JSON summary it prints into out.
func (e *env) runA2AJS(node, modules, token string, srv *serveProc, script, arg string, out any) {
	t := e.t
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, node, filepath.Join(repoRoot, "e2e", "testdata", "a2a-js", script), srv.url, arg)
	c.Dir = e.ws
	c.Env = append([]string{"HOME=" + e.home, "AGENTRY_A2A_TOKEN=" + token, "AGENTRY_TEST_A2A_JS=" + modules}, e.vars...)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("node client: %v\nstdout:\n%s\nstderr:\n%s\nserver stderr:\n%s", err, stdout.String(), stderr.String(), srv.errText())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("node client printed no JSON summary: %v\n%s", err, stdout.String())
	}
}

// jsStream is the Node client's summary of one stream.
type jsStream struct {
	Events     []string `json:"events"`
	Text       string   `json:"text"`
	TaskIDs    []string `json:"taskIds"`
	ContextIDs []string `json:"contextIds"`
	Models     []string `json:"models"`
	Extensions *string  `json:"extensionsEchoed"`
}

// jsSummary is what e2e/testdata/a2a-js/client.mjs prints.
type jsSummary struct {
	SDKVersion string `json:"sdkVersion"`
	Card       struct {
		Name              string `json:"name"`
		Status            int    `json:"status"`
		SentAuthorization bool   `json:"sentAuthorization"`
		Streaming         bool   `json:"streaming"`
		Devtool           *struct {
			Required bool `json:"required"`
		} `json:"devtool"`
		Interfaces []string `json:"interfaces"`
	} `json:"card"`
	Transport    string   `json:"transport"`
	First        jsStream `json:"first"`
	Second       jsStream `json:"second"`
	Confirmation struct {
		ToolName        string         `json:"toolName"`
		InputParameters map[string]any `json:"inputParameters"`
		Options         []string       `json:"options"`
		FileEdit        *struct {
			FileName   string `json:"fileName"`
			FilePath   string `json:"filePath"`
			NewContent string `json:"newContent"`
		} `json:"fileEdit"`
	} `json:"confirmation"`
	SameTask   bool   `json:"sameTask"`
	Text       string `json:"text"`
	WrongToken map[string]struct {
		Status int     `json:"status"`
		Error  *string `json:"error"`
	} `json:"wrongToken"`
}

// TestServeA2AJSClient: the A2A project's JavaScript SDK, a client
// agentry does not share code with, drives `agentry serve` over JSON-RPC
// with SSE through the development-tool extension's confirmation flow:
// it reads the public card, streams a prompt whose write_file call parks
// the task input-required, answers proceed_once on the same task, and
// streams the call's execution and the answer; a wrong token is refused.
func TestServeA2AJSClient(t *testing.T) {
	modules := a2aJSModules(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("AGENTRY_TEST_A2A_JS is set but node is not on PATH: %v", err)
	}
	const token = "e2e-a2a-token-0123456789abcdef"
	e := newEnv(t)
	// Every answer offered: a trusted workspace, saved rules allowed.
	e.allowPermanentApproval()
	e.set("AGENTRY_A2A_TOKEN=" + token)
	replay := e.replayFile(
		[]map[string]any{text("I'll write it."), call("write_file", map[string]any{"file_path": "a.txt", "content": "hi\n"})},
		[]map[string]any{text("Done.")},
	)
	srv := e.serve("--port", "0", "-w", e.ws, "-m", "replay:"+replay)
	if !strings.Contains(srv.errText(), "agentry serve: bearer token from AGENTRY_A2A_TOKEN") {
		t.Errorf("stderr does not name the token's source:\n%s", srv.errText())
	}

	var got jsSummary
	e.runA2AJS(node, modules, token, srv, "client.mjs", e.ws, &got)
	t.Logf("@a2a-js/sdk %s over %s", got.SDKVersion, got.Transport)

	if got.Card.Status != http.StatusOK || got.Card.SentAuthorization || got.Card.Name != "agentry" || !got.Card.Streaming {
		t.Errorf("card: %+v", got.Card)
	}
	if got.Card.Devtool == nil || got.Card.Devtool.Required {
		t.Errorf("the card must list the development-tool extension as optional: %+v", got.Card)
	}
	if got.Transport != "JSONRPC 1.0" {
		t.Errorf("the SDK chose %q, want JSONRPC 1.0", got.Transport)
	}

	check := func(name string, s jsStream, want []string, text string) {
		t.Helper()
		if strings.Join(s.Events, " ") != strings.Join(want, " ") {
			t.Errorf("%s stream:\n got %s\nwant %s", name, strings.Join(s.Events, " "), strings.Join(want, " "))
		}
		if s.Text != text {
			t.Errorf("%s stream text %q, want %q", name, s.Text, text)
		}
		if len(s.Models) != 1 || s.Models[0] != "replay:"+replay {
			t.Errorf("%s stream: development-tool metadata names models %q, want [replay:%s]", name, s.Models, replay)
		}
	}
	check("first", got.First, []string{
		"Task(submitted)", "STATE_CHANGE:working", "TEXT_CONTENT:working",
		"TOOL_CALL_UPDATE:working/PENDING+confirm", "STATE_CHANGE:input-required",
	}, "I'll write it.")
	check("second", got.Second, []string{
		"TOOL_CALL_UPDATE:working/EXECUTING", "TOOL_CALL_UPDATE:working/SUCCEEDED",
		"TEXT_CONTENT:working", "STATE_CHANGE:completed",
	}, "Done.")
	if got.First.Extensions == nil || *got.First.Extensions != devtoolURI {
		t.Errorf("the server did not echo the activated extension: %v", got.First.Extensions)
	}
	if !got.SameTask || len(got.First.TaskIDs) != 1 || len(got.First.ContextIDs) != 1 {
		t.Errorf("both streams must be one task in one context: first %v/%v, second %v/%v",
			got.First.TaskIDs, got.First.ContextIDs, got.Second.TaskIDs, got.Second.ContextIDs)
	}

	conf := got.Confirmation
	if conf.ToolName != "write_file" || conf.InputParameters["file_path"] != "a.txt" || conf.InputParameters["content"] != "hi\n" {
		t.Errorf("confirmation's tool call: %+v", conf)
	}
	if strings.Join(conf.Options, ",") != "proceed_once,proceed_always,proceed_always_and_save,cancel" {
		t.Errorf("confirmation options %q", conf.Options)
	}
	if conf.FileEdit == nil || conf.FileEdit.FileName != "a.txt" || conf.FileEdit.FilePath != filepath.Join(e.ws, "a.txt") || conf.FileEdit.NewContent != "hi\n" {
		t.Errorf("file_edit_details: %+v", conf.FileEdit)
	}
	if got.Text != "Done." {
		t.Errorf("final text %q", got.Text)
	}
	if b, err := os.ReadFile(filepath.Join(e.ws, "a.txt")); err != nil || string(b) != "hi\n" {
		t.Errorf("a.txt: %q %v", b, err)
	}

	for _, what := range []string{"stream", "getTask"} {
		w, ok := got.WrongToken[what]
		if !ok || w.Status != http.StatusUnauthorized || w.Error == nil {
			t.Errorf("wrong token, %s: %+v (want HTTP 401 and an error)", what, w)
		}
	}
	if w := got.WrongToken["getTask"]; w.Error != nil && !strings.Contains(*w.Error, "invalid bearer token") {
		t.Errorf("wrong token, getTask: the error does not give the reason: %s", *w.Error)
	}

	if code := srv.interrupt(); code != 0 {
		t.Errorf("agentry serve exited %d after SIGINT, want 0; stderr:\n%s", code, srv.errText())
	}
}

var printedTokenRE = regexp.MustCompile(`(?m)^agentry serve: bearer token \(shown once\): (\S+)$`)

// TestServeTokenAndCard: without a configured token agentry serve makes
// one up and prints it once; the agent card is public, everything else
// needs that token. A non-loopback --host without a token is refused.
func TestServeTokenAndCard(t *testing.T) {
	e := newEnv(t)
	srv := e.serve("--port", "0", "-w", e.ws, "-m", "replay:"+quickstart())
	token := srv.waitFor(printedTokenRE)[1]

	get := func(path string, hdr map[string]string) (int, []byte, http.Header) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.url+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		return httpDo(t, req)
	}
	post := func(body string, hdr map[string]string) (int, []byte, http.Header) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.url+"/", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		return httpDo(t, req)
	}

	// The card needs no token.
	code, body, _ := get("/.well-known/agent-card.json", nil)
	if code != http.StatusOK {
		t.Errorf("GET the agent card without a token: HTTP %d %s", code, body)
	} else {
		var card struct {
			Name         string `json:"name"`
			Capabilities struct {
				Extensions []struct {
					URI      string `json:"uri"`
					Required bool   `json:"required"`
				} `json:"extensions"`
			} `json:"capabilities"`
		}
		if err := json.Unmarshal(body, &card); err != nil {
			t.Errorf("agent card: %v\n%s", err, body)
		}
		found := false
		for _, x := range card.Capabilities.Extensions {
			found = found || (x.URI == devtoolURI && !x.Required)
		}
		if card.Name != "agentry" || !found {
			t.Errorf("agent card without the optional development-tool extension:\n%s", body)
		}
	}

	const getTask = `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`
	code, body, hdr := post(getTask, nil)
	if code != http.StatusUnauthorized || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("GetTask without a token: HTTP %d (WWW-Authenticate %q) %s, want 401", code, hdr.Get("WWW-Authenticate"), body)
	}
	code, body, _ = post(getTask, map[string]string{"Authorization": "Bearer not-" + token})
	if code != http.StatusUnauthorized {
		t.Errorf("GetTask with a wrong token: HTTP %d %s, want 401", code, body)
	}
	// With the printed token the request reaches the A2A server (a read
	// needs no extension): an unknown task is a JSON-RPC error.
	code, body, _ = post(getTask, map[string]string{"Authorization": "Bearer " + token})
	var rpc struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &rpc); err != nil {
		t.Fatalf("GetTask with the token: HTTP %d, not JSON-RPC: %v\n%s", code, err, body)
	}
	if code != http.StatusOK || rpc.JSONRPC != "2.0" || string(rpc.ID) != "1" || rpc.Error == nil || rpc.Result != nil {
		t.Errorf("GetTask with the token: HTTP %d %s, want 200 and a JSON-RPC error", code, body)
	} else if rpc.Error.Code != -32001 || !strings.Contains(rpc.Error.Message, "task not found") {
		t.Errorf("GetTask of an unknown task: error %d %q, want -32001 (task not found)", rpc.Error.Code, rpc.Error.Message)
	}

	if code := srv.interrupt(); code != 0 {
		t.Errorf("agentry serve exited %d after SIGINT, want 0; stderr:\n%s", code, srv.errText())
	}
	if n := strings.Count(srv.errText(), token); n != 1 {
		t.Errorf("the token appears %d times on stderr, want once:\n%s", n, srv.errText())
	}

	// Reachable from other machines: a made-up token would be printed
	// where no one sees it, so a configured one is required.
	r := e.run("", "serve", "--host", "0.0.0.0", "--port", "0", "-w", e.ws, "-m", "replay:"+quickstart())
	if r.code == 0 || !strings.Contains(r.stderr, "AGENTRY_A2A_TOKEN") {
		t.Errorf("--host 0.0.0.0 without a token: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "listening on") {
		t.Errorf("--host 0.0.0.0 without a token listened:\n%s", r.stderr)
	}
}

func httpDo(t *testing.T, req *http.Request) (int, []byte, http.Header) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b, resp.Header
}
