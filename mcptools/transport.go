package mcptools

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/internal/childproc"
)

// transportKind is how a server is reached.
type transportKind int

const (
	kindStdio      transportKind = iota
	kindStreamable               // httpUrl, or url with type "http"
	kindSSE                      // url with type "sse"
	kindAuto                     // url without type: streamable HTTP, else SSE
)

// kindOf returns the transport a server's settings ask for, as gemini-cli's
// createUrlTransport decides it: httpUrl is streamable HTTP; url is
// streamable HTTP with type "http", SSE with type "sse", and without a type
// streamable HTTP with a fallback to SSE when connecting fails.
func kindOf(c ServerConfig) transportKind {
	switch {
	case c.Command != "":
		return kindStdio
	case c.HTTPURL != "":
		return kindStreamable
	case c.Type == config.MCPTypeHTTP:
		return kindStreamable
	case c.Type == config.MCPTypeSSE:
		return kindSSE
	}
	return kindAuto
}

// started is what connecting a transport left to clean up.
type started struct {
	cmd     *exec.Cmd // a stdio server's process
	stderrW *os.File  // the write end of its stderr pipe, closed once connected
}

// newTransport builds the client transport of one connection attempt of
// the given kind (never kindAuto). Every transport a server speaks is built
// here, so that what applies to all of them (headers, the HTTP client) is
// in one place.
func (s *server) newTransport(kind transportKind, st *started, status *httpStatus) (mcp.Transport, error) {
	switch kind {
	case kindStdio:
		cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Dir = s.cfg.Cwd
		cmd.Env = s.environ()
		childproc.Prepare(cmd)
		// An *os.File, not a writer, so exec does not copy stderr in a
		// goroutine that Wait would wait for: a grandchild holding stderr
		// open must not block the server's shutdown.
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("stderr pipe: %w", err)
		}
		cmd.Stderr = w
		st.cmd, st.stderrW = cmd, w
		go s.logStderr(r)
		return watchedTransport{
			CommandTransport: &mcp.CommandTransport{Command: cmd, TerminateDuration: stdioGrace},
			guard:            &s.guard,
		}, nil
	case kindSSE:
		// The SDK's SSE client has no OAuth hook: the handler wraps the
		// HTTP transport instead.
		return sseTransport{
			SSEClientTransport: &mcp.SSEClientTransport{Endpoint: endpoint(s.cfg), HTTPClient: s.httpClient(s.authTransport(http.DefaultTransport), status)},
			life:               s.m.ctx,
		}, nil
	default:
		return &mcp.StreamableClientTransport{
			Endpoint:     endpoint(s.cfg),
			HTTPClient:   s.httpClient(http.DefaultTransport, status),
			OAuthHandler: s.oauthHandler(),
		}, nil
	}
}

// httpClient is the HTTP client of an HTTP server's connection over base:
// the configured headers on every request, and the last response status
// noted for the SSE fallback.
func (s *server) httpClient(base http.RoundTripper, status *httpStatus) *http.Client {
	return &http.Client{Transport: headerTransport{base: base, headers: s.headers(), status: status}}
}

// connectTransport connects client to the server, trying SSE after a
// failed streamable HTTP attempt for a url without a type (gemini-cli's
// connectToMcpServer), unless the server refused the credentials.
func (s *server) connectTransport(ctx context.Context, client *mcp.Client) (*mcp.ClientSession, started, error) {
	kind := kindOf(s.cfg)
	first := kind
	if kind == kindAuto {
		first = kindStreamable
	}
	var st started
	var status httpStatus
	t, err := s.newTransport(first, &st, &status)
	if err != nil {
		return nil, st, err
	}
	sess, err := client.Connect(ctx, t, nil)
	if err == nil || kind != kindAuto || ctx.Err() != nil || status.unauthorized() {
		return sess, st, err
	}
	s.log.Debug("streamable HTTP connection failed; trying SSE", "err", err)
	var sseStatus httpStatus
	t, terr := s.newTransport(kindSSE, &st, &sseStatus)
	if terr != nil {
		return nil, st, err
	}
	sess, sseErr := client.Connect(ctx, t, nil)
	if sseErr != nil {
		// As gemini-cli, report the first attempt's failure.
		return nil, st, errors.Join(err, fmt.Errorf("SSE fallback: %w", sseErr))
	}
	s.log.Info("mcp server speaks SSE", "url", endpoint(s.cfg))
	return sess, st, nil
}

// httpStatus notes whether an HTTP server answered 401.
type httpStatus struct{ unauth atomic.Bool }

func (h *httpStatus) unauthorized() bool { return h != nil && h.unauth.Load() }

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	status  *httpStatus
}

// RoundTrip implements http.RoundTripper.
func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	resp, err := t.base.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusUnauthorized && t.status != nil {
		t.status.unauth.Store(true)
	}
	return resp, err
}

// sseTransport keeps an SSE connection's event stream open after Connect
// returns: the SDK's SSE client reads the stream with the context Connect
// was given, which for agentry is the setup's, bounded by the setup
// timeout. The stream lives with the Manager instead; ctx still bounds the
// connecting.
type sseTransport struct {
	*mcp.SSEClientTransport
	life context.Context
}

// Connect opens the event stream.
func (t sseTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	cctx, cancel := context.WithCancelCause(t.life)
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	conn, err := t.SSEClientTransport.Connect(cctx)
	if !stop() {
		// ctx ended while connecting: cctx was cancelled with it.
		if err == nil {
			conn.Close()
			err = context.Cause(ctx)
		}
		return nil, err
	}
	if err != nil {
		cancel(err)
		return nil, err
	}
	return conn, nil
}
