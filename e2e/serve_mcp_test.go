package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// TestServeMCPStructuredOutput: a tool of a real MCP server (the test
// server, over stdio, from the user's settings) returns structured
// content, and the streaming client gets it as the ToolCall's
// structured_data on the call's SUCCEEDED update.
func TestServeMCPStructuredOutput(t *testing.T) {
	server := buildMCPServer(t)
	const token = "e2e-mcp-token-0123456789abcdef"
	e := newEnv(t)
	e.set("AGENTRY_A2A_TOKEN=" + token)
	settings, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"test": map[string]any{"command": server, "trust": true},
	}})
	e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), string(settings))
	replay := e.replayFile(
		[]map[string]any{call("weather", map[string]any{})},
		[]map[string]any{text("Cold.")},
	)
	srv := e.serve("--port", "0", "-w", e.ws, "--trust-workspace", "-m", "replay:"+replay)
	defer srv.interrupt()

	hc := &http.Client{Transport: headerTransport{token}}
	c, err := a2aclient.NewFromEndpoints(t.Context(), []*a2a.AgentInterface{a2a.NewAgentInterface(srv.url+"/", a2a.TransportProtocolJSONRPC)},
		a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	var last a2a.TaskState
	for ev, err := range c.SendStreamingMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("weather?"))}) {
		if err != nil {
			t.Fatalf("stream: %v\n%s", err, srv.errText())
		}
		u, ok := ev.(*a2a.TaskStatusUpdateEvent)
		if !ok {
			continue
		}
		last = u.Status.State
		if u.Status.Message == nil {
			continue
		}
		for _, p := range u.Status.Message.Parts {
			tc, ok := p.Data().(map[string]any)
			if !ok || tc["tool_name"] != "weather" || tc["status"] != "SUCCEEDED" {
				continue
			}
			out, _ := tc["output"].(map[string]any)
			got, _ = out["structured_data"].(map[string]any)
		}
	}
	if want := map[string]any{"city": "Oslo", "temp_c": -3.5}; !reflect.DeepEqual(got, want) {
		t.Errorf("structured_data %v, want %v\n%s", got, want, srv.errText())
	}
	if last != a2a.TaskStateCompleted {
		t.Errorf("task ended %s", last)
	}
}
