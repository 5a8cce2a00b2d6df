package attach

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/compose"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/protocol"
	"github.com/agentry-dev/agentry/protocol/guard"
	"github.com/agentry-dev/agentry/protocol/wsclient"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/tui"
)

// These tests run attach against agentry's own /ws endpoint: a
// protocol.Server behind its guard, whose sessions replay a scripted
// model.

const servedToken = "served-test-token-0123456789"

// served is a running server: its /ws URL and workspace.
type served struct {
	url       string
	workspace string
}

// serve starts a server whose model answers with lines (gemini-cli's
// --fake-responses format, one model response per line).
func serve(t *testing.T, lines ...string) served {
	t.Helper()
	s := config.Defaults()
	s.Workspace = t.TempDir()
	s.Home = filepath.Join(t.TempDir(), ".agentry")
	s.Session.Store = config.SessionStoreMemory
	replay := filepath.Join(t.TempDir(), "model.jsonl")
	if err := os.WriteFile(replay, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Model.Name = "replay:" + replay
	hs := httptest.NewUnstartedServer(nil)
	addr := hs.Listener.Addr().String()
	srv, err := protocol.New(protocol.Config{
		NewSession: func(ctx context.Context, r protocol.SessionRequest) (protocol.Session, error) {
			ws := s
			ws.Workspace = r.Workspace
			return compose.FromSettings(ctx, &ws, compose.Options{SessionID: r.ContextID, Approver: r.Approver})
		},
		Workspace: s.Workspace,
		Model:     s.Model.Name,
		BaseURL:   "http://" + addr,
		Version:   "test",
		Logger:    slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	g, err := guard.New(guard.Config{Token: servedToken, AllowedHosts: []string{addr}, MaxBodyBytes: 1 << 20, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = g.Wrap(srv.Handler())
	hs.Start()
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		srv.Close()
	})
	ws, err := filepath.EvalSymlinks(s.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	return served{url: "ws://" + addr + "/ws", workspace: ws}
}

// dial connects a client to srv.
func (srv served) dial(t *testing.T, opts wsclient.Options) *wsclient.Conn {
	t.Helper()
	opts.Token = servedToken
	c, err := wsclient.Dial(t.Context(), srv.url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// session attaches a terminal's session (with ap, which may be nil).
func (srv served) session(t *testing.T, ap *tui.Approver) *Session {
	t.Helper()
	s, err := New(t.Context(), srv.dial(t, wsclient.Options{Name: "terminal"}), ap)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// drain reads a client's notifications, as every client must.
func drain(c *wsclient.Conn) {
	go func() {
		for range c.Events() {
		}
	}()
}

func textTurn(text string) string {
	b, _ := json.Marshal(text)
	return fmt.Sprintf(`{"method":"generateContentStream","response":[{"candidates":[{"content":{"role":"model","parts":[{"text":%s}]},"finishReason":"STOP"}]}]}`, b)
}

func callTurn(name string, args map[string]any) string {
	a, _ := json.Marshal(args)
	return fmt.Sprintf(`{"method":"generateContentStream","response":[{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":%q,"args":%s}}]},"finishReason":"STOP"}]}]}`, name, a)
}

// types lists a stream's event types, with the agent's text and the end's
// reason.
func types(t *testing.T, s *Session, id string, until func(runtime.Event) bool) []string {
	t.Helper()
	var out []string
	for ev, err := range s.Stream(t.Context(), id) {
		if err != nil {
			t.Fatalf("stream: %v (after %q)", err, out)
		}
		item := string(ev.Type)
		switch {
		case ev.Type == runtime.EventMessage && ev.Message.Role == runtime.RoleAgent:
			item += ":" + ev.Message.Content[0].Text
		case ev.Type == runtime.EventAgentEnd:
			item += ":" + string(ev.AgentEnd.Reason)
		case ev.Type == runtime.EventError:
			item += ":" + ev.Error.Message
		}
		out = append(out, item)
		if until != nil && until(ev) {
			break
		}
	}
	return out
}

// A prompt from the terminal, an edit confirmed by another client, and a
// turn that other client starts, all on one served session.
func TestServedSession(t *testing.T) {
	srv := serve(t,
		callTurn("write_file", map[string]any{"file_path": "hello.py", "content": "print('hello')\n"}),
		textTurn("I wrote hello.py."),
		textTurn("Second answer."),
	)
	s := srv.session(t, nil)
	id, err := s.Send(t.Context(), runtime.TextMessage("Write a hello world script"))
	if err != nil {
		t.Fatal(err)
	}
	// The edit waits for a confirmation; this terminal has no approver.
	var callID string
	got := types(t, s, id, func(ev runtime.Event) bool {
		if ev.Type == runtime.EventToolRequest {
			callID = ev.ToolRequest.RequestID
			return true
		}
		return false
	})
	if callID == "" || s.ID() == "" {
		t.Fatalf("no tool request (%q), context %q", got, s.ID())
	}
	if s.Model() == "" {
		t.Errorf("no model named")
	}

	// Another client of the same session answers: it learns the task
	// waiting from session/attached.
	other := srv.dial(t, wsclient.Options{Name: "vscode", ContextID: s.ID()})
	var active string
	for n, err := range other.Events() {
		if err != nil {
			t.Fatal(err)
		}
		if n.Attached != nil {
			active = n.Attached.TaskID
			break
		}
	}
	drain(other)
	info := a2a.TaskInfo{TaskID: a2a.TaskID(active), ContextID: s.ID()}
	answer := a2a.NewMessageForTask(a2a.MessageRoleUser, info, a2a.NewDataPart(map[string]any{"tool_call_id": callID, "selected_option_id": "proceed_once"}))
	for _, err := range other.Stream(t.Context(), "SendStreamingMessage", &a2a.SendMessageRequest{Message: answer}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	got = types(t, s, id, nil)
	t.Logf("the terminal's turn: %q", got)
	want := "tool_update tool_response message:I wrote hello.py. agent_end:completed"
	if g := strings.Join(got[len(got)-4:], " "); g != want {
		t.Errorf("the rest of the turn: %q, want %q", got, want)
	}
	if b, err := os.ReadFile(filepath.Join(srv.workspace, "hello.py")); err != nil || string(b) != "print('hello')\n" {
		t.Errorf("hello.py: %q, %v", b, err)
	}

	// The other client's prompt is a turn announced to the terminal.
	prompt := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("And now?"))
	for _, err := range other.Stream(t.Context(), "SendStreamingMessage", &a2a.SendMessageRequest{Message: prompt}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	turn := <-s.Turns()
	if turn.Text != "And now?" || turn.Origin != "A2A vscode" {
		t.Errorf("turn %+v", turn)
	}
	got = types(t, s, turn.StreamID, nil)
	t.Logf("the other client's turn: %q", got)
	if g := strings.Join(got[len(got)-2:], " "); g != "message:Second answer. agent_end:completed" {
		t.Errorf("the other client's turn: %q", got)
	}

	// The server's slash commands.
	cmds, err := s.Commands(t.Context())
	if err != nil || len(cmds) == 0 {
		t.Fatalf("commands: %v, %v", cmds, err)
	}
	var out strings.Builder
	if err := s.Run(t.Context(), []string{"tools", "list"}, "", func(t string) { out.WriteString(t) }); err != nil || !strings.Contains(out.String(), "write_file") {
		t.Errorf("/tools list: %v, %q", err, out.String())
	}
	if err := s.Run(t.Context(), []string{"nonesuch"}, "", nil); err == nil || !strings.Contains(err.Error(), "nonesuch") {
		t.Errorf("/nonesuch: %v", err)
	}
}

// A confirmation answered in the terminal runs the call on the server.
func TestServedApprovalInTheTerminal(t *testing.T) {
	srv := serve(t,
		callTurn("write_file", map[string]any{"file_path": "a.txt", "content": "a\n"}),
		textTurn("Done."),
	)
	ap := tui.NewApprover()
	s := srv.session(t, ap)
	pr, pw := io.Pipe()
	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		errc <- tui.Run(ctx, tui.Config{Session: s, Approver: ap, Turns: s.Turns(), Workspace: "/served-test-ws",
			Input: pr, Output: out, Env: []string{"TTY_FORCE=1", "NO_COLOR=1", "TERM=xterm-256color"}, Width: 100, Height: 30})
		pr.Close()
	}()
	t.Cleanup(func() {
		cancel()
		<-errc
	})
	<-out.wait("served-test-ws")
	dialog := out.wait("Apply this change?")
	io.WriteString(pw, "write a\r")
	<-dialog
	done := out.wait("Done.")
	io.WriteString(pw, "1") // Allow once
	<-done
	if b, err := os.ReadFile(filepath.Join(srv.workspace, "a.txt")); err != nil || string(b) != "a\n" {
		t.Errorf("a.txt: %q, %v", b, err)
	}
}

// Abort cancels the served task: the stream ends aborted, which only
// the task's cancelled state does.
func TestServedAbort(t *testing.T) {
	srv := serve(t, callTurn("run_shell_command", map[string]any{"command": "echo hi"}))
	s := srv.session(t, nil)
	id, err := s.Send(t.Context(), runtime.TextMessage("say hi"))
	if err != nil {
		t.Fatal(err)
	}
	types(t, s, id, func(ev runtime.Event) bool { return ev.Type == runtime.EventToolRequest })
	s.Abort(nil)
	got := types(t, s, id, nil)
	if last := got[len(got)-1]; last != "agent_end:aborted" {
		t.Errorf("the stream: %q", got)
	}
}
