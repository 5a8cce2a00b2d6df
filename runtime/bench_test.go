package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	settingsroutes "github.com/agentry-dev/agentry/compose/routes"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/processors"
	"github.com/agentry-dev/agentry/routing"
	"github.com/agentry-dev/agentry/tools"
)

// BenchmarkModelCall measures everything agentry adds around one model call
// — the Send, ADK's request building over the history, the processor chain,
// the dispatcher's aggregation, the translation to protocol events and their
// fan-out to a Stream consumer — with a backend that answers instantly.
//
// routing=on adds the routing processor and the dispatcher's availability
// selection, so the two sub-benchmarks compare what routing costs.
func BenchmarkModelCall(b *testing.B) {
	for _, n := range []int{20, 500} {
		for _, routed := range []bool{false, true} {
			b.Run(fmt.Sprintf("history=%d/routing=%s", n, onOff(routed)), func(b *testing.B) {
				benchModelCall(b, n, routed)
			})
		}
	}
}

func onOff(v bool) string {
	if v {
		return "on"
	}
	return "off"
}

func benchModelCall(b *testing.B, n int, routed bool) {
	content := processors.NewContent(processors.ContentConfig{Roots: []string{b.TempDir()}, OS: "linux"})
	chain := processors.NewChain(content)
	var routes *routing.Service
	if routed {
		settings := config.Defaults()
		settings.Model.Name = "gemini-2.5-flash"
		var err error
		if routes, err = settingsroutes.New(&settings, nil, nil, slog.New(slog.DiscardHandler)); err != nil {
			b.Fatal(err)
		}
		chain = processors.NewChain(content, routing.NewProcessor(routes))
	}
	s, err := New(context.Background(), Config{
		Model:          "gemini-2.5-flash",
		Resolver:       fixedResolver{B: instant{Chunks: textTurn("Hello ", "there, ", "friend.").Chunks}},
		Instruction:    SystemPrompt,
		Chain:          chain,
		Routing:        routes,
		SessionService: &fixedHistory{Base: history(n)},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	msg := TextMessage("next question")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		id, err := s.Send(ctx, msg)
		if err != nil {
			b.Fatal(err)
		}
		var end *AgentEnd
		for ev, err := range s.Stream(ctx, id) {
			if err != nil {
				b.Fatal(err)
			}
			end = ev.AgentEnd
		}
		if end == nil || end.Reason != EndCompleted {
			b.Fatalf("stream ended %+v", end)
		}
	}
}

// BenchmarkAbort measures the time from Abort to the stream's agent_end,
// with the invocation blocked in a model stream and in a shell command whose
// process group must be killed.
func BenchmarkAbort(b *testing.B) {
	b.Run("model-stream", func(b *testing.B) {
		sc := newScript()
		s, err := New(context.Background(), Config{Model: "gemini-2.5-flash", Resolver: fixedResolver{B: sc}})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		benchAbort(b, s, func() { sc.Add(turn{Chunks: textTurn("working").Chunks[:1], Block: true}) }, sc.Started)
	})
	b.Run("shell-command", func(b *testing.B) {
		ws := b.TempDir()
		set, err := tools.NewSet(tools.Config{Workspace: mustWorkspace(b, ws), TempDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		defer set.Close()
		sc := newScript()
		started := make(chan int, 1)
		s, err := New(context.Background(), Config{Model: "gemini-2.5-flash", Resolver: fixedResolver{B: sc}, Tools: set.Tools(), Policy: mustPolicy(b, "yolo")})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		unsub := s.Subscribe(func(ev Event) {
			if ev.Type == EventToolUpdate {
				select {
				case started <- 0:
				default:
				}
			}
		})
		defer unsub()
		benchAbort(b, s, func() {
			sc.Add(callTurn("", fc("", "run_shell_command", map[string]any{"command": "echo started; sleep 30"})))
			// Drain the script's own start signal; the shell's first
			// output says the command is running.
			go func() { <-sc.Started }()
		}, started)
	})
}

func benchAbort(b *testing.B, s *Session, arm func(), started <-chan int) {
	ctx := context.Background()
	var total time.Duration
	for b.Loop() {
		arm()
		id, err := s.Send(ctx, TextMessage("go"))
		if err != nil {
			b.Fatal(err)
		}
		<-started
		t0 := time.Now()
		s.Abort(nil)
		var end *AgentEnd
		for ev, err := range s.Stream(ctx, id) {
			if err != nil {
				b.Fatal(err)
			}
			end = ev.AgentEnd
		}
		total += time.Since(t0)
		if end == nil || end.Reason != EndAborted {
			b.Fatalf("ended %+v", end)
		}
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs-abort-to-end")
}

func mustWorkspace(b *testing.B, dir string) *tools.Workspace {
	ws, err := tools.NewWorkspace(dir)
	if err != nil {
		b.Fatal(err)
	}
	return ws
}
