// Package shellexec runs one shell command the way agentry runs every
// command a user or a model chose: "bash -c" in the directory asked, in a
// process group of its own that dies with agentry (internal/childproc),
// with the environment agentry lets children see (internal/envredact), its
// output handed over as it arrives, the whole group signalled when the
// caller gives up, and never held up by a process that keeps the output
// open after the shell has gone. run_shell_command (package tools) and the
// terminal's shell mode (package shellmode) both run their commands here.
package shellexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/agentry-dev/agentry/internal/childproc"
	"github.com/agentry-dev/agentry/internal/envredact"
	"github.com/agentry-dev/agentry/internal/utf8cut"
)

// DefaultShell is the shell a Spec without one runs, looked up in PATH as
// gemini-cli looks it up.
const DefaultShell = "bash"

// ErrStart marks a command that could not be started.
var ErrStart = errors.New("cannot start the command")

// DefaultDrain is Spec.Drain when it is not set.
const DefaultDrain = 500 * time.Millisecond

// readSize is how much one read of the output takes at most.
const readSize = 32 << 10

// Spec describes one command.
type Spec struct {
	// Script is what the shell runs, as <Shell> -c <Script>.
	Script string
	// Shell is the shell program; "" is DefaultShell.
	Shell string
	// Dir is the working directory; "" is agentry's own.
	Dir string
	// Env is the command's environment, as Environ makes it.
	Env []string
	// Combined gives stdout and stderr one pipe: the output then arrives
	// exactly in the order it was written, every Chunk marked stdout.
	// Otherwise each has its own pipe and the order between the two is the
	// order in which agentry happened to read them.
	Combined bool
	// Grace is the time between SIGTERM and SIGKILL when ctx ends while
	// the shell runs; zero sends SIGKILL at once.
	Grace time.Duration
	// Drain bounds how long the output may stay open once the shell has
	// exited: a process that left the group (setsid, a daemon) may hold it
	// forever. When it expires the output is closed and Run returns; zero
	// is DefaultDrain.
	Drain time.Duration
	// KeepJobs leaves the processes the shell left in its group running
	// and hands the group's watchdog to the caller (Exit.Guard). Otherwise
	// the group is SIGKILLed as soon as the shell has exited, so that
	// nothing the command started outlives Run.
	KeepJobs bool
	// After returns a channel that receives once d has passed; nil is
	// time.After. Tests inject one they fire themselves.
	After func(d time.Duration) <-chan time.Time
}

// Chunk is a piece of output, whole UTF-8 characters only (a character
// split between two reads is held back until its end arrives).
type Chunk struct {
	// Stderr marks output of the stderr pipe.
	Stderr bool
	// Text is the output.
	Text string
}

// Exit is how a command ended.
type Exit struct {
	// PID is the shell's process id, which is also its process group's.
	PID int
	// State is the shell's exit status.
	State *os.ProcessState
	// Cancelled reports that ctx ended while the shell ran and the group
	// was signalled.
	Cancelled bool
	// Guard, with Spec.KeepJobs, is the group's watchdog, still running:
	// the caller closes it once it has killed the group or handed it on.
	Guard *childproc.Guard
}

// Environ is the environment of the commands agentry runs for a user or a
// model: base, or when base is nil agentry's own environment less what
// envredact.Default withholds, with markers scripts can test (AGENTRY,
// and GEMINI_CLI for scripts written for gemini-cli) and, as gemini-cli
// sets them, pagers that cannot block on a terminal and no git credential
// prompts (the command's stdin is /dev/null).
func Environ(base []string) []string {
	if base == nil {
		base = envredact.Default().Environ(os.Environ())
	}
	return append(slices.Clip(base),
		"AGENTRY=1", "GEMINI_CLI=1", "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0")
}

