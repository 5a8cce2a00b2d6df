package masking

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"
)

// benchHistory is the budget case: 2,000 events — 1,000 model
// turns calling a tool and 1,000 function responses — holding 5 MB of tool
// output: source-like lines from read_file and, every fourth call, shell
// output in run_shell_command's sections. Call ids are ADK's shape.
func benchHistory() ([]*genai.Content, int) {
	const calls, outputBytes = 1000, 5 << 20
	per := outputBytes / calls
	line := "\tif err := process(ctx, item); err != nil { return fmt.Errorf(\"x: %w\", err) }\n"
	body := strings.Repeat(line, per/len(line)+1)[:per]
	total := 0
	var h []*genai.Content
	for i := range calls {
		id := fmt.Sprintf("adk-%08x-1111-2222-3333-%012d", i, i)
		name, resp := "read_file", map[string]any{"output": body}
		if i%4 == 0 {
			name = ShellToolName
			resp = map[string]any{"output": "<untrusted_context>\nOutput: " + body[:per-80] + "\nExit Code: 1\nProcess Group PGID: " + strconv.Itoa(1000+i) + "\n</untrusted_context>"}
		}
		total += len(resp["output"].(string))
		h = append(h,
			&genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: id, Name: name, Args: map[string]any{"file_path": "/src/file" + strconv.Itoa(i) + ".go"}}}}},
			&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: id, Name: name, Response: resp}}}},
		)
	}
	return h, total
}

// benchDirEnv names the environment variable that chooses the directory
// the benchmarks spill into. Writing the files dominates a first pass, and
// its cost depends on the file system — tmpfs, or ext4 with its journal
// and writeback — so one command must be able to measure either:
//
//	AGENTRY_BENCH_DIR=/dev/shm go test ./masking -run XXX -bench Mask
const benchDirEnv = "AGENTRY_BENCH_DIR"

// benchMasker returns a masker spilling into a fresh session directory
// under $AGENTRY_BENCH_DIR, or under b.TempDir() (which follows $TMPDIR)
// when that is unset.
func benchMasker(b *testing.B) *Masker {
	b.Helper()
	root := os.Getenv(benchDirEnv)
	if root == "" {
		return newTestMasker(b, Config{})
	}
	dir, err := os.MkdirTemp(root, "masking-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return newTestMasker(b, Config{SpillDir: SessionDir(dir, "mock-session")})
}

// BenchmarkMaskFirstPass masks the unmasked history: plan, encode, and
// create ~960 spill files in a fresh directory (under $AGENTRY_BENCH_DIR
// or $TMPDIR; file creation dominates, so the figure depends on the file
// system).
func BenchmarkMaskFirstPass(b *testing.B) {
	h, total := benchHistory()
	b.SetBytes(int64(total))
	var masked int
	for b.Loop() {
		b.StopTimer()
		m := benchMasker(b)
		b.StartTimer()
		out, err := m.Mask(b.Context(), h)
		if err != nil {
			b.Fatal(err)
		}
		masked = len(out)
	}
	b.ReportMetric(float64(masked), "masked")
}

// BenchmarkProcessorFirstPass is the first pass as a model request sees
// it: the masking processor rewrites the request, and the spill files are
// written in the background while the request goes to the model. ns/op is
// the request's wait; spill-ms is how long the background writing took
// until settled, outside the timer.
func BenchmarkProcessorFirstPass(b *testing.B) {
	h, total := benchHistory()
	h = append(h, userContent(&genai.Part{Text: "next"}))
	b.SetBytes(int64(total))
	var spill time.Duration
	for b.Loop() {
		b.StopTimer()
		p := NewProcessor(benchMasker(b), nil, nil)
		req := &model.LLMRequest{Contents: append([]*genai.Content(nil), h...)}
		b.StartTimer()
		if err := p.ProcessRequest(fakeContext{ctx: b.Context()}, req); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		start := time.Now()
		if err := p.Settle(b.Context(), "s"); err != nil {
			b.Fatal(err)
		}
		spill += time.Since(start)
		b.StartTimer()
	}
	b.ReportMetric(float64(spill.Milliseconds())/float64(b.N), "spill-ms")
}

// BenchmarkMaskRewrite masks the unmasked history again into the same
// directory, as after a crash between writing the spill files and
// persisting the placeholders: every file exists and is rewritten.
func BenchmarkMaskRewrite(b *testing.B) {
	h, total := benchHistory()
	m := benchMasker(b)
	if _, err := m.Mask(b.Context(), h); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(total))
	for b.Loop() {
		if _, err := m.Mask(b.Context(), h); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMaskFirstPassCompute is the first pass without the file
// writes: the scan, the estimates, the JSON and the previews.
func BenchmarkMaskFirstPassCompute(b *testing.B) {
	h, total := benchHistory()
	m := newTestMasker(b, Config{})
	b.SetBytes(int64(total))
	for b.Loop() {
		if pass := m.mask(b.Context(), h, m.plan(h), nil); len(pass.masked) == 0 {
			b.Fatal("nothing masked")
		}
	}
}

// BenchmarkMaskSecondPass masks the already-masked history: nothing to
// do, and nothing written.
func BenchmarkMaskSecondPass(b *testing.B) {
	h, _ := benchHistory()
	m := benchMasker(b)
	masked, err := m.Mask(b.Context(), h)
	if err != nil {
		b.Fatal(err)
	}
	h = Apply(h, masked)
	for b.Loop() {
		out, err := m.Mask(b.Context(), h)
		if err != nil || len(out) != 0 {
			b.Fatalf("second pass masked %d (%v)", len(out), err)
		}
	}
}

// BenchmarkMaskSteadyTurn is a turn of a long session that masks as it
// goes: the history was masked 64 calls ago, and the 64 outputs (~83k
// tokens) since then push as many older ones out of the protection
// window, to be masked as one batch.
func BenchmarkMaskSteadyTurn(b *testing.B) {
	h, _ := benchHistory()
	m := newTestMasker(b, Config{})
	masked, err := m.Mask(b.Context(), h[:len(h)-128])
	if err != nil {
		b.Fatal(err)
	}
	h = append(Apply(h[:len(h)-128], masked), h[len(h)-128:]...)
	var n int
	for b.Loop() {
		b.StopTimer()
		m := benchMasker(b)
		b.StartTimer()
		out, err := m.Mask(b.Context(), h)
		if err != nil {
			b.Fatal(err)
		}
		n = len(out)
	}
	b.ReportMetric(float64(n), "masked")
}

// BenchmarkEstimateResponses estimates every function response.
func BenchmarkEstimateResponses(b *testing.B) {
	h, total := benchHistory()
	b.SetBytes(int64(total))
	for b.Loop() {
		for _, c := range h {
			if c.Role == genai.RoleUser {
				EstimateTokens(c.Parts)
			}
		}
	}
}
