package compression

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// marshalJS encodes v as JSON the way JavaScript's JSON.stringify(v) (or,
// with indent, JSON.stringify(v, null, indent)) spells it, as far as
// encoding/json can: HTML characters are left alone, and Go 1.22+ already
// writes \b and \f as JavaScript does. What still differs is documented on
// jsLength.
func marshalJS(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("compression: encode JSON: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// jsLength is JSON.stringify(v).length: the length of v's JSON in UTF-16
// code units, which is what gemini-cli's character counts measure. It
// matches JavaScript except where the Go value cannot say what the
// JavaScript object held:
//   - genai's Go types omit zero values (empty strings, false, empty maps,
//     e.g. a function call's `args: {}`), which a JavaScript object carrying
//     them explicitly would spell out;
//   - invalid UTF-8 in a Go string is counted as one U+FFFD per escape Go
//     writes, where JavaScript strings hold UTF-16 and have no such case.
//
// Key order differs (Go sorts map keys, JavaScript keeps insertion order)
// but does not change the length. U+2028 and U+2029, which Go always escapes
// and JavaScript does not, are counted as the one unit JavaScript writes.
func jsLength(v any) (int, error) {
	b, err := marshalJS(v, "")
	if err != nil {
		return 0, err
	}
	return jsonUTF16Len(b), nil
}

// jsonUTF16Len counts the UTF-16 code units of Go-encoded JSON as
// JavaScript would have written it (see jsLength).
func jsonUTF16Len(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\\' && i+1 < len(b) && b[i+1] == 'u' && i+6 <= len(b):
			switch string(b[i+2 : i+6]) {
			case "2028", "2029", "fffd":
				n++ // JavaScript writes the character itself
			default:
				n += 6
			}
			i += 6
		case c == '\\':
			n += 2
			i += 2
		case c < utf8.RuneSelf:
			n++
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			n += utf16.RuneLen(r)
			i += size
		}
	}
	return n
}

// jsTrim is JavaScript's String.prototype.trim, which trims a different set
// than strings.TrimSpace: U+FEFF is white space to it, U+0085 is not.
func jsTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		switch r {
		case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
			return true
		}
		return r >= 0x2000 && r <= 0x200A
	})
}
