package protocol_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/protocol"
	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/protocol/taskdb"
	"github.com/agentry-dev/agentry/runtime/llm"
	"github.com/agentry-dev/agentry/sessions"
)

// benchClient is an HTTP client with enough idle connections for the
// concurrent benchmark.
var benchClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512, MaxConnsPerHost: 0}}

// streamRaw POSTs a 1.0 SendStreamingMessage (a 0.3 message/stream if
// legacy) and calls onEvent with each SSE event's status timestamp (zero
// for the task) and arrival time; it stops after stop events if stop > 0.
func streamRaw(ctx context.Context, url, text string, legacy bool, stop int, onEvent func(sent, got time.Time)) error {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"text":%q}]}}}`,
		a2a.NewMessageID(), text)
	isTask := []byte(`{"task":`)
	if legacy {
		body = fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"kind":"message","messageId":%q,"role":"user","parts":[{"kind":"text","text":%q}]}}}`,
			a2a.NewMessageID(), text)
		isTask = []byte(`"kind":"task"`)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("A2A-Extensions", devtool.URI)
	resp, err := benchClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		line, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:"))
		if !ok {
			continue
		}
		got := time.Now()
		// The client reads only what it measures: the status timestamp.
		// Decoding every event whole would put a JSON parser's work on
		// the same two cores as the server it measures.
		if bytes.Contains(line, []byte(`"error":`)) && !bytes.Contains(line, []byte(`"result":`)) {
			return fmt.Errorf("error event: %s", line)
		}
		var sent time.Time
		if _, rest, ok := bytes.Cut(line, []byte(`"timestamp":"`)); ok {
			if end := bytes.IndexByte(rest, '"'); end > 0 {
				sent, _ = time.Parse(time.RFC3339Nano, string(rest[:end]))
			}
		}
		if bytes.Contains(line, isTask) && !bytes.Contains(line, []byte(`"status-update"`)) {
			sent = time.Time{} // the submitted task: not an emitted event
		}
		onEvent(sent, got)
		n++
		if stop > 0 && n >= stop {
			return nil
		}
	}
	return sc.Err()
}

// BenchmarkFirstEvent measures the time from sending a message on a new
// context to the first SSE event (the submitted task) reaching the
// client, through the guard, a2a-go's JSON-RPC transport and the
// executor. Each iteration reads its stream to the end. The server runs
// with agentry serve's garbage collector target. Budget: 2 ms.
func BenchmarkFirstEvent(b *testing.B) {
	serveGC(b)
	h := newHarness(b, []string{textTurn("Hi.")}, onDisconnect(protocol.DisconnectContinue))
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		first := time.Time{}
		err := streamRaw(b.Context(), h.url, "hello", false, 0, func(_, got time.Time) {
			if first.IsZero() {
				first = got
			}
		})
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, first.Sub(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "first-event-p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "first-event-p99-µs")
}

// serveGC runs the garbage collector at agentry serve's target for the
// benchmark, unless GOGC is set (which wins there too).
func serveGC(b *testing.B) {
	if os.Getenv("GOGC") == "" {
		prev := debug.SetGCPercent(protocol.DefaultGCPercent)
		b.Cleanup(func() { debug.SetGCPercent(prev) })
	}
}

// pacedModel is a model that streams its answer at a steady rate, as a
// real one does (tens to hundreds of chunks a second), so a benchmark
// measures what the server adds to each event, not a backlog of a model
// faster than the machine.
type pacedModel struct {
	chunks int
	every  time.Duration
}

func (p pacedModel) Resolve(_ context.Context, name string) (llm.Target, error) {
	ref, err := llm.ParseModel("gemini-2.5-flash")
	return llm.Target{Ref: ref, Backend: p}, err
}

func (p pacedModel) GenerateContent(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	return nil, errors.New("paced model: streaming only")
}

func (p pacedModel) CountTokens(context.Context, string, []*genai.Content, *genai.CountTokensConfig) (*genai.CountTokensResponse, error) {
	return &genai.CountTokensResponse{TotalTokens: 10}, nil
}

func (p pacedModel) GenerateContentStream(ctx context.Context, _ string, _ []*genai.Content, _ *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		var tick <-chan time.Time
		if p.every > 0 {
			// Streams start at random phases, as independent models'
			// chunks do, rather than all on the same tick.
			time.Sleep(rand.N(p.every))
			t := time.NewTicker(p.every)
			defer t.Stop()
			tick = t.C
		}
		for i := range p.chunks {
			if tick != nil {
				select {
				case <-tick:
				case <-ctx.Done():
					yield(nil, ctx.Err())
					return
				}
			}
			c := &genai.Candidate{Content: genai.NewContentFromText(fmt.Sprintf("word%d ", i), genai.RoleModel)}
			if i == p.chunks-1 {
				c.FinishReason = genai.FinishReasonStop
			}
			if !yield(&genai.GenerateContentResponse{Candidates: []*genai.Candidate{c}}, nil) {
				return
			}
		}
	}
}

