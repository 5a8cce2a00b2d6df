package attach

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"

	"github.com/agentry-dev/agentry/protocol/wsclient"
	"github.com/agentry-dev/agentry/tui"
)

// fakeServer is a /ws endpoint scripted by the test: it accepts one
// connection, and the test reads the client's requests and writes the
// frames docs/ws.md describes.
type fakeServer struct {
	t    *testing.T
	ws   *websocket.Conn
	once sync.Once
	done chan struct{}
}

// rpcRequest is a client's request as the server reads it.
type rpcRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// attachSession starts a fake server, dials it and returns the session
// over the connection (asking ap, which may be nil), with the server's
// end.
func attachSession(t *testing.T, ap *tui.Approver) (*Session, *fakeServer) {
	t.Helper()
	accepted := make(chan *fakeServer, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{wsclient.Subprotocol}})
		if err != nil {
			t.Errorf("accept: %v", err)
			return
		}
		f := &fakeServer{t: t, ws: ws, done: make(chan struct{})}
		accepted <- f
		<-f.done
	}))
	t.Cleanup(hs.Close)
	conn, err := wsclient.Dial(t.Context(), "ws"+strings.TrimPrefix(hs.URL, "http"), wsclient.Options{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(t.Context(), conn, ap)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f := <-accepted
	t.Cleanup(f.close) // before the session's Close: it need not wait for the server's close frame
	return s, f
}

func (f *fakeServer) close() {
	f.once.Do(func() {
		f.ws.CloseNow()
		close(f.done)
	})
}

// read reads the client's next request.
func (f *fakeServer) read() rpcRequest {
	f.t.Helper()
	_, b, err := f.ws.Read(f.t.Context())
	if err != nil {
		f.t.Fatalf("server read: %v", err)
	}
	var r rpcRequest
	if err := json.Unmarshal(b, &r); err != nil || len(r.ID) == 0 {
		f.t.Fatalf("not a request: %s (%v)", b, err)
	}
	return r
}

// expect reads the next request and checks its method.
func (f *fakeServer) expect(method string) rpcRequest {
	f.t.Helper()
	r := f.read()
	if r.Method != method {
		f.t.Fatalf("the client sent %s (%s), want %s", r.Method, r.Params, method)
	}
	return r
}

func (f *fakeServer) write(frame string) {
	f.t.Helper()
	if err := f.ws.Write(f.t.Context(), websocket.MessageText, []byte(frame)); err != nil {
		f.t.Fatalf("server write: %v", err)
	}
}

// respond sends a response to r carrying result and, if eventID > 0, its
// place in the session.
func (f *fakeServer) respond(r rpcRequest, eventID int, result string) {
	f.t.Helper()
	ev := ""
	if eventID > 0 {
		ev = fmt.Sprintf(`"eventId":%d,`, eventID)
	}
	f.write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,%s"result":%s}`, r.ID, ev, result))
}

// fail sends a JSON-RPC error for r.
func (f *fakeServer) fail(r rpcRequest, code int, msg string) {
	f.t.Helper()
	b, _ := json.Marshal(msg)
	f.write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, r.ID, code, b))
}

// notify sends an event as a session/event notification.
func (f *fakeServer) notify(eventID int, event string) {
	f.t.Helper()
	f.write(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/event","params":{"eventId":%d,"event":%s}}`, eventID, event))
}

const devURI = "https://github.com/google-gemini/gemini-cli/blob/main/docs/a2a/developer-profile/v0/spec.md"

// taskJSON is a task as the server announces it: its state and its
// first user message.
func taskJSON(id, state, msgID, prompt string) string {
	return fmt.Sprintf(`{"task":{"id":%q,"contextId":"c1","status":{"state":%q},"history":[{"messageId":%q,"role":"ROLE_USER","parts":[{"text":%q}]}]}}`,
		id, state, msgID, prompt)
}

// statusUpdate is a status update of task with the development-tool kind and
// message parts (raw JSON, "" for none).
func statusUpdate(task, state, kind, parts string) string {
	msg := ""
	if parts != "" {
		msg = fmt.Sprintf(`,"message":{"messageId":"m","role":"ROLE_AGENT","parts":%s}`, parts)
	}
	return fmt.Sprintf(`{"statusUpdate":{"taskId":%q,"contextId":"c1","status":{"state":%q%s},"metadata":{%q:{"kind":%q,"model":"gemini-test"}}}}`,
		task, state, msg, devURI, kind)
}

// toolCall is a TOOL_CALL_UPDATE's data part.
func toolCall(id, status, extra string) string {
	return fmt.Sprintf(`[{"data":{"tool_call_id":%q,"status":%q,"tool_name":"run_shell_command","input_parameters":{"command":"make test"}%s}}]`, id, status, extra)
}

// confirmation is a shell command's confirmation request.
const confirmation = `,"description":"make test","confirmation_request":{"options":[{"id":"proceed_once","name":"Allow once"},{"id":"proceed_always","name":"Allow always"},{"id":"cancel","name":"Reject"}],"execute_details":{"command":"make test","working_directory":"/ws"}}`
