package loopdetect_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentry-dev/agentry/loopdetect"
)

// Test cases are ported from gemini-cli's loopDetectionService.test.ts;
// where a gemini-cli test would also pass without the behaviour it names
// (e.g. it switches to fresh text after a reset), the port feeds the same
// text again so that the test fails if the behaviour is missing.

const (
	toolThreshold    = 5
	contentThreshold = 10
	chunkSize        = 50
)

// repetitive is gemini-cli's createRepetitiveContent.
func repetitive(id, length int) string {
	base := fmt.Sprintf("This is a unique sentence, id=%d. ", id)
	return strings.Repeat(base, length/len(base)+1)[:length]
}

// randomText is gemini-cli's generateRandomString, seeded.
func randomText(r *rand.Rand, n int) string {
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = chars[r.IntN(len(chars))]
	}
	return string(b)
}

// filler200 is 200 units of text that does not repeat itself.
const filler200 = "gbdfqboczaikah xvxmmodhsasybywntrfhmkzzmgcnboyczaulhbdflpfrpmwxzbanvxwmamxpnvbumueqbdlokdgdekvzyaqnyahmdibdotvvfonupqbbkfevuknfzmfqxzsnrtxdxjocexhvnnepxkbrutfpmizjphnwedlnh y fjomlpfm stllip gqegzvrwz"

func newDetector() *loopdetect.Detector { return loopdetect.New(loopdetect.Config{}, nil) }

type call struct {
	name string
	args map[string]any
}

func TestToolCallLoops(t *testing.T) {
	same := call{"testTool", map[string]any{"param": "value"}}
	a := call{"read_file", map[string]any{"file_path": "loop_a.txt"}}
	b := call{"read_file", map[string]any{"file_path": "loop_b.txt"}}
	c := call{"read_file", map[string]any{"file_path": "loop_c.txt"}}
	cycle := func(n int, calls ...call) []call {
		var out []call
		for i := range n {
			out = append(out, calls[i%len(calls)])
		}
		return out
	}
	ids := func(k int) []call {
		var out []call
		for i := 1; i <= k; i++ {
			out = append(out, call{"t", map[string]any{"id": i}})
		}
		return out
	}
	tests := []struct {
		name  string
		calls []call
		// want is the 1-based call that detects the loop, 0 for none.
		want int
	}{
		{"fewer than threshold identical calls", cycle(toolThreshold-1, same), 0},
		{"threshold-th identical call", cycle(toolThreshold, same), toolThreshold},
		{"different tool calls", cycle(3*(toolThreshold-2), call{"testTool", map[string]any{"param": "value1"}}, call{"testTool", map[string]any{"param": "value2"}}, call{"anotherTool", map[string]any{"param": "value1"}}), 0},
		{"alternating cycle of 2", cycle(15, a, b), 10},
		{"cycle of 3", cycle(20, a, b, c), 15},
		{"cycle of 5", cycle(30, ids(5)...), 25},
		{"cycle of 6 is too long", cycle(60, ids(6)...), 0},
		{"alternation broken by a third call", append(append(cycle(4, a, b), c), cycle(4, a, b)...), 0},
		{"alternation resumed long enough after a break", append(append(cycle(4, a, b), c), cycle(10, a, b)...), 15},
		{"nil and empty args are the same call", cycle(toolThreshold, call{"t", nil}, call{"t", map[string]any{}}), toolThreshold},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDetector()
			got := 0
			for i, c := range tt.calls {
				if _, ok := d.AddToolCall(c.name, c.args); ok {
					got = i + 1
					break
				}
			}
			if got != tt.want {
				t.Errorf("loop detected at call %d, want %d (0 = never)", got, tt.want)
			}
		})
	}
}

func TestToolCallDetection(t *testing.T) {
	d := newDetector()
	args := map[string]any{"q": "<a&b>", "n": 1.5, "nested": map[string]any{"z": 1, "a": []any{true, nil}}}
	var det loopdetect.Detection
	var ok bool
	for range toolThreshold {
		det, ok = d.AddToolCall("search", args)
	}
	if !ok {
		t.Fatal("no loop after identical calls")
	}
	// Keys sorted (see stringifyArgs), HTML left unescaped as JSON.stringify does.
	want := loopdetect.Detection{
		Kind:   loopdetect.KindToolCalls,
		Detail: `Repeated tool call: search with arguments {"n":1.5,"nested":{"a":[true,null],"z":1},"q":"<a&b>"}`,
		Count:  1,
	}
	if diff := cmp.Diff(want, det); diff != "" {
		t.Errorf("detection (-want +got):\n%s", diff)
	}
}

