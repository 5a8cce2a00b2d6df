package mcptools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
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

// Manager owns the connections to the configured MCP servers and the
// current set of their tools. Its methods are safe for concurrent use.
//
// A Manager is a runtime.ToolSource: Version and Current give the tools as
// the servers last listed them, which changes when a server announces a
// new list (notifications/tools/list_changed), when a lazily started
// server lists tools other than its cached ones, or when a restarted
// server does.
type Manager struct {
	log     *slog.Logger
	oauth   OAuthFunc
	names   []string // sorted, so tool naming is deterministic
	servers map[string]*server
	list    []*server // in names' order
	taken   map[string]bool

	// ctx is cancelled by Close; connections and calls derive from it so
	// that Close does not wait for a long call (the SDK's session Close
	// waits for outgoing calls).
	ctx    context.Context
	cancel context.CancelCauseFunc

	buildMu  sync.Mutex // serialises rebuild
	set      atomic.Pointer[toolSet]
	resource [2]tools.Tool // list_mcp_resources, read_mcp_resource

	closeOnce sync.Once
	closeErr  error
}

// toolSet is one version of the Manager's tools.
type toolSet struct {
	version uint64
	tools   []tools.Tool
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
	baseEnv := func() []string { return env }
	switch {
	case env != nil:
	case cfg.EnvFunc != nil:
		baseEnv = sync.OnceValue(cfg.EnvFunc)
	default:
		baseEnv = sync.OnceValue(func() []string { return envredact.Default().Environ(os.Environ()) })
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
		taken:   make(map[string]bool, len(cfg.Taken)),
		ctx:     ctx,
		cancel:  cancel,
		oauth:   cfg.OAuth,
	}
	for _, n := range cfg.Taken {
		m.taken[n] = true
	}
	m.resource = [2]tools.Tool{&listResources{m: m}, &readResource{m: m}}
	m.set.Store(&toolSet{})
	for _, name := range m.names {
		sc := cfg.Servers[name]
		srv := &server{
			m:         m,
			name:      name,
			cfg:       sc,
			env:       baseEnv,
			expandEnv: expandEnv,
			impl:      impl,
			log:       log.With("mcp_server", name),
			calls:     make(map[string]*progressSink),
		}
		if cfg.CacheDir != "" {
			path, err := cachePath(cfg.CacheDir, sc)
			if err != nil {
				return nil, fmt.Errorf("mcp server %q: %w", name, err)
			}
			srv.cachePath = path
			lazy := cfg.Lazy
			if sc.Lazy != nil {
				lazy = *sc.Lazy
			}
			if l, enc := readCache(path); l != nil && lazy {
				// Declared from the cache; started on first use.
				srv.setLists(l)
				srv.enc = enc
				srv.lazy = true
			}
		}
		m.servers[name] = srv
		m.list = append(m.list, srv)
	}
	return m, nil
}

// Tools connects to every server that is not connected yet (concurrently),
// lists its tools and returns them, filtered by each server's includeTools
// and excludeTools. A lazy server (one whose tools are cached, unless its
// lazy setting or Config.Lazy says otherwise) is not started: its cached
// tools are returned, and it starts on its first call. A server that
// cannot be reached or listed contributes an error naming it; the other
// servers' tools are still returned.
//
// A tool keeps its MCP name when no other server offers the same name; when
// several do, each is named "<server>__<tool>" (gemini-cli's qualified
// form). Names are sanitised to [A-Za-z0-9_.-] and at most 63 characters.
// When some server offers resources, list_mcp_resources and
// read_mcp_resource are among the tools.
func (m *Manager) Tools(ctx context.Context) ([]tools.Tool, []error) {
	errs := make([]error, len(m.list))
	var wg sync.WaitGroup
	for i, srv := range m.list {
		if srv.lazy {
			srv.log.Debug("mcp server starts on first use; its tools are cached", "cache", srv.cachePath)
			continue
		}
		wg.Go(func() {
			_, _, errs[i] = srv.session(ctx)
		})
	}
	wg.Wait()
	m.rebuild()
	var errOut []error
	for _, err := range errs {
		if err != nil {
			errOut = append(errOut, err)
		}
	}
	return m.Current(), errOut
}

// Version returns the version of the current tools; it changes whenever
// Current would return another set. When a server has announced a new
// list, Version lists it first, so that the request about to be sent
// declares it; otherwise it only reads a flag per server.
func (m *Manager) Version() uint64 {
	for _, srv := range m.list {
		if srv.changes.Load() != srv.seen.Load() {
			srv.refreshIfStale()
		}
	}
	return m.set.Load().version
}

