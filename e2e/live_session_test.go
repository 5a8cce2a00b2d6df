package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/internal/termtest"
)

// liveClient is an outside client of /ws: coder/websocket with the
// Authorization header and the a2a.v1 subprotocol, nothing else.
type liveClient struct {
	t      *testing.T
	c      *websocket.Conn
	frames chan map[string]any
}

func dialLive(t *testing.T, url, token string) *liveClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		HTTPHeader:   http.Header{"Authorization": {"Bearer " + token}},
		Subprotocols: []string{"a2a.v1"},
	})
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	c.SetReadLimit(16 << 20)
	lc := &liveClient{t: t, c: c, frames: make(chan map[string]any, 4096)}
	go func() {
		defer close(lc.frames)
		for {
			_, data, err := c.Read(context.Background())
			if err != nil {
				return
			}
			var f map[string]any
			if json.Unmarshal(data, &f) == nil {
				lc.frames <- f
			}
		}
	}()
	t.Cleanup(func() { _ = c.CloseNow() })
	return lc
}

func (lc *liveClient) send(id any, method string, params any) {
	lc.t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err := lc.c.Write(lc.t.Context(), websocket.MessageText, b); err != nil {
		lc.t.Fatalf("write: %v", err)
	}
}

// until reads frames until stop accepts one; it returns them.
func (lc *liveClient) until(what string, stop func(map[string]any) bool) []map[string]any {
	lc.t.Helper()
	var out []map[string]any
	deadline := time.After(60 * time.Second)
	for {
		select {
		case f, ok := <-lc.frames:
			if !ok {
				lc.t.Fatalf("the connection closed while waiting for %s; frames: %v", what, out)
			}
			out = append(out, f)
			if stop(f) {
				return out
			}
		case <-deadline:
			lc.t.Fatalf("no %s; frames: %v", what, out)
		}
	}
}

// eventOf returns a frame's A2A event (a response's result or a
// notification's event), as JSON text.
func eventOf(f map[string]any) string {
	if p, ok := f["params"].(map[string]any); ok && f["method"] == "session/event" {
		b, _ := json.Marshal(p["event"])
		return string(b)
	}
	b, _ := json.Marshal(f["result"])
	return string(b)
}

func stateIs(state string) func(map[string]any) bool {
	return func(f map[string]any) bool {
		return strings.Contains(eventOf(f), `"state":"`+state+`"`) && strings.Contains(eventOf(f), "STATE_CHANGE")
	}
}

// TestLiveSessionSeedCriteria is the acceptance test of the live session
// endpoint: the interactive terminal with --a2a-port serves its session
// on /ws (1); a client sends prompts and receives the output (2); output
// of a turn typed in the terminal reaches the client (3); the client's
// prompts show in the terminal (4); a tool call's confirmation reaches
// the client, whose answer resolves the terminal's dialog (5).
func TestLiveSessionSeedCriteria(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(
		fakegemini.Text("Answer to the terminal."),
		fakegemini.Text("Answer to the client."),
		fakegemini.Call("run_shell_command", map[string]any{"command": "echo seed-ok > proof.txt"}),
		fakegemini.Text("Shell done."),
	)
	e := newEnv(t)
	e.geminiEnv(srv)
	// (1) The terminal and the server on the port it prints.
	tm := e.interactive("-m", "gemini-2.5-flash", "--a2a-port", "0")
	screen := tm.Scrollback()
	port := regexp.MustCompile(`serving session \S+ over A2A at http://127\.0\.0\.1:(\d+)`).FindStringSubmatch(screen)
	token := regexp.MustCompile(`A2A bearer token \(shown once\): (\S+)`).FindStringSubmatch(screen)
	if port == nil || token == nil {
		t.Fatalf("the terminal does not say where it serves its session, or its token:\n%s", screen)
	}
	lc := dialLive(t, fmt.Sprintf("ws://127.0.0.1:%s/ws?name=acp", port[1]), token[1])
	lc.until("session/attached", func(f map[string]any) bool { return f["method"] == "session/attached" })

	// (3) A turn typed in the terminal reaches the client.
	send(tm, "typed in the terminal")
	got := lc.until("the terminal turn's end", stateIs("TASK_STATE_COMPLETED"))
	var text strings.Builder
	for _, f := range got {
		if f["method"] != "session/event" {
			t.Fatalf("the terminal's turn reached the client as %v, want session/event notifications", f)
		}
		text.WriteString(eventOf(f))
	}
	if !strings.Contains(text.String(), "Answer to the terminal.") || !strings.Contains(text.String(), "typed in the terminal") {
		t.Fatalf("the client saw the terminal's turn as %s", text.String())
	}
	tm.WaitText("Answer to the terminal.")

	// (2) and (4): the client's prompt runs, its output comes back as
	// responses, and the terminal shows both.
	lc.send(1, "SendStreamingMessage", map[string]any{"message": map[string]any{
		"messageId": "p1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hello from acp"}},
	}})
	text.Reset()
	for _, f := range lc.until("the client turn's end", stateIs("TASK_STATE_COMPLETED")) {
		text.WriteString(eventOf(f))
	}
	if !strings.Contains(text.String(), "Answer to the client.") {
		t.Fatalf("the client's own turn: %s", text.String())
	}
	tm.WaitFor("the client's prompt and its answer", func(s string) bool {
		sb := tm.Scrollback()
		return strings.Contains(sb, "[A2A acp] hello from acp") && strings.Contains(sb, "Answer to the client.")
	})

	// (5) A confirmation: the client is asked, the terminal shows the
	// dialog, the client's answer closes it and the command runs.
	lc.send(2, "SendStreamingMessage", map[string]any{"message": map[string]any{
		"messageId": "p2", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "run the shell"}},
	}})
	var taskID, callID string
	for _, f := range lc.until("the confirmation request", stateIs("TASK_STATE_INPUT_REQUIRED")) {
		ev := eventOf(f)
		if m := regexp.MustCompile(`"tool_call_id":"([^"]+)"`).FindStringSubmatch(ev); m != nil && strings.Contains(ev, "confirmation_request") {
			callID = m[1]
		}
		if m := regexp.MustCompile(`"taskId":"([^"]+)"`).FindStringSubmatch(ev); m != nil {
			taskID = m[1]
		}
	}
	if callID == "" || taskID == "" {
		t.Fatal("no confirmation request reached the client")
	}
	tm.WaitText("Allow once")
	lc.send(3, "SendStreamingMessage", map[string]any{"message": map[string]any{
		"messageId": "p3", "role": "ROLE_USER", "taskId": taskID,
		"parts": []any{map[string]any{"data": map[string]any{"tool_call_id": callID, "selected_option_id": "proceed_once"}}},
	}})
	text.Reset()
	for _, f := range lc.until("the confirmed turn's end", stateIs("TASK_STATE_COMPLETED")) {
		text.WriteString(eventOf(f))
	}
	if !strings.Contains(text.String(), "EXECUTING") || !strings.Contains(text.String(), "Shell done.") {
		t.Fatalf("after its answer the client saw %s", text.String())
	}
	tm.WaitFor("the dialog closed and the turn done", func(s string) bool {
		return !strings.Contains(s, "Allow once") && strings.Contains(tm.Scrollback(), "Shell done.") && strings.Contains(s, promptReady)
	})
	if b, err := os.ReadFile(filepath.Join(e.ws, "proof.txt")); err != nil || strings.TrimSpace(string(b)) != "seed-ok" {
		t.Fatalf("proof.txt = %q, %v: the confirmed command did not run", b, err)
	}
	_ = termtest.Framed
}

