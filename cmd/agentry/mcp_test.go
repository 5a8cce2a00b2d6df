package main

import (
	"testing"
	"time"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/internal/oauthtest"
	"github.com/agentry-dev/agentry/mcpauth"
)

func TestMCPList(t *testing.T) {
	secure := oauthtest.New(t, oauthtest.Options{})
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	s := &config.Settings{Home: t.TempDir(), MCPServers: map[string]config.MCPServerSettings{
		"local":      {Command: "srv", Args: []string{"-x"}},
		"secure":     {URL: secure.MCPURL},
		"configured": {HTTPURL: "https://example.invalid/mcp", OAuth: &config.MCPOAuthSettings{ClientID: "c"}},
		"stored":     {URL: "https://stored.invalid/mcp"},
		"bad":        {URL: "https://bad.invalid/mcp", AuthProviderType: "google_credentials"},
	}}
	store := mcpauth.NewStore(s.MCPOAuthDir())
	if err := store.Save(&mcpauth.Token{Server: "stored", Token: mcpauth.TokenValue{AccessToken: "x", RefreshToken: "r", ExpiresAt: now.Add(-time.Minute).UnixMilli()}, TokenURL: "https://as/token"}); err != nil {
		t.Fatal(err)
	}
	got := map[string]mcpListing{}
	for _, l := range mcpList(t.Context(), s, true, now) {
		got[l.Name] = l
	}
	for name, want := range map[string]struct{ transport, needs, token string }{
		"local":      {"stdio", "no", "-"},
		"secure":     {"http", "yes", "none"},
		"configured": {"http", "yes", "none"},
		"stored":     {"http", "yes", "expired (refreshable)"},
		"bad":        {"http", "yes", "none"},
	} {
		l := got[name]
		if l.Transport != want.transport || l.NeedsAuth != want.needs || tokenText(l.Token) != want.token {
			t.Errorf("%s: %+v (token %q), want %+v", name, l, tokenText(l.Token), want)
		}
	}
	if got["bad"].Error == "" || got["local"].Command != "srv -x" {
		t.Errorf("bad: %+v; local: %+v", got["bad"], got["local"])
	}
	if l := mcpList(t.Context(), s, false, now); l[len(l)-2].Name != "secure" || l[len(l)-2].NeedsAuth != "unknown" {
		t.Errorf("without the probe: %+v", l[len(l)-2])
	}
}
