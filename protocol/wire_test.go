package protocol

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/protocol/devtool"
)

// wireCases are events of every shape the encoder meets, plus the ones
// it leaves to encoding/json.
func wireCases() map[string]a2a.Event {
	ts := time.Date(2026, 11, 24, 3, 4, 5, 123456789, time.FixedZone("x", 3600))
	whole := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	far := time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC)
	info := a2a.TaskInfo{TaskID: "task-1", ContextID: "ctx-1"}
	upd := func(state a2a.TaskState, msg *a2a.Message, meta map[string]any, at *time.Time) *a2a.TaskStatusUpdateEvent {
		return &a2a.TaskStatusUpdateEvent{TaskID: info.TaskID, ContextID: info.ContextID,
			Status: a2a.TaskStatus{State: state, Message: msg, Timestamp: at}, Metadata: meta}
	}
	text := func(s string) *a2a.Message {
		return &a2a.Message{ID: "m1", Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart(s)}, TaskID: info.TaskID, ContextID: info.ContextID}
	}
	tc := devtool.ToolCall{ToolCallID: "c1", Status: devtool.StatusPending, ToolName: "write_file",
		InputParameters: map[string]any{"file_path": "a.txt", "content": "<b>&\u2028", "n": 3, "f": 1.5e-7, "big": 1e21, "g": 0.1, "h": -2.0, "z": 0.0, "e": 1e-300, "list": []any{"x", 2, nil, true}, "none": map[string]any(nil)},
		Description:     "Writing a.txt"}
	return map[string]a2a.Event{
		"text":            upd(a2a.TaskStateWorking, text("hello \"world\" <tag> & \x01 \u2029 \xff end"), devtool.Metadata(devtool.Event{Kind: devtool.KindTextContent, Model: "gemini-2.5-pro"}), &ts),
		"whole second":    upd(a2a.TaskStateWorking, text(""), nil, &whole),
		"no timestamp":    upd(a2a.TaskStateCompleted, nil, map[string]any{}, nil),
		"year 12000":      upd(a2a.TaskStateWorking, nil, nil, &far),
		"unspecified":     upd(a2a.TaskStateUnspecified, &a2a.Message{ID: "m", Parts: nil}, nil, &ts),
		"tool call":       upd(a2a.TaskStateWorking, &a2a.Message{ID: "m2", Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewDataPart(tc.Map())}}, devtool.Metadata(devtool.Event{Kind: devtool.KindToolCallUpdate, Model: "m", Error: "boom"}), &ts),
		"state change":    upd(a2a.TaskStateInputRequired, nil, devtool.Metadata(devtool.Event{Kind: devtool.KindStateChange}), &ts),
		"message extras":  upd(a2a.TaskStateWorking, &a2a.Message{ID: "m3", Role: a2a.MessageRoleUser, Extensions: []string{devtool.URI, "x"}, Metadata: map[string]any{"k": []string{"a", "b"}, "nil": nil, "s": []string(nil)}, ReferenceTasks: []a2a.TaskID{"t1", "t2"}, Parts: a2a.ContentParts{{Content: a2a.Text("t"), Filename: "f.txt", MediaType: "text/plain", Metadata: map[string]any{"z": 1, "a": map[string]any{"y": "<", "b": []any{}}}}, nil, {Content: a2a.Data{Value: nil}}}}, nil, &ts),
		"raw part":        upd(a2a.TaskStateWorking, &a2a.Message{ID: "m4", Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewRawPart([]byte("bytes"))}}, nil, &ts),
		"url part":        upd(a2a.TaskStateWorking, &a2a.Message{ID: "m5", Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewFileURLPart("https://example.com/a", "text/plain")}}, nil, &ts),
		"nan":             upd(a2a.TaskStateWorking, nil, map[string]any{"x": math.NaN()}, &ts),
		"odd metadata":    upd(a2a.TaskStateWorking, nil, map[string]any{"u": uint8(7), "f": float32(0.1), "m": map[string]string{"b": "1", "a": "2"}, "raw": json.RawMessage(`{ "x" : 1 }`)}, &ts),
		"task":            &a2a.Task{ID: info.TaskID, ContextID: info.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &ts}, History: []*a2a.Message{text("hi")}},
		"message":         text("a message"),
		"artifact update": &a2a.TaskArtifactUpdateEvent{TaskID: info.TaskID, ContextID: info.ContextID, Artifact: &a2a.Artifact{ID: "a", Parts: a2a.ContentParts{a2a.NewTextPart("x")}}},
	}
}

