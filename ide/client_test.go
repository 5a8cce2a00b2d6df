package ide_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentry-dev/agentry/ide"
	"github.com/agentry-dev/agentry/ide/companion"
	"github.com/agentry-dev/agentry/ide/idecontext"
	"github.com/agentry-dev/agentry/ide/idediff"
	"github.com/agentry-dev/agentry/ide/idewire"
	"github.com/agentry-dev/agentry/internal/proctest"
)

// The Client is what the editor context reads, and its diff outcome is
// the diff approver's answer.
var (
	_ idecontext.IDE = (*ide.Client)(nil)
	_                = idediff.Answer(ide.DiffOutcome{})
)

// connect connects to c and closes the client at the end of the test.
func connect(t *testing.T, ep ide.Endpoint, opts ...ide.Option) *ide.Client {
	t.Helper()
	cl, err := ide.Connect(t.Context(), ep, opts...)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// waitChanged waits for the client's Changed signal.
func waitChanged(t *testing.T, cl *ide.Client) {
	t.Helper()
	select {
	case <-cl.Changed():
	case <-time.After(hangGuard):
		t.Fatal("no context change")
	}
}

func TestConnectToken(t *testing.T) {
	tests := []struct {
		name       string
		serverTok  string
		clientTok  string
		wantErr    error
		wantInText string
	}{
		{name: "right token", serverTok: "s3cret", clientTok: "s3cret"},
		{name: "no token needed, none sent", serverTok: "", clientTok: ""},
		{name: "wrong token", serverTok: "s3cret", clientTok: "stale", wantErr: ide.ErrUnauthorized, wantInText: "refused the token (HTTP 401)"},
		{name: "missing token", serverTok: "s3cret", clientTok: "", wantErr: ide.ErrUnauthorized, wantInText: "without a token (HTTP 401)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			comp := startCompanion(t, tt.serverTok)
			ep := comp.endpoint()
			ep.Token = tt.clientTok
			cl, err := ide.Connect(t.Context(), ep)
			if tt.wantErr != nil {
				if cl != nil {
					cl.Close()
				}
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantInText) || !strings.Contains(err.Error(), "test-discovery.json") {
					t.Fatalf("Connect error = %v, want %v mentioning %q and the discovery file", err, tt.wantErr, tt.wantInText)
				}
				return
			}
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			if st := cl.Status(); st.State != ide.Connected || st.String() != "🟢 Connected to Test IDE" {
				t.Errorf("Status = %+v (%s)", st, st)
			}
			if !cl.CanDiff() {
				t.Error("CanDiff = false with openDiff and closeDiff listed")
			}
			// gemini-cli's calls: the legacy handshake (no server/discover
			// probe), then tools/list.
			if got, want := strings.Join(comp.receivedMethods(), " "), "initialize notifications/initialized tools/list"; got != want {
				t.Errorf("the companion received %q, want %q", got, want)
			}
			if err := cl.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			want := ""
			if tt.clientTok != "" {
				want = "Bearer " + tt.clientTok
			}
			hs := comp.authHeaders()
			if len(hs) < 4 { // initialize, initialized, GET stream, tools/list, DELETE
				t.Fatalf("the companion saw %d requests", len(hs))
			}
			for i, h := range hs {
				if h != want {
					t.Errorf("request %d: Authorization = %q, want %q", i, h, want)
				}
			}
		})
	}
}

func TestConnectNoCompanion(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens there now
	for _, ep := range []ide.Endpoint{{Port: port, Token: "x"}, {Port: 0}, {Port: 70000}} {
		cl, err := ide.Connect(t.Context(), ep)
		if err == nil {
			cl.Close()
			t.Fatalf("Connect(%+v) succeeded", ep)
		}
		if errors.Is(err, ide.ErrUnauthorized) {
			t.Errorf("Connect(%+v) = %v, not a token problem", ep, err)
		}
	}
}

func TestNoDiffTools(t *testing.T) {
	comp := startCompanion(t, "tok", withoutDiffTools())
	cl := connect(t, comp.endpoint())
	if cl.CanDiff() {
		t.Error("CanDiff = true without openDiff and closeDiff")
	}
	if _, err := cl.OpenDiff(t.Context(), "/w/a.go", "x"); !errors.Is(err, ide.ErrNoDiffing) {
		t.Errorf("OpenDiff = %v, want ErrNoDiffing", err)
	}
}

func file(path string, ts int64) idewire.File { return idewire.File{Path: path, Timestamp: ts} }

func ctxWith(files ...idewire.File) idewire.Context {
	return idewire.Context{WorkspaceState: &idewire.WorkspaceState{OpenFiles: files}}
}

