package a2adial

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestGRPCTarget: each spelling of a card's gRPC URL becomes a target
// grpc.NewClient dials, plain text where the URL or a loopback host says
// so.
func TestGRPCTarget(t *testing.T) {
	for _, c := range []struct {
		url, target string
		plain       bool
	}{
		{"127.0.0.1:5000", "127.0.0.1:5000", true},
		{"localhost:5000", "localhost:5000", true},
		{"[::1]:5000", "[::1]:5000", true},
		{"agent.example.com:443", "agent.example.com:443", false},
		{"dns:///127.0.0.1:5000", "dns:///127.0.0.1:5000", true},
		{"dns:///agent.example.com:443", "dns:///agent.example.com:443", false},
		{"passthrough:///localhost:5000", "passthrough:///localhost:5000", true},
		{"http://127.0.0.1:5000", "127.0.0.1:5000", true},
		{"http://agent.example.com", "agent.example.com:80", true},
		{"https://agent.example.com/a2a", "agent.example.com:443", false},
		{"grpc://10.0.0.1:5000", "10.0.0.1:5000", true},
		{"grpcs://agent.example.com", "agent.example.com:443", false},
		{"unix:///run/agent.sock", "unix:///run/agent.sock", true},
	} {
		target, plain := GRPCTarget(c.url)
		if target != c.target || plain != c.plain {
			t.Errorf("GRPCTarget(%q) = %q, plain %v; want %q, plain %v", c.url, target, plain, c.target, c.plain)
		}
	}
}

// TestRefusedStreams: a streaming request refused with a JSON-RPC error
// body becomes a one-event stream carrying that error; other refusals and
// other requests pass unchanged.
func TestRefusedStreams(t *testing.T) {
	const rpcErr = `{"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad reply"}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/rpc":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, rpcErr)
		case "/plain":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error": "invalid bearer token"}`)
		}
	}))
	defer srv.Close()
	client := &http.Client{Transport: RefusedStreams(nil)}
	do := func(path, accept string) (int, string, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	for _, c := range []struct {
		path, accept string
		code         int
		ctype, body  string
	}{
		{"/rpc", "text/event-stream", 200, "text/event-stream", `data: {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad reply"}}` + "\n\n"},
		{"/rpc", "application/json", 400, "application/json", rpcErr},
		{"/plain", "text/event-stream", 401, "application/json", `{"error": "invalid bearer token"}`},
	} {
		code, ctype, body := do(c.path, c.accept)
		if code != c.code || ctype != c.ctype || body != c.body {
			t.Errorf("%s with Accept %s: %d %s %q, want %d %s %q", c.path, c.accept, code, ctype, body, c.code, c.ctype, c.body)
		}
	}
}
