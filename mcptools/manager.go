package mcptools

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentry-dev/agentry/internal/childproc"
	"github.com/agentry-dev/agentry/internal/envredact"

	"github.com/agentry-dev/agentry/tools"
)

// ErrClosed is the cause of calls and connections stopped by Manager.Close.
var ErrClosed = errors.New("mcptools: manager closed")

// stdioGrace is how long a stdio server gets to exit after its stdin is
// closed (and again after SIGTERM) before it is killed. The spec asks for a
// grace period; it is short because Close blocks on it.
const stdioGrace = 2 * time.Second

// Manager owns the connections to the configured MCP servers. Its methods
// are safe for concurrent use.
type Manager struct {
	log     *slog.Logger
	oauth   OAuthFunc
	names   []string // sorted, so tool naming is deterministic
	servers map[string]*server

	// ctx is cancelled by Close; connections and calls derive from it so
	// that Close does not wait for a long call (the SDK's session Close
	// waits for outgoing calls).
	ctx    context.Context
	cancel context.CancelCauseFunc

	closeOnce sync.Once
	closeErr  error
}

// New validates cfg and returns a Manager. It does not connect: Tools does.
func New(cfg Config) (*Manager, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	env, expandEnv := cfg.Env, cfg.ExpandEnv
	if expandEnv == nil {
		expandEnv = env
	}
	if env == nil {
		env = envredact.Default().Environ(os.Environ())
	}
	if expandEnv == nil {
		expandEnv = os.Environ()
	}
	impl := &mcp.Implementation{Name: cfg.ClientName, Version: cfg.ClientVersion}
	if impl.Name == "" {
		impl.Name = "agentry"
	}
	if impl.Version == "" {
		impl.Version = "dev"
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	m := &Manager{
		log:     log,
		names:   slices.Sorted(maps.Keys(cfg.Servers)),
		servers: make(map[string]*server, len(cfg.Servers)),
		ctx:     ctx,
		cancel:  cancel,
		oauth:   cfg.OAuth,
	}
	for name, sc := range cfg.Servers {
		m.servers[name] = &server{
			m:         m,
			name:      name,
			cfg:       sc,
			env:       slices.Clone(env),
			expandEnv: slices.Clone(expandEnv),
			impl:      impl,
			log:       log.With("mcp_server", name),
			calls:     make(map[string]*progressSink),
		}
	}
	return m, nil
}

// Tools connects to every server that is not connected yet (concurrently),
// lists its tools and returns them, filtered by each server's includeTools
// and excludeTools. A server that cannot be reached or listed contributes
// an error naming it; the other servers' tools are still returned.
//
// A tool keeps its MCP name when no other server offers the same name; when
// several do, each is named "<server>__<tool>" (gemini-cli's qualified
// form). Names are sanitised to [A-Za-z0-9_.-] and at most 63 characters.
func (m *Manager) Tools(ctx context.Context) ([]tools.Tool, []error) {
	lists := make([][]*mcp.Tool, len(m.names))
	errs := make([]error, len(m.names))
	var wg sync.WaitGroup
	for i, name := range m.names {
		wg.Go(func() {
			lists[i], errs[i] = m.servers[name].listTools(ctx)
		})
	}
	wg.Wait()

	// Count sanitised names across servers to find collisions. Every
	// colliding tool is qualified, not just the later ones as in gemini-cli,
	// because connections finish in any order and names must not depend on
	// it.
	count := make(map[string]int)
	for _, list := range lists {
		for _, t := range list {
			count[sanitizeName(t.Name)]++
		}
	}
	var out []tools.Tool
	taken := make(map[string]bool)
	var errOut []error
	for i, name := range m.names {
		if errs[i] != nil {
			errOut = append(errOut, errs[i])
			continue
		}
		srv := m.servers[name]
		for _, t := range lists[i] {
			n := sanitizeName(t.Name)
			if count[n] > 1 {
				n = sanitizeName(name + "__" + t.Name)
			}
			if taken[n] {
				errOut = append(errOut, fmt.Errorf("mcp server %q: tool %q: name %q is already taken after sanitising; skipped", name, t.Name, n))
				continue
			}
			taken[n] = true
			out = append(out, newTool(srv, n, t))
		}
	}
	return out, errOut
}

// Close stops every call in flight, closes every session and stops every
// stdio server: its stdin is closed, and if it has not exited after a short
// grace it is terminated; then its whole process group is killed, so that
// children it started do not outlive it. Close is idempotent; calls made
// after it fail with ErrClosed.
func (m *Manager) Close() error {
	m.closeOnce.Do(func() {
		m.cancel(ErrClosed)
		errs := make([]error, len(m.names))
		var wg sync.WaitGroup
		for i, name := range m.names {
			wg.Go(func() {
				srv := m.servers[name]
				srv.mu.Lock()
				defer srv.mu.Unlock()
				errs[i] = srv.closeLocked()
			})
		}
		wg.Wait()
		m.closeErr = errors.Join(errs...)
	})
	return m.closeErr
}

// pid returns the process id of a stdio server's current process, or 0. It
// is a hook for tests.
func (m *Manager) pid(server string) int {
	srv := m.servers[server]
	if srv == nil {
		return 0
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.cmd == nil || srv.cmd.Process == nil {
		return 0
	}
	return srv.cmd.Process.Pid
}

// server is one configured MCP server and its current connection.
type server struct {
	m         *Manager
	name      string
	cfg       ServerConfig
	env       []string // base environment of a stdio server
	expandEnv []string // what $VAR in env and headers expand from
	impl      *mcp.Implementation
	log       *slog.Logger

	// mu guards the connection state below. It is held while connecting,
	// so concurrent calls after a crash wait for one restart rather than
	// starting several servers.
	mu        sync.Mutex
	sess      *mcp.ClientSession
	cmd       *exec.Cmd        // the stdio server's process, nil for HTTP
	guard     *childproc.Guard // kills cmd's group if agentry dies first
	dead      bool             // sess failed; the next use reconnects
	connected bool             // a session was established at least once
	tools     map[string]*mcp.Tool

	promptState // prompts.go

	// Progress routing: the SDK delivers every progress notification of a
	// client to one handler, so calls register a sink under a fresh token.
	callsMu   sync.Mutex
	calls     map[string]*progressSink
	nextToken atomic.Uint64
}

// listTools connects if needed and lists the server's enabled tools.
func (s *server) listTools(ctx context.Context) ([]*mcp.Tool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.sessionLocked(ctx); err != nil {
		return nil, err
	}
	if err := s.refreshLocked(ctx); err != nil {
		return nil, err
	}
	return slices.SortedFunc(maps.Values(s.tools), func(a, b *mcp.Tool) int {
		return strings.Compare(a.Name, b.Name)
	}), nil
}

// session returns a live session, reconnecting (and, for a stdio server,
// restarting it and listing its tools again) if the previous one died.
// listed reports whether the tools were listed again.
func (s *server) session(ctx context.Context) (sess *mcp.ClientSession, listed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	wasConnected := s.connected
	sess, err = s.sessionLocked(ctx)
	if err != nil {
		return nil, false, err
	}
	if sess != nil && wasConnected && s.tools == nil {
		// A restart: the new process may offer different tools.
		if err := s.refreshLocked(ctx); err != nil {
			return nil, false, err
		}
		return s.sess, true, nil
	}
	return sess, false, nil
}

// sessionLocked returns the live session, connecting first if there is
// none or it died. s.mu must be held.
func (s *server) sessionLocked(ctx context.Context) (*mcp.ClientSession, error) {
	if err := context.Cause(s.m.ctx); err != nil {
		return nil, fmt.Errorf("mcp server %q: %w", s.name, err)
	}
	if s.sess != nil && !s.dead {
		return s.sess, nil
	}
	if s.sess != nil {
		s.log.Info("mcp server died; restarting")
		if err := s.closeLocked(); err != nil {
			s.log.Debug("closing dead mcp session", "err", err)
		}
	}
	ctx, cancel := s.scope(ctx, setupTimeout(s.cfg))
	defer cancel()
	if err := s.connectLocked(ctx); err != nil {
		if c := context.Cause(ctx); c != nil {
			err = fmt.Errorf("%w (%w)", err, c)
		}
		return nil, fmt.Errorf("mcp server %q: connecting: %w", s.name, err)
	}
	return s.sess, nil
}

// refreshLocked lists the server's tools into s.tools. s.mu must be held.
func (s *server) refreshLocked(ctx context.Context) error {
	ctx, cancel := s.scope(ctx, setupTimeout(s.cfg))
	defer cancel()
	found := make(map[string]*mcp.Tool)
	if caps := s.sess.InitializeResult().Capabilities; caps == nil || caps.Tools == nil {
		// Like gemini-cli, only ask servers that offer tools.
		s.tools = found
		return nil
	}
	for t, err := range s.sess.Tools(ctx, nil) {
		if err != nil {
			if ctx.Err() == nil && !isWireError(err) {
				// The connection failed, not the caller's patience.
				s.dead = true
			}
			if c := context.Cause(ctx); c != nil {
				err = fmt.Errorf("%w (%w)", err, c)
			}
			return fmt.Errorf("mcp server %q: listing tools: %w", s.name, err)
		}
		if t.Name == "" || !enabled(s.cfg, t.Name) {
			continue
		}
		found[t.Name] = t
	}
	s.tools = found
	return nil
}

// timeoutError is the cause of a context ended by a server's timeout.
type timeoutError struct {
	server string
	d      time.Duration
}

func (e timeoutError) Error() string {
	return fmt.Sprintf("mcp server %q: timed out after %s", e.server, e.d)
}

// scope derives a context from ctx that also ends when the Manager closes
// or after d, with a cause saying which.
func (s *server) scope(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(s.m.ctx, func() { cancel(context.Cause(s.m.ctx)) })
	tctx, tcancel := context.WithTimeoutCause(ctx, d, timeoutError{s.name, d})
	return tctx, func() {
		tcancel()
		stop()
		cancel(context.Canceled)
	}
}

// connectLocked starts or dials the server and initialises a session.
func (s *server) connectLocked(ctx context.Context) error {
	client := mcp.NewClient(s.impl, &mcp.ClientOptions{
		// agentry serves no roots, sampling or elicitation, so it
		// advertises nothing rather than the SDK's default roots.
		Capabilities:                &mcp.ClientCapabilities{},
		ProgressNotificationHandler: s.onProgress,
		PromptListChangedHandler:    s.onPromptsChanged,
	})
	var (
		transport mcp.Transport
		cmd       *exec.Cmd
		stderrW   *os.File
	)
	if s.cfg.Command != "" {
		cmd = exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Dir = s.cfg.Cwd
		cmd.Env = s.environ()
		childproc.Prepare(cmd)
		// An *os.File, not a writer, so exec does not copy stderr in a
		// goroutine that Wait would wait for: a grandchild holding stderr
		// open must not block the server's shutdown.
		r, w, err := os.Pipe()
		if err != nil {
			return fmt.Errorf("stderr pipe: %w", err)
		}
		cmd.Stderr = w
		stderrW = w
		go s.logStderr(r)
		transport = watchedTransport{
			CommandTransport: &mcp.CommandTransport{Command: cmd, TerminateDuration: stdioGrace},
			guard:            &s.guard,
		}
	} else {
		transport = &mcp.StreamableClientTransport{
			Endpoint:     endpoint(s.cfg),
			HTTPClient:   &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: s.headers()}},
			OAuthHandler: s.oauthHandler(),
		}
	}
	sess, err := client.Connect(ctx, transport, nil)
	if stderrW != nil {
		stderrW.Close() // the child has its copy
	}
	if err != nil {
		if cmd != nil && cmd.Process != nil {
			// The SDK closes the session on most failures, but not all:
			// make sure nothing of a half-started server stays behind.
			killProcessGroup(cmd.Process.Pid)
		}
		s.guard.Close()
		s.guard = nil
		return err
	}
	s.sess, s.cmd, s.dead, s.connected, s.tools = sess, cmd, false, true, nil
	if cmd != nil {
		s.log.Info("mcp server started", "pid", cmd.Process.Pid)
	} else {
		s.log.Info("mcp server connected", "url", endpoint(s.cfg))
	}
	// Notice a server that exits between calls, so the next call restarts
	// it instead of failing once first.
	go func() {
		err := sess.Wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.sess == sess && !s.dead {
			s.log.Warn("mcp server connection ended", "err", err)
			s.dead = true
		}
	}()
	return nil
}

