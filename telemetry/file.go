package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The line format is documented in the package comment, under "File
// format".

// jsonLines is the file shared by the span and metric exporters. Each
// export is one Write of whole lines under a mutex, so lines from the two
// signals never interleave. The file closes when both exporters have shut
// down.
type jsonLines struct {
	path string

	mu   sync.Mutex
	f    *os.File
	refs int
}

// openJSONLines opens path for appending, creating it owner-readable only:
// spans carry error messages and session ids that are nobody else's
// business.
func openJSONLines(path string) (*jsonLines, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("telemetry: open File: %w", err)
	}
	return &jsonLines{path: path, f: f, refs: 2}, nil
}

// errFileClosed is returned by exports after shutdown.
var errFileClosed = errors.New("telemetry: file exporter is shut down")

// write appends buf, which holds whole lines.
func (w *jsonLines) write(buf []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return errFileClosed
	}
	if _, err := w.f.Write(buf); err != nil {
		return fmt.Errorf("telemetry: write %s: %w", w.path, err)
	}
	return nil
}

// release drops one exporter's reference and closes the file with the
// last one.
func (w *jsonLines) release() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	if w.refs--; w.refs > 0 {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	if err != nil {
		return fmt.Errorf("telemetry: close %s: %w", w.path, err)
	}
	return nil
}

// fileSpanExporter writes spans as JSON lines.
type fileSpanExporter struct {
	w        *jsonLines
	shutdown sync.Once
}

// fileSpan is the JSON shape of a span line.
type fileSpan struct {
	Type       string         `json:"type"`
	Name       string         `json:"name"`
	Kind       string         `json:"kind"`
	TraceID    string         `json:"trace_id"`
	SpanID     string         `json:"span_id"`
	ParentID   string         `json:"parent_span_id,omitempty"`
	Start      string         `json:"start"`
	End        string         `json:"end"`
	Attributes map[string]any `json:"attributes"`
	Events     []fileEvent    `json:"events,omitempty"`
	Status     fileStatus     `json:"status"`
	Service    string         `json:"service,omitempty"`
}

// fileEvent is the JSON shape of a span event.
type fileEvent struct {
	Name       string         `json:"name"`
	Time       string         `json:"time"`
	Attributes map[string]any `json:"attributes,omitempty"`
}

// fileStatus is the JSON shape of a span status.
type fileStatus struct {
	Code    string `json:"code"`
	Message string `json:"message,omitempty"`
}

// ExportSpans writes one line per span.
func (e *fileSpanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // Encode appends the newline
	for _, s := range spans {
		line := fileSpan{
			Type:       "span",
			Name:       s.Name(),
			Kind:       s.SpanKind().String(),
			TraceID:    s.SpanContext().TraceID().String(),
			SpanID:     s.SpanContext().SpanID().String(),
			Start:      formatTime(s.StartTime()),
			End:        formatTime(s.EndTime()),
			Attributes: attrMap(s.Attributes()),
			Status:     fileStatus{Code: s.Status().Code.String(), Message: s.Status().Description},
			Service:    serviceName(s.Resource()),
		}
		if p := s.Parent(); p.SpanID().IsValid() {
			line.ParentID = p.SpanID().String()
		}
		for _, ev := range s.Events() {
			line.Events = append(line.Events, fileEvent{
				Name:       ev.Name,
				Time:       formatTime(ev.Time),
				Attributes: attrMap(ev.Attributes),
			})
		}
		if err := enc.Encode(line); err != nil {
			return fmt.Errorf("telemetry: encode span %q: %w", s.Name(), err)
		}
	}
	if buf.Len() == 0 {
		return nil
	}
	return e.w.write(buf.Bytes())
}

// Shutdown releases the file; the batch processor has already exported
// everything it held.
func (e *fileSpanExporter) Shutdown(ctx context.Context) error {
	var err error
	e.shutdown.Do(func() { err = e.w.release() })
	return err
}

// fileMetricExporter writes each metrics collection as one JSON line.
type fileMetricExporter struct {
	w        *jsonLines
	shutdown sync.Once
}

// fileMetrics is the JSON shape of a metrics line.
type fileMetrics struct {
	Type    string       `json:"type"`
	Time    string       `json:"time"`
	Service string       `json:"service,omitempty"`
	Metrics []fileMetric `json:"metrics"`
}

// fileMetric is the JSON shape of one instrument's data.
type fileMetric struct {
	Name        string      `json:"name"`
	Unit        string      `json:"unit,omitempty"`
	Description string      `json:"description,omitempty"`
	Kind        string      `json:"kind"` // sum, gauge or histogram
	Monotonic   bool        `json:"monotonic,omitempty"`
	Temporality string      `json:"temporality,omitempty"`
	Points      []filePoint `json:"points"`
}

// filePoint is the JSON shape of one data point; Value is set for sums
// and gauges, the rest for histograms.
type filePoint struct {
	Attributes   map[string]any `json:"attributes"`
	Start        string         `json:"start,omitempty"`
	Time         string         `json:"time"`
	Value        any            `json:"value,omitempty"`
	Count        uint64         `json:"count,omitempty"`
	Sum          any            `json:"sum,omitempty"`
	Min          any            `json:"min,omitempty"`
	Max          any            `json:"max,omitempty"`
	Bounds       []float64      `json:"bounds,omitempty"`
	BucketCounts []uint64       `json:"bucket_counts,omitempty"`
}

