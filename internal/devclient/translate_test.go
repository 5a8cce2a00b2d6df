package devclient

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/protocol/wsclient"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// stepJSON is a step as the golden files show it: the runtime events
// without their ids and times, which the stream assigns.
type stepJSON struct {
	Events  []json.RawMessage `json:"events,omitempty"`
	Confirm string            `json:"confirm,omitempty"`
	Settled []string          `json:"settled,omitempty"`
	Ended   bool              `json:"ended,omitempty"`
}

func goldenStep(t *testing.T, s Step) stepJSON {
	t.Helper()
	out := stepJSON{Settled: s.Settled, Ended: s.Ended}
	if s.Confirm != nil {
		out.Confirm = s.Confirm.ToolCallID
	}
	for _, ev := range s.Events {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.Unmarshal(b, &m)
		delete(m, "id")
		delete(m, "streamId")
		delete(m, "timestamp")
		out.Events = append(out.Events, marshal(t, m, ""))
	}
	return out
}

// translateFrames runs one task's event payloads through a translator.
func translateFrames(t *testing.T, frames []json.RawMessage) []stepJSON {
	t.Helper()
	tr := NewTranslator()
	var out []stepJSON
	for i, f := range frames {
		ev, err := wsclient.DecodeEvent(f)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		out = append(out, goldenStep(t, tr.Event(ev)))
	}
	return out
}

// marshal encodes v as the golden files hold it: <, > and & as is.
func marshal(t *testing.T, v any, indent string) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if indent == "" {
		return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	}
	return buf.Bytes()
}

func checkGolden(t *testing.T, path string, got []stepJSON) {
	t.Helper()
	b := marshal(t, got, "  ")
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("%s differs; got:\n%s", path, b)
	}
}

// Each testdata/*.frames.json holds one task's events (A2A 1.0 payloads
// as /ws carries them); its .golden.json the runtime events each becomes.
func TestTranslateGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.frames.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no frames: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".frames.json")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var frames []json.RawMessage
			if err := json.Unmarshal(b, &frames); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", name+".golden.json"), translateFrames(t, frames))
		})
	}
}

// The server's own golden transcript of a confirmed edit (A2A 0.3, as
// version=0.3 clients get it) translates too.
func TestTranslateServerTranscript(t *testing.T) {
	b, err := os.ReadFile("../../protocol/testdata/appendix.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	// The transcript masks its times.
	b = bytes.ReplaceAll(b, []byte(`"<time>"`), []byte(`"2026-01-02T03:04:05Z"`))
	var streams [][]struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(b, &streams); err != nil {
		t.Fatal(err)
	}
	var frames []json.RawMessage
	for _, s := range streams {
		for _, r := range s {
			frames = append(frames, r.Result)
		}
	}
	got := translateFrames(t, frames)
	checkGolden(t, "testdata/appendix.golden.json", got)
	// What matters, spelled out: one confirmation, the call settled by
	// EXECUTING, a diff, and the end.
	var confirms, diffs int
	for _, s := range got {
		if s.Confirm != "" {
			confirms++
		}
		for _, e := range s.Events {
			if bytes.Contains(e, []byte(`"type":"diff"`)) {
				diffs++
			}
		}
	}
	if confirms != 1 || diffs != 1 || !got[len(got)-1].Ended {
		t.Errorf("%d confirmations, %d diffs, ended %v", confirms, diffs, got[len(got)-1].Ended)
	}
}

func TestLiveDelta(t *testing.T) {
	long := strings.Repeat("x", 300)
	cases := []struct{ old, cur, want string }{
		{"", "a\n", "a\n"},
		{"a\n", "a\nb\n", "b\n"},
		{"a\n", "", ""},
		{"a\n", "a\n", ""},
		// The front was cut: the new output follows old's end.
		{"0123456789" + long + "END", "56789" + long + "ENDnew", "new"},
		// Nothing in common: all of it.
		{"abc", "xyz", "xyz"},
	}
	for _, c := range cases {
		if got := liveDelta(c.old, c.cur); got != c.want {
			t.Errorf("liveDelta(%.20q, %.20q) = %q, want %q", c.old, c.cur, got, c.want)
		}
	}
}

func TestThoughtText(t *testing.T) {
	for _, c := range []struct {
		m    map[string]any
		want string
	}{
		{map[string]any{"subject": "Plan", "description": "Do it."}, "**Plan**\nDo it."},
		{map[string]any{"description": " Only this. "}, "Only this."},
		{map[string]any{"subject": "Alone"}, "**Alone**"},
	} {
		if got := thoughtText(c.m); got != c.want {
			t.Errorf("%v: %q", c.m, got)
		}
	}
}