func TestContextUpdates(t *testing.T) {
	comp := startCompanion(t, "tok")
	cl := connect(t, comp.endpoint())
	if v, n := cl.Context(); n != 0 || v.WorkspaceState != nil {
		t.Fatalf("Context before any update = %+v, %d", v, n)
	}
	// A reader beside the updates (-race): the counter never goes back,
	// and a context is never seen without its update counted.
	stop := make(chan struct{})
	reader := make(chan error, 1)
	go func() {
		var last uint64
		for {
			select {
			case <-stop:
				reader <- nil
				return
			default:
			}
			v, n := cl.Context()
			if n < last || (n > 0) != (v.WorkspaceState != nil) {
				reader <- fmt.Errorf("Context = %+v, %d after %d", v, n, last)
				return
			}
			last = n
		}
	}()
	defer func() {
		close(stop)
		if err := recv(t, reader); err != nil {
			t.Error(err)
		}
	}()
	for i := 1; i <= 3; i++ {
		sent := ctxWith(file(fmt.Sprintf("/w/f%d.go", i), int64(1000+i)))
		sent.WorkspaceState.OpenFiles[0].IsActive = true
		sent.WorkspaceState.OpenFiles[0].Cursor = &idewire.Cursor{Line: i, Character: 2}
		comp.notify(idewire.NotifyContextUpdate, sent)
		waitChanged(t, cl)
		got, n := cl.Context()
		if n != uint64(i) {
			t.Fatalf("update %d: counter = %d", i, n)
		}
		if f := got.WorkspaceState.OpenFiles; len(f) != 1 || f[0].Path != sent.WorkspaceState.OpenFiles[0].Path || f[0].Cursor.Line != i || !f[0].IsActive {
			t.Fatalf("update %d: Context = %+v", i, got.WorkspaceState)
		}
		// The result is the caller's: changing it changes nothing stored.
		got.WorkspaceState.OpenFiles[0].Cursor.Line = 99
		got.WorkspaceState.OpenFiles[0].Path = "/elsewhere"
		if again, _ := cl.Context(); again.WorkspaceState.OpenFiles[0].Cursor.Line != i || again.WorkspaceState.OpenFiles[0].Path != sent.WorkspaceState.OpenFiles[0].Path {
			t.Fatalf("the stored context changed with the returned one: %+v", again.WorkspaceState.OpenFiles[0])
		}
	}
}

func TestContextRefused(t *testing.T) {
	comp := startCompanion(t, "tok")
	cl := connect(t, comp.endpoint())
	good := ctxWith(file("/w/good.go", 1))
	comp.notify(idewire.NotifyContextUpdate, good)
	waitChanged(t, cl)

	many := make([]idewire.File, ide.MaxContextFiles+1)
	for i := range many {
		many[i] = file(fmt.Sprintf("/w/%d.go", i), int64(i))
	}
	huge := ctxWith(file("/w/huge.go", 2))
	huge.WorkspaceState.OpenFiles[0].SelectedText = strings.Repeat("x", ide.MaxContextBytes)
	bad := []struct {
		name   string
		params string
		value  any
	}{
		{name: "over MaxContextBytes", value: huge},
		{name: "over MaxContextFiles", value: ctxWith(many...)},
		{name: "openFiles not a list", params: `{"workspaceState":{"openFiles":"x"}}`},
		{name: "timestamp not a number", params: `{"workspaceState":{"openFiles":[{"path":"/w/x","timestamp":"now"}]}}`},
		{name: "params a list", params: `[1,2]`},
		{name: "params a string", params: `"x"`},
		{name: "params null", params: `null`},
		{name: "no params", params: ""},
	}
	for i, b := range bad {
		if b.value != nil {
			comp.notify(idewire.NotifyContextUpdate, b.value)
		} else {
			comp.notifyRaw(idewire.NotifyContextUpdate, b.params)
		}
		// Notifications are handled in order: once the marker is in, the
		// bad one before it was looked at.
		marker := ctxWith(file(fmt.Sprintf("/w/marker%d.go", i), 3))
		comp.notify(idewire.NotifyContextUpdate, marker)
		waitChanged(t, cl)
		got, n := cl.Context()
		if want := uint64(2 + i); n != want {
			t.Errorf("%s: counter = %d, want %d (the bad update counted)", b.name, n, want)
		}
		if p := got.WorkspaceState.OpenFiles[0].Path; p != marker.WorkspaceState.OpenFiles[0].Path {
			t.Errorf("%s: Context holds %s", b.name, p)
		}
	}
	if st := cl.Status(); st.State != ide.Connected || !cl.CanDiff() {
		t.Errorf("after bad notifications: Status = %s, CanDiff = %v", st, cl.CanDiff())
	}
}

