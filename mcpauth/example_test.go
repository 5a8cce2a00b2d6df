package mcpauth_test

import (
	"context"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/mcpauth"
)

// A Handler is the OAuth handler of the SDK's streamable transport: it
// sends the stored token and walks the browser flow on a 401.
func ExampleNew() {
	h, err := mcpauth.New(mcpauth.Config{
		Server: "github",
		URL:    "https://api.example.com/mcp",
		OAuth:  &config.MCPOAuthSettings{Enabled: true},
		Store:  mcpauth.NewStore(os.ExpandEnv("$HOME/.agentry/mcp-oauth")),
		Prompt: func(_ context.Context, server, authURL string) error {
			_, err := fmt.Fprintf(os.Stderr, "Open this URL to authorize %s:\n%s\n", server, authURL)
			return err
		},
	})
	if err != nil {
		panic(err)
	}
	_ = &mcp.StreamableClientTransport{Endpoint: "https://api.example.com/mcp", OAuthHandler: h}
}
