package ide_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentry-dev/agentry/ide"
	"github.com/agentry-dev/agentry/ide/idewire"
)

// testCompanion is an IDE companion for the tests, on the MCP Go SDK's server
// over real HTTP on loopback: the token checked on every request, the
// openDiff and closeDiff tools, and the contract's notifications sent on
// each session's standalone SSE stream. The SDK's server cannot send
// notifications of custom methods through its API, so the companion
// serves each session's StreamableServerTransport itself and writes them
// on the session's connection.
type testCompanion struct {
	t     testing.TB
	token string
	srv   *mcp.Server
	ln    net.Listener
	hs    *http.Server
	port  int

	// calls receives every openDiff and closeDiff call (buffered).
	calls chan toolCall

	mu        sync.Mutex
	sessions  map[string]*compSession
	tcp       map[net.Conn]bool
	auth      []string // the Authorization header of every request
	methods   []string // the JSON-RPC method of every POST, in order ("" for responses)
	openDiff  func(idewire.OpenDiffArgs) *mcp.CallToolResult
	closeDiff func(idewire.CloseDiffArgs) *mcp.CallToolResult
	killed    bool
	hang      bool // DELETE and closeDiff never answer
}

type compSession struct {
	transport *mcp.StreamableServerTransport
	ss        *mcp.ServerSession
	conn      mcp.Connection
}

type toolCall struct {
	tool  string
	open  idewire.OpenDiffArgs
	close idewire.CloseDiffArgs
}

// companionOpt configures a companion before it serves.
type companionOpt func(*testCompanion)

// withoutDiffTools serves no tools at all.
func withoutDiffTools() companionOpt { return func(c *testCompanion) { c.srv = nil } }

// hanging answers neither DELETE nor closeDiff: a companion that stopped
// responding but keeps its connections open.
func hanging() companionOpt { return func(c *testCompanion) { c.hang = true } }

