package tui

import (
	"bytes"
	"os"
	"testing"
)

// TestFrameWatch: drawn closes at the first write holding the input box's
// corner, not before; writes pass through unchanged; a terminal's file
// stays a file for Bubble Tea.
func TestFrameWatch(t *testing.T) {
	var buf bytes.Buffer
	w, drawn := watchOutput(&buf)
	for _, s := range []string{"\x1b[?2026$p", "\x1b]11;?\x07"} {
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-drawn:
		t.Fatal("drawn before the first frame")
	default:
	}
	if _, err := w.Write([]byte("\x1b[?25l╭──╮\r\n│ > │")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-drawn:
	default:
		t.Fatal("not drawn after the first frame")
	}
	w.Write([]byte("╭")) // a second frame: closing twice would panic
	if got, want := buf.String(), "\x1b[?2026$p\x1b]11;?\x07\x1b[?25l╭──╮\r\n│ > │╭"; got != want {
		t.Errorf("written %q, want %q", got, want)
	}

	f, err := os.CreateTemp(t.TempDir(), "tty")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wf, _ := watchOutput(f)
	if _, ok := wf.(interface{ Fd() uintptr }); !ok {
		t.Errorf("a watched file has no Fd: Bubble Tea would not find the terminal")
	}
}