// Temporality keeps the SDK default (cumulative), so each line is a
// self-contained snapshot and the last one holds the totals.
func (e *fileMetricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}

// Aggregation keeps the SDK default; histogram bounds come from the
// instruments themselves.
func (e *fileMetricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

// Export writes rm as one line, unless it holds no data points: the
// periodic reader collects even when nothing happened, and empty lines
// would only bury the useful ones.
func (e *fileMetricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	line := fileMetrics{Type: "metrics", Time: formatTime(time.Now()), Service: serviceName(rm.Resource)}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if fm, ok := convertMetric(m); ok {
				line.Metrics = append(line.Metrics, fm)
			}
		}
	}
	if len(line.Metrics) == 0 {
		return nil
	}
	buf, err := json.Marshal(line)
	if err != nil {
		return fmt.Errorf("telemetry: encode metrics: %w", err)
	}
	return e.w.write(append(buf, '\n'))
}

// ForceFlush has nothing to do: Export writes straight to the file.
func (e *fileMetricExporter) ForceFlush(ctx context.Context) error { return nil }

// Shutdown releases the file.
func (e *fileMetricExporter) Shutdown(ctx context.Context) error {
	var err error
	e.shutdown.Do(func() { err = e.w.release() })
	return err
}

// convertMetric turns one SDK aggregation into its JSON shape; ok is false
// when it has no points or is a kind this package never creates.
func convertMetric(m metricdata.Metrics) (fileMetric, bool) {
	fm := fileMetric{Name: m.Name, Unit: m.Unit, Description: m.Description}
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		fm.Kind, fm.Monotonic, fm.Temporality = "sum", d.IsMonotonic, temporality(d.Temporality)
		fm.Points = numberPoints(d.DataPoints)
	case metricdata.Sum[float64]:
		fm.Kind, fm.Monotonic, fm.Temporality = "sum", d.IsMonotonic, temporality(d.Temporality)
		fm.Points = numberPoints(d.DataPoints)
	case metricdata.Gauge[int64]:
		fm.Kind, fm.Points = "gauge", numberPoints(d.DataPoints)
	case metricdata.Gauge[float64]:
		fm.Kind, fm.Points = "gauge", numberPoints(d.DataPoints)
	case metricdata.Histogram[int64]:
		fm.Kind, fm.Temporality = "histogram", temporality(d.Temporality)
		fm.Points = histogramPoints(d.DataPoints)
	case metricdata.Histogram[float64]:
		fm.Kind, fm.Temporality = "histogram", temporality(d.Temporality)
		fm.Points = histogramPoints(d.DataPoints)
	default:
		return fm, false
	}
	return fm, len(fm.Points) > 0
}

// temporality spells t as "cumulative" or "delta" rather than the SDK's
// "CumulativeTemporality", to read like the OTLP JSON mapping.
func temporality(t metricdata.Temporality) string {
	switch t {
	case metricdata.CumulativeTemporality:
		return "cumulative"
	case metricdata.DeltaTemporality:
		return "delta"
	}
	return t.String()
}

// numberPoints converts sum and gauge points.
func numberPoints[N int64 | float64](dps []metricdata.DataPoint[N]) []filePoint {
	out := make([]filePoint, 0, len(dps))
	for _, dp := range dps {
		out = append(out, filePoint{
			Attributes: attrMap(dp.Attributes.ToSlice()),
			Start:      formatTime(dp.StartTime),
			Time:       formatTime(dp.Time),
			// A zero value stays visible: omitempty does not drop a
			// non-nil interface holding 0.
			Value: any(dp.Value),
		})
	}
	return out
}

// histogramPoints converts histogram points.
func histogramPoints[N int64 | float64](dps []metricdata.HistogramDataPoint[N]) []filePoint {
	out := make([]filePoint, 0, len(dps))
	for _, dp := range dps {
		p := filePoint{
			Attributes:   attrMap(dp.Attributes.ToSlice()),
			Start:        formatTime(dp.StartTime),
			Time:         formatTime(dp.Time),
			Count:        dp.Count,
			Sum:          any(dp.Sum),
			Bounds:       dp.Bounds,
			BucketCounts: dp.BucketCounts,
		}
		if v, ok := dp.Min.Value(); ok {
			p.Min = any(v)
		}
		if v, ok := dp.Max.Value(); ok {
			p.Max = any(v)
		}
		out = append(out, p)
	}
	return out
}

// attrMap converts attributes to a JSON object with native value types.
func attrMap(kvs []attribute.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}

// serviceName returns the service.name resource attribute, repeated on
// every line so that lines from several agentry processes appending to
// one file stay attributable.
func serviceName(r *resource.Resource) string {
	if r == nil {
		return ""
	}
	v, _ := r.Set().Value("service.name")
	return v.AsString()
}

// formatTime renders t as RFC 3339 with nanoseconds in UTC, or "" for the
// zero time.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
