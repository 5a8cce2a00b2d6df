package masking

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"
)

// The cases of gemini-cli's toolOutputMaskingService.test.ts. Like them,
// most replace the token estimate, so they test the algorithm, not the
// heuristic.

// frPart returns a function response part with call id id.
func frPart(id, name string, resp map[string]any) *genai.Part {
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: id, Name: name, Response: resp}}
}

func userContent(parts ...*genai.Part) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: parts}
}

// newTestMasker returns a masker spilling into a fresh directory
// <tmp>/tool-outputs/session-mock-session, as gemini-cli's tests use.
func newTestMasker(t testing.TB, cfg Config) *Masker {
	t.Helper()
	if cfg.SpillDir == "" {
		cfg.SpillDir = SessionDir(t.TempDir(), "mock-session")
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// output returns the "output" of a content's part j, or "".
func output(c *genai.Content, j int) string {
	s, _ := c.Parts[j].FunctionResponse.Response["output"].(string)
	return s
}

// outputOrJSON is the tests' view of a response: its output, else its JSON.
func outputOrJSON(p *genai.Part) string {
	resp := p.FunctionResponse.Response
	if s, ok := resp["output"].(string); ok {
		return s
	}
	return string(appendJSON(nil, resp, false))
}

func isMasked(p *genai.Part) bool { return strings.Contains(outputOrJSON(p), maskedTag) }

// byName returns an estimate that reads a table of tool names, and
// maskedTokens for a masked response.
func byName(tokens map[string]int, maskedTokens, otherwise int) func(*genai.Part) int {
	return func(p *genai.Part) int {
		if isMasked(p) {
			return maskedTokens
		}
		if n, ok := tokens[p.FunctionResponse.Name]; ok {
			return n
		}
		return otherwise
	}
}

func mask(t *testing.T, m *Masker, history []*genai.Content) ([]Masked, []*genai.Content) {
	t.Helper()
	masked, err := m.Mask(t.Context(), history)
	if err != nil {
		t.Fatal(err)
	}
	return masked, Apply(history, masked)
}

func TestMaskGeminiCLICases(t *testing.T) {
	t.Run("remote configuration overrides", func(t *testing.T) {
		m := newTestMasker(t, Config{ProtectTokens: 100, MinPrunableTokens: 50, DisableProtectLatestTurn: true})
		m.estimate = byName(nil, 10, 200)
		history := []*genai.Content{userContent(frPart("c1", "test_tool", map[string]any{"output": strings.Repeat("A", 200)}))}
		masked, _ := mask(t, m, history)
		// With protectLatestTurn off, even the latest turn is masked.
		if len(masked) != 1 {
			t.Fatalf("masked %d, want 1", len(masked))
		}
	})

	t.Run("below the protection threshold", func(t *testing.T) {
		m := newTestMasker(t, Config{})
		m.estimate = func(*genai.Part) int { return 100 }
		history := []*genai.Content{userContent(frPart("c1", "test_tool", map[string]any{"output": "small output"}))}
		masked, out := mask(t, m, history)
		if len(masked) != 0 || !slices.Equal(out, history) {
			t.Fatalf("masked %v", masked)
		}
	})

	t.Run("protects the latest turn and masks beyond the window", func(t *testing.T) {
		// Turn 2 (20k) is protected; turn 1 (60k) crosses 50k and is
		// prunable (60k > 30k); turn 3 is the latest.
		m := newTestMasker(t, Config{})
		m.estimate = byName(map[string]int{"t1": 60000, "t2": 20000, "t3": 10000}, 100, 0)
		history := []*genai.Content{
			userContent(frPart("c1", "t1", map[string]any{"output": strings.Repeat("A", 60000)})),
			userContent(frPart("c2", "t2", map[string]any{"output": strings.Repeat("B", 20000)})),
			userContent(frPart("c3", "t3", map[string]any{"output": strings.Repeat("C", 10000)})),
		}
		masked, out := mask(t, m, history)
		if len(masked) != 1 || !strings.Contains(output(out[0], 0), maskedTag) {
			t.Fatalf("masked %d; first output %.60q", len(masked), output(out[0], 0))
		}
		if output(out[1], 0) != strings.Repeat("B", 20000) || output(out[2], 0) != strings.Repeat("C", 10000) {
			t.Error("protected outputs changed")
		}
	})

	t.Run("aggregates many small parts once the boundary is hit", func(t *testing.T) {
		// Index 11 is the latest; 10..6 fill the 50k window; 5 crosses
		// it, so 5..0 are prunable.
		m := newTestMasker(t, Config{})
		m.estimate = func(p *genai.Part) int {
			if isMasked(p) {
				return 100
			}
			return len(outputOrJSON(p))
		}
		var history []*genai.Content
		for i := range 12 {
			history = append(history, userContent(frPart("c"+string(rune('a'+i)), "tool", map[string]any{"output": strings.Repeat("A", 10000)})))
		}
		masked, _ := mask(t, m, history)
		if len(masked) != 6 {
			t.Fatalf("masked %d, want 6", len(masked))
		}
	})

	t.Run("tool-aware previews", func(t *testing.T) {
		m := newTestMasker(t, Config{})
		m.estimate = byName(map[string]int{ShellToolName: 100000, "p": 60000}, 100, 100)
		history := []*genai.Content{
			userContent(frPart("c1", ShellToolName, map[string]any{"output": "Output: line1\nline2\nline3\nline4\nline5\nError: failed\nExit Code: 1"})),
			userContent(frPart("c2", "p", map[string]any{"output": strings.Repeat("p", 60000)})),
			userContent(frPart("c3", "l", map[string]any{"output": "l"})),
		}
		_, out := mask(t, m, history)
		got := output(out[0], 0)
		for _, want := range []string{"Output: line1\nline2\nline3\nline4\nline5", "Exit Code: 1", "Error: failed"} {
			if !strings.Contains(got, want) {
				t.Errorf("shell preview lacks %q:\n%s", want, got)
			}
		}
	})

	t.Run("skips masked content without counting it", func(t *testing.T) {
		m := newTestMasker(t, Config{})
		m.estimate = func(*genai.Part) int { return 60000 }
		history := []*genai.Content{
			userContent(frPart("c1", "tool1", map[string]any{"output": "<tool_output_masked>...</tool_output_masked>"})),
			userContent(frPart("c2", "tool2", map[string]any{"output": strings.Repeat("A", 60000)})),
		}
		// tool1 is skipped; tool2 is the protected latest turn.
		if masked, _ := mask(t, m, history); len(masked) != 0 {
			t.Fatalf("masked %d, want 0", len(masked))
		}
	})

	t.Run("different response keys", func(t *testing.T) {
		m := newTestMasker(t, Config{})
		m.estimate = func(p *genai.Part) int {
			if isMasked(p) {
				return 100
			}
			return 60000
		}
		history := []*genai.Content{
			{Role: genai.RoleModel, Parts: []*genai.Part{frPart("c1", "t1", map[string]any{"result": strings.Repeat("A", 60000)})}},
			{Role: genai.RoleModel, Parts: []*genai.Part{frPart("c2", "p", map[string]any{"output": strings.Repeat("P", 60000)})}},
			userContent(&genai.Part{Text: "latest"}),
		}
		masked, out := mask(t, m, history)
		if len(masked) != 2 {
			t.Fatalf("masked %d, want 2", len(masked))
		}
		resp := out[0].Parts[0].FunctionResponse.Response
		if len(resp) != 1 || resp["output"] == nil {
			t.Errorf("masked response keys: %v", resp)
		}
	})

	t.Run("keeps multimodal parts", func(t *testing.T) {
		m := newTestMasker(t, Config{})
		m.estimate = byName(map[string]int{"t1": 60000, "p": 60000}, 100, 100)
		image := &genai.Part{InlineData: &genai.Blob{Data: []byte("base64data"), MIMEType: "image/png"}}
		history := []*genai.Content{
			userContent(frPart("c1", "t1", map[string]any{"output": strings.Repeat("A", 60000)}), image),
			userContent(frPart("c2", "p", map[string]any{"output": strings.Repeat("p", 60000)})),
			userContent(&genai.Part{Text: "latest"}),
		}
		masked, out := mask(t, m, history)
		if len(masked) != 2 {
			t.Fatalf("masked %d, want 2", len(masked))
		}
		if len(out[0].Parts) != 2 || !strings.Contains(output(out[0], 0), maskedTag) || out[0].Parts[1] != image {
			t.Errorf("parts after masking: %+v", out[0].Parts)
		}
	})

	t.Run("does not mask when the placeholder is bigger", func(t *testing.T) {
		m := newTestMasker(t, Config{})
		// As in gemini-cli's test, the estimate goes by name alone, so a
		// placeholder saves nothing on either response.
		m.estimate = func(p *genai.Part) int {
			switch p.FunctionResponse.Name {
			case "tiny_tool":
				return 5
			case "padding":
				return 60000
			}
			return 1000
		}
		history := []*genai.Content{
			userContent(frPart("c1", "tiny_tool", map[string]any{"output": "tiny"})),
			userContent(frPart("c2", "padding", map[string]any{"output": strings.Repeat("B", 60000)})),
			userContent(&genai.Part{Text: "latest"}),
		}
		if masked, _ := mask(t, m, history); len(masked) != 0 {
			t.Fatalf("masked %+v, want none", masked)
		}
	})

	t.Run("never masks exempt tools", func(t *testing.T) {
		m := newTestMasker(t, Config{})
		m.estimate = byName(map[string]int{"activate_skill": 1000, "bulky_tool": 60000, "padding": 60000}, 100, 10)
		history := []*genai.Content{
			userContent(frPart("c1", "activate_skill", map[string]any{"output": "High value instructions for skill"})),
			userContent(frPart("c2", "bulky_tool", map[string]any{"output": strings.Repeat("A", 60000)})),
			userContent(frPart("c3", "padding", map[string]any{"output": strings.Repeat("B", 60000)})),
			userContent(&genai.Part{Text: "latest"}),
		}
		masked, out := mask(t, m, history)
		if len(masked) != 2 {
			t.Fatalf("masked %d, want 2", len(masked))
		}
		if output(out[0], 0) != "High value instructions for skill" {
			t.Errorf("exempt output changed: %q", output(out[0], 0))
		}
		if !strings.Contains(output(out[1], 0), maskedTag) {
			t.Error("bulky_tool not masked")
		}
	})
}

// TestMaskedSnapshot checks the placeholder against gemini-cli's own
// snapshot, testdata/masked_shell.golden, byte for byte; only the file
// name differs by design, so the path is normalised as gemini-cli's test
// normalises its random one.
func TestMaskedSnapshot(t *testing.T) {
	tmp := t.TempDir()
	m := newTestMasker(t, Config{SpillDir: SessionDir(tmp, "mock-session")})
	m.estimate = byName(map[string]int{ShellToolName: 1000, "padding": 60000}, 100, 10)
	history := []*genai.Content{
		userContent(frPart("call-1", ShellToolName, map[string]any{"output": strings.Repeat("Line\n", 25), "exitCode": 0})),
		userContent(frPart("call-2", "padding", map[string]any{"output": strings.Repeat("B", 60000)})),
		userContent(&genai.Part{Text: "latest"}),
	}
	_, out := mask(t, m, history)
	resp := out[0].Parts[0].FunctionResponse.Response
	if len(resp) != 1 {
		t.Fatalf("keys %v, want output only", resp)
	}
	got := strings.ReplaceAll(resp["output"].(string), tmp, "/mock/temp")
	got = strings.ReplaceAll(got, "run_shell_command_call-1_masked.txt", "run_shell_command_deterministic.txt")
	want, err := os.ReadFile("testdata/masked_shell.golden")
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("placeholder differs from gemini-cli's snapshot:\n%s", cmp.Diff(string(want), got))
	}
}

// bigHistory returns n contents of one read_file response each, whose
// output is size characters, and a short prompt last.
func bigHistory(n, size int) []*genai.Content {
	var h []*genai.Content
	for i := range n {
		h = append(h, userContent(frPart("call-"+strconv.Itoa(i), "read_file", map[string]any{"output": strings.Repeat("x", size)})))
	}
	return append(h, userContent(&genai.Part{Text: "latest"}))
}

func TestMaskWritesFullOutputAndIsIdempotent(t *testing.T) {
	m := newTestMasker(t, Config{})
	// Each response is ("read_file" + {"output":"x…"})/4 = 5,000 tokens:
	// 10 fill the 50k window, the 11th crosses it, so 30 are masked.
	history := bigHistory(40, 19978)
	masked, out := mask(t, m, history)
	if len(masked) != 30 {
		t.Fatalf("masked %d, want 30", len(masked))
	}
	files, _ := os.ReadDir(m.SpillDir())
	if len(files) != 30 {
		t.Fatalf("%d spill files, want 30", len(files))
	}
	for _, mk := range masked {
		if filepath.Dir(mk.Path) != m.SpillDir() {
			t.Errorf("spill %s outside %s", mk.Path, m.SpillDir())
		}
		data, err := os.ReadFile(mk.Path)
		if err != nil {
			t.Fatal(err)
		}
		var orig map[string]any
		for _, c := range history {
			if fr := c.Parts[0].FunctionResponse; fr != nil && fr.ID == mk.CallID {
				orig = fr.Response
			}
		}
		if want := appendJSON(nil, orig, true); !bytes.Equal(data, want) {
			t.Errorf("spill of %s is not the response's indented JSON", mk.CallID)
		}
		if want := "Output too large. Full output available at: " + mk.Path + "\n</tool_output_masked>"; !strings.HasSuffix(mk.Response["output"].(string), want) {
			t.Errorf("placeholder of %s does not name its file", mk.CallID)
		}
	}

	// A second pass over the masked history masks and writes nothing.
	before := modTimes(t, m.SpillDir())
	again, err := m.Mask(t.Context(), out)
	if err != nil || len(again) != 0 {
		t.Fatalf("second pass masked %d (%v)", len(again), err)
	}
	if after := modTimes(t, m.SpillDir()); !cmp.Equal(before, after) {
		t.Error("second pass touched the spill files")
	}

	// Masking the original history again yields the same placeholders
	// and the same files.
	twice, err := m.Mask(t.Context(), history)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(masked, twice); diff != "" {
		t.Errorf("masking is not deterministic:\n%s", diff)
	}
	if files, _ := os.ReadDir(m.SpillDir()); len(files) != 30 {
		t.Errorf("%d spill files after rewriting, want 30", len(files))
	}
}

func modTimes(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = info.ModTime().UnixNano()
	}
	return out
}

