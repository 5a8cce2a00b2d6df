package protocol_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/agentry-dev/agentry/protocol"
)

// cardJSON GETs the served agent card.
func (h *harness) cardJSON() []byte {
	h.t.Helper()
	resp, err := http.Get(h.url + "/.well-known/agent-card.json")
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		h.t.Fatalf("agent card: HTTP %d %v\n%s", resp.StatusCode, err, b)
	}
	return b
}

// TestCardSecurityScheme: the bearer scheme is A2A 1.0's
// httpAuthSecurityScheme member, and the 0.3 fields stay beside it, so
// a2a-go's 1.0 parser, its 0.3 parser and clients that read 0.3's "type"
// (gemini-cli 0.61.0's auth check) all find it.
// Mirrors the A2A TCK's test_security_scheme_structure_compliance and
// test_authentication_scheme_validation (tests/mandatory).
func TestCardSecurityScheme(t *testing.T) {
	h := newHarness(t, nil)
	body := h.cardJSON()
	var raw struct {
		SecuritySchemes map[string]map[string]json.RawMessage `json:"securitySchemes"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	bearer := raw.SecuritySchemes["bearer"]
	var v1 a2a.HTTPAuthSecurityScheme
	if err := json.Unmarshal(bearer["httpAuthSecurityScheme"], &v1); err != nil || v1.Scheme != "Bearer" {
		t.Errorf("securitySchemes.bearer has no 1.0 httpAuthSecurityScheme member with scheme Bearer (%v): %s", err, bearer)
	}
	if string(bearer["type"]) != `"http"` || string(bearer["scheme"]) != `"Bearer"` {
		t.Errorf("securitySchemes.bearer lost 0.3's type/scheme: %s", bearer)
	}
	if _, ok := bearer["http"]; ok {
		t.Errorf("securitySchemes.bearer carries a member neither version defines (\"http\"): %s", bearer)
	}

	for name, parse := range map[string]agentcard.Parser{"1.0": agentcard.DefaultCardParser, "0.3": a2av0.NewAgentCardParser()} {
		card, err := parse(body)
		if err != nil {
			t.Errorf("a2a-go's %s card parser: %v", name, err)
			continue
		}
		s, ok := card.SecuritySchemes["bearer"].(a2a.HTTPAuthSecurityScheme)
		if !ok || s.Scheme != "Bearer" {
			t.Errorf("a2a-go's %s card parser: bearer scheme %#v", name, card.SecuritySchemes["bearer"])
		}
		if len(card.SecurityRequirements) != 1 || card.SecurityRequirements[0]["bearer"] == nil {
			t.Errorf("a2a-go's %s card parser: security requirements %v", name, card.SecurityRequirements)
		}
	}
}

// TestCardGRPCInterface: the gRPC interface's URL is absolute with a
// scheme, and a2a-go's own gRPC client, built from the card alone, dials
// it (the call reaches the server: an unknown task is NOT_FOUND).
// Mirrors the A2A TCK's test_transport_compliance_validation
// (tests/mandatory/protocol), whose gRPC client reads the card's URL.
func TestCardGRPCInterface(t *testing.T) {
	h := newHarness(t, nil)
	card, err := agentcard.DefaultCardParser(h.cardJSON())
	if err != nil {
		t.Fatal(err)
	}
	var iface *a2a.AgentInterface
	for _, i := range card.SupportedInterfaces {
		if i.ProtocolBinding == a2a.TransportProtocolGRPC {
			iface = i
		}
	}
	if iface == nil {
		t.Fatalf("no gRPC interface: %v", card.SupportedInterfaces)
	}
	u, err := url.Parse(iface.URL)
	if err != nil || !u.IsAbs() {
		t.Fatalf("gRPC interface URL %q is not absolute with a scheme (%v)", iface.URL, err)
	}
	// Only the gRPC interface: the client must dial the card's URL.
	card.SupportedInterfaces = []*a2a.AgentInterface{iface}
	c, err := a2aclient.NewFromCard(t.Context(), card,
		a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(tokenCreds{})))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Destroy()
	if _, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "no-such-task"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("GetTask over the card's gRPC URL %s: %v, want task not found", iface.URL, err)
	}
}

// TestCardGolden holds the card's interfaces, security and capabilities
// (bidiStreaming among them, for SendLiveMessage) on the wire, in the
// union of A2A 1.0 and 0.3 a2a-go serves.
func TestCardGolden(t *testing.T) {
	srv, err := protocol.New(protocol.Config{
		NewSession: func(context.Context, protocol.SessionRequest) (protocol.Session, error) { return nil, nil },
		Workspace:  t.TempDir(), BaseURL: "http://127.0.0.1:41242", Version: "test",
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/.well-known/agent-card.json", nil))
	var all map[string]json.RawMessage
	if err := json.Unmarshal(rec.Body.Bytes(), &all); err != nil {
		t.Fatalf("%v\n%s", err, rec.Body)
	}
	part := map[string]json.RawMessage{}
	for _, k := range []string{"supportedInterfaces", "url", "preferredTransport", "additionalInterfaces", "protocolVersion", "securitySchemes", "securityRequirements", "security", "capabilities"} {
		if v, ok := all[k]; ok {
			part[k] = v
		}
	}
	got, err := json.MarshalIndent(part, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "card.golden.json")
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
		t.Errorf("card differs from %s (go test -run CardGolden -update rewrites it):\n%s", golden, got)
	}
}
