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
// a fresh process in a fresh workspace. It reports the median wall time,
// the peak resident set size and the median count of page faults (the
// process's and its shell tool's), which set the wall time on a machine
// where a fault is dear.
func BenchmarkRunQuickstart(b *testing.B) {
	home := b.TempDir()
	var walls []time.Duration
	var faults []int64
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
			faults = append(faults, ru.Minflt+ru.Majflt)
		}
	}
	slices.Sort(walls)
	b.ReportMetric(float64(walls[len(walls)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(peakKB)/1024, "peak-RSS-MB")
	if len(faults) > 0 {
		slices.Sort(faults)
		b.ReportMetric(float64(faults[len(faults)/2]), "median-faults")
	}
}
