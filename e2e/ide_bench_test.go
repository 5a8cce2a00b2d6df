package e2e

import (
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/ide/companion"
	"github.com/agentry-dev/agentry/ide/idewire"
)

// nopEditor is an editor that shows nothing.
type nopEditor struct{}

func (nopEditor) OpenDiff(string, string) error { return nil }
func (nopEditor) CloseDiff(string)              {}

// BenchmarkIDEStartup measures what finding and connecting to an IDE
// companion costs a fresh agentry process, the start-up budget of the
// IDE integration: `agentry ide status --connect --json` runs discovery
// and the connection a session makes (the MCP handshake and tools/list),
// timing each inside the process. "none" has no companion (discovery
// alone); "present" has one, found through its discovery file. It
// reports the medians over the iterations, and the process's wall time.
func BenchmarkIDEStartup(b *testing.B) {
	for _, present := range []bool{false, true} {
		name := map[bool]string{false: "none", true: "present"}[present]
		b.Run(name, func(b *testing.B) {
			tmp, err := filepath.EvalSymlinks(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			ws, dir := filepath.Join(tmp, "ws"), filepath.Join(tmp, "gemini", "ide")
			for _, d := range []string{ws, dir} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					b.Fatal(err)
				}
			}
			if present {
				srv, err := companion.New(companion.Config{Workspace: []string{ws}, IDEPID: os.Getpid(), Editor: nopEditor{}, Dir: dir, Logger: slog.New(slog.DiscardHandler),
					IDEInfo: &idewire.IDEInfo{Name: "vscode", DisplayName: "Bench IDE"}})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { srv.Close() })
			}
			env := []string{"HOME=" + b.TempDir(), "PATH=" + os.Getenv("PATH"), "TMPDIR=" + tmp, "GEMINI_CLI_IDE_PID=" + strconv.Itoa(os.Getpid())}
			var discovery, connect, wall []float64
			for b.Loop() {
				c := exec.Command(binary, "ide", "status", "--connect", "--json", "-w", ws)
				c.Env = env
				start := time.Now()
				out, _ := c.Output()
				wall = append(wall, float64(time.Since(start).Microseconds())/1000)
				var st struct {
					Usable          bool    `json:"usable"`
					DiscoveryMillis float64 `json:"discoveryMillis"`
					Connection      *struct {
						Connected bool    `json:"connected"`
						Millis    float64 `json:"millis"`
						Error     string  `json:"error"`
					} `json:"connection"`
				}
				if err := json.Unmarshal(out, &st); err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
				if st.Usable != present || (present && (st.Connection == nil || !st.Connection.Connected)) {
					b.Fatalf("present %v, got:\n%s", present, out)
				}
				discovery = append(discovery, st.DiscoveryMillis)
				if present {
					connect = append(connect, st.Connection.Millis)
				}
			}
			b.ReportMetric(median(discovery), "discovery-ms")
			if present {
				b.ReportMetric(median(connect), "connect-ms")
			}
			b.ReportMetric(median(wall), "process-ms")
		})
	}
}

func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}
