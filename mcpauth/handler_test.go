package mcpauth_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/internal/oauthtest"
	"github.com/agentry-dev/agentry/mcpauth"
)

// clock is a clock the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// browser is a Prompt that opens the URL as a browser would, counting
// how often it was asked.
type browser struct {
	t     *testing.T
	mu    sync.Mutex
	asked int
	last  string
	edit  func(url.Values)
	pages []string
}

func (b *browser) prompt(ctx context.Context, server, authURL string) error {
	b.mu.Lock()
	b.asked++
	b.last = authURL
	b.mu.Unlock()
	status, body, err := oauthtest.BrowseWith(ctx, authURL, b.edit)
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.pages = append(b.pages, body)
	b.mu.Unlock()
	b.t.Logf("browser: %d %s", status, strings.TrimSpace(body))
	return nil
}

func (b *browser) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.asked
}

type fixture struct {
	srv   *oauthtest.Server
	store *mcpauth.Store
	clock *clock
}

func newFixture(t *testing.T, opts oauthtest.Options) *fixture {
	c := &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if opts.Now == nil {
		opts.Now = c.Now
	}
	return &fixture{
		srv:   oauthtest.New(t, opts),
		store: mcpauth.NewStore(filepath.Join(t.TempDir(), "home", ".agentry", "mcp-oauth")),
		clock: c,
	}
}

