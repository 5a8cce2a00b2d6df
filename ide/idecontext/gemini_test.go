package idecontext_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/ide/idecontext"
	"github.com/agentry-dev/agentry/ide/idewire"
)

var update = flag.Bool("update", false, "rewrite testdata/texts.golden.json from gemini-cli's code run by node")

// step is one prompt of a case: the update the IDE sent before it (nil
// with clear: the connection is gone; nil otherwise: no update since the
// last step), and whether the history was rewritten before it (gemini-cli
// forces the full context after setHistory, startChat and a compression).
type step struct {
	Context json.RawMessage `json:"context,omitempty"`
	Clear   bool            `json:"clear,omitempty"`
	Forced  bool            `json:"forced,omitempty"`
}

type textCase struct {
	Name  string `json:"name"`
	Steps []step `json:"steps"`
}

// jsStep is a step as testdata/gemini.mjs reads it.
type jsStep struct {
	Context json.RawMessage `json:"context"`
	Same    bool            `json:"same,omitempty"`
	Forced  bool            `json:"forced,omitempty"`
}

func file(path string, ts int64, extra ...any) map[string]any {
	f := map[string]any{"path": path, "timestamp": ts}
	for i := 0; i+1 < len(extra); i += 2 {
		f[extra[i].(string)] = extra[i+1]
	}
	return f
}

func cur(line, ch int) map[string]any { return map[string]any{"line": line, "character": ch} }

func ctxOf(files ...map[string]any) json.RawMessage {
	if files == nil {
		files = []map[string]any{}
	}
	b, err := json.Marshal(map[string]any{"workspaceState": map[string]any{"openFiles": files, "isTrusted": true}})
	if err != nil {
		panic(err)
	}
	return b
}

func set(files ...map[string]any) step { return step{Context: ctxOf(files...)} }

