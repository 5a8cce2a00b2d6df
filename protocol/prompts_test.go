package protocol_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/protocol"
	"github.com/agentry-dev/agentry/protocol/devtool"
)

// promptServer serves an MCP server with one prompt, greet(name).
func promptServer(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "prompts", Version: "1"}, nil)
	srv.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greet someone", Arguments: []*mcp.PromptArgument{
		{Name: "name", Description: "Who", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Say hello to " + req.Params.Arguments["name"] + "."}}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestPromptCommands: a context's MCP prompts are listed by commands/get
// with its context_id, and command/execute of one starts a task on the
// context with the prompt's text as the user's message.
func TestPromptCommands(t *testing.T) {
	url := promptServer(t)
	h := newHarness(t, []string{textTurn("Hi."), textTurn("Hello, Ada!")}, func(_ *protocol.Config, s *config.Settings) {
		s.Trusted = true
		s.MCPServers = map[string]config.MCPServerSettings{"people": {URL: url}}
	})
	evs := collect(t, h.client("jsonrpc"), userMessage("hi", ""))
	ctxID := evs[0].(*a2a.Task).ContextID

	list := func(params string) []devtool.SlashCommand {
		_, body := h.raw("POST", "/", `{"jsonrpc":"2.0","id":1,"method":"commands/get"`+params+`}`, nil)
		var got struct {
			Result devtool.GetAllSlashCommandsResponse `json:"result"`
		}
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatal(err)
		}
		return got.Result.Commands
	}
	find := func(cs []devtool.SlashCommand) *devtool.SlashCommand {
		for i := range cs {
			if cs[i].Name == "greet" {
				return &cs[i]
			}
		}
		return nil
	}
	if find(list("")) != nil {
		t.Fatal("commands/get without a context lists a context's prompt")
	}
	g := find(list(fmt.Sprintf(`,"params":{"context_id":%q}`, ctxID)))
	if g == nil {
		t.Fatal("commands/get with the context does not list its prompt")
	}
	if g.Description != "Greet someone" || len(g.Arguments) != 1 || g.Arguments[0] != (devtool.SlashCommandArgument{Name: "name", Description: "Who", IsRequired: true}) ||
		len(g.SubCommands) != 1 || g.SubCommands[0].Name != "help" {
		t.Errorf("greet = %+v", *g)
	}

	if first, _, _ := h.execute([]string{"greet"}, "Ada", ""); first.Status != devtool.CommandFailedToStart {
		t.Errorf("a prompt without its context: %+v", first)
	}
	p, _ := json.Marshal(map[string]any{"command_path": []string{"greet"}, "args": "Ada", "context_id": ctxID})
	_, body := h.raw("POST", "/", fmt.Sprintf(`{"jsonrpc":"2.0","id":"x","method":"command/execute","params":%s}`, p), nil)
	var task *a2a.Task
	var rest []a2a.Event
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "data:"))
		if line == "" || strings.Contains(line, `"execution_id"`) {
			continue
		}
		var env struct {
			Result a2a.StreamResponse `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &env); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if tk, ok := env.Result.Event.(*a2a.Task); ok {
			task = tk
			continue
		}
		rest = append(rest, env.Result.Event)
	}
	if task == nil {
		t.Fatalf("command/execute started no task: %s", body)
	}
	if task.ContextID != ctxID || len(task.History) != 1 || task.History[0].Parts[0].Text() != "Say hello to Ada." {
		t.Errorf("the prompt's task = %+v", task)
	}
	if got := textOf(rest); !strings.Contains(got, "Hello, Ada!") {
		t.Errorf("the task's answer = %q (events %s)", got, describe(rest))
	}
	if d := describe(rest); !strings.HasPrefix(d, "STATE_CHANGE:working") || !strings.HasSuffix(d, "STATE_CHANGE:completed STATE_CHANGE:completed") {
		t.Errorf("events = %s", d)
	}
	if _, _, text := h.execute([]string{"greet", "help"}, "", ctxID); !strings.Contains(text, "(required: yes)") {
		t.Errorf("greet help = %q", text)
	}
}
