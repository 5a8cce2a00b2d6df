package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"path"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// endpoint is Config.Endpoint split into what the OTLP option builders take.
type endpoint struct {
	hostPort string
	basePath string // URL path, without the /v1/<signal> suffix
	insecure bool
}

// parseEndpoint accepts host:port or an http(s) URL; Validate has already
// rejected anything else.
func parseEndpoint(cfg Config) (endpoint, error) {
	ep := strings.TrimSpace(cfg.Endpoint)
	if !strings.Contains(ep, "://") {
		return endpoint{hostPort: ep, insecure: cfg.Insecure}, nil
	}
	u, err := url.Parse(ep)
	if err != nil {
		return endpoint{}, fmt.Errorf("telemetry: parse Endpoint: %w", err)
	}
	// The scheme says plain or TLS, as the OTel SDK environment variables
	// do; Insecure can still force plain text for an https-less setup.
	return endpoint{hostPort: u.Host, basePath: u.Path, insecure: cfg.Insecure || u.Scheme == "http"}, nil
}

// newExporters builds the span and metric exporters for a validated,
// enabled config. The OTLP exporters do not connect here: they dial lazily,
// so an unreachable collector never blocks or fails agentry's start.
func newExporters(ctx context.Context, exp string, cfg Config) (sdktrace.SpanExporter, sdkmetric.Exporter, error) {
	switch exp {
	case ExporterFile:
		w, err := openJSONLines(cfg.File)
		if err != nil {
			return nil, nil, err
		}
		return &fileSpanExporter{w: w}, &fileMetricExporter{w: w}, nil

	case ExporterOTLPHTTP:
		ep, err := parseEndpoint(cfg)
		if err != nil {
			return nil, nil, err
		}
		topts := []otlptracehttp.Option{
			otlptracehttp.WithEndpoint(ep.hostPort),
			// Endpoint is a base shared by both signals, so each gets its
			// standard suffix appended, as OTEL_EXPORTER_OTLP_ENDPOINT does.
			otlptracehttp.WithURLPath(path.Join("/", ep.basePath, "v1/traces")),
		}
		mopts := []otlpmetrichttp.Option{
			otlpmetrichttp.WithEndpoint(ep.hostPort),
			otlpmetrichttp.WithURLPath(path.Join("/", ep.basePath, "v1/metrics")),
		}
		if ep.insecure {
			topts = append(topts, otlptracehttp.WithInsecure())
			mopts = append(mopts, otlpmetrichttp.WithInsecure())
		}
		if len(cfg.Headers) > 0 {
			topts = append(topts, otlptracehttp.WithHeaders(cfg.Headers))
			mopts = append(mopts, otlpmetrichttp.WithHeaders(cfg.Headers))
		}
		se, err := otlptracehttp.New(ctx, topts...)
		if err != nil {
			return nil, nil, fmt.Errorf("telemetry: start OTLP/HTTP trace exporter: %w", err)
		}
		me, err := otlpmetrichttp.New(ctx, mopts...)
		if err != nil {
			_ = se.Shutdown(ctx)
			return nil, nil, fmt.Errorf("telemetry: start OTLP/HTTP metric exporter: %w", err)
		}
		return se, me, nil

	case ExporterOTLPGRPC:
		ep, err := parseEndpoint(cfg)
		if err != nil {
			return nil, nil, err
		}
		topts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(ep.hostPort)}
		mopts := []otlpmetricgrpc.Option{otlpmetricgrpc.WithEndpoint(ep.hostPort)}
		if ep.insecure {
			topts = append(topts, otlptracegrpc.WithInsecure())
			mopts = append(mopts, otlpmetricgrpc.WithInsecure())
		}
		if len(cfg.Headers) > 0 {
			topts = append(topts, otlptracegrpc.WithHeaders(cfg.Headers))
			mopts = append(mopts, otlpmetricgrpc.WithHeaders(cfg.Headers))
		}
		se, err := otlptracegrpc.New(ctx, topts...)
		if err != nil {
			return nil, nil, fmt.Errorf("telemetry: start OTLP/gRPC trace exporter: %w", err)
		}
		me, err := otlpmetricgrpc.New(ctx, mopts...)
		if err != nil {
			_ = se.Shutdown(ctx)
			return nil, nil, fmt.Errorf("telemetry: start OTLP/gRPC metric exporter: %w", err)
		}
		return se, me, nil
	}
	// Validate rejects unknown exporters, so this is a programming error.
	return nil, nil, fmt.Errorf("telemetry: %w: unknown Exporter %q", ErrInvalidConfig, exp)
}