// SignalGroup sends sig to every process in the group pgid. A group that
// is gone is os.ErrProcessDone.
func SignalGroup(pgid int, sig syscall.Signal) error {
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// Run runs spec and hands its output to emit, on the calling goroutine, as
// it arrives. It returns once the shell has exited and its output has been
// read to the end (or closed after spec.Drain). When ctx ends while the
// shell runs, the group gets SIGTERM, and SIGKILL spec.Grace later if the
// shell is still running. Run returns an error only when the command did
// not run: ctx had ended already (the error wraps its cause) or the shell
// could not be started (ErrStart).
func Run(ctx context.Context, spec Spec, emit func(Chunk)) (Exit, error) {
	if ctx.Err() != nil {
		return Exit{}, fmt.Errorf("shellexec: not started: %w", context.Cause(ctx))
	}
	after := spec.After
	if after == nil {
		after = time.After
	}
	shell := spec.Shell
	if shell == "" {
		shell = DefaultShell
	}
	drain := spec.Drain
	if drain <= 0 {
		drain = DefaultDrain
	}

	// Real pipes rather than io.Writers: exec would otherwise copy through
	// goroutines its Wait waits for, with a real-time WaitDelay for
	// processes that hold the output open.
	var files []*os.File
	closeAll := func(fs ...*os.File) {
		for _, f := range fs {
			_ = f.Close() // a second close only reports os.ErrClosed
		}
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return Exit{}, fmt.Errorf("%w: %w", ErrStart, err)
	}
	files = append(files, outR, outW)
	errR, errW := outR, outW
	if !spec.Combined {
		if errR, errW, err = os.Pipe(); err != nil {
			closeAll(files...)
			return Exit{}, fmt.Errorf("%w: %w", ErrStart, err)
		}
		files = append(files, errR, errW)
	}

	cmd := exec.Command(shell, "-c", spec.Script)
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env
	cmd.Stdout, cmd.Stderr = outW, errW
	childproc.Prepare(cmd)
	err = cmd.Start()
	closeAll(outW, errW) // the child has its copies
	if err != nil {
		closeAll(outR, errR)
		return Exit{}, fmt.Errorf("%w: %w", ErrStart, err)
	}
	pid := cmd.Process.Pid
	guard, _ := childproc.Watch(pid) // fails only if the group is gone already

	chunks := make(chan Chunk, 16)
	var readers sync.WaitGroup
	readers.Go(func() { read(outR, false, chunks) })
	if !spec.Combined {
		readers.Go(func() { read(errR, true, chunks) })
	}
	go func() {
		readers.Wait()
		close(chunks)
	}()
	waitC := make(chan struct{})
	go func() {
		_ = cmd.Wait() // the outcome is read from cmd.ProcessState
		close(waitC)
	}()

	exit := Exit{PID: pid}
	done := ctx.Done()
	var graceC, drainC <-chan time.Time
	exited := false
	for chunks != nil || !exited {
		select {
		case c, ok := <-chunks:
			if !ok {
				chunks = nil
				continue
			}
			emit(c)
		case <-done:
			done = nil
			exit.Cancelled = true
			if spec.Grace > 0 {
				_ = SignalGroup(pid, syscall.SIGTERM)
				graceC = after(spec.Grace)
			} else {
				_ = SignalGroup(pid, syscall.SIGKILL)
			}
		case <-graceC:
			graceC = nil
			_ = SignalGroup(pid, syscall.SIGKILL)
		case <-waitC:
			waitC, done, graceC = nil, nil, nil
			exited = true
			if !spec.KeepJobs {
				// The watchdog is in the group until this kill, so the group
				// id cannot have been handed to another group.
				_ = SignalGroup(pid, syscall.SIGKILL)
			}
			if chunks != nil {
				drainC = after(drain)
			}
		case <-drainC:
			drainC = nil
			closeAll(outR, errR) // ends the readers
		}
	}
	closeAll(outR, errR)
	exit.State = cmd.ProcessState
	if spec.KeepJobs {
		exit.Guard = guard
	} else {
		guard.Close()
	}
	return exit, nil
}

// read sends what r yields to chunks until r ends or is closed, holding
// back a character split between two reads.
func read(r *os.File, stderr bool, chunks chan<- Chunk) {
	buf := make([]byte, readSize)
	var pending []byte
	for {
		n, err := r.Read(buf)
		if n > 0 {
			data := append(pending, buf[:n]...)
			cut := len(data) - utf8cut.IncompleteTail(data)
			if cut > 0 {
				chunks <- Chunk{Stderr: stderr, Text: string(data[:cut])}
			}
			pending = append(pending[:0:0], data[cut:]...)
		}
		if err != nil { // io.EOF, or the pipe closed after Drain
			break
		}
	}
	if len(pending) > 0 {
		chunks <- Chunk{Stderr: stderr, Text: string(pending)}
	}
}
