package protocol_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/adk/v2/session"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/agentry-dev/agentry/compose"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/protocol"
	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/protocol/guard"
	"github.com/agentry-dev/agentry/runtime"
)

const testToken = "test-token-0123456789"

// harness is an agentry A2A server on loopback, behind the guard, whose
// sessions replay a scripted model.
type harness struct {
	t        testing.TB
	srv      *protocol.Server
	http     *httptest.Server
	url      string
	settings *config.Settings
	// resolver, when set, gives every session its model.
	resolver runtime.ModelResolver
	// store, when set, stores every session; sessions counts the
	// sessions started.
	store    session.Service
	sessions atomic.Int32
}

type harnessOption func(*protocol.Config, *config.Settings)

// newHarness serves sessions whose model replays lines (one JSON model
// response per line, gemini-cli's --fake-responses format).
func newHarness(t testing.TB, lines []string, opts ...harnessOption) *harness {
	t.Helper()
	s := config.Defaults()
	s.Workspace = t.TempDir()
	s.Home = filepath.Join(t.TempDir(), ".agentry")
	s.Session.Store = config.SessionStoreMemory
	// A trusted workspace whose user allows saved rules: confirmations
	// offer every "always" answer (tests that need less unset these).
	s.Trusted = true
	s.Security.EnablePermanentToolApproval = true
	replay := filepath.Join(t.TempDir(), "model.jsonl")
	if err := os.WriteFile(replay, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Model.Name = "replay:" + replay
	h := &harness{t: t, settings: &s}
	h.http = httptest.NewUnstartedServer(nil)
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	h.http.Config.Protocols = &p
	h.url = "http://" + h.http.Listener.Addr().String()
	cfg := protocol.Config{
		NewSession: func(ctx context.Context, r protocol.SessionRequest) (protocol.Session, error) {
			ws := *h.settings
			ws.Workspace = r.Workspace
			h.sessions.Add(1)
			return compose.FromSettings(ctx, &ws, compose.Options{SessionID: r.ContextID, Approver: r.Approver, Resolver: h.resolver, SessionService: h.store})
		},
		Workspace: s.Workspace,
		Model:     s.Model.Name,
		BaseURL:   h.url,
		Version:   "test",
		Logger:    slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		o(&cfg, &s)
	}
	srv, err := protocol.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.srv = srv
	if _, bench := t.(*testing.B); !bench {
		// Benchmarks measure the server without the check's second encoding.
		protocol.CheckWire(srv, func(err error) { t.Error(err) })
	}
	g, err := guard.New(guard.Config{
		Token:        testToken,
		AllowedHosts: []string{h.http.Listener.Addr().String()},
		PublicPaths:  []string{"/.well-known/agent-card.json"},
		MaxBodyBytes: 1 << 20,
		Logger:       slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	h.http.Config.Handler = g.Wrap(srv.Handler())
	h.http.Start()
	t.Cleanup(func() {
		h.http.CloseClientConnections()
		h.http.Close()
		_ = srv.Close()
	})
	return h
}

// authTransport adds the bearer token to every request and, unless
// plain, asks for the development-tool extension.
type authTransport struct {
	base  http.RoundTripper
	plain bool
}

func (a authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+testToken)
	if !a.plain {
		r.Header.Add("A2A-Extensions", devtool.URI)
	}
	return a.base.RoundTrip(r)
}

func (h *harness) httpClient() *http.Client {
	return &http.Client{Transport: authTransport{base: http.DefaultTransport}}
}

// tokenCreds puts the token (and, unless plain, the extension) on gRPC
// calls.
type tokenCreds struct{ plain bool }

func (c tokenCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	if c.plain {
		return map[string]string{"authorization": "Bearer " + testToken}, nil
	}
	return map[string]string{"authorization": "Bearer " + testToken, "a2a-extensions": devtool.URI}, nil
}
func (tokenCreds) RequireTransportSecurity() bool { return false }

// client returns an a2a-go client bound to one binding: "jsonrpc",
// "rest", "grpc" or "v0.3" (the 0.3 JSON-RPC binding). It activates the
// development-tool extension on every call.
func (h *harness) client(binding string) *a2aclient.Client {
	h.t.Helper()
	return h.newClient(binding, false)
}

// plainClient is client without the extension: a generic A2A client.
func (h *harness) plainClient(binding string) *a2aclient.Client {
	h.t.Helper()
	return h.newClient(binding, true)
}

func (h *harness) newClient(binding string, plain bool) *a2aclient.Client {
	h.t.Helper()
	hc := &http.Client{Transport: authTransport{base: http.DefaultTransport, plain: plain}}
	var iface *a2a.AgentInterface
	var opts []a2aclient.FactoryOption
	switch binding {
	case "jsonrpc":
		iface = a2a.NewAgentInterface(h.url+"/", a2a.TransportProtocolJSONRPC)
		opts = append(opts, a2aclient.WithJSONRPCTransport(hc))
	case "rest":
		iface = a2a.NewAgentInterface(h.url+protocol.RESTPath, a2a.TransportProtocolHTTPJSON)
		opts = append(opts, a2aclient.WithRESTTransport(hc))
	case "grpc":
		iface = a2a.NewAgentInterface(strings.TrimPrefix(h.url, "http://"), a2a.TransportProtocolGRPC)
		opts = append(opts, a2aclient.WithTransport(a2a.TransportProtocolGRPC, a2aclient.TransportFactoryFn(
			func(_ context.Context, _ *a2a.AgentCard, iface *a2a.AgentInterface) (a2aclient.Transport, error) {
				conn, err := grpc.NewClient(iface.URL, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(tokenCreds{plain: plain}))
				if err != nil {
					return nil, err
				}
				return a2agrpc.NewGRPCTransport(conn), nil
			})))
	case "v0.3":
		iface = &a2a.AgentInterface{URL: h.url + "/", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "0.3.0"}
		opts = append(opts, a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: hc}))
	default:
		h.t.Fatalf("unknown binding %s", binding)
	}
	c, err := a2aclient.NewFromEndpoints(h.t.Context(), []*a2a.AgentInterface{iface}, opts...)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// textTurn is a replayed model response of text chunks.
func textTurn(chunks ...string) string {
	var parts []string
	for i, c := range chunks {
		fr := ""
		if i == len(chunks)-1 {
			fr = `,"finishReason":"STOP"`
		}
		b, _ := json.Marshal(c)
		parts = append(parts, fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[{"text":%s}]}%s}]}`, b, fr))
	}
	return `{"method":"generateContentStream","response":[` + strings.Join(parts, ",") + `]}`
}

// callTurn is a replayed model response calling one tool.
func callTurn(text, name string, args map[string]any) string {
	a, _ := json.Marshal(args)
	t, _ := json.Marshal(text)
	return fmt.Sprintf(`{"method":"generateContentStream","response":[{"candidates":[{"content":{"role":"model","parts":[{"text":%s},{"functionCall":{"name":%q,"args":%s}}]},"finishReason":"STOP"}]}]}`, t, name, a)
}

// userMessage is a message with text and, optionally, the extension's
// agent settings.
func userMessage(text string, workspace string) *a2a.Message {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	if workspace != "" {
		m.Metadata = map[string]any{devtool.URI: map[string]any{"workspace_path": workspace}}
	}
	return m
}

// confirm is a ToolCallConfirmation message for a task.
func confirm(task *a2a.Task, callID, option string) *a2a.Message {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"tool_call_id": callID, "selected_option_id": option}))
	m.TaskID, m.ContextID = task.ID, task.ContextID
	return m
}

// collect streams a message and returns its events.
func collect(t *testing.T, c *a2aclient.Client, m *a2a.Message) []a2a.Event {
	t.Helper()
	var out []a2a.Event
	for ev, err := range c.SendStreamingMessage(t.Context(), &a2a.SendMessageRequest{Message: m}) {
		if err != nil {
			t.Fatalf("stream: %v (after %d events: %s)", err, len(out), describe(out))
		}
		out = append(out, ev)
	}
	return out
}

// describe summarises events: Task(state), or kind:state plus the tool
// call's status.
func describe(evs []a2a.Event) string {
	var parts []string
	for _, ev := range evs {
		parts = append(parts, describeOne(ev))
	}
	return strings.Join(parts, " ")
}

func describeOne(ev a2a.Event) string {
	switch e := ev.(type) {
	case *a2a.Task:
		return "Task(" + state(e.Status.State) + ")"
	case *a2a.TaskStatusUpdateEvent:
		dev, _ := devtool.EventFrom(e.Metadata)
		s := string(dev.Kind) + ":" + state(e.Status.State)
		if tc := toolCallOf(e); tc != nil {
			s += "/" + string(tc.Status)
			if tc.ConfirmationRequest != nil {
				s += "+confirm"
			}
		}
		return s
	}
	return fmt.Sprintf("%T", ev)
}

// toolCallOf returns the ToolCall a status update carries, if any.
func toolCallOf(e *a2a.TaskStatusUpdateEvent) *devtool.ToolCall {
	if e.Status.Message == nil {
		return nil
	}
	for _, p := range e.Status.Message.Parts {
		if d, ok := p.Content.(a2a.Data); ok {
			if m, ok := d.Value.(map[string]any); ok && m["tool_call_id"] != nil {
				tc, err := devtool.ToolCallFrom(m)
				if err == nil {
					return &tc
				}
			}
		}
	}
	return nil
}

// textOf concatenates the TEXT_CONTENT of events.
func textOf(evs []a2a.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		if e, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
			if dev, _ := devtool.EventFrom(e.Metadata); dev.Kind == devtool.KindTextContent && e.Status.Message != nil {
				for _, p := range e.Status.Message.Parts {
					b.WriteString(p.Text())
				}
			}
		}
	}
	return b.String()
}

// state names a task state as A2A 0.3 spelled it: input-required.
func state(s a2a.TaskState) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_")), "_", "-")
}
