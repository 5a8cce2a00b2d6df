package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/internal/pgtest"
	"github.com/agentry-dev/agentry/internal/proctest"
)

// replicaServer is a node behind an HTTP server whose protocol handler
// answers who served the request.
type replicaServer struct {
	*testNode
	srv    *httptest.Server
	served atomic.Int64
}

func startReplica(t *testing.T, dsn, name string) *replicaServer {
	t.Helper()
	return startReplicaTB(t, dsn, name, nil)
}

// startReplicaTB starts a replica whose protocol handler is next, or by
// default one that echoes the body and says who served the request and
// what headers it saw.
func startReplicaTB(t testing.TB, dsn, name string, next http.Handler) *replicaServer {
	t.Helper()
	rs := &replicaServer{}
	var h atomic.Pointer[http.Handler]
	// HTTP/1.1 and cleartext HTTP/2, as serve's listener: gRPC calls
	// arrive over the latter.
	rs.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*h.Load()).ServeHTTP(w, r) }))
	rs.srv.Config.Protocols = new(http.Protocols)
	rs.srv.Config.Protocols.SetHTTP1(true)
	rs.srv.Config.Protocols.SetUnencryptedHTTP2(true)
	rs.srv.Start()
	t.Cleanup(rs.srv.Close)
	tn := &testNode{tasks: &fakeTasks{tasks: map[string]string{}}, timers: &proctest.Timers{}, lost: make(chan []string, 4)}
	n, err := Start(t.Context(), Config{DSN: dsn, AdvertiseURL: rs.srv.URL, ID: name, Tasks: tn.tasks, After: tn.timers.After})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Stop(context.Background()) })
	tn.Node = n
	rs.testNode = tn
	if next == nil {
		next = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rs.served.Add(1)
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("X-Served-By", name)
			w.Header().Set("X-Saw-Forwarded", r.Header.Get(ForwardedHeader))
			w.Header().Set("X-Saw-Authorization", r.Header.Get("Authorization"))
			if strings.HasSuffix(r.URL.Path, ":subscribe") {
				for i := range 3 {
					fmt.Fprintf(w, "data: %d\n\n", i)
					w.(http.Flusher).Flush()
				}
				return
			}
			_, _ = w.Write(body)
		})
	}
	var hh http.Handler = n.Handler(next)
	h.Store(&hh)
	return rs
}

// holdTaskA makes a hold context ctx-a, whose task task-a the task
// stores of a and b both know.
func holdTaskA(t testing.TB, a, b *replicaServer) {
	t.Helper()
	if _, err := a.Acquire(t.Context(), "ctx-a"); err != nil {
		t.Fatal(err)
	}
	a.tasks.tasks["task-a"] = "ctx-a"
	b.tasks.tasks["task-a"] = "ctx-a"
}

func post(t *testing.T, url, path, body string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer shared-token")
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = res.Body.Close() })
	return res
}

