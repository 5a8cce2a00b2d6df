package guard

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

const (
	testToken  = "s3cret-token-value_0123456789abcdefghijklmnop"
	testPort   = 41999
	testHost   = "127.0.0.1:41999"
	testOrigin = "http://localhost:3000"
	cardPath   = "/.well-known/agent-card.json"
)

// syncBuffer is a log sink safe for the concurrent writes of a real server.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newTestGuard(t testing.TB, mutate func(*Config)) (*Guard, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	cfg := Config{
		Token:          testToken,
		AllowedHosts:   LoopbackHosts(testPort),
		AllowedOrigins: []string{testOrigin},
		PublicPaths:    []string{cardPath},
		Logger:         slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if mutate != nil {
		mutate(&cfg)
	}
	g, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return g, logs
}

// echoHandler answers 200 "ok" after reading the whole body; a read error
// is answered the way protocol handlers do, with a 400 of their own.
type echoHandler struct {
	called  bool
	readErr error
	read    int
}

func (h *echoHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.called = true
	b, err := io.ReadAll(r.Body)
	h.read = len(b)
	if err != nil {
		h.readErr = err
		http.Error(w, "bad body: "+err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("A2A-Extensions", "https://example.com/ext")
	_, _ = io.WriteString(w, "ok")
}

// unsizedReader hides the length of its content so that the request is
// sent chunked, with ContentLength -1.
type unsizedReader struct{ r io.Reader }

func (u unsizedReader) Read(p []byte) (int, error) { return u.r.Read(p) }

func TestWrap(t *testing.T) {
	const limit = 1024
	type tc struct {
		name    string
		method  string
		target  string
		host    string
		headers map[string]string
		body    io.Reader
		public  bool

		wantStatus  int
		wantCalled  bool
		wantInError string            // substring of the JSON error
		wantHeaders map[string]string // exact values
		noHeaders   []string
	}
	bearer := map[string]string{"Authorization": "Bearer " + testToken}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{"Authorization": "Bearer " + testToken}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	corsHeaders := []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers", "Access-Control-Expose-Headers"}
	tests := []tc{
		{
			name: "missing token", wantStatus: 401, wantInError: "missing bearer token",
			wantHeaders: map[string]string{"WWW-Authenticate": `Bearer realm="agentry"`},
		},
		{
			name: "wrong token", headers: map[string]string{"Authorization": "Bearer nope"},
			wantStatus: 401, wantInError: "invalid bearer token",
			wantHeaders: map[string]string{"WWW-Authenticate": `Bearer realm="agentry", error="invalid_token"`},
		},
		{
			name: "wrong token of the right length", headers: map[string]string{"Authorization": "Bearer " + strings.Repeat("x", len(testToken))},
			wantStatus: 401, wantInError: "invalid bearer token",
		},
		{
			name: "token prefix", headers: map[string]string{"Authorization": "Bearer " + testToken[:10]},
			wantStatus: 401, wantInError: "invalid bearer token",
		},
		{name: "right token", headers: bearer, wantStatus: 200, wantCalled: true},
		{name: "lowercase bearer", headers: map[string]string{"Authorization": "bearer " + testToken}, wantStatus: 200, wantCalled: true},
		{name: "uppercase bearer", headers: map[string]string{"Authorization": "BEARER " + testToken}, wantStatus: 200, wantCalled: true},
		{name: "empty bearer", headers: map[string]string{"Authorization": "Bearer "}, wantStatus: 401, wantInError: "missing bearer token"},
		{name: "basic scheme", headers: map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("u:"+testToken))}, wantStatus: 401, wantInError: "Bearer scheme"},
		{name: "bare token", headers: map[string]string{"Authorization": testToken}, wantStatus: 401, wantInError: "Bearer scheme"},
		{
			name: "token in query string", target: "/a2a?token=" + testToken + "&access_token=" + testToken,
			wantStatus: 401, wantInError: "token in the URL is not accepted",
		},
		{name: "token in the query string with a header too", target: "/a2a?access_token=x", headers: bearer, wantStatus: 401, wantInError: "token in the URL is not accepted"},
		{name: "unrelated query parameters", target: "/ws?name=ide&lastEventId=3", headers: bearer, wantStatus: 200, wantCalled: true},
		{
			name: "websocket token as a subprotocol", target: "/ws",
			headers:    map[string]string{"Upgrade": "websocket", "Sec-WebSocket-Protocol": "a2a.v1, a2a.bearer." + base64.RawURLEncoding.EncodeToString([]byte(testToken))},
			wantStatus: 200, wantCalled: true,
		},
		{
			name: "websocket wrong subprotocol token", target: "/ws",
			headers:    map[string]string{"Upgrade": "websocket", "Sec-WebSocket-Protocol": "a2a.v1, a2a.bearer." + base64.RawURLEncoding.EncodeToString([]byte("nope"))},
			wantStatus: 401, wantInError: "invalid bearer token",
		},
		{
			name: "websocket subprotocol token not encoded", target: "/ws",
			headers:    map[string]string{"Upgrade": "websocket", "Sec-WebSocket-Protocol": "a2a.v1, a2a.bearer.not base64!"},
			wantStatus: 401, wantInError: "subprotocol a2a.bearer.",
		},
		{
			name: "subprotocol token without an upgrade", target: "/ws",
			headers:    map[string]string{"Sec-WebSocket-Protocol": "a2a.bearer." + base64.RawURLEncoding.EncodeToString([]byte(testToken))},
			wantStatus: 401, wantInError: "missing bearer token",
		},
		{
			name: "websocket without a token", target: "/ws", headers: map[string]string{"Upgrade": "websocket"},
			wantStatus: 401, wantInError: "subprotocol a2a.bearer.",
		},
		{name: "public path without token", target: cardPath, wantStatus: 200, wantCalled: true},
		{name: "public path HEAD without token", method: http.MethodHead, target: cardPath, wantStatus: 200, wantCalled: true},
		{name: "public path POST without token", method: http.MethodPost, target: cardPath, body: strings.NewReader("{}"), wantStatus: 401},
		{name: "public path is exact", target: cardPath + "/x", wantStatus: 401},
		{
			name: "public path with foreign host", target: cardPath, host: "evil.example:41999",
			wantStatus: 403, wantInError: "--allowed-host",
		},
		{
			name: "DNS rebinding host", host: "evil.example:41999", headers: bearer,
			wantStatus: 403, wantInError: `host not allowed: "evil.example:41999"`,
		},
		{name: "loopback host on another port", host: "127.0.0.1:80", headers: bearer, wantStatus: 403},
		{name: "empty host", host: "-", headers: bearer, wantStatus: 403, wantInError: "host not allowed"},
		{name: "host case-insensitive", host: "LocalHost:41999", headers: bearer, wantStatus: 200, wantCalled: true},
		{name: "IPv6 loopback", host: "[::1]:41999", headers: bearer, wantStatus: 200, wantCalled: true},
		{
			name: "foreign origin", headers: with(map[string]string{"Origin": "https://evil.example"}),
			wantStatus: 403, wantInError: "--allowed-origin", noHeaders: corsHeaders,
		},
		{
			name: "null origin", headers: with(map[string]string{"Origin": "null"}),
			wantStatus: 403, wantInError: "origin not allowed", noHeaders: corsHeaders,
		},
		{
			name: "empty origin", headers: with(map[string]string{"Origin": ""}),
			wantStatus: 403, wantInError: "origin not allowed", noHeaders: corsHeaders,
		},
		{
			name: "foreign origin on public path", target: cardPath, headers: map[string]string{"Origin": "https://evil.example"},
			wantStatus: 403, noHeaders: corsHeaders,
		},
		{
			name: "cross-site WebSocket", headers: with(map[string]string{
				"Origin": "https://evil.example", "Connection": "Upgrade", "Upgrade": "websocket",
			}),
			wantStatus: 403, noHeaders: corsHeaders,
		},
		{
			name: "allowed origin", headers: with(map[string]string{"Origin": testOrigin}),
			wantStatus: 200, wantCalled: true,
			wantHeaders: map[string]string{
				"Access-Control-Allow-Origin":   testOrigin,
				"Access-Control-Expose-Headers": "A2A-Extensions",
				"Vary":                          "Origin",
			},
		},
		{
			name: "allowed origin without token", headers: map[string]string{"Origin": testOrigin},
			wantStatus: 401, wantHeaders: map[string]string{"Access-Control-Allow-Origin": testOrigin},
		},
		{
			name: "preflight from allowed origin", method: http.MethodOptions,
			headers: map[string]string{
				"Origin":                         testOrigin,
				"Access-Control-Request-Method":  "POST",
				"Access-Control-Request-Headers": "authorization, content-type",
			},
			wantStatus: 204,
			wantHeaders: map[string]string{
				"Access-Control-Allow-Origin":  testOrigin,
				"Access-Control-Allow-Headers": "Authorization, Content-Type, A2A-Extensions, A2A-Version, X-A2A-Extensions",
				"Access-Control-Allow-Methods": "GET, POST, DELETE, OPTIONS",
				"Vary":                         "Origin",
			},
		},
		{
			name: "preflight from foreign origin", method: http.MethodOptions,
			headers:    map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
			wantStatus: 403, noHeaders: corsHeaders,
		},
		{
			name: "preflight with foreign host", method: http.MethodOptions, host: "evil.example:41999",
			headers:    map[string]string{"Origin": testOrigin, "Access-Control-Request-Method": "POST"},
			wantStatus: 403, noHeaders: corsHeaders,
		},
		{name: "OPTIONS without origin needs the token", method: http.MethodOptions, wantStatus: 401},
		{
			name: "body at the limit", method: http.MethodPost, headers: bearer,
			body: bytes.NewReader(make([]byte, limit)), wantStatus: 200, wantCalled: true,
		},
		{
			name: "body over the limit by Content-Length", method: http.MethodPost, headers: bearer,
			body: bytes.NewReader(make([]byte, limit+1)), wantStatus: 413, wantInError: "limit is 1024 bytes",
		},
		{
			name: "unsized body at the limit", method: http.MethodPost, headers: bearer,
			body: unsizedReader{bytes.NewReader(make([]byte, limit))}, wantStatus: 200, wantCalled: true,
		},
		{
			name: "unsized body over the limit", method: http.MethodPost, headers: bearer,
			body: unsizedReader{bytes.NewReader(make([]byte, limit+1))}, wantStatus: 413, wantCalled: true,
			wantInError: "request body too large",
		},
		{
			name: "unsized body over the limit from allowed origin", method: http.MethodPost,
			headers: with(map[string]string{"Origin": testOrigin}),
			body:    unsizedReader{bytes.NewReader(make([]byte, 4*limit))}, wantStatus: 413, wantCalled: true,
			wantHeaders: map[string]string{"Access-Control-Allow-Origin": testOrigin},
		},
		{
			name: "oversized body is checked after the token", method: http.MethodPost,
			body: bytes.NewReader(make([]byte, 2*limit)), wantStatus: 401,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, _ := newTestGuard(t, func(c *Config) { c.MaxBodyBytes = limit })
			method := tt.method
			if method == "" {
				method = http.MethodGet
			}
			target := tt.target
			if target == "" {
				target = "/a2a"
			}
			req := httptest.NewRequest(method, target, tt.body)
			switch tt.host {
			case "":
				req.Host = testHost
			case "-":
				req.Host = ""
			default:
				req.Host = tt.host
			}
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			next := &echoHandler{}
			rec := httptest.NewRecorder()
			g.Wrap(next).ServeHTTP(rec, req)

			if rec.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d (body %q)", rec.Code, tt.wantStatus, rec.Body.String())
			}
			if next.called != tt.wantCalled {
				t.Errorf("handler called = %v, want %v", next.called, tt.wantCalled)
			}
			for k, want := range tt.wantHeaders {
				if got := rec.Header().Get(k); got != want {
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
			for _, k := range tt.noHeaders {
				if got := rec.Header().Get(k); got != "" {
					t.Errorf("header %s = %q, want none", k, got)
				}
			}
			if rec.Code >= 400 {
				var body struct{ Error string }
				if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type = %q, want application/json", ct)
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error == "" {
					t.Fatalf("body %q is not {\"error\": ...}: %v", rec.Body.String(), err)
				}
				if !strings.Contains(body.Error, tt.wantInError) {
					t.Errorf("error %q does not contain %q", body.Error, tt.wantInError)
				}
				if strings.Contains(body.Error, testToken) {
					t.Errorf("error %q reveals the token", body.Error)
				}
			}
		})
	}
}

