// Package oauthtest is tests' MCP server behind OAuth: a Go SDK streamable
// HTTP server (mcp.NewStreamableHTTPHandler) behind auth.RequireBearerToken,
// and a small authorization server of its own — protected resource
// metadata, authorization server metadata, dynamic client registration,
// /authorize redirecting to the redirect_uri with code and state, /token
// with the authorization_code grant (PKCE S256 verified) and the
// refresh_token grant (refresh tokens rotated), revocation — all on
// 127.0.0.1. Browse plays the browser.
package oauthtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// ToolName is the server's one tool; it answers ToolAnswer.
const (
	ToolName   = "oauth_secret"
	ToolAnswer = "the protected answer is 42"
)

// Options configure a Server.
type Options struct {
	// NoDCR leaves registration out of the metadata and refuses it.
	NoDCR bool
	// Clients are pre-registered clients: id to secret ("" for public).
	Clients map[string]string
	// TokenTTL is the access tokens' lifetime; zero means an hour.
	TokenTTL time.Duration
	// Now is the authorization server's clock (expiry of access tokens);
	// nil means time.Now.
	Now func() time.Time
	// WrongState makes /authorize send back another state than it got.
	WrongState bool
	// RequireScopes are scopes the MCP endpoint requires; the tokens
	// carry none, so every authorized request is answered 403.
	RequireScopes []string
}

// Server is the MCP server and its authorization server.
type Server struct {
	// URL is the base URL, the issuer; MCPURL the MCP endpoint.
	URL, MCPURL string

	opts Options
	srv  *httptest.Server

	mu       sync.Mutex
	clients  map[string]client
	codes    map[string]grant
	access   map[string]time.Time // access token → expiry
	refresh  map[string]string    // refresh token → client id
	counts   Counts
	lastAuth url.Values
	lastTok  url.Values
}

type client struct {
	secret    string
	redirects []string // nil: any loopback redirect
}

type grant struct {
	client, redirect, challenge string
}

// Counts are what the server was asked, for assertions.
type Counts struct {
	Registrations, Authorizations, CodeExchanges, Refreshes, ToolCalls int
}

// New starts the server; it is closed when the test ends.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.TokenTTL == 0 {
		opts.TokenTTL = time.Hour
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{opts: opts, clients: map[string]client{}, codes: map[string]grant{}, access: map[string]time.Time{}, refresh: map[string]string{}}
	for id, secret := range opts.Clients {
		s.clients[id] = client{secret: secret}
	}
	mux := http.NewServeMux()
	s.srv = httptest.NewServer(mux) // 127.0.0.1
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL
	s.MCPURL = s.URL + "/mcp"

	ms := mcp.NewServer(&mcp.Implementation{Name: "oauthtest", Version: "1"}, nil)
	mcp.AddTool(ms, &mcp.Tool{Name: ToolName, Description: "Returns a secret only an authorized client sees."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			s.mu.Lock()
			s.counts.ToolCalls++
			s.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: ToolAnswer}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ms }, nil)
	mux.Handle("/mcp", insufficientScope(auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: s.URL + "/.well-known/oauth-protected-resource/mcp",
		Scopes:              opts.RequireScopes,
	})(h)))
	mux.Handle("GET /.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: s.MCPURL, AuthorizationServers: []string{s.URL},
	}))
	mux.Handle("GET /.well-known/oauth-protected-resource", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: s.URL, AuthorizationServers: []string{s.URL},
	}))
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.metadata)
	mux.HandleFunc("POST /register", s.register)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	mux.HandleFunc("POST /revoke", s.revoke)
	return s
}

// Counts returns what the server was asked so far.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// LastAuthorize returns the query of the last /authorize request.
func (s *Server) LastAuthorize() url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastAuth
}

// LastToken returns the form of the last /token request.
func (s *Server) LastToken() url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastTok
}

// RevokeAll invalidates every access and refresh token.
func (s *Server) RevokeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
	clear(s.refresh)
}

// Browse plays the browser: it GETs authURL and follows the redirects to
// the client's loopback listener, returning the final response's status
// and body.
func Browse(ctx context.Context, authURL string) (int, string, error) {
	return BrowseWith(ctx, authURL, nil)
}

