package jsonstr

import (
	"encoding/json"
	"strings"
	"testing"
)

// samples cover every escape of both modes, at every offset of the
// eight-byte fast path.
var samples = []string{
	"", "plain", "quote\" back\\ slash", "ctl\x00\x01\x1f\b\f\n\r\t end",
	"<tag>&amp;", "ls\u2028ps\u2029", "emoji😀 é 你好\x7f", "bad\xffutf8", "\xe2\x80",
	strings.Repeat("0123456789abcdef", 4) + "<\"\n\xff\u2028",
}

func shifted(yield func(string) bool) {
	for _, s := range samples {
		for pad := range 9 {
			if !yield(strings.Repeat("x", pad) + s + strings.Repeat("y", pad)) {
				return
			}
		}
	}
}

func TestHTMLSafeIsEncodingJSON(t *testing.T) {
	for s := range shifted {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := Append(nil, s, HTMLSafe); string(got) != string(want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}

// TestJSIsJSONStringify checks JS mode against JSON.stringify's rules:
// the output decodes to s (invalid bytes as U+FFFD), and only quote,
// backslash and control characters are escaped, with JavaScript's short
// forms.
func TestJSIsJSONStringify(t *testing.T) {
	want := map[string]string{
		"quote\" back\\ slash":          `"quote\" back\\ slash"`,
		"ctl\x00\x01\x1f\b\f\n\r\t end": `"ctl\u0000\u0001\u001f\b\f\n\r\t end"`,
		"<tag>&amp;":                    `"<tag>&amp;"`,
		"ls\u2028ps\u2029":              "\"ls\u2028ps\u2029\"",
		"bad\xffutf8":                   "\"bad\uFFFDutf8\"",
	}
	for in, w := range want {
		if got := Append(nil, in, JS); string(got) != w {
			t.Errorf("%q: got %s, want %s", in, got, w)
		}
	}
	for s := range shifted {
		got := Append([]byte("prefix"), s, JS)
		if !strings.HasPrefix(string(got), "prefix") {
			t.Fatalf("%q: dst's bytes lost", s)
		}
		got = got[len("prefix"):]
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q: %s does not decode: %v", s, got, err)
		}
		if want := validUTF8(s); back != want {
			t.Errorf("%q: decodes to %q", s, back)
		}
		if strings.Contains(string(got), `\u003c`) || strings.Contains(string(got), `\u2028`) {
			t.Errorf("%q: %s escapes what JSON.stringify does not", s, got)
		}
	}
}

func FuzzHTMLSafe(f *testing.F) {
	for _, s := range samples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := Append(nil, s, HTMLSafe); string(got) != string(want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
		var back string
		if err := json.Unmarshal(Append(nil, s, JS), &back); err != nil {
			t.Errorf("%q: JS form does not decode: %v", s, err)
		}
	})
}

// validUTF8 is s with each invalid byte replaced by U+FFFD.
func validUTF8(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}
