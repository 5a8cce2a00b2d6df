// Package companion is the companion side of gemini-cli's IDE contract
// (docs/ide.md), for editors without a TypeScript extension: an MCP server
// on 127.0.0.1 over streamable HTTP at /mcp, a bearer token checked on
// every request, the discovery file gemini-cli (or agentry) reads to find
// it, the openDiff and closeDiff tools, and the ide/contextUpdate,
// ide/diffAccepted and ide/diffRejected notifications.
//
// The editor drives a Server: SetContext when its files, cursor or
// selection change (sent debounced, 50 ms, and to every client when it
// connects), AcceptDiff and RejectDiff when the user answers a diff view
// the Server asked for through Config.Editor.
package companion

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentry-dev/agentry/ide/idewire"
	"github.com/agentry-dev/agentry/protocol/guard"
)

// Debounce is how long context updates are gathered before one
// ide/contextUpdate is sent, as gemini-cli's VS Code companion does.
const Debounce = 50 * time.Millisecond

// MaxBodyBytes caps a request body: openDiff carries a whole file.
const MaxBodyBytes = 32 << 20

// ErrNoDiff is returned by AcceptDiff and RejectDiff for a path with no
// open diff view.
var ErrNoDiff = errors.New("companion: no diff view is open for that file")

// Editor is what a Server asks of the editor. Its methods are called from
// the server's request goroutines and must not block for long.
type Editor interface {
	// OpenDiff shows a modifiable diff of path against newContent. An
	// error is returned to the client as the tool's error.
	OpenDiff(path, newContent string) error
	// CloseDiff closes path's diff view: the client closed it.
	CloseDiff(path string)
}

// Config configures a Server.
type Config struct {
	// Workspace lists the open workspace roots, absolute. None means no
	// folder is open (gemini-cli then asks the user to open one).
	Workspace []string
	// IDEPID is the editor's process id, the discovery file's first
	// number: gemini-cli looks for the file of the process it finds by
	// walking up its own process tree. Zero means os.Getppid().
	IDEPID int
	// IDEInfo names the editor in the discovery file; nil leaves it out.
	IDEInfo *idewire.IDEInfo
	// Editor receives the diff requests; required.
	Editor Editor
	// Dir is the discovery file's directory; "" is idewire.Dir().
	Dir string
	// Token is the bearer token; "" makes a random UUID, as gemini-cli's
	// VS Code companion does.
	Token string
	// AfterFunc starts a timer that calls f after d and returns the
	// function that stops it; nil is time.AfterFunc's. Tests give a fake.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
	// Middleware wraps the handling of what clients send (tracing,
	// metrics); it runs after the token and Host checks.
	Middleware []mcp.Middleware
	// Logger receives refused requests and failed sends; nil is
	// slog.Default().
	Logger *slog.Logger
	// OnClients, if set, hears the number of connected CLIs whenever it
	// changes: a CLI counts while its notification stream is open (from
	// its start, once it has initialized and gets the context, until the
	// CLI disconnects or goes away, or the companion closes). Calls are in order, one
	// at a time, on the companion's goroutines: OnClients must not block
	// or call the Server.
	OnClients func(n int)
}

// Server is a running companion. Its methods are safe for concurrent use.
type Server struct {
	cfg      Config
	token    string
	port     int
	file     string
	ln       net.Listener
	http     *http.Server
	mcp      *mcp.Server
	log      *slog.Logger
	afterFn  func(time.Duration, func()) func() bool
	serveErr chan error

	// clientsMu orders OnClients's calls.
	clientsMu sync.Mutex

	mu       sync.Mutex
	sessions map[string]*session
	clients  int               // sessions counted by OnClients
	diffs    map[string]string // path → the view's content
	ctx      idewire.Context
	timer    func() bool // the pending debounce, nil when none
	closed   bool
}

// session is one MCP client connection.
type session struct {
	transport *mcp.StreamableServerTransport
	ss        *mcp.ServerSession
	conn      mcp.Connection
	greeted   sync.Once
	counted   bool // counted in Server.clients; under Server.mu
}

