//go:build unix

package mcptools

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentry-dev/agentry/internal/childproc"
	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/mcptools/testdata/server/testserver"
)

// sseServer serves the test server's tools over the SDK's HTTP+SSE
// transport on loopback and returns its URL. Each request is passed to
// seen first when it is set.
func sseServer(t *testing.T, seen func(*http.Request)) string {
	t.Helper()
	srv := testserver.New(testserver.Options{})
	h := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen != nil {
			seen(r)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { closeSSE(ts) })
	return ts.URL
}

// closeSSE stops an SSE test server without waiting for its handlers: the
// SDK's SSE handler may still be closing the server side of a session
// whose client went away.
func closeSSE(ts *httptest.Server) {
	ts.Config.Close()
}

func TestKindOf(t *testing.T) {
	tests := []struct {
		cfg  ServerConfig
		want transportKind
	}{
		{ServerConfig{Command: "x"}, kindStdio},
		{ServerConfig{HTTPURL: "http://h"}, kindStreamable},
		{ServerConfig{URL: "http://h", Type: "http"}, kindStreamable},
		{ServerConfig{URL: "http://h", Type: "sse"}, kindSSE},
		{ServerConfig{URL: "http://h"}, kindAuto},
	}
	for _, tt := range tests {
		if got := kindOf(tt.cfg); got != tt.want {
			t.Errorf("kindOf(%+v) = %v, want %v", tt.cfg, got, tt.want)
		}
	}
}

// TestSSEHeaders: the configured headers go with every SSE request, the
// event stream's GET and the message POSTs alike.
func TestSSEHeaders(t *testing.T) {
	var mu sync.Mutex
	seen := map[string][]string{}
	url := sseServer(t, func(r *http.Request) {
		mu.Lock()
		seen[r.Method] = append(seen[r.Method], r.Header.Get("Authorization"))
		mu.Unlock()
	})
	m, err := New(Config{
		Logger:  testLogger(),
		Env:     []string{"TOKEN=s3cret"},
		Servers: map[string]ServerConfig{"h": {URL: url, Type: "sse", Headers: map[string]string{"Authorization": "Bearer $TOKEN"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	mustRun(t, get(t, listTools(t, m), "echo"), map[string]any{"text": "x"})
	mu.Lock()
	defer mu.Unlock()
	if len(seen["GET"]) == 0 || len(seen["POST"]) == 0 {
		t.Fatalf("requests seen: %v", seen)
	}
	for method, auths := range seen {
		for _, a := range auths {
			if a != "Bearer s3cret" {
				t.Errorf("%s Authorization = %q, want %q", method, a, "Bearer s3cret")
			}
		}
	}
}

// TestSSETypeHTTPDoesNotFallBack: with type "http" an SSE-only server is
// not reached: there is no fallback.
func TestSSETypeHTTPDoesNotFallBack(t *testing.T) {
	m := newManager(t, map[string]ServerConfig{"s": {URL: sseServer(t, nil), Type: "http"}})
	if _, errs := m.Tools(t.Context()); len(errs) != 1 {
		t.Fatalf("errors = %v, want the streamable HTTP failure", errs)
	}
}

// TestSSEReconnect: when the SSE stream ends, the next call connects
// again, as a crashed stdio server is restarted.
func TestSSEReconnect(t *testing.T) {
	srv := testserver.New(testserver.Options{})
	h := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var mu sync.Mutex
	gets := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			mu.Lock()
			gets++
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { closeSSE(ts) })
	m := newManager(t, map[string]ServerConfig{"s": {URL: ts.URL, Type: "sse"}})
	ts1 := listTools(t, m)
	mustRun(t, get(t, ts1, "echo"), map[string]any{"text": "one"})
	ts.CloseClientConnections()
	srvOf := m.servers["s"]
	waitDeadOrReplaced(t, srvOf)
	if res := mustRun(t, get(t, ts1, "echo"), map[string]any{"text": "two"}); res.LLMContent != "two" {
		t.Errorf("echo after reconnect = %q", res.LLMContent)
	}
	mu.Lock()
	defer mu.Unlock()
	if gets != 2 {
		t.Errorf("event streams opened = %d, want 2", gets)
	}
}

// waitDeadOrReplaced waits until the server's session is known to have
// ended.
func waitDeadOrReplaced(t *testing.T, s *server) {
	t.Helper()
	eventually(t, "the SSE session to end", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.dead
	})
}

// TestEverythingSSE runs server-everything's SSE transport
// (`mcp-server-everything sse`, on the port in PORT) and calls a tool
// through agentry's SSE client, by type and by fallback.
func TestEverythingSSE(t *testing.T) {
	url := everythingHTTP(t, "sse") + "/sse"
	for name, sc := range map[string]ServerConfig{"type": {URL: url, Type: "sse"}, "fallback": {URL: url}} {
		t.Run(name, func(t *testing.T) {
			m := newManager(t, map[string]ServerConfig{"everything": sc})
			res := mustRun(t, get(t, listTools(t, m), "echo"), map[string]any{"message": "hello over SSE"})
			if !strings.Contains(res.LLMContent, "hello over SSE") {
				t.Errorf("echo = %q", res.LLMContent)
			}
		})
	}
}

// everythingHTTP starts server-everything with the given transport
// argument on a free loopback port and returns its base URL.
func everythingHTTP(t *testing.T, transport string) string {
	t.Helper()
	command := everythingCommand(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(command[0], append(command[1:], transport)...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	childproc.Prepare(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		killProcessGroup(cmd.Process.Pid)
		cmd.Wait()
	})
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "running on port") || strings.Contains(sc.Text(), "listening on port") {
			go func() {
				for sc.Scan() {
				}
			}()
			return fmt.Sprintf("http://127.0.0.1:%d", port)
		}
	}
	t.Fatalf("server-everything %s did not start", transport)
	return ""
}

// eventually waits for cond, failing the test after a generous bound.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	proctest.Eventually(t, what, cond)
}

// TestStreamableGetNotFound: a streamable HTTP server that answers the
// optional GET stream with 404 rather than 405 still serves calls, as in
// gemini-cli (which maps that 404 to 405; the SDK's client tolerates it).
func TestStreamableGetNotFound(t *testing.T) {
	srv := testserver.New(testserver.Options{})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var mu sync.Mutex
	gets := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			mu.Lock()
			gets++
			mu.Unlock()
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	ts1 := listTools(t, newManager(t, map[string]ServerConfig{"s": {URL: ts.URL, Type: "http"}}))
	for _, text := range []string{"one", "two"} {
		if res := mustRun(t, get(t, ts1, "echo"), map[string]any{"text": text}); res.LLMContent != text {
			t.Errorf("echo = %q", res.LLMContent)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if gets == 0 {
		t.Error("the client never opened the GET stream; the test tests nothing")
	}
}
