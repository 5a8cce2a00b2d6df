// Package jsonstr writes JSON string literals without reflection, escaped
// the way one of two encoders escapes them: JavaScript's JSON.stringify,
// whose output gemini-cli's measures and spill files are made of, or Go's
// encoding/json, whose output A2A clients receive.
package jsonstr

import (
	"math/bits"
	"unicode/utf8"
)

// Mode chooses whose escaping Append reproduces.
type Mode uint8

const (
	// JS escapes as JavaScript's JSON.stringify: quote, backslash and
	// control characters only. An invalid UTF-8 byte becomes U+FFFD,
	// written as itself.
	JS Mode = iota
	// HTMLSafe escapes as encoding/json does by default: also <, > and &,
	// U+2028 and U+2029, and an invalid UTF-8 byte becomes \ufffd.
	HTMLSafe
)

const hexDigits = "0123456789abcdef"

// Append appends s to dst as a JSON string literal, quotes included,
// escaped as mode says.
func Append(dst []byte, s string, mode Mode) []byte {
	html := mode == HTMLSafe
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if i = plainRun(s, i, html); i == len(s) {
			break
		}
		b := s[i]
		if b >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				dst = append(dst, s[start:i]...)
				if html {
					dst = append(dst, `\ufffd`...)
				} else {
					dst = utf8.AppendRune(dst, utf8.RuneError)
				}
				start = i + 1
			case html && (r == '\u2028' || r == '\u2029'):
				dst = append(dst, s[start:i]...)
				dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
				start = i + size
			}
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		switch b {
		case '"', '\\':
			dst = append(dst, '\\', b)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default: // other control characters, and <, > and & when html
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plainRun returns the end of the run of bytes from i that are copied
// unchanged: ASCII other than control characters, quote, backslash and,
// when html, <, > and &. Eight bytes at a time: a tool's output is
// megabytes of mostly plain text.
func plainRun(s string, i int, html bool) int {
	for ; i+8 <= len(s); i += 8 {
		x := load64(s[i:])
		m := special8(x)
		if html {
			m |= zero8(x^(lsb*'<')) | zero8(x^(lsb*'>')) | zero8(x^(lsb*'&'))
		}
		if m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s) && plain(s[i], html); i++ {
	}
	return i
}

// plain reports whether b is copied unchanged.
func plain(b byte, html bool) bool {
	if b < 0x20 || b >= utf8.RuneSelf || b == '"' || b == '\\' {
		return false
	}
	return !html || (b != '<' && b != '>' && b != '&')
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special8 flags, in the high bit of each byte, the bytes of x that are
// not ASCII, below 0x20, a quote or a backslash. Borrows may flag bytes
// after the first flagged one, never before it, so the lowest flag is
// exact.
func special8(x uint64) uint64 {
	less := (x - lsb*0x20) &^ x // a byte below 0x20
	return (x | less | zero8(x^(lsb*'"')) | zero8(x^(lsb*'\\'))) & msb
}

// zero8 flags the zero bytes of t, the lowest exactly (see special8).
func zero8(t uint64) uint64 { return (t - lsb) &^ t & msb }

// load64 reads eight bytes of s little-endian.
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
