package wsclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/coder/websocket"

	"github.com/agentry-dev/agentry/protocol/wsclient"
)

// server is a scripted /ws endpoint: each connection it accepts is handed
// to the test as a peer, which reads the client's requests and writes
// whatever frames the test scripts.
type server struct {
	t     *testing.T
	url   string
	peers chan *peer
	// handshakes receives every handshake request.
	handshakes chan *http.Request
	// refuse, when set, answers the handshake instead of accepting it.
	refuse func(w http.ResponseWriter)
	// noSubprotocol accepts without selecting a2a.v1.
	noSubprotocol bool
}

func newServer(t *testing.T) *server {
	s := &server{t: t, peers: make(chan *peer, 4), handshakes: make(chan *http.Request, 4)}
	hs := httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(hs.Close)
	s.url = "ws" + strings.TrimPrefix(hs.URL, "http") + "/ws"
	return s
}

func (s *server) handle(w http.ResponseWriter, r *http.Request) {
	s.handshakes <- r
	if s.refuse != nil {
		s.refuse(w)
		return
	}
	opts := &websocket.AcceptOptions{Subprotocols: []string{wsclient.Subprotocol}}
	if s.noSubprotocol {
		opts.Subprotocols = nil
	}
	ws, err := websocket.Accept(w, r, opts)
	if err != nil {
		s.t.Errorf("accept: %v", err)
		return
	}
	ws.SetReadLimit(-1)
	p := &peer{t: s.t, ws: ws, done: make(chan struct{})}
	s.peers <- p
	<-p.done
}

// accept waits for the next connection.
func (s *server) accept() *peer {
	p := <-s.peers
	s.t.Cleanup(p.close)
	return p
}

// peer is the server's end of one connection.
type peer struct {
	t    *testing.T
	ws   *websocket.Conn
	once sync.Once
	done chan struct{}
}

// rpc is a request as the server reads it.
type rpc struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// read reads the client's next request.
func (p *peer) read() rpc {
	p.t.Helper()
	typ, b, err := p.ws.Read(p.t.Context())
	if err != nil {
		p.t.Fatalf("server read: %v", err)
	}
	if typ != websocket.MessageText {
		p.t.Fatalf("the client sent a %v frame", typ)
	}
	var r rpc
	if err := json.Unmarshal(b, &r); err != nil {
		p.t.Fatalf("the client sent %q: %v", b, err)
	}
	if r.JSONRPC != "2.0" || len(r.ID) == 0 {
		p.t.Fatalf("the client sent a frame that is not a JSON-RPC 2.0 request: %s", b)
	}
	return r
}

// send writes a frame; %ID in it is replaced by id.
func (p *peer) send(frame string, id json.RawMessage) {
	p.t.Helper()
	frame = strings.ReplaceAll(frame, "%ID", string(id))
	if err := p.ws.Write(p.t.Context(), websocket.MessageText, []byte(frame)); err != nil {
		p.t.Fatalf("server write: %v", err)
	}
}

func (p *peer) close() {
	p.once.Do(func() {
		p.ws.CloseNow()
		close(p.done)
	})
}

// dial connects to s and returns both ends; the server's end closes
// first at cleanup, so that the client's Close does not wait for it.
func dial(t *testing.T, s *server, opts wsclient.Options) (*wsclient.Conn, *peer) {
	t.Helper()
	c, err := wsclient.Dial(t.Context(), s.url, opts)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c, s.accept()
}

func TestDialHandshake(t *testing.T) {
	s := newServer(t)
	const token = "s3cret-token"
	_, _ = dial(t, s, wsclient.Options{Token: token, Name: "vscode", ContextID: "ctx-1", LastEventID: 17, Version: "0.3"})
	r := <-s.handshakes
	if got := r.Header.Get("Authorization"); got != "Bearer "+token {
		t.Errorf("Authorization = %q", got)
	}
	if got := r.Header.Get("Sec-WebSocket-Protocol"); got != wsclient.Subprotocol {
		t.Errorf("Sec-WebSocket-Protocol = %q, want %s", got, wsclient.Subprotocol)
	}
	if got := r.Header.Get("Origin"); got != "" {
		t.Errorf("a client that is not a browser sent Origin %q", got)
	}
	q := r.URL.Query()
	want := map[string]string{"contextId": "ctx-1", "lastEventId": "17", "name": "vscode", "version": "0.3"}
	for k, v := range want {
		if q.Get(k) != v {
			t.Errorf("query %s = %q, want %q", k, q.Get(k), v)
		}
	}
	if len(q) != len(want) {
		t.Errorf("query %v has more than %v", q, want)
	}
	if strings.Contains(r.RequestURI, token) {
		t.Errorf("the token is in the URL: %s", r.RequestURI)
	}
}

