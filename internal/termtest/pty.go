package termtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// Chunk is one read of a program's terminal output, or a resize.
type Chunk struct {
	// At is when the bytes were read, since the program was started.
	At time.Duration
	// Data is what was read; empty for a resize.
	Data []byte
	// Cols and Rows are the terminal's new size when the chunk is a
	// resize, and zero otherwise.
	Cols, Rows int
}

// Recording is everything a program wrote to its terminal, in order, as it
// was read from the pty (after the line discipline: a program that leaves
// output processing on has its "\n" recorded as "\r\n").
type Recording struct {
	// Cols and Rows are the terminal's size when the program started.
	Cols, Rows int
	// Chunks are the reads and resizes, in order.
	Chunks []Chunk
}

// RecordingOf is a recording of data written at once to a cols×rows
// terminal, for analysing output that was not recorded from a pty.
func RecordingOf(cols, rows int, data []byte) Recording {
	return Recording{Cols: cols, Rows: rows, Chunks: []Chunk{{Data: data}}}
}

// Bytes returns the whole output.
func (r Recording) Bytes() []byte {
	var b bytes.Buffer
	b.Grow(r.Len())
	for _, c := range r.Chunks {
		b.Write(c.Data)
	}
	return b.Bytes()
}

// Len is the number of bytes written.
func (r Recording) Len() int {
	n := 0
	for _, c := range r.Chunks {
		n += len(c.Data)
	}
	return n
}

// Index returns the offset of the first occurrence of substr in the output
// at or after offset from, or -1.
func (r Recording) Index(from int, substr string) int {
	b := r.Bytes()
	if from < 0 {
		from = 0
	}
	if from > len(b) {
		return -1
	}
	i := bytes.Index(b[from:], []byte(substr))
	if i < 0 {
		return -1
	}
	return from + i
}

// TimeAt returns when the byte at offset was read (the end of the
// recording for an offset past it).
func (r Recording) TimeAt(offset int) time.Duration {
	n := 0
	var last time.Duration
	for _, c := range r.Chunks {
		last = c.At
		n += len(c.Data)
		if offset < n {
			return c.At
		}
	}
	return last
}

// OffsetAt returns the offset of the first byte read at or after d (the
// length of the recording if none was).
func (r Recording) OffsetAt(d time.Duration) int {
	n := 0
	for _, c := range r.Chunks {
		if c.At >= d && len(c.Data) > 0 {
			return n
		}
		n += len(c.Data)
	}
	return n
}

// PTY is a program running under a pseudo-terminal, its output recorded.
// Create it with [StartPTY]; the program is killed when the test ends.
type PTY struct {
	t       testing.TB
	cmd     *exec.Cmd
	f       *os.File
	start   time.Time
	timeout time.Duration

	readDone chan struct{}
	waitDone chan struct{}
	waitErr  error

	mu  sync.Mutex
	rec Recording
	out []byte
	// grew is closed and replaced whenever output arrives or reading ends,
	// which wakes waiters without polling.
	grew chan struct{}
	// eof is set once the pty reports that no more output can come.
	eof bool
}

// StartPTY starts cmd on a new cols×rows pseudo-terminal (its standard
// input, output and error, unless set, and its controlling terminal, in a
// new session) and records everything it writes. The program's environment
// is cmd.Env as usual: set TERM there. When the test ends the program's
// process group is killed.
func StartPTY(t testing.TB, cmd *exec.Cmd, cols, rows int) *PTY {
	t.Helper()
	cols, rows = size(cols, rows)
	p := &PTY{
		t:        t,
		cmd:      cmd,
		timeout:  DefaultTimeout,
		readDone: make(chan struct{}),
		waitDone: make(chan struct{}),
		rec:      Recording{Cols: cols, Rows: rows},
		grew:     make(chan struct{}),
	}
	p.start = time.Now()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		t.Fatalf("termtest: starting %s on a pty: %v", cmd.Path, err)
	}
	p.f = f
	go p.read()
	go func() {
		p.waitErr = cmd.Wait()
		close(p.waitDone)
	}()
	t.Cleanup(func() {
		select {
		case <-p.waitDone:
		default:
			// pty.Start made the program a session (and group) leader.
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-p.waitDone
		}
		// Closing the master ends the reader even if a grandchild still
		// holds the terminal open.
		_ = f.Close()
		<-p.readDone
	})
	return p
}

// read records the program's output until the terminal closes.
func (p *PTY) read() {
	defer close(p.readDone)
	buf := make([]byte, 64<<10)
	for {
		n, err := p.f.Read(buf)
		if n > 0 {
			at := time.Since(p.start)
			data := bytes.Clone(buf[:n])
			p.mu.Lock()
			p.rec.Chunks = append(p.rec.Chunks, Chunk{At: at, Data: data})
			p.out = append(p.out, data...)
			close(p.grew)
			p.grew = make(chan struct{})
			p.mu.Unlock()
		}
		if err != nil {
			// EIO once the last holder of the terminal has closed it.
			p.mu.Lock()
			p.eof = true
			close(p.grew)
			p.grew = make(chan struct{})
			p.mu.Unlock()
			return
		}
	}
}

