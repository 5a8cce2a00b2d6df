package protocol

import (
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/protocol/devtool"
)

// agentCard builds the card: the three A2A 1.0 bindings on one port and
// the development-tool extension, required.
func (s *Server) agentCard() *a2a.AgentCard {
	base := strings.TrimSuffix(s.cfg.BaseURL, "/")
	hostPort := strings.TrimPrefix(strings.TrimPrefix(base, "http://"), "https://")
	desc := s.cfg.Description
	if desc == "" {
		desc = "agentry, a coding agent: it reads, searches and edits the files of a workspace and runs shell commands there, asking before it changes anything."
	}
	version := s.cfg.Version
	if version == "" {
		version = "dev"
	}
	return &a2a.AgentCard{
		Name:        s.cfg.Name,
		Description: desc,
		Version:     version,
		SupportedInterfaces: []*a2a.AgentInterface{
			{URL: base + "/", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version},
			{URL: base + RESTPath, ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: a2a.Version},
			{URL: hostPort, ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: a2a.Version},
			// The same endpoint speaks A2A 0.3 (method names with a
			// slash); a2a-go's union card gives 0.3 clients its URL.
			{URL: base + "/", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "0.3"},
		},
		Capabilities: a2a.AgentCapabilities{
			Streaming:         true,
			PushNotifications: true,
			Extensions: []a2a.AgentExtension{{
				URI: devtool.URI, Description: devtool.Description, Required: true,
			}},
		},
		DefaultInputModes:  []string{"text/plain", "application/json"},
		DefaultOutputModes: []string{"text/plain", "application/json"},
		Skills: []a2a.AgentSkill{{
			ID: "code_generation", Name: "Code generation",
			Description: "Writes, edits and explains code in the workspace, runs commands and tests, and answers questions about the project.",
			Tags:        []string{"code", "development", "shell"},
			Examples:    []string{"Add a unit test for the parser", "Why does `go vet` fail?"},
		}},
		SecuritySchemes: a2a.NamedSecuritySchemes{
			"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", Description: "The token agentry serve prints at start, or security.a2a.token / AGENTRY_A2A_TOKEN"},
		},
		SecurityRequirements: a2a.SecurityRequirementsOptions{{"bearer": {}}},
	}
}
