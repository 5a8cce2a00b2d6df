package tui

import (
	"bytes"
	"context"
	"io"
	"os"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
)

// frameMarker is in every first frame: the input box's top-left corner
// (the frame of a fresh terminal always shows the input box). Before the
// first frame, Bubble Tea's renderer takes the whole screen for its frame,
// and a print would land at the top of the screen and push the frame into
// the scrollback; so prints wait for a write that holds it.
var frameMarker = []byte("╭")

// frameFallback bounds the wait for the first frame, for a terminal
// output the marker never reaches.
const frameFallback = 2 * time.Second

// frameWatch passes writes through and closes drawn at the first write
// holding frameMarker: the renderer's first frame.
type frameWatch struct {
	w     io.Writer
	once  sync.Once
	drawn chan struct{}
}

func newFrameWatch(w io.Writer) *frameWatch {
	return &frameWatch{w: w, drawn: make(chan struct{})}
}

// Write implements io.Writer.
func (f *frameWatch) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if bytes.Contains(p, frameMarker) {
		f.once.Do(func() { close(f.drawn) })
	}
	return n, err
}

// watchedFile is a terminal's file with its writes watched: Bubble Tea
// still finds the terminal (its size, its modes) through the file.
type watchedFile struct {
	*os.File
	watch *frameWatch
}

// Write implements io.Writer.
func (f watchedFile) Write(p []byte) (int, error) { return f.watch.Write(p) }

// waitFirstFrame delivers printReadyMsg once drawn closes, or after
// frameFallback, or when ctx ends.
func waitFirstFrame(ctx context.Context, drawn <-chan struct{}) tea.Cmd {
	return func() tea.Msg {
		t := time.NewTimer(frameFallback)
		defer t.Stop()
		select {
		case <-drawn:
		case <-t.C:
		case <-ctx.Done():
		}
		return printReadyMsg{}
	}
}

// watchOutput wraps out so that drawn closes with the first frame.
func watchOutput(out io.Writer) (io.Writer, <-chan struct{}) {
	fw := newFrameWatch(out)
	if f, ok := out.(*os.File); ok {
		return watchedFile{File: f, watch: fw}, fw.drawn
	}
	return fw, fw.drawn
}