// PID is the program's process id.
func (p *PTY) PID() int { return p.cmd.Process.Pid }

// Write writes input to the program's terminal, as typed.
func (p *PTY) Write(b []byte) (int, error) {
	n, err := p.f.Write(b)
	if err != nil {
		return n, fmt.Errorf("termtest: writing to the pty: %w", err)
	}
	return n, nil
}

// Type writes text to the program's terminal, failing the test on error.
func (p *PTY) Type(text string) {
	p.t.Helper()
	if _, err := io.WriteString(p, text); err != nil {
		p.t.Fatal(err)
	}
}

// Resize changes the terminal's size (the program gets SIGWINCH) and
// records the change.
func (p *PTY) Resize(cols, rows int) {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := pty.Setsize(p.f, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}); err != nil {
		p.t.Fatalf("termtest: resizing the pty: %v", err)
	}
	p.rec.Chunks = append(p.rec.Chunks, Chunk{At: time.Since(p.start), Cols: cols, Rows: rows})
}

// Recording returns a copy of the output so far.
func (p *PTY) Recording() Recording {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.rec
	r.Chunks = append([]Chunk(nil), p.rec.Chunks...)
	return r
}

// Output returns the output so far.
func (p *PTY) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return string(p.out)
}

// Expect waits until substr appears in the output at or after offset from,
// and returns the offset just past it and when the chunk that completed it
// was read, since the program started. It fails with [ErrNotSeen] if ctx
// ends or the terminal closes first.
func (p *PTY) Expect(ctx context.Context, from int, substr string) (end int, at time.Duration, err error) {
	want := []byte(substr)
	for {
		p.mu.Lock()
		i := -1
		if from <= len(p.out) {
			i = bytes.Index(p.out[from:], want)
		}
		if i >= 0 {
			end = from + i + len(want)
			at = p.timeOfLocked(end - 1)
			p.mu.Unlock()
			return end, at, nil
		}
		eof, grew, n := p.eof, p.grew, len(p.out)
		p.mu.Unlock()
		if eof {
			return 0, 0, fmt.Errorf("%w: %q not in the output (%d bytes) before the terminal closed", ErrNotSeen, substr, n)
		}
		select {
		case <-grew:
		case <-ctx.Done():
			return 0, 0, fmt.Errorf("%w: %q not in the output (%d bytes): %w", ErrNotSeen, substr, n, ctx.Err())
		}
	}
}

// timeOfLocked returns when the byte at offset was read; p.mu is held.
func (p *PTY) timeOfLocked(offset int) time.Duration {
	n := 0
	for _, c := range p.rec.Chunks {
		n += len(c.Data)
		if offset < n {
			return c.At
		}
	}
	return 0
}

// WaitOutput waits until the output holds substr and returns when it was
// read since the program started: the start-to-ready time when substr is
// the program's prompt. It fails the test, with the output's tail, after
// the timeout.
func (p *PTY) WaitOutput(substr string) time.Duration {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	_, at, err := p.Expect(ctx, 0, substr)
	if err != nil {
		p.t.Fatalf("termtest: %v; the output ends %q", err, tail(p.Output(), 2000))
	}
	return at
}

// Echo writes input and waits until want appears in output written after
// it, returning the time from the write to the read that brought want. It
// is a measure for figures, not for assertions.
func (p *PTY) Echo(ctx context.Context, input []byte, want string) (time.Duration, error) {
	p.mu.Lock()
	from := len(p.out)
	p.mu.Unlock()
	sent := time.Since(p.start)
	if _, err := p.Write(input); err != nil {
		return 0, err
	}
	_, at, err := p.Expect(ctx, from, want)
	if err != nil {
		return 0, err
	}
	return at - sent, nil
}

// WaitExit waits until the program has exited and its output has been
// read to the end, and returns its state. It fails the test after the
// timeout.
func (p *PTY) WaitExit() *os.ProcessState {
	p.t.Helper()
	timer := time.NewTimer(p.timeout)
	defer timer.Stop()
	for _, ch := range []chan struct{}{p.waitDone, p.readDone} {
		select {
		case <-ch:
		case <-timer.C:
			p.t.Fatalf("termtest: %s did not exit within %v; the output ends %q", p.cmd.Path, p.timeout, tail(p.Output(), 2000))
		}
	}
	var exitErr *exec.ExitError
	if p.waitErr != nil && !errors.As(p.waitErr, &exitErr) {
		p.t.Fatalf("termtest: waiting for %s: %v", p.cmd.Path, p.waitErr)
	}
	return p.cmd.ProcessState
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