// textCases are the scenarios run through gemini-cli's code and agentry's.
func textCases() []textCase {
	long := strings.Repeat("a", 20000)
	exact := strings.Repeat("b", 16384)
	over := strings.Repeat("c", 16385)
	split := strings.Repeat("d", 16383) + "😀" + "tail"
	pairEnd := strings.Repeat("e", 16382) + "😀" + "tail"
	eleven := make([]map[string]any, 0, 11)
	for i := range 11 {
		eleven = append(eleven, file(fmt.Sprintf("/w/f%02d.go", i), int64(100+i%4)))
	}
	eleven[10]["isActive"] = true
	eleven[10]["timestamp"] = 500
	return []textCase{
		{Name: "full active with cursor and selection", Steps: []step{
			set(file("/w/a.go", 10), file("/w/b.go", 30, "isActive", true, "cursor", cur(12, 4), "selectedText", "x := 1"), file("/w/c.go", 20)),
		}},
		{Name: "full newest not active", Steps: []step{
			set(file("/w/a.go", 10, "isActive", true, "cursor", cur(1, 1), "selectedText", "sel"), file("/w/b.go", 30)),
		}},
		{Name: "full active only, empty selection", Steps: []step{
			set(file("/w/a.go", 10, "isActive", true, "cursor", cur(3, 7), "selectedText", "")),
		}},
		{Name: "full active without cursor", Steps: []step{
			set(file("/w/a.go", 10, "isActive", true), file("/w/b.go", 5)),
		}},
		{Name: "empty then a file opens", Steps: []step{
			set(),
			set(file("/w/a.go", 10, "isActive", true, "cursor", cur(1, 2))),
		}},
		{Name: "no workspace state", Steps: []step{
			{Context: json.RawMessage(`{}`)},
			set(file("/w/a.go", 10)),
		}},
		{Name: "files opened and closed", Steps: []step{
			set(file("/w/a.go", 10), file("/w/b.go", 20)),
			set(file("/w/c.go", 40), file("/w/a.go", 10), file("/w/d.go", 30)),
		}},
		{Name: "active file changed", Steps: []step{
			set(file("/w/a.go", 10, "isActive", true, "cursor", cur(1, 1)), file("/w/b.go", 5)),
			set(file("/w/a.go", 10), file("/w/b.go", 50, "isActive", true, "cursor", cur(9, 3), "selectedText", "func main()")),
		}},
		{Name: "cursor moved", Steps: []step{
			set(file("/w/a.go", 10, "isActive", true, "cursor", cur(1, 1))),
			set(file("/w/a.go", 11, "isActive", true, "cursor", cur(4, 2))),
			set(file("/w/a.go", 12, "isActive", true, "cursor", cur(4, 3))),
			set(file("/w/a.go", 13, "isActive", true)),
		}},
		{Name: "selection changed and cleared", Steps: []step{
			set(file("/w/a.go", 10, "isActive", true, "cursor", cur(1, 1))),
			set(file("/w/a.go", 11, "isActive", true, "cursor", cur(1, 1), "selectedText", "picked")),
			set(file("/w/a.go", 12, "isActive", true, "cursor", cur(2, 1), "selectedText", "other")),
			set(file("/w/a.go", 13, "isActive", true, "cursor", cur(2, 1))),
		}},
		{Name: "active file closed", Steps: []step{
			set(file("/w/a.go", 10, "isActive", true, "cursor", cur(1, 1)), file("/w/b.go", 5)),
			set(file("/w/b.go", 5)),
			set(),
		}},
		{Name: "active file loses focus", Steps: []step{
			set(file("/w/a.go", 10, "isActive", true, "cursor", cur(1, 1)), file("/w/b.go", 5)),
			set(file("/w/a.go", 10), file("/w/b.go", 5)),
		}},
		{Name: "nothing changed", Steps: []step{
			set(file("/w/a.go", 10, "isActive", true, "cursor", cur(1, 1)), file("/w/b.go", 5)),
			set(file("/w/a.go", 99, "isActive", true, "cursor", cur(1, 1)), file("/w/b.go", 5)),
			{},
		}},
		{Name: "disconnected then reconnected", Steps: []step{
			set(file("/w/a.go", 10, "isActive", true)),
			{Clear: true},
			set(file("/w/a.go", 10, "isActive", true)),
		}},
		{Name: "forced after a rewrite", Steps: []step{
			set(file("/w/a.go", 10, "isActive", true, "cursor", cur(1, 1)), file("/w/b.go", 5)),
			{Forced: true},
			set(file("/w/a.go", 11, "isActive", true, "cursor", cur(2, 1)), file("/w/b.go", 5)),
			{Context: ctxOf(file("/w/a.go", 12, "isActive", true, "cursor", cur(3, 1)), file("/w/b.go", 5)), Forced: true},
		}},
		{Name: "escaping", Steps: []step{
			set(file("/w/q\"uote\\back\tslash<&>.go", 10, "isActive", true, "cursor", cur(1, 1),
				"selectedText", "ctl\x00\x01\x1f\b\f\n\r\t del\x7f ls\u2028ps\u2029 emoji😀 é 你好 </script> \\u0041"),
				file("/w/ü/日本.go", 5)),
			set(file("/w/q\"uote\\back\tslash<&>.go", 11, "isActive", true, "cursor", cur(1, 1), "selectedText", "\u2028")),
		}},
		{Name: "selection truncated", Steps: []step{
			set(file("/w/a.go", 10, "isActive", true, "selectedText", long)),
			set(file("/w/a.go", 11, "isActive", true, "selectedText", exact)),
			set(file("/w/a.go", 12, "isActive", true, "selectedText", over)),
		}},
		{Name: "selection cut inside a surrogate pair", Steps: []step{
			set(file("/w/a.go", 10, "isActive", true, "selectedText", split)),
			set(file("/w/a.go", 11, "isActive", true, "selectedText", pairEnd)),
		}},
		{Name: "eleven files, equal timestamps", Steps: []step{
			set(eleven...),
		}},
		{Name: "duplicate paths", Steps: []step{
			set(file("/w/a.go", 10), file("/w/b.go", 20)),
			set(file("/w/c.go", 40), file("/w/a.go", 30), file("/w/c.go", 20)),
		}},
		{Name: "selection on an inactive file only", Steps: []step{
			set(file("/w/a.go", 10, "isActive", true, "cursor", cur(1, 1))),
			set(file("/w/a.go", 10, "isActive", true, "cursor", cur(1, 1)), file("/w/b.go", 5, "selectedText", "ignored", "cursor", cur(2, 2))),
		}},
	}
}

// events is a session's history for the source.
type events []*session.Event

func (e events) All() iter.Seq[*session.Event] {
	return func(yield func(*session.Event) bool) {
		for _, ev := range e {
			if !yield(ev) {
				return
			}
		}
	}
}
func (e events) Len() int                { return len(e) }
func (e events) At(i int) *session.Event { return e[i] }

func userEvent(id string, parts ...*genai.Part) *session.Event {
	return &session.Event{ID: id, Author: "user", LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleUser, Parts: parts}}}
}

func modelEvent(id string, parts ...*genai.Part) *session.Event {
	return &session.Event{ID: id, Author: "agentry", LLMResponse: model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: parts}}}
}

// fakeIDE is an IDE whose context the test sets.
type fakeIDE struct {
	c idewire.Context
	n uint64
}

func (f *fakeIDE) Context() (idewire.Context, uint64) { return f.c, f.n }

