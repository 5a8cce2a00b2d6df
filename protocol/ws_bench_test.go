package protocol_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"os"
	"os/exec"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/coder/websocket"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/protocol"
	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/runtime/llm"
)

// The live session endpoint's budgets (docs/ws.md): a turn broadcast to
// 100 clients, the latency the fan-out adds to each event, a
// confirmation's round trip, and what an idle client holds. Figures and
// the command are in docs/benchmarks.md.

// rawConn is a benchmark's client: it reads each frame into one reused
// buffer and stamps its arrival before looking at it. wsConn would not
// do: it decodes every frame whole, which would put a JSON parser's work
// for 100 clients on the two cores the server runs on, and its queue of
// 65,536 decoded frames, 7.5 MiB a client, would have the garbage
// collector scan 750 MiB of the benchmark's own.
type rawConn struct {
	t   testing.TB
	c   *websocket.Conn
	buf bytes.Buffer
}

// send writes a request.
func (r *rawConn) send(id any, method string, params any) {
	r.t.Helper()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		r.t.Fatal(err)
	}
	r.sendRaw(b)
}

// sendRaw writes a frame.
func (r *rawConn) sendRaw(b []byte) {
	r.t.Helper()
	if err := r.c.Write(r.t.Context(), websocket.MessageText, b); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// next reads a frame; its bytes are valid until the next call. A read
// that never ends (a broken server) ends when the benchmark's cleanup
// closes the connection.
func (r *rawConn) next() ([]byte, time.Time, error) {
	_, rd, err := r.c.Reader(context.Background())
	if err != nil {
		return nil, time.Time{}, err
	}
	r.buf.Reset()
	if _, err := r.buf.ReadFrom(rd); err != nil {
		return nil, time.Time{}, err
	}
	return r.buf.Bytes(), time.Now(), nil
}

// dialRaw connects n clients to an adopted session and reads their
// session/attached.
func dialRaw(b *testing.B, sh *shared, n int) []*rawConn {
	b.Helper()
	cs := make([]*rawConn, n)
	for i := range cs {
		c, resp, err := sh.tryDial(b, dialOpts{query: fmt.Sprintf("name=b%d", i)})
		if err != nil {
			b.Fatalf("dial: %v (%v)", err, resp)
		}
		b.Cleanup(func() { _ = c.CloseNow() })
		cs[i] = &rawConn{t: b, c: c}
		f, _, err := cs[i].next()
		if err != nil || !bytes.Contains(f, []byte(`"session/attached"`)) {
			b.Fatalf("client %d: first frame %s (%v), want session/attached", i, f, err)
		}
	}
	return cs
}

// drainTurns empties the channel the adopted session announces client
// turns on for the benchmark's length: it holds 16, and a benchmark runs
// more turns than that.
func drainTurns(b *testing.B, sh *shared) {
	go func() {
		for {
			select {
			case <-sh.turns:
			case <-b.Context().Done():
				return
			}
		}
	}()
}

// What the helpers below look for in a raw frame.
const (
	markEvent     = `{"jsonrpc":"2.0","method":"session/event"`
	markResult    = `"result":`
	markState     = `"state":"TASK_STATE_`
	markTextKind  = `"kind":"TEXT_CONTENT"`
	markText      = `"parts":[{"text":"`
	markTimestamp = `"timestamp":"`
	markTask      = `{"task":`
)

// The helpers below look for what they want where the server's encoder
// puts it (a response's result after its id and eventId, a status
// update's text first), so that a client's look at a frame costs little
// beside the server's work on it.

// frameState is the task state a raw event frame carries, "" for none;
// an error response is an error.
func frameState(f []byte) (string, error) {
	if !bytes.HasPrefix(f, []byte(markEvent)) && !bytes.Contains(f[:min(len(f), 96)], []byte(markResult)) {
		return "", fmt.Errorf("not an event: %s", f)
	}
	i := bytes.Index(f, []byte(markState))
	if i < 0 {
		return "", nil
	}
	rest := f[i+len(markState):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return "", fmt.Errorf("a truncated state: %s", f)
	}
	return string(rest[:end]), nil
}

// frameText is the text of a TEXT_CONTENT frame.
func frameText(f []byte) ([]byte, error) {
	if !bytes.Contains(f, []byte(markTextKind)) {
		return nil, nil
	}
	_, rest, ok := bytes.Cut(f, []byte(markText))
	if !ok {
		return nil, fmt.Errorf("TEXT_CONTENT without a text part: %s", f)
	}
	escaped := false
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			if !escaped {
				return rest[:i], nil
			}
			var s string
			if err := json.Unmarshal(rest[:i+1], &s); err != nil {
				return nil, err
			}
			return []byte(s), nil
		}
	}
	return nil, fmt.Errorf("an unterminated text: %s", f)
}