// BenchmarkConcurrentStreams runs 200 streaming tasks at once, each an
// answer of 200 chunks. It reports the events delivered per second and
// the latency the server adds to each: from the session emitting the
// event (the status timestamp) to the client reading it. "unpaced": the
// model answers at once, so the figure is the machine's capacity;
// "paced-N": each stream gets N chunks a second, as from a real model;
// paced-110 offers 22,000 events a second in all, and steady-events/s is
// what was delivered once every stream had started. The server runs with
// agentry serve's garbage collector target (protocol.DefaultGCPercent)
// unless GOGC is set. Budgets: p99 under 5 ms, at least 20,000 events/s.
func BenchmarkConcurrentStreams(b *testing.B) {
	for _, c := range []struct {
		name   string
		every  time.Duration
		legacy bool
	}{{"unpaced", 0, false}, {"paced-110", time.Second / 110, false}, {"paced-50", time.Second / 50, false}, {"paced-110-v0.3", time.Second / 110, true}} {
		b.Run(c.name, func(b *testing.B) { concurrentStreams(b, pacedModel{chunks: 200, every: c.every}, c.legacy) })
	}
}

func concurrentStreams(b *testing.B, model pacedModel, legacy bool) {
	const streams = 200
	serveGC(b)
	h := newHarness(b, nil, onDisconnect(protocol.DisconnectContinue), sqliteTasks(b), func(c *protocol.Config, _ *config.Settings) { c.MaxTasks = streams })
	h.resolver = model
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	var (
		all, steady []time.Duration
		events      int
		wall        time.Duration
		steadyN     int
		steadyWall  time.Duration
	)
	// Each case starts from a collected heap, not from the garbage of the
	// case before (200 closed sessions).
	goruntime.GC()
	for b.Loop() {
		// The clients run in a process of their own, as an IDE's do: the
		// figures are the server's, not the load generator's garbage
		// collector's. They share the machine's two cores all the same.
		cmd := exec.CommandContext(b.Context(), exe)
		// Without a collector of its own: the load generator's pauses
		// would count as the server's latency. It holds a few megabytes.
		cmd.Env = append(os.Environ(), benchClientEnv+"="+h.url, fmt.Sprintf("%s=%d", benchStreamsEnv, streams), "GOGC=off")
		if legacy {
			cmd.Env = append(cmd.Env, benchLegacyEnv+"=1")
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("bench clients: %v\n%s", err, stderr.String())
		}
		var r clientReport
		if err := json.Unmarshal(out, &r); err != nil {
			b.Fatalf("bench clients printed %q: %v", out, err)
		}
		if r.Err != "" {
			b.Fatal(r.Err)
		}
		all = append(all, r.All...)
		steady = append(steady, r.Steady...)
		events += r.Events
		wall += r.Wall
		steadyN += len(r.Steady)
		steadyWall += r.SteadyWall
	}
	pct := func(d []time.Duration, p int) float64 {
		if len(d) == 0 {
			return -1 // every event came before the last stream started
		}
		slices.Sort(d)
		return float64(d[len(d)*p/100].Microseconds()) / 1000
	}
	b.ReportMetric(float64(events)/wall.Seconds(), "events/s")
	b.ReportMetric(pct(all, 99), "p99-with-start-ms")
	if model.every == 0 {
		// Unpaced, the answers are over while sessions still start:
		// there is no steady state to measure.
		b.ReportMetric(float64(events)/float64(b.N*streams), "events/task")
		return
	}
	if steadyWall > 0 {
		b.ReportMetric(float64(steadyN)/steadyWall.Seconds(), "steady-events/s")
	}
	b.ReportMetric(pct(steady, 50), "p50-ms")
	b.ReportMetric(pct(steady, 99), "p99-ms")
	b.ReportMetric(float64(events)/float64(b.N*streams), "events/task")
}

// The benchmark's client process is the test binary run with these set:
// the server's URL and the number of streams.
const (
	benchClientEnv  = "AGENTRY_BENCH_CLIENTS_URL"
	benchStreamsEnv = "AGENTRY_BENCH_CLIENTS_STREAMS"
	benchLegacyEnv  = "AGENTRY_BENCH_CLIENTS_V03"
)