// closeLocked closes the session and makes sure a stdio server's process
// group is gone. s.mu must be held.
func (s *server) closeLocked() error {
	sess, cmd := s.sess, s.cmd
	s.sess, s.cmd, s.tools = nil, nil, nil
	if sess == nil {
		return nil
	}
	err := sess.Close()
	if cmd != nil && cmd.Process != nil {
		// The leader has been reaped by now (the transport's Close waits
		// for it), but children in its group may live on.
		killProcessGroup(cmd.Process.Pid)
	}
	s.guard.Close()
	s.guard = nil
	if err != nil && (cmd == nil || !isExitError(err)) {
		return fmt.Errorf("mcp server %q: closing: %w", s.name, err)
	}
	return nil
}

// watchedTransport starts a stdio server and, as soon as it runs, a
// watchdog that kills the server's process group if agentry dies.
type watchedTransport struct {
	*mcp.CommandTransport
	guard **childproc.Guard // where to keep the watchdog; guarded by server.mu
}

// Connect starts the server process.
func (t watchedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.CommandTransport.Connect(ctx)
	if err == nil {
		// Watch fails only when the server has already exited; the
		// session then fails on its own.
		*t.guard, _ = childproc.Watch(t.Command.Process.Pid)
	}
	return conn, err
}

// isExitError reports whether err is only a stdio server's non-zero exit
// status, which is what closing a killed or crashed server returns.
func isExitError(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee)
}

