package masking

import (
	"testing"
	"unicode/utf8"
)

// FuzzJSONString checks that the counting and the encoding of strings
// agree, and that the encoding is valid UTF-8 that round-trips.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "plain text", "tab\there\nnewline \"quoted\" back\\slash", "ctl\x00\x01\x1f\r\b\f", "é你😀\u2028", "bad\xff\xe2\x82utf8", "0123456789abcdef\n0123456789\tabcdef"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := appendString(nil, s)
		if !utf8.Valid(enc) {
			t.Fatalf("invalid UTF-8 encoding of %q", s)
		}
		if got, want := stringJSONLen(s), utf16Len(string(enc)); got != want {
			t.Fatalf("stringJSONLen(%q) = %d, encoding has %d code units", s, got, want)
		}
	})
}