func TestApplyCopiesAndDoesNotMutate(t *testing.T) {
	m := newTestMasker(t, Config{})
	history := bigHistory(20, 40000)
	snapshot := make([]map[string]any, len(history))
	parts := make([]*genai.Part, len(history))
	for i, c := range history {
		parts[i] = c.Parts[0]
		if fr := c.Parts[0].FunctionResponse; fr != nil {
			snapshot[i] = fr.Response
		}
	}
	masked, out := mask(t, m, history)
	if len(masked) == 0 {
		t.Fatal("nothing masked")
	}
	changed := 0
	for i, c := range history {
		if c.Parts[0] != parts[i] {
			t.Fatalf("content %d's part slice was modified", i)
		}
		if fr := c.Parts[0].FunctionResponse; fr != nil && isMasked(c.Parts[0]) {
			t.Fatalf("original response %d was masked in place", i)
		}
		if out[i] != c {
			changed++
			if out[i].Parts[0] == c.Parts[0] || out[i].Parts[0].FunctionResponse == c.Parts[0].FunctionResponse {
				t.Errorf("content %d shares its masked part", i)
			}
			if fr := out[i].Parts[0].FunctionResponse; fr.ID != c.Parts[0].FunctionResponse.ID || fr.Name != c.Parts[0].FunctionResponse.Name {
				t.Errorf("content %d lost its id or name", i)
			}
		}
	}
	if changed != len(masked) {
		t.Errorf("%d contents changed, %d masked", changed, len(masked))
	}
	if got := Apply(history, nil); &got[0] != &history[0] {
		t.Error("Apply without masks copied the history")
	}
}

