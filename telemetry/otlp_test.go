package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// collected is what a fake collector received, for either transport.
type collected struct {
	mu      sync.Mutex
	traces  []*coltracepb.ExportTraceServiceRequest
	metrics []*colmetricpb.ExportMetricsServiceRequest
	auth    []string // authorization header of each request
	paths   []string // HTTP only
}

func (c *collected) snapshot() ([]*coltracepb.ExportTraceServiceRequest, []*colmetricpb.ExportMetricsServiceRequest, []string, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.traces), slices.Clone(c.metrics), slices.Clone(c.auth), slices.Clone(c.paths)
}

// exportTurn records a run with a model call and a tool call, then shuts
// tel down so everything is flushed to the collector.
func exportTurn(t *testing.T, tel *Telemetry) {
	t.Helper()
	ctx := context.Background()
	runCtx, run := tel.StartRun(ctx, "sess-otlp", "prompt-otlp")
	_, mc := tel.StartModelCall(runCtx, "auto")
	mc.SetModel("gpt-test")
	mc.End(7, 3, 0, nil)
	_, tc := tel.StartToolCall(runCtx, "grep", "call-9")
	tc.End("success", nil)
	run.End(nil)
	// The deadline only bounds a hang; nothing asserts on elapsed time.
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := tel.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// checkExport verifies the received spans form the turn exportTurn made and
// that metrics arrived too.
func checkExport(t *testing.T, c *collected, wantAuth string) {
	t.Helper()
	traces, metrics, auth, _ := c.snapshot()
	type span struct {
		name, parent string
		attrs        map[string]any
	}
	var spans []span
	ids := map[string]string{} // span id -> name
	var service string
	for _, req := range traces {
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.Key == "service.name" {
					service = kv.Value.GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				if got := ss.GetScope().GetName(); got != scopeName {
					t.Errorf("scope = %q, want %q", got, scopeName)
				}
				for _, s := range ss.Spans {
					ids[hex.EncodeToString(s.SpanId)] = s.Name
					spans = append(spans, span{name: s.Name, parent: hex.EncodeToString(s.ParentSpanId), attrs: protoAttrs(s.Attributes)})
					if s.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
						t.Errorf("span %q has status Error", s.Name)
					}
				}
			}
		}
	}
	if service != "agentry" {
		t.Errorf("service.name = %q, want agentry", service)
	}
	got := map[string]span{}
	for _, s := range spans {
		s.parent = ids[s.parent] // compare parents by name
		got[s.name] = s
	}
	want := map[string]span{
		"invoke_agent": {name: "invoke_agent", attrs: map[string]any{
			"gen_ai.operation.name": "invoke_agent", "agentry.session.id": "sess-otlp", "agentry.prompt.id": "prompt-otlp",
		}},
		"chat gpt-test": {name: "chat gpt-test", parent: "invoke_agent", attrs: map[string]any{
			"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-test", "agentry.model.requested": "auto",
			"gen_ai.usage.input_tokens": int64(7), "gen_ai.usage.output_tokens": int64(3), "gen_ai.usage.cache_read.input_tokens": int64(0),
		}},
		"execute_tool grep": {name: "execute_tool grep", parent: "invoke_agent", attrs: map[string]any{
			"gen_ai.operation.name": "execute_tool", "agentry.tool.name": "grep", "agentry.tool.call_id": "call-9", "agentry.tool.status": "success",
		}},
	}
	if len(spans) != len(want) {
		t.Errorf("received %d spans, want %d", len(spans), len(want))
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(span{})); d != "" {
		t.Errorf("spans (-want +got):\n%s", d)
	}

	var names []string
	for _, req := range metrics {
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					names = append(names, m.Name)
				}
			}
		}
	}
	for _, n := range []string{"agentry.model.calls", "agentry.model.tokens", "agentry.tool.calls", "agentry.run.duration"} {
		if !slices.Contains(names, n) {
			t.Errorf("metric %q not received; got %q", n, names)
		}
	}
	if len(auth) == 0 {
		t.Fatal("no requests received")
	}
	for _, a := range auth {
		if a != wantAuth {
			t.Errorf("authorization header = %q, want %q", a, wantAuth)
		}
	}
}

// protoAttrs flattens OTLP attributes into Go values.
func protoAttrs(kvs []*commonpb.KeyValue) map[string]any {
	m := map[string]any{}
	for _, kv := range kvs {
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.Key] = v.IntValue
		default:
			m[kv.Key] = kv.Value.String()
		}
	}
	return m
}