// statusTime is the status timestamp of a raw status-update frame: when
// the session emitted the event. Zero for other frames (the task).
func statusTime(f []byte) time.Time {
	if bytes.Contains(f[:min(len(f), 128)], []byte(markTask)) {
		return time.Time{}
	}
	_, rest, ok := bytes.Cut(f, []byte(markTimestamp))
	if !ok {
		return time.Time{}
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339Nano, string(rest[:end]))
	return t
}

// turnRead is what one client read of a turn.
type turnRead struct {
	frames int
	text   int
	last   time.Time
	// lat is each status update's arrival minus its status timestamp.
	lat []time.Duration
	err error
}

// readTurn reads a turn's frames up to its completion, checking that
// its text is want, in order, whole; if timed, it appends each status
// update's added latency to lat.
func (r *rawConn) readTurn(want []byte, lat []time.Duration, timed bool) turnRead {
	out := turnRead{lat: lat}
	for {
		f, at, err := r.next()
		if err != nil {
			out.err = fmt.Errorf("after %d frames: %w", out.frames, err)
			return out
		}
		out.frames++
		out.last = at
		if timed {
			if sent := statusTime(f); !sent.IsZero() {
				out.lat = append(out.lat, at.Sub(sent))
			}
		}
		text, err := frameText(f)
		if err == nil && !bytes.HasPrefix(want[out.text:], text) {
			err = fmt.Errorf("text %q at byte %d, want %.40q…", text, out.text, want[out.text:])
		}
		out.text += len(text)
		state, serr := frameState(f)
		if err = errors.Join(err, serr); err != nil {
			out.err = err
			return out
		}
		switch state {
		case "COMPLETED":
			if out.text != len(want) {
				out.err = fmt.Errorf("completed after %d bytes of text, want %d", out.text, len(want))
			}
			return out
		case "FAILED", "CANCELED", "INPUT_REQUIRED":
			out.err = fmt.Errorf("the turn ended %s: %s", state, f)
			return out
		}
	}
}

// pacedText is the answer of pacedModel{chunks: n}.
func pacedText(n int) []byte {
	var b []byte
	for i := range n {
		b = fmt.Appendf(b, "word%d ", i)
	}
	return b
}

// broadcastTurn has clients[0] start a turn and every client read it;
// it returns each client's read and the time the request was written.
// With lat, client i's added latencies go to lat[i].
func broadcastTurn(b *testing.B, cs []*rawConn, id int, want []byte, lat [][]time.Duration) ([]turnRead, time.Time) {
	reads := make([]turnRead, len(cs))
	var started, wg sync.WaitGroup
	started.Add(len(cs))
	for i, c := range cs {
		wg.Go(func() {
			started.Done()
			var l []time.Duration
			if lat != nil {
				l = lat[i][:0]
			}
			reads[i] = c.readTurn(want, l, lat != nil)
		})
	}
	started.Wait()
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "SendStreamingMessage", "params": messageParams("go")})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	cs[0].sendRaw(req)
	wg.Wait()
	for i, r := range reads {
		if r.err != nil {
			b.Fatalf("client %d: %v", i, r.err)
		}
	}
	return reads, start
}

