package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// shellPath is the system shell hooks run under, as gemini-cli's bash
// configuration does on Unix.
const shellPath = "/bin/sh"

// outputLimit bounds how much of each stream is kept; the rest is read and
// dropped so that a chatty hook cannot block on a full pipe.
const outputLimit = 1 << 20

// DefaultKillGrace is how long a hook has between SIGTERM and SIGKILL, as
// in gemini-cli.
const DefaultKillGrace = 5 * time.Second

// procResult is how one hook process ended.
type procResult struct {
	stdout, stderr []byte
	exitCode       int            // -1 when not started or killed by a signal
	signal         syscall.Signal // non-zero when killed by a signal
	timedOut       bool
	cancelErr      error // the context's error when the caller gave up
	startErr       error
}

// runProcess runs cmdline under the system shell in its own process group,
// feeds stdin, and collects both output streams. On timeout or
// cancellation the group gets SIGTERM, then SIGKILL after grace. Whatever
// the outcome, the group is SIGKILLed once the shell has exited, so that
// nothing the hook left in the background outlives the call.
func runProcess(ctx context.Context, cmdline, dir string, env []string, stdin []byte, timeout, grace time.Duration) procResult {
	res := procResult{exitCode: -1}

	// Hand the child real pipes rather than io.Writers: exec would otherwise
	// copy through goroutines that Wait waits for, and a background process
	// holding the pipe open would keep Wait from returning.
	var files []*os.File
	closeAll := func(fs ...*os.File) {
		for _, f := range fs {
			_ = f.Close() // a second close only reports os.ErrClosed
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		closeAll(files...)
		res.startErr = fmt.Errorf("creating pipes: %w", err)
		return res
	}

	cmd := exec.Command(shellPath, "-c", cmdline)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	// A group of its own lets one signal reach the shell and everything it
	// started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	startErr := cmd.Start()
	closeAll(inR, outW, errW) // the child has its copies
	if startErr != nil {
		closeAll(inW, outR, errR)
		res.startErr = startErr
		return res
	}
	pgid := cmd.Process.Pid

	writeDone := make(chan struct{})
	go func() {
		defer close(writeDone)
		// A hook need not read its input; EPIPE is expected then.
		_, _ = inW.Write(stdin)
		_ = inW.Close()
	}()
	stdoutC := readCapped(outR)
	stderrC := readCapped(errR)
	waitC := make(chan error, 1)
	go func() { waitC <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	exited := false
	select {
	case <-waitC:
		exited = true
	case <-timer.C:
		res.timedOut = true
	case <-ctx.Done():
		res.cancelErr = ctx.Err()
	}
	if !exited {
		signalGroup(pgid, syscall.SIGTERM)
		graceTimer := time.NewTimer(grace)
		select {
		case <-waitC:
		case <-graceTimer.C:
			signalGroup(pgid, syscall.SIGKILL)
			<-waitC
		}
		graceTimer.Stop()
	}
	// The shell is gone; its background children may not be. Killing the
	// group now is what makes "no process outlives the call" hold. (The
	// group id cannot be handed to a new group while any member lives.)
	signalGroup(pgid, syscall.SIGKILL)

	// Killed members close the pipes as they die. A process that left the
	// group (setsid) is out of reach; do not wait for it forever.
	drain := time.NewTimer(grace)
	defer drain.Stop()
	for _, c := range []*capture{stdoutC, stderrC} {
		select {
		case <-c.done:
		case <-drain.C:
			closeAll(outR, errR) // unblocks the readers
		}
	}
	closeAll(outR, errR, inW) // inW: unblocks a writer stuck on a full pipe
	<-stdoutC.done
	<-stderrC.done
	<-writeDone
	res.stdout, res.stderr = stdoutC.data, stderrC.data

	if st := cmd.ProcessState; st != nil {
		res.exitCode = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.signal = ws.Signal()
		}
	}
	return res
}

// capture collects one output stream in the background.
type capture struct {
	done chan struct{} // closed when data is final
	data []byte
}

// readCapped reads r to the end in the background, keeping up to
// outputLimit bytes.
func readCapped(r io.Reader) *capture {
	c := &capture{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		var b bytes.Buffer
		_, _ = io.Copy(&limitWriter{w: &b, n: outputLimit}, r) // ends at EOF or when r is closed
		c.data = b.Bytes()
	}()
	return c
}

// limitWriter keeps the first n bytes written and drops the rest, always
// reporting success so that io.Copy keeps draining.
type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		if _, err := l.w.Write(p[:k]); err != nil {
			return 0, err
		}
		l.n -= k
	}
	return len(p), nil
}

// signalGroup signals every process in group pgid; a group that is already
// gone is not an error.
func signalGroup(pgid int, sig syscall.Signal) {
	_ = syscall.Kill(-pgid, sig) // ESRCH: nothing left to signal
}

// shellQuote quotes s as one POSIX shell word.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.,/:@%+=", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// expandCommand replaces $NAME references to the hook variables in command
// with their shell-quoted values, as gemini-cli's expandCommand does, so
// that a path with spaces stays one word. Unlike gemini-cli, a reference
// must end at a name boundary: $GEMINI_CWDX is left to the shell.
func expandCommand(command string, vars []envVar) string {
	var b strings.Builder
	for i := 0; i < len(command); {
		if command[i] != '$' {
			b.WriteByte(command[i])
			i++
			continue
		}
		replaced := false
		for _, v := range vars {
			end := i + 1 + len(v.name)
			if !strings.HasPrefix(command[i+1:], v.name) || end < len(command) && isNameByte(command[end]) {
				continue
			}
			b.WriteString(shellQuote(v.value))
			i = end
			replaced = true
			break
		}
		if !replaced {
			b.WriteByte('$')
			i++
		}
	}
	return b.String()
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// envVar is one variable the runner gives every hook.
type envVar struct{ name, value string }
