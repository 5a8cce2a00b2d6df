package telemetry

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		// want lists substrings the error must contain; nil means valid.
		want []string
	}{
		{name: "zero value is off", cfg: Config{}},
		{name: "none", cfg: Config{Exporter: "none"}},
		{name: "none ignores stray endpoint", cfg: Config{Exporter: "none", Endpoint: "::bad::"}},
		{name: "case and spaces", cfg: Config{Exporter: " OTLP-HTTP ", Endpoint: "localhost:4318"}},
		{name: "otlp-http host:port", cfg: Config{Exporter: "otlp-http", Endpoint: "localhost:4318"}},
		{name: "otlp-http url", cfg: Config{Exporter: "otlp-http", Endpoint: "https://collector.example/otlp"}},
		{name: "otlp-grpc", cfg: Config{Exporter: "otlp-grpc", Endpoint: "localhost:4317", Insecure: true}},
		{name: "file", cfg: Config{Exporter: "file", File: "/tmp/x.jsonl"}},
		{
			name: "unknown exporter",
			cfg:  Config{Exporter: "jaeger"},
			want: []string{`unknown Exporter "jaeger"`, `"otlp-http"`, `"otlp-grpc"`, `"file"`, `"none"`},
		},
		{
			name: "otlp-http without endpoint",
			cfg:  Config{Exporter: "otlp-http"},
			want: []string{`"otlp-http" needs Endpoint`, "localhost:4318"},
		},
		{
			name: "otlp-grpc without endpoint",
			cfg:  Config{Exporter: "otlp-grpc", Endpoint: "  "},
			want: []string{`"otlp-grpc" needs Endpoint`, "localhost:4317"},
		},
		{
			name: "endpoint with bad scheme",
			cfg:  Config{Exporter: "otlp-http", Endpoint: "ftp://collector:4318"},
			want: []string{"Endpoint", `scheme "ftp"`, "http://"},
		},
		{
			name: "endpoint url without host",
			cfg:  Config{Exporter: "otlp-grpc", Endpoint: "http://"},
			want: []string{"Endpoint", "no host"},
		},
		{
			name: "empty header name",
			cfg:  Config{Exporter: "otlp-http", Endpoint: "localhost:4318", Headers: map[string]string{"": "x"}},
			want: []string{"Headers", "empty header name"},
		},
		{
			name: "file without path",
			cfg:  Config{Exporter: "file"},
			want: []string{`"file" needs File`, "path"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			if c.want == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error containing %q", c.want)
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("Validate() = %v, does not wrap ErrInvalidConfig", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestNewNoneReturnsNil(t *testing.T) {
	for _, exp := range []string{"", "none", "NONE"} {
		tel, err := New(context.Background(), Config{Exporter: exp})
		if err != nil || tel != nil {
			t.Errorf("New(Exporter: %q) = %v, %v; want nil, nil", exp, tel, err)
		}
	}
}

func TestNewRejectsInvalidConfig(t *testing.T) {
	tel, err := New(context.Background(), Config{Exporter: "otlp-http"})
	if !errors.Is(err, ErrInvalidConfig) || tel != nil {
		t.Fatalf("New = %v, %v; want nil and an ErrInvalidConfig error", tel, err)
	}
}

func TestNewFileInMissingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "spans.jsonl")
	tel, err := New(context.Background(), Config{Exporter: "file", File: path})
	if err == nil || tel != nil {
		t.Fatalf("New = %v, %v; want an error for a file in a missing directory", tel, err)
	}
	if !strings.Contains(err.Error(), "File") || errors.Is(err, ErrInvalidConfig) {
		t.Errorf("New error = %q; want it to name File and not be a config error", err)
	}
}

// ctxKey distinguishes the test context so identity can be checked.
type ctxKey struct{}

// everything calls every method once on whatever tel is, the way the
// runtime would in one turn.
func everything(ctx context.Context, tel *Telemetry) context.Context {
	rctx, run := tel.StartRun(ctx, "session", "prompt")
	mctx, mc := tel.StartModelCall(rctx, "auto")
	mc.SetModel("routed")
	mc.Retry(1, "rate_limit")
	mc.Fallback("routed", "fallback")
	mc.End(1, 2, 3, nil)
	tctx, tc := tel.StartToolCall(mctx, "read_file", "call-1")
	tc.End("success", nil)
	hctx, hk := tel.StartHook(tctx, "PreToolUse", "lint")
	hk.End("allow", nil)
	run.End(nil)
	return hctx
}

func TestNilTelemetryIsANoOp(t *testing.T) {
	var tel *Telemetry
	ctx := context.WithValue(context.Background(), ctxKey{}, "v")

	// Every Start must hand back the caller's context untouched: no span
	// was put into it.
	if got := everything(ctx, tel); got != ctx {
		t.Errorf("contexts returned by a nil Telemetry differ from the input")
	}
	if _, r := tel.StartRun(ctx, "s", "p"); r != nil {
		t.Errorf("StartRun on nil Telemetry returned a non-nil *Run")
	}
	if _, m := tel.StartModelCall(ctx, "m"); m != nil {
		t.Errorf("StartModelCall on nil Telemetry returned a non-nil *ModelCall")
	}
	if _, c := tel.StartToolCall(ctx, "t", "c"); c != nil {
		t.Errorf("StartToolCall on nil Telemetry returned a non-nil *ToolCall")
	}
	if _, h := tel.StartHook(ctx, "e", "n"); h != nil {
		t.Errorf("StartHook on nil Telemetry returned a non-nil *Hook")
	}
	if err := tel.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown on nil Telemetry = %v", err)
	}

	err := errors.New("boom")
	allocs := testing.AllocsPerRun(1000, func() {
		everything(ctx, tel)
		// Error paths too: they must not format anything when off.
		_, mc := tel.StartModelCall(ctx, "m")
		mc.End(0, 0, 0, err)
		_, tc := tel.StartToolCall(ctx, "t", "c")
		tc.End("error", err)
		_, hk := tel.StartHook(ctx, "e", "n")
		hk.End("deny", err)
	})
	if allocs != 0 {
		t.Errorf("nil Telemetry allocates %v times per turn, want 0", allocs)
	}
}