// New starts a companion: it listens on 127.0.0.1 at a free port, serves
// MCP at /mcp and writes the discovery file. Close stops it and removes
// the file.
func New(cfg Config) (*Server, error) {
	if cfg.Editor == nil {
		return nil, errors.New("companion: Config.Editor is required: it is told of the diffs clients open")
	}
	for _, w := range cfg.Workspace {
		if !filepath.IsAbs(w) {
			return nil, fmt.Errorf("companion: workspace %q is not an absolute path", w)
		}
		if strings.Contains(w, string(os.PathListSeparator)) {
			return nil, fmt.Errorf("companion: workspace %q contains the path list separator %q", w, string(os.PathListSeparator))
		}
	}
	s := &Server{
		cfg:      cfg,
		token:    cfg.Token,
		log:      cfg.Logger,
		sessions: map[string]*session{},
		diffs:    map[string]string{},
		serveErr: make(chan error, 1),
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.token == "" {
		s.token = uuid.NewString()
	}
	s.afterFn = cfg.AfterFunc
	if s.afterFn == nil {
		s.afterFn = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	if cfg.IDEPID == 0 {
		s.cfg.IDEPID = os.Getppid()
	}
	if s.cfg.Dir == "" {
		s.cfg.Dir = idewire.Dir()
	}
	s.mcp = s.newMCPServer()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("companion: listen on 127.0.0.1: %w", err)
	}
	s.ln = ln
	s.port = ln.Addr().(*net.TCPAddr).Port
	g, err := guard.New(guard.Config{
		Token:        s.token,
		AllowedHosts: guard.LoopbackHosts(s.port),
		MaxBodyBytes: MaxBodyBytes,
		Logger:       s.log,
	})
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("companion: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle(idewire.MCPPath, g.Wrap(http.HandlerFunc(s.serveMCP)))
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	file, err := writeDiscovery(s.cfg.Dir, idewire.FileName(s.cfg.IDEPID, s.port), idewire.Discovery{
		Port:          s.port,
		WorkspacePath: strings.Join(cfg.Workspace, string(os.PathListSeparator)),
		AuthToken:     s.token,
		IDEInfo:       cfg.IDEInfo,
	})
	if err != nil {
		ln.Close()
		return nil, err
	}
	s.file = file
	go func() { s.serveErr <- s.http.Serve(ln) }()
	return s, nil
}

// Port is the port the server listens on, at 127.0.0.1.
func (s *Server) Port() int { return s.port }

// Token is the bearer token clients must send. It is a secret: it is
// written only to the discovery file (mode 0600).
func (s *Server) Token() string { return s.token }

// File is the discovery file's path.
func (s *Server) File() string { return s.file }

// URL is the MCP endpoint's URL.
func (s *Server) URL() string { return fmt.Sprintf("http://127.0.0.1:%d%s", s.port, idewire.MCPPath) }

// Env returns the environment lines (NAME=value) an editor should set in
// its integrated terminals: the port, which breaks ties between
// companions of one workspace, and the workspace. The token is left out:
// it is in the discovery file.
func (s *Server) Env() []string {
	return []string{
		idewire.EnvServerPort + "=" + fmt.Sprint(s.port),
		idewire.EnvWorkspacePath + "=" + strings.Join(s.cfg.Workspace, string(os.PathListSeparator)),
	}
}

// Close removes the discovery file, ends every session and stops the
// server. It is safe to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.timer != nil {
		s.timer()
		s.timer = nil
	}
	sessions := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		sessions = append(sessions, ss)
	}
	s.sessions = map[string]*session{}
	s.mu.Unlock()

	var errs []error
	if err := os.Remove(s.file); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, fmt.Errorf("companion: remove the discovery file: %w", err))
	}
	for _, ss := range sessions {
		_ = ss.ss.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.http.Shutdown(ctx); err != nil {
		_ = s.http.Close()
	}
	if err := <-s.serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		errs = append(errs, fmt.Errorf("companion: serve: %w", err))
	}
	return errors.Join(errs...)
}

// SetContext replaces the editor's context. The latest context is sent to
// every connected client as ide/contextUpdate once Debounce has passed
// since the first change not yet sent, and to each new client when it
// connects.
func (s *Server) SetContext(c idewire.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctx = c
	if s.closed || s.timer != nil {
		return
	}
	s.timer = s.afterFn(Debounce, s.flushContext)
}

func (s *Server) flushContext() {
	s.mu.Lock()
	s.timer = nil
	if s.closed {
		s.mu.Unlock()
		return
	}
	c := s.ctx
	s.mu.Unlock()
	s.broadcast(idewire.NotifyContextUpdate, c)
}

// AcceptDiff reports that the user accepted path's diff with content
// (which may differ from the proposal): clients get ide/diffAccepted.
func (s *Server) AcceptDiff(path, content string) error {
	if !s.takeDiff(path) {
		return fmt.Errorf("%w: %s", ErrNoDiff, path)
	}
	s.broadcast(idewire.NotifyDiffAccepted, idewire.DiffAccepted{FilePath: path, Content: content})
	return nil
}

// RejectDiff reports that the user rejected path's diff: clients get
// ide/diffRejected.
func (s *Server) RejectDiff(path string) error {
	if !s.takeDiff(path) {
		return fmt.Errorf("%w: %s", ErrNoDiff, path)
	}
	s.broadcast(idewire.NotifyDiffRejected, idewire.DiffRejected{FilePath: path})
	return nil
}

// UpdateDiff records the content of path's diff view as the user edited
// it, which closeDiff returns. It fails when no view is open for path.
func (s *Server) UpdateDiff(path, content string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.diffs[path]; !ok {
		return fmt.Errorf("%w: %s", ErrNoDiff, path)
	}
	s.diffs[path] = content
	return nil
}

func (s *Server) takeDiff(path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.diffs[path]
	delete(s.diffs, path)
	return ok
}

// broadcast sends a notification to every session, as gemini-cli's VS
// Code companion does.
func (s *Server) broadcast(method string, params any) {
	s.mu.Lock()
	sessions := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		if ss.conn != nil {
			sessions = append(sessions, ss)
		}
	}
	s.mu.Unlock()
	for _, ss := range sessions {
		s.notify(ss, method, params)
	}
}

func (s *Server) notify(ss *session, method string, params any) {
	raw, err := json.Marshal(params)
	if err != nil {
		s.log.Error("companion: encode a notification", "method", method, "err", err)
		return
	}
	// A detached context: the message goes to the session's standalone
	// SSE stream (the client's GET).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ss.conn.Write(ctx, &jsonrpc.Request{Method: method, Params: raw}); err != nil {
		s.log.Warn("companion: notification not delivered", "method", method, "session", ss.ss.ID(), "err", err)
	}
}

// newSessionID returns a random session id.
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
