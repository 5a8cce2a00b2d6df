package protocol_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"github.com/coder/websocket"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/compose"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/protocol"
	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/protocol/listen"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/runtime/llm"
)

// wsFrame is a frame from the server.
type wsFrame struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	EventID int64           `json:"eventId"`
	Result  json.RawMessage `json:"result"`
	Params  json.RawMessage `json:"params"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// event decodes the A2A event a frame carries (a stream response or a
// session/event notification) and its eventId.
func (f wsFrame) event(t testing.TB) (a2a.Event, int64) {
	t.Helper()
	raw, id := f.Result, f.EventID
	if f.Method == "session/event" {
		var p struct {
			EventID int64           `json:"eventId"`
			Event   json.RawMessage `json:"event"`
		}
		if err := json.Unmarshal(f.Params, &p); err != nil {
			t.Fatalf("session/event params: %v", err)
		}
		raw, id = p.Event, p.EventID
	}
	var sr a2a.StreamResponse
	if err := json.Unmarshal(raw, &sr); err != nil {
		t.Fatalf("event %s: %v", raw, err)
	}
	return sr.Event, id
}

// wsConn is a test's WebSocket client: coder/websocket, as any Go client
// would use it, with every frame it receives kept in order.
type wsConn struct {
	t      testing.TB
	c      *websocket.Conn
	frames chan wsFrame
	done   chan struct{}
	// status is the close status once done.
	status websocket.StatusCode
	reason string
}

type dialOpts struct {
	query   string
	header  http.Header
	protos  []string
	noToken bool
	noRead  bool
	host    string
}

// hostTransport sends requests with another Host header.
type hostTransport string

func (h hostTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Host = string(h)
	return http.DefaultTransport.RoundTrip(r)
}

func (h *harness) wsURL(query string) string {
	u := "ws" + strings.TrimPrefix(h.url, "http") + protocol.WSPath
	if query != "" {
		u += "?" + query
	}
	return u
}

// dialWS connects; it fails the test on a refused handshake.
func (h *harness) dialWS(t testing.TB, o dialOpts) *wsConn {
	t.Helper()
	c, resp, err := h.tryDial(t, o)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	w := &wsConn{t: t, c: c, frames: make(chan wsFrame, 1<<16), done: make(chan struct{})}
	c.SetReadLimit(64 << 20)
	if !o.noRead {
		go w.read()
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	return w
}

func (h *harness) tryDial(t testing.TB, o dialOpts) (*websocket.Conn, *http.Response, error) {
	hdr := http.Header{}
	for k, v := range o.header {
		hdr[k] = v
	}
	if !o.noToken {
		hdr.Set("Authorization", "Bearer "+testToken)
	}
	protos := o.protos
	if protos == nil {
		protos = []string{protocol.WSSubprotocol}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	opts := &websocket.DialOptions{HTTPHeader: hdr, Subprotocols: protos}
	if o.host != "" {
		opts.HTTPClient = &http.Client{Transport: hostTransport(o.host)}
	}
	return websocket.Dial(ctx, h.wsURL(o.query), opts)
}

func (w *wsConn) read() {
	defer close(w.done)
	for {
		typ, data, err := w.c.Read(context.Background())
		if err != nil {
			w.status = websocket.CloseStatus(err)
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				w.reason = ce.Reason
			}
			close(w.frames)
			return
		}
		if typ != websocket.MessageText {
			w.t.Errorf("a binary frame from the server")
			continue
		}
		var f wsFrame
		if err := json.Unmarshal(data, &f); err != nil || f.JSONRPC != "2.0" {
			w.t.Errorf("not a JSON-RPC frame: %s", data)
			continue
		}
		w.frames <- f
	}
}

// send writes a request.
func (w *wsConn) send(id any, method string, params any) {
	w.t.Helper()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		w.t.Fatal(err)
	}
	w.sendRaw(websocket.MessageText, b)
}

func (w *wsConn) sendRaw(typ websocket.MessageType, b []byte) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.c.Write(ctx, typ, b); err != nil {
		w.t.Fatalf("write: %v", err)
	}
}

// next returns the next frame; the test fails if none comes (a bound
// only a broken server reaches).
func (w *wsConn) next() wsFrame {
	w.t.Helper()
	select {
	case f, ok := <-w.frames:
		if !ok {
			w.t.Fatalf("connection closed (%d %q) while a frame was expected", w.status, w.reason)
		}
		return f
	case <-time.After(2 * time.Minute):
		w.t.Fatal("no frame from the server")
	}
	return wsFrame{}
}

// until returns the frames up to and including the first that stop
// accepts.
func (w *wsConn) until(stop func(wsFrame) bool) []wsFrame {
	w.t.Helper()
	var out []wsFrame
	for {
		f := w.next()
		out = append(out, f)
		if stop(f) {
			return out
		}
	}
}

// closed waits for the server to close the connection and returns the
// status.
func (w *wsConn) closed() (websocket.StatusCode, string) {
	w.t.Helper()
	for {
		select {
		case _, ok := <-w.frames:
			if !ok {
				return w.status, w.reason
			}
		case <-time.After(30 * time.Second):
			w.t.Fatal("the server did not close the connection")
		}
	}
}

// endsTask reports whether a frame carries an event ending an execution.
func endsTask(t testing.TB) func(wsFrame) bool {
	return func(f wsFrame) bool {
		if f.Error != nil {
			return true
		}
		if f.Method == "session/attached" {
			return false
		}
		ev, _ := f.event(t)
		switch e := ev.(type) {
		case *a2a.TaskStatusUpdateEvent:
			return e.Status.State.Terminal() || e.Status.State == a2a.TaskStateInputRequired
		}
		return false
	}
}

// events decodes the events among frames.
func events(t testing.TB, fs []wsFrame) ([]a2a.Event, []int64) {
	var evs []a2a.Event
	var ids []int64
	for _, f := range fs {
		if f.Error != nil || f.Method == "session/attached" {
			continue
		}
		ev, id := f.event(t)
		evs = append(evs, ev)
		ids = append(ids, id)
	}
	return evs, ids
}

// shared is a harness serving one adopted session (as --a2a-port does),
// its approver the server's, with an optional local approver.
type shared struct {
	*harness
	sess  *runtime.Session
	turns chan protocol.Turn
}

func newShared(t testing.TB, lines []string, local runtime.EditingApprover, opts ...harnessOption) *shared {
	t.Helper()
	return adopt(t, newHarness(t, lines, opts...), local)
}

// adopt serves one session of h's settings as an adopted context.
func adopt(t testing.TB, h *harness, local runtime.EditingApprover) *shared {
	t.Helper()
	ap := &protocol.SharedApprover{}
	sess, err := compose.FromSettings(t.Context(), h.settings, compose.Options{SessionID: "shared-1", Approver: ap, Resolver: h.resolver})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	sh := &shared{harness: h, sess: sess, turns: make(chan protocol.Turn, 16)}
	adopt := []protocol.AdoptOption{protocol.WithApprover(ap), protocol.WithTurns(func(tr protocol.Turn) { sh.turns <- tr })}
	if local != nil {
		adopt = append(adopt, protocol.WithLocalApprover(local))
	}
	if err := h.srv.Adopt(sess, h.settings.Workspace, adopt...); err != nil {
		t.Fatal(err)
	}
	return sh
}

func wsOpts(ws protocol.WSConfig) harnessOption {
	return func(c *protocol.Config, _ *config.Settings) { c.WS = ws }
}

func messageParams(text string) map[string]any {
	return map[string]any{"message": map[string]any{"messageId": fmt.Sprintf("m-%d", time.Now().UnixNano()), "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}}
}

func confirmParams(task a2a.TaskID, call, option string) map[string]any {
	return map[string]any{"message": map[string]any{
		"messageId": fmt.Sprintf("c-%d", time.Now().UnixNano()), "role": "ROLE_USER", "taskId": string(task),
		"parts": []any{map[string]any{"data": map[string]any{"tool_call_id": call, "selected_option_id": option}}},
	}}
}

// attached reads the session/attached notification.
func (w *wsConn) attached() map[string]any {
	w.t.Helper()
	f := w.next()
	if f.Method != "session/attached" {
		w.t.Fatalf("first frame %s %s, want session/attached", f.Method, f.Result)
	}
	var p map[string]any
	_ = json.Unmarshal(f.Params, &p)
	return p
}

func TestWSBroadcastsATurnToEveryClient(t *testing.T) {
	sh := newShared(t, []string{textTurn("Hello ", "from ", "agentry.")}, nil)
	a := sh.dialWS(t, dialOpts{query: "name=alpha"})
	b := sh.dialWS(t, dialOpts{})
	c := sh.dialWS(t, dialOpts{query: "version=1.0"})
	for _, w := range []*wsConn{a, b, c} {
		if p := w.attached(); p["contextId"] != "shared-1" || p["taskId"] != "" {
			t.Fatalf("attached %v", p)
		}
	}
	a.send(1, "SendStreamingMessage", messageParams("hi"))
	own := a.until(endsTask(t))
	for _, f := range own {
		if string(f.ID) != "1" || f.Method != "" {
			t.Fatalf("a frame of the sender's own turn is not a response of its request: %+v", f)
		}
	}
	ownEvs, ownIDs := events(t, own)
	if got := textOf(ownEvs); got != "Hello from agentry." {
		t.Fatalf("sender's text %q", got)
	}
	if _, ok := ownEvs[0].(*a2a.Task); !ok {
		t.Fatalf("first event %T, want the task (as on SSE)", ownEvs[0])
	}
	for _, w := range []*wsConn{b, c} {
		fs := w.until(endsTask(t))
		evs, ids := events(t, fs)
		for _, f := range fs {
			if f.Method != "session/event" {
				t.Fatalf("another client got %+v, want session/event notifications", f)
			}
		}
		if describe(evs) != describe(ownEvs) || fmt.Sprint(ids) != fmt.Sprint(ownIDs) {
			t.Fatalf("a client saw\n%s %v\nthe sender\n%s %v", describe(evs), ids, describe(ownEvs), ownIDs)
		}
		if evs[0].(*a2a.Task).ID != ownEvs[0].(*a2a.Task).ID {
			t.Fatal("clients see different task ids for one turn")
		}
	}
	for i := 1; i < len(ownIDs); i++ {
		if ownIDs[i] != ownIDs[i-1]+1 {
			t.Fatalf("event ids %v have a gap", ownIDs)
		}
	}
	select {
	case tr := <-sh.turns:
		if tr.Origin != "A2A alpha" || tr.Text != "hi" || tr.StreamID == "" {
			t.Fatalf("turn announced as %+v", tr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the driver was not told of the client's turn")
	}
}

func TestWSDriverTurnReachesClients(t *testing.T) {
	sh := newShared(t, []string{textTurn("typed ", "answer")}, nil)
	w := sh.dialWS(t, dialOpts{})
	w.attached()
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("from the terminal"))
	m.ContextID = sh.sess.ID()
	if _, _, err := sh.srv.Submit(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	evs, _ := events(t, w.until(endsTask(t)))
	if got := textOf(evs); got != "typed answer" {
		t.Fatalf("client saw %q of the terminal's turn", got)
	}
	select {
	case tr := <-sh.turns:
		t.Fatalf("the driver's own turn was announced back to it: %+v", tr)
	default:
	}
}

func TestWSMessagesWhileBusyAreQueued(t *testing.T) {
	sh := newShared(t, []string{textTurn("one"), textTurn("two"), textTurn("three")}, nil)
	ws := []*wsConn{sh.dialWS(t, dialOpts{}), sh.dialWS(t, dialOpts{}), sh.dialWS(t, dialOpts{})}
	for i, w := range ws {
		w.attached()
		w.send(i+1, "SendStreamingMessage", messageParams(fmt.Sprint("turn ", i)))
	}
	var texts []string
	for _, w := range ws {
		var own []wsFrame
		for len(own) == 0 || !endsTask(t)(own[len(own)-1]) {
			f := w.next()
			if f.Method == "" {
				own = append(own, f)
			}
		}
		if own[len(own)-1].Error != nil {
			t.Fatalf("a message while busy was refused: %s", own[len(own)-1].Error.Message)
		}
		evs, _ := events(t, own)
		last := evs[len(evs)-1].(*a2a.TaskStatusUpdateEvent)
		if last.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("turn ended %s", last.Status.State)
		}
		texts = append(texts, textOf(evs))
	}
	got := strings.Join(texts, ",")
	if len(texts) != 3 || !strings.Contains("one,two,three", texts[0]) || texts[0] == texts[1] || texts[1] == texts[2] || texts[0] == texts[2] {
		t.Fatalf("answers %s: want each of one, two, three once", got)
	}
}

// localApprover stands for the terminal's dialog: it answers when go is
// closed, unless the request is withdrawn first.
type localApprover struct {
	start     chan struct{}
	asked     chan struct{}
	withdrawn chan struct{}
	once      sync.Once
}

func (l *localApprover) Approve(ctx context.Context, r runtime.ApprovalRequest) (runtime.Outcome, error) {
	o, _, err := l.ApproveEdit(ctx, r)
	return o, err
}

func (l *localApprover) ApproveEdit(ctx context.Context, _ runtime.ApprovalRequest) (runtime.Outcome, map[string]any, error) {
	l.once.Do(func() { close(l.asked) })
	select {
	case <-l.start:
		return runtime.ProceedOnce, nil, nil
	case <-ctx.Done():
		close(l.withdrawn)
		return runtime.Cancel, nil, ctx.Err()
	}
}

// pendingCall waits for a client to see the confirmation request and
// returns the task and call.
func pendingCall(t *testing.T, w *wsConn) (a2a.TaskID, string) {
	t.Helper()
	var task a2a.TaskID
	var call string
	for _, f := range w.until(endsTask(t)) {
		if f.Method == "session/attached" || f.Error != nil {
			continue
		}
		ev, _ := f.event(t)
		if u, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
			task = u.TaskID
			if tc := toolCallOf(u); tc != nil && tc.ConfirmationRequest != nil {
				call = tc.ToolCallID
			}
		}
	}
	if call == "" {
		t.Fatal("no confirmation request reached the client")
	}
	return task, call
}

func TestWSConfirmationRacedByAHundredResponders(t *testing.T) {
	const clients = 99 // and the terminal: 100 responders
	local := &localApprover{start: make(chan struct{}), asked: make(chan struct{}), withdrawn: make(chan struct{})}
	sh := newShared(t, []string{
		callTurn("", "run_shell_command", map[string]any{"command": "printf '%s\\n' raced"}),
		textTurn("done"),
	}, local, wsOpts(protocol.WSConfig{MaxClients: 128}))
	ws := make([]*wsConn, clients)
	for i := range ws {
		ws[i] = sh.dialWS(t, dialOpts{query: fmt.Sprintf("name=c%d", i)})
		ws[i].attached()
	}
	ws[0].send("start", "SendStreamingMessage", messageParams("run it"))
	var task a2a.TaskID
	var call string
	for _, w := range ws {
		task, call = pendingCall(t, w)
	}
	<-local.asked

	var wg sync.WaitGroup
	begin := make(chan struct{})
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-begin
			w.send(fmt.Sprint("answer-", i), "SendMessage", confirmParams(task, call, "proceed_once"))
		}()
	}
	close(begin)
	close(local.start)
	wg.Wait()

	// Each client: its answer's response (among the session's events),
	// and exactly one EXECUTING for the call.
	var winners []int
	var losers []string
	for i, w := range ws {
		executing := 0
		var resp *wsFrame
		done := false
		for resp == nil || !done {
			f := w.next()
			if string(f.ID) == fmt.Sprintf(`"answer-%d"`, i) {
				resp = &f
				continue
			}
			if f.Method == "session/event" || string(f.ID) == `"start"` {
				ev, _ := f.event(t)
				if u, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
					if tc := toolCallOf(u); tc != nil && tc.ToolCallID == call && tc.Status == devtool.StatusExecuting && tc.LiveContent == "" {
						executing++
					}
					done = done || u.Status.State.Terminal()
				}
			}
		}
		if executing != 1 {
			t.Errorf("client %d saw EXECUTING %d times", i, executing)
		}
		if resp.Error != nil {
			losers = append(losers, resp.Error.Message)
		} else {
			winners = append(winners, i)
		}
	}
	// The server says who won: one client, or (no client having won) the
	// terminal; every other answer is refused naming the winner.
	winner := "by the terminal"
	switch len(winners) {
	case 0:
	case 1:
		winner = fmt.Sprintf(`by client "c%d"`, winners[0])
	default:
		t.Fatalf("%d clients' answers were accepted: %v", len(winners), winners)
	}
	if len(losers) != clients-len(winners) {
		t.Fatalf("%d refusals for %d losing clients", len(losers), clients-len(winners))
	}
	for _, msg := range losers {
		if !strings.Contains(msg, "already answered") || !strings.Contains(msg, winner) {
			t.Fatalf("a losing answer got %q: want it to say the call was already answered %s", msg, winner)
		}
	}
}

func TestWSTerminalAnswerResolvesTheClients(t *testing.T) {
	local := &localApprover{start: make(chan struct{}), asked: make(chan struct{}), withdrawn: make(chan struct{})}
	sh := newShared(t, []string{
		callTurn("", "run_shell_command", map[string]any{"command": "printf '%s\\n' from-terminal"}),
		textTurn("ran"),
	}, local)
	w := sh.dialWS(t, dialOpts{})
	w.attached()
	w.send(1, "SendStreamingMessage", messageParams("go"))
	task, call := pendingCall(t, w)
	<-local.asked
	close(local.start) // the terminal answers
	evs, _ := events(t, w.until(func(f wsFrame) bool {
		ev, _ := f.event(t)
		u, ok := ev.(*a2a.TaskStatusUpdateEvent)
		return ok && u.Status.State.Terminal()
	}))
	if !strings.Contains(describe(evs), "TOOL_CALL_UPDATE:working/EXECUTING") || !strings.HasSuffix(describe(evs), "STATE_CHANGE:completed") {
		t.Fatalf("after the terminal's answer the client saw %s", describe(evs))
	}
	// A late client answer is refused, naming the terminal.
	w.send(2, "SendMessage", confirmParams(task, call, "cancel"))
	f := w.next()
	if f.Error == nil || !strings.Contains(f.Error.Message, "by the terminal") {
		t.Fatalf("a late answer got %+v", f)
	}
}

func TestWSClientAnswerWithdrawsTheTerminalDialog(t *testing.T) {
	local := &localApprover{start: make(chan struct{}), asked: make(chan struct{}), withdrawn: make(chan struct{})}
	sh := newShared(t, []string{
		callTurn("", "run_shell_command", map[string]any{"command": "printf '%s\\n' x"}),
		textTurn("ok"),
	}, local)
	w := sh.dialWS(t, dialOpts{query: "name=ide"})
	w.attached()
	w.send(1, "SendStreamingMessage", messageParams("go"))
	task, call := pendingCall(t, w)
	<-local.asked
	w.send(2, "SendStreamingMessage", confirmParams(task, call, "cancel"))
	select {
	case <-local.withdrawn:
	case <-time.After(30 * time.Second):
		t.Fatal("the terminal's dialog stayed after a client answered")
	}
	evs, _ := events(t, w.until(func(f wsFrame) bool {
		return string(f.ID) == "2" && endsTask(t)(f)
	}))
	if !strings.Contains(describe(evs), "/CANCELLED") {
		t.Fatalf("after a cancel the client saw %s", describe(evs))
	}
}

func TestWSJoinMidTurnGetsTheTurnSoFar(t *testing.T) {
	sh := newShared(t, []string{callTurn("Checking.", "run_shell_command", map[string]any{"command": "printf '%s\\n' x"}), textTurn("ok")}, nil)
	a := sh.dialWS(t, dialOpts{})
	a.attached()
	a.send(1, "SendStreamingMessage", messageParams("go"))
	task, _ := pendingCall(t, a)
	b := sh.dialWS(t, dialOpts{})
	p := b.attached()
	if p["taskId"] != string(task) {
		t.Fatalf("attached %v: want the active task %s", p, task)
	}
	ev, id := b.next().event(t)
	snap, ok := ev.(*a2a.Task)
	if !ok || snap.ID != task || snap.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("a joining client got %T %v first, want the task so far (input-required)", ev, ev)
	}
	if float64(id) != p["lastEventId"] {
		t.Fatalf("snapshot eventId %d, attached says %v", id, p["lastEventId"])
	}
	if !strings.Contains(textOf(toEvents(snap.History)), "Checking.") {
		t.Fatalf("the snapshot lacks the turn's text: %+v", snap.History)
	}
}

// toEvents wraps history messages as status updates for textOf.
func toEvents(h []*a2a.Message) []a2a.Event {
	var out []a2a.Event
	for _, m := range h {
		out = append(out, &a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{Message: m}, Metadata: map[string]any{devtool.URI: map[string]any{"kind": "TEXT_CONTENT"}}})
	}
	return out
}

func TestWSReconnectMissesNothing(t *testing.T) {
	sh := newShared(t, []string{textTurn("a1 ", "a2"), textTurn("b1 ", "b2")}, nil)
	steady := sh.dialWS(t, dialOpts{})
	steady.attached()
	flaky := sh.dialWS(t, dialOpts{})
	flaky.attached()
	steady.send(1, "SendStreamingMessage", messageParams("first"))
	_, want := events(t, steady.until(endsTask(t)))
	_, seen := events(t, flaky.until(endsTask(t)))
	last := seen[len(seen)-1]
	_ = flaky.c.Close(websocket.StatusNormalClosure, "")
	// A second turn while the flaky client is away.
	steady.send(2, "SendStreamingMessage", messageParams("second"))
	_, more := events(t, steady.until(endsTask(t)))
	want = append(want, more...)

	back := sh.dialWS(t, dialOpts{query: fmt.Sprintf("lastEventId=%d", last)})
	p := back.attached()
	if p["gap"] != false || p["replayed"] != float64(len(more)) {
		t.Fatalf("attached %v: want no gap and %d replayed", p, len(more))
	}
	_, replayed := events(t, back.until(endsTask(t)))
	got := append(seen, replayed...)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("event ids across the reconnect %v, want %v", got, want)
	}
}

func TestWSBadInput(t *testing.T) {
	sh := newShared(t, []string{textTurn("x")}, nil, wsOpts(protocol.WSConfig{MaxFrameBytes: 4096}))
	refused := []struct {
		name   string
		o      dialOpts
		status int
		want   string
	}{
		{"no token", dialOpts{noToken: true}, 401, "missing bearer token"},
		{"token in the query string", dialOpts{noToken: true, query: "token=" + testToken}, 401, "not accepted"},
		{"foreign origin", dialOpts{header: http.Header{"Origin": {"https://evil.example"}}}, 403, "origin not allowed"},
		{"no subprotocol", dialOpts{protos: []string{"chat"}}, 400, "a2a.v1"},
		{"unknown context", dialOpts{query: "contextId=nope"}, 404, "names no running session"},
		{"bad lastEventId", dialOpts{query: "lastEventId=-1"}, 400, "lastEventId"},
		{"bad version", dialOpts{query: "version=2"}, 400, "version"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			_, resp, err := sh.tryDial(t, tc.o)
			if err == nil || resp == nil || resp.StatusCode != tc.status {
				t.Fatalf("dial: %v, %v: want HTTP %d", err, resp, tc.status)
			}
			var body struct{ Error string }
			_ = json.NewDecoder(resp.Body).Decode(&body)
			if !strings.Contains(body.Error, tc.want) {
				t.Fatalf("refusal %q, want it to mention %q", body.Error, tc.want)
			}
		})
	}
	t.Run("token as a subprotocol", func(t *testing.T) {
		w := sh.dialWS(t, dialOpts{noToken: true, protos: []string{protocol.WSSubprotocol, "a2a.bearer." + base64.RawURLEncoding.EncodeToString([]byte(testToken))}})
		if got := w.c.Subprotocol(); got != protocol.WSSubprotocol {
			t.Fatalf("selected subprotocol %q", got)
		}
		w.attached()
	})
	t.Run("foreign host", func(t *testing.T) {
		_, resp, err := sh.tryDial(t, dialOpts{host: "evil.example"})
		if err == nil || resp == nil || resp.StatusCode != 403 {
			t.Fatalf("foreign Host: %v %v", err, resp)
		}
	})
	t.Run("frames", func(t *testing.T) {
		w := sh.dialWS(t, dialOpts{})
		w.attached()
		w.sendRaw(websocket.MessageText, []byte(`{"hello": "world"}`))
		if f := w.next(); f.Error == nil || f.Error.Code != -32600 {
			t.Fatalf("JSON that is not JSON-RPC: %+v", f)
		}
		w.send(1, "NoSuchMethod", map[string]any{})
		if f := w.next(); f.Error == nil || f.Error.Code != -32601 {
			t.Fatalf("unknown method: %+v", f)
		}
		w.sendRaw(websocket.MessageText, []byte(`{"jsonrpc":"2.0","method":"GetTask","params":{"id":"x"}}`))
		if f := w.next(); f.Error == nil || !strings.Contains(f.Error.Message, "no id") {
			t.Fatalf("a request without id: %+v", f)
		}
		w.send(2, "SendMessage", confirmParams("no-such-task", "c1", "proceed_once"))
		if f := w.next(); f.Error == nil || string(f.ID) != "2" {
			t.Fatalf("a confirmation for an unknown task: %+v", f)
		}
		w.send(3, "GetTask", map[string]any{"id": "no-such-task"})
		if f := w.next(); f.Error == nil || string(f.ID) != "3" {
			t.Fatalf("GetTask of an unknown task: %+v", f)
		}
		// Still up: a real turn works.
		w.send(4, "SendStreamingMessage", messageParams("still there?"))
		if evs, _ := events(t, w.until(endsTask(t))); textOf(evs) != "x" {
			t.Fatalf("after bad frames the connection answered %s", describe(evs))
		}
		w.sendRaw(websocket.MessageText, []byte(`{not json`))
		if f := w.next(); f.Error == nil || f.Error.Code != -32700 {
			t.Fatalf("invalid JSON: %+v", f)
		}
		if code, _ := w.closed(); code != websocket.StatusInvalidFramePayloadData {
			t.Fatalf("closed %d after invalid JSON, want 1007", code)
		}
	})
	t.Run("binary frame", func(t *testing.T) {
		w := sh.dialWS(t, dialOpts{})
		w.attached()
		w.sendRaw(websocket.MessageBinary, []byte{1, 2, 3})
		if code, _ := w.closed(); code != websocket.StatusUnsupportedData {
			t.Fatalf("closed %d after a binary frame, want 1003", code)
		}
	})
	t.Run("oversized frame", func(t *testing.T) {
		w := sh.dialWS(t, dialOpts{})
		w.attached()
		w.sendRaw(websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+strings.Repeat("x", 8192)+`"}}`))
		if code, _ := w.closed(); code != websocket.StatusMessageTooBig {
			t.Fatalf("closed %d after an oversized frame, want 1009", code)
		}
	})
	t.Run("answered call", func(t *testing.T) {
		sh := newShared(t, []string{callTurn("", "run_shell_command", map[string]any{"command": "printf '%s\\n' y"}), textTurn("ok")}, nil)
		w := sh.dialWS(t, dialOpts{query: "name=first"})
		w.attached()
		w.send(1, "SendStreamingMessage", messageParams("go"))
		task, call := pendingCall(t, w)
		w.send(2, "SendStreamingMessage", confirmParams(task, call, "proceed_once"))
		w.until(func(f wsFrame) bool { return string(f.ID) == "2" && endsTask(t)(f) })
		w.send(3, "SendMessage", confirmParams(task, call, "proceed_once"))
		f := w.next()
		for f.Method != "" {
			f = w.next()
		}
		if f.Error == nil || !strings.Contains(f.Error.Message, "already answered") || !strings.Contains(f.Error.Message, `by client "first"`) {
			if f.Error != nil {
				t.Log(f.Error.Message)
			}
			t.Fatalf("a confirmation for an answered call: %+v", f)
		}
	})
	t.Run("maximum clients", func(t *testing.T) {
		sh := newShared(t, []string{textTurn("x")}, nil, wsOpts(protocol.WSConfig{MaxClients: 1}))
		sh.dialWS(t, dialOpts{}).attached()
		w := sh.dialWS(t, dialOpts{})
		if code, reason := w.closed(); code != websocket.StatusTryAgainLater || !strings.Contains(reason, "maximum") {
			t.Fatalf("a client over the maximum: closed %d %q", code, reason)
		}
	})
}

