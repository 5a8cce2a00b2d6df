package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/internal/fakegemini"
)

// declared returns the function names a model request declares.
func declared(req fakegemini.Request) []string {
	var out []string
	if req.Body == nil {
		return nil
	}
	for _, tl := range req.Body.Tools {
		for _, d := range tl.FunctionDeclarations {
			out = append(out, d.Name)
		}
	}
	return out
}

// lastFunctionResponse returns the response the request sends for the last
// call of the named function, or nil.
func lastFunctionResponse(req fakegemini.Request, name string) map[string]any {
	var out map[string]any
	for _, c := range req.Body.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil && p.FunctionResponse.Name == name {
				out = p.FunctionResponse.Response
			}
		}
	}
	return out
}

func mcpSettings(t *testing.T, e *env, extra map[string]any, server map[string]any) {
	t.Helper()
	s := map[string]any{"mcpServers": map[string]any{"test": server}}
	for k, v := range extra {
		s[k] = v
	}
	b, _ := json.Marshal(s)
	e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), string(b))
}

// TestMCPToolListChanged: a server that replaces a tool during a turn
// (notifications/tools/list_changed) has its new list declared from the
// next model request on; the new tool runs and the removed one's call
// fails, naming it.
func TestMCPToolListChanged(t *testing.T) {
	server := buildMCPServer(t)
	srv := fakegemini.New(t)
	srv.Enqueue(fakegemini.Call("mutate", map[string]any{}))
	srv.Enqueue(fakegemini.Call("multiply", map[string]any{"a": 6, "b": 7}))
	srv.Enqueue(fakegemini.Call("add", map[string]any{"a": 1, "b": 2}))
	srv.Enqueue(fakegemini.Text("Done."))
	e := newEnv(t)
	e.geminiEnv(srv)
	mcpSettings(t, e, nil, map[string]any{"command": server, "trust": true})
	r := e.run("", "run", "-m", "gemini-2.5-flash", "--trust-workspace", "-o", "stream-json", "-p", "change your tools")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4", len(reqs))
	}
	if d := declared(reqs[0]); !slices.Contains(d, "add") || slices.Contains(d, "multiply") {
		t.Errorf("first request declares %v", d)
	}
	for i, req := range reqs[1:] {
		if d := declared(req); slices.Contains(d, "add") || !slices.Contains(d, "multiply") {
			t.Errorf("request %d after the change declares %v", i+2, d)
		}
	}
	if resp := lastFunctionResponse(reqs[2], "multiply"); !strings.Contains(fmtJSON(resp), "42") {
		t.Errorf("multiply's response = %v", resp)
	}
	if resp := lastFunctionResponse(reqs[3], "add"); !strings.Contains(fmtJSON(resp), `Tool \"add\" not found`) {
		t.Errorf("removed add's response = %v", fmtJSON(resp))
	}
}

func fmtJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestMCPLazyServer: the first session starts the server and caches its
// tools (0600); a later session declares the cached tools without
// starting the server, and starts it only when the model calls one;
// mcp.lazy false starts it with the session again.
func TestMCPLazyServer(t *testing.T) {
	server := buildMCPServer(t)
	mark := filepath.Join(t.TempDir(), "starts")
	starts := func() int {
		b, _ := os.ReadFile(mark)
		return len(strings.Fields(string(b)))
	}
	srv := fakegemini.New(t)
	e := newEnv(t)
	e.geminiEnv(srv)
	cfg := map[string]any{"command": server, "args": []string{"-mark", mark}, "trust": true}
	mcpSettings(t, e, nil, cfg)
	run := func(prompt string) {
		t.Helper()
		r := e.run("", "run", "-m", "gemini-2.5-flash", "--trust-workspace", "-o", "stream-json", "-p", prompt)
		if r.code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
	}

	srv.Enqueue(fakegemini.Text("one"))
	run("first")
	if n := starts(); n != 1 {
		t.Fatalf("first session: %d starts, want 1", n)
	}
	entries, _ := filepath.Glob(filepath.Join(e.home, ".agentry", "cache", "mcp", "*.json"))
	if len(entries) != 1 {
		t.Fatalf("cache entries: %v", entries)
	}
	if fi, err := os.Stat(entries[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("cache entry mode: %v %v", fi.Mode(), err)
	}

	srv.Enqueue(fakegemini.Text("two"))
	run("second")
	if n := starts(); n != 1 {
		t.Errorf("a session that called no MCP tool started the lazy server (%d starts)", n)
	}
	reqs := srv.Requests()
	if d := declared(reqs[len(reqs)-1]); !slices.Contains(d, "echo") || !slices.Contains(d, "read_mcp_resource") {
		t.Errorf("lazy session declares %v, want the cached tools", d)
	}

	srv.Enqueue(fakegemini.Call("echo", map[string]any{"text": "woken"}))
	srv.Enqueue(fakegemini.Text("three"))
	run("third")
	if n := starts(); n != 2 {
		t.Errorf("after a call: %d starts, want 2", n)
	}
	reqs = srv.Requests()
	if resp := lastFunctionResponse(reqs[len(reqs)-1], "echo"); !strings.Contains(fmtJSON(resp), "woken") {
		t.Errorf("echo's response = %v", resp)
	}

	mcpSettings(t, e, map[string]any{"mcp": map[string]any{"lazy": false}}, cfg)
	srv.Enqueue(fakegemini.Text("four"))
	run("fourth")
	if n := starts(); n != 3 {
		t.Errorf("mcp.lazy false: %d starts, want 3", n)
	}
}
