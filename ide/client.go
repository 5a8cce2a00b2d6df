package ide

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentry-dev/agentry/ide/idewire"
	"github.com/agentry-dev/agentry/internal/version"
)

// Limits of the connection.
const (
	// MaxContextBytes bounds an ide/contextUpdate notification's params;
	// a larger one is ignored and the last good context kept.
	MaxContextBytes = 1 << 20
	// MaxContextFiles bounds the open files of an ide/contextUpdate; one
	// with more is ignored and the last good context kept. gemini-cli
	// keeps 10 of them; the bound is against a broken companion.
	MaxContextFiles = 1000
	// DiffTimeout bounds each openDiff and closeDiff call, as gemini-cli's
	// IDE_REQUEST_TIMEOUT_MS. The wait for the user's answer after
	// openDiff returned is not bounded by it.
	DiffTimeout = 10 * time.Minute

	// maxEventBytes bounds how much of one server-sent event the
	// notification filter holds to look at it; a larger event goes to the
	// SDK unread (an IDE notification that large is then ignored). It is
	// well above an accepted diff's content of agentry's largest editable
	// file.
	maxEventBytes = 64 << 20
	// maxRetryDelay is the default backoff's longest delay between
	// reconnection attempts.
	maxRetryDelay = 30 * time.Second
	// reconnectTimeout bounds one reconnection attempt.
	reconnectTimeout = 10 * time.Second
	// closeGrace bounds the closeDiff calls Close makes for the diffs
	// still open in the editor, and again its wait for the companion to
	// end the session.
	closeGrace = time.Second
)

// Errors of the connection. Every error of OpenDiff means the editor gave
// no answer: the caller falls back to its normal confirmation.
var (
	// ErrNotConnected: there is no live connection to the companion — it
	// went away (the client is reconnecting) or the connection was lost
	// while the call was under way.
	ErrNotConnected = errors.New("ide: not connected to the IDE companion")
	// ErrClosed: the Client was closed.
	ErrClosed = errors.New("ide: the IDE client is closed")
	// ErrUnauthorized: the companion refused agentry's token.
	ErrUnauthorized = errors.New("ide: the IDE companion refused the token")
	// ErrNoDiffing: the companion does not offer openDiff and closeDiff.
	ErrNoDiffing = errors.New("ide: the IDE companion offers no diffs (openDiff and closeDiff)")
	// ErrDiffClosed: CloseDiff closed the view an OpenDiff was waiting on.
	ErrDiffClosed = errors.New("ide: the diff was closed by CloseDiff")
)

// Status texts, gemini-cli's (packages/core/src/ide/ide-client.ts).
const (
	textLost     = "IDE connection error. The connection was lost unexpectedly. Please try reconnecting by running /ide enable"
	textClosed   = "IDE connection closed. To reconnect, run /ide enable."
	textDisabled = "IDE integration disabled. To enable it again, run /ide enable."
	textNoConn   = "Failed to connect to IDE companion extension in %s. Please ensure the extension is running. To install the extension, run /ide install."
)

// Endpoint is a companion found by discovery: where to connect and with
// which token.
type Endpoint struct {
	// Port is the companion's MCP server port on 127.0.0.1.
	Port int
	// Token is the bearer token sent on every request; "" sends none.
	Token string
	// Workspace holds the validated workspace roots.
	Workspace []string
	// IDE names the editor; it may be nil.
	IDE *idewire.IDEInfo
	// File is the discovery file, "" when the endpoint came from the
	// environment.
	File string
}

// url is the companion's MCP endpoint. The host is always 127.0.0.1:
// gemini-cli's host.docker.internal inside containers is not followed, so
// the token never leaves the loopback interface (see the package
// documentation).
func (ep Endpoint) url() string {
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(ep.Port)) + idewire.MCPPath
}

// ideName is the editor's display name for status texts.
func (ep Endpoint) ideName() string {
	if ep.IDE != nil && ep.IDE.DisplayName != "" {
		return ep.IDE.DisplayName
	}
	return "IDE"
}

// State is a connection's state.
type State int

// States of a connection.
const (
	Disconnected State = iota
	Connecting
	Connected
)

// String names the state as gemini-cli's IDEConnectionStatus does.
func (s State) String() string {
	switch s {
	case Connected:
		return "connected"
	case Connecting:
		return "connecting"
	default:
		return "disconnected"
	}
}

