package protocol_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	goruntime "runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1/pbconv"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/protocol"
	"github.com/agentry-dev/agentry/protocol/devtool"
)

// SendLiveMessage's budgets (docs/live.md): a confirmation answered on
// the live stream against the same answer sent on a new
// SendStreamingMessage, and one stream's throughput of text deltas.
// Figures and the command are in docs/benchmarks.md.

// executingPB reports whether a stream response is the update saying a
// call runs (before any output), looking no further than it must: the
// benchmark's trace runs on the server's path.
func executingPB(r *a2apb.StreamResponse) bool {
	u := r.GetStatusUpdate()
	if u == nil || u.GetStatus().GetMessage() == nil {
		return false
	}
	for _, p := range u.GetStatus().GetMessage().GetParts() {
		f := p.GetData().GetStructValue().GetFields()
		if f["status"].GetStringValue() == string(devtool.StatusExecuting) && f["live_content"].GetStringValue() == "" {
			return true
		}
	}
	return false
}

// serverPart measures the server's own part of a confirmation through the
// gRPC trace: from a stream reading the message with the marked id to the
// same stream about to send the EXECUTING update.
type serverPart struct {
	mu     sync.Mutex
	mark   []byte
	stream grpc.ServerStream
	readAt time.Time
	took   []time.Duration
}

func (p *serverPart) expect(messageID string) {
	p.mu.Lock()
	p.mark, p.stream, p.readAt = []byte(messageID), nil, time.Time{}
	p.mu.Unlock()
}

func (p *serverPart) trace(recv bool, stream grpc.ServerStream, m any) {
	at := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mark == nil {
		return
	}
	if recv {
		var hit bool
		switch r := m.(type) {
		case *a2apb.SendMessageRequest:
			hit = r.GetMessage().GetMessageId() == string(p.mark)
		default:
			hit = bytes.Contains(protocol.RawRequestBytes(m), p.mark)
		}
		if hit {
			p.stream, p.readAt = stream, at
		}
		return
	}
	if stream == p.stream && !p.readAt.IsZero() {
		if r, ok := m.(*a2apb.StreamResponse); ok && executingPB(r) {
			p.took = append(p.took, at.Sub(p.readAt))
			p.mark, p.readAt = nil, time.Time{}
		}
	}
}