// BenchmarkWSBroadcast streams one turn of 2,000 text deltas from a model
// that answers at once to 100 clients of one session, every client reading
// every event. events/s is the frames carrying events that the clients
// received, together, from the first client's request to the last
// client's final event. The session's translator merges deltas that pile
// up behind a busy server into one TEXT_CONTENT update, so frames/client
// is what was delivered, not 2,000; text-B/client shows every client got
// the whole answer (the benchmark fails otherwise), and deltas/s is the
// model's deltas delivered to all clients per second. The clients run in
// the benchmark's process, on the server's cores; cpu-µs/frame is the
// process's CPU time (server and clients) per frame delivered, the
// figure to compare on a machine whose other load moves the rates. The
// server runs with agentry serve's garbage collector target. Budget:
// 50,000 events/s.
func BenchmarkWSBroadcast(b *testing.B) {
	const clients, deltas = 100, 2000
	serveGC(b)
	h := newHarness(b, nil, wsOpts(protocol.WSConfig{MaxClients: clients}))
	h.resolver = pacedModel{chunks: deltas}
	sh := adopt(b, h, nil)
	drainTurns(b, sh)
	cs := dialRaw(b, sh, clients)
	want := pacedText(deltas)
	var frames int
	var wall, cpu time.Duration
	goruntime.GC()
	b.ResetTimer()
	for i := range b.N {
		cpu0, _ := proctest.CPU()
		reads, start := broadcastTurn(b, cs, i, want, nil)
		cpu1, _ := proctest.CPU()
		cpu += cpu1 - cpu0
		end := start
		for _, r := range reads {
			frames += r.frames
			if r.last.After(end) {
				end = r.last
			}
		}
		wall += end.Sub(start)
	}
	b.ReportMetric(float64(frames)/wall.Seconds(), "events/s")
	b.ReportMetric(float64(b.N*clients*deltas)/wall.Seconds(), "deltas/s")
	b.ReportMetric(float64(frames)/float64(b.N*clients), "frames/client")
	b.ReportMetric(float64(len(want)), "text-B/client")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(frames)/1000, "cpu-µs/frame")
	}
}

// BenchmarkWSAddedLatency streams turns of 300 deltas at 100 a second, as
// a model does, to 100 clients of one session and measures what the
// server adds to each event: from the session emitting it (the status
// timestamp) to each client having read its frame (p50-ms, p99-ms). Each
// iteration's turn alternates with the same turn on a second server whose
// session has one client (solo-*): the same machine at the same moments
// without the fan-out, the floor of the figures on a shared machine. The
// clients run in the benchmark's process, on the server's cores. The
// servers run with agentry serve's garbage collector target. Budget: p99
// under 5 ms.
func BenchmarkWSAddedLatency(b *testing.B) {
	const clients, deltas = 100, 300
	serveGC(b)
	model := pacedModel{chunks: deltas, every: 10 * time.Millisecond}
	session := func(n int) []*rawConn {
		h := newHarness(b, nil, wsOpts(protocol.WSConfig{MaxClients: n}))
		h.resolver = model
		sh := adopt(b, h, nil)
		drainTurns(b, sh)
		return dialRaw(b, sh, n)
	}
	fan, solo := session(clients), session(1)
	want := pacedText(deltas)
	lat := make([][]time.Duration, clients)
	for i := range lat {
		lat[i] = make([]time.Duration, 0, deltas+16)
	}
	soloLat := [][]time.Duration{make([]time.Duration, 0, deltas+16)}
	var all, soloAll []time.Duration
	var cpu time.Duration
	frames := 0
	goruntime.GC()
	b.ResetTimer()
	for i := range b.N {
		reads, _ := broadcastTurn(b, solo, i, want, soloLat)
		soloAll = append(soloAll, reads[0].lat...)
		cpu0, _ := proctest.CPU()
		reads, _ = broadcastTurn(b, fan, i, want, lat)
		cpu1, _ := proctest.CPU()
		cpu += cpu1 - cpu0
		for _, r := range reads {
			all = append(all, r.lat...)
			frames += r.frames
		}
	}
	b.StopTimer()
	ms := func(d []time.Duration, p int) float64 {
		slices.Sort(d)
		return float64(d[(len(d)-1)*p/100].Microseconds()) / 1000
	}
	b.ReportMetric(ms(all, 50), "p50-ms")
	b.ReportMetric(ms(all, 99), "p99-ms")
	b.ReportMetric(ms(all, 100), "max-ms")
	b.ReportMetric(ms(soloAll, 50), "solo-p50-ms")
	b.ReportMetric(ms(soloAll, 99), "solo-p99-ms")
	b.ReportMetric(float64(frames)/float64(b.N*clients), "frames/client")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(frames)/1000, "cpu-µs/frame")
	}
}

// shellModel answers a prompt with a call of run_shell_command, which
// needs the user's approval, and the call's result with text: every turn
// asks for one confirmation, however many turns run.
type shellModel struct{}

func (shellModel) Resolve(context.Context, string) (llm.Target, error) {
	ref, err := llm.ParseModel("gemini-2.5-flash")
	return llm.Target{Ref: ref, Backend: shellModel{}}, err
}

