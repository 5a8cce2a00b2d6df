package a2acli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	a2alog "github.com/a2aproject/a2a-go/v2/log"
)

// cardTimeout bounds the agent card request.
const cardTimeout = 30 * time.Second

// bindings are the card's protocol bindings of the transports that name
// one.
var bindings = map[string]a2a.TransportProtocol{
	TransportJSONRPC: a2a.TransportProtocolJSONRPC,
	TransportREST:    a2a.TransportProtocolHTTPJSON,
	TransportGRPC:    a2a.TransportProtocolGRPC,
	TransportLive:    a2a.TransportProtocolGRPC,
	TransportWS:      WSBinding,
}

// agent is the agent Config.URL names: its card, or, for a ws:// URL,
// the endpoint to dial.
type agent struct {
	// base is the agent's base URL: Config.URL without the card's path.
	base string
	// card and cardJSON are the agent card, nil for a ws:// URL.
	card     *a2a.AgentCard
	cardJSON []byte
	// wsURL is a ws:// or wss:// Config.URL.
	wsURL string
}

// locate checks Config.URL. A ws:// URL is dialled as it is (its
// transport must be ws or auto); an http(s):// one is the agent's base URL
// or its card's URL, a path ending in .json.
func locate(cfg *Config) (agent, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || u.Host == "" {
		return agent{}, &UsageError{fmt.Sprintf("%q is not an agent's URL: give its base URL (http://127.0.0.1:41242) or its agent card's URL", cfg.URL)}
	}
	for _, k := range []string{"token", "access_token"} {
		if u.Query().Has(k) {
			return agent{}, &UsageError{fmt.Sprintf("the URL carries a %s; URLs end up in logs: give the token with --token or AGENTRY_A2A_TOKEN instead", k)}
		}
	}
	if u.User != nil {
		return agent{}, &UsageError{"the URL carries credentials; URLs end up in logs: give the token with --token or AGENTRY_A2A_TOKEN instead"}
	}
	switch u.Scheme {
	case "ws", "wss":
		if cfg.Transport != TransportAuto && cfg.Transport != TransportWS {
			return agent{}, &UsageError{fmt.Sprintf("%s is a WebSocket URL, which only --transport ws dials; give the agent's http:// base URL for --transport %s", cfg.URL, cfg.Transport)}
		}
		if cfg.Plain {
			return agent{}, &UsageError{"--plain does not go with a ws:// URL: /ws always speaks the development-tool extension; give the agent's http:// base URL for plain A2A"}
		}
		cfg.Transport = TransportWS
		return agent{wsURL: cfg.URL}, nil
	case "http", "https":
	default:
		return agent{}, &UsageError{fmt.Sprintf("%q is not an http:// or https:// URL (nor ws:// with --transport ws): give the agent's base URL or its card's URL", cfg.URL)}
	}
	base := strings.TrimSuffix(cfg.URL, "/")
	if strings.HasSuffix(u.Path, ".json") {
		base = (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
	}
	return agent{base: base}, nil
}

// readCard reads the agent card from Config.URL with a2a-go's resolver;
// v1.0 and v0.3 cards both parse.
func (a *agent) readCard(ctx context.Context, cfg *Config, hc *http.Client) error {
	u, _ := url.Parse(cfg.URL)
	base, opts := cfg.URL, []agentcard.ResolveOption(nil)
	if strings.HasSuffix(u.Path, ".json") {
		base = (&url.URL{Scheme: u.Scheme, Host: u.Host, RawQuery: u.RawQuery}).String()
		opts = append(opts, agentcard.WithPath(u.EscapedPath()))
	}
	// The v0.3 parser reads v1.0 cards too (supportedInterfaces wins).
	parse := a2av0.NewAgentCardParser()
	resolver := &agentcard.Resolver{Client: hc, CardParser: func(b []byte) (*a2a.AgentCard, error) {
		a.cardJSON = b
		return parse(b)
	}}
	ctx, cancel := context.WithTimeout(a2alog.AttachLogger(ctx, cfg.Logger), cardTimeout)
	defer cancel()
	card, err := resolver.Resolve(ctx, base, opts...)
	if err != nil {
		var status *agentcard.ErrStatusNotOK
		if errors.As(err, &status) {
			return fmt.Errorf("no agent card at %s (HTTP %s): give an A2A agent's base URL (e.g. http://127.0.0.1:41242) or its card's URL", cardURL(cfg.URL), status.Status)
		}
		return fmt.Errorf("cannot read the agent card at %s: %w; give an A2A agent's base URL (e.g. http://127.0.0.1:41242) or its card's URL", cardURL(cfg.URL), err)
	}
	if len(card.SupportedInterfaces) == 0 {
		return fmt.Errorf("the agent card at %s lists no interface to reach the agent", cardURL(cfg.URL))
	}
	a.card = card
	return nil
}

// cardURL is where readCard looks for the card of raw.
func cardURL(raw string) string {
	if strings.HasSuffix(strings.SplitN(raw, "?", 2)[0], ".json") {
		return raw
	}
	return strings.TrimSuffix(raw, "/") + "/.well-known/agent-card.json"
}

// interfaces returns the card's interfaces of binding.
func (a *agent) interfaces(binding a2a.TransportProtocol) []*a2a.AgentInterface {
	var out []*a2a.AgentInterface
	for _, i := range a.card.SupportedInterfaces {
		if i != nil && i.ProtocolBinding == binding {
			out = append(out, i)
		}
	}
	return out
}

// listed names the card's interfaces for an error message.
func (a *agent) listed() string {
	var names []string
	for _, i := range a.card.SupportedInterfaces {
		if i != nil {
			names = append(names, fmt.Sprintf("%s %s", i.ProtocolBinding, i.ProtocolVersion))
		}
	}
	return strings.Join(names, ", ")
}

// transportOf names the transport of a binding, "" for one the command
// does not speak.
func transportOf(binding a2a.TransportProtocol) string {
	for _, t := range []string{TransportJSONRPC, TransportREST, TransportGRPC, TransportWS} {
		if bindings[t] == binding {
			return t
		}
	}
	return ""
}

// noBinding is the error for a card without the transport's binding.
func (a *agent) noBinding(cfg *Config) error {
	var offer []string
	seen := map[string]bool{}
	for _, i := range a.card.SupportedInterfaces {
		if t := transportOf(i.ProtocolBinding); t != "" && !seen[t] {
			seen[t] = true
			offer = append(offer, t)
		}
	}
	hint := "it offers no binding this command speaks"
	if len(offer) > 0 {
		hint = "use --transport " + strings.Join(offer, " or ")
	}
	return fmt.Errorf("the agent card at %s has no %s interface (it lists %s): %s", cardURL(cfg.URL), bindings[cfg.Transport], a.listed(), hint)
}
