package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
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
	log    *slog.Logger

	mu      sync.Mutex
	last    error // error of the latest export, nil once one succeeds
	failing bool
}

// record logs a change of export health: the first failure at Warn, repeats
// at Debug (an unreachable collector would otherwise warn every few
// seconds), and recovery at Info.
func (l *loggedExporter) record(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last = err
	switch {
	case err != nil && !l.failing:
		l.failing = true
		l.log.Warn("telemetry export failed; further failures are logged at debug level", "signal", l.signal, "err", err)
	case err != nil:
		l.log.Debug("telemetry export failed", "signal", l.signal, "err", err)
	case l.failing:
		l.failing = false
		l.log.Info("telemetry export recovered", "signal", l.signal)
	}
}

// lastError returns the error of the latest export, if it failed.
func (l *loggedExporter) lastError() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// loggedSpanExporter routes span export errors to a loggedExporter.
type loggedSpanExporter struct {
	sdktrace.SpanExporter
	l *loggedExporter
}

// ExportSpans exports and records the outcome; see loggedExporter for why
// the error is not returned.
func (e *loggedSpanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
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
	e.l.record(e.Exporter.Export(ctx, rm))
	return nil
}
