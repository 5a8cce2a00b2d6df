package mcptools

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/agentry-dev/agentry/mcpauth"
)

// OAuthFunc returns the OAuth handler of the HTTP server named server, or
// nil for none. It must not return an interface holding a nil pointer.
type OAuthFunc func(server string) auth.OAuthHandler

// oauthHandler is the server's OAuth handler for a new connection, or
// nil: the streamable transport's OAuthHandler.
func (s *server) oauthHandler() auth.OAuthHandler {
	if s.m.oauth == nil || s.cfg.Command != "" {
		return nil
	}
	return s.m.oauth(s.name)
}

// authTransport wraps base with the server's OAuth handler for transports
// without an OAuth hook of their own (the SDK's SSE client): the token on
// every request, the flow on a 401 and one retry.
func (s *server) authTransport(base http.RoundTripper) http.RoundTripper {
	h := s.oauthHandler()
	if h == nil {
		return base
	}
	return mcpauth.RoundTripper(h, base)
}
