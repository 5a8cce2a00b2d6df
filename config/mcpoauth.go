package config

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
)

// AuthProviderDynamicDiscovery is the one authProviderType agentry
// supports: OAuth configured from what the server and its authorization
// server publish (gemini-cli's AuthProviderType.DYNAMIC_DISCOVERY).
const AuthProviderDynamicDiscovery = "dynamic_discovery"

// MCPOAuthSettings are gemini-cli's mcpServers.<name>.oauth object (its
// MCPOAuthConfig, 0.61). Every field is optional: without endpoints the
// authorization server is discovered from the server's 401, and without a
// client id the client registers itself where the authorization server
// offers dynamic client registration.
type MCPOAuthSettings struct {
	// Enabled lets a session walk the browser flow by itself when the
	// server answers 401 and no stored token works (as gemini-cli starts
	// its automatic OAuth only for servers with oauth.enabled); without
	// it, `agentry mcp auth NAME` does.
	Enabled bool `json:"enabled,omitempty"`
	// ClientID and ClientSecret are a client registered beforehand with
	// the authorization server; ClientSecret needs ClientID.
	ClientID     string `json:"clientId,omitempty"`
	ClientSecret string `json:"clientSecret,omitempty"`
	// AuthorizationURL and TokenURL, set together, skip discovery.
	AuthorizationURL string `json:"authorizationUrl,omitempty"`
	TokenURL         string `json:"tokenUrl,omitempty"`
	// Issuer is the authorization server's issuer identifier, checked
	// against the iss parameter of the authorization response (RFC 9207)
	// when endpoints are configured.
	Issuer string `json:"issuer,omitempty"`
	// RegistrationURL is the dynamic client registration endpoint used
	// with configured endpoints when ClientID is empty.
	RegistrationURL string `json:"registrationUrl,omitempty"`
	// Scopes are requested instead of the ones the server names.
	Scopes []string `json:"scopes,omitempty"`
	// Audiences are sent as the audience parameter (space-separated) of
	// the authorization, token and refresh requests.
	Audiences []string `json:"audiences,omitempty"`
	// RedirectURI is the loopback address the browser is sent back to,
	// http://127.0.0.1:PORT/PATH or http://localhost:PORT/PATH; empty
	// means http://127.0.0.1:<a free port>/oauth/callback.
	RedirectURI string `json:"redirectUri,omitempty"`
	// TokenParamName is accepted for gemini-cli's settings; gemini-cli
	// 0.61 does not use it either (tokens are sent in the Authorization
	// header).
	TokenParamName string `json:"tokenParamName,omitempty"`
}

// MCPOAuthDir returns the directory of the MCP servers' stored OAuth
// tokens, <Home>/mcp-oauth.
func (s *Settings) MCPOAuthDir() string {
	return filepath.Join(s.Home, "mcp-oauth")
}

// validateAuth checks the oauth object and authProviderType.
func (c MCPServerSettings) validateAuth(name string) error {
	switch c.AuthProviderType {
	case "", AuthProviderDynamicDiscovery:
	case "google_credentials", "service_account_impersonation":
		return fmt.Errorf("mcp server %q: authProviderType %q is not supported by agentry (only %q)", name, c.AuthProviderType, AuthProviderDynamicDiscovery)
	default:
		return fmt.Errorf("mcp server %q: authProviderType %q is unknown (only %q is supported)", name, c.AuthProviderType, AuthProviderDynamicDiscovery)
	}
	if c.Command != "" && (c.OAuth != nil || c.AuthProviderType != "") {
		return fmt.Errorf("mcp server %q: oauth and authProviderType need url or httpUrl", name)
	}
	o := c.OAuth
	if o == nil {
		return nil
	}
	if (o.AuthorizationURL == "") != (o.TokenURL == "") {
		return fmt.Errorf("mcp server %q: oauth.authorizationUrl and oauth.tokenUrl must be set together", name)
	}
	if o.ClientSecret != "" && o.ClientID == "" {
		return fmt.Errorf("mcp server %q: oauth.clientSecret needs oauth.clientId", name)
	}
	for _, f := range []struct{ key, v string }{
		{"authorizationUrl", o.AuthorizationURL}, {"tokenUrl", o.TokenURL},
		{"registrationUrl", o.RegistrationURL}, {"issuer", o.Issuer},
	} {
		if f.v == "" {
			continue
		}
		if err := checkOAuthURL(f.v); err != nil {
			return fmt.Errorf("mcp server %q: oauth.%s: %w", name, f.key, err)
		}
	}
	if o.RedirectURI != "" {
		u, err := url.Parse(o.RedirectURI)
		if err != nil || u.Scheme != "http" || !IsLoopbackHost(u.Hostname()) || u.Port() == "" {
			return fmt.Errorf("mcp server %q: oauth.redirectUri %q must be http://127.0.0.1:PORT/PATH or http://localhost:PORT/PATH (agentry listens on the loopback interface)", name, o.RedirectURI)
		}
	}
	return nil
}

// checkOAuthURL accepts an absolute https URL, or http on a loopback host
// (gemini-cli's validateOAuthEndpointUrl).
func checkOAuthURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", s)
	}
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && IsLoopbackHost(u.Hostname()):
		return nil
	case u.Scheme == "http":
		return fmt.Errorf("%q: plain http is allowed only on localhost; use https", s)
	}
	return fmt.Errorf("%q: only https (or http on localhost) is supported", s)
}

// IsLoopbackHost reports whether host (a URL's Hostname) is localhost or a
// loopback address.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
