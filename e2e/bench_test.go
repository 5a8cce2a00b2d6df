package e2e

import (
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRunQuickstart runs the README's quickstart — five replayed model
// turns and four tool calls, one of them a shell command — as a user does:
// a fresh process in a fresh workspace. It reports the median wall time and
// the peak resident set size.
func BenchmarkRunQuickstart(b *testing.B) {
	home := b.TempDir()
	var walls []time.Duration
	var peakKB int64
	for b.Loop() {
		ws, err := os.MkdirTemp(b.TempDir(), "ws")
		if err != nil {
			b.Fatal(err)
		}
		c := exec.Command(binary, "run", "-w", ws, "-m", "replay:"+quickstart(), "--yolo", "-p", "Create a hello script and run it")
		c.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
		start := time.Now()
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		walls = append(walls, time.Since(start))
		if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peakKB = max(peakKB, ru.Maxrss)
		}
	}
	slices.Sort(walls)
	b.ReportMetric(float64(walls[len(walls)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(peakKB)/1024, "peak-RSS-MB")
}
