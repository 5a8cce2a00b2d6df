// Package telemetry exports OpenTelemetry traces and metrics for agentry:
// one span per agent run, model call, tool call and command hook, plus
// counters and duration histograms for the same operations.
//
// Telemetry is off by default, and off means free: New returns a nil
// *Telemetry for the "none" exporter, and every method (and every method of
// the handles it returns) is a no-op on a nil receiver that neither
// allocates nor calls into OpenTelemetry. Call sites therefore never need
// an "if telemetry enabled" guard.
//
// The package never touches the OpenTelemetry globals (otel.SetTracerProvider,
// otel.SetMeterProvider, otel.SetErrorHandler): agentry is also a library,
// and an embedding program owns those. Export failures are reported through
// Config.Logger instead.
//
// # Spans
//
// Span names follow the OpenTelemetry GenAI semantic conventions,
// "{gen_ai.operation.name} {target}", so that tracing back ends group them
// sensibly and the name stays low-cardinality:
//
//	invoke_agent            one agent run (one prompt); root of the turn
//	chat <model>            one model call, named after the routed model
//	execute_tool <tool>     one tool call
//	hook <event>            one command hook run
//
// A model call starts under the model the caller asked for (which may be a
// routing alias such as "auto") and is renamed by SetModel, and by Fallback,
// once the model that really served the call is known. Prompt text and model
// output are never recorded; only identifiers, model names, token counts,
// statuses and error messages are.
//
// # Metrics
//
//	agentry.model.calls      counter   {call}      gen_ai.request.model, status
//	agentry.model.tokens     counter   {token}     gen_ai.request.model, type=input|output|cached
//	agentry.model.retries    counter   {retry}     gen_ai.request.model, reason
//	agentry.model.fallbacks  counter   {fallback}  agentry.fallback.from, agentry.fallback.to
//	agentry.tool.calls       counter   {call}      agentry.tool.name, status
//	agentry.hook.runs        counter   {run}       agentry.hook.event, agentry.hook.decision, status
//	agentry.run.duration     histogram s           status
//	agentry.model.duration   histogram s           gen_ai.request.model, status
//	agentry.tool.duration    histogram s           agentry.tool.name, status
//	agentry.hook.duration    histogram s           agentry.hook.event, status
//
// status is "ok", "error", "cancelled" or "timeout" (derived from the error),
// except for tool calls where the caller passes it.
//
// # File format
//
// The "file" exporter writes JSON lines, one object per line, each either
// one finished span or one metrics collection. The stdout exporters are not
// used because they write a batch of spans as one JSON document (pretty
// printed by default), which cannot be read back span by span with a line
// reader, jq -c or grep.
//
// A span line:
//
//	{"type":"span",
//	 "name":"chat gemini-2.5-pro",          // see Spans above
//	 "kind":"client",                       // internal|server|client|producer|consumer
//	 "trace_id":"<32 hex>",
//	 "span_id":"<16 hex>",
//	 "parent_span_id":"<16 hex>",           // omitted on a root span
//	 "start":"2026-01-02T03:04:05.123456789Z", // RFC 3339, nanoseconds
//	 "end":"2026-01-02T03:04:06.5Z",
//	 "attributes":{"gen_ai.request.model":"gemini-2.5-pro","gen_ai.usage.input_tokens":120},
//	 "events":[{"name":"retry","time":"…","attributes":{"agentry.retry.attempt":1}}], // omitted if none
//	 "status":{"code":"Error","message":"…"}, // code Unset|Ok|Error; message omitted if empty
//	 "service":"agentry"}
//
// Attribute values keep their JSON types: strings, numbers (integers stay
// integers), booleans, or arrays of those.
//
// A metrics line (written at each collection: every 60s by default, and on Shutdown;
// collections with no data points are skipped):
//
//	{"type":"metrics","time":"…","service":"agentry",
//	 "metrics":[
//	   {"name":"agentry.model.calls","unit":"{call}","description":"…",
//	    "kind":"sum","monotonic":true,"temporality":"cumulative",
//	    "points":[{"attributes":{"gen_ai.request.model":"m","status":"ok"},"start":"…","time":"…","value":1}]},
//	   {"name":"agentry.model.duration","unit":"s","kind":"histogram","temporality":"cumulative",
//	    "points":[{"attributes":{…},"start":"…","time":"…","count":1,"sum":0.42,"min":0.42,"max":0.42,
//	               "bounds":[0.01,…],"bucket_counts":[0,…]}]}]}
//
// Sums are cumulative, so the last metrics line holds the totals.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Exporter names accepted in Config.Exporter.
const (
	// ExporterNone disables telemetry; it is also what "" means.
	ExporterNone = "none"
	// ExporterOTLPHTTP sends OTLP/HTTP protobuf to Config.Endpoint.
	ExporterOTLPHTTP = "otlp-http"
	// ExporterOTLPGRPC sends OTLP/gRPC to Config.Endpoint.
	ExporterOTLPGRPC = "otlp-grpc"
	// ExporterFile appends JSON lines to Config.File, in the format the
	// package documentation describes.
	ExporterFile = "file"
)