// Status is the connection's state, with gemini-cli's detail text when
// disconnected.
type Status struct {
	State State
	// Details says why the connection is down (gemini-cli's texts).
	Details string
	// IDE is the editor's display name.
	IDE string
}

// String is gemini-cli's /ide status line: "🟢 Connected to VS Code",
// "🟡 Connecting..." or "🔴 Disconnected: <details>".
func (s Status) String() string {
	switch s.State {
	case Connected:
		return "🟢 Connected to " + s.IDE
	case Connecting:
		return "🟡 Connecting..."
	default:
		if s.Details == "" {
			return "🔴 Disconnected"
		}
		return "🔴 Disconnected: " + s.Details
	}
}

// DiffOutcome is the user's answer to a diff in the editor.
type DiffOutcome struct {
	// Accepted is true for ide/diffAccepted, false for ide/diffRejected
	// (or the older ide/diffClosed).
	Accepted bool
	// Content is the file's content as the user accepted it, which may
	// differ from the proposal; "" when rejected.
	Content string
}

// Option configures Connect.
type Option func(*options)

type options struct {
	rediscover func() (Endpoint, error)
	log        *slog.Logger
	backOff    func() backoff.BackOff
	after      func(time.Duration) <-chan time.Time
}

// WithRediscover sets how the client finds the companion again after
// losing it: a restarted companion has a new port and token, so this is
// normally discovery run again. Without it the client retries the
// endpoint it was given.
func WithRediscover(f func() (Endpoint, error)) Option {
	return func(o *options) { o.rediscover = f }
}

// WithLogger sets the logger (slog.Default() otherwise).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.log = l }
}

// WithBackOff sets the delays between reconnection attempts. The default
// grows from 500 ms to 30 s with jitter and never gives up; a BackOff that
// returns backoff.Stop waits its last delay again.
func WithBackOff(f func() backoff.BackOff) Option {
	return func(o *options) { o.backOff = f }
}

// WithAfter sets the clock the reconnection delays are waited on
// (time.After otherwise).
func WithAfter(f func(time.Duration) <-chan time.Time) Option {
	return func(o *options) { o.after = f }
}

// Client is a connection to an IDE companion. It keeps the editor's latest
// context, opens diffs in the editor, and reconnects when the companion
// goes away. Its methods are safe for concurrent use, and none blocks
// while the companion is down.
type Client struct {
	opts  options
	log   *slog.Logger
	base  *http.Transport // shared by the client's sessions; no proxy
	conns *connSet        // every TCP connection base has open

	// ctx ends at Close; every call derives from it.
	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup // the supervisor
	once   sync.Once

	// diffs is gemini-cli's diff mutex: one diff at a time.
	diffs chan struct{}
	// changed is signalled on each context change.
	changed chan struct{}
	// queued, a test hook, is called when an OpenDiff waits for another.
	queued func(path string)

	mu      sync.Mutex
	cur     *link // nil while disconnected
	closed  bool
	status  Status
	pending map[string]*pendingDiff // by file path
	ideCtx  idewire.Context
	seq     uint64 // accepted updates
	cleared bool   // the store was cleared since the last update
}

// link is one MCP session with a companion.
type link struct {
	ep      Endpoint
	sess    *mcp.ClientSession
	canDiff bool
	dead    bool // lost or closed; guarded by Client.mu
}

// pendingDiff is an OpenDiff waiting for the user's answer.
type pendingDiff struct {
	link *link
	ch   chan diffResult // capacity 1
}

type diffResult struct {
	out DiffOutcome
	err error
}

