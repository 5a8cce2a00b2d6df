package compose

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/agents"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/runtime"
)

// BenchmarkMCPRun measures a whole headless run — the session built from
// settings, one prompt answered by an instant backend, the session closed
// — without MCP servers ("none") and with one stdio server whose tools are
// cached from an earlier session ("lazy-cached"): its tools are declared
// from the cache, and since the run calls none of them its process is
// never started (checked after the loop). "started" is the same server
// with mcp.lazy false, started by every run, for scale. Besides ns/op it
// reports cpu-µs/op, the process's CPU time per run, steadier than wall
// time on a busy machine. Compare with benchstat -col /servers.
func BenchmarkMCPRun(b *testing.B) {
	dir := b.TempDir()
	server := filepath.Join(dir, "mcpserver")
	build := exec.Command("go", "build", "-o", server, "../mcptools/testdata/server")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building the MCP test server: %v\n%s", err, out)
	}
	mark := filepath.Join(dir, "starts")
	starts := func() int {
		data, _ := os.ReadFile(mark)
		return len(strings.Fields(string(data)))
	}
	backend := instant{Chunks: []*genai.GenerateContentResponse{{Candidates: []*genai.Candidate{{
		Content:      &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "ok"}}},
		FinishReason: genai.FinishReasonStop,
	}}}}}
	quiet := slog.New(slog.DiscardHandler)
	// The workspace holds nothing the runs write (transcripts go to the
	// home), so every run sees the same one.
	workspace, home := b.TempDir(), filepath.Join(dir, ".agentry")
	settings := func(servers, lazy bool) *config.Settings {
		s := config.Defaults()
		s.Workspace = workspace
		s.Home = home
		s.Model.Name = "gemini-2.5-flash"
		s.Session.Store = config.SessionStoreMemory
		s.Trusted = true
		s.MCP.Lazy = lazy
		if servers {
			s.MCPServers = map[string]config.MCPServerSettings{"test": {Command: server, Args: []string{"-mark", mark}}}
		}
		return &s
	}
	run := func(b *testing.B, s *config.Settings) {
		ctx := context.Background()
		sess, err := FromSettings(ctx, s, Options{Resolver: fixedResolver{B: backend}, Agents: []agents.Definition{}, Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		id, err := sess.Send(ctx, runtime.TextMessage("hello"))
		if err != nil {
			b.Fatal(err)
		}
		for _, err := range sess.Stream(ctx, id) {
			if err != nil {
				b.Fatal(err)
			}
		}
		if err := sess.Close(); err != nil {
			b.Fatal(err)
		}
	}
	// A first session starts the server and fills the cache.
	run(b, settings(true, true))
	if starts() != 1 {
		b.Fatalf("the first session started the server %d times", starts())
	}
	loop := func(b *testing.B, s *config.Settings) {
		cpu0, _ := proctest.CPU()
		for b.Loop() {
			run(b, s)
		}
		if cpu1, ok := proctest.CPU(); ok {
			b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		}
	}
	b.Run("servers=none", func(b *testing.B) { loop(b, settings(false, true)) })
	b.Run("servers=lazy-cached", func(b *testing.B) {
		loop(b, settings(true, true))
		if n := starts(); n != 1 {
			b.Fatalf("a run calling no MCP tool started the lazy server (%d starts)", n)
		}
	})
	b.Run("servers=started", func(b *testing.B) { loop(b, settings(true, false)) })
}