// DefaultServiceName is the service.name resource attribute used when
// Config.ServiceName is empty.
const DefaultServiceName = "agentry"

// scopeName is the instrumentation scope of every span and instrument; it is
// the import path so that back ends can tell agentry's telemetry apart from
// an embedding program's.
const scopeName = "github.com/agentry-dev/agentry/telemetry"

// ErrInvalidConfig is wrapped by every error Config.Validate returns, so
// callers can tell a configuration mistake from an exporter start failure.
var ErrInvalidConfig = errors.New("invalid telemetry config")

// Config selects and configures the telemetry exporter. The zero value is
// valid and means telemetry off.
type Config struct {
	// Exporter is "none" (the default, also ""), "otlp-http", "otlp-grpc"
	// or "file".
	Exporter string
	// Endpoint is the OTLP collector, required for the otlp-* exporters:
	// either host:port (TLS unless Insecure) or a URL. A URL's scheme
	// decides TLS ("http" is plain) and, for otlp-http, its path is the base
	// to which /v1/traces and /v1/metrics are appended, as with
	// OTEL_EXPORTER_OTLP_ENDPOINT.
	Endpoint string
	// Insecure sends plain HTTP or gRPC without TLS, for loopback
	// collectors.
	Insecure bool
	// Headers are sent with every OTLP request, e.g. authorization. They are
	// never logged.
	Headers map[string]string
	// File is the JSON lines path for the "file" exporter; it is created
	// if missing and appended to otherwise.
	File string
	// ServiceName is the service.name resource attribute; default
	// "agentry".
	ServiceName string
	// Logger receives export failures and lifecycle messages; nil discards
	// them.
	Logger *slog.Logger
	// FlushTimeout bounds Shutdown's final flush, so that a collector that
	// is down or slow delays the exit by at most this much; 0 means
	// DefaultFlushTimeout.
	FlushTimeout time.Duration
}

// DefaultFlushTimeout is Shutdown's bound when Config.FlushTimeout is 0:
// enough for a collector on the machine or the network to take the last
// spans, short enough not to be noticed when it is unreachable.
const DefaultFlushTimeout = time.Second

// exporter returns the normalised exporter name: lower case, "" as "none".
func (c Config) exporter() string {
	e := strings.ToLower(strings.TrimSpace(c.Exporter))
	if e == "" {
		return ExporterNone
	}
	return e
}

