package compose

import (
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/mcpauth"
	"github.com/agentry-dev/agentry/mcptools"
)

// MCPOAuth returns the OAuth hook of the settings' HTTP MCP servers: each
// gets one mcpauth.Handler over the token store in s.MCPOAuthDir(), with
// prompt (nil when no one can open a browser).
func MCPOAuth(s *config.Settings, prompt mcpauth.Prompt, log *slog.Logger) mcptools.OAuthFunc {
	store := mcpauth.NewStore(s.MCPOAuthDir())
	// One handler per server for the Manager's life, so that a
	// reconnection knows the server had a token.
	var mu sync.Mutex
	handlers := map[string]*mcpauth.Handler{}
	return func(name string) auth.OAuthHandler {
		mu.Lock()
		defer mu.Unlock()
		if h := handlers[name]; h != nil {
			return h
		}
		h, err := MCPAuthHandler(s, store, name, prompt, log)
		if err != nil {
			if log == nil {
				log = slog.Default()
			}
			log.Warn("MCP OAuth unavailable", "mcp_server", name, "err", err)
			return nil
		}
		handlers[name] = h
		return h
	}
}

// MCPAuthHandler returns the mcpauth.Handler of the HTTP server named
// name in the settings.
func MCPAuthHandler(s *config.Settings, store *mcpauth.Store, name string, prompt mcpauth.Prompt, log *slog.Logger) (*mcpauth.Handler, error) {
	sc := s.MCPServers[name]
	u := sc.HTTPURL
	if u == "" {
		u = sc.URL
	}
	return mcpauth.New(mcpauth.Config{Server: name, URL: u, OAuth: sc.OAuth, Store: store, Prompt: prompt, Logger: log})
}