// TestBodyLimitRealServer sends an oversized chunked body through a real
// server: the handler must see the limit error and the client a 413, even
// though the handler answers the error with a status of its own.
func TestBodyLimitRealServer(t *testing.T) {
	const limit = 64 << 10
	var (
		mu      sync.Mutex
		readErr error
		read    int
		length  int64 // ContentLength as the server saw it
	)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		mu.Lock()
		readErr, read, length = err, len(b), r.ContentLength
		mu.Unlock()
		if err != nil {
			http.Error(w, `{"jsonrpc":"2.0","error":{"code":-32700}}`, http.StatusOK)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	// The listener exists before Start, so the guard can know its address.
	srv := httptest.NewUnstartedServer(nil)
	host := srv.Listener.Addr().String()
	g, err := New(Config{
		Token:        testToken,
		AllowedHosts: []string{host},
		MaxBodyBytes: limit,
		Logger:       slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = g.Wrap(handler)
	srv.Start()
	defer srv.Close()

	for _, tt := range []struct {
		name       string
		size       int
		sized      bool
		wantStatus int
		wantErr    bool
	}{
		{"chunked at the limit", limit, false, 200, false},
		{"chunked over the limit", limit + 1, false, 413, true},
		{"chunked far over the limit", 16 * limit, false, 413, true},
		{"sized at the limit", limit, true, 200, false},
		{"sized over the limit", limit + 1, true, 413, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			readErr, read, length = nil, -1, 0
			mu.Unlock()
			var body io.Reader = bytes.NewReader(make([]byte, tt.size))
			if !tt.sized {
				body = unsizedReader{body}
			}
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/a2a", body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+testToken)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatalf("request: %v", err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status = %d, want %d (body %q)", resp.StatusCode, tt.wantStatus, got)
			}
			mu.Lock()
			defer mu.Unlock()
			if !tt.sized && length != -1 {
				t.Errorf("server saw Content-Length %d, want a chunked body", length)
			}
			if tt.wantErr {
				if _, ok := errors.AsType[*http.MaxBytesError](readErr); !ok {
					t.Errorf("handler read error = %v, want *http.MaxBytesError", readErr)
				}
				if read > limit {
					t.Errorf("handler read %d bytes, more than the limit %d", read, limit)
				}
			} else if readErr != nil {
				t.Errorf("handler read error = %v", readErr)
			}
		})
	}
}

