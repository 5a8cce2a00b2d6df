package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agentry-dev/agentry/internal/childproc"
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
	// started; the group dies with agentry.
	childproc.Prepare(cmd)
	startErr := cmd.Start()
	closeAll(inR, outW, errW) // the child has its copies
	if startErr != nil {
		closeAll(inW, outR, errR)
		res.startErr = startErr
		return res
	}
	pgid := cmd.Process.Pid
	guard, _ := childproc.Watch(pgid) // fails only if the group is gone already
	defer guard.Close()

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

// quoteReferences returns command with each unquoted $NAME or ${NAME}
// reference to one of names wrapped in double quotes, so that a path with
// spaces stays one word where gemini-cli's users write it bare
// ($GEMINI_PROJECT_DIR/hooks/check.sh). Values are never written into the
// command: the shell expands every reference from the hook's environment,
// so nothing in a directory name is ever parsed as shell code. Only the
// plain top level and double-quoted text are scanned; at the first
// construct whose quoting is harder to follow (command substitution,
// backquotes, here-documents, $'…', ${…} with operators) the rest is left
// untouched. A mistake could only ever leave a reference unquoted (word
// splitting), never run its value.
func quoteReferences(command string, names []string) string {
	var b strings.Builder
	inDouble := false
	for i := 0; i < len(command); {
		c := command[i]
		switch {
		case c == '\\':
			end := min(i+2, len(command))
			b.WriteString(command[i:end])
			i = end
			continue
		case c == '"':
			inDouble = !inDouble
		case c == '\'' && !inDouble:
			end := strings.IndexByte(command[i+1:], '\'')
			if end < 0 {
				b.WriteString(command[i:])
				return b.String()
			}
			b.WriteString(command[i : i+end+2])
			i += end + 2
			continue
		case c == '`', c == '<' && strings.HasPrefix(command[i:], "<<"):
			b.WriteString(command[i:])
			return b.String()
		case c == '$':
			ref, name, ok := reference(command[i:])
			if !ok {
				b.WriteString(command[i:])
				return b.String()
			}
			if ref == "" {
				break // a lone $
			}
			if !inDouble && slices.Contains(names, name) {
				b.WriteString(`"` + ref + `"`)
			} else {
				b.WriteString(ref)
			}
			i += len(ref)
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// reference reads the parameter reference at the start of s, which begins
// with '$': "$NAME" or "${NAME}" with its name, "" for a '$' that starts
// no reference (a lone $, $1, $?), and ok false for anything whose extent
// quoteReferences does not follow.
func reference(s string) (ref, name string, ok bool) {
	if len(s) < 2 {
		return "", "", true
	}
	switch c := s[1]; {
	case c == '(' || c == '\'' || c == '"':
		return "", "", false
	case c == '{':
		end := strings.IndexByte(s, '}')
		if end < 0 {
			return "", "", false
		}
		name = s[2:end]
		if name == "" || !isName(name) {
			return "", "", false
		}
		return s[:end+1], name, true
	case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		end := 2
		for end < len(s) && isNameByte(s[end]) {
			end++
		}
		return s[:end], s[1:end], true
	}
	return "", "", true
}

func isName(s string) bool {
	for i := range len(s) {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return s[0] < '0' || s[0] > '9'
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// envVar is one variable the runner gives every hook.
type envVar struct{ name, value string }