// markDead records that sess failed, so the next call reconnects, and
// closes it now so a stdio server's remains are cleaned up at once.
func (s *server) markDead(sess *mcp.ClientSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess != sess {
		return // already replaced
	}
	s.dead = true
	if err := s.closeLocked(); err != nil {
		s.log.Debug("closing failed mcp session", "err", err)
	}
}

// environ returns a stdio server's environment: the base environment plus
// the configured variables, whose values may refer to base variables.
func (s *server) environ() []string {
	env := slices.Clone(s.env)
	keys := slices.Sorted(maps.Keys(s.cfg.Env))
	for _, k := range keys {
		// exec.Cmd keeps the last of duplicate keys, so appending overrides.
		env = append(env, k+"="+s.expand(s.cfg.Env[k]))
	}
	return env
}

// headers returns the configured HTTP headers, expanded like env values.
func (s *server) headers() map[string]string {
	h := make(map[string]string, len(s.cfg.Headers))
	for k, v := range s.cfg.Headers {
		h[k] = s.expand(v)
	}
	return h
}

// expand replaces $VAR and ${VAR} in v from the expansion environment.
func (s *server) expand(v string) string {
	return os.Expand(v, func(k string) string {
		for i := len(s.expandEnv) - 1; i >= 0; i-- {
			if name, val, ok := strings.Cut(s.expandEnv[i], "="); ok && name == k {
				return val
			}
		}
		return ""
	})
}

