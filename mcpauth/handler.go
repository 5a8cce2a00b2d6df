// Package mcpauth is OAuth for remote MCP servers, as gemini-cli's
// mcp/oauth-provider.ts, oauth-token-storage.ts and oauth-utils.ts do it:
// a Handler is the MCP Go SDK's auth.OAuthHandler for one server. It sends
// the server's stored token (refreshed before it expires, the refresh
// token's rotation kept), and on a 401 walks the authorization code flow
// — discovery, dynamic client registration or a configured client, PKCE
// S256 and state — with the browser step on a loopback listener, then
// stores the token (Store: one 0600 file per server). Without anyone to do
// the browser step (Config.Prompt nil) it fails with an AuthRequiredError
// telling the user to run `agentry mcp auth NAME`.
//
// The discovery flow is the SDK's auth.AuthorizationCodeHandler; this
// package adds what the SDK lacks: the token store, the refresh with an
// injectable clock, the loopback listener, configured endpoints
// (authorizationUrl/tokenUrl), configured scopes and audiences, and the
// headless error.
package mcpauth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/agentry-dev/agentry/config"
)

// Sentinel errors.
var (
	// ErrAuthRequired is wrapped by AuthRequiredError.
	ErrAuthRequired = errors.New("mcpauth: authorization required")
	// ErrStateMismatch is returned when the browser comes back with a
	// state other than the one sent.
	ErrStateMismatch = errors.New("mcpauth: OAuth state mismatch (possible CSRF); authorization refused")
	// ErrCallbackTimeout is returned when the browser does not come back
	// in time.
	ErrCallbackTimeout = errors.New("mcpauth: timed out waiting for the browser to return from the authorization server")
	// ErrAuthorizationDenied is returned when the authorization server
	// redirects back with an error.
	ErrAuthorizationDenied = errors.New("mcpauth: authorization denied")
)

// AuthRequiredError says that a server needs a token no one can obtain
// now: a headless run, or a server without oauth.enabled.
type AuthRequiredError struct {
	// Server is the server's name.
	Server string
	// Rejected is set when the server refused the stored token.
	Rejected bool
	// InsufficientScope is set when the server answered 403 with
	// error="insufficient_scope": the stored token is kept.
	InsufficientScope bool
}

// Error names the server and the command that authorizes it.
func (e *AuthRequiredError) Error() string {
	if e.InsufficientScope {
		return fmt.Sprintf("mcp server %q needs a token with more OAuth scopes; run \"agentry mcp auth %s\" to authorize again", e.Server, e.Server)
	}
	if e.Rejected {
		return fmt.Sprintf("mcp server %q rejected its stored OAuth token; run \"agentry mcp auth %s\" to authorize again", e.Server, e.Server)
	}
	return fmt.Sprintf("mcp server %q needs OAuth authorization; run \"agentry mcp auth %s\"", e.Server, e.Server)
}

// Unwrap returns ErrAuthRequired.
func (e *AuthRequiredError) Unwrap() error { return ErrAuthRequired }

// DefaultCallbackTimeout is how long the browser step may take
// (gemini-cli's 5 minutes).
const DefaultCallbackTimeout = 5 * time.Minute

// refreshBefore is how long before its expiry a token is refreshed
// (gemini-cli's 5-minute buffer).
const refreshBefore = 5 * time.Minute

// Prompt shows the user the authorization URL to open: agentry prints it
// on the terminal.
type Prompt func(ctx context.Context, server, authURL string) error

// Config configures a Handler.
type Config struct {
	// Server is the server's name in mcpServers; URL its MCP endpoint.
	Server, URL string
	// OAuth is the server's oauth settings; nil means none (discovery,
	// dynamic registration, no automatic flow).
	OAuth *config.MCPOAuthSettings
	// Store keeps the tokens; required.
	Store *Store
	// Prompt shows the authorization URL; nil means no one can do the
	// browser step (headless), and a server without a usable token fails
	// with an AuthRequiredError.
	Prompt Prompt
	// HTTPClient makes the OAuth requests (metadata, registration, token);
	// nil means a client with a 30-second timeout.
	HTTPClient *http.Client
	// Now is the clock expiries are computed and checked with; nil means
	// time.Now.
	Now func() time.Time
	// CallbackTimeout bounds the browser step; zero means
	// DefaultCallbackTimeout.
	CallbackTimeout time.Duration
	// Logger receives the flow's events, never a token; nil means
	// slog.Default().
	Logger *slog.Logger
}

