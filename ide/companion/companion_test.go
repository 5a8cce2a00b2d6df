package companion_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentry-dev/agentry/ide/companion"
	"github.com/agentry-dev/agentry/ide/idewire"
)

// editor records the requests a Server makes of the editor.
type editor struct {
	opened chan [2]string
	closed chan string
	fail   error
}

func newEditor() *editor {
	return &editor{opened: make(chan [2]string, 8), closed: make(chan string, 8)}
}

func (e *editor) OpenDiff(path, content string) error {
	if e.fail != nil {
		return e.fail
	}
	e.opened <- [2]string{path, content}
	return nil
}

func (e *editor) CloseDiff(path string) { e.closed <- path }

// timers is an AfterFunc whose timers the test fires.
type timers struct {
	mu      sync.Mutex
	pending []func()
	delays  []time.Duration
}

func (f *timers) AfterFunc(d time.Duration, fn func()) func() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending = append(f.pending, fn)
	f.delays = append(f.delays, d)
	return func() bool { return true }
}

// fire runs the timers started so far and reports how many.
func (f *timers) fire() int {
	f.mu.Lock()
	p := f.pending
	f.pending = nil
	f.mu.Unlock()
	for _, fn := range p {
		fn()
	}
	return len(p)
}

func start(t *testing.T, cfg companion.Config) *companion.Server {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join(t.TempDir(), "gemini", "ide")
	}
	if cfg.Workspace == nil {
		cfg.Workspace = []string{t.TempDir()}
	}
	if cfg.IDEPID == 0 {
		cfg.IDEPID = os.Getpid()
	}
	s, err := companion.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// bearer adds a token to every request and takes the contract's
// notifications out of the SSE streams it reads (the SDK's client knows
// no ide/ methods, and drops them).
type bearer struct {
	token string
	ch    chan note
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && b.ch != nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &sseTap{ReadCloser: resp.Body, ch: b.ch}
	}
	return resp, err
}

// note is a notification the client received.
type note struct {
	Method string
	Params json.RawMessage
}

// sseTap reads an SSE body through, sending each ide/ notification in its
// data lines to ch.
type sseTap struct {
	io.ReadCloser
	ch   chan note
	line []byte
}

func (s *sseTap) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	for _, c := range p[:n] {
		if c != '\n' {
			s.line = append(s.line, c)
			continue
		}
		if data, ok := strings.CutPrefix(string(s.line), "data: "); ok {
			var m note
			if json.Unmarshal([]byte(data), &m) == nil && strings.HasPrefix(m.Method, "ide/") {
				s.ch <- m
			}
		}
		s.line = s.line[:0]
	}
	return n, err
}

// dial connects an MCP client with the server's token.
func dial(t *testing.T, s *companion.Server) (*mcp.ClientSession, <-chan note) {
	t.Helper()
	ch := make(chan note, 16)
	tr := &mcp.StreamableClientTransport{
		Endpoint:   s.URL(),
		HTTPClient: &http.Client{Transport: bearer{s.Token(), ch}},
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, ch
}

func next(t *testing.T, ch <-chan note) note {
	t.Helper()
	select {
	case n := <-ch:
		return n
	case <-t.Context().Done():
		t.Fatal("no notification")
	}
	return note{}
}

func TestToken(t *testing.T) {
	s := start(t, companion.Config{Editor: newEditor()})
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tc := range []struct {
		name, auth string
		want       int
	}{
		{"none", "", http.StatusUnauthorized},
		{"wrong", "Bearer " + strings.Repeat("0", len(s.Token())), http.StatusUnauthorized},
		{"not bearer", "Basic " + s.Token(), http.StatusUnauthorized},
		{"right", "Bearer " + s.Token(), http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL(), strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.want, b)
			}
			if tc.want == http.StatusUnauthorized && strings.Contains(string(b), s.Token()) {
				t.Errorf("the refusal holds the token: %s", b)
			}
		})
	}
}

