package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// geminiCLIOutput reads what gemini-cli 0.61.0 printed in a captured run of the
// same scenario (testdata/gemini-cli, see its README).
func geminiCLIOutput(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "gemini-cli", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestToolResultsMatchGeminiCLI replays testdata/gemini-cli/tools.jsonl —
// a shell command with output and exit code 3, one that exits 4 silently,
// one that succeeds silently, read_file of a whole three-line file and of
// lines 2-3, a missing file and an unknown tool — through agentry, and
// compares each stream-json tool_result with gemini-cli's
// (tools.stream-json.stdout): status, output (gemini-cli's per-tool
// display) and error type. Where agentry's tool differs by design, the
// expectation says so.
func TestToolResultsMatchGeminiCLI(t *testing.T) {
	e := newEnv(t)
	e.writeFile("three.txt", "a\nb\nc\n")
	scenario := filepath.Join(repoRoot, "testdata", "gemini-cli", "tools.jsonl")
	r := e.run("", "run", "-m", "replay:"+scenario, "--yolo", "-o", "stream-json", "-p", "go")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	got := ofType(lines(t, r.stdout), "tool_result")
	want := ofType(lines(t, geminiCLIOutput(t, "tools.stream-json.stdout")), "tool_result")
	if len(got) != len(want) {
		t.Fatalf("%d tool results, gemini-cli had %d:\n%s", len(got), len(want), r.stdout)
	}
	type result struct {
		Status, Output, ErrorType string
		HasOutput                 bool
	}
	norm := func(l map[string]any) result {
		res := result{Status: l["status"].(string)}
		res.Output, res.HasOutput = l["output"].(string)
		if e, ok := l["error"].(map[string]any); ok {
			res.ErrorType = e["type"].(string)
		}
		return res
	}
	for i := range got {
		g, w := norm(got[i]), norm(want[i])
		switch i {
		case 0:
			// stdout and stderr come through separate pipes: their lines
			// interleave in no fixed order.
			g.Output = sortedLines(g.Output)
			w.Output = sortedLines(w.Output)
		case 4:
			// gemini-cli counts a final newline as a line of its own
			// ("of 4"); agentry counts three lines.
			w.Output = strings.Replace(w.Output, "of 4", "of 3", 1)
		case 6:
			// The suggestions depend on the tool set, which differs.
			w.Output, _, _ = strings.Cut(w.Output, " Did you mean")
			g.Output, _, _ = strings.Cut(g.Output, " Did you mean")
		}
		if g != w {
			t.Errorf("tool_result %d = %+v, gemini-cli %+v", i, g, w)
		}
	}
	// gemini-cli logs a failed call's display on stderr, as agentry's
	// text mode does.
	r = e.run("", "run", "-m", "replay:"+scenario, "--yolo", "-p", "go")
	for _, l := range strings.Split(strings.TrimSpace(geminiCLIOutput(t, "tools.text.stderr")), "\n") {
		l, _, _ = strings.Cut(l, "Did you mean")
		if !strings.Contains(r.stderr, "[WARNING] "+l) {
			t.Errorf("stderr lacks %q:\n%s", "[WARNING] "+l, r.stderr)
		}
	}
	if r.stdout != geminiCLIOutput(t, "tools.text.stdout") {
		t.Errorf("stdout %q, gemini-cli %q", r.stdout, geminiCLIOutput(t, "tools.text.stdout"))
	}
}

func sortedLines(s string) string {
	ls := strings.Split(s, "\n")
	slices.Sort(ls)
	return strings.Join(ls, "\n")
}

// TestYoloDecisionsMatchGeminiCLI: under --yolo, gemini-cli counts every
// call the policy allowed as "accept" and the unknown tool as none
// (tools.json.stdout).
func TestYoloDecisionsMatchGeminiCLI(t *testing.T) {
	e := newEnv(t)
	e.writeFile("three.txt", "a\nb\nc\n")
	scenario := filepath.Join(repoRoot, "testdata", "gemini-cli", "tools.jsonl")
	r := e.run("", "run", "-m", "replay:"+scenario, "--yolo", "-o", "json", "-p", "go")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	type tools struct {
		TotalCalls, TotalSuccess, TotalFail int
		TotalDecisions                      map[string]int
	}
	decode := func(s string) tools {
		var out struct {
			Stats struct{ Tools tools }
		}
		if err := json.Unmarshal([]byte(s), &out); err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
		return out.Stats.Tools
	}
	if diff := cmp.Diff(decode(geminiCLIOutput(t, "tools.json.stdout")), decode(r.stdout)); diff != "" {
		t.Errorf("tool stats (-gemini-cli +agentry):\n%s", diff)
	}
}