func (f *fixture) handler(t *testing.T, o *config.MCPOAuthSettings, p mcpauth.Prompt) *mcpauth.Handler {
	t.Helper()
	h, err := mcpauth.New(mcpauth.Config{Server: "secure", URL: f.srv.MCPURL, OAuth: o, Store: f.store, Prompt: p, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// call connects with h and calls the server's tool.
func call(t *testing.T, url string, h *mcpauth.Handler) (string, error) {
	t.Helper()
	ctx := t.Context()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	sess, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, OAuthHandler: h}, nil)
	if err != nil {
		return "", err
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: oauthtest.ToolName})
	if err != nil {
		return "", err
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

func mustCall(t *testing.T, url string, h *mcpauth.Handler) {
	t.Helper()
	got, err := call(t, url, h)
	if err != nil {
		t.Fatalf("tool call: %v", err)
	}
	if got != oauthtest.ToolAnswer {
		t.Fatalf("tool answered %q", got)
	}
}

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestFirstUseWalksTheFlowThenReusesTheToken(t *testing.T) {
	f := newFixture(t, oauthtest.Options{})
	b := &browser{t: t}
	mustCall(t, f.srv.MCPURL, f.handler(t, &config.MCPOAuthSettings{Enabled: true}, b.prompt))
	if b.count() != 1 {
		t.Fatalf("browser asked %d times, want 1", b.count())
	}
	c := f.srv.Counts()
	if c.Registrations != 1 || c.Authorizations != 1 || c.CodeExchanges != 1 || c.ToolCalls != 1 {
		t.Fatalf("server counts %+v", c)
	}
	q := f.srv.LastAuthorize()
	if q.Get("code_challenge_method") != "S256" || q.Get("resource") != f.srv.MCPURL || !strings.HasPrefix(q.Get("redirect_uri"), "http://127.0.0.1:") {
		t.Fatalf("authorization request %v", q)
	}
	if got := mode(t, f.store.Dir()); got != 0o700 {
		t.Errorf("token dir mode %v, want 0700", got)
	}
	if got := mode(t, f.store.Path("secure")); got != 0o600 {
		t.Errorf("token file mode %v, want 0600", got)
	}
	tok, err := f.store.Load("secure")
	if err != nil || tok == nil || tok.ClientID == "" || tok.Token.RefreshToken == "" || tok.TokenURL != f.srv.URL+"/token" {
		t.Fatalf("stored token %v, %v", tok, err)
	}
	if want := f.clock.Now().Add(time.Hour).UnixMilli(); tok.Token.ExpiresAt != want {
		t.Errorf("expiresAt %d, want %d (the injected clock's)", tok.Token.ExpiresAt, want)
	}
	if strings.Contains(tok.String(), tok.Token.AccessToken) || strings.Contains(tok.String(), tok.Token.RefreshToken) {
		t.Errorf("String shows a secret: %s", tok)
	}

	// A second session, headless, uses the stored token without a flow.
	mustCall(t, f.srv.MCPURL, f.handler(t, nil, nil))
	if c := f.srv.Counts(); c.Authorizations != 1 || c.Registrations != 1 || c.ToolCalls != 2 {
		t.Fatalf("second session counts %+v", c)
	}
}

func TestExpiredTokenIsRefreshedAndRotated(t *testing.T) {
	f := newFixture(t, oauthtest.Options{})
	b := &browser{t: t}
	mustCall(t, f.srv.MCPURL, f.handler(t, &config.MCPOAuthSettings{Enabled: true}, b.prompt))
	before, _ := f.store.Load("secure")

	// Within five minutes of expiry the token is refreshed before use.
	f.clock.Advance(56 * time.Minute)
	mustCall(t, f.srv.MCPURL, f.handler(t, nil, nil))
	after, _ := f.store.Load("secure")
	if c := f.srv.Counts(); c.Refreshes != 1 || c.Authorizations != 1 {
		t.Fatalf("counts %+v, want one refresh and no new authorization", c)
	}
	if after.Token.AccessToken == before.Token.AccessToken || after.Token.RefreshToken == before.Token.RefreshToken {
		t.Fatal("the refresh did not store the new access and rotated refresh token")
	}
	if want := f.clock.Now().Add(time.Hour).UnixMilli(); after.Token.ExpiresAt != want {
		t.Errorf("expiresAt %d, want %d", after.Token.ExpiresAt, want)
	}
	if got := f.store.Status("secure", f.clock.Now()); got.State != mcpauth.StateValid {
		t.Errorf("status %+v", got)
	}
	f.clock.Advance(2 * time.Hour)
	if got := f.store.Status("secure", f.clock.Now()); got.State != mcpauth.StateRefreshable {
		t.Errorf("status after expiry %+v", got)
	}
	// Past its expiry altogether, the rotated refresh token still works.
	mustCall(t, f.srv.MCPURL, f.handler(t, nil, nil))
	if c := f.srv.Counts(); c.Refreshes != 2 {
		t.Fatalf("counts %+v", c)
	}
}

func TestRevokedTokenAsksAgain(t *testing.T) {
	f := newFixture(t, oauthtest.Options{})
	b := &browser{t: t}
	mustCall(t, f.srv.MCPURL, f.handler(t, &config.MCPOAuthSettings{Enabled: true}, b.prompt))
	f.srv.RevokeAll()

	// Headless: the refused token is deleted and the error says what to do.
	_, err := call(t, f.srv.MCPURL, f.handler(t, &config.MCPOAuthSettings{Enabled: true}, nil))
	var are *mcpauth.AuthRequiredError
	if !errors.As(err, &are) || !are.Rejected || are.Server != "secure" {
		t.Fatalf("headless after revocation: %v", err)
	}
	if tok, _ := f.store.Load("secure"); tok != nil {
		t.Fatal("the refused token is still stored")
	}

	// With a browser, the flow is walked again.
	mustCall(t, f.srv.MCPURL, f.handler(t, &config.MCPOAuthSettings{Enabled: true}, b.prompt))
	if c := f.srv.Counts(); c.Authorizations != 2 {
		t.Fatalf("counts %+v, want a second authorization", c)
	}
	// A session that used a stored token walks it again after a
	// revocation even without oauth.enabled.
	h := f.handler(t, nil, b.prompt)
	mustCall(t, f.srv.MCPURL, h)
	f.srv.RevokeAll()
	mustCall(t, f.srv.MCPURL, h)
	if c := f.srv.Counts(); c.Authorizations != 3 {
		t.Fatalf("counts %+v, want a third authorization after the second revocation", c)
	}
}

func TestRevokedRefreshTokenAsksAgain(t *testing.T) {
	f := newFixture(t, oauthtest.Options{})
	b := &browser{t: t}
	mustCall(t, f.srv.MCPURL, f.handler(t, &config.MCPOAuthSettings{Enabled: true}, b.prompt))
	f.srv.RevokeAll()
	f.clock.Advance(2 * time.Hour)
	_, err := call(t, f.srv.MCPURL, f.handler(t, nil, nil))
	var are *mcpauth.AuthRequiredError
	if !errors.As(err, &are) || !are.Rejected {
		t.Fatalf("after a failed refresh: %v", err)
	}
	if tok, _ := f.store.Load("secure"); tok != nil {
		t.Fatal("the token whose refresh failed is still stored")
	}
	mustCall(t, f.srv.MCPURL, f.handler(t, &config.MCPOAuthSettings{Enabled: true}, b.prompt))
	if c := f.srv.Counts(); c.Authorizations != 2 {
		t.Fatalf("counts %+v", c)
	}
}

func TestHeadlessWithoutTokenNamesTheCommand(t *testing.T) {
	f := newFixture(t, oauthtest.Options{})
	_, err := call(t, f.srv.MCPURL, f.handler(t, &config.MCPOAuthSettings{Enabled: true}, nil))
	if !errors.Is(err, mcpauth.ErrAuthRequired) || !strings.Contains(err.Error(), `mcp server "secure" needs OAuth authorization; run "agentry mcp auth secure"`) {
		t.Fatalf("got %v", err)
	}
	// Without oauth.enabled a session does not start the browser flow
	// by itself either (gemini-cli's rule).
	b := &browser{t: t}
	_, err = call(t, f.srv.MCPURL, f.handler(t, nil, b.prompt))
	if !errors.Is(err, mcpauth.ErrAuthRequired) || b.count() != 0 {
		t.Fatalf("without oauth.enabled: %v (browser asked %d)", err, b.count())
	}
	if c := f.srv.Counts(); c.Authorizations != 0 || c.ToolCalls != 0 {
		t.Fatalf("counts %+v", c)
	}
}

func TestMismatchesAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts oauthtest.Options
		edit func(url.Values)
		want string
	}{
		{"state from the server", oauthtest.Options{WrongState: true}, nil, "state mismatch"},
		{"PKCE challenge tampered", oauthtest.Options{}, func(q url.Values) { q.Set("code_challenge", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA") }, "PKCE verification failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.opts)
			b := &browser{t: t, edit: tc.edit}
			_, err := f.handler(t, nil, b.prompt).Login(t.Context())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if tok, _ := f.store.Load("secure"); tok != nil {
				t.Fatal("a token was stored")
			}
			if c := f.srv.Counts(); c.CodeExchanges != 0 {
				t.Fatalf("counts %+v", c)
			}
		})
	}
}