func TestMain(m *testing.M) {
	if code, ok := wsIdleClientsMain(); ok {
		os.Exit(code)
	}
	if url := os.Getenv(benchClientEnv); url != "" {
		n, err := strconv.Atoi(os.Getenv(benchStreamsEnv))
		if err == nil {
			err = json.NewEncoder(os.Stdout).Encode(runClients(url, n, os.Getenv(benchLegacyEnv) != ""))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// clientReport is what the client process measured: the added latency of
// every event (All) and of those sent once every stream had started
// (Steady), the events read, and the wall time.
type clientReport struct {
	All, Steady []time.Duration
	Events      int
	Wall        time.Duration
	// SteadyWall is from the last stream's start to the last steady
	// event's arrival: the window Steady's events came in.
	SteadyWall time.Duration
	Err        string
}

// runClients streams n tasks at once from the server at url and measures
// each event's latency, from the status timestamp (when the session
// emitted it) to its arrival.
func runClients(url string, n int, legacy bool) clientReport {
	type sample struct{ sent, got time.Time }
	var (
		mu      sync.Mutex
		samples []sample
		r       clientReport
		wg      sync.WaitGroup
		started sync.WaitGroup
	)
	start := time.Now()
	errs := make(chan error, n)
	// allStarted is when the last stream's first text arrived: sessions
	// start (about a millisecond of CPU each) until then.
	var allStarted time.Time
	var once sync.Once
	started.Add(n)
	go func() { started.Wait(); once.Do(func() { allStarted = time.Now() }) }()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]sample, 0, 256)
			events := 0
			first := true
			err := streamRaw(context.Background(), url, "go", legacy, 0, func(sent, got time.Time) {
				events++
				if !sent.IsZero() {
					mine = append(mine, sample{sent, got})
					if first && events > 2 {
						first = false
						started.Done()
					}
				}
			})
			if first {
				started.Done()
			}
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			samples = append(samples, mine...)
			r.Events += events
			mu.Unlock()
		}()
	}
	wg.Wait()
	r.Wall = time.Since(start)
	close(errs)
	for err := range errs {
		r.Err = err.Error()
	}
	once.Do(func() {})
	for _, s := range samples {
		d := s.got.Sub(s.sent)
		r.All = append(r.All, d)
		if s.sent.After(allStarted) {
			r.Steady = append(r.Steady, d)
			r.SteadyWall = max(r.SteadyWall, s.got.Sub(allStarted))
		}
	}
	return r
}

// callTurnChunks is a replayed response of text chunks ending in a call.
func callTurnChunks(chunks []string, name string, args map[string]any) string {
	var parts []string
	for _, c := range chunks {
		t, _ := json.Marshal(c)
		parts = append(parts, fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[{"text":%s}]}}]}`, t))
	}
	a, _ := json.Marshal(args)
	parts = append(parts, fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":%q,"args":%s}}]},"finishReason":"STOP"}]}`, name, a))
	return `{"method":"generateContentStream","response":[` + strings.Join(parts, ",") + `]}`
}

// BenchmarkIdleTaskHeap measures the heap an idle task holds: a task
// parked on a confirmation (its context's session, its run waiting),
// and a completed task (its context's session, idle) whose answer was one
// chunk or 200 streamed deltas. Each iteration
// leaves one more idle task on one server. Budget: 100 KB.
func BenchmarkIdleTaskHeap(b *testing.B) {
	for _, kind := range []string{"parked", "completed", "completed-200-deltas"} {
		b.Run(kind, func(b *testing.B) {
			line := textTurn("Done.")
			switch kind {
			case "parked":
				line = callTurn("", "write_file", map[string]any{"file_path": "a.txt", "content": "x"})
			}
			h := newHarness(b, []string{line})
			if kind == "completed-200-deltas" {
				// A model that keeps nothing per session, as a real one: a
				// replayed 200-chunk answer is parsed into every session.
				h.resolver = pacedModel{chunks: 200}
			}
			c := h.client("jsonrpc")
			// Warm the server: the first context pays for one-time
			// set-up.
			collectB(b, c, userMessage("warm", ""))
			before := heap()
			n := 0
			for b.Loop() {
				collectB(b, c, userMessage("go", ""))
				n++
			}
			after := heap()
			b.ReportMetric(float64(after-before)/float64(n)/1024, "KB/task")
		})
	}
}

func heap() uint64 {
	var m goruntime.MemStats
	for range 3 {
		goruntime.GC()
	}
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc
}

func collectB(b *testing.B, c interface {
	SendStreamingMessage(context.Context, *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error]
}, m *a2a.Message) {
	for _, err := range c.SendStreamingMessage(b.Context(), &a2a.SendMessageRequest{Message: m}) {
		if err != nil {
			b.Fatal(err)
		}
	}
}

// sqliteTasks keeps tasks in a SQLite session database, as agentry serve
// does by default.
func sqliteTasks(b testing.TB) harnessOption {
	return func(c *protocol.Config, _ *config.Settings) {
		st, err := sessions.OpenSQLite(b.Context(), filepath.Join(b.TempDir(), "sessions.db"), sessions.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close() })
		tasks, err := taskdb.Open(b.Context(), st.DB(), st.Dialect(), taskdb.WithAuthenticator(protocol.SingleUser), taskdb.WithParkedRuns())
		if err != nil {
			b.Fatal(err)
		}
		c.TaskStore, c.PushStore = tasks, tasks.PushConfigs()
	}
}
