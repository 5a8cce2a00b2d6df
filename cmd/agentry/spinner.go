package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/agentry-dev/agentry/runtime"
)

// spinner shows which tool is running, on stderr, only when stderr is a
// terminal: stdout stays clean for pipes and a redirected stderr gets no
// control characters.
type spinner struct {
	w       io.Writer
	enabled bool

	mu   sync.Mutex
	stop chan struct{}
	done chan struct{}
}

func newSpinner(w io.Writer) *spinner {
	return &spinner{w: w, enabled: isTerminal(w)}
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func spinnerLabel(r *runtime.ToolRequest) string {
	name := r.Name
	desc := ""
	if r.Display != nil {
		name = firstNonEmpty(r.Display.Name, name)
		desc = r.Display.Description
	}
	if len(desc) > 60 {
		desc = desc[:57] + "..."
	}
	if desc != "" {
		return name + " " + desc
	}
	return name
}

// start shows label until stop; a running spinner is replaced.
func (s *spinner) start(label string) {
	if !s.enabled {
		return
	}
	s.halt()
	s.mu.Lock()
	defer s.mu.Unlock()
	stop, done := make(chan struct{}), make(chan struct{})
	s.stop, s.done = stop, done
	go func() {
		defer close(done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			fmt.Fprintf(s.w, "\r\x1b[K%s %s", spinnerFrames[i%len(spinnerFrames)], label)
			select {
			case <-stop:
				fmt.Fprint(s.w, "\r\x1b[K")
				return
			case <-t.C:
			}
		}
	}()
}

// halt stops the spinner and clears its line.
func (s *spinner) halt() {
	s.mu.Lock()
	stop, done := s.stop, s.done
	s.stop, s.done = nil, nil
	s.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}