func TestToolCallDoesNotResetOnContent(t *testing.T) {
	// gemini-cli: "should not reset tool call counter for other event types".
	d := newDetector()
	for range toolThreshold - 1 {
		if _, ok := d.AddToolCall("testTool", map[string]any{"param": "value"}); ok {
			t.Fatal("loop detected too early")
		}
	}
	if _, ok := d.AddContent("some text"); ok {
		t.Fatal("loop detected on text")
	}
	if _, ok := d.AddToolCall("testTool", map[string]any{"param": "value"}); !ok {
		t.Error("text between tool calls reset the tool-call history")
	}
}

// feed sends deltas and returns the 1-based index of the delta that
// detected a loop, or 0.
func feed(d *loopdetect.Detector, deltas ...string) int {
	for i, s := range deltas {
		if _, ok := d.AddContent(s); ok {
			return i + 1
		}
	}
	return 0
}

func times(n int, s string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func seq(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestContentLoops(t *testing.T) {
	rc := repetitive(1, chunkSize)
	r := rand.New(rand.NewPCG(1, 2))
	var random []string
	for range 1000 {
		random = append(random, randomText(r, 10))
	}
	var farApart []string
	for range contentThreshold {
		farApart = append(farApart, rc, randomText(r, 500))
	}
	prefix := "projects/my-google-cloud-project-12345/locations/us-central1/services/"
	var list, sameList strings.Builder
	for i := range 15 {
		fmt.Fprintf(&list, "- %s%d\n", prefix, i)
		fmt.Fprintf(&sameList, "- %s%d\n", prefix, 7)
	}
	// Where a loop is expected, the delta index is the one gemini-cli's
	// LoopDetectionService reports for the same stream.
	tests := []struct {
		name   string
		deltas []string
		want   int // 1-based delta that detects, 0 for none
	}{
		{"random content", random, 0},
		{"chunk repeated threshold-1 times", times(contentThreshold-1, rc), 0},
		{"chunk repeated threshold times", times(contentThreshold, rc), contentThreshold},
		{"list with a long shared prefix", []string{list.String()}, 0},
		{"list of identical items", []string{sameList.String()}, 1},
		{"repetitions far apart", farApart, 0},
		// A fixed period: only the distance rule decides. 50 + 200 = 250 units
		// is 5 chunk lengths, the limit; one more and it is too far apart.
		{"period at the distance limit", times(15, rc+filler200), 10},
		{"period beyond the distance limit", times(15, rc+filler200+"z"), 0},
		{"150-char pattern", times(contentThreshold+2, repetitive(1, 150)), 3},
		{"user-provided example 1", times(contentThreshold+5, "I will not output any text.\n  I will just end the turn.\n  I am done.\n  I will not do anything else.\n  I will wait for the user's next command.\n"), 10},
		{"user-provided example 2", times(contentThreshold+5, "I have added all the requested logs and verified the test file. I will now mark the task as complete.\n  "), 10},
		{"alternating short phrases", times(3*contentThreshold, "Thinking... Done. "), 12},
		{"repeated thought process", times(contentThreshold+5, "I need to check the file. The file does not exist. I will create the file. "), 10},
		{"empty content", []string{""}, 0},
		{"repeating dash divider", times(contentThreshold+5, strings.Repeat("-", chunkSize)), 0},
		{"repeating box-drawing divider", times(contentThreshold+5, strings.Repeat("╭─", chunkSize/2)), 0},
		// gemini-cli's divider class [+-_…] spans U+002B..U+005F, so an
		// all-capitals delta is a "divider": it resets and is not tracked.
		{"upper-case delta is a divider", seq(times(contentThreshold-1, rc), []string{"OK"}, times(contentThreshold-1, rc)), 0},
		// Positions are UTF-16 code units: "😀" is two, as in JavaScript.
		{"astral text repeats like any other", times(contentThreshold, strings.Repeat("😀a", chunkSize/3)+"bb"), contentThreshold},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := feed(newDetector(), tt.deltas...); got != tt.want {
				t.Errorf("loop detected at delta %d, want %d (0 = never)", got, tt.want)
			}
		})
	}
}

