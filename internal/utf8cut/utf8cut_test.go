package utf8cut

import "testing"

func TestIncompleteTail(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", 0},
		{"abc", 0},
		{"é", 0},
		{"a\xc3", 1},         // é's first byte
		{"a\xe2\x82", 2},     // € without its last byte
		{"a\xf0\x9f\x98", 3}, // 😀 without its last byte
		{"a\xf0\x9f\x98\x80", 0},
		{"a\x80\x80\x80\x80", 0}, // continuation bytes only: invalid, nothing to wait for
		{"\xff", 0},
	} {
		if got := IncompleteTail([]byte(tc.in)); got != tc.want {
			t.Errorf("IncompleteTail(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
