package masking

import (
	"strings"
	"unicode/utf8"
)

// gemini-cli measures and slices strings in UTF-16 code units (JavaScript's
// String.length and slice), so thresholds, previews and "characters
// omitted" counts are computed the same way here. A Go string's invalid
// UTF-8 bytes count as one U+FFFD each, which is what they would have been
// had the text ever been a JavaScript string.

// utf16Len returns the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			// Count a run of ASCII in one go.
			j := i + asciiPrefix(s[i:])
			n += j - i
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += units(r)
		i += size
	}
	return n
}

// units is the number of UTF-16 code units of r.
func units(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// asciiPrefix returns the length of the longest ASCII prefix of s, eight
// bytes at a time: masking scans megabytes of tool output every turn.
func asciiPrefix(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if load64(s[i:])&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(s) && s[i] < utf8.RuneSelf; i++ {
	}
	return i
}

// load64 reads eight bytes of s little-endian.
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// utf16Head returns JavaScript's s.slice(0, n): the first n code units. A
// surrogate pair cut in half leaves a lone surrogate in JavaScript, which
// Node writes out as U+FFFD; so does this.
func utf16Head(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if p := asciiPrefix(s); p >= n {
		return s[:n]
	}
	var b strings.Builder
	u := 0
	for i := 0; i < len(s) && u < n; {
		r, size := utf8.DecodeRuneInString(s[i:])
		w := units(r)
		if u+w > n {
			b.WriteRune(utf8.RuneError)
			break
		}
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		u += w
		i += size
	}
	return b.String()
}

// utf16Tail returns JavaScript's s.slice(-n): the last n code units, with a
// split surrogate pair written as U+FFFD. It walks back from the end, so
// its cost is the tail's, not the text's.
func utf16Tail(s string, n int) string {
	if n <= 0 {
		return ""
	}
	u, i := 0, len(s)
	for i > 0 && u < n {
		if s[i-1] < utf8.RuneSelf {
			i--
			u++
			continue
		}
		r, size := utf8.DecodeLastRuneInString(s[:i])
		if w := units(r); u+w > n {
			// The cut falls inside this pair: its low half remains.
			return string(utf8.RuneError) + validUTF8(s[i:])
		} else {
			u += w
		}
		i -= size
	}
	return validUTF8(s[i:])
}

// utf16AtMost reports whether s is at most n code units long, without
// counting when the byte length decides: a code unit takes one to three
// bytes.
func utf16AtMost(s string, n int) bool {
	switch {
	case len(s) <= n:
		return true
	case len(s) > 3*n:
		return false
	}
	return utf16Len(s) <= n
}

// validUTF8 replaces each invalid byte of s with U+FFFD.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// jsSpace reports whether r is white space or a line terminator to
// JavaScript's String.prototype.trim. It differs from unicode.IsSpace:
// U+FEFF is trimmed, U+0085 is not.
func jsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// jsTrim is JavaScript's s.trim().
func jsTrim(s string) string { return strings.TrimFunc(s, jsSpace) }

// formatThousands formats n as Number.prototype.toLocaleString does in
// the en-US locale gemini-cli runs with: 46000 is "46,000".
func formatThousands(n int) string {
	neg := n < 0
	if neg {
		n = -n
	}
	var buf [32]byte
	i := len(buf)
	for digits := 0; ; digits++ {
		if digits > 0 && digits%3 == 0 {
			i--
			buf[i] = ','
		}
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	if neg {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}