func (shellModel) GenerateContent(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	return nil, errors.New("shell model: streaming only")
}

func (shellModel) CountTokens(context.Context, string, []*genai.Content, *genai.CountTokensConfig) (*genai.CountTokensResponse, error) {
	return &genai.CountTokensResponse{TotalTokens: 10}, nil
}

func (shellModel) GenerateContentStream(_ context.Context, _ string, contents []*genai.Content, _ *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	answered := false
	if n := len(contents); n > 0 {
		for _, p := range contents[n-1].Parts {
			answered = answered || p.FunctionResponse != nil
		}
	}
	part := genai.NewPartFromFunctionCall("run_shell_command", map[string]any{"command": "true"})
	if answered {
		part = genai.NewPartFromText("Ran it.")
	}
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		c := &genai.Candidate{Content: genai.NewContentFromParts([]*genai.Part{part}, genai.RoleModel), FinishReason: genai.FinishReasonStop}
		yield(&genai.GenerateContentResponse{Candidates: []*genai.Candidate{c}}, nil)
	}
}

// untilFrame reads a client's frames up to the first that stop accepts
// and returns it decoded, with its arrival time. A turn that ends before
// is an error.
func (r *rawConn) untilFrame(stop func(a2a.Event) bool) (a2a.Event, time.Time, error) {
	for {
		f, at, err := r.next()
		if err != nil {
			return nil, at, err
		}
		state, err := frameState(f)
		if err != nil {
			return nil, at, err
		}
		var w struct {
			Result json.RawMessage `json:"result"`
			Params struct {
				Event json.RawMessage `json:"event"`
			} `json:"params"`
		}
		if err := json.Unmarshal(f, &w); err != nil {
			return nil, at, err
		}
		raw := w.Result
		if raw == nil {
			raw = w.Params.Event
		}
		var sr a2a.StreamResponse
		if err := json.Unmarshal(raw, &sr); err != nil {
			return nil, at, fmt.Errorf("event %s: %w", raw, err)
		}
		if stop(sr.Event) {
			return sr.Event, at, nil
		}
		switch state {
		case "COMPLETED", "FAILED", "CANCELED":
			return nil, at, fmt.Errorf("the turn ended %s first: %s", state, f)
		}
	}
}

// isState accepts a status update of state s.
func isState(s a2a.TaskState) func(a2a.Event) bool {
	return func(ev a2a.Event) bool {
		u, ok := ev.(*a2a.TaskStatusUpdateEvent)
		return ok && u.Status.State == s
	}
}

// isExecuting accepts the update saying a call runs (before any output).
func isExecuting(ev a2a.Event) bool {
	u, ok := ev.(*a2a.TaskStatusUpdateEvent)
	if !ok {
		return false
	}
	tc := toolCallOf(u)
	return tc != nil && tc.Status == devtool.StatusExecuting && tc.LiveContent == ""
}