// Connect connects to the companion at ep: an MCP session over streamable
// HTTP to http://127.0.0.1:<port>/mcp with the token as a bearer token on
// every request, then tools/list. It fails when the companion cannot be
// reached or refuses the token (ErrUnauthorized); once it has succeeded,
// the Client reconnects on its own when the connection is lost.
//
// Connect takes a few milliseconds against a local companion and up to
// ctx's end against one that does not answer: callers run it in the
// background, never on agentry's start-up path (gemini-cli connects in
// the background too).
func Connect(ctx context.Context, ep Endpoint, opts ...Option) (*Client, error) {
	o := options{after: time.After}
	for _, opt := range opts {
		opt(&o)
	}
	if o.log == nil {
		o.log = slog.Default()
	}
	if o.rediscover == nil {
		o.rediscover = func() (Endpoint, error) { return ep, nil }
	}
	if o.backOff == nil {
		o.backOff = func() backoff.BackOff {
			return backoff.NewExponentialBackOff(
				backoff.WithInitialInterval(500*time.Millisecond),
				backoff.WithMultiplier(2),
				backoff.WithMaxInterval(maxRetryDelay),
				backoff.WithMaxElapsedTime(0),
			)
		}
	}
	c := &Client{
		opts:    o,
		log:     o.log,
		conns:   &connSet{m: make(map[net.Conn]struct{})},
		diffs:   make(chan struct{}, 1),
		changed: make(chan struct{}, 1),
		status:  Status{State: Connecting, IDE: ep.ideName()},
		pending: make(map[string]*pendingDiff),
	}
	c.base = &http.Transport{
		Proxy:               nil, // the companion is local: never through a proxy
		DialContext:         c.conns.dial,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
	}
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	l, err := c.dial(ctx, ep)
	if err != nil {
		c.cancel(ErrClosed)
		c.conns.closeAll()
		return nil, err
	}
	c.mu.Lock()
	c.cur = l
	c.status = Status{State: Connected, IDE: ep.ideName()}
	c.mu.Unlock()
	c.wg.Add(1)
	go c.supervise(l)
	return c, nil
}

// dial opens an MCP session with the companion at ep and lists its tools.
func (c *Client) dial(ctx context.Context, ep Endpoint) (*link, error) {
	if ep.Port < 1 || ep.Port > 65535 {
		return nil, fmt.Errorf("ide: the companion's port %d is not in 1-65535 (discovery file %q)", ep.Port, ep.File)
	}
	url := ep.url()
	l := &link{ep: ep}
	rt := &roundTripper{base: c.base, token: ep.Token, notify: func(method string, params json.RawMessage) {
		c.onNotify(l, method, params)
	}}
	hc := &http.Client{
		Transport: rt,
		// The token goes to the companion only, never where it redirects.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "agentry", Version: version.Version()}, &mcp.ClientOptions{
		// agentry serves no roots, sampling or elicitation to the IDE.
		Capabilities: &mcp.ClientCapabilities{},
		Logger:       c.log,
	})
	client.AddSendingMiddleware(legacyHandshake)
	sess, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: hc,
		// A broken stream is a lost companion: the client reconnects
		// through discovery (a restarted companion has a new port)
		// instead of the SDK resuming the old session.
		MaxRetries: -1,
	}, nil)
	if err != nil {
		return nil, connectError(ep, url, rt, err)
	}
	l.sess = sess
	// gemini-cli lists tools without looking at the server's capabilities,
	// and a failure leaves it without tools, still connected.
	var names []string
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			c.log.Debug("ide: listing the companion's tools", "err", err)
			names = nil
			break
		}
		names = append(names, t.Name)
	}
	l.canDiff = slices.Contains(names, idewire.ToolOpenDiff) && slices.Contains(names, idewire.ToolCloseDiff)
	c.log.Debug("ide: connected to the companion", "url", url, "tools", names)
	return l, nil
}

// connectError explains a failed connection.
func connectError(ep Endpoint, url string, rt *roundTripper, err error) error {
	switch code := rt.refused(); {
	case code != 0 && ep.Token == "":
		return fmt.Errorf("ide: the companion at %s refused a request without a token (HTTP %d): the discovery file %q has no authToken and %s is not set: %w",
			url, code, ep.File, idewire.EnvAuthToken, ErrUnauthorized)
	case code != 0:
		return fmt.Errorf("ide: the companion at %s refused the token (HTTP %d): the token of %q is not the running companion's (a stale discovery file?): %w",
			url, code, ep.File, ErrUnauthorized)
	}
	return fmt.Errorf("ide: connecting to the companion at %s: %w", url, err)
}

// legacyHandshake answers the SDK's server/discover probe itself, so the
// session starts with initialize at protocol 2025-11-25: the contract's
// notifications travel on the standalone SSE stream, which protocol
// 2026-07-28 removed. It also saves a round trip.
func legacyHandshake(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "server/discover" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "server/discover is not used with IDE companions"}
		}
		return next(ctx, method, req)
	}
}

