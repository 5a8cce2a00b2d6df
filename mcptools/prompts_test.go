//go:build unix

package mcptools

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentry-dev/agentry/internal/proctest"
)

// promptServer serves an MCP server with prompts over streamable HTTP,
// listing two prompts a page, and returns it and its URL.
func promptServer(t *testing.T, names ...string) (*mcp.Server, string) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "prompts", Version: "1"}, &mcp.ServerOptions{PageSize: 2})
	for _, n := range names {
		srv.AddPrompt(&mcp.Prompt{Name: n, Description: "about " + n, Arguments: []*mcp.PromptArgument{
			{Name: "city", Description: "the city", Required: true},
			{Name: "state"},
		}}, echoPrompt)
	}
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return srv, ts.URL
}

// echoPrompt answers with its name and arguments.
func echoPrompt(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	a := req.Params.Arguments
	if a["city"] == "nowhere" {
		return nil, errors.New("no such city")
	}
	return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
		{Role: "user", Content: &mcp.TextContent{Text: req.Params.Name + " in " + a["city"] + "/" + a["state"]}},
		{Role: "user", Content: &mcp.ImageContent{Data: []byte("png"), MIMEType: "image/png"}},
	}}, nil
}

func promptNames(ps []Prompt) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Server+"/"+p.Name)
	}
	return out
}

func TestPromptsListsEveryPageOfEveryServer(t *testing.T) {
	_, a := promptServer(t, "p1", "p2", "p3", "p4", "p5")
	_, b := promptServer(t, "p1")
	m := newManager(t, map[string]ServerConfig{
		"b":     {URL: b},
		"a":     {HTTPURL: a},
		"tools": stdio(), // offers tools, no prompts
	})
	ps, errs := m.Prompts(t.Context())
	if len(errs) > 0 {
		t.Fatalf("Prompts: %v", errs)
	}
	want := []string{"a/p1", "a/p2", "a/p3", "a/p4", "a/p5", "b/p1"}
	if got := promptNames(ps); !slices.Equal(got, want) {
		t.Fatalf("prompts = %v, want %v", got, want)
	}
	p := ps[0]
	if p.Description != "about p1" || len(p.Arguments) != 2 || !p.Arguments[0].Required || p.Arguments[1].Required {
		t.Errorf("prompt p1 = %+v, arguments %+v", p.Prompt, p.Arguments)
	}
}

func TestGetPromptPassesArguments(t *testing.T) {
	_, a := promptServer(t, "weather")
	m := newManager(t, map[string]ServerConfig{"a": {URL: a}})
	res, err := m.GetPrompt(t.Context(), "a", "weather", map[string]string{"city": "Paris", "state": "IDF"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 2 {
		t.Fatalf("messages = %d, want 2", len(res.Messages))
	}
	if txt, ok := res.Messages[0].Content.(*mcp.TextContent); !ok || txt.Text != "weather in Paris/IDF" {
		t.Errorf("first message = %#v", res.Messages[0].Content)
	}
	if _, err := m.GetPrompt(t.Context(), "a", "weather", map[string]string{"city": "nowhere"}); err == nil {
		t.Error("a prompt the server fails: no error")
	}
	// The error of a prompt is the server's answer, not a broken
	// connection: the session stays.
	if _, err := m.GetPrompt(t.Context(), "a", "weather", map[string]string{"city": "Rome"}); err != nil {
		t.Errorf("after a failed prompt: %v", err)
	}
	if _, err := m.GetPrompt(t.Context(), "zz", "weather", nil); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("unknown server: err = %v, want ErrUnknownServer", err)
	}
}

func TestPromptsListedAgainWhenTheServerSaysTheyChanged(t *testing.T) {
	srv, a := promptServer(t, "first")
	m := newManager(t, map[string]ServerConfig{"a": {URL: a}})
	ps, errs := m.Prompts(t.Context())
	if len(errs) > 0 || len(ps) != 1 {
		t.Fatalf("Prompts = %v, %v", promptNames(ps), errs)
	}
	// Adding a prompt sends notifications/prompts/list_changed.
	srv.AddPrompt(&mcp.Prompt{Name: "second"}, echoPrompt)
	proctest.Eventually(t, "the prompts listed again after list_changed", func() bool {
		ps, _ := m.Prompts(t.Context())
		return slices.Equal(promptNames(ps), []string{"a/first", "a/second"})
	})
}

// TestPromptsConnectAServerOnce: listing prompts (which completion does on
// every keystroke) tries an unreachable server once, not on every call.
func TestPromptsConnectAServerOnce(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	_, a := promptServer(t, "p1")
	m := newManager(t, map[string]ServerConfig{"a": {URL: a}, "gone": {URL: gone.URL}})
	ps, errs := m.Prompts(t.Context())
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `"gone"`) || len(ps) != 1 {
		t.Fatalf("first list: %v, %v", promptNames(ps), errs)
	}
	ps, errs = m.Prompts(t.Context())
	if len(errs) != 0 || len(ps) != 1 {
		t.Fatalf("second list: %v, %v (the unreachable server was tried again)", promptNames(ps), errs)
	}
}
