// Package utf8cut finds where a byte stream read in pieces can be cut
// without splitting a UTF-8 character.
package utf8cut

import "unicode/utf8"

// IncompleteTail returns how many bytes at the end of b begin a UTF-8
// sequence that b does not complete: the bytes to hold back until the next
// piece arrives. It is 0 when b ends on a character boundary or with bytes
// that are not valid UTF-8 whatever follows.
func IncompleteTail(b []byte) int {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return 0
		}
		if !utf8.RuneStart(c) {
			continue
		}
		need := 0
		switch {
		case c&0xE0 == 0xC0:
			need = 2
		case c&0xF0 == 0xE0:
			need = 3
		case c&0xF8 == 0xF0:
			need = 4
		}
		if need > i {
			return i
		}
		return 0
	}
	return 0
}