// TestWireEncoderMatchesEncodingJSON: the SSE writer's encoder writes
// every event byte for byte as encoding/json writes a2a.StreamResponse,
// which is what a2a-go's transport sends, and in A2A 0.3 as it writes
// a2av0's conversion of the event.
func TestWireEncoderMatchesEncodingJSON(t *testing.T) {
	var e wireEncoder
	legacy := wireEncoder{legacy: true}
	for name, ev := range wireCases() {
		t.Run(name, func(t *testing.T) {
			want, wantErr := json.Marshal(a2a.StreamResponse{Event: ev})
			got, err := e.event([]byte("prefix"), ev)
			compare(t, got, err, want, wantErr)
		})
		t.Run(name+"/v0.3", func(t *testing.T) {
			var want []byte
			compat, wantErr := fromV1Event(ev)
			if wantErr == nil {
				want, wantErr = json.Marshal(compat)
			}
			got, err := legacy.event([]byte("prefix"), ev)
			compare(t, got, err, want, wantErr)
		})
	}
	if len(e.keys)+len(legacy.keys) != 0 {
		t.Errorf("scratch keys left behind: %q %q", e.keys, legacy.keys)
	}
}

// compare checks an encoding appended to "prefix" against
// encoding/json's.
func compare(t *testing.T, got []byte, err error, want []byte, wantErr error) {
	t.Helper()
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("error %v, encoding/json's %v", err, wantErr)
	}
	if err != nil {
		return
	}
	if !bytes.Equal(got[len("prefix"):], want) || !bytes.HasPrefix(got, []byte("prefix")) {
		t.Errorf("\n got: %s\nwant: prefix%s", got, want)
	}
}

// TestWireEncoderFastPath: the events a session streams most never go
// through encoding/json (which would allocate its output).
func TestWireEncoderFastPath(t *testing.T) {
	cases := wireCases()
	e, legacy := wireEncoder{}, wireEncoder{legacy: true}
	buf := make([]byte, 0, 4096)
	for _, name := range []string{"text", "tool call", "state change"} {
		ev := cases[name]
		if allocs := testing.AllocsPerRun(50, func() { buf, _ = e.event(buf[:0], ev) }); allocs > 0 {
			t.Errorf("%s: %.0f allocations per event, want 0", name, allocs)
		}
		if allocs := testing.AllocsPerRun(50, func() { buf, _ = legacy.event(buf[:0], ev) }); allocs > 0 {
			t.Errorf("%s in 0.3: %.0f allocations per event, want 0", name, allocs)
		}
	}
}

// FuzzWireFloat: numbers are written as encoding/json writes them.
func FuzzWireFloat(f *testing.F) {
	for _, x := range []float64{0, 1, -1, 0.1, 1e-6, 9.99e-7, 1e20, 1e21, 123456789.125, 5e-324, math.MaxFloat64} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		want, err := json.Marshal(x)
		var e wireEncoder
		got, ok := e.value(nil, x)
		if err != nil {
			return // NaN, Inf: the caller falls back to encoding/json's error
		}
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("value(%v) = %s, want %s", x, got, want)
		}
	})
}

// FuzzAppendString: any string is escaped as encoding/json escapes it.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "<>&", "\u2028\u2029", "\x00\x1f\x7f", "\xff\xfe", "é中😀", "\xed\xa0\x80", `"\`, "\b\f\n\r\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("appendString(%q) = %s, want %s", s, got, want)
		}
	})
}

// BenchmarkWireEncoder compares a text delta's encoding with encoding/json's.
func BenchmarkWireEncoder(b *testing.B) {
	ev := wireCases()["text"]
	b.Run("agentry", func(b *testing.B) {
		var e wireEncoder
		buf := make([]byte, 0, 4096)
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = e.event(buf[:0], ev)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(a2a.StreamResponse{Event: ev})
		}
	})
}