// BrowseWith is Browse with the authorization URL's query changed by edit
// first (to tamper with it).
func BrowseWith(ctx context.Context, authURL string, edit func(url.Values)) (int, string, error) {
	if edit != nil {
		u, err := url.Parse(authURL)
		if err != nil {
			return 0, "", err
		}
		q := u.Query()
		edit(q)
		u.RawQuery = q.Encode()
		authURL = u.String()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func (s *Server) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.access[token]
	if !ok {
		return nil, fmt.Errorf("%w: unknown token", auth.ErrInvalidToken)
	}
	if !s.opts.Now().Before(exp) {
		return nil, fmt.Errorf("%w: expired", auth.ErrInvalidToken)
	}
	// The middleware checks expiry on the real clock; the server's own
	// clock decided above.
	return &auth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
}

func (s *Server) metadata(w http.ResponseWriter, _ *http.Request) {
	m := map[string]any{
		"issuer":                                s.URL,
		"authorization_endpoint":                s.URL + "/authorize",
		"token_endpoint":                        s.URL + "/token",
		"revocation_endpoint":                   s.URL + "/revoke",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none", "client_secret_post"},
	}
	if !s.opts.NoDCR {
		m["registration_endpoint"] = s.URL + "/register"
	}
	writeJSON(w, http.StatusOK, m)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	if s.opts.NoDCR {
		http.NotFound(w, r)
		return
	}
	var md struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.NewDecoder(r.Body).Decode(&md); err != nil || len(md.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	id := "dcr-" + rand.Text()
	s.mu.Lock()
	s.clients[id] = client{redirects: md.RedirectURIs}
	s.counts.Registrations++
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id": id, "redirect_uris": md.RedirectURIs, "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
	})
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastAuth = q
	c, ok := s.clients[q.Get("client_id")]
	redirect := q.Get("redirect_uri")
	switch {
	case !ok:
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	case c.redirects != nil && !slices.Contains(c.redirects, redirect):
		http.Error(w, "redirect_uri not registered", http.StatusBadRequest)
		return
	case !strings.HasPrefix(redirect, "http://127.0.0.1:") && !strings.HasPrefix(redirect, "http://localhost:"):
		http.Error(w, "redirect_uri must be loopback", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "":
		http.Error(w, "code, S256 and state are required", http.StatusBadRequest)
		return
	}
	s.counts.Authorizations++
	code := rand.Text()
	s.codes[code] = grant{client: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge")}
	state := q.Get("state")
	if s.opts.WrongState {
		state = "forged-" + rand.Text()
	}
	u, _ := url.Parse(redirect)
	rq := u.Query()
	rq.Set("code", code)
	rq.Set("state", state)
	u.RawQuery = rq.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastTok = f
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = f.Get("client_id"), f.Get("client_secret")
	}
	c, ok := s.clients[id]
	if !ok || c.secret != secret {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	switch f.Get("grant_type") {
	case "authorization_code":
		g, ok := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code"))
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		switch {
		case !ok || g.client != id || g.redirect != f.Get("redirect_uri"):
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "unknown code"})
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "PKCE verification failed"})
			return
		}
		s.counts.CodeExchanges++
	case "refresh_token":
		owner, ok := s.refresh[f.Get("refresh_token")]
		if !ok || owner != id {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "unknown refresh token"})
			return
		}
		delete(s.refresh, f.Get("refresh_token")) // rotated
		s.counts.Refreshes++
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	at, rt := "at-"+rand.Text(), "rt-"+rand.Text()
	s.access[at] = s.opts.Now().Add(s.opts.TokenTTL)
	s.refresh[rt] = id
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": at, "token_type": "Bearer", "expires_in": int(s.opts.TokenTTL / time.Second), "refresh_token": rt,
	})
}

func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	delete(s.access, r.PostForm.Get("token"))
	delete(s.refresh, r.PostForm.Get("token"))
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// insufficientScope adds RFC 6750's error="insufficient_scope" to the
// middleware's 403 challenges, which it leaves out.
func insufficientScope(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(scopeWriter{w}, r)
	})
}

type scopeWriter struct{ http.ResponseWriter }

func (w scopeWriter) WriteHeader(code int) {
	if c := w.Header().Get("WWW-Authenticate"); code == http.StatusForbidden && c != "" {
		w.Header().Set("WWW-Authenticate", c+`, error="insufficient_scope"`)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w scopeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
