// Command policymcp is a stdio MCP server for the policy parity test: the
// same binary serves gemini-cli and agentry. It has two tools, look
// (annotated readOnlyHint: true) and touch (readOnlyHint: false); neither
// changes anything, both answer "<tool> ran: <text>".
package main

import (
	"context"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type in struct {
	Text string `json:"text" jsonschema:"any text"`
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "policymcp", Version: "v0.0.1"}, nil)
	for _, t := range []struct {
		name     string
		readOnly bool
	}{{"look", true}, {"touch", false}} {
		name := t.name
		mcp.AddTool(s, &mcp.Tool{
			Name:        name,
			Description: "Answers with its text.",
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: t.readOnly},
		}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " ran: " + a.Text}}}, nil, nil
		})
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