// Current returns the servers' tools as last listed (or cached).
func (m *Manager) Current() []tools.Tool { return m.set.Load().tools }

// rebuild computes the tools from every server's lists and publishes
// them as a new version.
func (m *Manager) rebuild() {
	m.buildMu.Lock()
	defer m.buildMu.Unlock()
	all := make([]*lists, len(m.list))
	for i, srv := range m.list {
		all[i] = srv.lists.Load()
	}
	// Count sanitised names across servers to find collisions. Every
	// colliding tool is qualified, not just the later ones as in gemini-cli,
	// because connections finish in any order and names must not depend on
	// it.
	count := make(map[string]int)
	resources := false
	for _, l := range all {
		if l == nil {
			continue
		}
		for _, t := range l.Tools {
			count[sanitizeName(t.Name)]++
		}
		resources = resources || len(l.Resources) > 0
	}
	var out []tools.Tool
	taken := make(map[string]bool)
	for i, srv := range m.list {
		if all[i] == nil {
			continue
		}
		for _, t := range all[i].Tools {
			n := sanitizeName(t.Name)
			if count[n] > 1 {
				n = sanitizeName(srv.name + "__" + t.Name)
			}
			switch {
			case m.taken[n]:
				srv.log.Warn("MCP tool left out: a built-in tool has its name, or tools.exclude names it", "tool", n)
				continue
			case taken[n]:
				srv.log.Warn("MCP tool left out: its name is already taken after sanitising", "tool", t.Name, "name", n)
				continue
			}
			taken[n] = true
			out = append(out, newTool(srv, n, t))
		}
	}
	if resources {
		// gemini-cli offers the resource tools only while some server
		// has listed a resource (ToolRegistry.isActiveTool).
		for _, t := range m.resource {
			if !m.taken[t.Name()] && !taken[t.Name()] {
				out = append(out, t)
			}
		}
	}
	prev := m.set.Load()
	m.set.Store(&toolSet{version: prev.version + 1, tools: out})
}