// loggedExporter tracks export health for one signal and reports it to the
// configured logger.
//
// The SDK hands export errors to the global OpenTelemetry error handler,
// which by default prints to stderr, in the middle of agentry's terminal
// UI, and which this package must not replace. So the wrappers below log
// failures here and return nil to the SDK. Nothing is lost by that: neither
// the batch span processor nor the periodic reader retries on an error (the
// OTLP exporters retry internally first), and Shutdown still reports a
// final export that failed through lastError.
type loggedExporter struct {
	signal string
	health *exportHealth

	mu       sync.Mutex
	last     error     // error of the latest export, nil once one succeeds
	deadline time.Time // of the latest export's context; zero if it had none
	started  bool
}

// begin notes the deadline an export runs under.
func (l *loggedExporter) begin(ctx context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.deadline, _ = ctx.Deadline()
	l.started = true
}

// record notes the outcome of an export and reports it to health.
func (l *loggedExporter) record(err error) {
	l.mu.Lock()
	l.last = err
	l.mu.Unlock()
	l.health.record(l.signal, err)
}

// lastError returns the error of the latest export, if it failed.
func (l *loggedExporter) lastError() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// lastDeadline returns the deadline of the latest export's context, and
// whether an export has started at all.
func (l *loggedExporter) lastDeadline() (deadline time.Time, started bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deadline, l.started
}

// exportHealth is the export state both signals share. The first failure
// is a warning naming the collector, once per process: an unreachable
// collector fails every export of both signals, and one line says it all.
// Later failures go to Debug, a recovery to Info.
type exportHealth struct {
	log      *slog.Logger
	endpoint string

	mu      sync.Mutex
	warned  bool
	failing bool
}

func (h *exportHealth) record(signal string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err != nil && !h.warned:
		h.warned, h.failing = true, true
		h.log.Warn(failureMessage(h.endpoint, err, 0), "signal", signal, "err", err)
	case err != nil:
		h.failing = true
		h.log.Debug("telemetry export failed", "signal", signal, "err", err)
	case h.failing:
		h.failing = false
		h.log.Info("telemetry export recovered", "signal", signal)
	}
}

// warn reports a flush that failed or ran out of time, unless a failure
// was reported already.
func (h *exportHealth) warn(err error, limit time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.warned {
		return
	}
	h.warned = true
	if errors.Is(err, context.DeadlineExceeded) {
		h.log.Warn(failureMessage(h.endpoint, err, limit)) // the message says it all
		return
	}
	h.log.Warn(failureMessage(h.endpoint, err, limit), "err", err)
}

// failureMessage says what failed in the words a user acts on: a
// collector that did not answer (within limit, when a flush gave up) or
// that refused the data.
func failureMessage(endpoint string, err error, limit time.Duration) string {
	var netErr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) && limit > 0:
		return fmt.Sprintf("telemetry: the collector at %s could not be reached within %s; spans and metrics were not exported", endpoint, limit)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr), errors.Is(err, syscall.ECONNREFUSED),
		status.Code(err) == codes.Unavailable, status.Code(err) == codes.DeadlineExceeded:
		return fmt.Sprintf("telemetry: the collector at %s could not be reached; spans and metrics were not exported", endpoint)
	}
	return fmt.Sprintf("telemetry: export to %s failed; further failures are logged at debug level", endpoint)
}

// loggedSpanExporter routes span export errors to a loggedExporter.
type loggedSpanExporter struct {
	sdktrace.SpanExporter
	l *loggedExporter
}

// ExportSpans exports and records the outcome; see loggedExporter for why
// the error is not returned.
func (e *loggedSpanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.l.begin(ctx)
	e.l.record(e.SpanExporter.ExportSpans(ctx, spans))
	return nil
}

// loggedMetricExporter routes metric export errors to a loggedExporter.
type loggedMetricExporter struct {
	sdkmetric.Exporter
	l *loggedExporter
}

// Export exports and records the outcome; see loggedExporter for why the
// error is not returned.
func (e *loggedMetricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	e.l.begin(ctx)
	e.l.record(e.Exporter.Export(ctx, rm))
	return nil
}