func TestOpenDiffAnswers(t *testing.T) {
	tests := []struct {
		name   string
		method string
		params any
		want   ide.DiffOutcome
	}{
		{name: "accepted with modified content", method: idewire.NotifyDiffAccepted,
			params: idewire.DiffAccepted{FilePath: "/w/a.go", Content: "package a // edited by the user\n"},
			want:   ide.DiffOutcome{Accepted: true, Content: "package a // edited by the user\n"}},
		{name: "rejected", method: idewire.NotifyDiffRejected, params: idewire.DiffRejected{FilePath: "/w/a.go"}},
		{name: "legacy diffClosed", method: idewire.NotifyDiffClosed, params: idewire.DiffRejected{FilePath: "/w/a.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			comp := startCompanion(t, "tok")
			cl := connect(t, comp.endpoint())
			type result struct {
				out ide.DiffOutcome
				err error
			}
			done := make(chan result, 1)
			go func() {
				out, err := cl.OpenDiff(t.Context(), "/w/a.go", "package a\n")
				done <- result{out, err}
			}()
			call := comp.nextCall()
			if call.tool != idewire.ToolOpenDiff || call.open != (idewire.OpenDiffArgs{FilePath: "/w/a.go", NewContent: "package a\n"}) {
				t.Fatalf("companion got %+v", call)
			}
			// An answer for another file does not end this diff.
			comp.notify(idewire.NotifyDiffAccepted, idewire.DiffAccepted{FilePath: "/w/other.go", Content: "x"})
			comp.notify(tt.method, tt.params)
			r := recv(t, done)
			if r.err != nil || r.out != tt.want {
				t.Fatalf("OpenDiff = %+v, %v; want %+v", r.out, r.err, tt.want)
			}
		})
	}
}

func TestOpenDiffIsError(t *testing.T) {
	comp := startCompanion(t, "tok")
	cl := connect(t, comp.endpoint())
	for _, tt := range []struct {
		res  *mcp.CallToolResult
		want string
	}{
		{&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no editor for this file"}}}, "no editor for this file"},
		{&mcp.CallToolResult{IsError: true, Content: []mcp.Content{}}, "Tool 'openDiff' reported an error."},
	} {
		comp.mu.Lock()
		comp.openDiff = func(idewire.OpenDiffArgs) *mcp.CallToolResult { return tt.res }
		comp.mu.Unlock()
		_, err := cl.OpenDiff(t.Context(), "/w/a.go", "x")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("OpenDiff = %v, want an error with %q", err, tt.want)
		}
		comp.nextCall()
	}
	// The failed diffs left nothing pending: a new one works.
	comp.mu.Lock()
	comp.openDiff = nil
	comp.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		_, err := cl.OpenDiff(t.Context(), "/w/a.go", "x")
		done <- err
	}()
	comp.nextCall()
	comp.notify(idewire.NotifyDiffRejected, idewire.DiffRejected{FilePath: "/w/a.go"})
	if err := recv(t, done); err != nil {
		t.Fatalf("OpenDiff after failures: %v", err)
	}
}

func TestOpenDiffCancel(t *testing.T) {
	comp := startCompanion(t, "tok")
	cl := connect(t, comp.endpoint())
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := cl.OpenDiff(ctx, "/w/a.go", "x")
		done <- err
	}()
	comp.nextCall()
	cancel()
	if err := recv(t, done); !errors.Is(err, context.Canceled) {
		t.Fatalf("OpenDiff after cancel = %v", err)
	}
	// A late answer for the cancelled diff finds nothing pending and is
	// dropped (the marker after it shows it was handled).
	comp.notify(idewire.NotifyDiffAccepted, idewire.DiffAccepted{FilePath: "/w/a.go", Content: "late"})
	comp.notify(idewire.NotifyContextUpdate, ctxWith(file("/w/marker.go", 1)))
	waitChanged(t, cl)
	res := make(chan ide.DiffOutcome, 1)
	go func() {
		out, err := cl.OpenDiff(t.Context(), "/w/a.go", "y")
		if err != nil {
			t.Error(err)
		}
		res <- out
	}()
	comp.nextCall()
	comp.notify(idewire.NotifyDiffAccepted, idewire.DiffAccepted{FilePath: "/w/a.go", Content: "fresh"})
	if out := recv(t, res); out.Content != "fresh" {
		t.Fatalf("second OpenDiff = %+v", out)
	}
}

