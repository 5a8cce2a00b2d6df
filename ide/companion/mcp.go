package companion

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentry-dev/agentry/ide/idewire"
	"github.com/agentry-dev/agentry/internal/version"
)

// sessionHeader is the streamable HTTP transport's session header.
const sessionHeader = "Mcp-Session-Id"

func (s *Server) newMCPServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "agentry-ide-companion", Version: version.Version()}, &mcp.ServerOptions{
		Logger: s.log,
	})
	mcp.AddTool(srv, &mcp.Tool{
		Name:        idewire.ToolOpenDiff,
		Description: "(IDE Tool) Open a diff view to create or modify a file. Returns a notification once the diff has been accepted or rejected.",
	}, s.openDiff)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        idewire.ToolCloseDiff,
		Description: "(IDE Tool) Close an open diff view for a specific file.",
	}, s.closeDiff)
	srv.AddReceivingMiddleware(s.cfg.Middleware...)
	return srv
}

// openDiff records the view and tells the editor; it returns at once with
// empty content, the outcome following as a notification.
func (s *Server) openDiff(_ context.Context, _ *mcp.CallToolRequest, in idewire.OpenDiffArgs) (*mcp.CallToolResult, any, error) {
	if !filepath.IsAbs(in.FilePath) {
		return nil, nil, fmt.Errorf("openDiff: filePath %q is not an absolute path", in.FilePath)
	}
	s.mu.Lock()
	s.diffs[in.FilePath] = in.NewContent
	s.mu.Unlock()
	if err := s.cfg.Editor.OpenDiff(in.FilePath, in.NewContent); err != nil {
		s.takeDiff(in.FilePath)
		return nil, nil, fmt.Errorf("openDiff: the editor could not open the diff view: %w", err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{}}, nil, nil
}

// closeDiff closes the view and returns its content as CloseDiffResult's
// JSON text; without suppressNotification clients also get
// ide/diffRejected.
func (s *Server) closeDiff(_ context.Context, _ *mcp.CallToolRequest, in idewire.CloseDiffArgs) (*mcp.CallToolResult, any, error) {
	s.mu.Lock()
	content, open := s.diffs[in.FilePath]
	delete(s.diffs, in.FilePath)
	s.mu.Unlock()
	var res idewire.CloseDiffResult
	if open {
		res.Content = &content
		s.cfg.Editor.CloseDiff(in.FilePath)
		if !in.SuppressNotification {
			s.broadcast(idewire.NotifyDiffRejected, idewire.DiffRejected{FilePath: in.FilePath})
		}
	}
	text, err := json.Marshal(res)
	if err != nil {
		return nil, nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}, nil, nil
}

// serveMCP routes streamable HTTP requests to their sessions. It keeps the
// sessions itself (rather than mcp.StreamableHTTPHandler) because the
// contract's notifications are not MCP methods the SDK can send: they are
// written on the session's connection directly.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(sessionHeader)
	if id == "" {
		if r.Method != http.MethodPost {
			http.Error(w, "Bad Request: "+r.Method+" needs an Mcp-Session-Id header", http.StatusBadRequest)
			return
		}
		s.startSession(w, r)
		return
	}
	s.mu.Lock()
	ss := s.sessions[id]
	s.mu.Unlock()
	if ss == nil {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	switch r.Method {
	case http.MethodDelete:
		_ = ss.ss.Close()
		w.WriteHeader(http.StatusNoContent)
	case http.MethodGet:
		// The client's standalone stream: once the SDK has claimed it
		// (it flushes the headers holding the stream's lock), send the
		// latest context, as gemini-cli's VS Code companion does on a
		// session's first GET.
		ss.transport.ServeHTTP(&flushHook{ResponseWriter: w, once: func() {
			greeted := false
			ss.greeted.Do(func() {
				greeted = true
				s.mu.Lock()
				c := s.ctx
				s.mu.Unlock()
				// The CLI counts once the context is on its way.
				go func() {
					s.notify(ss, idewire.NotifyContextUpdate, c)
					s.count(ss, true)
				}()
			})
			if !greeted {
				s.count(ss, true) // a stream opened again
			}
		}}, r)
		// The stream ended: the CLI went away (or will open another).
		s.count(ss, false)
	default:
		ss.transport.ServeHTTP(w, r)
	}
}

// startSession connects a new session and serves its first request.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request) {
	id := newSessionID()
	ss := &session{transport: &mcp.StreamableServerTransport{SessionID: id}}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "the companion is closing", http.StatusServiceUnavailable)
		return
	}
	s.sessions[id] = ss
	s.mu.Unlock()
	remove := func() {
		s.mu.Lock()
		if s.sessions[id] == ss {
			delete(s.sessions, id)
		}
		s.mu.Unlock()
		s.count(ss, false)
	}
	t := &capture{inner: ss.transport, got: func(c mcp.Connection) {
		s.mu.Lock()
		ss.conn = c
		s.mu.Unlock()
	}}
	sess, err := s.mcp.Connect(r.Context(), t, nil)
	if err != nil {
		remove()
		http.Error(w, "failed connection", http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	ss.ss = sess
	s.mu.Unlock()
	go func() {
		_ = sess.Wait()
		remove()
	}()
	ss.transport.ServeHTTP(w, r)
	if sess.InitializeParams() == nil {
		// Not an initialize request, or a failed one: no session.
		_ = sess.Close()
	}
}

// count counts ss in or out of the connected CLIs and tells OnClients
// when the number changed.
func (s *Server) count(ss *session, in bool) {
	s.clientsMu.Lock()
	defer s.clientsMu.Unlock()
	s.mu.Lock()
	changed := ss.counted != in
	if changed {
		ss.counted = in
		if in {
			s.clients++
		} else {
			s.clients--
		}
	}
	n := s.clients
	s.mu.Unlock()
	if changed && s.cfg.OnClients != nil {
		s.cfg.OnClients(n)
	}
}

// capture is a Transport that hands over the connection it makes.
type capture struct {
	inner *mcp.StreamableServerTransport
	got   func(mcp.Connection)
}

func (c *capture) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := c.inner.Connect(ctx)
	if err == nil {
		c.got(conn)
	}
	return conn, err
}

// SupportsProtocolVersion is the inner transport's.
func (c *capture) SupportsProtocolVersion(v string) bool { return c.inner.SupportsProtocolVersion(v) }

// flushHook calls once on the first Flush of a response.
type flushHook struct {
	http.ResponseWriter
	once func()
}

func (f *flushHook) Flush() {
	_ = http.NewResponseController(f.ResponseWriter).Flush()
	f.once()
}

func (f *flushHook) Unwrap() http.ResponseWriter { return f.ResponseWriter }