func TestDialWithoutOptionsSendsNoQuery(t *testing.T) {
	s := newServer(t)
	_, _ = dial(t, s, wsclient.Options{})
	r := <-s.handshakes
	if r.URL.RawQuery != "" || r.Header.Get("Authorization") != "" {
		t.Errorf("query %q, Authorization %q", r.URL.RawQuery, r.Header.Get("Authorization"))
	}
}

func TestDialRefused(t *testing.T) {
	s := newServer(t)
	s.refuse = func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":"wrong or missing bearer token"}`))
	}
	_, err := wsclient.Dial(t.Context(), s.url, wsclient.Options{Token: "x"})
	var he *wsclient.HandshakeError
	if !errors.As(err, &he) || he.StatusCode != 401 || he.Message != "wrong or missing bearer token" {
		t.Fatalf("err = %v (%#v)", err, he)
	}
}

func TestDialRefusesAServerWithoutTheSubprotocol(t *testing.T) {
	s := newServer(t)
	s.noSubprotocol = true
	go func() {
		p := <-s.peers
		p.close()
	}()
	_, err := wsclient.Dial(t.Context(), s.url, wsclient.Options{})
	if err == nil || !strings.Contains(err.Error(), wsclient.Subprotocol) {
		t.Fatalf("err = %v", err)
	}
}

func TestDialBadURL(t *testing.T) {
	for _, u := range []string{"ftp://host/ws", "ws:///ws", "::"} {
		if _, err := wsclient.Dial(t.Context(), u, wsclient.Options{}); err == nil {
			t.Errorf("%q: no error", u)
		}
	}
}

