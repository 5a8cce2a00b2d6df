package compose

import (
	"log/slog"
	"maps"
	"slices"
	"testing"

	"github.com/agentry-dev/agentry/config"
)

// TestConnectedServers: mcp.excluded servers are not connected, and with
// mcp.allowed set only the servers it names are (gemini-cli's
// isBlockedBySettings).
func TestConnectedServers(t *testing.T) {
	servers := map[string]config.MCPServerSettings{"a": {Command: "a"}, "b": {Command: "b"}, "c": {Command: "c"}}
	tests := []struct {
		name              string
		allowed, excluded []string
		want              []string
	}{
		{"neither", nil, nil, []string{"a", "b", "c"}},
		{"excluded", nil, []string{"b"}, []string{"a", "c"}},
		{"allowed", []string{"a", "c"}, nil, []string{"a", "c"}},
		{"both", []string{"a", "c"}, []string{"c"}, []string{"a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := config.Defaults()
			s.MCPServers = servers
			s.MCP.Allowed, s.MCP.Excluded = tc.allowed, tc.excluded
			got := slices.Sorted(maps.Keys(connectedServers(&s, slog.New(slog.DiscardHandler))))
			if !slices.Equal(got, tc.want) {
				t.Errorf("connected %q, want %q", got, tc.want)
			}
		})
	}
}
