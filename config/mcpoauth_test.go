package config_test

import (
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/config"
)

func TestMCPOAuthValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    config.MCPServerSettings
		want string // "" means valid
	}{
		{"discovery", config.MCPServerSettings{URL: "https://x/mcp", OAuth: &config.MCPOAuthSettings{Enabled: true}}, ""},
		{"dynamic_discovery", config.MCPServerSettings{URL: "https://x/mcp", AuthProviderType: "dynamic_discovery"}, ""},
		{"google", config.MCPServerSettings{URL: "https://x/mcp", AuthProviderType: "google_credentials"}, `authProviderType "google_credentials" is not supported by agentry`},
		{"impersonation", config.MCPServerSettings{URL: "https://x/mcp", AuthProviderType: "service_account_impersonation"}, "is not supported"},
		{"unknown provider", config.MCPServerSettings{URL: "https://x/mcp", AuthProviderType: "magic"}, `authProviderType "magic" is unknown`},
		{"stdio", config.MCPServerSettings{Command: "x", OAuth: &config.MCPOAuthSettings{}}, "oauth and authProviderType need url or httpUrl"},
		{"endpoints", config.MCPServerSettings{HTTPURL: "https://x/mcp", OAuth: &config.MCPOAuthSettings{ClientID: "c", AuthorizationURL: "https://as/authorize", TokenURL: "https://as/token"}}, ""},
		{"one endpoint", config.MCPServerSettings{URL: "https://x/mcp", OAuth: &config.MCPOAuthSettings{AuthorizationURL: "https://as/authorize"}}, "must be set together"},
		{"secret alone", config.MCPServerSettings{URL: "https://x/mcp", OAuth: &config.MCPOAuthSettings{ClientSecret: "s"}}, "clientSecret needs oauth.clientId"},
		{"plain http", config.MCPServerSettings{URL: "https://x/mcp", OAuth: &config.MCPOAuthSettings{AuthorizationURL: "http://as/authorize", TokenURL: "https://as/token"}}, "plain http is allowed only on localhost"},
		{"loopback http", config.MCPServerSettings{URL: "http://127.0.0.1/mcp", OAuth: &config.MCPOAuthSettings{AuthorizationURL: "http://localhost:9/a", TokenURL: "http://127.0.0.1:9/t"}}, ""},
		{"relative", config.MCPServerSettings{URL: "https://x/mcp", OAuth: &config.MCPOAuthSettings{TokenURL: "/token", AuthorizationURL: "/a"}}, "not an absolute URL"},
		{"redirect loopback", config.MCPServerSettings{URL: "https://x/mcp", OAuth: &config.MCPOAuthSettings{RedirectURI: "http://localhost:7777/oauth/callback"}}, ""},
		{"redirect remote", config.MCPServerSettings{URL: "https://x/mcp", OAuth: &config.MCPOAuthSettings{RedirectURI: "https://example.com/cb"}}, "oauth.redirectUri"},
		{"redirect no port", config.MCPServerSettings{URL: "https://x/mcp", OAuth: &config.MCPOAuthSettings{RedirectURI: "http://127.0.0.1/cb"}}, "oauth.redirectUri"},
		{"tokenParamName accepted", config.MCPServerSettings{URL: "https://x/mcp", OAuth: &config.MCPOAuthSettings{TokenParamName: "access_token"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s.Validate("srv")
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"srv"`)):
				t.Fatalf("got %v, want an error naming the server and containing %q", err, tc.want)
			}
		})
	}
}