// gatedModel streams its answer one chunk per value on next.
type gatedModel struct {
	chunks []string
	next   chan struct{}
}

func (g gatedModel) Resolve(_ context.Context, _ string) (llm.Target, error) {
	ref, err := llm.ParseModel("gemini-2.5-flash")
	return llm.Target{Ref: ref, Backend: g}, err
}

func (g gatedModel) GenerateContent(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	return nil, errors.New("gated model: streaming only")
}

func (g gatedModel) CountTokens(context.Context, string, []*genai.Content, *genai.CountTokensConfig) (*genai.CountTokensResponse, error) {
	return &genai.CountTokensResponse{TotalTokens: 10}, nil
}

func (g gatedModel) GenerateContentStream(ctx context.Context, _ string, _ []*genai.Content, _ *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		for i, text := range g.chunks {
			select {
			case <-g.next:
			case <-ctx.Done():
				yield(nil, ctx.Err())
				return
			}
			c := &genai.Candidate{Content: genai.NewContentFromText(text, genai.RoleModel)}
			if i == len(g.chunks)-1 {
				c.FinishReason = genai.FinishReasonStop
			}
			if !yield(&genai.GenerateContentResponse{Candidates: []*genai.Candidate{c}}, nil) {
				return
			}
		}
	}
}

