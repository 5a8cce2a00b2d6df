package masking

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFormatTruncated(t *testing.T) {
	// gemini-cli's fileUtils.test.ts cases.
	got := FormatTruncated("abcdefghijklmnopqrstuvwxyz", "/tmp/out.txt", 10)
	want := "Output too large. Showing first 2 and last 8 characters. For full output see: /tmp/out.txt\nab\n\n... [16 characters omitted] ...\n\nstuvwxyz"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	got = FormatTruncated(strings.Repeat("a", 50000), "/tmp/out.txt", 4000)
	for _, s := range []string{"Showing first 800 and last 3,200 characters", "For full output see: /tmp/out.txt", "[46,000 characters omitted]"} {
		if !strings.Contains(got, s) {
			t.Errorf("missing %q", s)
		}
	}
	// The default threshold: 8,000 + 32,000 of a 100,000-character output.
	text := strings.Repeat("h", 8000) + strings.Repeat("m", 60000) + strings.Repeat("t", 32000)
	want = "Output too large. Showing first 8,000 and last 32,000 characters. For full output see: /f\n" +
		strings.Repeat("h", 8000) + "\n\n... [60,000 characters omitted] ...\n\n" + strings.Repeat("t", 32000)
	if got := FormatTruncated(text, "/f", DefaultTruncateThreshold); got != want {
		t.Error("default threshold: wrong head, tail or counts")
	}
	if got := FormatTruncated("short", "/f", 10); got != "short" {
		t.Errorf("short text changed: %q", got)
	}
	// Characters are UTF-16 code units, and a surrogate pair cut in half
	// is U+FFFD, as Node writes a lone surrogate.
	if got := FormatTruncated("😀😀😀😀😀", "/f", 5); got != "Output too large. Showing first 1 and last 4 characters. For full output see: /f\n\uFFFD\n\n... [5 characters omitted] ...\n\n😀😀" {
		t.Errorf("astral: %q", got)
	}
	if got := FormatTruncated("é"+strings.Repeat("é", 9), "/f", 5); got != "Output too large. Showing first 1 and last 4 characters. For full output see: /f\né\n\n... [5 characters omitted] ...\n\néééé" {
		t.Errorf("non-ASCII: %q", got)
	}
}

func TestHeadIsFloorOfTwentyPercent(t *testing.T) {
	for n := 1; n <= 200_000; n++ {
		// JavaScript computes Math.floor(n * 0.2) in floating point.
		if got, js := n/5, int(float64(n)*0.2); got != js {
			t.Fatalf("n=%d: %d != %d", n, got, js)
		}
	}
}

func TestFormatThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 3200: "3,200", 46000: "46,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := formatThousands(n); got != want {
			t.Errorf("formatThousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestTruncateOutput(t *testing.T) {
	dir := SessionDir(t.TempDir(), "s1")
	p, err := SpillPath(dir, "run_shell_command", "call-1")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := TruncateOutput("small", 10, p); err != nil || got != "small" {
		t.Fatalf("small: %q %v", got, err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatal("a small output was spilled")
	}
	full := strings.Repeat("0123456789", 10)
	got, err := TruncateOutput(full, 10, p)
	if err != nil {
		t.Fatal(err)
	}
	if got != FormatTruncated(full, p, 10) {
		t.Errorf("truncated text %q", got)
	}
	for range 2 { // writing twice leaves the same file
		data, err := os.ReadFile(p)
		if err != nil || string(data) != full {
			t.Fatalf("spill file: %q %v", data, err)
		}
		if _, err := TruncateOutput(full, 10, p); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := TruncateOutput(full, 0, p); got != full {
		t.Error("threshold 0 truncated")
	}
	if got, _ := TruncateOutput(full, -1, p); got != full {
		t.Error("a negative threshold truncated")
	}
	if filepath.Base(p) != "run_shell_command_call-1.txt" {
		t.Errorf("spill name %s", filepath.Base(p))
	}

	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := TruncateOutput(full, 10, filepath.Join(blocker, "x", "y.txt")); err == nil {
		t.Error("no error when the spill file cannot be written")
	}
}
