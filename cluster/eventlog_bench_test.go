package cluster

import (
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/internal/pgtest"
)

// BenchmarkEventLogRemoteSubscriber: each iteration is a turn of 200
// text deltas (at a model's pace, 200 µs apart) appended to the event log
// by the replica running it and followed by a subscriber on another
// replica (Follow: the rows read when NOTIFY wakes it). It reports the
// age of each event when the subscriber reads it, from the holder's
// Append (budget: 10 ms at p99), and the process's CPU time per event
// (both replicas, the writer's and the reader's work).
func BenchmarkEventLogRemoteSubscriber(b *testing.B) {
	dsn := pgtest.Schema(b, "cluster event log", "agentry_eventlog_bench_")
	ha, hb := startLogNode(b, dsn, "a"), startLogNode(b, dsn, "b")
	const deltas = 200
	var ages []time.Duration
	turn := 0
	cpu0 := cpuTime()
	for b.Loop() {
		turn++
		task, ctxID := a2a.TaskID(fmt.Sprintf("t%d", turn)), fmt.Sprintf("c%d", turn)
		sent := make([]time.Time, deltas+3) // by seq
		sent[1] = time.Now()
		ha.Append(ctxID, task, submitted(ctxID, task))
		var follow func(func(LoggedEvent, error) bool)
		for follow == nil {
			evs, ok, err := hb.Follow(b.Context(), task, 0)
			if err != nil {
				b.Fatal(err)
			}
			if ok {
				follow = evs
			}
		}
		go func() {
			for i := range deltas {
				time.Sleep(200 * time.Microsecond) // a model's pace, not a burst
				sent[i+2] = time.Now()
				ha.Append(ctxID, task, delta(ctxID, task, i))
			}
			sent[deltas+2] = time.Now()
			ha.Append(ctxID, task, completed(ctxID, task))
		}()
		n := 0
		for e, err := range follow {
			if err != nil {
				b.Fatal(err)
			}
			n++
			if e.Seq != int64(n) {
				b.Fatalf("event %d has seq %d", n, e.Seq)
			}
			if n > 1 { // the first was read by the poll above
				ages = append(ages, time.Since(sent[e.Seq]))
			}
		}
		if n != deltas+2 {
			b.Fatalf("%d events, want %d", n, deltas+2)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(turn*(deltas+2))/1000, "cpu-µs/event")
	slices.Sort(ages)
	b.ReportMetric(float64(percentile(ages, 50).Microseconds()), "age-p50-µs")
	b.ReportMetric(float64(percentile(ages, 99).Microseconds()), "age-p99-µs")
	b.ReportMetric(float64(percentile(ages, 100).Microseconds()), "age-max-µs")
}

// BenchmarkEventLogAppend: the holder's cost of logging an event. ns/op
// is what Append costs the turn's goroutine (the queue is let drain, off
// the clock, every 4096 events, so that the producer never waits for the
// writer); cpu-µs/event is the process's CPU time per event, the writer's
// encoding and INSERTs included (batches of up to 256 rows, as under
// load). "off" is the same loop without the log.
func BenchmarkEventLogAppend(b *testing.B) {
	dsn := pgtest.Schema(b, "cluster event log", "agentry_eventlog_bench_")
	run := 0
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			run++
			h := startLogNode(b, dsn, fmt.Sprintf("a%d", run))
			task, ctxID := a2a.TaskID(fmt.Sprintf("t%d", run)), fmt.Sprintf("c%d", run)
			evs := make([]a2a.Event, 0, 1024)
			for i := range cap(evs) {
				evs = append(evs, delta(ctxID, task, i))
			}
			sink := 0
			publish := func(a2a.Event) { sink++ }
			if on {
				publish = func(ev a2a.Event) { h.Append(ctxID, task, ev) }
			}
			cpu0 := cpuTime()
			i := 0
			for b.Loop() {
				publish(evs[i%len(evs)])
				if i++; on && i%4096 == 0 {
					b.StopTimer()
					for len(h.ew.q) > 0 {
						time.Sleep(100 * time.Microsecond) // not a spin: the CPU is measured
					}
					b.StartTimer()
				}
			}
			b.StopTimer()
			if on {
				h.Append(ctxID, task, completed(ctxID, task))
				h.stopWriter(b.Context())
				var rows int
				if err := h.db.QueryRowContext(b.Context(), `SELECT COUNT(*) FROM agentry_task_events WHERE task_id = $1`, string(task)).Scan(&rows); err != nil {
					b.Fatal(err)
				}
				if rows != i+1 {
					b.Fatalf("%d rows for %d events", rows, i+1)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(i)/1000, "cpu-µs/event")
		})
	}
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