// agentryTexts runs the cases through a Source, as a session does: each
// prompt stored in the history with the parts ahead of it, followed by
// the model's answer; a forced step tells the source the history was
// rewritten (as a rewind or a compression does).
func agentryTexts(t *testing.T, cases []textCase) map[string][]string {
	out := map[string][]string{}
	for _, c := range cases {
		ide := &fakeIDE{}
		src := idecontext.New(ide)
		var hist events
		var seq uint64
		for i, s := range c.Steps {
			switch {
			case s.Clear:
				ide.c, ide.n = idewire.Context{}, 0
			case s.Context != nil:
				var wc idewire.Context
				if err := json.Unmarshal(s.Context, &wc); err != nil {
					t.Fatalf("%s: %v", c.Name, err)
				}
				seq++
				ide.c, ide.n = wc, seq
			}
			if s.Forced {
				src.HistoryRewritten("s")
			}
			parts := src.PromptContext(t.Context(), "s", hist)
			text := ""
			switch len(parts) {
			case 0:
			case 1:
				text = parts[0].Text
			default:
				t.Fatalf("%s: step %d: %d parts", c.Name, i, len(parts))
			}
			out[c.Name] = append(out[c.Name], text)
			hist = append(hist,
				userEvent(fmt.Sprintf("p%d", i), append(parts, &genai.Part{Text: "prompt"})...),
				modelEvent(fmt.Sprintf("m%d", i), &genai.Part{Text: "answer"}))
		}
	}
	return out
}

// geminiTexts runs the cases through gemini-cli's code (testdata/gemini.mjs)
// with node.
func geminiTexts(t *testing.T, node string, cases []textCase) map[string][]string {
	type jsCase struct {
		Name  string   `json:"name"`
		Steps []jsStep `json:"steps"`
	}
	var in []jsCase
	for _, c := range cases {
		jc := jsCase{Name: c.Name}
		last := json.RawMessage("null")
		for _, s := range c.Steps {
			js := jsStep{Forced: s.Forced}
			switch {
			case s.Clear:
				js.Context = json.RawMessage("null")
			case s.Context != nil:
				js.Context = s.Context
			default:
				// No update: the store keeps what it has (set again from
				// the same JSON, which normalises to the same context).
				js.Context = last
			}
			last = js.Context
			jc.Steps = append(jc.Steps, js)
		}
		in = append(in, jc)
	}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), node, filepath.Join("testdata", "gemini.mjs"))
	cmd.Stdin = bytes.NewReader(data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("node testdata/gemini.mjs: %v\n%s", err, stderr.String())
	}
	out := map[string][]string{}
	if err := json.Unmarshal(outb, &out); err != nil {
		t.Fatalf("node's output: %v\n%s", err, outb)
	}
	return out
}

const goldenPath = "testdata/texts.golden.json"

// TestTextsMatchGeminiCLI: for every case, the texts agentry puts before
// each prompt are byte for byte those of gemini-cli 0.61.0's code
// (testdata/gemini.mjs, copied from its bundle), run by node when it is
// available (required under CI=1) and otherwise as recorded in
// testdata/texts.golden.json by node.
func TestTextsMatchGeminiCLI(t *testing.T) {
	cases := textCases()
	got := agentryTexts(t, cases)
	var want map[string][]string
	node, err := exec.LookPath("node")
	switch {
	case err == nil:
		want = geminiTexts(t, node, cases)
		if *update {
			b, err := json.MarshalIndent(want, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(goldenPath, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		golden := readGolden(t)
		for name, w := range want {
			if !equal(golden[name], w) {
				t.Errorf("%s: %s is stale: run go test ./ide/idecontext -run TestTextsMatchGeminiCLI -update", name, goldenPath)
			}
		}
	case os.Getenv("CI") != "":
		t.Fatalf("node is not on PATH: the texts are compared with gemini-cli's code run by node (%v)", err)
	default:
		t.Logf("node is not on PATH: comparing with %s, recorded by node", goldenPath)
		want = readGolden(t)
	}
	if len(want) != len(cases) {
		t.Errorf("%d cases from gemini-cli, %d here", len(want), len(cases))
	}
	for _, c := range cases {
		w, g := want[c.Name], got[c.Name]
		if len(w) != len(g) {
			t.Errorf("%s: %d steps from gemini-cli, %d from agentry", c.Name, len(w), len(g))
			continue
		}
		for i := range w {
			if w[i] != g[i] {
				t.Errorf("%s: step %d:\ngemini-cli: %q\nagentry:    %q", c.Name, i, w[i], g[i])
			}
		}
	}
}

func readGolden(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("%v: record it with go test ./ide/idecontext -run TestTextsMatchGeminiCLI -update (needs node)", err)
	}
	var m map[string][]string
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", goldenPath, err)
	}
	return m
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
