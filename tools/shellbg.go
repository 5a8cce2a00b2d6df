package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentry-dev/agentry/internal/childproc"
)

// closeWait bounds how long Close waits for a killed background process to
// be reaped.
const closeWait = 5 * time.Second

// procTracker owns the processes run_shell_command leaves running: commands
// started with is_background, and process groups in which a foreground
// command left jobs behind ("server &"). Close kills them all.
type procTracker struct {
	mu     sync.Mutex
	closed bool
	bg     []*bgProc
	groups map[int]trackedGroup // by pgid
}

// trackedGroup is a process group in which a foreground command left jobs
// running.
type trackedGroup struct {
	pids  []int            // the jobs
	guard *childproc.Guard // kills the group if agentry dies first
}

// bgProc is one is_background command.
type bgProc struct {
	pid     int
	command string
	logPath string
	done    chan struct{}    // closed once the process has been reaped
	state   *os.ProcessState // set before done is closed
	guard   *childproc.Guard // kills the group if agentry dies first
}

func newProcTracker() *procTracker {
	return &procTracker{groups: map[int]trackedGroup{}}
}

// start starts cmd and tracks it until Close.
func (pt *procTracker) start(cmd *exec.Cmd, command, logPath string) (*bgProc, error) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if pt.closed {
		return nil, errors.New("the tool set is closed")
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	guard, _ := childproc.Watch(cmd.Process.Pid) // fails only if the group is gone already
	p := &bgProc{pid: cmd.Process.Pid, command: command, logPath: logPath, done: make(chan struct{}), guard: guard}
	go func() {
		_ = cmd.Wait() // the outcome is read from ProcessState
		p.state = cmd.ProcessState
		close(p.done)
	}()
	pt.bg = append(pt.bg, p)
	return p, nil
}

// trackGroup records jobs a foreground command left running in group
// pgid, and takes over the group's guard.
func (pt *procTracker) trackGroup(pgid int, pids []int, guard *childproc.Guard) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if pt.closed {
		killLeftovers(pgid, pids)
		guard.Close()
		return
	}
	g := pt.groups[pgid]
	g.pids = append(g.pids, pids...)
	if g.guard == nil {
		g.guard = guard
	} else {
		guard.Close()
	}
	pt.groups[pgid] = g
}

// killLeftovers kills group pgid if one of its recorded jobs is still in
// it: a PID that has since been reused by an unrelated process is in
// another group, so the check keeps Close from killing strangers.
func killLeftovers(pgid int, pids []int) {
	for _, pid := range pids {
		if g, err := syscall.Getpgid(pid); err == nil && g == pgid {
			_ = killGroup(pgid)
			return
		}
	}
}

// close kills every tracked process group and waits for the background
// commands to be reaped. It is idempotent.
func (pt *procTracker) close() error {
	pt.mu.Lock()
	if pt.closed {
		pt.mu.Unlock()
		return nil
	}
	pt.closed = true
	bg, groups := pt.bg, pt.groups
	pt.bg, pt.groups = nil, nil
	pt.mu.Unlock()

	for pgid, g := range groups {
		killLeftovers(pgid, g.pids)
		g.guard.Close()
	}
	var errs []error
	for _, p := range bg {
		// Kill the group even when its leader has exited: its children may
		// still be running. The leader's PID cannot have been reused while
		// any member of its group lives.
		if err := killGroup(p.pid); err != nil && !errors.Is(err, os.ErrProcessDone) {
			errs = append(errs, fmt.Errorf("kill background command %d (%s): %w", p.pid, p.command, err))
		}
	}
	deadline := time.After(closeWait)
	for _, p := range bg {
		select {
		case <-p.done:
		case <-deadline:
			errs = append(errs, fmt.Errorf("background command %d (%s) did not exit", p.pid, p.command))
		}
		p.guard.Close()
		_ = os.Remove(p.logPath)
	}
	return errors.Join(errs...)
}

// runBackground starts a command detached from the call: in its own process
// group, its output going to a log file, tracked until the tool set
// closes. It waits req.delay so that a command that fails at once is
// reported as such, then returns its PID.
func (t *shellTool) runBackground(ctx context.Context, req shellRequest) (Result, error) {
	logFile, err := os.CreateTemp(t.tempRoot(), "agentry-shell-bg-*.log")
	if err != nil {
		return Result{}, &Error{Type: ErrShellExecute, Msg: fmt.Sprintf("Failed to create the background command's log file: %v", err), Err: err}
	}
	logPath := logFile.Name()
	cmd := exec.Command("bash", "-c", req.command)
	cmd.Dir = req.dir
	cmd.Env = t.environ()
	// An *os.File is handed to the child as is: no pipe, no copying
	// goroutine, nothing that ties the process to this call.
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	childproc.Prepare(cmd)
	p, err := t.procs.start(cmd, req.command, logPath)
	logFile.Close()
	if err != nil {
		os.Remove(logPath)
		return Result{}, &Error{Type: ErrShellExecute, Msg: fmt.Sprintf("Error: failed to start command %q: %v", req.command, err), Err: err}
	}

	timer := time.NewTimer(req.delay)
	defer timer.Stop()
	running := true
	select {
	case <-ctx.Done():
		_ = killGroup(p.pid)
		return Result{}, &Error{Type: ErrCancelled, Msg: "Command was cancelled by user before it could be moved to the background.", Err: context.Cause(ctx)}
	case <-p.done:
		running = false
	case <-timer.C:
	}

	initial := readLog(logPath)
	data := map[string]any{"pid": p.pid, "pgid": p.pid, "logFile": logPath, "background": true}
	if running {
		return Result{
			LLMContent: wrapUntrusted(fmt.Sprintf("Command is running in background. PID: %d. Initial output:\n%s\nProcess Group PGID: %d\nOutput log: %s",
				p.pid, initial, p.pid, logPath)),
			Display: fmt.Sprintf("Background process started with PID %d.", p.pid),
			Data:    data,
		}, nil
	}

	// It finished within the delay: report it like a foreground command.
	o := outcomeOf(p.state, p.pid)
	o.output = initial
	data["exitCode"] = o.exitCode
	data["output"] = initial
	if o.signal != 0 {
		data["signal"] = o.signal
	}
	return Result{LLMContent: o.llmContent(), Display: o.display(), Data: data}, nil
}

// readLog returns a background command's output so far, bounded like a
// foreground command's.
func readLog(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := newHeadTail(streamHeadTailBytes)
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		h.write(buf[:n])
		if err != nil { // io.EOF or a read error: either way, that is all
			break
		}
	}
	return strings.TrimSpace(stripANSI(h.String()))
}