func TestMaskLeavesUnaddressableResponses(t *testing.T) {
	m := newTestMasker(t, Config{ProtectTokens: -1, MinPrunableTokens: -1, DisableProtectLatestTurn: true})
	big := map[string]any{"output": strings.Repeat("x", 5000)}
	history := []*genai.Content{
		userContent(frPart("", "no_id", big)),
		userContent(frPart("dup", "a", big)),
		userContent(frPart("dup", "b", big)),
		userContent(frPart("ok", "c", big)),
	}
	masked, _ := mask(t, m, history)
	if len(masked) != 1 || masked[0].CallID != "ok" {
		t.Fatalf("masked %+v, want only the uniquely addressed response", masked)
	}
}

func TestMaskErrorsWhenSpillFails(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	m := newTestMasker(t, Config{SpillDir: filepath.Join(file, "sub"), ProtectTokens: -1, MinPrunableTokens: -1, DisableProtectLatestTurn: true})
	_, err := m.Mask(t.Context(), []*genai.Content{userContent(frPart("c", "t", map[string]any{"output": strings.Repeat("x", 5000)}))})
	if err == nil {
		t.Fatal("no error")
	}
}

func TestConfigDefaults(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New without a spill directory succeeded")
	}
	m := newTestMasker(t, Config{})
	if m.protect != 50000 || m.minPrunable != 30000 || !m.protectLatest {
		t.Errorf("defaults: %+v", m)
	}
	for _, name := range []string{"activate_skill", "ask_user", "enter_plan_mode", "exit_plan_mode"} {
		if !m.exempt[name] {
			t.Errorf("%s is not exempt", name)
		}
	}
	if m := newTestMasker(t, Config{Exempt: []string{}}); len(m.exempt) != 0 {
		t.Errorf("an empty Exempt exempts %v", m.exempt)
	}
}