// Handler is one server's auth.OAuthHandler. Its methods are safe for
// concurrent use.
type Handler struct {
	cfg    Config
	client *http.Client
	log    *slog.Logger

	mu       sync.Mutex // guards the stored token's refresh
	flowMu   sync.Mutex // one authorization flow at a time
	hadToken bool       // a stored token was used or dropped (guarded by mu)
}

var _ auth.OAuthHandler = (*Handler)(nil)

// New returns the Handler for one server.
func New(cfg Config) (*Handler, error) {
	if cfg.Store == nil {
		return nil, errors.New("mcpauth: Config.Store is required")
	}
	if cfg.Server == "" || cfg.URL == "" {
		return nil, errors.New("mcpauth: Config.Server and Config.URL are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.CallbackTimeout <= 0 {
		cfg.CallbackTimeout = DefaultCallbackTimeout
	}
	if cfg.OAuth == nil {
		cfg.OAuth = &config.MCPOAuthSettings{}
	}
	h := &Handler{cfg: cfg, log: cfg.Logger}
	if h.log == nil {
		h.log = slog.Default()
	}
	h.log = h.log.With("mcp_server", cfg.Server)
	base := cfg.HTTPClient
	if base == nil {
		base = &http.Client{Timeout: 30 * time.Second}
	}
	h.client = base
	if len(cfg.OAuth.Audiences) > 0 {
		c := *base
		rt := c.Transport
		if rt == nil {
			rt = http.DefaultTransport
		}
		c.Transport = audienceTransport{base: rt, audience: strings.Join(cfg.OAuth.Audiences, " ")}
		h.client = &c
	}
	return h, nil
}

// TokenSource returns the source of the stored token; it refreshes the
// token before it expires, and yields no token (so the request goes out
// without one, is answered 401 and Authorize runs) when none is stored
// or refreshing failed (the stored token is then deleted).
func (h *Handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	return &storeSource{h: h, ctx: ctx}, nil
}

type storeSource struct {
	h   *Handler
	ctx context.Context
}

func (s *storeSource) Token() (*oauth2.Token, error) {
	t, err := s.h.usable(s.ctx)
	if err != nil || t == nil {
		return nil, err
	}
	return &oauth2.Token{AccessToken: t.Token.AccessToken, TokenType: "Bearer", RefreshToken: t.Token.RefreshToken, Expiry: t.Expiry()}, nil
}

// Usable returns the stored token, refreshed first when it expires within
// five minutes; nil when there is none or it could not be refreshed (a
// failed refresh deletes it).
func (h *Handler) Usable(ctx context.Context) (*Token, error) {
	return h.usable(ctx)
}

func (h *Handler) usable(ctx context.Context) (*Token, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, err := h.cfg.Store.Load(h.cfg.Server)
	if err != nil || t == nil {
		return nil, err
	}
	h.hadToken = true
	if !expiring(t, h.cfg.Now()) {
		return t, nil
	}
	if t.Token.RefreshToken == "" || t.TokenURL == "" {
		h.log.Debug("stored MCP OAuth token expired and cannot be refreshed")
		return nil, nil
	}
	unlock, err := h.cfg.Store.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	// Another session or process may have refreshed it meanwhile.
	if t, err = h.cfg.Store.Load(h.cfg.Server); err != nil || t == nil {
		return nil, err
	}
	if !expiring(t, h.cfg.Now()) {
		return t, nil
	}
	nt, err := h.refresh(ctx, t)
	if err != nil {
		h.log.Warn("refreshing the MCP OAuth token failed; the stored token is deleted", "err", err)
		if _, derr := h.cfg.Store.Delete(h.cfg.Server); derr != nil {
			return nil, derr
		}
		return nil, nil
	}
	return nt, nil
}

// expiring reports whether t expires within refreshBefore of now.
func expiring(t *Token, now time.Time) bool {
	return t.Token.ExpiresAt != 0 && !now.Add(refreshBefore).Before(t.Expiry())
}

// refresh exchanges t's refresh token and stores the result, keeping the
// old refresh token when the server sends no new one.
func (h *Handler) refresh(ctx context.Context, t *Token) (*Token, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	oc := &oauth2.Config{
		ClientID:     t.ClientID,
		ClientSecret: t.ClientSecret,
		Endpoint:     oauth2.Endpoint{TokenURL: t.TokenURL, AuthStyle: oauth2.AuthStyleInParams},
		Scopes:       h.cfg.OAuth.Scopes,
	}
	if h.cfg.OAuth.ClientID != "" && h.cfg.OAuth.ClientID == t.ClientID {
		oc.ClientSecret = h.cfg.OAuth.ClientSecret
	}
	// An empty, expired token makes the source refresh at once.
	tok, err := oc.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, h.client), &oauth2.Token{RefreshToken: t.Token.RefreshToken}).Token()
	if err != nil {
		return nil, fmt.Errorf("mcpauth: refreshing token: %w", err)
	}
	nt := h.record(tok, t.ClientID, oc.ClientSecret, t.TokenURL)
	if nt.Token.RefreshToken == "" {
		nt.Token.RefreshToken = t.Token.RefreshToken
	}
	if nt.Token.Scope == "" {
		nt.Token.Scope = t.Token.Scope
	}
	if err := h.cfg.Store.Save(nt); err != nil {
		return nil, err
	}
	h.log.Debug("MCP OAuth token refreshed", "token", nt)
	return nt, nil
}