func TestContentDetection(t *testing.T) {
	d := newDetector()
	var det loopdetect.Detection
	for range contentThreshold {
		det, _ = d.AddContent(repetitive(1, chunkSize))
	}
	// The expected detail was computed with gemini-cli's expression in node.
	want := loopdetect.Detection{
		Kind:   loopdetect.KindContent,
		Detail: `Repeating content detected: "1. This is a unique This is a unique sentence, id=1. This is a unique..."`,
		Count:  1,
	}
	if diff := cmp.Diff(want, det); diff != "" {
		t.Errorf("detection (-want +got):\n%s", diff)
	}
}

func TestContentMarkdown(t *testing.T) {
	rc := repetitive(1, chunkSize)
	tests := []struct {
		name   string
		deltas []string
		want   int
	}{
		{"repetition inside a code block", seq([]string{"```\n"}, times(contentThreshold, rc), []string{"\n```"}), 0},
		{"transition into a code block", seq(times(contentThreshold-2, rc), []string{"```javascript\n"}, times(contentThreshold, rc)), 0},
		{"already inside a code block", seq([]string{"Here is some code:\n```\n"}, times(contentThreshold+5, rc)), 0},
		// The delta closing a block is not tracked, even the text after the fence.
		{"text in the delta leaving a code block", seq([]string{"```", "```" + rc}, times(contentThreshold-1, rc)), 0},
		{"text after leaving a code block", seq([]string{"```", "```" + rc}, times(contentThreshold, rc)), 2 + contentThreshold},
		{"fence transitions", seq([]string{"Normal text ", "```\n"}, times(5, rc), []string{"```\n", "```python\n"}), 0},
		{"repetition after a closed code block", seq([]string{"```", "\nsome code\n", "```"}, times(contentThreshold, rc)), 3 + contentThreshold},
		{"several code blocks, no loop", []string{"```\ncode1\n```", "\nsome text\n", "```\ncode2\n```"}, 0},
		{"long code block with repeating tokens", seq([]string{"```\n"}, times(20, "for (let i = 0; i < 10; i++) { console.log(i); }"), []string{"\n```"}), 0},
		{"fence resets tracking", seq(times(contentThreshold-1, rc), []string{"```"}, times(contentThreshold, rc)), 0},
		// Leaving the block does not restore the earlier count: the fence reset it.
		{"fence pair resets tracking", seq(times(contentThreshold-1, rc), []string{"```", "```"}, times(contentThreshold-1, rc)), 0},
		{"fence pair then enough repetition", seq(times(contentThreshold-1, rc), []string{"```", "```"}, times(contentThreshold, rc)), contentThreshold - 1 + 2 + contentThreshold},
	}
	// Each marker must reset tracking: without the reset the same text fed
	// again would reach the threshold.
	markers := []string{
		"| Column 1 | Column 2 |", "\n| Column 1 | Column 2 |", "\n|---|---|", "\n|++|++|", "\n+---+---+",
		"* List item", "\n* Bullet item", "\n+ Plus item", "\n1. Numbered item", "\n42. Another numbered item",
		"## Heading", "\n# H1 Heading", "\n## H2 Heading", "\n### H3 Heading", "\n#### H4 Heading", "\n##### H5 Heading", "\n###### H6 Heading",
		"> Quote text",
		// JavaScript's \s includes U+00A0 and \v, Go's does not.
		"\n\u00a0* nbsp-indented item", "\n>\vvertical-tab quote",
	}
	for _, m := range markers {
		tests = append(tests, struct {
			name   string
			deltas []string
			want   int
		}{fmt.Sprintf("%q resets tracking", m), seq(times(contentThreshold-1, rc), []string{m}, times(contentThreshold-1, rc)), 0})
	}
	// gemini-cli's bullet class [*-+] is the range '*'..'+', so "- item" is
	// not a list item and does not reset: the repetition carries on across
	// it and is detected.
	tests = append(tests, struct {
		name   string
		deltas []string
		want   int
	}{`"\n- Dash item" does not reset tracking`, seq(times(contentThreshold-1, rc), []string{"\n- Dash item"}, times(contentThreshold-1, rc)), contentThreshold + 1})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := feed(newDetector(), tt.deltas...); got != tt.want {
				t.Errorf("loop detected at delta %d, want %d (0 = never)", got, tt.want)
			}
		})
	}
}

func TestToolCallResetsContent(t *testing.T) {
	rc := repetitive(1, chunkSize)
	d := newDetector()
	if feed(d, times(contentThreshold-1, rc)...) != 0 {
		t.Fatal("loop detected too early")
	}
	d.AddToolCall("testTool", map[string]any{"param": "value"})
	if got := feed(d, times(contentThreshold-1, rc)...); got != 0 {
		t.Errorf("loop detected at delta %d after a tool call; the tool call should have reset content tracking", got)
	}
	if got := feed(d, rc); got != 1 {
		t.Error("no loop once the text repeated threshold times after the tool call")
	}
}