// floodChunks is 400 chunks of 64 KB: far more than the kernel buffers
// a client that stops reading, so its frames pile up on the server.
func floodChunks() []string {
	chunks := make([]string, 400)
	rnd := rand.New(rand.NewPCG(1, 2)) // text without repeats, which loop detection would stop
	for i := range chunks {
		var b strings.Builder
		for b.Len() < 64<<10 {
			fmt.Fprintf(&b, "%x ", rnd.Uint64())
		}
		chunks[i] = b.String()[:64<<10]
	}
	return chunks
}

// flood has fast stream model's chunks while stuck reads nothing. The
// model sends a chunk only once the reading client has the previous one,
// so that client never has more than a frame or two queued.
func flood(t *testing.T, model gatedModel, fast *wsConn) {
	t.Helper()
	fast.attached()
	fast.send(1, "SendStreamingMessage", messageParams("flood"))
	var text strings.Builder
	for i := range model.chunks {
		model.next <- struct{}{}
		for text.Len() < (i+1)*(64<<10) {
			f := fast.next()
			if f.Error != nil {
				t.Fatalf("the reading client got an error: %s", f.Error.Message)
			}
			evs, _ := events(t, []wsFrame{f})
			text.WriteString(textOf(evs))
		}
	}
	fast.until(endsTask(t))
	if text.String() != strings.Join(model.chunks, "") {
		t.Fatalf("the reading client got %d bytes of %d", text.Len(), len(strings.Join(model.chunks, "")))
	}
}