// record builds the stored form of an oauth2 token.
func (h *Handler) record(tok *oauth2.Token, clientID, clientSecret, tokenURL string) *Token {
	now := h.cfg.Now()
	t := &Token{
		Server:       h.cfg.Server,
		Token:        TokenValue{AccessToken: tok.AccessToken, TokenType: tok.TokenType, RefreshToken: tok.RefreshToken},
		ClientID:     clientID,
		ClientSecret: clientSecret,
		TokenURL:     tokenURL,
		ServerURL:    h.cfg.URL,
		UpdatedAt:    now.UnixMilli(),
	}
	if t.Token.TokenType == "" {
		t.Token.TokenType = "Bearer"
	}
	if s, ok := tok.Extra("scope").(string); ok {
		t.Token.Scope = s
	}
	switch {
	case tok.ExpiresIn > 0:
		t.Token.ExpiresAt = now.Add(time.Duration(tok.ExpiresIn) * time.Second).UnixMilli()
	case !tok.Expiry.IsZero():
		t.Token.ExpiresAt = tok.Expiry.UnixMilli()
	}
	return t
}

// Authorize is called by the transport on a 401 (or 403): a refused
// stored token is deleted, and the authorization flow is walked when
// someone can do the browser step and the flow may start by itself
// (oauth.enabled, or the server had a token before); otherwise it returns
// an AuthRequiredError.
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	defer io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode == http.StatusForbidden {
		cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
		if !insufficientScope(cs) {
			return nil // retried once; the 403 then reaches the caller
		}
	}
	h.flowMu.Lock()
	defer h.flowMu.Unlock()

	sent, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	h.mu.Lock()
	stored, err := h.cfg.Store.Load(h.cfg.Server)
	if err != nil {
		h.mu.Unlock()
		return err
	}
	rejected, scope := false, resp.StatusCode == http.StatusForbidden
	switch {
	case scope:
		// insufficient_scope: the token stays; a new flow may widen it.
	case stored != nil && sent != "" && stored.Token.AccessToken == sent:
		h.log.Warn("MCP server refused the stored OAuth token; it is deleted")
		if _, err := h.cfg.Store.Delete(h.cfg.Server); err != nil {
			h.mu.Unlock()
			return err
		}
		rejected = true
	case stored != nil && !expiring(stored, h.cfg.Now()):
		// Another request stored a newer token meanwhile: retry with it.
		h.mu.Unlock()
		return nil
	}
	rejected = rejected || h.hadToken
	h.mu.Unlock()

	if h.cfg.Prompt == nil || !(h.cfg.OAuth.Enabled || rejected) {
		return &AuthRequiredError{Server: h.cfg.Server, Rejected: rejected && !scope, InsufficientScope: scope}
	}
	_, err = h.flow(ctx, req, resp)
	return err
}

func insufficientScope(cs []oauthex.Challenge) bool {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["error"] == "insufficient_scope" {
			return true
		}
	}
	return false
}