// supervise waits for each session to end and reconnects, until Close.
func (c *Client) supervise(l *link) {
	defer c.wg.Done()
	for l != nil {
		err := l.sess.Wait()
		if c.ctx.Err() != nil {
			return
		}
		c.lost(l, err)
		// Tidy the lost session without waiting on a companion that may
		// not answer; Close drops whatever it still holds.
		go func(sess *mcp.ClientSession) {
			if cerr := sess.Close(); cerr != nil {
				c.log.Debug("ide: closing the lost session", "err", cerr)
			}
		}(l.sess)
		l = c.reconnect()
	}
}

// lost records that l's session ended: Disconnected, pending diffs
// failed, the context cleared (as gemini-cli clears its store).
func (c *Client) lost(l *link, err error) {
	text := textClosed
	if err != nil && !errors.Is(err, io.EOF) {
		text = textLost + "\n" + err.Error()
	}
	c.log.Info("ide: lost the connection to the companion", "err", err)
	c.mu.Lock()
	defer c.mu.Unlock()
	l.dead = true
	if c.cur == l {
		c.cur = nil
	}
	c.setStatusLocked(Disconnected, text, l.ep)
	c.failPendingLocked(fmt.Errorf("ide: the connection to the companion was lost: %w", ErrNotConnected))
	c.clearContextLocked()
}

// reconnect retries with backoff until a session is up (returned) or the
// client is closed (nil).
func (c *Client) reconnect() *link {
	bo := c.opts.backOff()
	bo.Reset()
	var last time.Duration
	for {
		d := bo.NextBackOff()
		if d == backoff.Stop {
			d = last
			if d <= 0 {
				d = maxRetryDelay // a BackOff that never started: do not spin
			}
		}
		last = d
		select {
		case <-c.opts.after(d):
		case <-c.ctx.Done():
			return nil
		}
		c.mu.Lock()
		c.setStatusLocked(Connecting, "", Endpoint{})
		c.mu.Unlock()
		ep, err := c.opts.rediscover()
		var (
			l    *link
			text string
		)
		if err != nil {
			text = err.Error() // discovery's own texts say why
		} else {
			ctx, cancel := context.WithTimeout(c.ctx, reconnectTimeout)
			l, err = c.dial(ctx, ep)
			cancel()
			if err != nil {
				text = fmt.Sprintf(textNoConn, ep.ideName())
			}
		}
		if c.ctx.Err() != nil {
			if l != nil {
				_ = l.sess.Close()
			}
			return nil
		}
		if err != nil {
			c.log.Debug("ide: reconnecting", "err", err, "next", d)
			c.mu.Lock()
			c.setStatusLocked(Disconnected, text, ep)
			c.mu.Unlock()
			continue
		}
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			_ = l.sess.Close()
			return nil
		}
		c.cur = l
		c.setStatusLocked(Connected, "", ep)
		c.mu.Unlock()
		c.log.Info("ide: reconnected to the companion", "port", ep.Port)
		return l
	}
}

// setStatusLocked moves to state s. As gemini-cli's setState, a repeated
// Disconnected keeps the first text. c.mu must be held.
func (c *Client) setStatusLocked(s State, details string, ep Endpoint) {
	if c.status.State == Disconnected && s == Disconnected {
		return
	}
	name := c.status.IDE
	if ep.Port != 0 {
		name = ep.ideName()
	}
	c.status = Status{State: s, Details: details, IDE: name}
}

// failPendingLocked ends every pending OpenDiff with err. c.mu must be held.
func (c *Client) failPendingLocked(err error) {
	for path, p := range c.pending {
		delete(c.pending, path)
		p.ch <- diffResult{err: err}
	}
}

// clearContextLocked empties the context store, as gemini-cli clears its
// store on disconnecting: Context reports (zero, 0) until the next update,
// whose counter still follows the last one, so that no value is ever
// reused. c.mu must be held.
func (c *Client) clearContextLocked() {
	if c.seq == 0 || c.cleared {
		return
	}
	c.ideCtx = idewire.Context{}
	c.cleared = true
	c.signal()
}

func (c *Client) signal() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// Context returns the editor's latest context as the companion sent it
// (not normalised: see package idecontext) and a counter that grows with
// each accepted ide/contextUpdate; (zero, 0) while there is none: before
// the first update, and from the loss of the connection (or Close) to the
// next update, as gemini-cli clears its store. The counter never repeats
// a value. Refused notifications (larger than MaxContextBytes, more than
// MaxContextFiles files, not an IdeContext) change nothing. The result is
// the caller's to modify.
func (c *Client) Context() (idewire.Context, uint64) {
	c.mu.Lock()
	v, n := c.ideCtx, c.seq
	if c.cleared {
		n = 0
	}
	c.mu.Unlock()
	return cloneContext(v), n
}

