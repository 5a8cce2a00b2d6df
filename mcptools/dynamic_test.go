//go:build unix

package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentry-dev/agentry/mcptools/testdata/server/testserver"
	"github.com/agentry-dev/agentry/tools"
)

func TestResources(t *testing.T) {
	transports(t, func(t *testing.T, sc ServerConfig) {
		ts := listTools(t, newManager(t, map[string]ServerConfig{"s": sc}))
		list, read := get(t, ts, ListResourcesName), get(t, ts, ReadResourceName)
		if list.Kind() != tools.KindSearch || read.Kind() != tools.KindRead || !list.Kind().ReadOnly() || !read.Kind().ReadOnly() {
			t.Errorf("kinds = %q, %q; want search and read", list.Kind(), read.Kind())
		}
		res := mustRun(t, list, nil)
		want := "Available MCP Resources:\n- s:test://greeting | greeting | A greeting.\n- s:test://pixel | pixel\n"
		if res.LLMContent != want || res.Display != "Listed 2 resources." {
			t.Errorf("list = %q / %q, want %q", res.LLMContent, res.Display, want)
		}
		if res := mustRun(t, list, map[string]any{"serverName": "other"}); res.LLMContent != "No resources found for server: other" {
			t.Errorf("list other = %q", res.LLMContent)
		}

		// By server-qualified URI and by bare URI.
		for _, uri := range []string{"s:" + testserver.TextURI, testserver.TextURI} {
			res = mustRun(t, read, map[string]any{"uri": uri})
			if res.LLMContent != testserver.Greeting+"\n" || res.Display != `Successfully read resource "greeting" from server "s"` {
				t.Errorf("read %s = %q / %q", uri, res.LLMContent, res.Display)
			}
		}
		if res = mustRun(t, read, map[string]any{"uri": testserver.BlobURI}); res.LLMContent != "[Binary Data (image/png)]\n" {
			t.Errorf("read blob = %q", res.LLMContent)
		}
		_, err := run(t, read, map[string]any{"uri": "test://missing"})
		var te *tools.Error
		if !errors.As(err, &te) || te.Type != tools.ErrMCPResourceNotFound || te.Msg != "Resource not found for URI: test://missing" {
			t.Errorf("read missing: %v", err)
		}
		_, err = run(t, read, map[string]any{})
		if !errors.As(err, &te) || te.Type != tools.ErrInvalidParams {
			t.Errorf("read without uri: %v", err)
		}
	})
}

// TestResourcePages: resources/list is followed across pages.
func TestResourcePages(t *testing.T) {
	srv := testserver.New(testserver.Options{PageSize: 1})
	url := serveStreamable(t, srv)
	ts := listTools(t, newManager(t, map[string]ServerConfig{"s": {HTTPURL: url}}))
	res := mustRun(t, get(t, ts, ListResourcesName), nil)
	if !strings.Contains(res.LLMContent, testserver.TextURI) || !strings.Contains(res.LLMContent, testserver.BlobURI) {
		t.Errorf("list = %q, want both pages", res.LLMContent)
	}
	if _, ok := ts["weather"]; !ok {
		t.Errorf("tools across pages: %v", names(ts))
	}
}

// TestNoResourcesNoResourceTools: a server without resources brings no
// resource tools (gemini-cli's isActiveTool).
func TestNoResourcesNoResourceTools(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "v1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "only"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	ts := listTools(t, newManager(t, map[string]ServerConfig{"s": {HTTPURL: serveStreamable(t, srv)}}))
	if got := names(ts); !slices.Equal(got, []string{"only"}) {
		t.Errorf("tools = %v", got)
	}
}

// TestToolListChanged: a server that replaces a tool during a call has its
// new list in the Manager's tools by the next Version, and the removed
// tool's calls fail saying so.
func TestToolListChanged(t *testing.T) {
	transports(t, func(t *testing.T, sc ServerConfig) {
		m := newManager(t, map[string]ServerConfig{"s": sc})
		ts := listTools(t, m)
		v := m.Version()
		add := get(t, ts, "add")
		if res := mustRun(t, get(t, ts, "mutate"), nil); res.LLMContent != "mutated" {
			t.Fatalf("mutate = %q", res.LLMContent)
		}
		if m.Version() == v {
			t.Fatal("Version unchanged after the server announced a new tool list")
		}
		now := map[string]tools.Tool{}
		for _, tl := range m.Current() {
			now[tl.Name()] = tl
		}
		if _, ok := now["add"]; ok {
			t.Error("add still offered after the server removed it")
		}
		if res := mustRun(t, get(t, now, "multiply"), map[string]any{"a": 6, "b": 7}); res.LLMContent != "42" {
			t.Errorf("multiply = %q", res.LLMContent)
		}
		_, err := run(t, add, map[string]any{"a": 1, "b": 2})
		var te *tools.Error
		if !errors.As(err, &te) || te.Type != tools.ErrToolNotRegistered || !strings.Contains(te.Msg, `no longer offers tool "add"`) {
			t.Errorf("call of the removed tool: %v", err)
		}
		if v2 := m.Version(); m.Version() != v2 {
			t.Error("Version changes with nothing changed")
		}
	})
}

// markedServer is the stdio test server recording each start in a file.
func markedServer(t *testing.T) (ServerConfig, func() []string) {
	mark := filepath.Join(t.TempDir(), "starts")
	return ServerConfig{Command: serverBin, Args: []string{"-mark", mark}}, func() []string {
		b, err := os.ReadFile(mark)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return strings.Fields(string(b))
	}
}