// Login walks the authorization flow now, whatever is stored, and stores
// the token: `agentry mcp auth NAME`. It needs Config.Prompt.
func (h *Handler) Login(ctx context.Context) (*Token, error) {
	if h.cfg.Prompt == nil {
		return nil, &AuthRequiredError{Server: h.cfg.Server}
	}
	h.flowMu.Lock()
	defer h.flowMu.Unlock()
	// Ask the server for its challenge (gemini-cli sends a HEAD); a server
	// that does not answer 401 still gets the well-known discovery.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.cfg.URL, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"ping"}`))
	if err != nil {
		return nil, fmt.Errorf("mcpauth: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp := &http.Response{StatusCode: http.StatusUnauthorized, Header: http.Header{}, Body: http.NoBody}
	if r, err := h.client.Do(req); err == nil {
		io.Copy(io.Discard, io.LimitReader(r.Body, 1<<16))
		r.Body.Close()
		if r.StatusCode == http.StatusUnauthorized || r.StatusCode == http.StatusForbidden {
			resp.Header = r.Header
		}
	} else {
		h.log.Debug("probing the MCP server for its OAuth challenge failed", "err", err)
	}
	return h.flow(ctx, req, resp)
}

// flow walks the authorization code flow and stores the token.
func (h *Handler) flow(ctx context.Context, req *http.Request, resp *http.Response) (*Token, error) {
	o := h.cfg.OAuth
	cb, err := listenCallback(o.RedirectURI)
	if err != nil {
		return nil, err
	}
	defer cb.close()
	fetch := func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		u, err := url.Parse(args.URL)
		if err != nil {
			return nil, fmt.Errorf("mcpauth: authorization URL: %w", err)
		}
		q := u.Query()
		if q.Get("state") == "" {
			return nil, errNoState
		}
		cb.expect(q.Get("state"))
		if len(o.Audiences) > 0 && q.Get("audience") == "" {
			q.Set("audience", strings.Join(o.Audiences, " "))
			u.RawQuery = q.Encode()
		}
		h.log.Debug("waiting for the OAuth redirect", "redirect", cb.redirect)
		if err := h.cfg.Prompt(ctx, h.cfg.Server, u.String()); err != nil {
			return nil, err
		}
		return cb.wait(ctx, h.cfg.CallbackTimeout)
	}
	var saved *Token
	save := func(tok *oauth2.Token, oc *oauth2.Config) error {
		t := h.record(tok, oc.ClientID, oc.ClientSecret, oc.Endpoint.TokenURL)
		h.mu.Lock()
		defer h.mu.Unlock()
		if err := h.cfg.Store.Save(t); err != nil {
			return err
		}
		h.hadToken = true
		saved = t
		return nil
	}
	if o.AuthorizationURL != "" {
		err = h.configuredFlow(ctx, cb.redirect, fetch, save)
	} else {
		err = h.discoveryFlow(ctx, req, resp, cb.redirect, fetch, save)
	}
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: OAuth authorization: %w", h.cfg.Server, err)
	}
	if saved == nil {
		return nil, fmt.Errorf("mcp server %q: OAuth authorization obtained no token", h.cfg.Server)
	}
	h.log.Debug("MCP OAuth token stored", "token", saved, "path", h.cfg.Store.Path(h.cfg.Server))
	return saved, nil
}

// discoveryFlow is the SDK's AuthorizationCodeHandler: protected resource
// metadata from the challenge or the well-known paths, authorization
// server metadata, the configured client or dynamic registration, PKCE,
// state and iss checks, the code exchange.
func (h *Handler) discoveryFlow(ctx context.Context, req *http.Request, resp *http.Response, redirect string, fetch auth.AuthorizationCodeFetcher, save func(*oauth2.Token, *oauth2.Config) error) error {
	o := h.cfg.OAuth
	hc := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: fetch,
		RequestRefreshToken:      true,
		Client:                   h.client,
		NewTokenSource: func(ctx context.Context, oc *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			if err := save(tok, oc); err != nil {
				return nil, err
			}
			return &storeSource{h: h, ctx: ctx}, nil
		},
	}
	if o.ClientID != "" {
		cc := &oauthex.ClientCredentials{ClientID: o.ClientID, Issuer: o.Issuer}
		if o.ClientSecret != "" {
			cc.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: o.ClientSecret}
		}
		hc.PreregisteredClient = cc
	} else {
		hc.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: clientMetadata(redirect, o.Scopes)}
	}
	ach, err := auth.NewAuthorizationCodeHandler(hc)
	if err != nil {
		return err
	}
	r := *resp
	r.Body = http.NoBody
	r.StatusCode = http.StatusUnauthorized
	if len(o.Scopes) > 0 {
		r.Header = withScopes(resp.Header, o.Scopes)
	}
	return ach.Authorize(ctx, req, &r)
}