// Changed is signalled (buffered 1) on each change Context reports: an
// accepted update, and the store cleared.
func (c *Client) Changed() <-chan struct{} { return c.changed }

// CanDiff reports whether the client is connected and the companion lists
// openDiff and closeDiff.
func (c *Client) CanDiff() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur != nil && c.cur.canDiff
}

// Status returns the connection's state.
func (c *Client) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// OpenDiff shows newContent as a modifiable diff of path in the editor
// and waits for the user's answer: ide/diffAccepted (with the content the
// user accepted) or ide/diffRejected (or ide/diffClosed). As gemini-cli,
// one diff is open at a time: a second OpenDiff waits for the first to
// end. It returns an error when the companion reports one (isError, its
// text), when ctx ends (the editor's view stays open: CloseDiff closes
// it), when CloseDiff closes the view (ErrDiffClosed), when the
// connection is down or lost (ErrNotConnected) and when the client is
// closed (ErrClosed). On any error the caller falls back to its own
// confirmation.
func (c *Client) OpenDiff(ctx context.Context, path, newContent string) (DiffOutcome, error) {
	select {
	case c.diffs <- struct{}{}:
	default:
		if c.queued != nil {
			c.queued(path)
		}
		select {
		case c.diffs <- struct{}{}:
		case <-ctx.Done():
			return DiffOutcome{}, context.Cause(ctx)
		case <-c.ctx.Done():
			return DiffOutcome{}, ErrClosed
		}
	}
	defer func() { <-c.diffs }()

	c.mu.Lock()
	l := c.cur
	var err error
	switch {
	case c.closed:
		err = ErrClosed
	case l == nil:
		err = ErrNotConnected
	case !l.canDiff:
		err = ErrNoDiffing
	}
	if err != nil {
		c.mu.Unlock()
		return DiffOutcome{}, err
	}
	// Registered before the call: an answer may come before its result.
	p := &pendingDiff{link: l, ch: make(chan diffResult, 1)}
	c.pending[path] = p
	c.mu.Unlock()

	res, err := c.callTool(ctx, l, idewire.ToolOpenDiff, idewire.OpenDiffArgs{FilePath: path, NewContent: newContent})
	if err == nil {
		err = toolError(idewire.ToolOpenDiff, res)
	}
	if err != nil {
		c.forget(path, p)
		select {
		case r := <-p.ch: // answered (or failed) before the call's end
			return r.out, r.err
		default:
			return DiffOutcome{}, err
		}
	}
	select {
	case r := <-p.ch:
		return r.out, r.err
	case <-ctx.Done():
		c.forget(path, p)
		return DiffOutcome{}, context.Cause(ctx)
	}
}

// forget removes p from the pending diffs if it is still there.
func (c *Client) forget(path string, p *pendingDiff) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending[path] == p {
		delete(c.pending, path)
	}
}

// resolve ends the pending diff of path opened on l with r; it reports
// whether there was one.
func (c *Client) resolve(l *link, path string, r diffResult) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[path]
	if p == nil || p.link != l {
		return false
	}
	delete(c.pending, path)
	p.ch <- r
	return true
}

// CloseDiff closes the editor's diff view of path (closeDiff with
// suppressNotification, so the companion sends no ide/diffRejected) and
// returns the view's content when it closed, nil when the companion had
// none open. A pending OpenDiff of path ends with ErrDiffClosed. The
// companion's isError result is an error with its text.
func (c *Client) CloseDiff(ctx context.Context, path string) (*string, error) {
	c.mu.Lock()
	l, closed := c.cur, c.closed
	c.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if l == nil {
		return nil, ErrNotConnected
	}
	res, err := c.callTool(ctx, l, idewire.ToolCloseDiff, idewire.CloseDiffArgs{FilePath: path, SuppressNotification: true})
	c.resolve(l, path, diffResult{err: ErrDiffClosed})
	if err == nil {
		err = toolError(idewire.ToolCloseDiff, res)
	}
	if err != nil {
		return nil, err
	}
	return parseCloseDiff(res)
}