// Validate reports configuration mistakes before anything is started. Each
// error names the offending field and how to fix it, and wraps
// ErrInvalidConfig.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...))
	}
	switch e := c.exporter(); e {
	case ExporterNone:
		// Nothing else is read, so stray fields are not an error: a config
		// file may keep an endpoint around while telemetry is switched off.
	case ExporterOTLPHTTP, ExporterOTLPGRPC:
		port := "4318"
		if e == ExporterOTLPGRPC {
			port = "4317"
		}
		ep := strings.TrimSpace(c.Endpoint)
		switch {
		case ep == "":
			bad("exporter %q needs Endpoint: set it to the collector address, e.g. %q or %q", e, "localhost:"+port, "http://localhost:"+port)
		case strings.Contains(ep, "://"):
			u, err := url.Parse(ep)
			if err != nil {
				bad("Endpoint %q is not a valid URL (%v): use host:port or http(s)://host:port", ep, err)
			} else if u.Scheme != "http" && u.Scheme != "https" {
				bad("Endpoint %q has scheme %q: use http:// or https://, or plain host:port", ep, u.Scheme)
			} else if u.Host == "" {
				bad("Endpoint %q has no host: use e.g. %q", ep, "http://localhost:"+port)
			}
		}
		for k := range c.Headers {
			if strings.TrimSpace(k) == "" {
				bad("Headers has an empty header name: remove it or name the header")
				break
			}
		}
	case ExporterFile:
		if strings.TrimSpace(c.File) == "" {
			bad("exporter %q needs File: set it to the path of the JSON lines file to append to", e)
		}
	default:
		bad("unknown Exporter %q: use one of %q, %q, %q or %q", c.Exporter, ExporterNone, ExporterOTLPHTTP, ExporterOTLPGRPC, ExporterFile)
	}
	return errors.Join(errs...)
}

// Telemetry owns the tracer and meter providers of one agentry process and
// hands out span handles. A nil *Telemetry is valid and means telemetry off;
// all its methods are then free no-ops.
type Telemetry struct {
	log    *slog.Logger
	tp     *sdktrace.TracerProvider
	mp     *sdkmetric.MeterProvider
	tracer trace.Tracer

	// exporters are the wrapped exporters, kept so Shutdown can report a
	// final export that failed (the SDK would only hand that error to the
	// global error handler).
	exporters []*loggedExporter
	// health is what the exporters share: one warning for the process,
	// whichever signal fails first.
	health       *exportHealth
	flushTimeout time.Duration

	modelCalls    metric.Int64Counter
	modelTokens   metric.Int64Counter
	modelRetries  metric.Int64Counter
	modelFallback metric.Int64Counter
	toolCalls     metric.Int64Counter
	hookRuns      metric.Int64Counter
	runDur        metric.Float64Histogram
	modelDur      metric.Float64Histogram
	toolDur       metric.Float64Histogram
	hookDur       metric.Float64Histogram

	shutdownOnce sync.Once
	shutdownErr  error
}

// durationBuckets are the histogram bounds in seconds. The SDK default
// bounds are meant for milliseconds; these are the GenAI semantic
// conventions' gen_ai.client.operation.duration advice, which spans a fast
// hook (10ms) to a long model call (80s+).
var durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}

