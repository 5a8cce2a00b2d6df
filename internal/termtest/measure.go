package termtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
)

// ErrNoMemoryFigures reports a process whose memory cannot be read: it has
// exited, or the system has no /proc.
var ErrNoMemoryFigures = errors.New("termtest: no memory figures")

// Memory is a process's resident memory, in bytes.
type Memory struct {
	// Peak is the most it has had resident since it started (VmHWM).
	Peak int64
	// Current is what it has resident now (VmRSS).
	Current int64
}

// ReadMemory reads the resident memory of the live process pid from
// /proc/<pid>/status. Read it before the process exits: an exited process
// has no figures (see [PeakRSS] for one that was waited for).
func ReadMemory(pid int) (Memory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, fmt.Errorf("%w: %w", ErrNoMemoryFigures, err)
	}
	var m Memory
	var seen int
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		var dst *int64
		switch key {
		case "VmHWM":
			dst = &m.Peak
		case "VmRSS":
			dst = &m.Current
		default:
			continue
		}
		f := strings.Fields(val)
		if len(f) != 2 || f[1] != "kB" {
			return Memory{}, fmt.Errorf("%w: process %d: %s is %q", ErrNoMemoryFigures, pid, key, val)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return Memory{}, fmt.Errorf("%w: process %d: %s: %w", ErrNoMemoryFigures, pid, key, err)
		}
		*dst = kb << 10
		seen++
	}
	if seen != 2 {
		// A zombie's status has no Vm lines.
		return Memory{}, fmt.Errorf("%w: process %d has exited", ErrNoMemoryFigures, pid)
	}
	return m, nil
}

// PeakRSS returns the peak resident memory, in bytes, of a process that was
// waited for (getrusage's ru_maxrss), or 0 when the state has none.
func PeakRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	return ru.Maxrss << 10 // kilobytes on Linux
}

// Quantiles summarises durations.
type Quantiles struct {
	N             int
	P50, P90, P99 time.Duration
	Max           time.Duration
}

// String formats the quantiles for logs and figures.
func (q Quantiles) String() string {
	return fmt.Sprintf("n=%d p50=%v p90=%v p99=%v max=%v", q.N, q.P50, q.P90, q.P99, q.Max)
}

// Percentiles returns the 50th, 90th and 99th percentiles of ds (nearest
// rank) and their maximum.
func Percentiles(ds []time.Duration) Quantiles {
	if len(ds) == 0 {
		return Quantiles{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(p int) time.Duration {
		// The smallest value with at least p% of them at or below it.
		i := (p*len(s)+99)/100 - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return Quantiles{N: len(s), P50: rank(50), P90: rank(90), P99: rank(99), Max: s[len(s)-1]}
}

// echoPoll is the pause between two looks at the screen while measuring an
// echo: short, so that the figure is not rounded up by much, but not none,
// which would spend a core on tmux clients.
const echoPoll = time.Millisecond

// Echo sends text literally and polls the screen every millisecond until
// shown holds; it returns the time from just before the send. The figure
// includes starting a tmux client for send-keys and each capture-pane, a
// floor of a few milliseconds (measure it against a shell, as this
// package's tests do). The wait ends at ctx's end or the timeout. It is a
// measure for figures, not for assertions.
func (tm *Term) Echo(ctx context.Context, text string, shown func(screen string) bool) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, tm.timeout)
	defer cancel()
	start := time.Now()
	if _, err := tm.run("send-keys", "-t", tm.pane, "-l", "--", text); err != nil {
		return 0, err
	}
	var last string
	for {
		s, err := tm.Capture()
		if err != nil {
			return 0, err
		}
		if shown(s) {
			return time.Since(start), nil
		}
		last = s
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%w: echo of %q (%w); the screen:\n%s", ErrNotSeen, text, ctx.Err(), Framed(last))
		case <-time.After(echoPoll):
		}
	}
}

// EchoLatencies types text one character at a time, and measures for each
// how long it takes until the screen shows prompt followed by what has been
// typed so far (see [Term.Echo]). Spaces are typed but not measured: the
// screen, captured without trailing spaces, shows them only with the next
// character. Use it while the program streams output to measure how typing
// keeps up.
func (tm *Term) EchoLatencies(ctx context.Context, prompt, text string) ([]time.Duration, error) {
	var ds []time.Duration
	typed := prompt
	for _, r := range text {
		typed += string(r)
		if unicode.IsSpace(r) {
			if _, err := tm.run("send-keys", "-t", tm.pane, "-l", "--", string(r)); err != nil {
				return ds, err
			}
			continue
		}
		want := typed
		d, err := tm.Echo(ctx, string(r), func(s string) bool { return strings.Contains(s, want) })
		if err != nil {
			return ds, err
		}
		ds = append(ds, d)
	}
	return ds, nil
}