// parseCloseDiff reads closeDiff's result: a text block holding
// {"content": string|null}. No text block means no content, as in
// gemini-cli.
func parseCloseDiff(res *mcp.CallToolResult) (*string, error) {
	for _, part := range res.Content {
		t, ok := part.(*mcp.TextContent)
		if !ok || t.Text == "" {
			continue
		}
		var r idewire.CloseDiffResult
		if err := json.Unmarshal([]byte(t.Text), &r); err != nil {
			return nil, fmt.Errorf(`ide: closeDiff's result is not {"content": string|null}: %w`, err)
		}
		return r.Content, nil
	}
	return nil, nil
}

// toolError is the error an isError result reports, with the companion's
// text (gemini-cli's fallback text when it has none).
func toolError(tool string, res *mcp.CallToolResult) error {
	if !res.IsError {
		return nil
	}
	for _, part := range res.Content {
		if t, ok := part.(*mcp.TextContent); ok {
			return fmt.Errorf("ide: the companion's %s failed: %s", tool, t.Text)
		}
	}
	return fmt.Errorf("ide: the companion's %s failed: Tool '%s' reported an error.", tool, tool)
}

// callTool calls one of the companion's tools on l, bounded by
// DiffTimeout and ended by Close.
func (c *Client) callTool(ctx context.Context, l *link, name string, args any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, DiffTimeout,
		fmt.Errorf("ide: the companion did not answer %s within %v", name, DiffTimeout))
	defer cancel()
	ctx, cancelClose := context.WithCancelCause(ctx)
	stop := context.AfterFunc(c.ctx, func() { cancelClose(ErrClosed) })
	defer func() {
		stop()
		cancelClose(context.Canceled)
	}()
	res, err := l.sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err == nil {
		return res, nil
	}
	if cause := context.Cause(ctx); cause != nil {
		return nil, cause
	}
	if transportFailure(err) {
		return nil, fmt.Errorf("ide: %s: %w (%v)", name, ErrNotConnected, err)
	}
	return nil, fmt.Errorf("ide: the companion's %s: %w", name, err)
}

// transportFailure reports whether a call's error is the connection's
// rather than an error response of the companion: anything but a JSON-RPC
// error, or one of the codes the SDK's JSON-RPC layer itself uses for a
// closing or failed transport.
func transportFailure(err error) bool {
	var we *jsonrpc.Error
	if errors.Is(err, mcp.ErrConnectionClosed) || !errors.As(err, &we) {
		return true
	}
	switch we.Code {
	case -32003, -32004, -32005: // client closing, server closing, rejected by transport
		return true
	}
	return false
}

