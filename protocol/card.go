package protocol

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/agentry-dev/agentry/protocol/devtool"
)

// agentCard builds the card: the three A2A 1.0 bindings on one port and
// the development-tool extension (required only if the server says so).
// The served JSON adds capabilities.bidiStreaming (newCardProducer).
func (s *Server) agentCard() *a2a.AgentCard {
	base := strings.TrimSuffix(s.cfg.BaseURL, "/")
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
			{URL: grpcURL(base), ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: a2a.Version},
			// The same endpoint speaks A2A 0.3 (method names with a
			// slash); a2a-go's union card gives 0.3 clients its URL.
			{URL: base + "/", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "0.3"},
			// The live session endpoint (docs/ws.md), last: clients pick
			// the first interface they speak, and none of the SDKs speaks
			// this one yet.
			{URL: wsURL(base), ProtocolBinding: WSBinding, ProtocolVersion: a2a.Version},
		},
		Capabilities: a2a.AgentCapabilities{
			Streaming:         true,
			PushNotifications: true,
			Extensions: []a2a.AgentExtension{{
				URI: devtool.URI, Description: devtool.Description, Required: s.cfg.RequireExtension,
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

// grpcURL is the gRPC interface's URL for a server at base: a gRPC target
// URI, dns:///host:port. It is absolute, as the card's URLs must be, and
// every gRPC library dials it as it is (a2a-go's client hands the URL to
// grpc.NewClient, which cannot dial http://host:port).
func grpcURL(base string) string {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return base
	}
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		host += ":" + port
	}
	return "dns:///" + host
}

// cardProducer serves the card in the union of A2A 1.0 and 0.3 that
// a2a-go's a2av0 producer writes, with each security scheme's 1.0 member
// (httpAuthSecurityScheme …) beside 0.3's fields: a2av0 writes a scheme in
// 0.3's shape only, which a2a-go's own 1.0 card parser refuses. The card
// is static, so its JSON is made once.
type cardProducer struct {
	card *a2a.AgentCard
	json []byte
}

var _ a2asrv.AgentCardJSONProducer = cardProducer{}

// cardProducer returns the producer of the served card. Should the union
// fail to build (a scheme a2a-go cannot encode), a2av0's card is served.
func (s *Server) cardProducer() a2asrv.AgentCardProducer {
	p, err := newCardProducer(s.card)
	if err != nil {
		s.log.Error("a2a: cannot add the A2A 1.0 security schemes to the agent card", "err", err)
		return a2av0.NewStaticAgentCardProducer(s.card)
	}
	return p
}

func newCardProducer(card *a2a.AgentCard) (cardProducer, error) {
	union, err := a2av0.NewStaticAgentCardProducer(card).(a2asrv.AgentCardJSONProducer).CardJSON(context.Background())
	if err != nil {
		return cardProducer{}, err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(union, &doc); err != nil {
		return cardProducer{}, err
	}
	var schemes map[a2a.SecuritySchemeName]map[string]json.RawMessage
	if err := json.Unmarshal(doc["securitySchemes"], &schemes); len(doc["securitySchemes"]) > 0 && err != nil {
		return cardProducer{}, err
	}
	for name, compat := range schemes {
		v1JSON, err := json.Marshal(a2a.NamedSecuritySchemes{name: card.SecuritySchemes[name]})
		if err != nil {
			return cardProducer{}, fmt.Errorf("security scheme %s: %w", name, err)
		}
		var v1 map[a2a.SecuritySchemeName]map[string]json.RawMessage
		if err := json.Unmarshal(v1JSON, &v1); err != nil {
			return cardProducer{}, err
		}
		// a2av0 nests a copy of the scheme under a member neither
		// version defines; the 1.0 member replaces it.
		for _, k := range []string{"apiKey", "http", "mutualTLS", "openIdConnect", "oauth2"} {
			delete(compat, k)
		}
		for k, v := range v1[name] {
			compat[k] = v
		}
	}
	if schemes != nil {
		if doc["securitySchemes"], err = json.Marshal(schemes); err != nil {
			return cardProducer{}, err
		}
	}
	// SendLiveMessage (docs/live.md): a capability of A2A's proposal that
	// a2a-go's AgentCapabilities does not have yet.
	var caps map[string]json.RawMessage
	if err := json.Unmarshal(doc["capabilities"], &caps); err != nil {
		return cardProducer{}, fmt.Errorf("capabilities: %w", err)
	}
	caps["bidiStreaming"] = json.RawMessage("true")
	if doc["capabilities"], err = json.Marshal(caps); err != nil {
		return cardProducer{}, err
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return cardProducer{}, err
	}
	return cardProducer{card: card, json: out}, nil
}

// Card implements a2asrv.AgentCardProducer.
func (p cardProducer) Card(context.Context) (*a2a.AgentCard, error) { return p.card, nil }

// CardJSON implements a2asrv.AgentCardJSONProducer.
func (p cardProducer) CardJSON(context.Context) ([]byte, error) { return p.json, nil }

// WSBinding names the live session endpoint's binding on the card, as
// @a2a-js/sdk's WebSocket transport names its own.
const WSBinding a2a.TransportProtocol = "WEBSOCKET"

// wsURL is the live session endpoint's URL for a server at base.
func wsURL(base string) string {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return base + WSPath
	}
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	default:
		u.Scheme = "ws"
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + WSPath
	return u.String()
}