// New validates cfg and starts the exporter it names. For "none" it returns
// nil, nil: the nil *Telemetry is the off switch. The caller must call
// Shutdown to flush buffered spans and the final metrics.
func New(ctx context.Context, cfg Config) (*Telemetry, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	exp := cfg.exporter()
	if exp == ExporterNone {
		return nil, nil
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	service := cfg.ServiceName
	if service == "" {
		service = DefaultServiceName
	}
	// No resource.WithFromEnv or host detectors: the resource is exactly
	// what the config says, so output is reproducible and nothing about the
	// machine leaks to a remote collector unasked.
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", service)),
		resource.WithTelemetrySDK(),
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry: build resource: %w", err)
	}

	spanExp, metricExp, err := newExporters(ctx, exp, cfg)
	if err != nil {
		return nil, err
	}
	health := &exportHealth{log: log, endpoint: cfg.Endpoint}
	if exp == ExporterFile {
		health.endpoint = cfg.File
	}
	te := &loggedExporter{signal: "traces", health: health}
	me := &loggedExporter{signal: "metrics", health: health}
	flush := cfg.FlushTimeout
	if flush <= 0 {
		flush = DefaultFlushTimeout
	}
	t := &Telemetry{log: log, exporters: []*loggedExporter{te, me}, health: health, flushTimeout: flush}
	t.tp = sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithBatcher(&loggedSpanExporter{SpanExporter: spanExp, l: te}),
	)
	t.mp = sdkmetric.NewMeterProvider(
		sdkmetric.WithResource(res),
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(&loggedMetricExporter{Exporter: metricExp, l: me})),
	)
	t.tracer = t.tp.Tracer(scopeName)
	if err := t.instruments(t.mp.Meter(scopeName)); err != nil {
		// Unreachable with valid names, but shut down what was started
		// rather than leak the exporters.
		return nil, errors.Join(err, t.Shutdown(ctx))
	}
	log.Debug("telemetry enabled", "exporter", exp, "endpoint", cfg.Endpoint, "file", cfg.File, "service", service)
	return t, nil
}

// instruments creates the counters and histograms listed in the package
// documentation.
func (t *Telemetry) instruments(m metric.Meter) error {
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	hist := func(name, desc string) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(durationBuckets...))
		errs = append(errs, err)
		return h
	}
	t.modelCalls = counter("agentry.model.calls", "{call}", "Model calls, by routed model and status.")
	t.modelTokens = counter("agentry.model.tokens", "{token}", "Tokens used by model calls, by model and type (input, output, cached).")
	t.modelRetries = counter("agentry.model.retries", "{retry}", "Model call retries, by model and reason.")
	t.modelFallback = counter("agentry.model.fallbacks", "{fallback}", "Model fallbacks, by original and fallback model.")
	t.toolCalls = counter("agentry.tool.calls", "{call}", "Tool calls, by tool and status.")
	t.hookRuns = counter("agentry.hook.runs", "{run}", "Command hook runs, by event and decision.")
	t.runDur = hist("agentry.run.duration", "Duration of agent runs.")
	t.modelDur = hist("agentry.model.duration", "Duration of model calls, retries included.")
	t.toolDur = hist("agentry.tool.duration", "Duration of tool calls.")
	t.hookDur = hist("agentry.hook.duration", "Duration of command hook runs.")
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("telemetry: create instruments: %w", err)
	}
	return nil
}

// Shutdown flushes buffered spans and a final metrics collection, then
// closes the exporters, all within Config.FlushTimeout (or ctx, if it ends
// sooner): a collector that cannot be reached costs the exit that much,
// and one warning. It is safe on a nil receiver and idempotent (later calls
// return the first result). Spans started afterwards are dropped.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	t.shutdownOnce.Do(func() {
		ctx, cancel := context.WithTimeout(ctx, t.flushTimeout)
		defer cancel()
		// Spans are flushed first, with ctx: the span processor's Shutdown
		// exports what is left under a context of its own, which no
		// deadline bounds (the metric reader's final export uses ctx).
		// Traces first: they are what a user debugging a turn wants most.
		var errs []error
		if err := t.tp.ForceFlush(ctx); err != nil {
			errs = append(errs, fmt.Errorf("telemetry: flush traces: %w", err))
		}
		if err := t.tp.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("telemetry: shut down traces: %w", err))
		}
		if err := t.mp.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("telemetry: shut down metrics: %w", err))
		}
		for _, e := range t.exporters {
			if err := e.lastError(); err != nil {
				errs = append(errs, fmt.Errorf("telemetry: last %s export failed: %w", e.signal, err))
			}
		}
		t.shutdownErr = errors.Join(errs...)
		if len(errs) > 0 {
			// An export still under way when the flush gave up has not
			// reported yet: warn now, since the process is about to end.
			t.health.warn(errs[0], t.flushTimeout)
		}
	})
	return t.shutdownErr
}