// onNotify handles one of the contract's notifications from l.
func (c *Client) onNotify(l *link, method string, params json.RawMessage) {
	switch method {
	case idewire.NotifyContextUpdate:
		v, err := decodeContext(params)
		if err != nil {
			c.log.Warn("ide: ignoring an ide/contextUpdate", "err", err)
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if l.dead {
			return
		}
		c.ideCtx = v
		c.seq++
		c.cleared = false
		c.signal()
	case idewire.NotifyDiffAccepted:
		var n idewire.DiffAccepted
		if err := decodeObject(params, &n); err != nil || n.FilePath == "" {
			c.log.Warn("ide: ignoring a malformed "+method, "err", err)
			return
		}
		if !c.resolve(l, n.FilePath, diffResult{out: DiffOutcome{Accepted: true, Content: n.Content}}) {
			c.log.Debug("ide: no diff is open for the answer", "method", method, "path", n.FilePath)
		}
	case idewire.NotifyDiffRejected, idewire.NotifyDiffClosed:
		var n idewire.DiffRejected
		if err := decodeObject(params, &n); err != nil || n.FilePath == "" {
			c.log.Warn("ide: ignoring a malformed "+method, "err", err)
			return
		}
		if !c.resolve(l, n.FilePath, diffResult{out: DiffOutcome{}}) {
			c.log.Debug("ide: no diff is open for the answer", "method", method, "path", n.FilePath)
		}
	}
}

// decodeContext decodes and bounds an ide/contextUpdate's params.
func decodeContext(params json.RawMessage) (idewire.Context, error) {
	var v idewire.Context
	if len(params) > MaxContextBytes {
		return v, fmt.Errorf("its params hold %d bytes, more than %d", len(params), MaxContextBytes)
	}
	if err := decodeObject(params, &v); err != nil {
		return idewire.Context{}, err
	}
	if ws := v.WorkspaceState; ws != nil && len(ws.OpenFiles) > MaxContextFiles {
		return idewire.Context{}, fmt.Errorf("it lists %d open files, more than %d", len(ws.OpenFiles), MaxContextFiles)
	}
	return v, nil
}

// decodeObject decodes params, which must be a JSON object, into v.
func decodeObject(params json.RawMessage, v any) error {
	b := bytes.TrimLeft(params, " \t\r\n")
	if len(b) == 0 || b[0] != '{' {
		return errors.New("its params are not a JSON object")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("its params: %w", err)
	}
	return nil
}

// cloneContext copies v deeply, so that callers may sort or trim it.
func cloneContext(v idewire.Context) idewire.Context {
	if v.WorkspaceState == nil {
		return v
	}
	ws := *v.WorkspaceState
	if ws.IsTrusted != nil {
		t := *ws.IsTrusted
		ws.IsTrusted = &t
	}
	ws.OpenFiles = slices.Clone(ws.OpenFiles)
	for i := range ws.OpenFiles {
		if cur := ws.OpenFiles[i].Cursor; cur != nil {
			cc := *cur
			ws.OpenFiles[i].Cursor = &cc
		}
	}
	return idewire.Context{WorkspaceState: &ws}
}

// Close closes the editor's diff views still open (closeDiff, briefly
// bounded), ends pending OpenDiff calls with ErrClosed, closes the session
// and stops reconnecting. The status becomes gemini-cli's "IDE integration
// disabled" text and the context is cleared. Close is idempotent and
// returns nil: a companion already gone is not an error.
func (c *Client) Close() error {
	c.once.Do(func() {
		c.mu.Lock()
		c.closed = true
		l := c.cur
		paths := slices.Sorted(maps.Keys(c.pending))
		c.mu.Unlock()
		if l != nil && len(paths) > 0 {
			ctx, cancel := context.WithTimeout(c.ctx, closeGrace)
			for _, p := range paths {
				_, err := l.sess.CallTool(ctx, &mcp.CallToolParams{Name: idewire.ToolCloseDiff, Arguments: idewire.CloseDiffArgs{FilePath: p, SuppressNotification: true}})
				if err != nil {
					c.log.Debug("ide: closing a diff at exit", "path", p, "err", err)
				}
			}
			cancel()
		}
		c.cancel(ErrClosed)
		c.mu.Lock()
		c.cur = nil
		if l != nil {
			l.dead = true
		}
		c.failPendingLocked(ErrClosed)
		c.setStatusLocked(Disconnected, textDisabled, Endpoint{})
		c.clearContextLocked()
		c.mu.Unlock()
		// End the session politely (DELETE), for a while: a companion
		// that does not answer loses its connections after closeGrace.
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			if l != nil {
				if err := l.sess.Close(); err != nil {
					c.log.Debug("ide: closing the session", "err", err)
				}
			}
		}()
		select {
		case <-ended:
		case <-time.After(closeGrace):
			c.log.Warn("ide: the companion did not end the session in time; dropping its connections")
		}
		c.conns.closeAll()
		<-ended
		c.wg.Wait()
	})
	return nil
}

// roundTripper adds the bearer token to every request, notes refusals,
// and takes the contract's notifications out of the server-sent event
// streams: the SDK's client has no handlers for custom notification
// methods (it drops them as unsupported before any middleware), so they
// are read here, on the way in, in stream order.
type roundTripper struct {
	base   http.RoundTripper
	token  string
	notify func(method string, params json.RawMessage)

	mu      sync.Mutex
	refusal int // the last 401 or 403 seen
}

func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.token != "" {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		t.mu.Lock()
		t.refusal = resp.StatusCode
		t.mu.Unlock()
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		resp.Body = newEventFilter(resp.Body, t.notify)
	}
	return resp, nil
}

func (t *roundTripper) refused() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.refusal
}

// notifyMethods are the notifications the filter takes out of streams.
var notifyMethods = map[string]bool{
	idewire.NotifyContextUpdate: true,
	idewire.NotifyDiffAccepted:  true,
	idewire.NotifyDiffRejected:  true,
	idewire.NotifyDiffClosed:    true,
}