// BenchmarkWSConfirmationRoundTrip measures a confirmation's round trip on
// a session with 10 clients: a turn asks for approval of a shell command,
// every client sees the request, one answers (proceed_once), and the
// figures are from that client writing its answer's frame to its reading
// the EXECUTING update that says the call runs (answer-*), and to the last
// of the 10 reading it (all-*). An iteration is 20 turns, each read by
// every client to its end, then a GetTask on the answering client's
// connection: gettask-p50-µs is the floor of a request and its response
// on that connection at the same moments. The clients run in the
// benchmark's process, on the server's cores. Budget: answer-p50 under
// 1 ms.
func BenchmarkWSConfirmationRoundTrip(b *testing.B) {
	const clients, turns = 10, 20
	serveGC(b)
	h := newHarness(b, nil, wsOpts(protocol.WSConfig{MaxClients: clients}))
	h.resolver = shellModel{}
	sh := adopt(b, h, nil)
	drainTurns(b, sh)
	cs := dialRaw(b, sh, clients)
	var answer, all, floor, server []time.Duration
	// each runs f on every client at once, then, once every client
	// is reading, then; it fails the benchmark on the first error.
	each := func(f func(i int, c *rawConn) error, then func()) {
		errs := make([]error, len(cs))
		var started, wg sync.WaitGroup
		started.Add(len(cs))
		for i, c := range cs {
			wg.Go(func() {
				started.Done()
				errs[i] = f(i, c)
			})
		}
		started.Wait()
		then()
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			b.Fatal(err)
		}
	}
	// The server's own part, seen from inside: from reading the answer's
	// frame to writing the EXECUTING update to the answering client.
	var (
		traceMu    sync.Mutex
		want       []byte
		answerConn any
		readAt     time.Time
		inServer   []time.Duration
	)
	protocol.TraceWS(h.srv, func(read bool, conn any, frame []byte) {
		traceMu.Lock()
		defer traceMu.Unlock()
		switch {
		case want == nil:
		case read && bytes.Contains(frame, want):
			answerConn, readAt = conn, time.Now()
		case !read && conn == answerConn && !readAt.IsZero() && bytes.Contains(frame, []byte(`"status":"EXECUTING"`)) && !bytes.Contains(frame, []byte("live_content")):
			inServer = append(inServer, time.Since(readAt))
			readAt = time.Time{}
		}
	})
	goruntime.GC()
	b.ResetTimer()
	for i := range b.N * turns {
		var task a2a.TaskID
		var call string
		each(func(j int, c *rawConn) error {
			ev, _, err := c.untilFrame(func(ev a2a.Event) bool {
				if u, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && j == 0 {
					if tc := toolCallOf(u); tc != nil && tc.ConfirmationRequest != nil {
						task, call = u.TaskID, tc.ToolCallID
					}
				}
				return isState(a2a.TaskStateInputRequired)(ev)
			})
			if err == nil && ev == nil {
				err = errors.New("no input-required")
			}
			return err
		}, func() {
			cs[0].send(fmt.Sprintf("go-%d", i), "SendStreamingMessage", messageParams("run it"))
		})
		if call == "" {
			b.Fatal("no confirmation request reached the client")
		}
		req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": fmt.Sprintf("ok-%d", i), "method": "SendStreamingMessage", "params": confirmParams(task, call, "proceed_once")})
		if err != nil {
			b.Fatal(err)
		}
		traceMu.Lock()
		want = []byte(fmt.Sprintf(`"ok-%d"`, i))
		traceMu.Unlock()
		arrived := make([]time.Time, len(cs))
		var sent, made time.Time
		each(func(j int, c *rawConn) error {
			ev, at, err := c.untilFrame(isExecuting)
			if err != nil {
				return err
			}
			if u, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && j == 0 && u.Status.Timestamp != nil {
				made = *u.Status.Timestamp
			}
			arrived[j] = at
			_, _, err = c.untilFrame(isState(a2a.TaskStateCompleted))
			return err
		}, func() {
			sent = time.Now()
			cs[0].sendRaw(req)
		})
		answer = append(answer, arrived[0].Sub(sent))
		if !made.IsZero() {
			// The server's part: from the answer's write to the EXECUTING
			// update being made and broadcast (its status timestamp).
			server = append(server, made.Sub(sent))
		}
		all = append(all, slices.MaxFunc(arrived, time.Time.Compare).Sub(sent))
		// The floor: a request with one response on the same connection
		// (the task, from memory), the session idle.
		req, err = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "get", "method": "GetTask", "params": map[string]any{"id": task}})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		cs[0].sendRaw(req)
		f, at, err := cs[0].next()
		if err != nil || !bytes.HasPrefix(f, []byte(`{"jsonrpc":"2.0","id":"get","result":`)) {
			b.Fatalf("GetTask: %s (%v)", f, err)
		}
		floor = append(floor, at.Sub(start))
	}
	b.StopTimer()
	µs := func(d []time.Duration, p int) float64 {
		slices.Sort(d)
		return float64(d[(len(d)-1)*p/100].Nanoseconds()) / 1000
	}
	b.ReportMetric(µs(answer, 50), "answer-p50-µs")
	b.ReportMetric(µs(answer, 99), "answer-p99-µs")
	b.ReportMetric(µs(all, 50), "all-p50-µs")
	b.ReportMetric(µs(all, 99), "all-p99-µs")
	b.ReportMetric(µs(floor, 50), "gettask-p50-µs")
	if len(server) > 0 {
		b.ReportMetric(µs(server, 50), "made-p50-µs")
	}
	if len(inServer) > 0 {
		b.ReportMetric(µs(inServer, 50), "server-p50-µs")
		b.ReportMetric(µs(inServer, 99), "server-p99-µs")
	}
}

