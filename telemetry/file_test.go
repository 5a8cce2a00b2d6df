package telemetry

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The test decodes lines into its own types rather than the exporter's, so
// it checks the documented format, not the implementation's structs.
type spanLine struct {
	Type       string         `json:"type"`
	Name       string         `json:"name"`
	Kind       string         `json:"kind"`
	TraceID    string         `json:"trace_id"`
	SpanID     string         `json:"span_id"`
	ParentID   string         `json:"parent_span_id"`
	Start      string         `json:"start"`
	End        string         `json:"end"`
	Attributes map[string]any `json:"attributes"`
	Events     []eventLine    `json:"events"`
	Status     struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"status"`
	Service string `json:"service"`
}

type eventLine struct {
	Name       string         `json:"name"`
	Time       string         `json:"time"`
	Attributes map[string]any `json:"attributes"`
}

type metricsLine struct {
	Type    string `json:"type"`
	Time    string `json:"time"`
	Service string `json:"service"`
	Metrics []struct {
		Name        string `json:"name"`
		Unit        string `json:"unit"`
		Kind        string `json:"kind"`
		Monotonic   bool   `json:"monotonic"`
		Temporality string `json:"temporality"`
		Points      []struct {
			Attributes   map[string]any `json:"attributes"`
			Value        *float64       `json:"value"`
			Count        uint64         `json:"count"`
			Sum          *float64       `json:"sum"`
			Bounds       []float64      `json:"bounds"`
			BucketCounts []uint64       `json:"bucket_counts"`
		} `json:"points"`
	} `json:"metrics"`
}

// readLines splits the exporter's file into span and metrics lines,
// failing on anything that is not one JSON object per line.
func readLines(t *testing.T, path string) ([]spanLine, []metricsLine) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var spans []spanLine
	var metrics []metricsLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		var head struct{ Type string }
		if err := json.Unmarshal(line, &head); err != nil {
			t.Fatalf("line %d is not a JSON object: %v\n%s", n, err, line)
		}
		switch head.Type {
		case "span":
			var s spanLine
			if err := json.Unmarshal(line, &s); err != nil {
				t.Fatalf("line %d: %v", n, err)
			}
			spans = append(spans, s)
		case "metrics":
			var m metricsLine
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatalf("line %d: %v", n, err)
			}
			metrics = append(metrics, m)
		default:
			t.Fatalf("line %d has type %q, want span or metrics", n, head.Type)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return spans, metrics
}

func TestFileExporter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "telemetry.jsonl")
	var logs bytes.Buffer
	tel, err := New(ctx, Config{
		Exporter:    "file",
		File:        path,
		ServiceName: "agentry-test",
		Logger:      slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	if tel == nil {
		t.Fatal("New returned a nil Telemetry for the file exporter")
	}

	runCtx, run := tel.StartRun(ctx, "sess-1", "prompt-1")
	_, mc := tel.StartModelCall(runCtx, "auto")
	mc.SetModel("gemini-2.5-pro")
	mc.Retry(1, "rate_limit")
	mc.Fallback("gemini-2.5-pro", "gemini-2.5-flash")
	mc.End(120, 45, 100, nil)
	mc.End(1, 1, 1, errors.New("second End must be ignored"))
	_, read := tel.StartToolCall(runCtx, "read_file", "call-1")
	read.End("success", nil)
	_, shell := tel.StartToolCall(runCtx, "run_shell", "call-2")
	shell.End("error", errors.New("exit status 1"))
	_, hook := tel.StartHook(runCtx, "PreToolUse", "lint")
	hook.End("deny", nil)
	hook.End("allow", nil) // ignored: End is idempotent
	run.End(nil)

	// A second, cancelled run checks the run error path.
	_, run2 := tel.StartRun(ctx, "sess-1", "prompt-2")
	run2.End(context.Canceled)

	if err := tel.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := tel.Shutdown(ctx); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
	if strings.Contains(logs.String(), "export failed") {
		t.Errorf("exports failed:\n%s", logs.String())
	}

	spans, metrics := readLines(t, path)
	byName := map[string][]spanLine{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
		if s.Service != "agentry-test" {
			t.Errorf("span %q service = %q, want agentry-test", s.Name, s.Service)
		}
		start, err1 := time.Parse(time.RFC3339Nano, s.Start)
		end, err2 := time.Parse(time.RFC3339Nano, s.End)
		if err1 != nil || err2 != nil {
			t.Errorf("span %q times %q, %q are not RFC 3339: %v %v", s.Name, s.Start, s.End, err1, err2)
		} else if end.Before(start) {
			t.Errorf("span %q ends (%s) before it starts (%s)", s.Name, s.End, s.Start)
		}
		if len(s.TraceID) != 32 || len(s.SpanID) != 16 {
			t.Errorf("span %q ids %q/%q are not 32/16 hex digits", s.Name, s.TraceID, s.SpanID)
		}
	}
	var names []string
	for n, ss := range byName {
		for range ss {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	wantNames := []string{
		"chat gemini-2.5-flash",
		"execute_tool read_file",
		"execute_tool run_shell",
		"hook PreToolUse",
		"invoke_agent",
		"invoke_agent",
	}
	if d := cmp.Diff(wantNames, names); d != "" {
		t.Fatalf("span names (-want +got):\n%s", d)
	}

	var root, root2 spanLine
	for _, s := range byName["invoke_agent"] {
		switch s.Attributes["agentry.prompt.id"] {
		case "prompt-1":
			root = s
		case "prompt-2":
			root2 = s
		}
	}
	if root.SpanID == "" || root2.SpanID == "" {
		t.Fatalf("runs by prompt id not found: %+v", byName["invoke_agent"])
	}

	type want struct {
		kind, parent, code, message string
		attrs                       map[string]any
		events                      []eventLine
	}
	checks := map[string]want{
		"root": {
			kind: "internal", code: "Unset",
			attrs: map[string]any{
				"gen_ai.operation.name": "invoke_agent",
				"agentry.session.id":    "sess-1",
				"agentry.prompt.id":     "prompt-1",
			},
		},
		"root2": {
			kind: "internal", code: "Error", message: "context canceled",
			attrs: map[string]any{
				"gen_ai.operation.name": "invoke_agent",
				"agentry.session.id":    "sess-1",
				"agentry.prompt.id":     "prompt-2",
			},
		},
		"chat gemini-2.5-flash": {
			kind: "client", parent: root.SpanID, code: "Unset",
			attrs: map[string]any{
				"gen_ai.operation.name":                "chat",
				"gen_ai.request.model":                 "gemini-2.5-flash",
				"agentry.model.requested":              "auto",
				"gen_ai.usage.input_tokens":            120.0,
				"gen_ai.usage.output_tokens":           45.0,
				"gen_ai.usage.cache_read.input_tokens": 100.0,
			},
			events: []eventLine{
				{Name: "retry", Attributes: map[string]any{"agentry.retry.attempt": 1.0, "agentry.retry.reason": "rate_limit"}},
				{Name: "fallback", Attributes: map[string]any{"agentry.fallback.from": "gemini-2.5-pro", "agentry.fallback.to": "gemini-2.5-flash"}},
			},
		},
		"execute_tool read_file": {
			kind: "internal", parent: root.SpanID, code: "Unset",
			attrs: map[string]any{
				"gen_ai.operation.name": "execute_tool",
				"agentry.tool.name":     "read_file",
				"agentry.tool.call_id":  "call-1",
				"agentry.tool.status":   "success",
			},
		},
		"execute_tool run_shell": {
			kind: "internal", parent: root.SpanID, code: "Error", message: "exit status 1",
			attrs: map[string]any{
				"gen_ai.operation.name": "execute_tool",
				"agentry.tool.name":     "run_shell",
				"agentry.tool.call_id":  "call-2",
				"agentry.tool.status":   "error",
			},
		},
		"hook PreToolUse": {
			kind: "internal", parent: root.SpanID, code: "Unset",
			attrs: map[string]any{
				"agentry.hook.event":    "PreToolUse",
				"agentry.hook.name":     "lint",
				"agentry.hook.decision": "deny",
			},
		},
	}
	for key, w := range checks {
		var s spanLine
		switch key {
		case "root":
			s = root
		case "root2":
			s = root2
		default:
			s = byName[key][0]
		}
		if s.Kind != w.kind {
			t.Errorf("%s: kind = %q, want %q", key, s.Kind, w.kind)
		}
		if s.ParentID != w.parent {
			t.Errorf("%s: parent = %q, want %q", key, s.ParentID, w.parent)
		}
		if key != "root2" && s.TraceID != root.TraceID {
			t.Errorf("%s: trace id = %q, want the run's %q", key, s.TraceID, root.TraceID)
		}
		if s.Status.Code != w.code || s.Status.Message != w.message {
			t.Errorf("%s: status = %+v, want %q %q", key, s.Status, w.code, w.message)
		}
		if d := cmp.Diff(w.attrs, s.Attributes); d != "" {
			t.Errorf("%s: attributes (-want +got):\n%s", key, d)
		}
		for i := range s.Events {
			if _, err := time.Parse(time.RFC3339Nano, s.Events[i].Time); err != nil {
				t.Errorf("%s: event %q time: %v", key, s.Events[i].Name, err)
			}
			s.Events[i].Time = ""
		}
		if d := cmp.Diff(w.events, s.Events); d != "" {
			t.Errorf("%s: events (-want +got):\n%s", key, d)
		}
	}
	if root2.TraceID == root.TraceID {
		t.Errorf("two runs share trace id %q; each run must be its own trace", root.TraceID)
	}

	// Metrics: the periodic reader's interval is a minute, so what is in
	// the file came from Shutdown's final collection. Sums are cumulative:
	// the last line holds the totals.
	if len(metrics) == 0 {
		t.Fatal("no metrics line after Shutdown")
	}
	last := metrics[len(metrics)-1]
	if last.Service != "agentry-test" {
		t.Errorf("metrics service = %q", last.Service)
	}
	type point struct {
		value float64 // sum value, or histogram count
		sum   float64
	}
	got := map[string]point{} // "name{k=v,...}" -> point
	units := map[string]string{}
	for _, m := range last.Metrics {
		units[m.Name] = m.Unit
		for _, p := range m.Points {
			var kv []string
			for k, v := range p.Attributes {
				kv = append(kv, k+"="+v.(string))
			}
			slices.Sort(kv)
			key := m.Name + "{" + strings.Join(kv, ",") + "}"
			switch m.Kind {
			case "sum":
				if !m.Monotonic || m.Temporality != "cumulative" || p.Value == nil {
					t.Errorf("%s: monotonic=%v temporality=%q value=%v", key, m.Monotonic, m.Temporality, p.Value)
					continue
				}
				got[key] = point{value: *p.Value}
			case "histogram":
				if d := cmp.Diff(durationBuckets, p.Bounds); d != "" {
					t.Errorf("%s: bounds (-want +got):\n%s", key, d)
				}
				if len(p.BucketCounts) != len(p.Bounds)+1 || p.Sum == nil || *p.Sum < 0 {
					t.Errorf("%s: malformed histogram point %+v", key, p)
					continue
				}
				got[key] = point{value: float64(p.Count), sum: *p.Sum}
			default:
				t.Errorf("%s: kind %q", key, m.Kind)
			}
		}
	}
	for key := range got {
		if strings.HasSuffix(strings.SplitN(key, "{", 2)[0], ".duration") {
			got[key] = point{value: got[key].value} // durations vary; counts do not
		}
	}
	wantMetrics := map[string]point{
		"agentry.model.calls{gen_ai.request.model=gemini-2.5-flash,status=ok}":                               {value: 1},
		"agentry.model.tokens{gen_ai.request.model=gemini-2.5-flash,type=input}":                             {value: 120},
		"agentry.model.tokens{gen_ai.request.model=gemini-2.5-flash,type=output}":                            {value: 45},
		"agentry.model.tokens{gen_ai.request.model=gemini-2.5-flash,type=cached}":                            {value: 100},
		"agentry.model.retries{gen_ai.request.model=gemini-2.5-pro,reason=rate_limit}":                       {value: 1},
		"agentry.model.fallbacks{agentry.fallback.from=gemini-2.5-pro,agentry.fallback.to=gemini-2.5-flash}": {value: 1},
		"agentry.tool.calls{agentry.tool.name=read_file,status=success}":                                     {value: 1},
		"agentry.tool.calls{agentry.tool.name=run_shell,status=error}":                                       {value: 1},
		"agentry.hook.runs{agentry.hook.decision=deny,agentry.hook.event=PreToolUse,status=ok}":              {value: 1},
		"agentry.run.duration{status=ok}":                                                                    {value: 1},
		"agentry.run.duration{status=cancelled}":                                                             {value: 1},
		"agentry.model.duration{gen_ai.request.model=gemini-2.5-flash,status=ok}":                            {value: 1},
		"agentry.tool.duration{agentry.tool.name=read_file,status=success}":                                  {value: 1},
		"agentry.tool.duration{agentry.tool.name=run_shell,status=error}":                                    {value: 1},
		"agentry.hook.duration{agentry.hook.event=PreToolUse,status=ok}":                                     {value: 1},
	}
	if d := cmp.Diff(wantMetrics, got, cmp.AllowUnexported(point{})); d != "" {
		t.Errorf("metrics (-want +got):\n%s", d)
	}
	wantUnits := map[string]string{
		"agentry.model.calls":     "{call}",
		"agentry.model.tokens":    "{token}",
		"agentry.model.retries":   "{retry}",
		"agentry.model.fallbacks": "{fallback}",
		"agentry.tool.calls":      "{call}",
		"agentry.hook.runs":       "{run}",
		"agentry.run.duration":    "s",
		"agentry.model.duration":  "s",
		"agentry.tool.duration":   "s",
		"agentry.hook.duration":   "s",
	}
	if d := cmp.Diff(wantUnits, units); d != "" {
		t.Errorf("metric units (-want +got):\n%s", d)
	}
}

// TestFileExporterAppends checks that a second process appending to the
// same file keeps it one object per line.
func TestFileExporterAppends(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "telemetry.jsonl")
	for i := range 2 {
		tel, err := New(ctx, Config{Exporter: "file", File: path})
		if err != nil {
			t.Fatal(err)
		}
		_, run := tel.StartRun(ctx, "s", "p")
		run.End(nil)
		if err := tel.Shutdown(ctx); err != nil {
			t.Fatalf("Shutdown %d: %v", i, err)
		}
	}
	spans, metrics := readLines(t, path)
	if len(spans) != 2 || len(metrics) != 2 {
		t.Fatalf("got %d span and %d metrics lines, want 2 and 2", len(spans), len(metrics))
	}
	if spans[0].Service != DefaultServiceName {
		t.Errorf("service = %q, want the default %q", spans[0].Service, DefaultServiceName)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		t.Errorf("file mode %v is readable by others", perm)
	}
}