// TestBodyLimitCommittedResponse checks that a handler whose response is
// already under way keeps it when a later read trips the limit.
func TestBodyLimitCommittedResponse(t *testing.T) {
	g, _ := newTestGuard(t, func(c *Config) { c.MaxBodyBytes = 16 })
	var readErr error
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		_, readErr = io.ReadAll(r.Body)
		_, _ = io.WriteString(w, "data: x\n\n")
	})
	req := httptest.NewRequest(http.MethodPost, "/a2a", unsizedReader{strings.NewReader(strings.Repeat("x", 100))})
	req.Host = testHost
	req.Header.Set("Authorization", "Bearer "+testToken)
	rec := httptest.NewRecorder()
	g.Wrap(h).ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Body.String() != "data: x\n\n" {
		t.Errorf("got %d %q, want the handler's own response", rec.Code, rec.Body.String())
	}
	if _, ok := errors.AsType[*http.MaxBytesError](readErr); !ok {
		t.Errorf("handler read error = %v, want *http.MaxBytesError", readErr)
	}
}

// TestGRPCShapedRefusals checks the wire shape of refusals of gRPC calls:
// a trailers-only response, 200 with the status in headers and no body.
func TestGRPCShapedRefusals(t *testing.T) {
	g, _ := newTestGuard(t, func(c *Config) { c.MaxBodyBytes = 8 })
	for _, tt := range []struct {
		name     string
		host     string
		auth     string
		origin   string
		bodySize int
		wantCode string
	}{
		{name: "no token", wantCode: "16"},
		{name: "wrong token", auth: "Bearer nope", wantCode: "16"},
		{name: "foreign host", host: "evil.example:1", auth: "Bearer " + testToken, wantCode: "7"},
		{name: "foreign origin", origin: "https://evil.example", auth: "Bearer " + testToken, wantCode: "7"},
		{name: "too large", auth: "Bearer " + testToken, bodySize: 9, wantCode: "8"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/grpc.health.v1.Health/Check", bytes.NewReader(make([]byte, tt.bodySize)))
			req.Host = testHost
			if tt.host != "" {
				req.Host = tt.host
			}
			req.Header.Set("Content-Type", "application/grpc+proto")
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			rec := httptest.NewRecorder()
			g.Wrap(&echoHandler{}).ServeHTTP(rec, req)
			res := rec.Result()
			if res.StatusCode != 200 {
				t.Errorf("status = %d, want 200", res.StatusCode)
			}
			if got := res.Header.Get("Content-Type"); got != "application/grpc" {
				t.Errorf("Content-Type = %q", got)
			}
			if got := res.Header.Get("Grpc-Status"); got != tt.wantCode {
				t.Errorf("Grpc-Status = %q, want %s", got, tt.wantCode)
			}
			if res.Header.Get("Grpc-Message") == "" {
				t.Error("no Grpc-Message")
			}
			if rec.Body.Len() != 0 {
				t.Errorf("body %q, want none", rec.Body.String())
			}
		})
	}
}

