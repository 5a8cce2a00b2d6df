//go:build unix

package mcptools

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/internal/oauthtest"
	"github.com/agentry-dev/agentry/mcpauth"
)

// TestOAuthHook connects to a server behind OAuth through Config.OAuth:
// without a token the server is left out with the error naming the
// command; after the flow its tool runs.
func TestOAuthHook(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	store := mcpauth.NewStore(filepath.Join(t.TempDir(), "mcp-oauth"))
	servers := map[string]ServerConfig{"secure": {URL: srv.MCPURL}}
	hook := func(prompt mcpauth.Prompt) OAuthFunc {
		return func(name string) auth.OAuthHandler {
			h, err := mcpauth.New(mcpauth.Config{Server: name, URL: servers[name].URL, OAuth: &config.MCPOAuthSettings{Enabled: true}, Store: store, Prompt: prompt})
			if err != nil {
				t.Errorf("mcpauth.New: %v", err)
				return nil
			}
			return h
		}
	}
	m, err := New(Config{Servers: servers, Logger: testLogger(), OAuth: hook(nil)})
	if err != nil {
		t.Fatal(err)
	}
	_, errs := m.Tools(t.Context())
	m.Close()
	if len(errs) != 1 || !errors.Is(errs[0], mcpauth.ErrAuthRequired) {
		t.Fatalf("headless without a token: %v", errs)
	}

	browse := func(ctx context.Context, _, authURL string) error {
		_, _, err := oauthtest.Browse(ctx, authURL)
		return err
	}
	m, err = New(Config{Servers: servers, Logger: testLogger(), OAuth: hook(browse)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	ts := listTools(t, m)
	if res := mustRun(t, get(t, ts, oauthtest.ToolName), nil); res.LLMContent != oauthtest.ToolAnswer {
		t.Fatalf("tool answered %q", res.LLMContent)
	}
}
