package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/internal/proctest"
)

// everythingSettings writes user settings that connect
// @modelcontextprotocol/server-everything (AGENTRY_TEST_MCP_EVERYTHING: its
// start command) over stdio as the server "everything". Without the
// variable the test is skipped, except under CI, where it fails.
func everythingSettings(t *testing.T, e *env) {
	t.Helper()
	command := strings.Fields(os.Getenv("AGENTRY_TEST_MCP_EVERYTHING"))
	if len(command) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("AGENTRY_TEST_MCP_EVERYTHING is not set; CI must install @modelcontextprotocol/server-everything")
		}
		t.Skip("AGENTRY_TEST_MCP_EVERYTHING not set")
	}
	settings, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": command[0], "args": append(command[1:], "stdio")},
	}})
	e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), string(settings))
}

// TestInteractiveMCPPrompts: server-everything's prompts are slash
// commands of the terminal: Tab completes one, /help lists it marked
// [MCP], "/<prompt> help" lists its arguments, a missing required
// argument is gemini-cli's error, and running one sends its messages —
// an embedded resource's text included — to the model as the user's turn.
func TestInteractiveMCPPrompts(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(fakegemini.Text("Sunny in Paris."), fakegemini.Text("Resource read."))
	e := newEnv(t)
	e.geminiEnv(srv)
	everythingSettings(t, e)
	tm := e.interactive("-m", "gemini-2.5-flash", "--trust-workspace")

	tm.Type("/args-pr")
	tm.Keys("Tab")
	tm.WaitFor("/args-prompt completed", func(s string) bool { return strings.Contains(s, "/args-prompt") })
	tm.Type(` --state=IDF Paris`)
	tm.Keys("Enter")
	tm.WaitText("Sunny in Paris.")
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1", len(reqs))
	}
	if got := userTextsOf(reqs[0]); !strings.Contains(got, "What's weather in Paris, IDF?") {
		t.Errorf("the model got %q, want the prompt's text", got)
	}

	send(tm, "/help")
	tm.WaitFor("/help lists the prompts", func(s string) bool {
		return strings.Contains(s, "/args-prompt") && strings.Contains(s, "[MCP] A prompt with two arguments") && strings.Contains(s, "/simple-prompt")
	})
	send(tm, "/args-prompt help")
	tm.WaitText("(required: yes)")
	send(tm, "/resource-prompt Text")
	tm.WaitText("Missing required argument(s): --resourceId")

	send(tm, "/resource-prompt Text 3")
	tm.WaitText("Resource read.")
	proctest.Eventually(t, "the second model request", func() bool { return len(srv.Requests()) == 2 })
	got := userTextsOf(srv.Requests()[1])
	for _, want := range []string{"This prompt includes the Text resource with id: 3", "Resource 3: This is a plaintext resource"} {
		if !strings.Contains(got, want) {
			t.Errorf("the model got %q, want %q in it", got, want)
		}
	}
	tm.Keys("C-d")
	tm.WaitExit()
}