func TestEncodeGRPCMessage(t *testing.T) {
	got := encodeGRPCMessage("host \"é\" 100%\n")
	want := "host \"%C3%A9\" 100%25%0A"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestTokenNeverLogged drives refusals of every kind, with the token in
// every place a client might put it, and checks the log.
func TestTokenNeverLogged(t *testing.T) {
	g, logs := newTestGuard(t, func(c *Config) { c.MaxBodyBytes = 4 })
	near := testToken + "x" // a near miss is as secret as the token
	reqs := []func() *http.Request{
		func() *http.Request { return httptest.NewRequest("GET", "/a2a", nil) },
		func() *http.Request {
			r := httptest.NewRequest("GET", "/a2a", nil)
			r.Header.Set("Authorization", "Bearer "+near)
			return r
		},
		func() *http.Request {
			r := httptest.NewRequest("GET", "/a2a", nil)
			r.Header.Set("Authorization", "Basic "+testToken)
			return r
		},
		func() *http.Request { return httptest.NewRequest("GET", "/a2a?token="+testToken, nil) },
		func() *http.Request {
			r := httptest.NewRequest("GET", "/a2a", nil)
			r.Header.Set("Authorization", "Bearer "+testToken)
			r.Host = "evil.example"
			return r
		},
		func() *http.Request {
			r := httptest.NewRequest("GET", "/a2a", nil)
			r.Header.Set("Authorization", "Bearer "+testToken)
			r.Header.Set("Origin", "https://evil.example")
			return r
		},
		func() *http.Request {
			r := httptest.NewRequest("POST", "/a2a", strings.NewReader("too large"))
			r.Header.Set("Authorization", "Bearer "+testToken)
			return r
		},
		func() *http.Request {
			r := httptest.NewRequest("POST", "/a2a", unsizedReader{strings.NewReader("too large")})
			r.Header.Set("Authorization", "Bearer "+testToken)
			r.Header.Set("Content-Type", "application/grpc")
			return r
		},
	}
	for _, mk := range reqs {
		r := mk()
		if r.Host == "example.com" { // httptest's default
			r.Host = testHost
		}
		g.Wrap(&echoHandler{}).ServeHTTP(httptest.NewRecorder(), r)
	}
	out := logs.String()
	if n := strings.Count(out, "level=WARN"); n != len(reqs) {
		t.Errorf("%d Warn records, want %d:\n%s", n, len(reqs), out)
	}
	for _, want := range []string{"remote_addr=", "method=GET", "path=/a2a", "reason="} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	// The token's prefix catches truncated or partly-logged tokens too.
	if strings.Contains(out, testToken[:12]) {
		t.Errorf("the token appears in the log:\n%s", out)
	}
	if strings.Contains(strings.ToLower(out), "authorization=") {
		t.Errorf("an Authorization header appears in the log:\n%s", out)
	}
}

func TestNew(t *testing.T) {
	base := func() Config {
		return Config{Token: testToken, AllowedHosts: []string{"localhost:1"}}
	}
	for _, tt := range []struct {
		name   string
		mutate func(*Config)
		ok     bool
	}{
		{"valid", func(*Config) {}, true},
		{"empty token", func(c *Config) { c.Token = "" }, false},
		{"token with space", func(c *Config) { c.Token = "a b" }, false},
		{"token with newline", func(c *Config) { c.Token = "ab\n" }, false},
		{"no hosts", func(c *Config) { c.AllowedHosts = nil }, false},
		{"bare host", func(c *Config) { c.AllowedHosts = []string{"agentry.internal"} }, true},
		{"IPv6 host", func(c *Config) { c.AllowedHosts = []string{"[::1]:8080", "[::1]"} }, true},
		{"unbracketed IPv6", func(c *Config) { c.AllowedHosts = []string{"::1"} }, false},
		{"host with scheme", func(c *Config) { c.AllowedHosts = []string{"http://localhost:1"} }, false},
		{"host with bad port", func(c *Config) { c.AllowedHosts = []string{"localhost:x"} }, false},
		{"empty host", func(c *Config) { c.AllowedHosts = []string{""} }, false},
		{"origin", func(c *Config) { c.AllowedOrigins = []string{"https://App.Example:8443/"} }, true},
		{"origin with path", func(c *Config) { c.AllowedOrigins = []string{"https://app.example/x"} }, false},
		{"origin without scheme", func(c *Config) { c.AllowedOrigins = []string{"app.example"} }, false},
		{"null origin", func(c *Config) { c.AllowedOrigins = []string{"null"} }, false},
		{"relative public path", func(c *Config) { c.PublicPaths = []string{"card.json"} }, false},
		{"negative body limit", func(c *Config) { c.MaxBodyBytes = -1 }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base()
			tt.mutate(&cfg)
			g, err := New(cfg)
			if tt.ok != (err == nil) {
				t.Fatalf("New error = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && strings.Contains(err.Error(), testToken) {
				t.Errorf("error %q reveals the token", err)
			}
			if err == nil && g.maxBody != DefaultMaxBodyBytes {
				t.Errorf("maxBody = %d, want the default", g.maxBody)
			}
		})
	}
}

func TestAllowedOriginNormalized(t *testing.T) {
	g, _ := newTestGuard(t, func(c *Config) { c.AllowedOrigins = []string{"HTTPS://App.Example:8443/"} })
	req := httptest.NewRequest("GET", "/a2a", nil)
	req.Host = testHost
	req.Header.Set("Origin", "https://app.example:8443")
	req.Header.Set("Authorization", "Bearer "+testToken)
	rec := httptest.NewRecorder()
	g.Wrap(&echoHandler{}).ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Header().Get("Access-Control-Allow-Origin") != "https://app.example:8443" {
		t.Errorf("got %d, ACAO %q", rec.Code, rec.Header().Get("Access-Control-Allow-Origin"))
	}
}

func TestNewToken(t *testing.T) {
	a, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Error("two tokens are equal")
	}
	raw, err := base64.RawURLEncoding.DecodeString(a)
	if err != nil || len(raw) != 32 {
		t.Errorf("token %q: %d bytes, %v; want 32 bytes of base64url", a, len(raw), err)
	}
	if _, err := New(Config{Token: a, AllowedHosts: []string{"localhost"}}); err != nil {
		t.Errorf("New rejects a NewToken token: %v", err)
	}
}