func lazyManager(t *testing.T, dir string, sc ServerConfig, lazy bool) *Manager {
	t.Helper()
	m, err := New(Config{Servers: map[string]ServerConfig{"s": sc}, Logger: testLogger(), CacheDir: dir, Lazy: lazy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestLazyStart: the first Manager starts the server and caches its
// lists 0600; the next declares the cached tools without starting it,
// and starts it on the first call.
func TestLazyStart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache", "mcp")
	sc, starts := markedServer(t)

	m1 := lazyManager(t, dir, sc, true)
	want := names(listTools(t, m1))
	if n := len(starts()); n != 1 {
		t.Fatalf("first manager: %d starts, want 1", n)
	}
	path, err := cachePath(dir, sc)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("no cache entry: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("cache file mode %v, want 0600", fi.Mode().Perm())
	}
	if di, _ := os.Stat(dir); di.Mode().Perm() != 0o700 {
		t.Errorf("cache dir mode %v, want 0700", di.Mode().Perm())
	}
	m1.Close()

	m2 := lazyManager(t, dir, sc, true)
	ts := listTools(t, m2)
	if got := names(ts); !slices.Equal(got, want) {
		t.Errorf("cached tools = %v, want %v", got, want)
	}
	if n := len(starts()); n != 1 || m2.pid("s") != 0 {
		t.Fatalf("lazy manager started the server (%d starts, pid %d)", n, m2.pid("s"))
	}
	// Listing prompts (as /help and completion do) reads the cache.
	if _, errs := m2.Prompts(t.Context()); len(errs) > 0 || len(starts()) != 1 {
		t.Fatalf("listing a lazy server's prompts: %v, %d starts", errs, len(starts()))
	}
	// Listing resources reads the cache too; only reading one starts.
	if res := mustRun(t, get(t, ts, ListResourcesName), nil); !strings.Contains(res.LLMContent, testserver.TextURI) {
		t.Errorf("cached resources = %q", res.LLMContent)
	}
	if len(starts()) != 1 {
		t.Fatal("listing cached resources started the server")
	}
	v := m2.Version()
	if res := mustRun(t, get(t, ts, "echo"), map[string]any{"text": "lazy"}); res.LLMContent != "lazy" {
		t.Errorf("echo = %q", res.LLMContent)
	}
	if n := len(starts()); n != 2 || m2.pid("s") == 0 {
		t.Errorf("after the first call: %d starts, pid %d; want the server started once more", n, m2.pid("s"))
	}
	if m2.Version() != v {
		t.Error("an unchanged listing on start changed the tools' version")
	}

	// Opted out: the server starts with the manager despite its cache.
	m3 := lazyManager(t, dir, sc, false)
	listTools(t, m3)
	if n := len(starts()); n != 3 {
		t.Errorf("non-lazy manager: %d starts, want 3", n)
	}
	no := false
	sc.Lazy = &no
	m4 := lazyManager(t, dir, sc, true)
	listTools(t, m4)
	if n := len(starts()); n != 4 {
		t.Errorf("server with lazy false: %d starts, want 4", n)
	}
}

// TestLazyChangedOnStart: a lazy server whose fresh listing differs from
// its cache replaces the declared tools and the cache, and a cached tool
// it no longer offers fails clearly.
func TestLazyChangedOnStart(t *testing.T) {
	dir := t.TempDir()
	sc, starts := markedServer(t)
	path, err := cachePath(dir, sc)
	if err != nil {
		t.Fatal(err)
	}
	stale := &lists{Tools: []*mcp.Tool{
		{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		{Name: "ghost", Description: "gone since", InputSchema: map[string]any{"type": "object"}},
	}}
	b, err := encodeCache("s", stale)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	m := lazyManager(t, dir, sc, true)
	ts := listTools(t, m)
	if got := names(ts); !slices.Equal(got, []string{"echo", "ghost"}) {
		t.Fatalf("declared from the cache: %v", got)
	}
	v := m.Version()
	_, err = run(t, get(t, ts, "ghost"), nil)
	var te *tools.Error
	if !errors.As(err, &te) || te.Type != tools.ErrToolNotRegistered || !strings.Contains(te.Msg, `does not offer tool "ghost"`) {
		t.Errorf("ghost call: %v", err)
	}
	if len(starts()) != 1 {
		t.Fatalf("starts = %v, want 1", starts())
	}
	if m.Version() == v {
		t.Fatal("the fresh listing did not change the tools")
	}
	var now []string
	for _, tl := range m.Current() {
		now = append(now, tl.Name())
	}
	if slices.Contains(now, "ghost") || !slices.Contains(now, "add") {
		t.Errorf("tools after start = %v", now)
	}
	var f cacheFile
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Tools) < 3 || len(f.Resources) != 2 {
		t.Errorf("cache after start: %d tools, %d resources", len(f.Tools), len(f.Resources))
	}
}

// TestLazyNeverCalled: a Manager whose lazy server is never used never
// starts it, and closes cleanly.
func TestLazyNeverCalled(t *testing.T) {
	dir := t.TempDir()
	sc, starts := markedServer(t)
	listTools(t, lazyManager(t, dir, sc, true)) // fills the cache
	m := lazyManager(t, dir, sc, true)
	listTools(t, m)
	m.Version()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(starts()); n != 1 {
		t.Errorf("starts = %d, want only the first manager's", n)
	}
}
