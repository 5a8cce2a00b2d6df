//go:build unix

package mcptools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/mcptools/testdata/server/testserver"
	"github.com/agentry-dev/agentry/tools"
)

// serverBin is the test server built by TestMain.
var serverBin string

func TestMain(m *testing.M) {
	if mode, dir, ok := proctest.Helper(); ok {
		runHelper(mode, dir)
		return
	}
	dir, err := os.MkdirTemp("", "mcptools-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "server")
	cmd := exec.Command("go", "build", "-o", serverBin, "./testdata/server")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building test server:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testLogger keeps connection logs out of test output unless -v is given.
func testLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// stdio returns the config of the test server over stdio.
func stdio(args ...string) ServerConfig {
	return ServerConfig{Command: serverBin, Args: args}
}

// httpServer serves the test server's tools over streamable HTTP on
// loopback and returns its URL.
func httpServer(t *testing.T, prefix string) string {
	t.Helper()
	return serveStreamable(t, testserver.New(testserver.Options{Prefix: prefix}))
}

// serveStreamable serves srv over streamable HTTP on loopback.
func serveStreamable(t *testing.T, srv *mcp.Server) string {
	t.Helper()
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

func newManager(t *testing.T, servers map[string]ServerConfig) *Manager {
	t.Helper()
	m, err := New(Config{Servers: servers, Logger: testLogger()})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return m
}

// listTools returns the manager's tools by name, failing on any error.
func listTools(t *testing.T, m *Manager) map[string]tools.Tool {
	t.Helper()
	ts, errs := m.Tools(context.Background())
	for _, err := range errs {
		t.Errorf("Tools: %v", err)
	}
	byName := make(map[string]tools.Tool)
	for _, tl := range ts {
		if _, dup := byName[tl.Name()]; dup {
			t.Errorf("duplicate tool name %q", tl.Name())
		}
		byName[tl.Name()] = tl
	}
	return byName
}

func names(m map[string]tools.Tool) []string {
	var out []string
	for n := range m {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func get(t *testing.T, ts map[string]tools.Tool, name string) tools.Tool {
	t.Helper()
	tl, ok := ts[name]
	if !ok {
		t.Fatalf("no tool %q in %v", name, names(ts))
	}
	return tl
}

func run(t *testing.T, tl tools.Tool, args map[string]any) (tools.Result, error) {
	t.Helper()
	return tl.Execute(context.Background(), tools.Call{ID: "c1", Args: args})
}

func mustRun(t *testing.T, tl tools.Tool, args map[string]any) tools.Result {
	t.Helper()
	res, err := run(t, tl, args)
	if err != nil {
		t.Fatalf("%s(%v): %v", tl.Name(), args, err)
	}
	return res
}

// toolError asserts err is a *tools.Error of type execution_failed whose
// message contains every one of want.
func toolError(t *testing.T, err error, want ...string) {
	t.Helper()
	var te *tools.Error
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T) is not a *tools.Error", err, err)
	}
	if te.Type != tools.ErrExecutionFailed {
		t.Errorf("error type = %q, want %q", te.Type, tools.ErrExecutionFailed)
	}
	for _, w := range want {
		if !strings.Contains(te.Msg, w) {
			t.Errorf("error %q does not contain %q", te.Msg, w)
		}
	}
}

// alive reports whether pid is a running process; a zombie counts as dead,
// since its reaping is up to whoever inherited it.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no procfs: trust kill
	}
	// The state follows the parenthesised command name.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// waitDead waits until pid is dead, failing if it survives a generous
// bound: SIGKILL takes effect asynchronously, so this is a wait for an
// event, not a measurement.
func waitDead(t *testing.T, pid int) {
	t.Helper()
	for range 1000 {
		if !alive(pid) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("process %d still alive after it was killed", pid)
}

// serverPid asks the server for its pid through the env tool.
func serverPid(t *testing.T, tl tools.Tool) int {
	t.Helper()
	out := mustRun(t, tl, nil).LLMContent
	f := strings.Fields(out)
	if len(f) == 0 || !strings.HasPrefix(f[0], "pid=") {
		t.Fatalf("env output %q", out)
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(f[0], "pid="))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestValidate(t *testing.T) {
	tests := []struct {
		cfg  ServerConfig
		want []string // substrings of the error; nil means valid
	}{
		{ServerConfig{Command: "x"}, nil},
		{ServerConfig{URL: "http://h"}, nil},
		{ServerConfig{HTTPURL: "http://h", Headers: map[string]string{"A": "b"}}, nil},
		{ServerConfig{}, []string{`"srv"`, "command", "url", "httpUrl"}},
		{ServerConfig{Command: "x", URL: "http://h"}, []string{`"srv"`, "only one"}},
		{ServerConfig{URL: "http://h", HTTPURL: "http://h"}, []string{`"srv"`, "only one"}},
		{ServerConfig{Command: "x", Timeout: -1}, []string{`"srv"`, "timeout"}},
		{ServerConfig{URL: "http://h", Args: []string{"a"}}, []string{`"srv"`, "args"}},
		{ServerConfig{URL: "http://h", Env: map[string]string{"A": "b"}}, []string{`"srv"`, "env"}},
		{ServerConfig{URL: "http://h", Cwd: "/"}, []string{`"srv"`, "cwd"}},
		{ServerConfig{Command: "x", Headers: map[string]string{"A": "b"}}, []string{`"srv"`, "headers"}},
	}
	for i, tt := range tests {
		err := tt.cfg.Validate("srv")
		if tt.want == nil {
			if err != nil {
				t.Errorf("%d: Validate(%+v) = %v, want nil", i, tt.cfg, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%d: Validate(%+v) = nil, want error", i, tt.cfg)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%d: Validate(%+v) = %q, want it to mention %q", i, tt.cfg, err, w)
			}
		}
	}
	if _, err := New(Config{Servers: map[string]ServerConfig{"ok": stdio(), "bad": {}}}); err == nil || !strings.Contains(err.Error(), `"bad"`) {
		t.Errorf("New with an invalid server = %v, want an error naming it", err)
	}
}

func TestListing(t *testing.T) {
	m := newManager(t, map[string]ServerConfig{"s": {Command: serverBin, Trust: true}})
	ts := listTools(t, m)
	want := []string{"add", "crash", "echo", "env", "environ", "fail", "image", "list_mcp_resources", "mutate", "progress", "read_mcp_resource", "sleep", "spawn", "weather"}
	if got := names(ts); !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	echo := get(t, ts, "echo")
	if echo.Kind() != tools.KindOther {
		t.Errorf("Kind = %q", echo.Kind())
	}
	if tr, ok := echo.(tools.Truncatable); !ok || !tr.TruncatesOutput() {
		t.Error("MCP tools must be truncatable")
	}
	if got, want := echo.DisplayName(), "echo (s MCP Server)"; got != want {
		t.Errorf("DisplayName = %q, want %q", got, want)
	}
	mt, ok := echo.(interface{ MCP() (string, string, bool) })
	if !ok {
		t.Fatal("tool has no MCP method")
	}
	if srv, tool, trust := mt.MCP(); srv != "s" || tool != "echo" || !trust {
		t.Errorf("MCP() = %q, %q, %v", srv, tool, trust)
	}
	d := echo.Declaration()
	if d.Name != "echo" || d.Description != "Echoes its text." {
		t.Errorf("declaration = %+v", d)
	}
	schema, _ := d.ParametersJsonSchema.(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	if _, ok := props["text"]; !ok || schema["type"] != "object" {
		t.Errorf("schema = %#v, want an object with property text", d.ParametersJsonSchema)
	}
	if got := echo.Describe(map[string]any{"text": "hi"}); got != `{"text":"hi"}` {
		t.Errorf("Describe = %q", got)
	}
	// Listing again reuses the connection and yields the same tools.
	pid := m.pid("s")
	if got := names(listTools(t, m)); !slices.Equal(got, want) || m.pid("s") != pid {
		t.Errorf("second listing: tools %v, pid %d (was %d)", got, m.pid("s"), pid)
	}
}

func TestCollision(t *testing.T) {
	m := newManager(t, map[string]ServerConfig{
		"one":   stdio(),
		"two":   {URL: httpServer(t, "")},
		"three": {HTTPURL: httpServer(t, "only_")},
	})
	ts := listTools(t, m)
	for _, n := range []string{"one__echo", "two__echo", "only_echo", "only_add"} {
		get(t, ts, n)
	}
	for _, n := range []string{"echo", "add", "three__only_echo", "one__crash"} {
		if _, ok := ts[n]; ok {
			t.Errorf("unexpected tool %q", n)
		}
	}
	// crash is offered only by the stdio server, so it keeps its name.
	get(t, ts, "crash")
	for _, n := range []string{"one__echo", "two__echo", "only_echo"} {
		if got := mustRun(t, ts[n], map[string]any{"text": n}).LLMContent; got != n {
			t.Errorf("%s = %q, want %q", n, got, n)
		}
		_, tool, _ := ts[n].(*Tool).MCP()
		if want := strings.TrimPrefix(strings.TrimPrefix(n, "one__"), "two__"); tool != want {
			t.Errorf("%s: MCP tool = %q, want %q", n, tool, want)
		}
	}
}

func TestIncludeExclude(t *testing.T) {
	m := newManager(t, map[string]ServerConfig{"s": {
		Command:      serverBin,
		IncludeTools: []string{"echo", "add", "fail(ignored args)", "nonexistent"},
		ExcludeTools: []string{"add", "sleep"},
	}})
	// The server's resources bring the resource tools along.
	if got, want := names(listTools(t, m)), []string{"echo", "fail", "list_mcp_resources", "read_mcp_resource"}; !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	m2 := newManager(t, map[string]ServerConfig{"s": {Command: serverBin, ExcludeTools: []string{"crash", "spawn", "mutate"}}})
	if got, want := names(listTools(t, m2)), []string{"add", "echo", "env", "environ", "fail", "image", "list_mcp_resources", "progress", "read_mcp_resource", "sleep", "weather"}; !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
}

// transports runs f against the test server over stdio, streamable HTTP
// and SSE (chosen by type, and reached by the fallback of a url without
// one).
func transports(t *testing.T, f func(t *testing.T, sc ServerConfig)) {
	t.Run("stdio", func(t *testing.T) { f(t, stdio()) })
	t.Run("http", func(t *testing.T) { f(t, ServerConfig{URL: httpServer(t, "")}) })
	t.Run("sse", func(t *testing.T) { f(t, ServerConfig{URL: sseServer(t, nil), Type: "sse"}) })
	t.Run("sse-fallback", func(t *testing.T) { f(t, ServerConfig{URL: sseServer(t, nil)}) })
}

func TestCallResults(t *testing.T) {
	transports(t, func(t *testing.T, sc ServerConfig) {
		ts := listTools(t, newManager(t, map[string]ServerConfig{"s": sc}))

		if res := mustRun(t, get(t, ts, "echo"), map[string]any{"text": "hello"}); res.LLMContent != "hello" || res.Display != "hello" {
			t.Errorf("echo = %+v", res)
		}
		if res := mustRun(t, get(t, ts, "add"), map[string]any{"a": 2, "b": 3.5}); res.LLMContent != "5.5" {
			t.Errorf("add = %q", res.LLMContent)
		}

		res := mustRun(t, get(t, ts, "image"), nil)
		want := fmt.Sprintf("here it is\n[image/png, %d bytes]", len(testserver.PNG))
		if res.LLMContent != want {
			t.Errorf("image LLMContent = %q, want %q", res.LLMContent, want)
		}
		if res.Display != "here it is\n[Image: image/png]" {
			t.Errorf("image Display = %q", res.Display)
		}
		content, _ := res.Data["content"].([]mcp.Content)
		if len(content) != 2 {
			t.Fatalf("Data[content] = %#v", res.Data["content"])
		}
		if img, ok := content[1].(*mcp.ImageContent); !ok || img.MIMEType != "image/png" || string(img.Data) != string(testserver.PNG) {
			t.Errorf("Data[content][1] = %#v", content[1])
		}

		// Structured content is kept for drivers (the A2A server sends it
		// as structured_data) as the JSON object it is.
		res = mustRun(t, get(t, ts, "weather"), nil)
		if sc, ok := res.Data["structuredContent"].(map[string]any); !ok || sc["city"] != "Oslo" || sc["temp_c"] != -3.5 {
			t.Errorf("weather Data[structuredContent] = %#v", res.Data["structuredContent"])
		}
		if !strings.Contains(res.LLMContent, `"city":"Oslo"`) {
			t.Errorf("weather LLMContent = %q, want the JSON", res.LLMContent)
		}

		_, err := run(t, get(t, ts, "fail"), nil)
		toolError(t, err, "it broke", `"fail"`)

		// A protocol error (bad arguments) is the tool's failure, not the
		// server's: the server stays up.
		_, err = run(t, get(t, ts, "add"), map[string]any{"a": "not a number"})
		toolError(t, err, `"add"`)
		if res := mustRun(t, get(t, ts, "echo"), map[string]any{"text": "still"}); res.LLMContent != "still" {
			t.Errorf("echo after error = %q", res.LLMContent)
		}
	})
}

func TestProgress(t *testing.T) {
	transports(t, func(t *testing.T, sc ServerConfig) {
		ts := listTools(t, newManager(t, map[string]ServerConfig{"s": sc}))
		var got []string
		res, err := get(t, ts, "progress").Execute(context.Background(), tools.Call{
			ID:     "p",
			Output: func(s string) { got = append(got, s) },
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.LLMContent != "done" {
			t.Errorf("result = %q", res.LLMContent)
		}
		want := []string{"step 1 (1/3)\n", "step 2 (2/3)\n", "step 3 (3/3)\n"}
		if !slices.Equal(got, want) {
			t.Errorf("output = %q, want %q", got, want)
		}
	})
}

func TestTimeout(t *testing.T) {
	transports(t, func(t *testing.T, sc ServerConfig) {
		sc.Timeout = 100
		ts := listTools(t, newManager(t, map[string]ServerConfig{"s": sc}))
		_, err := run(t, get(t, ts, "sleep"), map[string]any{"seconds": 3600})
		toolError(t, err, "timed out", `"sleep"`, `"s"`)
		// The server is still usable.
		if res := mustRun(t, get(t, ts, "echo"), map[string]any{"text": "up"}); res.LLMContent != "up" {
			t.Errorf("echo after timeout = %q", res.LLMContent)
		}
	})
}

func TestCancel(t *testing.T) {
	transports(t, func(t *testing.T, sc ServerConfig) {
		ts := listTools(t, newManager(t, map[string]ServerConfig{"s": sc}))
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		stop := errors.New("user pressed escape")
		var once sync.Once
		_, err := get(t, ts, "sleep").Execute(ctx, tools.Call{
			Args: map[string]any{"seconds": 3600},
			// The server reports "sleeping" once it is inside the call.
			Output: func(string) { once.Do(func() { cancel(stop) }) },
		})
		if !errors.Is(err, stop) {
			t.Fatalf("err = %v, want it to wrap the cancellation cause", err)
		}
		var te *tools.Error
		if errors.As(err, &te) {
			t.Errorf("cancellation returned as a tool error: %v", err)
		}
		if res := mustRun(t, get(t, ts, "echo"), map[string]any{"text": "up"}); res.LLMContent != "up" {
			t.Errorf("echo after cancel = %q", res.LLMContent)
		}
	})
}

func TestCrashRestart(t *testing.T) {
	m := newManager(t, map[string]ServerConfig{"crashy": stdio()})
	ts := listTools(t, m)
	pid := serverPid(t, get(t, ts, "env"))
	if pid != m.pid("crashy") {
		t.Fatalf("server pid %d, manager pid %d", pid, m.pid("crashy"))
	}

	child, err := strconv.Atoi(mustRun(t, get(t, ts, "spawn"), nil).LLMContent)
	if err != nil || !alive(child) {
		t.Fatalf("spawned child %d (%v) not running", child, err)
	}

	_, err = run(t, get(t, ts, "crash"), nil)
	toolError(t, err, `"crashy"`, "restarted")
	if alive(pid) {
		t.Errorf("crashed server %d still exists", pid)
	}
	// The crashed server's child is not left behind either.
	waitDead(t, child)

	if res := mustRun(t, get(t, ts, "echo"), map[string]any{"text": "back"}); res.LLMContent != "back" {
		t.Errorf("echo after crash = %q", res.LLMContent)
	}
	if pid2 := serverPid(t, get(t, ts, "env")); pid2 == pid {
		t.Errorf("server was not restarted: pid still %d", pid)
	}
}

func TestCloseKillsProcesses(t *testing.T) {
	m, err := New(Config{Servers: map[string]ServerConfig{"s": stdio()}, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ts := listTools(t, m)
	pid := m.pid("s")
	if pid == 0 || !alive(pid) {
		t.Fatalf("server pid %d not running", pid)
	}
	child, err := strconv.Atoi(mustRun(t, get(t, ts, "spawn"), nil).LLMContent)
	if err != nil || !alive(child) {
		t.Fatalf("spawned child %d (%v) not running", child, err)
	}

	// Close while a call is in flight: the call ends and Close does not
	// wait for it.
	started := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		_, err := get(t, ts, "sleep").Execute(context.Background(), tools.Call{
			Args:   map[string]any{"seconds": 3600},
			Output: func(string) { once.Do(func() { close(started) }) },
		})
		done <- err
	}()
	<-started
	if err := m.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("in-flight call after Close: %v, want ErrClosed", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("server %d after Close: kill(0) = %v, want ESRCH", pid, err)
	}
	waitDead(t, child)

	_, err = run(t, get(t, ts, "echo"), map[string]any{"text": "x"})
	if !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: %v, want ErrClosed", err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestFailingServerIsolated(t *testing.T) {
	// A closed loopback port: listen, note the address, close.
	ts := httptest.NewServer(http.NotFoundHandler())
	deadURL := ts.URL
	ts.Close()
	m := newManager(t, map[string]ServerConfig{
		"good":    stdio(),
		"nocmd":   {Command: filepath.Join(t.TempDir(), "missing")},
		"exits":   {Command: "/bin/sh", Args: []string{"-c", "exit 7"}},
		"nothere": {URL: deadURL},
	})
	got, errs := m.Tools(context.Background())
	if len(got) != 14 {
		t.Errorf("got %d tools, want the good server's 12 and the 2 resource tools", len(got))
	}
	var msgs []string
	for _, err := range errs {
		msgs = append(msgs, err.Error())
	}
	all := strings.Join(msgs, "\n")
	if len(errs) != 3 {
		t.Errorf("errors:\n%s\nwant 3", all)
	}
	for _, n := range []string{`"nocmd"`, `"exits"`, `"nothere"`} {
		if !strings.Contains(all, n) {
			t.Errorf("no error names server %s:\n%s", n, all)
		}
	}
}

func TestEnvAndCwd(t *testing.T) {
	dir := t.TempDir()
	m, err := New(Config{
		Logger: testLogger(),
		Env:    []string{"PATH=" + os.Getenv("PATH"), "BASE=from-base"},
		Servers: map[string]ServerConfig{"s": {
			Command: serverBin,
			Env:     map[string]string{"MCPTOOLS_TEST": "${BASE}-and-config"},
			Cwd:     dir,
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	out := mustRun(t, get(t, listTools(t, m), "env"), nil).LLMContent
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, " cwd="+realDir+" ") && !strings.Contains(out, " cwd="+dir+" ") {
		t.Errorf("env output %q, want cwd %s", out, dir)
	}
	if !strings.HasSuffix(out, " var=from-base-and-config") {
		t.Errorf("env output %q, want var=from-base-and-config", out)
	}
}

func TestHeaders(t *testing.T) {
	srv := testserver.New(testserver.Options{})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var mu sync.Mutex
	var seen []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	m, err := New(Config{
		Logger:  testLogger(),
		Env:     []string{"TOKEN=s3cret"},
		Servers: map[string]ServerConfig{"h": {HTTPURL: ts.URL, Headers: map[string]string{"Authorization": "Bearer $TOKEN"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	mustRun(t, get(t, listTools(t, m), "echo"), map[string]any{"text": "x"})
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("no requests seen")
	}
	for _, a := range seen {
		if a != "Bearer s3cret" {
			t.Errorf("Authorization = %q, want %q", a, "Bearer s3cret")
		}
	}
}

func TestSanitizeName(t *testing.T) {
	long := strings.Repeat("a", 40) + strings.Repeat("b", 40)
	tests := map[string]string{
		"echo":          "echo",
		"my tool/v2":    "my_tool_v2",
		"é-ok.x":        "_-ok.x",
		"srv__tool":     "srv__tool",
		long:            strings.Repeat("a", 28) + "___" + strings.Repeat("b", 32),
		"x" + long[:62]: "x" + long[:62],
	}
	for in, want := range tests {
		if got := sanitizeName(in); got != want {
			t.Errorf("sanitizeName(%q) = %q, want %q", in, got, want)
		}
		if got := sanitizeName(in); len(got) > 63 {
			t.Errorf("sanitizeName(%q) has %d characters", in, len(got))
		}
	}
}

func TestNormalizeSchema(t *testing.T) {
	in := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"a": map[string]any{"type": []any{"string", "null"}},
			"b": map[string]any{"type": []any{"null", "integer"}},
			"c": map[string]any{"type": []any{"string", "integer"}},
		},
	}
	out := normalizeSchema(in).(map[string]any)
	props := out["properties"].(map[string]any)
	if a := props["a"].(map[string]any); a["type"] != "string" || a["nullable"] != true {
		t.Errorf("a = %v", a)
	}
	if b := props["b"].(map[string]any); b["type"] != "integer" || b["nullable"] != true {
		t.Errorf("b = %v", b)
	}
	if c := props["c"].(map[string]any); c["nullable"] != nil {
		t.Errorf("c = %v", c)
	}
	// The input is not modified.
	if _, ok := in["properties"].(map[string]any)["a"].(map[string]any)["type"].([]any); !ok {
		t.Error("normalizeSchema modified its input")
	}
}