func TestForwarding(t *testing.T) {
	dsn := pgtest.Schema(t, "cluster", "agentry_cluster_test_")
	a, b := startReplica(t, dsn, "a"), startReplica(t, dsn, "b")
	holdTaskA(t, a, b)

	for _, tc := range []struct {
		name, method, path, body string
		want                     string // the replica that serves it
	}{
		{"1.0 send", http.MethodPost, "/", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"contextId":"ctx-a","messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`, "a"},
		{"0.3 send by task id", http.MethodPost, "/", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"taskId":"task-a","kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"yes"}]}}}`, "a"},
		{"1.0 get task", http.MethodPost, "/", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"task-a"}}`, "a"},
		{"0.3 cancel", http.MethodPost, "/", `{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"id":"task-a"}}`, "a"},
		{"push config by taskId", http.MethodPost, "/", `{"jsonrpc":"2.0","id":1,"method":"GetTaskPushNotificationConfig","params":{"taskId":"task-a","id":"cfg"}}`, "a"},
		{"commands/get of a's context", http.MethodPost, "/", `{"jsonrpc":"2.0","id":1,"method":"commands/get","params":{"context_id":"ctx-a"}}`, "a"},
		{"commands/get", http.MethodPost, "/", `{"jsonrpc":"2.0","id":1,"method":"commands/get"}`, "b"},
		{"command/execute", http.MethodPost, "/", `{"jsonrpc":"2.0","id":1,"method":"command/execute","params":{"command_path":["stats"],"context_id":"ctx-a"}}`, "a"},
		{"REST send", http.MethodPost, "/rest/message:send", `{"message":{"context_id":"ctx-a","messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, "a"},
		{"REST cancel", http.MethodPost, "/rest/tasks/task-a:cancel", `{}`, "a"},
		{"new context", http.MethodPost, "/", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`, "b"},
		{"unknown task", http.MethodPost, "/", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}`, "b"},
		{"list", http.MethodPost, "/", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`, "b"},
		{"list of a's context", http.MethodPost, "/", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"contextId":"ctx-a"}}`, "a"},
		{"0.3 list of a's context", http.MethodPost, "/", `{"jsonrpc":"2.0","id":1,"method":"tasks/list","params":{"contextId":"ctx-a"}}`, "a"},
		{"REST list of a's context", http.MethodGet, "/rest/tasks?contextId=ctx-a", ``, "a"},
		{"REST list", http.MethodGet, "/rest/tasks", ``, "b"},
		{"malformed", http.MethodPost, "/", `{"jsonrpc":`, "b"},
		{"ws of a's context", http.MethodGet, "/ws?contextId=ctx-a", ``, "a"},
		{"ws without context", http.MethodGet, "/ws", ``, "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), tc.method, b.srv.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer shared-token")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(res.Body)
			_ = res.Body.Close()
			if by := res.Header.Get("X-Served-By"); by != tc.want {
				t.Fatalf("served by %q (status %d, %s), want %q", by, res.StatusCode, got, tc.want)
			}
			if string(got) != tc.body {
				t.Fatalf("the handler read %q, want the request's body %q", got, tc.body)
			}
			wantFwd := ""
			if tc.want == "a" {
				wantFwd = "b"
			}
			if f := res.Header.Get("X-Saw-Forwarded"); f != wantFwd {
				t.Fatalf("%s = %q, want %q", ForwardedHeader, f, wantFwd)
			}
			if au := res.Header.Get("X-Saw-Authorization"); au != "Bearer shared-token" {
				t.Fatalf("the serving replica saw Authorization %q", au)
			}
		})
	}

	t.Run("stream", func(t *testing.T) {
		res := post(t, b.srv.URL, "/rest/tasks/task-a:subscribe", "")
		if res.Header.Get("X-Served-By") != "a" {
			t.Fatalf("served by %q", res.Header.Get("X-Served-By"))
		}
		sc := bufio.NewScanner(res.Body)
		var events []string
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events = append(events, d)
			}
		}
		if strings.Join(events, ",") != "0,1,2" {
			t.Fatalf("events %v", events)
		}
	})

	t.Run("not forwarded twice", func(t *testing.T) {
		before := a.served.Load()
		res := post(t, b.srv.URL, "/", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"task-a"}}`, ForwardedHeader, "c")
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "not forwarded again") || !strings.Contains(string(body), a.srv.URL) {
			t.Fatalf("status %d, body %s; want 503 naming the owner's URL and the loop guard", res.StatusCode, body)
		}
		if a.served.Load() != before {
			t.Fatal("the request reached a")
		}
	})

	t.Run("owner dead", func(t *testing.T) {
		breakLeaseConn(t, dsn, a.Node)
		a.srv.Close()
		// Until PostgreSQL frees a's lease, b finds a's address refusing
		// and waits for the lease on its (test) clock: fire it.
		proctest.Eventually(t, "b takes ctx-a over", func() bool {
			done := make(chan *http.Response, 1)
			go func() {
				done <- post(t, b.srv.URL, "/", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"task-a"}}`)
			}()
			for {
				select {
				case res := <-done:
					return res.Header.Get("X-Served-By") == "b"
				default:
				}
				if b.timers.Pending(takeoverPoll) > 0 {
					b.timers.Fire(t, takeoverPoll)
				}
				select {
				case res := <-done:
					return res.Header.Get("X-Served-By") == "b"
				case <-time.After(time.Millisecond): // a poll, not a bound
				}
			}
		})
		if err := b.Check("ctx-a"); err != nil {
			t.Fatalf("b does not hold ctx-a after taking it over: %v", err)
		}
	})
}

// TestForwardToUnreachableOwner: an owner whose lease lives but whose
// address does not answer gets a 502 naming it.
func TestForwardToUnreachableOwner(t *testing.T) {
	dsn := pgtest.Schema(t, "cluster", "agentry_cluster_test_")
	a, b := startReplica(t, dsn, "a"), startReplica(t, dsn, "b")
	if _, err := a.Acquire(t.Context(), "ctx-a"); err != nil {
		t.Fatal(err)
	}
	a.srv.Close()
	// a's lease lives on (its connection to PostgreSQL does): b waits
	// for it to be freed, then gives up.
	done := make(chan *http.Response, 1)
	go func() {
		done <- post(t, b.srv.URL, "/", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"contextId":"ctx-a"}}}`)
	}()
	for range takeoverTries {
		b.timers.Fire(t, takeoverPoll)
	}
	res := <-done
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), a.srv.URL) {
		t.Fatalf("status %d, body %s", res.StatusCode, body)
	}
}

// TestForwardTakesOverAnUnreachableDeadHolder: the holder cannot be
// reached, and once PostgreSQL frees its lease (its connection ended)
// the replica the request reached takes the context over and serves the
// request itself, body and all.
func TestForwardTakesOverAnUnreachableDeadHolder(t *testing.T) {
	dsn := pgtest.Schema(t, "cluster", "agentry_cluster_test_")
	a, b := startReplica(t, dsn, "a"), startReplica(t, dsn, "b")
	if _, err := a.Acquire(t.Context(), "ctx-a"); err != nil {
		t.Fatal(err)
	}
	a.srv.Close()
	const msg = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"contextId":"ctx-a"}}}`
	done := make(chan *http.Response, 1)
	go func() { done <- post(t, b.srv.URL, "/", msg) }()
	b.timers.Fire(t, takeoverPoll) // a's lease still held: b waits
	b.timers.Await(t, takeoverPoll)
	breakLeaseConn(t, dsn, a.Node)
	// PostgreSQL frees the lock as the session ends; b polls until then.
	var res *http.Response
	for res == nil {
		b.timers.Fire(t, takeoverPoll)
		proctest.Eventually(t, "b's next poll or its answer", func() bool {
			select {
			case res = <-done:
				return true
			default:
				return b.timers.Pending(takeoverPoll) > 0
			}
		})
	}
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || res.Header.Get("X-Served-By") != "b" || string(body) != msg {
		t.Fatalf("status %d by %q, body %s", res.StatusCode, res.Header.Get("X-Served-By"), body)
	}
	if got := b.tasks.failures(); !slices.Equal(got, []string{"ctx-a"}) {
		t.Errorf("b failed the unfinished tasks of %v, want [ctx-a]", got)
	}
}