func TestLoopbackHosts(t *testing.T) {
	if got, want := LoopbackHosts(8080), []string{"localhost:8080", "127.0.0.1:8080", "[::1]:8080"}; !slices.Equal(got, want) {
		t.Errorf("LoopbackHosts(8080) = %q, want %q", got, want)
	}
	if got := LoopbackHosts(80); !slices.Contains(got, "localhost") || !slices.Contains(got, "localhost:80") {
		t.Errorf("LoopbackHosts(80) = %q, want bare and :80 names", got)
	}
	if _, err := New(Config{Token: testToken, AllowedHosts: LoopbackHosts(80)}); err != nil {
		t.Errorf("New rejects LoopbackHosts: %v", err)
	}
}

// discardWriter is the cheapest ResponseWriter, so that the benchmark
// measures the guard and not a recorder.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}

// BenchmarkWrap compares an allowed request through the guard with the
// same request to the bare handler: a sized JSON-RPC POST (the common
// case), and an unsized one, which takes the response-intercepting path.
func BenchmarkWrap(b *testing.B) {
	g, _ := newTestGuard(b, nil)
	payload := []byte(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","parts":[{"kind":"text","text":"hi"}]}}}`)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("{}"))
	})
	body := bytes.NewReader(payload)
	req := httptest.NewRequest(http.MethodPost, "/a2a", nil)
	req.Host = testHost
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	w := &discardWriter{h: make(http.Header)}
	run := func(b *testing.B, h http.Handler, sized bool) {
		b.ReportAllocs()
		for b.Loop() {
			body.Reset(payload)
			r := *req
			if sized {
				r.Body, r.ContentLength = io.NopCloser(body), int64(len(payload))
			} else {
				r.Body, r.ContentLength = io.NopCloser(unsizedReader{body}), -1
			}
			clear(w.h)
			h.ServeHTTP(w, &r)
		}
	}
	b.Run("bare", func(b *testing.B) { run(b, next, true) })
	b.Run("guard", func(b *testing.B) { run(b, g.Wrap(next), true) })
	b.Run("bare-unsized", func(b *testing.B) { run(b, next, false) })
	b.Run("guard-unsized", func(b *testing.B) { run(b, g.Wrap(next), false) })
}