// TestOpenDiffOneAtATime: as gemini-cli's mutex, a second diff is opened
// only once the first has its answer.
func TestOpenDiffOneAtATime(t *testing.T) {
	comp := startCompanion(t, "tok")
	cl := connect(t, comp.endpoint())
	queued := make(chan string, 1)
	ide.SetQueuedHook(cl, func(path string) { queued <- path })
	outs := make(chan ide.DiffOutcome, 2)
	open := func(path string) {
		out, err := cl.OpenDiff(t.Context(), path, "new "+path)
		if err != nil {
			t.Errorf("OpenDiff(%s): %v", path, err)
		}
		outs <- out
	}
	go open("/w/a.go")
	if c := comp.nextCall(); c.open.FilePath != "/w/a.go" {
		t.Fatalf("first call = %+v", c)
	}
	go open("/w/b.go")
	select {
	case p := <-queued:
		if p != "/w/b.go" {
			t.Fatalf("queued %s", p)
		}
	case <-time.After(hangGuard):
		t.Fatal("the second OpenDiff did not wait for the first")
	}
	// It waits without calling: the companion has seen nothing of it.
	select {
	case c := <-comp.calls:
		t.Fatalf("the companion got %+v while the first diff was open", c)
	default:
	}
	comp.notify(idewire.NotifyDiffAccepted, idewire.DiffAccepted{FilePath: "/w/a.go", Content: "A"})
	if out := recv(t, outs); out.Content != "A" {
		t.Fatalf("first outcome %+v", out)
	}
	if c := comp.nextCall(); c.open.FilePath != "/w/b.go" {
		t.Fatalf("second call = %+v", c)
	}
	comp.notify(idewire.NotifyDiffAccepted, idewire.DiffAccepted{FilePath: "/w/b.go", Content: "B"})
	if out := recv(t, outs); out.Content != "B" {
		t.Fatalf("second outcome %+v", out)
	}
}