// BenchmarkLiveConfirmation measures a confirmation's answer, the
// server's part: from reading the message that answers (proceed_once) to
// sending the EXECUTING update that says the call runs, on a live stream
// (the answer sent on the stream that asked) and, in the same iteration,
// on A2A's other path (SendStreamingMessage ends at input-required; the
// answer goes in a new SendStreamingMessage, whose stream carries the
// rest). Both over gRPC with the extension, a shell command to approve
// per turn, the turns of one context; the order of the two alternates.
// The client's figures are from its writing the answer (or starting the
// new call) to its reading EXECUTING, the client in the benchmark's
// process. Budget: live-server-p50 ≤ 1 ms.
func BenchmarkLiveConfirmation(b *testing.B) {
	serveGC(b)
	h := newHarness(b, nil)
	h.resolver = shellModel{}
	var live, reopen serverPart
	var cur *serverPart
	var curMu sync.Mutex
	protocol.TraceGRPC(h.srv, func(recv bool, stream grpc.ServerStream, m any) {
		curMu.Lock()
		p := cur
		curMu.Unlock()
		if p != nil {
			p.trace(recv, stream, m)
		}
	})
	use := func(p *serverPart, id string) {
		p.expect(id)
		curMu.Lock()
		cur = p
		curMu.Unlock()
	}
	conn := h.liveConn(b)
	rpc := a2apb.NewA2AServiceClient(conn)
	ctx := metadata.AppendToOutgoingContext(b.Context(), "authorization", "Bearer "+testToken, "a2a-extensions", devtool.URI)
	contextID := ""
	prompt := func() *a2a.Message {
		m := userMessage("run it", "")
		m.ContextID = contextID
		return m
	}
	var liveClient, reopenClient []time.Duration
	liveTurn := func() error {
		l := openLive(b, conn, liveOpts{})
		defer l.cancel()
		l.send(prompt())
		var task *a2a.Task
		var call string
		for {
			ev, err := l.recv()
			if err != nil {
				return fmt.Errorf("live: before input-required: %w", err)
			}
			if t, ok := ev.(*a2a.Task); ok {
				task = t
			}
			if u, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
				if tc := toolCallOf(u); tc != nil && tc.ConfirmationRequest != nil {
					call = tc.ToolCallID
				}
				if u.Status.State == a2a.TaskStateInputRequired {
					break
				}
			}
		}
		contextID = task.ContextID
		m := answer(confirmPart(call, "proceed_once"))
		use(&live, m.ID)
		pb := mustPB(b, m)
		sent := time.Now()
		l.sendPB(pb)
		for {
			ev, err := l.recv()
			if err != nil {
				return fmt.Errorf("live: before EXECUTING: %w", err)
			}
			if isExecuting(ev) {
				liveClient = append(liveClient, time.Since(sent))
				break
			}
		}
		if _, err := l.rest(); err != io.EOF {
			return fmt.Errorf("live: to the end: %w", err)
		}
		return nil
	}
	reopenTurn := func() error {
		first, err := rpc.SendStreamingMessage(ctx, mustPB(b, prompt()))
		if err != nil {
			return err
		}
		var taskID a2a.TaskID
		var call string
		for {
			r, err := first.Recv()
			if err == io.EOF {
				break // ended at input-required
			}
			if err != nil {
				return fmt.Errorf("reopen: first stream: %w", err)
			}
			ev, err := pbconv.FromProtoStreamResponse(r)
			if err != nil {
				return err
			}
			if t, ok := ev.(*a2a.Task); ok {
				taskID, contextID = t.ID, t.ContextID
			}
			if u, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
				if tc := toolCallOf(u); tc != nil && tc.ConfirmationRequest != nil {
					call = tc.ToolCallID
				}
			}
		}
		m := answer(confirmPart(call, "proceed_once"))
		m.TaskID, m.ContextID = taskID, contextID
		use(&reopen, m.ID)
		pb := mustPB(b, m)
		sent := time.Now()
		second, err := rpc.SendStreamingMessage(ctx, pb)
		if err != nil {
			return err
		}
		seen := false
		for {
			r, err := second.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("reopen: second stream: %w", err)
			}
			if !seen && executingPB(r) {
				reopenClient = append(reopenClient, time.Since(sent))
				seen = true
			}
		}
		if !seen {
			return errors.New("reopen: no EXECUTING update")
		}
		return nil
	}
	// A first turn of each sets the context and the connection up.
	if err := errors.Join(liveTurn(), reopenTurn()); err != nil {
		b.Fatal(err)
	}
	live.took, reopen.took, liveClient, reopenClient = nil, nil, nil, nil
	goruntime.GC()
	b.ResetTimer()
	for i := range b.N {
		turns := []func() error{liveTurn, reopenTurn}
		if i%2 == 1 {
			slices.Reverse(turns)
		}
		for _, turn := range turns {
			if err := turn(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	if len(live.took) != b.N || len(reopen.took) != b.N {
		b.Fatalf("the trace saw %d live and %d reopened answers of %d", len(live.took), len(reopen.took), b.N)
	}
	µs := func(d []time.Duration, p int) float64 {
		slices.Sort(d)
		return float64(d[(len(d)-1)*p/100].Nanoseconds()) / 1000
	}
	b.ReportMetric(µs(live.took, 50), "live-server-p50-µs")
	b.ReportMetric(µs(live.took, 99), "live-server-p99-µs")
	b.ReportMetric(µs(reopen.took, 50), "reopen-server-p50-µs")
	b.ReportMetric(µs(reopen.took, 99), "reopen-server-p99-µs")
	b.ReportMetric(µs(liveClient, 50), "live-client-p50-µs")
	b.ReportMetric(µs(reopenClient, 50), "reopen-client-p50-µs")
}

// BenchmarkLiveThroughput measures one live stream's throughput of text
// deltas, each an update (TEXT_CONTENT with the development-tool
// metadata) read by a client in the benchmark's process, decoded to the
// protobuf message, as a client that looks at every update must.
// events/s counts the responses read per second; cpu-µs/event is the
// process's CPU time, server and client, per response.
//
//   - binding: the updates are put on a waiting task's log as fast as the
//     stream takes them, in batches of 64, as a run's translation puts
//     them there: the figure is the stream's own (conversion, gRPC,
//     HTTP/2, the client's read).
//   - model: a model that writes 5,000 deltas as fast as it can, through
//     the whole session (the runtime, ADK, the translation), to the
//     server's half-close: the session's work per delta is on the same
//     two cores.
//
// Budget: 100,000 events/s.
func BenchmarkLiveThroughput(b *testing.B) {
	b.Run("binding", liveThroughputBinding)
	b.Run("model", liveThroughputModel)
}

func liveThroughputBinding(b *testing.B) {
	const n = 20000
	serveGC(b)
	h := newHarness(b, []string{callTurn("", "write_file", map[string]any{"file_path": "a.txt", "content": "x"})})
	conn := h.liveConn(b)
	l := openLive(b, conn, liveOpts{})
	l.send(userMessage("wait", ""))
	evs := l.until(stateIs(a2a.TaskStateInputRequired))
	task := evs[0].(*a2a.Task)
	l.cancel()
	var events int
	var wall, cpu time.Duration
	run := func() {
		l := openLive(b, conn, liveOpts{})
		defer l.cancel()
		l.send(reconnect(task.ID))
		if _, err := l.recv(); err != nil { // the task as it waits
			b.Fatal(err)
		}
		cpu0, _ := proctest.CPU()
		start := time.Now()
		go protocol.PublishText(h.srv, task.ID, "word ", n, 64)
		var r a2apb.StreamResponse
		for range n {
			r.Reset()
			if err := l.cs.RecvMsg(&r); err != nil {
				b.Fatal(err)
			}
			if got := r.GetStatusUpdate().GetStatus().GetMessage().GetParts(); len(got) != 1 || got[0].GetText() != "word " {
				b.Fatalf("response %v", &r)
			}
		}
		wall += time.Since(start)
		cpu1, _ := proctest.CPU()
		cpu += cpu1 - cpu0
		events += n
	}
	run()
	events, wall, cpu = 0, 0, 0
	goruntime.GC()
	b.ResetTimer()
	for range b.N {
		run()
	}
	b.StopTimer()
	b.ReportMetric(float64(events)/wall.Seconds(), "events/s")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/1000/float64(events), "cpu-µs/event")
	}
}

