package mcpauth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/agentry-dev/agentry/config"
)

// callbackPath is the redirect path when no redirectUri is configured
// (gemini-cli's REDIRECT_PATH).
const callbackPath = "/oauth/callback"

// callback is the loopback listener the browser is redirected to: it
// accepts one callback carrying the expected state, answers the browser
// with a short page and is then closed.
type callback struct {
	ln       net.Listener
	srv      *http.Server
	path     string
	redirect string

	mu       sync.Mutex
	expected string // the state the callback must carry; "" until known
	done     bool
	result   chan callbackResult // buffered, one value
}

type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

// listenCallback binds the listener: 127.0.0.1 on a free port, or the
// configured redirectUri's port (localhost binds 127.0.0.1).
func listenCallback(redirectURI string) (*callback, error) {
	host, port, path := "127.0.0.1", "0", callbackPath
	if redirectURI != "" {
		u, err := url.Parse(redirectURI)
		if err != nil || u.Scheme != "http" || !config.IsLoopbackHost(u.Hostname()) || u.Port() == "" {
			return nil, fmt.Errorf("mcpauth: redirectUri %q must be http://127.0.0.1:PORT/PATH or http://localhost:PORT/PATH", redirectURI)
		}
		if h := u.Hostname(); h != "localhost" {
			host = h
		}
		port, path = u.Port(), u.Path
		if path == "" {
			path = "/"
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("mcpauth: listening for the OAuth redirect: %w", err)
	}
	c := &callback{ln: ln, path: path, redirect: redirectURI, result: make(chan callbackResult, 1)}
	if c.redirect == "" {
		c.redirect = fmt.Sprintf("http://127.0.0.1:%d%s", ln.Addr().(*net.TCPAddr).Port, callbackPath)
	}
	c.srv = &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second}
	go c.srv.Serve(ln)
	return c, nil
}

// expect sets the state the callback must carry.
func (c *callback) expect(state string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expected = state
}

// finish delivers the one result.
func (c *callback) finish(r callbackResult) {
	c.done = true
	c.result <- r
}

// ServeHTTP answers the browser.
func (c *callback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != c.path {
		http.NotFound(w, r)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		http.Error(w, "This sign-in has already finished.", http.StatusGone)
		return
	}
	q := r.URL.Query()
	code, state := q.Get("code"), q.Get("state")
	if e := q.Get("error"); e != "" {
		page(w, http.StatusOK, "Authentication failed", "Error: "+e+" "+q.Get("error_description"))
		c.finish(callbackResult{err: fmt.Errorf("%w: %s %s", ErrAuthorizationDenied, e, q.Get("error_description"))})
		return
	}
	if code == "" || state == "" {
		http.Error(w, "Missing code or state parameter", http.StatusBadRequest)
		return
	}
	if c.expected == "" || state != c.expected {
		// gemini-cli fails the flow: a callback with another state is
		// someone else's, possibly a forged one.
		http.Error(w, "Invalid state parameter", http.StatusBadRequest)
		c.finish(callbackResult{err: ErrStateMismatch})
		return
	}
	page(w, http.StatusOK, "Authentication successful", "You can close this window and return to agentry.")
	c.finish(callbackResult{res: &auth.AuthorizationResult{Code: code, State: state, Iss: q.Get("iss")}})
}

func page(w http.ResponseWriter, status int, title, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body><h1>%s</h1><p>%s</p></body></html>\n",
		html.EscapeString(title), html.EscapeString(title), html.EscapeString(text))
}

// wait returns the callback's result, or an error when ctx ends or
// timeout passes first.
func (c *callback) wait(ctx context.Context, timeout time.Duration) (*auth.AuthorizationResult, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, ErrCallbackTimeout)
	defer cancel()
	select {
	case r := <-c.result:
		return r.res, r.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// close stops the listener; a browser page being answered is finished
// first.
func (c *callback) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := c.srv.Shutdown(ctx); err != nil {
		c.srv.Close()
	}
}

var errNoState = errors.New("mcpauth: authorization URL has no state")