// The dial context bounds the handshake only.
func TestDialContextEndsAfterTheHandshake(t *testing.T) {
	s := newServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	c, err := wsclient.Dial(ctx, s.url, wsclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	cancel()
	p := s.accept()
	go func() {
		r := p.read()
		p.send(`{"jsonrpc":"2.0","id":%ID,"result":{"ok":true}}`, r.ID)
	}()
	var res struct{ OK bool }
	if err := c.Call(t.Context(), "GetTask", map[string]string{"id": "t1"}, &res); err != nil || !res.OK {
		t.Fatalf("%v, %+v", err, res)
	}
}

// Calls from many goroutines share the connection; the server answers
// them in the reverse order and each gets its own answer.
func TestConcurrentCalls(t *testing.T) {
	s := newServer(t)
	c, p := dial(t, s, wsclient.Options{})
	const n = 16
	go func() {
		var reqs []rpc
		for range n {
			reqs = append(reqs, p.read())
		}
		for i := len(reqs) - 1; i >= 0; i-- {
			var params struct{ ID string }
			json.Unmarshal(reqs[i].Params, &params)
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%%ID,"result":{"id":%q,"contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`, params.ID), reqs[i].ID)
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			want := fmt.Sprint("task-", i)
			var task a2a.Task
			if err := c.Call(t.Context(), "GetTask", a2a.GetTaskRequest{ID: a2a.TaskID(want)}, &task); err != nil {
				errs <- err
				return
			}
			if string(task.ID) != want || task.Status.State != a2a.TaskStateCompleted {
				errs <- fmt.Errorf("call %d got %+v", i, task)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

const dev = `"metadata":{"https://github.com/google-gemini/gemini-cli/blob/main/docs/a2a/developer-profile/v0/spec.md":{"kind":%q}}`

func status(state, kind string) string {
	return fmt.Sprintf(`{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":%q},`+dev+`}}`, state, kind)
}

// A stream ends at input-required: a later frame with its id is not
// delivered, and notifications in between go to Events.
func TestStreamEndsAtInputRequired(t *testing.T) {
	s := newServer(t)
	c, p := dial(t, s, wsclient.Options{})
	go func() {
		r := p.read()
		if r.Method != "SendStreamingMessage" {
			t.Errorf("method %q", r.Method)
		}
		var req a2a.SendMessageRequest
		if err := json.Unmarshal(r.Params, &req); err != nil || req.Message.Parts[0].Text() != "list the files" {
			t.Errorf("params %s: %v", r.Params, err)
		}
		p.send(`{"jsonrpc":"2.0","id":%ID,"eventId":5,"result":{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_SUBMITTED"}}}}`, r.ID)
		p.send(`{"jsonrpc":"2.0","method":"session/event","params":{"eventId":6,"event":{"statusUpdate":{"taskId":"t0","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}}}`, nil)
		p.send(`{"jsonrpc":"2.0","id":%ID,"eventId":7,"result":`+status("TASK_STATE_WORKING", "STATE_CHANGE")+`}`, r.ID)
		p.send(`{"jsonrpc":"2.0","id":%ID,"eventId":8,"result":`+status("TASK_STATE_INPUT_REQUIRED", "STATE_CHANGE")+`}`, r.ID)
		p.send(`{"jsonrpc":"2.0","id":%ID,"eventId":9,"result":`+status("TASK_STATE_WORKING", "STATE_CHANGE")+`}`, r.ID)
		r = p.read()
		p.send(`{"jsonrpc":"2.0","id":%ID,"result":{"commands":[]}}`, r.ID)
	}()
	req := a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("list the files"))}
	var states []a2a.TaskState
	var ids []int64
	for f, err := range c.Stream(t.Context(), "SendStreamingMessage", req) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, f.EventID)
		switch e := f.Event.(type) {
		case *a2a.Task:
			states = append(states, e.Status.State)
		case *a2a.TaskStatusUpdateEvent:
			states = append(states, e.Status.State)
		default:
			t.Fatalf("frame %s decoded as %T", f.Result, f.Event)
		}
	}
	want := []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired}
	if fmt.Sprint(states) != fmt.Sprint(want) || fmt.Sprint(ids) != "[5 7 8]" {
		t.Errorf("states %v, event ids %v", states, ids)
	}
	// The connection is still fine after the frame nobody waits for.
	if err := c.Call(t.Context(), "commands/get", nil, nil); err != nil {
		t.Fatal(err)
	}
	for n, err := range c.Events() {
		if err != nil || n.Method != wsclient.MethodEvent || n.EventID != 6 {
			t.Fatalf("%+v, %v", n, err)
		}
		break
	}
	if got := c.LastEventID(); got != 9 {
		t.Errorf("LastEventID = %d, want 9", got)
	}
}

func TestNotifications(t *testing.T) {
	s := newServer(t)
	c, p := dial(t, s, wsclient.Options{})
	// A request from the server (docs/ws.md has none) is ignored.
	p.send(`{"jsonrpc":"2.0","id":1,"method":"session/ping","params":{}}`, nil)
	p.send(`{"jsonrpc":"2.0","method":"session/attached","params":{"contextId":"c1","taskId":"t1","lastEventId":16,"replayed":0,"gap":false}}`, nil)
	p.send(`{"jsonrpc":"2.0","method":"session/event","params":{"eventId":17,"event":{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"},"history":[{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}]}}}}`, nil)
	// The same event as A2A 0.3 sends it (version=0.3).
	p.send(`{"jsonrpc":"2.0","method":"session/event","params":{"eventId":18,"event":{"kind":"status-update","taskId":"t1","contextId":"c1","final":false,"status":{"state":"working"}}}}`, nil)
	p.send(`{"jsonrpc":"2.0","method":"session/event","params":{"eventId":19,"event":{"bogus":{}}}}`, nil)
	p.send(`{"jsonrpc":"2.0","method":"session/other","params":{"x":1}}`, nil)
	var got []wsclient.Notification
	for n, err := range c.Events() {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
		if len(got) == 5 {
			break
		}
	}
	if a := got[0].Attached; got[0].Method != wsclient.MethodAttached || a == nil || *a != (wsclient.Attached{ContextID: "c1", TaskID: "t1", LastEventID: 16}) {
		t.Errorf("attached: %+v", got[0])
	}
	task, ok := got[1].Event.(*a2a.Task)
	if !ok || got[1].EventID != 17 || task.ID != "t1" || task.History[0].Parts[0].Text() != "hi" {
		t.Errorf("task: %+v", got[1])
	}
	su, ok := got[2].Event.(*a2a.TaskStatusUpdateEvent)
	if !ok || su.Status.State != a2a.TaskStateWorking || su.TaskID != "t1" {
		t.Errorf("0.3 status update: %+v", got[2])
	}
	if got[3].Event != nil || string(got[3].RawEvent) != `{"bogus":{}}` || got[3].EventID != 19 {
		t.Errorf("undecodable event: %+v", got[3])
	}
	if got[4].Method != "session/other" || string(got[4].Params) != `{"x":1}` {
		t.Errorf("unknown method: %+v", got[4])
	}
	if c.LastEventID() != 19 {
		t.Errorf("LastEventID = %d", c.LastEventID())
	}
}

func TestJSONRPCErrors(t *testing.T) {
	s := newServer(t)
	c, p := dial(t, s, wsclient.Options{})
	go func() {
		r := p.read()
		p.send(`{"jsonrpc":"2.0","id":%ID,"error":{"code":-32600,"message":"tool call c1 of task t1 was already answered (proceed_once) by the terminal","data":{"by":"terminal"}}}`, r.ID)
		r = p.read()
		p.send(`{"jsonrpc":"2.0","id":%ID,"result":`+status("TASK_STATE_WORKING", "STATE_CHANGE")+`}`, r.ID)
		p.send(`{"jsonrpc":"2.0","id":%ID,"error":{"code":-32001,"message":"task t9 not found"}}`, r.ID)
	}()
	err := c.Call(t.Context(), "SendMessage", map[string]any{}, nil)
	var rpcErr *wsclient.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32600 || !strings.Contains(rpcErr.Message, "already answered") || string(rpcErr.Data) != `{"by":"terminal"}` {
		t.Fatalf("err = %v", err)
	}
	if !errors.Is(err, a2a.ErrInvalidRequest) {
		t.Errorf("%v is not a2a.ErrInvalidRequest", err)
	}
	var n int
	var last error
	for _, err := range c.Stream(t.Context(), "SubscribeToTask", a2a.SubscribeToTaskRequest{ID: "t9"}) {
		n++
		last = err
	}
	if n != 2 || !errors.Is(last, a2a.ErrTaskNotFound) {
		t.Errorf("%d items, last error %v", n, last)
	}
}

// A server's close frame reaches every waiting call, Events and
// CloseStatus.
func TestServerCloseCode(t *testing.T) {
	s := newServer(t)
	c, p := dial(t, s, wsclient.Options{})
	go func() {
		p.read()
		p.ws.Close(4003, "the terminal switched to context ctx-2")
	}()
	err := c.Call(t.Context(), "GetTask", a2a.GetTaskRequest{ID: "t1"}, nil)
	var ce *wsclient.CloseError
	if !errors.As(err, &ce) || ce.Code != 4003 || ce.Reason != "the terminal switched to context ctx-2" {
		t.Fatalf("err = %v", err)
	}
	if code, reason := c.CloseStatus(); code != 4003 || !strings.Contains(reason, "ctx-2") {
		t.Errorf("CloseStatus = %d %q", code, reason)
	}
	<-c.Done()
	if !errors.As(c.Err(), &ce) {
		t.Errorf("Err = %v", c.Err())
	}
	var last error
	for _, err := range c.Events() {
		last = err
	}
	if !errors.As(last, &ce) {
		t.Errorf("Events ended with %v", last)
	}
	if err := c.Call(t.Context(), "GetTask", nil, nil); !errors.As(err, &ce) {
		t.Errorf("a call after the close: %v", err)
	}
}

// A caller that does not read notifications gets its connection closed,
// not an ever-growing queue.
func TestUnreadNotificationsCloseTheConnection(t *testing.T) {
	s := newServer(t)
	c, p := dial(t, s, wsclient.Options{MaxQueued: 3})
	for i := range 4 {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/event","params":{"eventId":%d,"event":{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}}}`, i+1), nil)
	}
	<-c.Done()
	if !errors.Is(c.Err(), wsclient.ErrFellBehind) {
		t.Fatalf("Err = %v", c.Err())
	}
	// The server sees the client's close.
	_, _, err := p.ws.Read(t.Context())
	if code := websocket.CloseStatus(err); code != websocket.StatusPolicyViolation {
		t.Errorf("the server read %v (code %d)", err, code)
	}
	// What was queued is still delivered, then the error.
	var n int
	var last error
	for _, err := range c.Events() {
		if err != nil {
			last = err
			break
		}
		n++
	}
	if n != 3 || !errors.Is(last, wsclient.ErrFellBehind) {
		t.Errorf("%d notifications, then %v", n, last)
	}
}

// A stream nobody reads is bounded the same way.
func TestUnreadStreamClosesTheConnection(t *testing.T) {
	s := newServer(t)
	c, p := dial(t, s, wsclient.Options{MaxQueued: 2})
	st, err := c.Start(t.Context(), "SendStreamingMessage", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	r := p.read()
	for range 3 {
		p.send(`{"jsonrpc":"2.0","id":%ID,"result":`+status("TASK_STATE_WORKING", "TEXT_CONTENT")+`}`, r.ID)
	}
	<-c.Done()
	var last error
	for _, err := range st.Frames() {
		last = err
	}
	if !errors.Is(last, wsclient.ErrFellBehind) {
		t.Errorf("the stream ended with %v", last)
	}
}

// A call whose context ends is abandoned; its late answer is dropped and
// the connection goes on.
func TestCallContextCancelled(t *testing.T) {
	s := newServer(t)
	c, p := dial(t, s, wsclient.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	read := make(chan rpc)
	go func() { read <- p.read() }()
	errc := make(chan error)
	go func() { errc <- c.Call(ctx, "GetTask", nil, nil) }()
	first := <-read
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	go func() {
		p.send(`{"jsonrpc":"2.0","id":%ID,"result":{"late":true}}`, first.ID)
		r := p.read()
		p.send(`{"jsonrpc":"2.0","id":%ID,"result":{"late":false}}`, r.ID)
	}()
	var res struct{ Late bool }
	if err := c.Call(t.Context(), "GetTask", nil, &res); err != nil || res.Late {
		t.Fatalf("%v, %+v", err, res)
	}
}

func TestClose(t *testing.T) {
	s := newServer(t)
	c, p := dial(t, s, wsclient.Options{})
	go func() {
		// The server reads until the client's close frame.
		for {
			if _, _, err := p.ws.Read(t.Context()); err != nil {
				return
			}
		}
	}()
	waiting := make(chan error)
	st, err := c.Start(t.Context(), "SubscribeToTask", a2a.SubscribeToTaskRequest{ID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		var last error
		for _, err := range st.Frames() {
			last = err
		}
		waiting <- last
	}()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-waiting; !errors.Is(err, wsclient.ErrClosed) {
		t.Errorf("the open stream ended with %v", err)
	}
	for _, err := range c.Events() {
		t.Errorf("Events after Close yielded %v", err)
	}
	if err := c.Call(t.Context(), "GetTask", nil, nil); !errors.Is(err, wsclient.ErrClosed) {
		t.Errorf("a call after Close: %v", err)
	}
	if code, _ := c.CloseStatus(); code != 0 {
		t.Errorf("CloseStatus after the client's own close: %d", code)
	}
}

func TestDecodeEventAndFinal(t *testing.T) {
	cases := []struct {
		raw   string
		final bool
	}{
		{`{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_SUBMITTED"}}}`, false},
		{`{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`, true},
		{`{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_AUTH_REQUIRED"}}}`, true},
		{`{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_CANCELED"}}}`, true},
		{`{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"x"}]}}}`, false},
		{`{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x"}]}}`, true},
		{`{"kind":"status-update","taskId":"t","contextId":"c","final":true,"status":{"state":"input-required"}}`, true},
		{`{"kind":"task","id":"t","contextId":"c","status":{"state":"working"}}`, false},
	}
	for _, c := range cases {
		ev, err := wsclient.DecodeEvent(json.RawMessage(c.raw))
		if err != nil {
			t.Errorf("%s: %v", c.raw, err)
			continue
		}
		if got := wsclient.Final(ev); got != c.final {
			t.Errorf("%s: Final = %v", c.raw, got)
		}
	}
	for _, bad := range []string{``, `[]`, `{"execution_id":"x","status":"STARTED"}`, `{"kind":"nonsense"}`} {
		if ev, err := wsclient.DecodeEvent(json.RawMessage(bad)); err == nil {
			t.Errorf("%q decoded as %T", bad, ev)
		}
	}
}
