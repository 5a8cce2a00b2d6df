package mdrender

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	xansi "github.com/charmbracelet/x/ansi"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// constructs are Markdown samples of each construct.
var constructs = []struct{ name, md string }{
	{"paragraphs", "The first paragraph of the answer is long enough to wrap around the edge of an eighty-column terminal, and then some more words to wrap again at forty columns.\n\nSecond paragraph."},
	{"headings", "# Title of the answer\n\n## Second level\n\n### Third\n\n#### Fourth\n\n##### Fifth\n\n###### Sixth\n\nText after."},
	{"setext_headings", "Title\n=====\n\nSub\n---"},
	{"long_heading", "## A heading that is long enough to be wrapped at forty columns, at least"},
	{"emphasis", "Some *emphasis*, **strong**, ***both***, `inline code`, _under_ and __strong__ text, not*emphasis*."},
	{"fenced_code", "Before.\n\n```go\nfunc f() int {\n\treturn 42 // a very long comment line that goes well past the forty column width\n}\n```\n\nAfter."},
	{"indented_code", "Before.\n\n    indented code\n      more\n\n    after a blank\n\nAfter."},
	{"code_blank_lines", "```\n\nfirst\n\n\nlast\n\n```"},
	{"blockquote", "> A quoted paragraph that is long enough to wrap around at forty columns for sure.\n>\n> Second quoted paragraph.\n>\n> > Nested quote."},
	{"bullet_list", "- one\n- two\n  - nested a\n  - nested b\n    - deeper\n- three with a long item text that wraps around at forty columns surely"},
	{"ordered_list", "1. first\n2. second\n   1. inner\n   2. inner two\n3. third"},
	{"ordered_list_start", "8. eight\n9. nine\n10. ten, whose text is long enough to wrap at forty columns\n11. eleven"},
	{"loose_list", "- one\n\n  continued paragraph\n\n- two\n\n  ```\n  code in an item\n  ```"},
	{"task_list", "- [ ] todo\n- [x] done"},
	{"thematic_break", "Above\n\n---\n\nBelow\n\n***"},
	{"links", "See [the docs](https://example.com/docs) and <https://example.com> and [https://x.io](https://x.io), mail <me@example.com>."},
	{"image", "An image: ![alt text](https://example.com/a.png)"},
	{"line_breaks", "line one  \nline two\nline three\\\nline four"},
	{"html", "<div>\nhello\n</div>\n\ninline <b>bold</b> html"},
	{"escapes_entities", `\*not emphasis\*, a \` + "`" + `tick, &amp; &copy; &#65; &#x42; &nosuch;`},
	{"table", "| Name | Count | Note |\n|:-----|------:|:----:|\n| apples | 3 | **fresh** |\n| kiwis | 12 | `ripe` |\n| figs |"},
	{"wide_table", "| a | b |\n|---|---|\n| a cell long enough that the table cannot fit in forty | and another one |"},
	{"not_a_table", "a | b\nc | d"},
	{"wide_runes", "日本語の文章はとても長くて四十桁で折り返されるはずです。日本語の文章はとても長くて四十桁で折り返されるはずです。"},
	{"long_word", "A path: /very/long/path/that/does/not/fit/in/a/line/of/forty/columns/at/all/file.go ends."},
	{"mixed", "# Plan\n\nThe plan has **three** steps:\n\n1. Read `main.go`.\n2. Fix the [bug](https://example.com/b).\n3. Run:\n\n   ```sh\n   go test ./...\n   ```\n\n> Note: be careful.\n\nDone."},
}

func TestRenderGolden(t *testing.T) {
	for _, width := range []int{40, 80} {
		r := New(Options{Width: width})
		for _, c := range constructs {
			t.Run(fmt.Sprintf("%s_%d", c.name, width), func(t *testing.T) {
				out := r.Render(c.md)
				checkOutput(t, out)
				plain := xansi.Strip(out)
				golden(t, fmt.Sprintf("%s_%d", c.name, width), plain)
				if !strings.Contains(c.name, "code") && !strings.Contains(c.name, "mixed") {
					for i, l := range strings.Split(plain, "\n") {
						if w := xansi.StringWidth(l); w > width-Margin {
							t.Errorf("line %d is %d wide (width %d): %q", i+1, w, width, l)
						}
					}
				}
			})
		}
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from its golden file:\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

var sgrRE = regexp.MustCompile("\x1b\\[[0-9;:]*m")

// checkOutput checks what every rendering must be: no control but "\n"
// once the styles' SGR sequences are taken out, no blank line at either
// end, no trailing unstyled space, every styled line closed.
func checkOutput(t *testing.T, out string) {
	t.Helper()
	for _, r := range sgrRE.ReplaceAllString(out, "") {
		if r != '\n' && (r < 0x20 || r >= 0x7f && r <= 0x9f) {
			t.Fatalf("control %U in %q", r, out)
		}
	}
	if out == "" {
		return
	}
	lines := strings.Split(out, "\n")
	if xansi.Strip(lines[0]) == "" || xansi.Strip(lines[len(lines)-1]) == "" {
		t.Errorf("blank line at an end: %q", out)
	}
	for _, l := range lines {
		if strings.HasSuffix(l, " ") {
			t.Errorf("trailing space: %q", l)
		}
		if m := sgrRE.FindAllString(l, -1); len(m) > 0 && m[len(m)-1] != "\x1b[m" {
			t.Errorf("line's style not closed: %q", l)
		}
	}
}

func TestRenderStyles(t *testing.T) {
	r := New(Options{Width: 80})
	for _, c := range []struct{ md, text, sgr string }{
		{"**strong**", "strong", "\x1b[1m"},
		{"*emph*", "emph", "\x1b[3m"},
		{"`code`", "code", "\x1b[91m"},
		{"## Heading", "## Heading", "\x1b[1;94m"},
		{"[text](http://x)", "text", "\x1b[36m"},
	} {
		if want := c.sgr + c.text + "\x1b[m"; !strings.Contains(r.Render(c.md), want) {
			t.Errorf("Render(%q) = %q, want it to contain %q", c.md, r.Render(c.md), want)
		}
	}
	dark, light := New(Options{Width: 80, Style: "dark"}), New(Options{Width: 80, Style: "light"})
	if dark.Render("## H") == light.Render("## H") {
		t.Error("dark and light headings are alike")
	}
	if got := New(Options{Width: 80}).Render("plain text"); got != "  plain text" {
		t.Errorf("plain text = %q", got)
	}
}

func TestRenderWideRunes(t *testing.T) {
	r := New(Options{Width: 20}) // 16 cells of text
	out := xansi.Strip(r.Render("日本語の文章は長い。 これは😀😀😀😀😀😀😀😀😀です"))
	want := "  日本語の文章は長\n  い。\n  これは😀😀😀😀😀\n  😀😀😀😀です"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	for _, l := range strings.Split(out, "\n") {
		if w := xansi.StringWidth(l); w > 18 {
			t.Errorf("%q is %d wide", l, w)
		}
	}
	// A combining mark stays with its letter.
	out = xansi.Strip(New(Options{Width: 10}).Render("e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301"))
	if want := "  e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301\n  e\u0301e\u0301"; out != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

func TestRenderControlSequences(t *testing.T) {
	inject := []string{
		"\x1b[2J\x1b[H cleared",
		"\x1b]0;title\x07 osc",
		"\x1b]52;c;aGVsbG8=\x07 clipboard",
		"\u009b31m c1 csi",
		"\x9b31m raw byte",
		"bell\x07 backspace\x08 cr\rcr",
		"&#27;[31m entity &#x1b;[0m &#155;2J &#x9F; &#7; &#0;",
	}
	r := New(Options{Width: 40})
	for _, s := range inject {
		for _, md := range []string{
			s,
			"# " + s,
			"`" + s + "`",
			"```\n" + s + "\n```",
			"    " + s,
			"> " + s,
			"- " + s,
			"[" + s + "](http://x/" + s + ")",
			"![" + s + "](" + s + ")",
			"<div>" + s + "</div>",
			"a <span title=\"" + s + "\">b</span>",
			"| a |\n|---|\n| " + s + " |",
		} {
			out := r.Render(md)
			checkOutput(t, out)
			if strings.Contains(sgrRE.ReplaceAllString(out, ""), "\x1b") {
				t.Errorf("Render(%q) = %q: an escape", md, out)
			}
		}
	}
}

func TestRenderEmpty(t *testing.T) {
	r := New(Options{Width: 40})
	for _, md := range []string{"", "\n\n", "   ", "<!-- -->\n", "[ref]: http://x"} {
		out := r.Render(md)
		checkOutput(t, out)
		if md != "<!-- -->\n" && out != "" {
			t.Errorf("Render(%q) = %q, want nothing", md, out)
		}
	}
}

func TestRenderDeepNesting(t *testing.T) {
	r := New(Options{Width: 40})
	md := strings.Repeat(">", 5000) + " deep"
	out := xansi.Strip(r.Render(md))
	if !strings.Contains(out, "deep") || len(out) > 200 {
		t.Errorf("deep quote: %d bytes: %q", len(out), out)
	}
	var b strings.Builder
	for i := 0; i < 200; i++ {
		b.WriteString(strings.Repeat("  ", i) + "- item\n")
	}
	for _, l := range strings.Split(xansi.Strip(r.Render(b.String())), "\n") {
		if w := xansi.StringWidth(l); w > 40 {
			t.Fatalf("a nested item is %d wide: %q", w, l)
		}
	}
}

func TestRenderConcurrent(t *testing.T) {
	r := New(Options{Width: 60})
	want := r.Render(constructs[len(constructs)-1].md)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				if got := r.Render(constructs[len(constructs)-1].md); got != want {
					t.Error("renderings differ")
					return
				}
			}
		}()
	}
	wg.Wait()
}

func FuzzRender(f *testing.F) {
	for _, c := range constructs {
		f.Add(c.md, 40)
	}
	f.Add("\x1b[31mred\x1b[0m &#27;[1m", 20)
	f.Add("| a | b |\n|:-:|--:|\n| \\| | `x|y` |", 10)
	f.Fuzz(func(t *testing.T, md string, width int) {
		if width < 0 || width > 300 || len(md) > 4096 {
			return
		}
		out := New(Options{Width: width}).Render(md)
		checkOutput(t, out)
		if strings.Contains(sgrRE.ReplaceAllString(out, ""), "\x1b") {
			t.Fatalf("an escape in %q", out)
		}
	})
}

func BenchmarkRender(b *testing.B) {
	var md strings.Builder
	for i := 0; i < 4; i++ {
		md.WriteString(constructs[len(constructs)-1].md + "\n\n")
		md.WriteString(constructs[0].md + "\n\n")
	}
	r := New(Options{Width: 118})
	b.SetBytes(int64(md.Len()))
	b.ReportAllocs()
	for b.Loop() {
		_ = r.Render(md.String())
	}
}
