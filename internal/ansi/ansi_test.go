package ansi

import "testing"

func TestStripAndDropControls(t *testing.T) {
	for _, tc := range []struct{ in, strip, both string }{
		{"plain", "plain", "plain"},
		{"a\x1b[31mred\x1b[0m", "ared", "ared"},
		{"osc\x1b]52;c;aGk=\x07end", "oscend", "oscend"},
		{"tab\there", "tab\there", "tab    here"},
		{"bell\x07 nul\x00 del\x7f", "bell\x07 nul\x00 del\x7f", "bell nul del"},
		{"crlf\r\nline", "crlf\r\nline", "crlf\nline"},
		{"c1\u009b31mcsi\u0085nel", "c1\u009b31mcsi\u0085nel", "c131mcsinel"},
		{"é ü 😀 \u00a0", "é ü 😀 \u00a0", "é ü 😀 \u00a0"}, // 0xC2 leads U+00A0 too: kept
	} {
		if got := Strip(tc.in); got != tc.strip {
			t.Errorf("Strip(%q) = %q, want %q", tc.in, got, tc.strip)
		}
		if got := DropControls(Strip(tc.in)); got != tc.both {
			t.Errorf("DropControls(Strip(%q)) = %q, want %q", tc.in, got, tc.both)
		}
	}
}