func TestCloseDiff(t *testing.T) {
	comp := startCompanion(t, "tok")
	cl := connect(t, comp.endpoint())
	str := func(s string) *string { return &s }
	tests := []struct {
		name    string
		res     *mcp.CallToolResult
		want    *string
		wantErr string
	}{
		{name: "content", res: textResult(`{"content":"edited in the view\n"}`), want: str("edited in the view\n")},
		{name: "empty content", res: textResult(`{"content":""}`), want: str("")},
		{name: "null content", res: textResult(`{"content":null}`)},
		{name: "no content key", res: textResult(`{}`)},
		{name: "no text block", res: &mcp.CallToolResult{Content: []mcp.Content{}}},
		{name: "not JSON", res: textResult(`closed`), wantErr: `not {"content": string|null}`},
		{name: "content not a string", res: textResult(`{"content":5}`), wantErr: `not {"content": string|null}`},
		{name: "isError", res: &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no diff open"}}}, wantErr: "no diff open"},
		{name: "isError without text", res: &mcp.CallToolResult{IsError: true}, wantErr: "Tool 'closeDiff' reported an error."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			comp.mu.Lock()
			comp.closeDiff = func(idewire.CloseDiffArgs) *mcp.CallToolResult { return tt.res }
			comp.mu.Unlock()
			got, err := cl.CloseDiff(t.Context(), "/w/a.go")
			call := comp.nextCall()
			if call.tool != idewire.ToolCloseDiff || call.close != (idewire.CloseDiffArgs{FilePath: "/w/a.go", SuppressNotification: true}) {
				t.Errorf("companion got %+v", call)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("CloseDiff = %v, %v; want an error with %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Fatalf("CloseDiff = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// TestCloseDiffEndsOpenDiff: the terminal answered first; closing the
// editor's view ends the OpenDiff waiting on it.
func TestCloseDiffEndsOpenDiff(t *testing.T) {
	comp := startCompanion(t, "tok")
	cl := connect(t, comp.endpoint())
	comp.mu.Lock()
	comp.closeDiff = func(idewire.CloseDiffArgs) *mcp.CallToolResult { return textResult(`{"content":"as in the view"}`) }
	comp.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		_, err := cl.OpenDiff(t.Context(), "/w/a.go", "x")
		done <- err
	}()
	comp.nextCall()
	got, err := cl.CloseDiff(t.Context(), "/w/a.go")
	if err != nil || got == nil || *got != "as in the view" {
		t.Fatalf("CloseDiff = %v, %v", got, err)
	}
	if err := recv(t, done); !errors.Is(err, ide.ErrDiffClosed) {
		t.Fatalf("OpenDiff = %v, want ErrDiffClosed", err)
	}
}

func TestCloseWhileDiffPending(t *testing.T) {
	comp := startCompanion(t, "tok")
	cl := connect(t, comp.endpoint())
	comp.notify(idewire.NotifyContextUpdate, ctxWith(file("/w/a.go", 1)))
	waitChanged(t, cl)
	done := make(chan error, 1)
	go func() {
		_, err := cl.OpenDiff(t.Context(), "/w/a.go", "x")
		done <- err
	}()
	comp.nextCall()
	if err := cl.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := recv(t, done); !errors.Is(err, ide.ErrClosed) {
		t.Fatalf("OpenDiff = %v, want ErrClosed", err)
	}
	// The editor's view was closed, as gemini-cli's disconnect closes it.
	if c := comp.nextCall(); c.tool != idewire.ToolCloseDiff || c.close.FilePath != "/w/a.go" {
		t.Fatalf("companion got %+v, want closeDiff of /w/a.go", c)
	}
	st := cl.Status()
	if st.State != ide.Disconnected || st.Details != "IDE integration disabled. To enable it again, run /ide enable." {
		t.Errorf("Status after Close = %+v", st)
	}
	if v, n := cl.Context(); v.WorkspaceState != nil || n != 0 {
		t.Errorf("Context after Close = %+v, %d; want (zero, 0)", v, n)
	}
	if _, err := cl.OpenDiff(t.Context(), "/w/a.go", "x"); !errors.Is(err, ide.ErrClosed) {
		t.Errorf("OpenDiff after Close = %v", err)
	}
	if _, err := cl.CloseDiff(t.Context(), "/w/a.go"); !errors.Is(err, ide.ErrClosed) {
		t.Errorf("CloseDiff after Close = %v", err)
	}
	if cl.CanDiff() {
		t.Error("CanDiff after Close")
	}
	if err := cl.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestCloseHungCompanion: Close returns even when the companion answers
// neither the closeDiff of a pending diff nor the session's DELETE.
func TestCloseHungCompanion(t *testing.T) {
	comp := startCompanion(t, "tok", hanging())
	cl := connect(t, comp.endpoint())
	done := make(chan error, 1)
	go func() {
		_, err := cl.OpenDiff(t.Context(), "/w/a.go", "x")
		done <- err
	}()
	comp.nextCall()
	closed := make(chan error, 1)
	go func() { closed <- cl.Close() }()
	if c := comp.nextCall(); c.tool != idewire.ToolCloseDiff {
		t.Fatalf("companion got %+v", c)
	}
	if err := recv(t, closed); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := recv(t, done); !errors.Is(err, ide.ErrClosed) {
		t.Fatalf("OpenDiff = %v, want ErrClosed", err)
	}
}

// TestCompanionRestart: the companion is killed during a diff and comes
// back on another port; the client fails the diff at once, goes
// Disconnected, and reconnects through re-discovery on its own clock.
func TestCompanionRestart(t *testing.T) {
	first := startCompanion(t, "tok-1")
	var (
		mu    sync.Mutex
		found = func() (ide.Endpoint, error) { return ide.Endpoint{}, errors.New("no IDE companion found") }
		tries int
	)
	rediscover := func() (ide.Endpoint, error) {
		mu.Lock()
		defer mu.Unlock()
		tries++
		return found()
	}
	var timers proctest.Timers
	const delay = 3 * time.Second
	cl := connect(t, first.endpoint(),
		ide.WithRediscover(rediscover),
		ide.WithBackOff(func() backoff.BackOff { return backoff.NewConstantBackOff(delay) }),
		ide.WithAfter(timers.After))

	first.notify(idewire.NotifyContextUpdate, ctxWith(file("/w/a.go", 1)))
	waitChanged(t, cl)
	done := make(chan error, 1)
	go func() {
		_, err := cl.OpenDiff(t.Context(), "/w/a.go", "x")
		done <- err
	}()
	first.nextCall()
	first.kill()

	if err := recv(t, done); !errors.Is(err, ide.ErrNotConnected) {
		t.Fatalf("OpenDiff when the companion died = %v, want ErrNotConnected", err)
	}
	// The client waits for its first retry: the loss is recorded by now.
	timers.Await(t, delay)
	st := cl.Status()
	if st.State != ide.Disconnected || !strings.HasPrefix(st.Details, "IDE connection error. The connection was lost unexpectedly.") && st.Details != "IDE connection closed. To reconnect, run /ide enable." {
		t.Errorf("Status after the loss = %+v", st)
	}
	lostText := st.Details
	waitChanged(t, cl) // the context was cleared
	if v, n := cl.Context(); v.WorkspaceState != nil || n != 0 {
		t.Errorf("Context after the loss = %+v, %d; want (zero, 0)", v, n)
	}
	// Nothing blocks while the companion is down.
	if cl.CanDiff() {
		t.Error("CanDiff while disconnected")
	}
	if _, err := cl.OpenDiff(t.Context(), "/w/a.go", "x"); !errors.Is(err, ide.ErrNotConnected) {
		t.Errorf("OpenDiff while disconnected = %v", err)
	}
	if _, err := cl.CloseDiff(t.Context(), "/w/a.go"); !errors.Is(err, ide.ErrNotConnected) {
		t.Errorf("CloseDiff while disconnected = %v", err)
	}

	// First retry: no companion yet; the status says what discovery said.
	timers.Fire(t, delay)
	timers.Await(t, delay)
	if st := cl.Status(); st.State != ide.Disconnected || st.Details != "no IDE companion found" {
		t.Errorf("Status after a failed retry = %+v (the loss said %q)", st, lostText)
	}

	// The companion is back on another port with another token.
	second := startCompanion(t, "tok-2")
	mu.Lock()
	found = func() (ide.Endpoint, error) { return second.endpoint(), nil }
	mu.Unlock()
	timers.Fire(t, delay)
	proctest.Eventually(t, "the client to reconnect", func() bool { return cl.Status().State == ide.Connected })
	if !cl.CanDiff() {
		t.Error("CanDiff after reconnecting = false")
	}
	mu.Lock()
	if tries != 2 {
		t.Errorf("re-discovery ran %d times, want 2", tries)
	}
	mu.Unlock()

	res := make(chan ide.DiffOutcome, 1)
	go func() {
		out, err := cl.OpenDiff(t.Context(), "/w/a.go", "y")
		if err != nil {
			t.Error(err)
		}
		res <- out
	}()
	if c := second.nextCall(); c.open.FilePath != "/w/a.go" {
		t.Fatalf("the new companion got %+v", c)
	}
	second.notify(idewire.NotifyDiffAccepted, idewire.DiffAccepted{FilePath: "/w/a.go", Content: "after restart"})
	if out := recv(t, res); out.Content != "after restart" {
		t.Fatalf("OpenDiff after reconnecting = %+v", out)
	}
	second.notify(idewire.NotifyContextUpdate, ctxWith(file("/w/b.go", 2)))
	waitChanged(t, cl)
	// The counter goes on from the last update: no value is reused.
	if v, n := cl.Context(); n != 2 || v.WorkspaceState.OpenFiles[0].Path != "/w/b.go" {
		t.Errorf("Context after reconnecting = %+v, %d", v.WorkspaceState, n)
	}
	for _, h := range second.authHeaders() {
		if h != "Bearer tok-2" {
			t.Fatalf("the new companion got Authorization %q", h)
		}
	}
}

// TestCloseWhileReconnecting: Close stops the retries, and a repeated
// Disconnected keeps the first text, as gemini-cli's setState does.
func TestCloseWhileReconnecting(t *testing.T) {
	comp := startCompanion(t, "tok")
	var timers proctest.Timers
	cl := connect(t, comp.endpoint(),
		ide.WithBackOff(func() backoff.BackOff { return backoff.NewConstantBackOff(time.Second) }),
		ide.WithAfter(timers.After))
	comp.kill()
	timers.Await(t, time.Second)
	lost := cl.Status()
	if err := cl.Close(); err != nil {
		t.Fatal(err)
	}
	if st := cl.Status(); st != lost {
		t.Errorf("Status after Close = %+v, want the loss's %+v kept", st, lost)
	}
}

func TestStatusString(t *testing.T) {
	for _, tt := range []struct {
		st   ide.Status
		want string
	}{
		{ide.Status{State: ide.Connected, IDE: "VS Code"}, "🟢 Connected to VS Code"},
		{ide.Status{State: ide.Connecting}, "🟡 Connecting..."},
		{ide.Status{State: ide.Disconnected, Details: "IDE connection closed. To reconnect, run /ide enable."}, "🔴 Disconnected: IDE connection closed. To reconnect, run /ide enable."},
		{ide.Status{State: ide.Disconnected}, "🔴 Disconnected"},
	} {
		if got := tt.st.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.st, got, tt.want)
		}
	}
}

// BenchmarkConnect measures Connect to a local companion (initialize, the
// standalone stream, tools/list), the connection's share of the start-up
// budget; Close is outside the timing.
func BenchmarkConnect(b *testing.B) {
	comp := startCompanion(b, "tok")
	ep := comp.endpoint()
	ctx := context.Background()
	for b.Loop() {
		cl, err := ide.Connect(ctx, ep)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cl.Close()
		b.StartTimer()
	}
}

// ExampleConnect connects in the background, as agentry's start-up does,
// and opens a diff when the companion offers it.
func ExampleConnect() {
	ep := ide.Endpoint{Port: 37001, Token: "token-from-the-discovery-file"}
	clients := make(chan *ide.Client, 1)
	go func() {
		cl, err := ide.Connect(context.Background(), ep)
		if err != nil {
			fmt.Println("no IDE:", err)
			close(clients)
			return
		}
		clients <- cl
	}()
	// … later, when an edit needs confirmation:
	if cl, ok := <-clients; ok && cl.CanDiff() {
		defer cl.Close()
		out, err := cl.OpenDiff(context.Background(), "/work/main.go", "package main\n")
		if err != nil {
			return // fall back to the terminal's confirmation
		}
		fmt.Println("accepted:", out.Accepted)
	}
}

// TestReconnectThroughDiscover: the re-discovery option is discovery run
// again over real discovery files: the companion dies and its file goes,
// discovery says so in the status, a new companion writes a file with a
// new port and token, and the client reconnects with them.
func TestReconnectThroughDiscover(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir, ws := filepath.Join(tmp, "gemini", "ide"), filepath.Join(tmp, "project")
	for _, d := range []string{dir, ws} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(c *testCompanion) string {
		data, err := json.Marshal(idewire.Discovery{Port: c.port, WorkspacePath: ws, AuthToken: c.token,
			IDEInfo: &idewire.IDEInfo{Name: "test", DisplayName: "Test IDE"}})
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, idewire.FileName(os.Getppid(), c.port))
		if err := os.WriteFile(f, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	opts := ide.DiscoverOptions{Dir: dir, Cwd: ws, LookupEnv: func(string) (string, bool) { return "", false }}
	rediscover := func() (ide.Endpoint, error) {
		ep, _, err := ide.Discover(opts)
		return ep, err
	}

	first := startCompanion(t, "token-1")
	file1 := write(first)
	ep, err := rediscover()
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	var timers proctest.Timers
	cl := connect(t, ep, ide.WithRediscover(rediscover),
		ide.WithBackOff(func() backoff.BackOff { return backoff.NewConstantBackOff(time.Second) }),
		ide.WithAfter(timers.After))

	first.kill()
	if err := os.Remove(file1); err != nil {
		t.Fatal(err)
	}
	timers.Fire(t, time.Second)
	timers.Await(t, time.Second)
	_, discoverErr := rediscover()
	if st := cl.Status(); st.State != ide.Disconnected || discoverErr == nil || st.Details != discoverErr.Error() {
		t.Errorf("Status with no discovery file = %+v, want discovery's %v", st, discoverErr)
	}

	second := startCompanion(t, "token-2")
	write(second)
	timers.Fire(t, time.Second)
	proctest.Eventually(t, "the client to reconnect", func() bool { return cl.Status().State == ide.Connected })
	if st := cl.Status(); st.String() != "🟢 Connected to Test IDE" || !cl.CanDiff() {
		t.Errorf("after reconnecting: %s, CanDiff %v", st, cl.CanDiff())
	}
	for _, h := range second.authHeaders() {
		if h != "Bearer token-2" {
			t.Fatalf("the new companion got Authorization %q", h)
		}
	}
}

// agentryEditor is the editor behind agentry's companion in the tests.
type agentryEditor struct {
	opened chan idewire.OpenDiffArgs
	closed chan string
}

func (e *agentryEditor) OpenDiff(path, content string) error {
	e.opened <- idewire.OpenDiffArgs{FilePath: path, NewContent: content}
	return nil
}
func (e *agentryEditor) CloseDiff(path string) { e.closed <- path }

// goldenCall is one MCP message as ide/companion's golden file of
// gemini-cli's calls records it.
type goldenCall struct {
	Method  string   `json:"method"`
	Tool    string   `json:"tool,omitempty"`
	ArgKeys []string `json:"argKeys,omitempty"`
}

// TestAgentryCompanion: the client against agentry's own companion
// (package ide/companion) over real HTTP: it makes the MCP calls
// gemini-cli 0.61.0 makes for an edit (ide/companion's golden file of
// them), gets the context and the accepted content, closes a diff, and
// reconnects when the companion is replaced by another.
func TestAgentryCompanion(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		calls []goldenCall
	)
	record := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			c := goldenCall{Method: method}
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
				c.Tool = p.Name
				var args map[string]json.RawMessage
				_ = json.Unmarshal(p.Arguments, &args)
				for k := range args {
					c.ArgKeys = append(c.ArgKeys, k)
				}
				slices.Sort(c.ArgKeys)
			}
			mu.Lock()
			calls = append(calls, c)
			mu.Unlock()
			return next(ctx, method, req)
		}
	}
	ed := &agentryEditor{opened: make(chan idewire.OpenDiffArgs, 4), closed: make(chan string, 4)}
	start := func() *companion.Server {
		srv, err := companion.New(companion.Config{Workspace: []string{ws}, Editor: ed, Dir: t.TempDir(),
			IDEInfo: &idewire.IDEInfo{Name: "agentry", DisplayName: "agentry companion"}, Middleware: []mcp.Middleware{record}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		return srv
	}
	endpoint := func(srv *companion.Server) ide.Endpoint {
		return ide.Endpoint{Port: srv.Port(), Token: srv.Token(), File: srv.File(),
			IDE: &idewire.IDEInfo{Name: "agentry", DisplayName: "agentry companion"}}
	}
	srv := start()
	var (
		cur    = srv
		timers proctest.Timers
	)
	rediscover := func() (ide.Endpoint, error) {
		mu.Lock()
		defer mu.Unlock()
		return endpoint(cur), nil
	}
	cl := connect(t, endpoint(srv), ide.WithRediscover(rediscover),
		ide.WithBackOff(func() backoff.BackOff { return backoff.NewConstantBackOff(time.Second) }),
		ide.WithAfter(timers.After))
	if !cl.CanDiff() {
		t.Fatal("CanDiff = false against agentry's companion")
	}

	// The companion greets a session with its context, then sends changes.
	waitChanged(t, cl)
	path := filepath.Join(ws, "main.go")
	srv.SetContext(ctxWith(file(path, 7)))
	waitChanged(t, cl)
	if v, n := cl.Context(); n != 2 || v.WorkspaceState == nil || v.WorkspaceState.OpenFiles[0].Path != path {
		t.Errorf("Context = %+v, %d", v.WorkspaceState, n)
	}

	// An edit accepted with other content, as gemini-cli's scenario.
	res := make(chan ide.DiffOutcome, 1)
	go func() {
		out, err := cl.OpenDiff(t.Context(), path, "package main\n")
		if err != nil {
			t.Error(err)
		}
		res <- out
	}()
	if got := recv(t, ed.opened); got != (idewire.OpenDiffArgs{FilePath: path, NewContent: "package main\n"}) {
		t.Fatalf("the editor got %+v", got)
	}
	if err := srv.AcceptDiff(path, "package main // accepted\n"); err != nil {
		t.Fatal(err)
	}
	if out := recv(t, res); out != (ide.DiffOutcome{Accepted: true, Content: "package main // accepted\n"}) {
		t.Fatalf("OpenDiff = %+v", out)
	}
	golden, err := os.ReadFile(filepath.Join("companion", "testdata", "gemini-cli-calls.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want []goldenCall
	if err := json.Unmarshal(golden, &want); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got, _ := json.Marshal(calls)
	mu.Unlock()
	if wantJSON, _ := json.Marshal(want); string(got) != string(wantJSON) {
		t.Errorf("agentry's MCP calls %s, gemini-cli's %s", got, wantJSON)
	}

	// The terminal answered first: the editor's view is closed with its content.
	go func() {
		_, err := cl.OpenDiff(t.Context(), path, "package main\n\nfunc main() {}\n")
		if !errors.Is(err, ide.ErrDiffClosed) {
			t.Errorf("OpenDiff ended by CloseDiff = %v", err)
		}
		res <- ide.DiffOutcome{}
	}()
	recv(t, ed.opened)
	if err := srv.UpdateDiff(path, "edited in the view\n"); err != nil {
		t.Fatal(err)
	}
	content, err := cl.CloseDiff(t.Context(), path)
	if err != nil || content == nil || *content != "edited in the view\n" {
		t.Fatalf("CloseDiff = %v, %v", content, err)
	}
	if p := recv(t, ed.closed); p != path {
		t.Fatalf("the editor closed %s", p)
	}
	recv(t, res)

	// The companion is replaced by another (a new port and token).
	next := start()
	mu.Lock()
	cur = next
	mu.Unlock()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	timers.Fire(t, time.Second)
	proctest.Eventually(t, "the client to reconnect", func() bool { return cl.Status().State == ide.Connected })
	if next.Port() == srv.Port() || !cl.CanDiff() {
		t.Errorf("reconnected to port %d (old %d), CanDiff %v", next.Port(), srv.Port(), cl.CanDiff())
	}
}
