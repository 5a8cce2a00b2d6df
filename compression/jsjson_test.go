package compression

import "testing"

func TestJSTrim(t *testing.T) {
	if got := jsTrim("\ufeff \t x \u0085"); got != "x \u0085" {
		t.Errorf("jsTrim = %q", got)
	}
}