func liveThroughputModel(b *testing.B) {
	const deltas = 5000
	serveGC(b)
	h := newHarness(b, nil)
	h.resolver = pacedModel{chunks: deltas}
	conn := h.liveConn(b)
	want := 0
	for i := range deltas {
		want += len(fmt.Sprintf("word%d ", i))
	}
	var events int
	var wall, cpu time.Duration
	run := func() {
		l := openLive(b, conn, liveOpts{})
		defer l.cancel()
		cpu0, _ := proctest.CPU()
		start := time.Now()
		l.send(userMessage("go", ""))
		n, text := 0, 0
		var r a2apb.StreamResponse
		for {
			r.Reset()
			err := l.cs.RecvMsg(&r)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
			if u := r.GetStatusUpdate(); u != nil {
				for _, p := range u.GetStatus().GetMessage().GetParts() {
					text += len(p.GetText())
				}
			}
		}
		wall += time.Since(start)
		cpu1, _ := proctest.CPU()
		cpu += cpu1 - cpu0
		if text != want {
			b.Fatalf("the client read %d bytes of text, want %d", text, want)
		}
		events += n
	}
	run() // warm up: the first session's set-up
	events, wall, cpu = 0, 0, 0
	goruntime.GC()
	b.ResetTimer()
	for range b.N {
		run()
	}
	b.StopTimer()
	b.ReportMetric(float64(events)/wall.Seconds(), "events/s")
	b.ReportMetric(float64(deltas*b.N)/wall.Seconds(), "deltas/s")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/1000/float64(events), "cpu-µs/event")
	}
}
