package loopdetect

import "testing"

func TestJSTrim(t *testing.T) {
	// Expected values are node's String.prototype.trim results.
	tests := []struct{ in, want string }{
		{"  x  ", "x"},
		{"\ufeff x\u2028\u3000", "x"},
		{"\u00a0\v\fx\r\n", "x"},
		{"\u0085x\u0085", "\u0085x\u0085"}, // NEL is not JavaScript whitespace
		{"\u180ex", "\u180ex"},             // nor is the Mongolian vowel separator
		{"\u2000\u200ax\u202f\u205f", "x"},
	}
	for _, tt := range tests {
		if got := jsTrim(tt.in); got != tt.want {
			t.Errorf("jsTrim(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestToolKeyHash(t *testing.T) {
	// sha256("testTool:" + JSON.stringify({param: "value"})) from node.
	const want = "7fc3a684a4bd8250d7dfb24a45e84194b6534649f5e168dbb50318a04be9afbb"
	d := New(Config{}, nil)
	d.AddToolCall("testTool", map[string]any{"param": "value"})
	if len(d.toolKeys) != 1 || d.toolKeys[0] != want {
		t.Errorf("tool keys = %v, want [%s]", d.toolKeys, want)
	}
}