func TestWSSlowClientIsClosedAndOthersGoOn(t *testing.T) {
	model := gatedModel{chunks: floodChunks(), next: make(chan struct{})}
	// No pings and no write timeout: under a loaded machine the flood may
	// outlast either, and only the queue's bound is under test.
	h := newHarness(t, nil, wsOpts(protocol.WSConfig{QueueFrames: 16, WriteTimeout: time.Hour, PingInterval: -1}))
	h.resolver = model
	sh := adopt(t, h, nil)
	stuck := sh.dialWS(t, dialOpts{noRead: true})
	flood(t, model, sh.dialWS(t, dialOpts{}))
	go stuck.read() // reading again, it finds the close after what was sent
	code, reason := stuck.closed()
	if code != 4000 || !strings.Contains(reason, "fell behind") {
		t.Fatalf("the stuck client was closed %d %q, want 4000", code, reason)
	}
}

func TestWSStalledWriteDropsTheClient(t *testing.T) {
	// The stuck client's queue has room for the whole answer, so only the
	// write timeout can drop it: the server's write to it stalls once the
	// kernel's buffers are full.
	model := gatedModel{chunks: floodChunks(), next: make(chan struct{})}
	// No pings: a stuck client answers none, and only the write
	// timeout may drop it however long the flood takes.
	h := newHarness(t, nil, wsOpts(protocol.WSConfig{QueueFrames: 1 << 16, WriteTimeout: 2 * time.Second, PingInterval: -1}))
	h.resolver = model
	sh := adopt(t, h, nil)
	sh.dialWS(t, dialOpts{noRead: true})
	flood(t, model, sh.dialWS(t, dialOpts{}))
	// The server dropped the stuck client under a stalled write. (What
	// the client then reads depends on the kernel: the closed socket's
	// unsent data may still reach it, or be reset; it is not checked.)
	proctest.Eventually(t, "the server to drop the stuck client", func() bool { return protocol.WSClients(h.srv, "shared-1") == 1 })
}