// TestAttachSharesATerminalsSession: agentry attach drives the session
// of an interactive terminal served with --a2a-port: a prompt from either
// terminal is answered on both.
func TestAttachSharesATerminalsSession(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(fakegemini.Text("Answer before the attach."), fakegemini.Text("Answer to the attached terminal."), fakegemini.Text("Answer to the host."))
	e := newEnv(t)
	e.geminiEnv(srv)
	host := e.interactive("-m", "gemini-2.5-flash", "--a2a-port", "0")
	screen := host.Scrollback()
	port := regexp.MustCompile(`over A2A at http://127\.0\.0\.1:(\d+)`).FindStringSubmatch(screen)
	token := regexp.MustCompile(`A2A bearer token \(shown once\): (\S+)`).FindStringSubmatch(screen)
	if port == nil || token == nil {
		t.Fatalf("no port or token on the host terminal:\n%s", screen)
	}
	send(host, "before the attach")
	host.WaitFor("the first answer", func(s string) bool {
		return strings.Contains(host.Scrollback(), "Answer before the attach.") && strings.Contains(s, promptReady) && !strings.Contains(s, "Responding")
	})
	guest := termtest.Start(t, termtest.Options{
		Command: []string{binary, "attach", "ws://127.0.0.1:" + port[1] + "/ws"},
		Env:     append(e.environ(), "AGENTRY_A2A_TOKEN="+token[1]),
		Dir:     e.ws,
		Cols:    120, Rows: 40,
	})
	guest.WaitFor("the conversation so far in the attached terminal", func(string) bool {
		sb := guest.Scrollback()
		return strings.Contains(sb, "[terminal] before the attach") && strings.Contains(sb, "Answer before the attach.")
	})
	guest.WaitText(promptReady)

	send(guest, "from the attached terminal")
	guest.WaitFor("the answer in the attached terminal", func(string) bool {
		return strings.Contains(guest.Scrollback(), "Answer to the attached terminal.")
	})
	host.WaitFor("the guest's prompt and answer on the host", func(string) bool {
		sb := host.Scrollback()
		return strings.Contains(sb, "[A2A attach] from the attached terminal") && strings.Contains(sb, "Answer to the attached terminal.")
	})

	send(host, "from the host")
	host.WaitFor("the host's answer", func(string) bool { return strings.Contains(host.Scrollback(), "Answer to the host.") })
	guest.WaitFor("the host's prompt and answer in the attached terminal", func(string) bool {
		sb := guest.Scrollback()
		return strings.Contains(sb, "[terminal] from the host") && strings.Contains(sb, "Answer to the host.")
	})
}