func TestConfiguredClientWithoutDCR(t *testing.T) {
	f := newFixture(t, oauthtest.Options{NoDCR: true, Clients: map[string]string{"agentry-test": "s3cret"}})
	b := &browser{t: t}
	// Without a client id and without registration there is no client.
	if _, err := f.handler(t, nil, b.prompt).Login(t.Context()); err == nil || !strings.Contains(err.Error(), "registration") {
		t.Fatalf("no DCR, no client id: %v", err)
	}
	o := &config.MCPOAuthSettings{ClientID: "agentry-test", ClientSecret: "s3cret", Scopes: []string{"tools:read"}, Audiences: []string{"api://secure"}}
	tok, err := f.handler(t, o, b.prompt).Login(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if tok.ClientID != "agentry-test" {
		t.Fatalf("client %q", tok.ClientID)
	}
	q := f.srv.LastAuthorize()
	if q.Get("client_id") != "agentry-test" || q.Get("scope") != "tools:read" || q.Get("audience") != "api://secure" {
		t.Fatalf("authorization request %v", q)
	}
	if a := f.srv.LastToken().Get("audience"); a != "api://secure" {
		t.Fatalf("token request audience %q", a)
	}
	if c := f.srv.Counts(); c.Registrations != 0 || c.CodeExchanges != 1 {
		t.Fatalf("counts %+v", c)
	}
	mustCall(t, f.srv.MCPURL, f.handler(t, o, nil))
}

func TestConfiguredEndpointsSkipDiscovery(t *testing.T) {
	f := newFixture(t, oauthtest.Options{NoDCR: true, Clients: map[string]string{"fixed": ""}})
	b := &browser{t: t}
	o := &config.MCPOAuthSettings{
		Enabled: true, ClientID: "fixed",
		AuthorizationURL: f.srv.URL + "/authorize", TokenURL: f.srv.URL + "/token",
	}
	mustCall(t, f.srv.MCPURL, f.handler(t, o, b.prompt))
	if q := f.srv.LastAuthorize(); q.Get("client_id") != "fixed" || q.Get("code_challenge_method") != "S256" || q.Get("resource") != f.srv.MCPURL {
		t.Fatalf("authorization request %v", q)
	}
}

func TestConfiguredRedirectURI(t *testing.T) {
	f := newFixture(t, oauthtest.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	redirect := fmt.Sprintf("http://localhost:%d/cb", port)
	b := &browser{t: t}
	if _, err := f.handler(t, &config.MCPOAuthSettings{RedirectURI: redirect}, b.prompt).Login(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := f.srv.LastAuthorize().Get("redirect_uri"); got != redirect {
		t.Fatalf("redirect_uri %q, want %q", got, redirect)
	}
}

func TestCallbackTimeout(t *testing.T) {
	f := newFixture(t, oauthtest.Options{})
	h, err := mcpauth.New(mcpauth.Config{Server: "secure", URL: f.srv.MCPURL, Store: f.store, Now: f.clock.Now,
		CallbackTimeout: time.Millisecond,
		Prompt:          func(context.Context, string, string) error { return nil }, // nobody opens it
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Login(t.Context()); !errors.Is(err, mcpauth.ErrCallbackTimeout) {
		t.Fatalf("got %v", err)
	}
}

func TestCallbackListenerAcceptsOneMatchingCallback(t *testing.T) {
	f := newFixture(t, oauthtest.Options{})
	var redirect string
	h, err := mcpauth.New(mcpauth.Config{Server: "secure", URL: f.srv.MCPURL, Store: f.store, Now: f.clock.Now,
		Prompt: func(ctx context.Context, _, authURL string) error {
			u, _ := url.Parse(authURL)
			redirect = u.Query().Get("redirect_uri")
			// Another path is not the callback; a callback without a
			// code is refused; neither ends the wait.
			for _, p := range []string{"/favicon.ico", "/oauth/callback?state=x"} {
				resp, err := http.Get(strings.TrimSuffix(redirect, "/oauth/callback") + p)
				if err != nil {
					return err
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					t.Errorf("%s answered 200", p)
				}
			}
			_, _, err := oauthtest.Browse(ctx, authURL)
			return err
		}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Login(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The listener is closed once the flow is over.
	if resp, err := http.Get(redirect); err == nil {
		resp.Body.Close()
		t.Fatalf("listener still answers after the flow: %d", resp.StatusCode)
	}
}

func TestRoundTripperForTransportsWithoutAnOAuthHook(t *testing.T) {
	f := newFixture(t, oauthtest.Options{})
	b := &browser{t: t}
	hc := &http.Client{Transport: mcpauth.RoundTripper(f.handler(t, &config.MCPOAuthSettings{Enabled: true}, b.prompt), nil)}
	post := func() int {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.srv.MCPURL, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post(); got != http.StatusOK {
		t.Fatalf("first request: %d", got)
	}
	if got := post(); got != http.StatusOK || b.count() != 1 {
		t.Fatalf("second request: %d, browser asked %d times", got, b.count())
	}
}

// TestConcurrentRefreshSpendsTheRefreshTokenOnce: sessions sharing the
// store (several stores on one directory, as processes have) refresh an
// expired token once; the others use the rotated result.
func TestConcurrentRefreshSpendsTheRefreshTokenOnce(t *testing.T) {
	f := newFixture(t, oauthtest.Options{})
	b := &browser{t: t}
	if _, err := f.handler(t, nil, b.prompt).Login(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(2 * time.Hour)
	const n = 4
	got := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		h, err := mcpauth.New(mcpauth.Config{Server: "secure", URL: f.srv.MCPURL, Store: mcpauth.NewStore(f.store.Dir()), Now: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			tok, err := h.Usable(t.Context())
			if err != nil || tok == nil {
				t.Errorf("session %d: %v %v", i, tok, err)
				return
			}
			got[i] = tok.Token.AccessToken
		})
	}
	wg.Wait()
	if c := f.srv.Counts(); c.Refreshes != 1 {
		t.Fatalf("%d refreshes, want 1", c.Refreshes)
	}
	for i := range got {
		if got[i] != got[0] {
			t.Fatalf("sessions got different tokens: %v", got)
		}
	}
}

func TestConfiguredIssuerMismatchIsRefused(t *testing.T) {
	f := newFixture(t, oauthtest.Options{NoDCR: true, Clients: map[string]string{"c": ""}})
	for name, o := range map[string]*config.MCPOAuthSettings{
		"discovery":  {ClientID: "c", Issuer: "https://other.example"},
		"configured": {ClientID: "c", Issuer: "https://other.example", AuthorizationURL: f.srv.URL + "/authorize", TokenURL: f.srv.URL + "/token"},
	} {
		b := &browser{t: t}
		_, err := f.handler(t, o, b.prompt).Login(t.Context())
		if err == nil || !strings.Contains(err.Error(), "does not match") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if tok, _ := f.store.Load("secure"); tok != nil {
		t.Fatal("a token was stored")
	}
}

// TestForbiddenKeepsTheToken: a 403 insufficient_scope is not a refused
// token: headless, the error says more scopes are needed, and the token
// stays stored.
func TestForbiddenKeepsTheToken(t *testing.T) {
	f := newFixture(t, oauthtest.Options{RequireScopes: []string{"admin"}})
	b := &browser{t: t}
	if _, err := f.handler(t, nil, b.prompt).Login(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, err := call(t, f.srv.MCPURL, f.handler(t, nil, nil))
	var are *mcpauth.AuthRequiredError
	if !errors.As(err, &are) || !are.InsufficientScope || are.Rejected || !strings.Contains(err.Error(), "needs a token with more OAuth scopes") {
		t.Fatalf("got %v, want the insufficient scope", err)
	}
	if tok, _ := f.store.Load("secure"); tok == nil {
		t.Fatal("the token was deleted on a 403")
	}
}