func TestWSIdleAndPing(t *testing.T) {
	now := &fakeNow{t: time.Unix(1e9, 0)}
	sh := newShared(t, []string{textTurn("x")}, nil, wsOpts(protocol.WSConfig{IdleTimeout: time.Minute, PingInterval: 20 * time.Millisecond}), func(c *protocol.Config, _ *config.Settings) { c.Now = now.get })
	w := sh.dialWS(t, dialOpts{})
	w.attached()
	now.add(2 * time.Minute)
	if code, reason := w.closed(); code != 4001 || !strings.Contains(reason, "idle") {
		t.Fatalf("idle client closed %d %q, want 4001", code, reason)
	}
}

func TestWSClientWithoutPongIsClosed(t *testing.T) {
	sh := newShared(t, []string{textTurn("x")}, nil, wsOpts(protocol.WSConfig{PingInterval: 20 * time.Millisecond}))
	w := sh.dialWS(t, dialOpts{noRead: true}) // a client that does not read answers no ping
	// Polling the server for the client joining, then leaving (closed):
	// only then does the client read (and so answer pings) again.
	for protocol.WSClients(sh.srv, sh.sess.ID()) != 1 {
		time.Sleep(time.Millisecond)
	}
	for protocol.WSClients(sh.srv, sh.sess.ID()) != 0 {
		time.Sleep(time.Millisecond)
	}
	go w.read()
	if code, reason := w.closed(); code != 4002 || !strings.Contains(reason, "pong") {
		t.Fatalf("a client without pongs closed %d %q, want 4002", code, reason)
	}
}

