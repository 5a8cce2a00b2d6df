//go:build unix

package mcptools

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/internal/proctest"

	"github.com/agentry-dev/agentry/tools"
)

// TestEverything runs against the reference server
// @modelcontextprotocol/server-everything, whose start command (e.g. the
// path of its installed mcp-server-everything bin, optionally followed by
// arguments) is in AGENTRY_TEST_MCP_EVERYTHING. It is skipped when that is
// unset, except under CI, where the server must be installed.
func TestEverything(t *testing.T) {
	command := everythingCommand(t)
	m := newManager(t, map[string]ServerConfig{"everything": {
		Command: command[0],
		Args:    append(command[1:], "stdio"),
	}})
	ts := listTools(t, m)
	t.Logf("tools: %v", names(ts))

	res := mustRun(t, get(t, ts, "echo"), map[string]any{"message": "hello everything"})
	if !strings.Contains(res.LLMContent, "hello everything") {
		t.Errorf("echo = %q", res.LLMContent)
	}
	if res := mustRun(t, get(t, ts, "get-sum"), map[string]any{"a": 2, "b": 40}); !strings.Contains(res.LLMContent, "42") {
		t.Errorf("get-sum = %q", res.LLMContent)
	}
	res = mustRun(t, get(t, ts, "get-tiny-image"), nil)
	if !strings.Contains(res.LLMContent, "[image/png, ") {
		t.Errorf("get-tiny-image = %q, want an image/png description", res.LLMContent)
	}
	res = mustRun(t, get(t, ts, "get-resource-links"), map[string]any{"count": 2})
	if !strings.Contains(res.LLMContent, "Resource Link: ") {
		t.Errorf("get-resource-links = %q, want resource link lines", res.LLMContent)
	}
	var progress []string
	_, err := get(t, ts, "trigger-long-running-operation").Execute(context.Background(), tools.Call{
		Args:   map[string]any{"duration": 1, "steps": 2},
		Output: func(s string) { progress = append(progress, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("progress: %q", progress)

	// Resources: the static documents are text; a session resource made
	// by gzip-file-as-resource (announced with resources/list_changed) is
	// binary.
	list, read := get(t, ts, ListResourcesName), get(t, ts, ReadResourceName)
	res = mustRun(t, list, map[string]any{"serverName": "everything"})
	m1 := regexp.MustCompile(`- everything:(demo://resource/static/document/\S+)`).FindStringSubmatch(res.LLMContent)
	if m1 == nil {
		t.Fatalf("list_mcp_resources = %q, want the static documents", res.LLMContent)
	}
	res = mustRun(t, read, map[string]any{"uri": "everything:" + m1[1]})
	if strings.TrimSpace(res.LLMContent) == "" || strings.Contains(res.LLMContent, "[Binary Data") {
		t.Errorf("read %s = %q, want its text", m1[1], res.LLMContent)
	}
	mustRun(t, get(t, ts, "gzip-file-as-resource"), map[string]any{
		"name": "hello.txt.gz", "data": "data:text/plain;base64,aGVsbG8K", "outputType": "resourceLink",
	})
	const blobURI = "demo://resource/session/hello.txt.gz"
	proctest.Eventually(t, "the session resource to be listed", func() bool {
		m.Version()
		return strings.Contains(mustRun(t, list, nil).LLMContent, "everything:"+blobURI)
	})
	if res := mustRun(t, read, map[string]any{"uri": blobURI}); res.LLMContent != "[Binary Data (application/gzip)]\n" {
		t.Errorf("read %s = %q", blobURI, res.LLMContent)
	}
}

// everythingCommand returns the command of server-everything from
// AGENTRY_TEST_MCP_EVERYTHING; the test is skipped when that is unset,
// except under CI, where the server must be installed.
func everythingCommand(t *testing.T) []string {
	t.Helper()
	command := strings.Fields(os.Getenv("AGENTRY_TEST_MCP_EVERYTHING"))
	if len(command) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("AGENTRY_TEST_MCP_EVERYTHING is not set; CI must install @modelcontextprotocol/server-everything")
		}
		t.Skip("AGENTRY_TEST_MCP_EVERYTHING not set")
	}
	return command
}
