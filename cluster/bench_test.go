package cluster

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/internal/pgtest"
)

// percentile is the p-th percentile (0–100) of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p / 100)
	return sorted[i]
}

// BenchmarkForward: a JSON-RPC message for a context held by replica a,
// sent to a (served there) and to b (which asks PostgreSQL for the lease,
// finds a and forwards the request). It reports both p50s and what
// forwarding adds (budget: 2 ms at p50).
func BenchmarkForward(b *testing.B) {
	dsn := pgtest.Schema(b, "cluster", "agentry_cluster_bench_")
	ra, rb := startBenchReplica(b, dsn, "a"), startBenchReplica(b, dsn, "b")
	if _, err := ra.Acquire(b.Context(), "ctx-a"); err != nil {
		b.Fatal(err)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"contextId":"ctx-a","messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	do := func(url string) time.Duration {
		start := time.Now()
		req, _ := http.NewRequest(http.MethodPost, url+"/", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer shared-token")
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		if res.Header.Get("X-Served-By") != "a" {
			b.Fatalf("served by %q", res.Header.Get("X-Served-By"))
		}
		return time.Since(start)
	}
	for range 50 { // warm the connections
		do(ra.srv.URL)
		do(rb.srv.URL)
	}
	direct := make([]time.Duration, 0, b.N)
	forwarded := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		direct = append(direct, do(ra.srv.URL))
		forwarded = append(forwarded, do(rb.srv.URL))
	}
	b.StopTimer()
	slices.Sort(direct)
	slices.Sort(forwarded)
	d, f := percentile(direct, 50), percentile(forwarded, 50)
	b.ReportMetric(float64(d.Microseconds()), "direct-p50-µs")
	b.ReportMetric(float64(f.Microseconds()), "forwarded-p50-µs")
	b.ReportMetric(float64((f - d).Microseconds()), "added-p50-µs")
	b.ReportMetric(float64((percentile(forwarded, 99) - percentile(direct, 99)).Microseconds()), "added-p99-µs")
}

// BenchmarkRemoteSubscriber: a task's events streamed (SSE) by the
// replica holding its context, read by a subscriber connected to another
// replica, which forwards the stream. Each event carries the time it was
// written; the benchmark reports the p99 of its age when the subscriber
// reads it (budget: 10 ms).
func BenchmarkRemoteSubscriber(b *testing.B) {
	dsn := pgtest.Schema(b, "cluster", "agentry_cluster_bench_")
	ra, rb := startBenchReplica(b, dsn, "a"), startBenchReplica(b, dsn, "b")
	holdTaskA(b, ra.replicaServer, rb.replicaServer)
	const events = 200
	ra.events = events
	var ages []time.Duration
	b.ResetTimer()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodGet, rb.srv.URL+"/rest/tasks/task-a:subscribe", nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		if res.Header.Get("X-Served-By") != "a" {
			b.Fatalf("served by %q", res.Header.Get("X-Served-By"))
		}
		sc := bufio.NewScanner(res.Body)
		n := 0
		for sc.Scan() {
			d, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			ns, err := strconv.ParseInt(d, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			ages = append(ages, time.Since(time.Unix(0, ns)))
			n++
		}
		_ = res.Body.Close()
		if n != events {
			b.Fatalf("%d events, want %d", n, events)
		}
	}
	b.StopTimer()
	slices.Sort(ages)
	b.ReportMetric(float64(percentile(ages, 50).Microseconds()), "age-p50-µs")
	b.ReportMetric(float64(percentile(ages, 99).Microseconds()), "age-p99-µs")
}

// benchReplica is a replica whose handler answers at once, or streams
// events stamped with the time they are written.
type benchReplica struct {
	*replicaServer
	events int
}

func startBenchReplica(b *testing.B, dsn, name string) *benchReplica {
	br := &benchReplica{}
	rs := startReplicaTB(b, dsn, name, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Served-By", name)
		if strings.HasSuffix(r.URL.Path, ":subscribe") {
			w.Header().Set("Content-Type", "text/event-stream")
			for range br.events {
				fmt.Fprintf(w, "data: %d\n\n", time.Now().UnixNano())
				w.(http.Flusher).Flush()
				time.Sleep(200 * time.Microsecond) // a model's pace, not a burst
			}
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	}))
	br.replicaServer = rs
	return br
}