// Close stops every call in flight, closes every session and stops every
// stdio server: its stdin is closed, and if it has not exited after a short
// grace it is terminated; then its whole process group is killed, so that
// children it started do not outlive it. Close is idempotent; calls made
// after it fail with ErrClosed.
func (m *Manager) Close() error {
	m.closeOnce.Do(func() {
		m.cancel(ErrClosed)
		errs := make([]error, len(m.list))
		var wg sync.WaitGroup
		for i, srv := range m.list {
			wg.Go(func() {
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
	env       func() []string // base environment of a stdio server
	expandEnv []string        // what $VAR in env and headers expand from; not changed
	impl      *mcp.Implementation
	log       *slog.Logger
	cachePath string // "" when nothing is cached
	lazy      bool   // started on first use rather than by Tools

	// lists is what the server offers as last listed, or as cached; nil
	// before either. It is replaced, never changed.
	lists atomic.Pointer[lists]
	// started is set once a session was established.
	started atomic.Bool
	// changes counts the server's announcements of a changed list; seen
	// is the count the last listing covers (written under mu).
	changes, seen atomic.Uint64

	// mu guards the connection state below. It is held while connecting,
	// so concurrent calls after a crash wait for one restart rather than
	// starting several servers.
	mu    sync.Mutex
	sess  *mcp.ClientSession
	cmd   *exec.Cmd        // the stdio server's process, nil for HTTP
	guard *childproc.Guard // kills cmd's group if agentry dies first
	dead  bool             // sess failed; the next use reconnects
	enc   []byte           // lists as last encoded for the cache

	promptState // prompts.go

	// Progress routing: the SDK delivers every progress notification of a
	// client to one handler, so calls register a sink under a fresh token.
	callsMu   sync.Mutex
	calls     map[string]*progressSink
	nextToken atomic.Uint64
}

// setLists publishes l as the server's lists.
func (s *server) setLists(l *lists) {
	s.lists.Store(l)
}

// tool returns the server's tool called name as last listed, or nil.
func (s *server) tool(name string) *mcp.Tool {
	l := s.lists.Load()
	if l == nil {
		return nil
	}
	for _, t := range l.Tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// cachedPrompts returns the server's prompts as last listed or cached,
// without starting it.
func (s *server) cachedPrompts() []*mcp.Prompt {
	if l := s.lists.Load(); l != nil {
		return l.Prompts
	}
	return nil
}

// session returns a live session, connecting first if the server has not
// been started yet (a lazy server's first use) or if the previous session
// died (a stdio server is restarted). A new session's tools, resources and
// prompts are listed; listed reports that they were.
func (s *server) session(ctx context.Context) (sess *mcp.ClientSession, listed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, fresh, err := s.sessionLocked(ctx)
	if err != nil {
		return nil, false, err
	}
	if fresh {
		if err := s.refreshLocked(ctx); err != nil {
			return nil, false, err
		}
	}
	return sess, fresh, nil
}

// sessionLocked returns the live session, connecting first if there is
// none or it died; fresh reports a new session. s.mu must be held.
func (s *server) sessionLocked(ctx context.Context) (sess *mcp.ClientSession, fresh bool, err error) {
	if err := context.Cause(s.m.ctx); err != nil {
		return nil, false, fmt.Errorf("mcp server %q: %w", s.name, err)
	}
	if s.sess != nil && !s.dead {
		return s.sess, false, nil
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
		return nil, false, fmt.Errorf("mcp server %q: connecting: %w", s.name, err)
	}
	return s.sess, true, nil
}

// refreshLocked lists the server's tools, resources and prompts. When
// they differ from what was known (listed before, or cached), they
// replace it, the cache is written and the Manager's tools are rebuilt.
// s.mu must be held.
func (s *server) refreshLocked(ctx context.Context) error {
	ctx, cancel := s.scope(ctx, setupTimeout(s.cfg))
	defer cancel()
	l := &lists{Tools: []*mcp.Tool{}}
	caps := s.sess.InitializeResult().Capabilities
	if caps != nil && caps.Tools != nil {
		// Like gemini-cli, only ask servers that offer tools.
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
			l.Tools = append(l.Tools, t)
		}
		slices.SortFunc(l.Tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	}
	if caps != nil && caps.Resources != nil {
		// resources/list, every page (gemini-cli's listResources).
		for r, err := range s.sess.Resources(ctx, nil) {
			if err != nil {
				s.log.Warn("listing mcp resources failed; the server offers none", "err", err)
				l.Resources = nil
				break
			}
			if r.URI != "" {
				l.Resources = append(l.Resources, r)
			}
		}
	}
	if caps != nil && caps.Prompts != nil {
		for p, err := range s.sess.Prompts(ctx, nil) {
			if err != nil {
				s.log.Warn("listing mcp prompts failed; the server offers none", "err", err)
				l.Prompts = nil
				break
			}
			l.Prompts = append(l.Prompts, p)
		}
	}
	enc, err := encodeCache(s.name, l)
	if err != nil {
		return fmt.Errorf("mcp server %q: encoding its lists: %w", s.name, err)
	}
	if bytes.Equal(enc, s.enc) {
		return nil
	}
	if s.enc != nil {
		s.log.Info("mcp server's tools changed", "tools", len(l.Tools), "resources", len(l.Resources), "prompts", len(l.Prompts))
	}
	s.enc = enc
	s.setLists(l)
	if s.cachePath != "" {
		if err := writeCache(s.cachePath, enc); err != nil {
			s.log.Warn("caching the mcp server's tools failed", "err", err)
		}
	}
	s.m.rebuild()
	return nil
}

// changed is the handler of a server's list_changed notifications: the
// lists are listed again in the background, and before the next model
// request at the latest (Manager.Version waits for a listing under way).
func (s *server) changed(*mcp.ClientSession) {
	s.changes.Add(1)
	s.log.Debug("mcp server announced a changed list")
	go s.refreshIfStale()
}

// refreshIfStale lists a server that announced a change since its last
// listing.
func (s *server) refreshIfStale() {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.changes.Load()
	if c == s.seen.Load() {
		return
	}
	if s.sess != nil && !s.dead {
		if err := s.refreshLocked(s.m.ctx); err != nil {
			s.log.Warn("listing the mcp server's changed tools failed", "err", err)
		}
	}
	// Not connected: the next connection lists anyway.
	s.seen.Store(c)
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
		ToolListChangedHandler: func(_ context.Context, r *mcp.ToolListChangedRequest) {
			s.changed(r.Session)
		},
		ResourceListChangedHandler: func(_ context.Context, r *mcp.ResourceListChangedRequest) {
			s.changed(r.Session)
		},
		PromptListChangedHandler: func(ctx context.Context, r *mcp.PromptListChangedRequest) {
			s.onPromptsChanged(ctx, r)
			s.changed(r.Session)
		},
	})
	sess, st, err := s.connectTransport(ctx, client)
	if st.stderrW != nil {
		st.stderrW.Close() // the child has its copy
	}
	cmd := st.cmd
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
	s.sess, s.cmd, s.dead = sess, cmd, false
	s.started.Store(true)
	// A change announced before this session is covered by its listing.
	s.seen.Store(s.changes.Load())
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
	s.sess, s.cmd = nil, nil
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
	env := slices.Clone(s.env())
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
