package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/google/go-cmp/cmp"
)

// feed writes text to a splitter in chunks of n bytes and returns the
// completed blocks and the splitter.
func feed(text string, n int) ([]mdBlock, *blockSplitter) {
	s := &blockSplitter{}
	var out []mdBlock
	for i := 0; i < len(text); i += n {
		out = append(out, s.write(text[i:min(i+n, len(text))])...)
	}
	return out, s
}

func TestSplitterBlocks(t *testing.T) {
	text := "# Title\n\nA paragraph\nwith two lines.\n\n```go\nfunc a() {\n\n\treturn\n}\n```\nAfter the fence.\n\n- item\n- item\n\nOpen block"
	want := []mdBlock{
		{text: "# Title\n"},
		{text: "A paragraph\nwith two lines.\n", gap: true},
		{text: "```go\nfunc a() {\n\n\treturn\n}\n```\n", gap: true},
		{text: "After the fence.\n"},
		{text: "- item\n- item\n", gap: true},
	}
	for _, n := range []int{1, 3, 7, len(text)} {
		got, s := feed(text, n)
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(mdBlock{})); diff != "" {
			t.Errorf("chunks of %d (-want +got):\n%s", n, diff)
		}
		if s.live() != "Open block" {
			t.Errorf("chunks of %d: live %q", n, s.live())
		}
		if rest := s.flush(); len(rest) != 1 || rest[0].text != "Open block" || !rest[0].gap {
			t.Errorf("flush %+v", rest)
		}
	}
}

func TestSplitterOpenFenceIsClosedLive(t *testing.T) {
	_, s := feed("text\n\n~~~~\ncode\n", 4)
	if got := s.live(); got != "~~~~\ncode\n~~~~\n" {
		t.Errorf("live %q", got)
	}
	// A shorter marker does not close it; the right one does.
	out := s.write("~~~\nmore\n~~~~\n")
	if len(out) != 1 || out[0].text != "~~~~\ncode\n~~~\nmore\n~~~~\n" {
		t.Errorf("blocks %+v", out)
	}
}

func TestSplitterBoundsLongFence(t *testing.T) {
	var b strings.Builder
	b.WriteString("```python\n")
	for i := 0; i < 3*maxBlockLines; i++ {
		b.WriteString("print(1)\n")
	}
	out, s := feed(b.String(), 5)
	if len(out) < 2 {
		t.Fatalf("a %d-line fence was not cut: %d blocks", 3*maxBlockLines, len(out))
	}
	for _, blk := range out {
		if !strings.HasPrefix(blk.text, "```python\n") || !strings.HasSuffix(blk.text, "\n```\n") {
			t.Errorf("a cut block is not a closed fence: %q…", blk.text[:20])
		}
		if n := strings.Count(blk.text, "\n"); n > maxBlockLines+1 {
			t.Errorf("a block has %d lines", n)
		}
	}
	if !strings.HasPrefix(s.live(), "```python\n") {
		t.Errorf("the rest is not reopened: %q", s.live())
	}
	total := 0
	for _, blk := range append(out, s.flush()...) {
		total += strings.Count(blk.text, "print(1)")
	}
	if total != 3*maxBlockLines {
		t.Errorf("%d lines kept, want %d", total, 3*maxBlockLines)
	}
}

func TestSplitterBoundsLongParagraphAndLine(t *testing.T) {
	out, s := feed(strings.Repeat("line\n", 2*maxBlockLines), 9)
	if len(out) != 2 || strings.Count(out[0].text, "\n") != maxBlockLines || out[1].gap {
		t.Errorf("blocks: %d", len(out))
	}
	if s.live() != "" {
		t.Errorf("live %q", s.live())
	}
	out, s = feed(strings.Repeat("word ", maxBlockBytes/5+100), 64)
	if len(out) == 0 || len(s.live()) > maxBlockBytes {
		t.Errorf("a huge line stays live: %d blocks, %d bytes live", len(out), len(s.live()))
	}
}

func TestFenceOpen(t *testing.T) {
	for line, want := range map[string]string{
		"```":         "```",
		"```go":       "```",
		"   ~~~~ x":   "~~~~",
		"    ```":     "", // indented code, not a fence
		"``":          "",
		"``` a ` b":   "", // backticks in the info string
		"~~~ a ` b":   "~~~",
		"text ```":    "",
		"````lang":    "````",
		"\t```":       "",
		"   ```   go": "```",
	} {
		if got := fenceOpen(line); got != want {
			t.Errorf("fenceOpen(%q) = %q, want %q", line, got, want)
		}
	}
}

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                  "plain",
		"a\x1b[31mred\x1b[0m":    "ared",
		"osc\x1b]0;title\x07end": "oscend",
		"tab\there":              "tab    here",
		"bell\x07 nul\x00":       "bell nul",
		"crlf\r\nline":           "crlf\nline",
		"c1\u009b31mcsi\u0085":   "c131mcsi", // 8-bit CSI and NEL
	} {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTermBuf(t *testing.T) {
	var b termBuf
	for _, c := range []string{"one\r", "\ntwo 10%\r", "two 90%\n", "\x1b[1mbold\x1b[0m\n"} {
		b.write(c)
	}
	if got, _ := b.tail(10); got != "one\ntwo 90%\nbold" {
		t.Errorf("tail %q", got)
	}
	for i := 0; i < 5000; i++ {
		b.write(strings.Repeat("x", 40) + "\n")
	}
	if len(b.b) > maxTermBuf {
		t.Errorf("the buffer holds %d bytes", len(b.b))
	}
	if got, earlier := b.tail(2); got != strings.Repeat("x", 40)+"\n"+strings.Repeat("x", 40) || earlier == 0 {
		t.Errorf("tail %q, earlier %d", got, earlier)
	}
}

func TestDownsampleNoColor(t *testing.T) {
	st := newStyles()
	s := st.err.Render("red") + " " + st.user.Render("bold blue") + " " + renderDiff(st, "a", "x\n", "y\n", 80, 10)
	ascii := downsample(colorprofile.ASCII, s)
	if hasColour(ascii) {
		t.Errorf("colours left under NO_COLOR: %q", ascii)
	}
	if !strings.Contains(ascii, "\x1b[1m") {
		t.Errorf("bold went too: %q", ascii)
	}
	if got := downsample(colorprofile.NoTTY, s); strings.ContainsRune(got, 0x1b) {
		t.Errorf("escapes left for a non-terminal: %q", got)
	}
	if !hasColour(downsample(colorprofile.ANSI, s)) {
		t.Error("the check finds no colour where there is some")
	}
}

// hasColour reports whether s sets a foreground or background colour.
func hasColour(s string) bool {
	for _, seq := range strings.Split(s, "\x1b[")[1:] {
		end := strings.IndexByte(seq, 'm')
		if end < 0 {
			continue
		}
		for _, p := range strings.Split(seq[:end], ";") {
			if len(p) == 2 && (p[0] == '3' || p[0] == '4' || p[0] == '9') && p[1] >= '0' && p[1] <= '8' {
				return true
			}
			if len(p) == 3 && p[:2] == "10" {
				return true
			}
		}
	}
	return false
}
