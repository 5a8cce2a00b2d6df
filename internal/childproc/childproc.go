// Package childproc ties the processes agentry starts — shell commands,
// hooks, MCP stdio servers — to agentry's life, so that none is orphaned
// when agentry dies, even by SIGKILL.
//
// Two mechanisms work together. Prepare puts a child in a process group of
// its own and, on Linux, sets its parent-death signal: the kernel SIGKILLs
// the child when agentry dies. That signal reaches the child alone, not
// the processes it starts, so Watch adds a watchdog to the child's group:
// a small shell that blocks reading a pipe whose only writer is agentry.
// When agentry exits, however it exits, the kernel closes the pipe, the
// read ends, and the watchdog SIGKILLs its whole group. A process that
// leaves the group (setsid, a daemon) is out of reach of both.
package childproc

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
)

// watchdogScript waits for end of file on stdin, then kills the process
// group it belongs to, itself included.
const watchdogScript = "read -r _; kill -9 0"

// Guard is a running watchdog. The zero of *Guard (nil) watches nothing.
type Guard struct {
	w    *os.File      // agentry's end of the pipe
	cmd  *exec.Cmd     // the watchdog
	done chan struct{} // closed once the watchdog has been reaped
	once sync.Once
}

// Close stops watching: it kills and reaps the watchdog, then closes the
// pipe, and leaves the group's other processes as they are. Callers that
// want the group gone kill it themselves, before or after. Close is safe on
// a nil Guard and idempotent.
func (g *Guard) Close() {
	if g == nil {
		return
	}
	g.once.Do(func() {
		// The watchdog must be gone before the pipe closes, or it would
		// take the end of file for agentry's death.
		_ = g.cmd.Process.Kill() // already gone when its group was killed
		<-g.done
		_ = g.w.Close()
	})
}

// start starts the watchdog cmd, whose stdin is the read end of a new
// pipe, and returns its Guard.
func start(cmd *exec.Cmd, pgid int) (*Guard, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("childproc: watching process group %d: %w", pgid, err)
	}
	cmd.Stdin = r
	err = cmd.Start()
	_ = r.Close() // the watchdog has its copy; agentry must hold none
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("childproc: watching process group %d: %w", pgid, err)
	}
	g := &Guard{w: w, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait() // killed by Close or with its group; the status says nothing
		close(g.done)
	}()
	return g, nil
}