// startCompanion serves a companion requiring token ("" requires none) on
// 127.0.0.1:0, stopped at the end of the test.
func startCompanion(t testing.TB, token string, opts ...companionOpt) *testCompanion {
	t.Helper()
	c := &testCompanion{
		t:        t,
		token:    token,
		calls:    make(chan toolCall, 64),
		sessions: make(map[string]*compSession),
		tcp:      make(map[net.Conn]bool),
		srv:      mcp.NewServer(&mcp.Implementation{Name: "test-companion", Version: "1"}, nil),
	}
	for _, o := range opts {
		o(c)
	}
	if c.srv == nil {
		c.srv = mcp.NewServer(&mcp.Implementation{Name: "test-companion", Version: "1"}, &mcp.ServerOptions{
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		})
	} else {
		schema := map[string]any{"type": "object"}
		c.srv.AddTool(&mcp.Tool{Name: idewire.ToolOpenDiff, InputSchema: schema}, c.onOpenDiff)
		c.srv.AddTool(&mcp.Tool{Name: idewire.ToolCloseDiff, InputSchema: schema}, c.onCloseDiff)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.ln = ln
	c.port = ln.Addr().(*net.TCPAddr).Port
	c.hs = &http.Server{Handler: c, ConnState: c.connState}
	go func() { _ = c.hs.Serve(ln) }()
	t.Cleanup(c.kill)
	return c
}

// endpoint is the companion's endpoint with its own token.
func (c *testCompanion) endpoint() ide.Endpoint {
	return ide.Endpoint{Port: c.port, Token: c.token, IDE: &idewire.IDEInfo{Name: "test", DisplayName: "Test IDE"}, File: "test-discovery.json"}
}

func (c *testCompanion) connState(conn net.Conn, s http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch s {
	case http.StateNew:
		c.tcp[conn] = true
	case http.StateClosed, http.StateHijacked:
		delete(c.tcp, conn)
	}
}

func (c *testCompanion) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	got := r.Header.Get("Authorization")
	var method string
	if r.Method == http.MethodPost {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var m struct{ Method string }
		_ = json.Unmarshal(body, &m)
		method = m.Method
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	c.mu.Lock()
	c.auth = append(c.auth, got)
	if r.Method == http.MethodPost {
		c.methods = append(c.methods, method)
	}
	c.mu.Unlock()
	if c.token != "" && got != "Bearer "+c.token {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	id := r.Header.Get("Mcp-Session-Id")
	c.mu.Lock()
	s := c.sessions[id]
	c.mu.Unlock()
	switch {
	case id == "" && r.Method == http.MethodPost:
		s = &compSession{transport: &mcp.StreamableServerTransport{SessionID: rand.Text()}}
		ss, err := c.srv.Connect(context.Background(), capture{s.transport, &s.conn}, nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		s.ss = ss
		c.mu.Lock()
		c.sessions[s.transport.SessionID] = s
		c.mu.Unlock()
	case s == nil:
		http.Error(w, "session not found", http.StatusNotFound)
		return
	case r.Method == http.MethodDelete && c.hang:
		<-r.Context().Done()
		return
	case r.Method == http.MethodDelete:
		c.mu.Lock()
		delete(c.sessions, id)
		c.mu.Unlock()
		_ = s.ss.Close()
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s.transport.ServeHTTP(w, r)
}

// capture keeps the connection a session's transport makes.
type capture struct {
	*mcp.StreamableServerTransport
	conn *mcp.Connection
}

func (c capture) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := c.StreamableServerTransport.Connect(ctx)
	*c.conn = conn
	return conn, err
}

func (c *testCompanion) onOpenDiff(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a idewire.OpenDiffArgs
	if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
		return nil, err
	}
	c.calls <- toolCall{tool: idewire.ToolOpenDiff, open: a}
	c.mu.Lock()
	f := c.openDiff
	c.mu.Unlock()
	if f != nil {
		return f(a), nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{}}, nil
}

func (c *testCompanion) onCloseDiff(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a idewire.CloseDiffArgs
	if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
		return nil, err
	}
	c.calls <- toolCall{tool: idewire.ToolCloseDiff, close: a}
	if c.hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	c.mu.Lock()
	f := c.closeDiff
	c.mu.Unlock()
	if f != nil {
		return f(a), nil
	}
	return textResult(`{"content":null}`), nil
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// notifyRaw sends a notification with raw params on every session's
// standalone stream.
func (c *testCompanion) notifyRaw(method, params string) {
	c.t.Helper()
	c.mu.Lock()
	var conns []mcp.Connection
	for _, s := range c.sessions {
		conns = append(conns, s.conn)
	}
	c.mu.Unlock()
	if len(conns) == 0 {
		c.t.Fatalf("notify %s: the companion has no session", method)
	}
	for _, conn := range conns {
		req := &jsonrpc.Request{Method: method}
		if params != "" {
			req.Params = json.RawMessage(params)
		}
		if err := conn.Write(context.Background(), req); err != nil {
			c.t.Fatalf("notify %s: %v", method, err)
		}
	}
}

// notify sends a notification with v as params.
func (c *testCompanion) notify(method string, v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.notifyRaw(method, string(b))
}

// hangGuard bounds the tests' waits: a hang guard, not a speed
// requirement.
const hangGuard = 20 * time.Second

// recv receives from ch, failing t if nothing comes within the hang guard.
func recv[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hangGuard):
		t.Fatalf("nothing received within %v", hangGuard)
		panic("unreachable")
	}
}

// nextCall waits for the next tool call.
func (c *testCompanion) nextCall() toolCall {
	c.t.Helper()
	return recv(c.t, c.calls)
}

// receivedMethods returns the JSON-RPC methods posted so far.
func (c *testCompanion) receivedMethods() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.methods...)
}

// authHeaders returns the Authorization header of every request so far.
func (c *testCompanion) authHeaders() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.auth...)
}

// kill stops the companion as a killed process would: the listener and
// every connection reset at once, the sessions dropped without a word.
func (c *testCompanion) kill() {
	c.mu.Lock()
	if c.killed {
		c.mu.Unlock()
		return
	}
	c.killed = true
	conns := make([]net.Conn, 0, len(c.tcp))
	for conn := range c.tcp {
		conns = append(conns, conn)
	}
	sessions := c.sessions
	c.sessions = map[string]*compSession{}
	c.mu.Unlock()
	_ = c.ln.Close()
	for _, conn := range conns {
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // a reset, as the kernel sends for a dead process
		}
		_ = conn.Close()
	}
	for _, s := range sessions {
		_ = s.ss.Close()
	}
	_ = c.hs.Close()
}