// logStderr logs a stdio server's stderr line by line at debug level, as
// gemini-cli does in debug mode. It ends when every holder of the pipe has
// exited.
func (s *server) logStderr(r io.ReadCloser) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		s.log.Debug("mcp server stderr", "line", sc.Text())
	}
}

// progressSink collects one call's progress notifications; the SDK's
// handler goroutine appends and the calling goroutine forwards them to
// Call.Output, which must be called from the executing goroutine.
type progressSink struct {
	mu      sync.Mutex
	pending []string
	ready   chan struct{} // capacity 1: "pending is non-empty"
}

func (p *progressSink) add(s string) {
	p.mu.Lock()
	p.pending = append(p.pending, s)
	p.mu.Unlock()
	select {
	case p.ready <- struct{}{}:
	default:
	}
}

func (p *progressSink) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.pending
	p.pending = nil
	return out
}

// register returns a fresh progress token and its sink.
func (s *server) register() (string, *progressSink) {
	tok := "agentry-" + strconv.FormatUint(s.nextToken.Add(1), 10)
	sink := &progressSink{ready: make(chan struct{}, 1)}
	s.callsMu.Lock()
	s.calls[tok] = sink
	s.callsMu.Unlock()
	return tok, sink
}

func (s *server) unregister(tok string) {
	s.callsMu.Lock()
	delete(s.calls, tok)
	s.callsMu.Unlock()
}

// onProgress routes a progress notification to the call that owns its
// token. Notifications for finished or unknown calls are dropped.
func (s *server) onProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p := req.Params
	if p == nil {
		return
	}
	s.callsMu.Lock()
	sink := s.calls[fmt.Sprint(p.ProgressToken)]
	s.callsMu.Unlock()
	if sink != nil {
		sink.add(formatProgress(p))
	}
}

// formatProgress renders a notification as one line of live output, e.g.
// "step 2 (2/3)".
func formatProgress(p *mcp.ProgressNotificationParams) string {
	num := strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total > 0 {
		num += "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
	}
	if p.Message == "" {
		return "progress " + num + "\n"
	}
	return p.Message + " (" + num + ")\n"
}

// isWireError reports whether err is an error response from the server,
// which proves the connection works, as opposed to a transport failure.
func isWireError(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we)
}

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

// RoundTrip implements http.RoundTripper.
func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(r)
}

// sanitizeName makes name a valid function name the way gemini-cli's
// generateValidName did before it added the mcp_ prefix: characters outside
// [A-Za-z0-9_.-] become '_', and a name longer than 63 characters keeps its
// first 28 and last 32 with "___" between.
func sanitizeName(name string) string {
	name = strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' {
			return c
		}
		return '_'
	}, name)
	if len(name) > 63 {
		name = name[:28] + "___" + name[len(name)-32:]
	}
	return name
}
