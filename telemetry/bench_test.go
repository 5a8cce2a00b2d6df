package telemetry

import (
	"context"
	"path/filepath"
	"testing"
)

// site stands for a runtime component holding its Telemetry in a field, so
// the benchmarks measure a real call site: the compiler cannot prove tel
// nil and fold the calls away.
type site struct {
	tel *Telemetry
}

// turn is one turn's instrumentation: a run with a model call and a tool
// call.
//
//go:noinline
func (s *site) turn(ctx context.Context) context.Context {
	rctx, run := s.tel.StartRun(ctx, "session", "prompt")
	mctx, mc := s.tel.StartModelCall(rctx, "model")
	mc.End(10, 20, 0, nil)
	tctx, tc := s.tel.StartToolCall(mctx, "read_file", "call-1")
	tc.End("success", nil)
	run.End(nil)
	return tctx
}

// bare is turn's shape with the telemetry calls removed: the same context
// threading and the same non-inlined call, nothing else.
//
//go:noinline
func (s *site) bare(ctx context.Context) context.Context {
	rctx := ctx
	mctx := rctx
	tctx := mctx
	return tctx
}

var sinkCtx context.Context

// BenchmarkOff is a turn's call site with telemetry off (nil Telemetry).
func BenchmarkOff(b *testing.B) {
	s := &site{}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		sinkCtx = s.turn(ctx)
	}
}

// BenchmarkNoTelemetry is the same call site without any telemetry calls,
// the baseline BenchmarkOff is compared against.
func BenchmarkNoTelemetry(b *testing.B) {
	s := &site{}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		sinkCtx = s.bare(ctx)
	}
}

// BenchmarkFile is the same call site with the file exporter on, to show
// what enabling telemetry costs per turn.
func BenchmarkFile(b *testing.B) {
	tel, err := New(context.Background(), Config{Exporter: "file", File: filepath.Join(b.TempDir(), "t.jsonl")})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := tel.Shutdown(context.Background()); err != nil {
			b.Error(err)
		}
	}()
	s := &site{tel: tel}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		sinkCtx = s.turn(ctx)
	}
}