func TestHostRefused(t *testing.T) {
	s := start(t, companion.Config{Editor: newEditor()})
	for _, host := range []string{"evil.example:80", "evil.example", "127.0.0.1:1"} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL(), strings.NewReader(`{}`))
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+s.Token())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("Host %s: status %d, want 403", host, resp.StatusCode)
		}
	}
}

func TestDiscoveryFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gemini", "ide")
	ws := []string{t.TempDir(), t.TempDir()}
	s, err := companion.New(companion.Config{Editor: newEditor(), Dir: dir, Workspace: ws, IDEPID: 4242,
		IDEInfo: &idewire.IDEInfo{Name: "neovim", DisplayName: "Neovim"}})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, idewire.FileName(4242, s.Port()))
	if s.File() != want {
		t.Fatalf("File() = %s, want %s", s.File(), want)
	}
	fi, err := os.Stat(want)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != os.Getuid() {
		t.Errorf("owner %d, want %d", st.Uid, os.Getuid())
	}
	if di, err := os.Stat(dir); err != nil || di.Mode().Perm() != 0o700 {
		t.Errorf("directory: %v %v, want 0700", di.Mode(), err)
	}
	b, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	var d idewire.Discovery
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	wantD := idewire.Discovery{Port: s.Port(), WorkspacePath: ws[0] + ":" + ws[1], AuthToken: s.Token(),
		IDEInfo: &idewire.IDEInfo{Name: "neovim", DisplayName: "Neovim"}}
	if diff := cmp.Diff(wantD, d); diff != "" {
		t.Errorf("discovery file (-want +got):\n%s", diff)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the directory holds %d entries, want the file alone", len(ents))
	}
	wantEnv := []string{"GEMINI_CLI_IDE_SERVER_PORT=" + itoa(s.Port()), "GEMINI_CLI_IDE_WORKSPACE_PATH=" + ws[0] + ":" + ws[1]}
	if diff := cmp.Diff(wantEnv, s.Env()); diff != "" {
		t.Errorf("Env (-want +got):\n%s", diff)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(want); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Close the file is still there: %v", err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestDiscoveryDirRefused(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "gemini", "ide")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	_, err := companion.New(companion.Config{Editor: newEditor(), Dir: dir, Workspace: []string{base}, IDEPID: 1})
	if err == nil || !strings.Contains(err.Error(), "writable by others") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("a world-writable directory: %v", err)
	}
	if os.Getuid() == 0 {
		// Another owner: root can make one.
		if err := os.Chmod(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, 12345, 12345); err != nil {
			// Root of a user namespace that maps no other uid.
			t.Logf("the other-owner case is not run: %v", err)
			return
		}
		_, err := companion.New(companion.Config{Editor: newEditor(), Dir: dir, Workspace: []string{base}, IDEPID: 1})
		if err == nil || !strings.Contains(err.Error(), "owned by uid 12345") {
			t.Fatalf("a directory of another user: %v", err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a refused directory got %d entries", len(ents))
	}
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestDiffAccepted(t *testing.T) {
	ed := newEditor()
	s := start(t, companion.Config{Editor: ed})
	cs, notes := dial(t, s)
	if n := next(t, notes); n.Method != idewire.NotifyContextUpdate || string(n.Params) != `{}` {
		t.Fatalf("first notification %s %s, want the (empty) context", n.Method, n.Params)
	}
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if diff := cmp.Diff([]string{"closeDiff", "openDiff"}, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	path := filepath.Join(t.TempDir(), "a.txt")
	res := callTool(t, cs, idewire.ToolOpenDiff, idewire.OpenDiffArgs{FilePath: path, NewContent: "proposed\n"})
	if res.IsError || len(res.Content) != 0 {
		t.Fatalf("openDiff result: %+v", res)
	}
	if got := <-ed.opened; got != [2]string{path, "proposed\n"} {
		t.Fatalf("editor asked %q", got)
	}
	if err := s.AcceptDiff(path, "edited by the user\n"); err != nil {
		t.Fatal(err)
	}
	n := next(t, notes)
	var acc idewire.DiffAccepted
	if err := json.Unmarshal(n.Params, &acc); err != nil || n.Method != idewire.NotifyDiffAccepted ||
		acc != (idewire.DiffAccepted{FilePath: path, Content: "edited by the user\n"}) {
		t.Fatalf("got %s %s (%v)", n.Method, n.Params, err)
	}
	if err := s.AcceptDiff(path, "again"); !errors.Is(err, companion.ErrNoDiff) {
		t.Errorf("a second answer: %v, want ErrNoDiff", err)
	}
}

func TestDiffRejected(t *testing.T) {
	ed := newEditor()
	s := start(t, companion.Config{Editor: ed})
	cs, notes := dial(t, s)
	next(t, notes)
	path := filepath.Join(t.TempDir(), "a.txt")
	callTool(t, cs, idewire.ToolOpenDiff, idewire.OpenDiffArgs{FilePath: path, NewContent: "x"})
	<-ed.opened
	if err := s.RejectDiff(path); err != nil {
		t.Fatal(err)
	}
	if n := next(t, notes); n.Method != idewire.NotifyDiffRejected || string(n.Params) != `{"filePath":"`+path+`"}` {
		t.Fatalf("got %s %s", n.Method, n.Params)
	}
}

func TestOpenDiffErrors(t *testing.T) {
	ed := newEditor()
	s := start(t, companion.Config{Editor: ed})
	cs, _ := dial(t, s)
	res := callTool(t, cs, idewire.ToolOpenDiff, idewire.OpenDiffArgs{FilePath: "rel.txt", NewContent: "x"})
	if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"rel.txt" is not an absolute path`) {
		t.Errorf("a relative path: %+v", res)
	}
	ed.fail = errors.New("no window")
	path := filepath.Join(t.TempDir(), "a.txt")
	res = callTool(t, cs, idewire.ToolOpenDiff, idewire.OpenDiffArgs{FilePath: path, NewContent: "x"})
	if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "no window") {
		t.Errorf("an editor failure: %+v", res)
	}
	if err := s.AcceptDiff(path, "x"); !errors.Is(err, companion.ErrNoDiff) {
		t.Errorf("a diff the editor did not open is pending: %v", err)
	}
}

func TestCloseDiff(t *testing.T) {
	ed := newEditor()
	s := start(t, companion.Config{Editor: ed})
	cs, notes := dial(t, s)
	next(t, notes)
	path := filepath.Join(t.TempDir(), "a.txt")
	text := func(r *mcp.CallToolResult) string { return r.Content[0].(*mcp.TextContent).Text }

	// No view open: content null.
	if got := text(callTool(t, cs, idewire.ToolCloseDiff, idewire.CloseDiffArgs{FilePath: path})); got != `{"content":null}` {
		t.Errorf("closeDiff of no view: %s", got)
	}
	// Suppressed: the view's content (as the user edited it), no notification.
	callTool(t, cs, idewire.ToolOpenDiff, idewire.OpenDiffArgs{FilePath: path, NewContent: "one"})
	<-ed.opened
	if err := s.UpdateDiff(path, "one, edited"); err != nil {
		t.Fatal(err)
	}
	if got := text(callTool(t, cs, idewire.ToolCloseDiff, idewire.CloseDiffArgs{FilePath: path, SuppressNotification: true})); got != `{"content":"one, edited"}` {
		t.Errorf("closeDiff: %s", got)
	}
	if got := <-ed.closed; got != path {
		t.Errorf("editor closed %s", got)
	}
	// Not suppressed: ide/diffRejected follows, and it is the next
	// notification (the suppressed close sent none).
	callTool(t, cs, idewire.ToolOpenDiff, idewire.OpenDiffArgs{FilePath: path, NewContent: "two"})
	<-ed.opened
	if got := text(callTool(t, cs, idewire.ToolCloseDiff, idewire.CloseDiffArgs{FilePath: path})); got != `{"content":"two"}` {
		t.Errorf("closeDiff: %s", got)
	}
	if n := next(t, notes); n.Method != idewire.NotifyDiffRejected {
		t.Errorf("after closeDiff: %s %s", n.Method, n.Params)
	}
	if err := s.RejectDiff(path); !errors.Is(err, companion.ErrNoDiff) {
		t.Errorf("a closed view can still be answered: %v", err)
	}
}

func TestContextDebounced(t *testing.T) {
	clock := &timers{}
	s := start(t, companion.Config{Editor: newEditor(), AfterFunc: clock.AfterFunc})
	first := idewire.Context{WorkspaceState: &idewire.WorkspaceState{OpenFiles: []idewire.File{{Path: "/w/a.go", Timestamp: 1, IsActive: true}}}}
	s.SetContext(first)
	// A client that connects gets the latest context at once, without the
	// timer.
	_, notes := dial(t, s)
	n := next(t, notes)
	want, _ := json.Marshal(first)
	if n.Method != idewire.NotifyContextUpdate || string(n.Params) != string(want) {
		t.Fatalf("on connect: %s %s, want %s", n.Method, n.Params, want)
	}
	// Three changes, one timer of 50 ms, one notification with the last.
	for i := range 3 {
		c := idewire.Context{WorkspaceState: &idewire.WorkspaceState{OpenFiles: []idewire.File{{Path: "/w/a.go", Timestamp: int64(i + 2), IsActive: true,
			Cursor: &idewire.Cursor{Line: i + 1, Character: 1}}}}}
		s.SetContext(c)
		want, _ = json.Marshal(c)
	}
	if clock.delays[len(clock.delays)-1] != companion.Debounce || clock.fire() != 1 {
		t.Fatalf("timers: %v", clock.delays)
	}
	n = next(t, notes)
	if string(n.Params) != string(want) {
		t.Fatalf("debounced: %s, want %s", n.Params, want)
	}
	select {
	case n := <-notes:
		t.Fatalf("a second notification: %s %s", n.Method, n.Params)
	default:
	}
	// A later change starts a new timer.
	s.SetContext(idewire.Context{})
	if clock.fire() != 1 {
		t.Fatal("no timer for a later change")
	}
	if n := next(t, notes); string(n.Params) != `{}` {
		t.Fatalf("later: %s", n.Params)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  companion.Config
		want string
	}{
		{companion.Config{}, "Config.Editor is required"},
		{companion.Config{Editor: newEditor(), Workspace: []string{"rel"}}, `workspace "rel" is not an absolute path`},
	} {
		if _, err := companion.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// TestOnClients: a CLI counts once it has initialized and opened its
// notification stream, and stops counting when it disconnects; a second
// CLI counts too; closing the companion counts everyone out.
func TestOnClients(t *testing.T) {
	counts := make(chan int, 16)
	s := start(t, companion.Config{Editor: newEditor(), OnClients: func(n int) { counts <- n }})
	want := func(n int) {
		t.Helper()
		select {
		case got := <-counts:
			if got != n {
				t.Fatalf("OnClients(%d), want %d", got, n)
			}
		case <-time.After(30 * time.Second): // a hang guard
			t.Fatalf("no OnClients(%d)", n)
		}
	}
	first, notes := dial(t, s)
	next(t, notes) // the context: its stream is open
	want(1)
	second, notes2 := dial(t, s)
	next(t, notes2)
	want(2)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	want(1)
	_ = second
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	want(0)
	select {
	case n := <-counts:
		t.Fatalf("an extra OnClients(%d)", n)
	default:
	}
}
