package main

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/agentry-dev/agentry/runtime"
)

// interrupts routes SIGINT and SIGTERM. Until the command says it handles
// them (handle), a signal ends agentry at once: nothing done before then
// needs finishing, and whatever start-up is waiting for (a pipe on stdin,
// a slow file system) must not make agentry deaf to signals. Once it is
// handled, the first signal goes to the command, which stops gracefully
// (a run ends its stream, a batch keeps its results, the server shuts
// down); a second one ends agentry at once.
type interrupts struct {
	c       chan os.Signal
	handled atomic.Bool
}

// watchInterrupts routes the signals arriving on raw until it is closed;
// exit ends the process (os.Exit, injected for tests).
func watchInterrupts(raw <-chan os.Signal, stderr io.Writer, exit func(int)) *interrupts {
	in := &interrupts{c: make(chan os.Signal, 1)}
	go func() {
		first := true
		for s := range raw {
			if first && in.handled.Load() {
				first = false
				in.c <- s
				continue
			}
			if first {
				fmt.Fprintf(stderr, "\nagentry: %v: exiting\n", s)
			} else {
				fmt.Fprintln(stderr, "\nForced exit.")
			}
			exit(runtime.ExitCancelled)
			return
		}
	}()
	return in
}

// handle marks the signals as handled by the command from now on and
// returns the channel the first one arrives on.
func (in *interrupts) handle() <-chan os.Signal {
	in.handled.Store(true)
	return in.c
}
