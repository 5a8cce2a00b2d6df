package main

import (
	"bytes"
	"os"
	"sync"
	"syscall"
	"testing"

	"github.com/agentry-dev/agentry/runtime"
)

// exitRecorder stands in for os.Exit.
type exitRecorder struct {
	mu    sync.Mutex
	codes []int
	done  chan struct{}
}

func newExitRecorder() *exitRecorder { return &exitRecorder{done: make(chan struct{})} }

func (e *exitRecorder) exit(code int) {
	e.mu.Lock()
	e.codes = append(e.codes, code)
	e.mu.Unlock()
	close(e.done)
}

// TestInterruptBeforeHandled: a signal during start-up, before the command
// handles signals, ends agentry at once with 130.
func TestInterruptBeforeHandled(t *testing.T) {
	raw := make(chan os.Signal, 1)
	defer close(raw)
	var stderr syncBuffer
	rec := newExitRecorder()
	watchInterrupts(raw, &stderr, rec.exit)
	raw <- syscall.SIGTERM
	<-rec.done
	if len(rec.codes) != 1 || rec.codes[0] != runtime.ExitCancelled {
		t.Errorf("exit codes %v, want [130]", rec.codes)
	}
	if !bytes.Contains(stderr.Bytes(), []byte("terminated: exiting")) {
		t.Errorf("stderr %q", stderr.Bytes())
	}
}

// TestInterruptHandled: once handled, the first signal goes to the command
// and the second ends agentry at once.
func TestInterruptHandled(t *testing.T) {
	raw := make(chan os.Signal, 1)
	defer close(raw)
	var stderr syncBuffer
	rec := newExitRecorder()
	in := watchInterrupts(raw, &stderr, rec.exit)
	c := in.handle()
	raw <- os.Interrupt
	if s := <-c; s != os.Interrupt {
		t.Fatalf("command got %v", s)
	}
	raw <- os.Interrupt
	<-rec.done
	if len(rec.codes) != 1 || rec.codes[0] != runtime.ExitCancelled || !bytes.Contains(stderr.Bytes(), []byte("Forced exit.")) {
		t.Errorf("exit codes %v, stderr %q; want 130 and Forced exit.", rec.codes, stderr.Bytes())
	}
}

// syncBuffer is a bytes.Buffer safe for the watcher's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}