// The idle-client benchmark's clients run in a process of their own, the
// test binary run with these set: the server's /ws URL and the number of
// clients. Its heap then holds the server's side of each connection only.
const (
	wsIdleURLEnv     = "AGENTRY_BENCH_WS_IDLE_URL"
	wsIdleClientsEnv = "AGENTRY_BENCH_WS_IDLE_CLIENTS"
)

// holdWSClients connects n clients to url, each reading its frames, says
// "ready" once every one is attached and holds them until its standard
// input ends.
func holdWSClients(url string, n int) error {
	ctx := context.Background()
	conns := make([]*websocket.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			_ = c.CloseNow()
		}
	}()
	for range n {
		c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{
			HTTPHeader:   http.Header{"Authorization": {"Bearer " + testToken}},
			Subprotocols: []string{protocol.WSSubprotocol},
		})
		if err != nil {
			return err
		}
		conns = append(conns, c)
		_, f, err := c.Read(ctx)
		if err != nil {
			return err
		}
		if !bytes.Contains(f, []byte(`"session/attached"`)) {
			return fmt.Errorf("first frame %s, want session/attached", f)
		}
		go func() {
			for {
				if _, _, err := c.Read(ctx); err != nil {
					return
				}
			}
		}()
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// BenchmarkWSIdleClientHeap measures what an idle client costs the
// server: 200 clients attached to one session, reading, nothing sent. The
// clients run in another process (the test binary), so the difference in
// the server's heap before and after they connect, over 200, is the
// server's per client: heap-B/client (HeapAlloc after a collection),
// inuse-B/client (HeapInuse), and beside the heap, the goroutines'
// stacks (stack-B/client) and goroutines/client. Budget: 64 KB of heap a
// client.
func BenchmarkWSIdleClientHeap(b *testing.B) {
	const clients = 200
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	h := newHarness(b, nil, wsOpts(protocol.WSConfig{MaxClients: clients + 1}))
	sh := adopt(b, h, nil)
	// One client first: the session's hub and the server's one-time
	// set-up are not a client's.
	dialRaw(b, sh, 1)
	var heap, inuse, stack, goroutines float64
	for b.Loop() {
		before := memStats()
		g0 := goruntime.NumGoroutine()
		cmd := exec.CommandContext(b.Context(), exe)
		cmd.Env = append(os.Environ(), wsIdleURLEnv+"="+sh.wsURL(""), fmt.Sprintf("%s=%d", wsIdleClientsEnv, clients))
		in, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		if line != "ready\n" {
			_ = in.Close()
			_ = cmd.Wait()
			b.Fatalf("idle clients said %q: %s", line, stderr.String())
		}
		after := memStats()
		g1 := goruntime.NumGoroutine()
		_ = in.Close()
		if err := cmd.Wait(); err != nil {
			b.Fatalf("idle clients: %v: %s", err, stderr.String())
		}
		heap += float64(after.HeapAlloc) - float64(before.HeapAlloc)
		inuse += float64(after.HeapInuse) - float64(before.HeapInuse)
		stack += float64(after.StackInuse) - float64(before.StackInuse)
		goroutines += float64(g1 - g0)
		// The next round starts once the server has let these go.
		for deadline := time.Now().Add(30 * time.Second); goruntime.NumGoroutine() > g0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				b.Fatalf("%d goroutines 30 s after the clients left, %d before they came", goruntime.NumGoroutine(), g0)
			}
		}
	}
	n := float64(b.N * clients)
	b.ReportMetric(heap/n, "heap-B/client")
	b.ReportMetric(inuse/n, "inuse-B/client")
	b.ReportMetric(stack/n, "stack-B/client")
	b.ReportMetric(goroutines/n, "goroutines/client")
}

// memStats reads the memory statistics after collections.
func memStats() goruntime.MemStats {
	var m goruntime.MemStats
	for range 3 {
		goruntime.GC()
	}
	goruntime.ReadMemStats(&m)
	return m
}

// wsIdleClientsMain is the client process of BenchmarkWSIdleClientHeap;
// ok is false unless the binary was started as one.
func wsIdleClientsMain() (code int, ok bool) {
	url := os.Getenv(wsIdleURLEnv)
	if url == "" {
		return 0, false
	}
	n, err := strconv.Atoi(os.Getenv(wsIdleClientsEnv))
	if err == nil {
		err = holdWSClients(url, n)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1, true
	}
	return 0, true
}