// quietLogger captures logs so a test can check that exports succeeded and
// that no secret was logged.
func quietLogger(buf *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// otlpHTTPCollector decodes OTLP/HTTP protobuf requests.
func otlpHTTPCollector(t *testing.T, c *collected) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err == nil {
				body, err = io.ReadAll(zr)
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/x-protobuf" {
			t.Errorf("Content-Type = %q, want application/x-protobuf", ct)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.paths = append(c.paths, r.URL.Path)
		c.auth = append(c.auth, r.Header.Get("Authorization"))
		var resp proto.Message
		switch {
		case strings.HasSuffix(r.URL.Path, "/v1/traces"):
			req := &coltracepb.ExportTraceServiceRequest{}
			if err := proto.Unmarshal(body, req); err != nil {
				t.Errorf("decode ExportTraceServiceRequest: %v", err)
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			c.traces = append(c.traces, req)
			resp = &coltracepb.ExportTraceServiceResponse{}
		case strings.HasSuffix(r.URL.Path, "/v1/metrics"):
			req := &colmetricpb.ExportMetricsServiceRequest{}
			if err := proto.Unmarshal(body, req); err != nil {
				t.Errorf("decode ExportMetricsServiceRequest: %v", err)
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			c.metrics = append(c.metrics, req)
			resp = &colmetricpb.ExportMetricsServiceResponse{}
		default:
			http.NotFound(w, r)
			return
		}
		out, _ := proto.Marshal(resp)
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	})
}

func TestOTLPHTTP(t *testing.T) {
	cases := []struct {
		name      string
		endpoint  func(srvURL string) string
		insecure  bool
		wantPaths []string
	}{
		{
			name:      "url with base path",
			endpoint:  func(u string) string { return u + "/otlp" },
			wantPaths: []string{"/otlp/v1/metrics", "/otlp/v1/traces"},
		},
		{
			name:      "host:port insecure",
			endpoint:  func(u string) string { return strings.TrimPrefix(u, "http://") },
			insecure:  true,
			wantPaths: []string{"/v1/metrics", "/v1/traces"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &collected{}
			srv := httptest.NewServer(otlpHTTPCollector(t, c)) // listens on 127.0.0.1
			defer srv.Close()
			var logs bytes.Buffer
			tel, err := New(context.Background(), Config{
				Exporter: "otlp-http",
				Endpoint: tc.endpoint(srv.URL),
				Insecure: tc.insecure,
				Headers:  map[string]string{"Authorization": "Bearer s3cret-token"},
				Logger:   quietLogger(&logs),
				// Only a hang guard: a loaded machine must not fail it.
				FlushTimeout: time.Minute,
			})
			if err != nil {
				t.Fatal(err)
			}
			exportTurn(t, tel)
			checkExport(t, c, "Bearer s3cret-token")
			_, _, _, paths := c.snapshot()
			slices.Sort(paths)
			paths = slices.Compact(paths)
			if d := cmp.Diff(tc.wantPaths, paths); d != "" {
				t.Errorf("request paths (-want +got):\n%s", d)
			}
			if strings.Contains(logs.String(), "export failed") {
				t.Errorf("exports failed:\n%s", logs.String())
			}
			if strings.Contains(logs.String(), "s3cret") {
				t.Errorf("a header value was logged:\n%s", logs.String())
			}
		})
	}
}

// grpcTraces implements the collector TraceService.
type grpcTraces struct {
	coltracepb.UnimplementedTraceServiceServer
	c *collected
}

func (s *grpcTraces) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	s.c.traces = append(s.c.traces, req)
	s.c.auth = append(s.c.auth, authOf(ctx))
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// grpcMetrics implements the collector MetricsService.
type grpcMetrics struct {
	colmetricpb.UnimplementedMetricsServiceServer
	c *collected
}

func (s *grpcMetrics) Export(ctx context.Context, req *colmetricpb.ExportMetricsServiceRequest) (*colmetricpb.ExportMetricsServiceResponse, error) {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	s.c.metrics = append(s.c.metrics, req)
	s.c.auth = append(s.c.auth, authOf(ctx))
	return &colmetricpb.ExportMetricsServiceResponse{}, nil
}

// authOf returns the authorization metadata of an incoming call.
func authOf(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	return strings.Join(md.Get("authorization"), ",")
}

func TestOTLPGRPC(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &collected{}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, &grpcTraces{c: c})
	colmetricpb.RegisterMetricsServiceServer(srv, &grpcMetrics{c: c})
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	var logs bytes.Buffer
	tel, err := New(context.Background(), Config{
		Exporter: "otlp-grpc",
		Endpoint: lis.Addr().String(),
		Insecure: true,
		Headers:  map[string]string{"authorization": "Bearer grpc-s3cret"},
		Logger:   quietLogger(&logs),
		// Only a hang guard: a loaded machine must not fail it.
		FlushTimeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	exportTurn(t, tel)
	checkExport(t, c, "Bearer grpc-s3cret")
	if strings.Contains(logs.String(), "export failed") {
		t.Errorf("exports failed:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "s3cret") {
		t.Errorf("a header value was logged:\n%s", logs.String())
	}
}

// TestExportFailureIsLoggedAndReported points the exporter at a collector
// that rejects everything: the failure must reach the logger once at Warn
// and Shutdown's error, not the global OpenTelemetry error handler.
func TestExportFailureIsLoggedAndReported(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// 400 is not retryable, so the exporter gives up at once.
		http.Error(w, "rejected", http.StatusBadRequest)
	}))
	defer srv.Close()
	var logs bytes.Buffer
	tel, err := New(context.Background(), Config{Exporter: "otlp-http", Endpoint: srv.URL, Logger: quietLogger(&logs), FlushTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	_, run := tel.StartRun(context.Background(), "s", "p")
	run.End(nil)
	err = tel.Shutdown(context.Background())
	if err == nil || !strings.Contains(err.Error(), "last traces export failed") {
		t.Errorf("Shutdown = %v, want it to report the failed trace export", err)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 { // both signals fail: one warning
		t.Errorf("got %d warnings, want one:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "export to "+srv.URL+" failed") {
		t.Errorf("the warning does not name the collector %s:\n%s", srv.URL, logs.String())
	}
}

// lockedBuffer is a log sink that an export still running in the
// background may write to while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// deadAddr returns a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

// TestDeadCollectorBoundsShutdown: with no collector listening, Shutdown
// hands the exporters a context whose deadline is FlushTimeout from its
// start — so the exit waits that long at most, not the exporters' own
// retry budget — reports the failure, and one warning (for both signals)
// names the collector. Nothing asserts on elapsed time: the bound is read
// from the deadline the exporter was given.
func TestDeadCollectorBoundsShutdown(t *testing.T) {
	for _, exp := range []string{ExporterOTLPHTTP, ExporterOTLPGRPC} {
		t.Run(exp, func(t *testing.T) {
			endpoint := "http://" + deadAddr(t)
			const flush = 300 * time.Millisecond
			var logs lockedBuffer
			tel, err := New(t.Context(), Config{
				Exporter: exp, Endpoint: endpoint, FlushTimeout: flush,
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
			})
			if err != nil {
				t.Fatal(err)
			}
			_, run := tel.StartRun(t.Context(), "s", "p")
			run.End(nil)
			before := time.Now()
			err = tel.Shutdown(context.Background())
			after := time.Now()
			if err == nil {
				t.Fatal("Shutdown reported no error with no collector listening")
			}
			// The span exporter ran under the flush's deadline. The flush
			// starts it on a goroutine of its own: wait until it has (the
			// wait only guards against a hang).
			var deadline time.Time
			for start := time.Now(); ; time.Sleep(time.Millisecond) {
				d, started := tel.exporters[0].lastDeadline()
				if started {
					deadline = d
					break
				}
				if time.Since(start) > time.Minute {
					t.Fatal("the trace exporter was never called")
				}
			}
			if deadline.IsZero() || deadline.Before(before.Add(flush)) || deadline.After(after.Add(flush)) {
				t.Errorf("the trace export's deadline is %v, want FlushTimeout after Shutdown began (%v … %v)",
					deadline, before.Add(flush), after.Add(flush))
			}
			out := logs.String()
			if n := strings.Count(out, "level=WARN"); n != 1 {
				t.Errorf("%d warnings, want 1:\n%s", n, out)
			}
			if !strings.Contains(out, "the collector at "+endpoint+" could not be reached") {
				t.Errorf("the warning does not say the collector at %s could not be reached:\n%s", endpoint, out)
			}
		})
	}
}