// eventFilter reads a text/event-stream body and hands the contract's
// notifications to notify instead of passing them on; an event it takes
// out is replaced by its id (and retry) alone, which SSE readers treat as
// an empty event, so resumption bookkeeping is unchanged. Every other
// event passes byte for byte. Lines are split on '\n', as the SDK's
// reader splits them.
type eventFilter struct {
	body   io.ReadCloser
	r      *bufio.Reader
	notify func(method string, params json.RawMessage)

	limit     int    // maxEventBytes
	out       []byte // ready for Read
	ev        []byte // the current event's raw lines
	pass      bool   // the current event outgrew limit: pass it on as read
	lineStart bool   // the next bytes start a line
	err       error
}

func newEventFilter(body io.ReadCloser, notify func(string, json.RawMessage)) *eventFilter {
	return &eventFilter{body: body, r: bufio.NewReader(body), notify: notify, limit: maxEventBytes, lineStart: true}
}

func (f *eventFilter) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.step()
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

func (f *eventFilter) Close() error { return f.body.Close() }

// step reads one line, or one buffer's worth of a long line.
func (f *eventFilter) step() {
	line, err := f.r.ReadSlice('\n')
	if len(line) > 0 {
		complete := line[len(line)-1] == '\n'
		blank := f.lineStart && complete && (len(line) == 1 || (len(line) == 2 && line[0] == '\r'))
		f.lineStart = complete
		switch {
		case f.pass:
			f.out = append(f.out, line...)
			if blank {
				f.pass = false
			}
		case blank:
			f.ev = append(f.ev, line...)
			f.dispatch()
		default:
			f.ev = append(f.ev, line...)
			if len(f.ev) > f.limit {
				f.out = append(f.out, f.ev...)
				f.ev = f.ev[:0]
				f.pass = true
			}
		}
	}
	if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
		// The end of the body: what is left of an event goes on as is.
		f.out = append(f.out, f.ev...)
		f.ev = nil
		f.err = err
	}
}

// dispatch decides on the complete event in f.ev.
func (f *eventFilter) dispatch() {
	ev := f.ev
	defer func() {
		// The buffer is reused for the next event, unless it grew large.
		if cap(ev) <= 1<<20 {
			f.ev = ev[:0]
		} else {
			f.ev = nil
		}
	}()
	var name, id, retry string
	var data []byte
	hasData := false
	for raw := range bytes.Lines(ev) {
		line := bytes.TrimRight(raw, "\r\n")
		if len(line) == 0 || line[0] == ':' {
			continue
		}
		k, v, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			f.out = append(f.out, ev...) // malformed: the SDK's to judge
			return
		}
		switch string(k) {
		case "event":
			name = string(bytes.TrimSpace(v))
		case "id":
			id = string(bytes.TrimSpace(v))
		case "retry":
			retry = string(bytes.TrimSpace(v))
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimSpace(v)...)
			hasData = true
		}
	}
	if (name != "" && name != "message") || !hasData {
		f.out = append(f.out, ev...)
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(data, &msg) != nil || msg.ID != nil || !notifyMethods[msg.Method] {
		f.out = append(f.out, ev...)
		return
	}
	f.notify(msg.Method, msg.Params)
	if id != "" {
		f.out = append(f.out, "id: "+id+"\n"...)
		if retry != "" {
			f.out = append(f.out, "retry: "+retry+"\n"...)
		}
		f.out = append(f.out, '\n')
	}
}

// connSet tracks the TCP connections of a Client's HTTP transport, so that
// Close can drop them all, requests under way included.
type connSet struct {
	mu     sync.Mutex
	m      map[net.Conn]struct{}
	closed bool
}

var dialer = &net.Dialer{Timeout: 5 * time.Second}

func (s *connSet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		conn.Close()
		return nil, ErrClosed
	}
	s.m[conn] = struct{}{}
	return &trackedConn{Conn: conn, set: s}, nil
}

// closeAll closes every connection and refuses new ones.
func (s *connSet) closeAll() {
	s.mu.Lock()
	s.closed = true
	conns := slices.Collect(maps.Keys(s.m))
	clear(s.m)
	s.mu.Unlock()
	for _, conn := range conns {
		conn.Close()
	}
}

type trackedConn struct {
	net.Conn
	set  *connSet
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.set.mu.Lock()
		delete(c.set.m, c.Conn)
		c.set.mu.Unlock()
	})
	return c.Conn.Close()
}