// clientMetadata is what agentry registers as, dynamically (RFC 7591): a
// public client with PKCE, redirected to the loopback callback.
func clientMetadata(redirect string, scopes []string) *oauthex.ClientRegistrationMetadata {
	return &oauthex.ClientRegistrationMetadata{
		ClientName:              "agentry",
		RedirectURIs:            []string{redirect},
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		TokenEndpointAuthMethod: "none",
		Scope:                   strings.Join(scopes, " "),
	}
}

// withScopes returns h with its Bearer challenge's scope replaced by
// scopes (the SDK requests the challenge's scopes), keeping its
// resource_metadata.
func withScopes(h http.Header, scopes []string) http.Header {
	cs, _ := oauthex.ParseWWWAuthenticate(h.Values("WWW-Authenticate"))
	params := []string{fmt.Sprintf("scope=%q", strings.Join(scopes, " "))}
	for _, c := range cs {
		if rm := c.Params["resource_metadata"]; rm != "" {
			params = append(params, fmt.Sprintf("resource_metadata=%q", rm))
			break
		}
	}
	out := h.Clone()
	if out == nil {
		out = http.Header{}
	}
	out.Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	return out
}

// configuredFlow is the flow with oauth.authorizationUrl and tokenUrl:
// no discovery (gemini-cli skips it then), the configured client or
// registration at oauth.registrationUrl, PKCE S256, the state and, with
// oauth.issuer, the iss parameter checked.
func (h *Handler) configuredFlow(ctx context.Context, redirect string, fetch auth.AuthorizationCodeFetcher, save func(*oauth2.Token, *oauth2.Config) error) error {
	o := h.cfg.OAuth
	oc := &oauth2.Config{
		ClientID:     o.ClientID,
		ClientSecret: o.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: o.AuthorizationURL, TokenURL: o.TokenURL, AuthStyle: oauth2.AuthStyleInParams},
		RedirectURL:  redirect,
		Scopes:       o.Scopes,
	}
	if oc.ClientID == "" {
		if o.RegistrationURL == "" {
			return errors.New("no oauth.clientId is configured and no registration endpoint is known (set oauth.clientId or oauth.registrationUrl)")
		}
		reg, err := oauthex.RegisterClient(ctx, o.RegistrationURL, clientMetadata(redirect, o.Scopes), h.client)
		if err != nil {
			return fmt.Errorf("registering the client: %w", err)
		}
		oc.ClientID, oc.ClientSecret = reg.ClientID, reg.ClientSecret
	}
	verifier := oauth2.GenerateVerifier()
	state := rand.Text()
	resource := resourceParam(h.cfg.URL)
	res, err := fetch(ctx, &auth.AuthorizationArgs{URL: oc.AuthCodeURL(state,
		oauth2.S256ChallengeOption(verifier),
		oauth2.SetAuthURLParam("resource", resource))})
	if err != nil {
		return err
	}
	if res.State != state {
		return ErrStateMismatch
	}
	if o.Issuer != "" && strings.TrimSuffix(res.Iss, "/") != strings.TrimSuffix(o.Issuer, "/") {
		return fmt.Errorf("authorization response issuer %q does not match oauth.issuer %q (possible mix-up attack)", res.Iss, o.Issuer)
	}
	tok, err := oc.Exchange(context.WithValue(ctx, oauth2.HTTPClient, h.client), res.Code,
		oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	if err != nil {
		return fmt.Errorf("token exchange failed: %w", err)
	}
	return save(tok, oc)
}

// resourceParam is gemini-cli's buildResourceParameter: the URL without
// query or fragment.
func resourceParam(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return endpoint
	}
	return u.Scheme + "://" + u.Host + u.Path
}

// audienceTransport adds the configured audiences to token requests
// (authorization code and refresh grants), which the SDK and oauth2 do
// not send.
type audienceTransport struct {
	base     http.RoundTripper
	audience string
}

func (t audienceTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPost || r.Body == nil || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		return t.base.RoundTrip(r)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	form, err := url.ParseQuery(string(body))
	if err == nil && form.Get("grant_type") != "" && form.Get("audience") == "" {
		form.Set("audience", t.audience)
		body = []byte(form.Encode())
	}
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(strings.NewReader(string(body)))
	r2.ContentLength = int64(len(body))
	r2.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(string(body))), nil }
	return t.base.RoundTrip(r2)
}
