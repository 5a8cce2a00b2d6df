package termtest

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/internal/proctest"
)

// command is exec.Command.
func command(name string, args ...string) *exec.Cmd { return exec.Command(name, args...) }

// itoa is strconv.Itoa.
func itoa(n int) string { return strconv.Itoa(n) }

func TestPTYRecordsOutput(t *testing.T) {
	p := StartPTY(t, command("sh", "-c", `printf 'a\033[31mb\033[m\n'; stty size; exit 5`), 100, 30)
	ps := p.WaitExit()
	if ps.ExitCode() != 5 {
		t.Errorf("exit %v", ps)
	}
	// The line discipline turns "\n" into "\r\n", as a terminal sees it.
	if got, want := p.Output(), "a\x1b[31mb\x1b[m\r\n30 100\r\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
	rec := p.Recording()
	if rec.Cols != 100 || rec.Rows != 30 || string(rec.Bytes()) != p.Output() {
		t.Errorf("recording %dx%d %q", rec.Cols, rec.Rows, rec.Bytes())
	}
	for i, c := range rec.Chunks {
		if i > 0 && c.At < rec.Chunks[i-1].At {
			t.Errorf("chunk %d read at %v, before chunk %d at %v", i, c.At, i-1, rec.Chunks[i-1].At)
		}
	}
}

func TestPTYInputAndEcho(t *testing.T) {
	// cat with the terminal's own echo: each line comes back twice.
	p := StartPTY(t, command("cat"), 80, 24)
	p.Type("hello\r")
	if at := p.WaitOutput("hello\r\nhello\r\n"); at <= 0 {
		t.Errorf("ready at %v", at)
	}
	d, err := p.Echo(t.Context(), []byte("x"), "x")
	if err != nil || d < 0 {
		t.Fatalf("echo %v, %v", d, err)
	}
	t.Logf("the terminal's echo through the pty: %v", d)
	// The echo is looked for after the write only.
	end, _, err := p.Expect(t.Context(), 0, "hello")
	if err != nil || end != len("hello") {
		t.Errorf("Expect: %d, %v", end, err)
	}
	p.Type("\x04\x04") // EOF ends cat
	if ps := p.WaitExit(); !ps.Success() {
		t.Errorf("exit %v", ps)
	}
}

func TestPTYExpectFails(t *testing.T) {
	p := StartPTY(t, command("sh", "-c", "echo one"), 80, 24)
	p.WaitExit()
	_, _, err := p.Expect(t.Context(), 0, "two")
	if !errors.Is(err, ErrNotSeen) || !strings.Contains(err.Error(), "terminal closed") {
		t.Errorf("after exit: %v", err)
	}
	p = StartPTY(t, command("sleep", "1000"), 80, 24)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := p.Expect(ctx, 0, "never"); !errors.Is(err, ErrNotSeen) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestPTYResize(t *testing.T) {
	p := StartPTY(t, command("sh", "-c", `trap 'stty size' WINCH; echo ready; while :; do sleep 0.01; done`), 80, 24)
	p.WaitOutput("ready")
	p.Resize(50, 10)
	p.WaitOutput("10 50")
	rec := p.Recording()
	var resized bool
	for _, c := range rec.Chunks {
		resized = resized || (c.Cols == 50 && c.Rows == 10 && len(c.Data) == 0)
	}
	if !resized {
		t.Errorf("no resize in %+v", rec.Chunks)
	}
}

func TestPTYCleanupKillsGroup(t *testing.T) {
	var pid int
	t.Run("inner", func(t *testing.T) {
		p := StartPTY(t, command("sh", "-c", "sleep 1000 & echo $!; wait"), 80, 24)
		p.WaitOutput("\n")
		n, err := strconv.Atoi(strings.TrimSpace(p.Output()))
		if err != nil {
			t.Fatal(err)
		}
		pid = n
	})
	proctest.Eventually(t, "the program's child to die with the test", func() bool { return !proctest.Running(pid) })
}

func TestReadMemory(t *testing.T) {
	p := StartPTY(t, command("sh", "-c", "echo ready; read x"), 80, 24)
	p.WaitOutput("ready")
	m, err := ReadMemory(p.PID())
	if err != nil || m.Peak <= 0 || m.Current <= 0 || m.Current > m.Peak || m.Peak%1024 != 0 {
		t.Errorf("memory %+v, %v", m, err)
	}
	p.Type("\r")
	ps := p.WaitExit()
	if _, err := ReadMemory(p.PID()); !errors.Is(err, ErrNoMemoryFigures) {
		t.Errorf("after exit: %v", err)
	}
	if peak := PeakRSS(ps); peak <= 0 || peak%1024 != 0 {
		t.Errorf("peak RSS %d", peak)
	}
	if PeakRSS(nil) != 0 {
		t.Error("PeakRSS(nil) != 0")
	}
}

func TestPercentiles(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	q := Percentiles(ds)
	want := Quantiles{N: 100, P50: 50 * time.Millisecond, P90: 90 * time.Millisecond, P99: 99 * time.Millisecond, Max: 100 * time.Millisecond}
	if q != want {
		t.Errorf("%v, want %v", q, want)
	}
	if ds[0] != 100*time.Millisecond {
		t.Error("Percentiles sorted its argument")
	}
	if q := Percentiles([]time.Duration{7}); q != (Quantiles{N: 1, P50: 7, P90: 7, P99: 7, Max: 7}) {
		t.Errorf("one value: %v", q)
	}
	if q := Percentiles(nil); q != (Quantiles{}) {
		t.Errorf("none: %v", q)
	}
	if s := want.String(); s != "n=100 p50=50ms p90=90ms p99=99ms max=100ms" {
		t.Errorf("String() = %s", s)
	}
}

// TestEchoLatencies measures typing into a shell through tmux: a figure of
// the harness's own floor, logged, not asserted.
func TestEchoLatencies(t *testing.T) {
	tm := bash(t)
	tm.WaitFor("the prompt", hasLine("$"))
	ds, err := tm.EchoLatencies(t.Context(), "$ ", "echo typed")
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != len("echotyped") {
		t.Fatalf("%d latencies", len(ds))
	}
	t.Logf("echo through tmux into bash: %v", Percentiles(ds))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := tm.Echo(ctx, "z", func(string) bool { return false }); !errors.Is(err, ErrNotSeen) {
		t.Errorf("cancelled echo: %v", err)
	}
}

// TestEchoWhileStreaming measures typing into the inline bubbletea program
// while it streams lines above its live region, as the interactive
// terminal's benchmarks will: figures logged, not asserted.
func TestEchoWhileStreaming(t *testing.T) {
	cmd := helperCmd("stream", "STREAM_PAUSE=5ms", "STREAM_STAY=1")
	tm := Start(t, Options{Command: cmd.Args, Env: cmd.Env, Cols: 80, Rows: 24})
	tm.WaitText("streaming ")
	ds, err := tm.EchoLatencies(t.Context(), "> ", "abcdefghij")
	if err != nil {
		t.Fatal(err)
	}
	screen := tm.Screen()
	t.Logf("echo into bubbletea while it streams: %v", Percentiles(ds))
	if len(ds) != 10 || !strings.Contains(screen, "> abcdefghij") {
		t.Errorf("%d latencies; the screen:\n%s", len(ds), Framed(screen))
	}
	tm.WaitText("streaming 200/200 > abcdefghij")
	tm.Keys("C-c")
	if e := tm.WaitExit(); e != (Exit{}) {
		t.Errorf("exit %+v", e)
	}
}