func TestContentTruncation(t *testing.T) {
	// Past the 5,000-unit buffer, positions are shifted; a loop must still
	// be found at the same point as without the preceding text.
	r := rand.New(rand.NewPCG(3, 4))
	var filler []string
	for range 80 {
		filler = append(filler, strings.ToLower(randomText(r, 100))+" ")
	}
	rc := repetitive(2, 73)
	d := newDetector()
	if got := feed(d, filler...); got != 0 {
		t.Fatalf("loop in random filler at delta %d", got)
	}
	if got, want := feed(d, times(30, rc)...), feed(newDetector(), times(30, rc)...); got != want || got == 0 {
		t.Errorf("after a long stream the loop was detected at delta %d, want %d", got, want)
	}
}

func TestLatch(t *testing.T) {
	d := newDetector()
	for range toolThreshold {
		d.AddToolCall("testTool", map[string]any{"param": "value"})
	}
	first, ok := d.AddToolCall("other", nil)
	if !ok || first.Kind != loopdetect.KindToolCalls || first.Count != 1 {
		t.Fatalf("latched detection = %+v, %v; want the tool-call detection, count 1", first, ok)
	}
	if got, ok := d.AddContent("anything at all"); !ok || got != first {
		t.Errorf("AddContent while latched = %+v, %v; want %+v", got, ok, first)
	}
	if got, ok, err := d.TurnStarted(t.Context(), "", nil); !ok || err != nil || got != first {
		t.Errorf("TurnStarted while latched = %+v, %v, %v; want %+v", got, ok, err, first)
	}

	// gemini-cli: "should allow recovery turn to proceed after clearDetection".
	d.ClearDetection()
	if _, ok := d.AddContent("Recovery text"); ok {
		t.Error("loop reported right after ClearDetection")
	}
	// gemini-cli: "should increment strike count for repeated detections".
	second, ok := d.AddToolCall("testTool", map[string]any{"param": "value"})
	if !ok || second.Count != 2 {
		t.Errorf("detection after ClearDetection = %+v, %v; want count 2", second, ok)
	}

	d.Reset()
	if _, ok := d.AddToolCall("testTool", map[string]any{"param": "value"}); ok {
		t.Error("loop reported right after Reset: tool history was kept")
	}
	for range toolThreshold - 1 {
		d.AddToolCall("testTool", map[string]any{"param": "value"})
	}
	if third, ok := d.AddToolCall("x", nil); !ok || third.Count != 1 {
		t.Errorf("detection after Reset = %+v, %v; want count 1", third, ok)
	}
}

func TestResetLeavesCodeBlock(t *testing.T) {
	d := newDetector()
	d.AddContent("```go\n")
	d.Reset()
	if got := feed(d, times(contentThreshold, repetitive(1, chunkSize))...); got != contentThreshold {
		t.Errorf("after Reset mid code block, loop detected at delta %d, want %d", got, contentThreshold)
	}
}

func TestConfig(t *testing.T) {
	d := loopdetect.New(loopdetect.Config{ToolCallThreshold: 3, ContentThreshold: 4, ChunkSize: 10}, nil)
	for i := range 3 {
		if _, ok := d.AddToolCall("t", nil); ok != (i == 2) {
			t.Fatalf("call %d: loop = %v", i+1, ok)
		}
	}
	d.Reset()
	if got := feed(d, times(10, "abcdefghij")...); got != 4 {
		t.Errorf("custom content threshold: loop at delta %d, want 4", got)
	}
}

func BenchmarkAddContent(b *testing.B) {
	// 5,000 characters of non-repeating prose, streamed in 20-char deltas.
	r := rand.New(rand.NewPCG(5, 6))
	words := strings.Fields("the a model tool file read write check build test error value function returns when then because loop detect stream chunk buffer prompt turn user history")
	var sb strings.Builder
	for sb.Len() < 5000 {
		sb.WriteString(words[r.IntN(len(words))])
		sb.WriteString(fmt.Sprintf("%d ", r.IntN(1000)))
	}
	text := sb.String()[:5000]
	var deltas []string
	for i := 0; i < len(text); i += 20 {
		deltas = append(deltas, text[i:min(i+20, len(text))])
	}
	d := newDetector()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		d.Reset()
		for _, s := range deltas {
			if _, ok := d.AddContent(s); ok {
				b.Fatal("loop detected in benchmark text")
			}
		}
	}
}