type fakeNow struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeNow) get() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeNow) add(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

func TestWSServeAttachesTheFirstMessagesContext(t *testing.T) {
	h := newHarness(t, []string{textTurn("one"), textTurn("two")})
	w := h.dialWS(t, dialOpts{})
	w.send(1, "SendStreamingMessage", messageParams("start"))
	fs := w.until(endsTask(t))
	if fs[0].Method != "session/attached" {
		t.Fatalf("first frame %+v, want session/attached once the message named the context", fs[0])
	}
	var p map[string]any
	_ = json.Unmarshal(fs[0].Params, &p)
	ctxID, _ := p["contextId"].(string)
	evs, _ := events(t, fs)
	if ctxID == "" || evs[0].(*a2a.Task).ContextID != ctxID {
		t.Fatalf("attached to %q, task in %q", ctxID, evs[0].(*a2a.Task).ContextID)
	}
	// A second client of that context sees the next turn.
	other := h.dialWS(t, dialOpts{query: "contextId=" + ctxID})
	other.attached()
	w.send(2, "SendStreamingMessage", messageParams("again"))
	if evs, _ := events(t, other.until(endsTask(t))); textOf(evs) != "two" {
		t.Fatalf("the context's other client saw %s", describe(evs))
	}
	// A message naming another context is refused on this connection.
	params := messageParams("elsewhere")
	params["message"].(map[string]any)["contextId"] = "another"
	w.send(3, "SendMessage", params)
	f := w.next()
	for f.Method != "" || string(f.ID) != "3" {
		f = w.next()
	}
	if f.Error == nil || !strings.Contains(f.Error.Message, "follows context") {
		t.Fatalf("a message for another context: %+v", f)
	}
}

// TestWSOutlivesTheHTTPServersTimeouts: a connection quiet for longer
// than agentry serve's HTTP timeouts (header, body, idle) still works:
// they bound requests, not the connection a request became.
func TestWSOutlivesTheHTTPServersTimeouts(t *testing.T) {
	h := newHarness(t, []string{textTurn("still here")})
	sh := adopt(t, h, nil)
	const d = 50 * time.Millisecond
	hs := listen.NewServer(h.http.Config.Handler, listen.Limits{ReadHeaderTimeout: d, IdleTimeout: d, BodyTimeout: d, WriteByteTimeout: d})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	// The guard allows the harness's host only: dial this server under it.
	c, _, err := websocket.Dial(ctx, "ws://"+ln.Addr().String()+protocol.WSPath, &websocket.DialOptions{
		HTTPHeader:   http.Header{"Authorization": {"Bearer " + testToken}},
		Subprotocols: []string{protocol.WSSubprotocol},
		HTTPClient:   &http.Client{Transport: hostTransport(strings.TrimPrefix(h.url, "http://"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	w := &wsConn{t: t, c: c, frames: make(chan wsFrame, 1024), done: make(chan struct{})}
	go w.read()
	t.Cleanup(func() { _ = c.CloseNow() })
	w.attached()
	time.Sleep(10 * d) // quiet well past every timeout
	w.send(1, "SendStreamingMessage", messageParams("there?"))
	if evs, _ := events(t, w.until(endsTask(t))); textOf(evs) != "still here" {
		t.Fatalf("after a quiet spell the connection answered %s", describe(evs))
	}
	_ = sh
}

// TestWSSenderLeavingDoesNotAbortTheTurn: on a shared session a turn is
// everyone's; its sender disconnecting mid-turn leaves it to the others
// (a client of the HTTP binding leaving would abort it).
func TestWSSenderLeavingDoesNotAbortTheTurn(t *testing.T) {
	model := gatedModel{chunks: []string{"first ", "second"}, next: make(chan struct{})}
	h := newHarness(t, nil)
	h.resolver = model
	sh := adopt(t, h, nil)
	a := sh.dialWS(t, dialOpts{})
	a.attached()
	b := sh.dialWS(t, dialOpts{})
	b.attached()
	a.send(1, "SendMessage", messageParams("go"))
	model.next <- struct{}{}
	b.until(func(f wsFrame) bool { evs, _ := events(t, []wsFrame{f}); return textOf(evs) == "first " })
	_ = a.c.Close(websocket.StatusNormalClosure, "bye")
	<-a.done
	for protocol.WSClients(h.srv, sh.sess.ID()) != 1 {
		time.Sleep(time.Millisecond) // polling for the leave, not asserting a time
	}
	select {
	case model.next <- struct{}{}:
	case <-time.After(30 * time.Second):
		t.Fatal("the model stopped streaming: the turn was aborted when its sender left")
	}
	evs, _ := events(t, b.until(endsTask(t)))
	if !strings.HasSuffix(describe(evs), "STATE_CHANGE:completed") || textOf(evs) != "second" {
		t.Fatalf("after its sender left the turn went %s", describe(evs))
	}
}

// TestWSCloseDeliversWhatIsQueued: a server shutting down (a headless
// run with --a2a-port closes its server as soon as its turn ends) writes
// what it queued for a client before closing it 1001, so a client that
// is megabytes behind still gets the turn to its end.
func TestWSCloseDeliversWhatIsQueued(t *testing.T) {
	// 16 chunks of 512 KB: twice what the kernel buffers for a client
	// that is not reading yet, so many of its frames are queued.
	chunks := make([]string, 16)
	rnd := rand.New(rand.NewPCG(3, 4)) // text without repeats, which loop detection would stop
	for i := range chunks {
		var b strings.Builder
		for b.Len() < 512<<10 {
			fmt.Fprintf(&b, "%x ", rnd.Uint64())
		}
		chunks[i] = b.String()[:512<<10]
	}
	model := gatedModel{chunks: chunks, next: make(chan struct{})}
	close(model.next)
	// No pings and no write timeout: the client behind reads nothing
	// until the shutdown, however long the turn takes.
	h := newHarness(t, nil, wsOpts(protocol.WSConfig{WriteTimeout: time.Hour, PingInterval: -1}))
	h.resolver = model
	sh := adopt(t, h, nil)
	behind := sh.dialWS(t, dialOpts{noRead: true})
	w := sh.dialWS(t, dialOpts{})
	w.attached()
	w.send(1, "SendStreamingMessage", messageParams("flood"))
	w.until(endsTask(t))

	closed := make(chan error, 1)
	go func() { closed <- sh.srv.Close() }()
	// The reading client's close says the shutdown has begun.
	if code, reason := w.closed(); code != websocket.StatusGoingAway || !strings.Contains(reason, "shutting down") {
		t.Errorf("the reading client was closed %d %q, want 1001", code, reason)
	}
	go behind.read()
	behind.attached()
	evs, _ := events(t, behind.until(endsTask(t)))
	if got := textOf(evs); got != strings.Join(chunks, "") {
		t.Errorf("the client behind got %d bytes of the turn's %d", len(got), len(strings.Join(chunks, "")))
	}
	if code, reason := behind.closed(); code != websocket.StatusGoingAway || !strings.Contains(reason, "shutting down") {
		t.Errorf("the client behind was closed %d %q, want 1001", code, reason)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}

// TestWSFromTheStart: a shared session keeps its events from the start,
// so a client that joins later with lastEventId=0 gets the conversation
// so far before the live turns.
func TestWSFromTheStart(t *testing.T) {
	sh := newShared(t, []string{textTurn("earlier answer")}, nil)
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("earlier prompt"))
	m.ContextID = sh.sess.ID()
	if _, _, err := sh.srv.Submit(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	w := sh.dialWS(t, dialOpts{query: "lastEventId=0"})
	p := w.attached()
	if p["gap"] != false {
		t.Fatalf("attached %v: want every event from the first", p)
	}
	evs, ids := events(t, w.until(endsTask(t)))
	if ids[0] != 1 || textOf(evs) != "earlier answer" {
		t.Fatalf("replayed %v: %s", ids, describe(evs))
	}
	if task := evs[0].(*a2a.Task); task.History[0].Metadata[protocol.OriginKey] != "terminal" {
		t.Fatalf("the driver's prompt is not marked as the terminal's: %v", task.History[0].Metadata)
	}
}

// gatedStore is a task store whose update to a held state waits until
// the test lets it through.
type gatedStore struct {
	taskstore.Store
	hold    a2a.TaskState
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (g *gatedStore) Update(ctx context.Context, u *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	if u.Task.Status.State == g.hold {
		g.once.Do(func() {
			close(g.entered)
			<-g.release
		})
	}
	return g.Store.Update(ctx, u)
}

// TestStateEndingAnExecutionIsStoredFirst: input-required (like a final
// state) reaches no client before the store has it, so that a restart
// finds the task parked; working again after a confirmation may go out
// first.
func TestStateEndingAnExecutionIsStoredFirst(t *testing.T) {
	store := &gatedStore{
		Store: taskstore.NewInMemory(&taskstore.InMemoryStoreConfig{Authenticator: protocol.SingleUser}),
		hold:  a2a.TaskStateInputRequired, entered: make(chan struct{}), release: make(chan struct{}),
	}
	h := newHarness(t, shellRun, func(c *protocol.Config, _ *config.Settings) { c.TaskStore = store })
	done := make(chan a2a.SendMessageResult, 1)
	go func() {
		res, err := h.client("jsonrpc").SendMessage(t.Context(), &a2a.SendMessageRequest{Message: userMessage("log a run", "")})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	<-store.entered
	var early a2a.SendMessageResult
	select {
	case early = <-done:
	case <-time.After(200 * time.Millisecond): // it must not come at all while the store holds
	}
	close(store.release)
	if early != nil {
		t.Fatalf("the client heard of input-required before it was stored: %v", early)
	}
	if res := <-done; res.(*a2a.Task).Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("SendMessage: %v", res)
	}
}

// TestWSSubscribeFollowsTheTasksContext: a connection that named no
// context and subscribes to a task follows that task's context, so the
// task's events after the answer reach it.
func TestWSSubscribeFollowsTheTasksContext(t *testing.T) {
	h := newHarness(t, []string{
		callTurn("", "run_shell_command", map[string]any{"command": "printf '%s\\n' followed"}),
		textTurn("done"),
	})
	a := h.dialWS(t, dialOpts{})
	a.send(1, "SendStreamingMessage", messageParams("run it"))
	task, call := pendingCall(t, a)

	b := h.dialWS(t, dialOpts{})
	b.send(1, "SubscribeToTask", map[string]any{"id": string(task)})
	first := b.next()
	for first.Method == "session/attached" {
		first = b.next()
	}
	if ev, _ := first.event(t); ev == nil || ev.TaskInfo().TaskID != task {
		t.Fatalf("the subscription's first frame %+v, want task %s", first, task)
	}
	a.send(2, "SendMessage", confirmParams(task, call, "proceed_once"))
	var last a2a.Event
	for _, f := range b.until(func(f wsFrame) bool {
		if f.Error != nil || f.Method == "session/attached" {
			return f.Error != nil
		}
		ev, _ := f.event(t)
		u, ok := ev.(*a2a.TaskStatusUpdateEvent)
		return ok && u.Status.State.Terminal()
	}) {
		if f.Error != nil {
			t.Fatalf("subscription error: %+v", f.Error)
		}
		if f.Method != "session/attached" {
			last, _ = f.event(t)
		}
	}
	if u, ok := last.(*a2a.TaskStatusUpdateEvent); !ok || u.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("the subscriber's last event %#v, want the task completed", last)
	}
}

// relayTo has a server relay every context but its own first messages'
// to target, marking the handshake.
func relayTo(target *string) harnessOption {
	return func(cfg *protocol.Config, _ *config.Settings) {
		cfg.WSRelay = func(r *http.Request, contextID string) (string, http.Header, bool) {
			if r.Header.Get("X-Relayed") != "" || *target == "" {
				return "", nil, false
			}
			return *target, http.Header{"X-Relayed": {"yes"}}, true
		}
	}
}

// TestWSRelaysToTheContextsReplica: a connection opened without
// contextId whose first message names a context another replica holds
// is relayed there: the holder runs the turn and its frames come back
// through the relay (session/attached included); the client's close
// reaches the holder.
func TestWSRelaysToTheContextsReplica(t *testing.T) {
	holder := newHarness(t, []string{textTurn("one"), textTurn("two")})
	w := holder.dialWS(t, dialOpts{})
	w.send(1, "SendStreamingMessage", messageParams("start"))
	fs := w.until(endsTask(t))
	var p map[string]any
	_ = json.Unmarshal(fs[0].Params, &p)
	ctxID, _ := p["contextId"].(string)

	target := holder.url
	relay := newHarness(t, nil, relayTo(&target))
	c := relay.dialWS(t, dialOpts{})
	params := messageParams("again")
	params["message"].(map[string]any)["contextId"] = ctxID
	c.send(1, "SendStreamingMessage", params)
	got := c.until(endsTask(t))
	if got[0].Method != "session/attached" {
		t.Fatalf("first relayed frame %+v, want the holder's session/attached", got[0])
	}
	if evs, _ := events(t, got); textOf(evs) != "two" {
		t.Fatalf("the relayed turn: %s", describe(evs))
	}
	if n := relay.sessions.Load(); n != 0 {
		t.Fatalf("the relaying server started %d sessions", n)
	}
	// The first client, on the holder, saw the relayed client's turn.
	if evs, _ := events(t, w.until(endsTask(t))); textOf(evs) != "two" {
		t.Fatalf("the holder's own client saw %s", describe(evs))
	}
}

// TestWSRelayToAnUnreachableReplica: the holder cannot be reached: the
// client is closed with 1013 (try again later) naming it.
func TestWSRelayToAnUnreachableReplica(t *testing.T) {
	target := "http://127.0.0.1:1"
	relay := newHarness(t, nil, relayTo(&target))
	c := relay.dialWS(t, dialOpts{})
	params := messageParams("hello")
	params["message"].(map[string]any)["contextId"] = "held-elsewhere"
	c.send(1, "SendMessage", params)
	if code, reason := c.closed(); code != websocket.StatusTryAgainLater || !strings.Contains(reason, target) {
		t.Fatalf("closed %d %q, want 1013 naming %s", code, reason, target)
	}
}
