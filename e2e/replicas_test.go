package e2e

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/genai"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/agentry-dev/agentry/cluster"
	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/internal/pgtest"
	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/protocol/wsclient"
)

const replicasToken = "e2e-replicas-token-0123456789abcdef"

// clusterEnv is an environment whose agentry serve processes are
// replicas sharing a fresh PostgreSQL schema, on a fake Gemini server.
func clusterEnv(t *testing.T) (*env, string, *fakegemini.Server) {
	t.Helper()
	dsn := pgtest.Schema(t, "replicas", "agentry_e2e_replicas_")
	fake := fakegemini.New(t)
	e := newEnv(t)
	e.geminiEnv(fake)
	e.set("AGENTRY_A2A_TOKEN=" + replicasToken)
	settings, _ := json.Marshal(map[string]any{
		"session": map[string]any{"store": "postgres", "postgresDsn": dsn},
		"cluster": map[string]any{"enabled": true},
	})
	e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), string(settings))
	return e, dsn, fake
}

// startReplicas starts n agentry serve processes at once (they migrate
// the empty schema together) and waits until each listens.
func (e *env) startReplicas(n int, args ...string) []*serveProc {
	e.t.Helper()
	procs := make([]*serveProc, n)
	for i := range procs {
		procs[i] = e.launchServe(e.cmd(append([]string{"serve", "--port", "0", "-w", e.ws}, args...)...))
	}
	for _, s := range procs {
		s.waitListening(60 * time.Second)
	}
	return procs
}

// plainTransport adds the token only: the client is a plain A2A client,
// whose confirmations are plain-text questions answered yes.
type plainTransport struct{}

func (plainTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+replicasToken)
	return http.DefaultTransport.RoundTrip(r)
}

func a2aClient(t *testing.T, url string) *a2aclient.Client {
	t.Helper()
	return a2aClientTB(t, url)
}

// TestServeReplicas: three agentry serve replicas on one PostgreSQL
// schema, every request sent to a replica picked at random: a context's
// turns, a confirmation and a resubscribe go wherever they land and are
// served by the context's replica; SIGKILL of that replica in the middle
// of a turn fails the task with a clear message when another replica
// takes the context over, the next message runs there with the history
// intact, and no turn or tool call ran twice.
func TestServeReplicas(t *testing.T) {
	e, dsn, fake := clusterEnv(t)
	fake.Enqueue(
		fakegemini.Text("Noted: kiwi."),
		fakegemini.Stream(genai.NewPartFromText("Writing it."), genai.NewPartFromFunctionCall("run_shell_command", map[string]any{"command": "echo ran >> side.txt"})),
		fakegemini.Text("Wrote it."),
		fakegemini.Slow(fakegemini.Text("one ", "two ", "three ", "four"), 300*time.Millisecond),
		fakegemini.Hang("Thinking"),
		fakegemini.Text("The word was kiwi."),
	)
	procs := e.startReplicas(3, "-m", "gemini-2.5-flash")
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Started at once on an empty schema, the replicas migrated it once.
	for table, want := range map[string]int{"schema_version": -1, "a2a_schema_version": 1, "agentry_cluster_schema_version": cluster.SchemaVersion} {
		var rows, distinct int
		if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*), COUNT(DISTINCT version) FROM `+table).Scan(&rows, &distinct); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		if rows == 0 || rows != distinct || (want > 0 && rows != want) {
			t.Fatalf("%s holds %d rows for %d versions: the concurrent starts migrated more than once", table, rows, distinct)
		}
	}

	live := append([]*serveProc(nil), procs...)
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	// pick is a random live replica, but never the context's owner when
	// elsewhere is set: those requests must be forwarded.
	var ctxID string
	pick := func(what string, elsewhere bool) *a2aclient.Client {
		t.Helper()
		cands := live
		if elsewhere {
			owner := ownerOf(t, db, ctxID)
			cands = nil
			for _, s := range live {
				if s.url != owner {
					cands = append(cands, s)
				}
			}
		}
		s := cands[rng.IntN(len(cands))]
		t.Logf("%s → %s", what, s.url)
		return a2aClient(t, s.url)
	}
	send := func(what string, elsewhere bool, m *a2a.Message, cfg *a2a.SendMessageConfig) *a2a.Task {
		t.Helper()
		res, err := pick(what, elsewhere).SendMessage(t.Context(), &a2a.SendMessageRequest{Message: m, Config: cfg})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		task, ok := res.(*a2a.Task)
		if !ok {
			t.Fatalf("%s: %#v, want a task", what, res)
		}
		return task
	}
	msg := func(ctxID, taskID, text string) *a2a.Message {
		m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
		m.ContextID, m.TaskID = ctxID, a2a.TaskID(taskID)
		return m
	}

	// Turn 1 starts the context on whichever replica it lands.
	first := send("turn 1", false, msg("", "", "Remember the word kiwi."), nil)
	if first.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("turn 1: %s", first.Status.State)
	}
	ctxID = first.ContextID

	owner := ownerOf(t, db, ctxID)

	// A /ws connection naming the context at another replica is
	// forwarded: that replica has no session for it and would answer 404.
	for _, s := range live {
		if s.url == owner {
			continue
		}
		conn, err := wsclient.Dial(t.Context(), "ws://"+strings.TrimPrefix(s.url, "http://")+"/ws", wsclient.Options{Token: replicasToken, ContextID: ctxID})
		if err != nil {
			t.Fatalf("/ws?contextId at a replica not holding the context: %v", err)
		}
		_ = conn.Close()
		break
	}

	// Turn 2 asks for a confirmation; the answer lands anywhere.
	parked := send("turn 2", false, msg(ctxID, "", "Write the side file."), nil)
	if parked.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("turn 2: %s, want input-required", parked.Status.State)
	}
	done := send("turn 2's answer", true, msg(ctxID, string(parked.ID), "yes"), nil)
	if done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("turn 2 after yes: %s %+v", done.Status.State, done.Status.Message)
	}

	// Turn 3 returns at once and is followed through another replica.
	streaming := send("turn 3", false, msg(ctxID, "", "Count to four."), &a2a.SendMessageConfig{ReturnImmediately: true})
	var final a2a.TaskState
	var text strings.Builder
	sawLive := false
	for ev, err := range pick("turn 3's resubscribe", true).SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: streaming.ID}) {
		if err != nil {
			t.Fatalf("resubscribe: %v", err)
		}
		switch ev := ev.(type) {
		case *a2a.TaskStatusUpdateEvent:
			final = ev.Status.State
		case *a2a.TaskArtifactUpdateEvent:
			for _, p := range ev.Artifact.Parts {
				text.WriteString(p.Text())
			}
			if !sawLive {
				// The turn is under way on its replica: a gRPC GetTask
				// at another one is forwarded there and sees the
				// answer so far, which only the holder has.
				// (Read until the holder's copy has the artifact the
				// event announced; the turn goes on for three more
				// chunks, so a working task with no artifact past them
				// means the read was not forwarded.)
				sawLive = true
				other := grpcClient(t, otherThan(t, db, ctxID, live).url)
				for {
					got, err := other.GetTask(t.Context(), &a2a.GetTaskRequest{ID: streaming.ID})
					if err != nil {
						t.Fatalf("gRPC GetTask at a replica not holding the context: %v", err)
					}
					if got.Status.State == a2a.TaskStateWorking && len(got.Artifacts) > 0 {
						break
					}
					if got.Status.State != a2a.TaskStateWorking {
						t.Fatalf("gRPC GetTask at a replica not holding the context: %s with %d artifacts, want the running task's artifact", got.Status.State, len(got.Artifacts))
					}
				}
			}
		case *a2a.Task:
			final = ev.Status.State
		}
	}
	if final != a2a.TaskStateCompleted || !strings.Contains(text.String(), "four") {
		t.Fatalf("turn 3 through a resubscribe: %s, %q", final, text.String())
	}

	// Turn 4 hangs in its model call; its replica is killed.
	hanging := send("turn 4", false, msg(ctxID, "", "Think hard."), &a2a.SendMessageConfig{ReturnImmediately: true})
	if _, err := fake.WaitRequests(t.Context(), 5); err != nil {
		t.Fatal(err)
	}
	ownerURL := ownerOf(t, db, ctxID)
	live = live[:0]
	for _, s := range procs {
		if s.url == ownerURL {
			if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-s.waited
			t.Logf("killed the owner %s", s.url)
			continue
		}
		live = append(live, s)
	}
	if len(live) != 2 {
		t.Fatalf("owner %s is none of the replicas", ownerURL)
	}
	var failed *a2a.Task
	proctest.Eventually(t, "the killed turn's task fails", func() bool {
		got, err := pick("get turn 4", false).GetTask(t.Context(), &a2a.GetTaskRequest{ID: hanging.ID})
		if err != nil {
			t.Logf("get turn 4: %v", err)
			return false
		}
		failed = got
		return got.Status.State == a2a.TaskStateFailed
	})
	if m := failed.Status.Message; m == nil || m.Parts[0].Text() != cluster.TakeoverMessage {
		t.Fatalf("turn 4 failed with %+v, want %q", failed.Status.Message, cluster.TakeoverMessage)
	}

	// Turn 5 runs on a surviving replica with the whole history.
	last := send("turn 5", false, msg(ctxID, "", "What was the word?"), nil)
	if last.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("turn 5: %s %+v", last.Status.State, last.Status.Message)
	}
	reqs := fake.Requests()
	if len(reqs) != 6 || fake.Pending() != 0 {
		t.Fatalf("%d model requests, %d steps left; want each of the 6 turns' calls once", len(reqs), fake.Pending())
	}
	var history strings.Builder
	for _, c := range reqs[5].Body.Contents {
		for _, p := range c.Parts {
			history.WriteString(p.Text + "|")
		}
	}
	for _, want := range []string{"Remember the word kiwi.", "Noted: kiwi.", "Write the side file.", "Wrote it.", "Count to four.", "four", "Think hard.", "What was the word?"} {
		if !strings.Contains(history.String(), want) {
			t.Errorf("turn 5's request lacks %q: %s", want, history.String())
		}
	}
	side, err := os.ReadFile(filepath.Join(e.ws, "side.txt"))
	if err != nil || string(side) != "ran\n" {
		t.Fatalf("side.txt = %q, %v; want the approved command run once", side, err)
	}

	// SIGTERM: the owner releases its leases and leaves the registry.
	owner = ownerOf(t, db, ctxID)
	for _, s := range live {
		if s.url != owner {
			continue
		}
		if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		<-s.waited
		if code := s.cmd.ProcessState.ExitCode(); code != 0 {
			t.Fatalf("SIGTERM: exit %d\n%s", code, s.errText())
		}
	}
	var replicas, owned int
	if err := db.QueryRowContext(t.Context(), `SELECT (SELECT COUNT(*) FROM agentry_replicas WHERE url = $1), (SELECT COUNT(*) FROM agentry_context_owners WHERE context_id = $2)`, owner, ctxID).Scan(&replicas, &owned); err != nil {
		t.Fatal(err)
	}
	if replicas != 0 || owned != 0 {
		t.Fatalf("after SIGTERM the registry holds the replica %d times and the context's owner %d times, want none", replicas, owned)
	}
}

// TestServeReplicasNeedPostgres: cluster.enabled without the shared
// PostgreSQL store is refused, saying what to set.
func TestServeReplicasNeedPostgres(t *testing.T) {
	e := newEnv(t)
	e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), `{"cluster": {"enabled": true}}`)
	r := e.run("", "serve", "--port", "0", "-w", e.ws)
	if r.code == 0 || !strings.Contains(r.stderr, "cluster.enabled needs the replicas' shared database: set session.store to postgres and session.postgresDsn") {
		t.Fatalf("serve: exit %d\n%s", r.code, r.stderr)
	}
}

// ownerOf is the advertised URL of the replica holding the context.
func ownerOf(t *testing.T, db *sql.DB, contextID string) string {
	t.Helper()
	var url string
	if err := db.QueryRowContext(t.Context(), `SELECT r.url FROM agentry_context_owners o JOIN agentry_replicas r USING (replica_id) WHERE o.context_id = $1`, contextID).Scan(&url); err != nil {
		t.Fatalf("the owner of context %s: %v", contextID, err)
	}
	return url
}

// BenchmarkServeReplicaForward: tasks/get of a finished task of a context
// held by replica a, sent to a (served there) and to b (which resolves
// the task's context, finds a's lease and forwards the request): two
// agentry serve processes on one PostgreSQL schema. It reports both p50s
// and what forwarding adds (budget: 2 ms at p50), for JSON-RPC and for
// gRPC GetTask (the grpc- metrics).
func BenchmarkServeReplicaForward(b *testing.B) {
	dsn := pgtest.Schema(b, "replicas", "agentry_e2e_replicas_")
	fake := fakegemini.New(b)
	fake.Enqueue(fakegemini.Text("Hello."))
	home, ws := b.TempDir(), b.TempDir()
	settings, _ := json.Marshal(map[string]any{
		"session": map[string]any{"store": "postgres", "postgresDsn": dsn},
		"cluster": map[string]any{"enabled": true},
	})
	if err := os.MkdirAll(filepath.Join(home, ".agentry"), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".agentry", "settings.json"), settings, 0o600); err != nil {
		b.Fatal(err)
	}
	urls := make([]string, 2)
	for i := range urls {
		c := osexec.Command(binary, "serve", "--port", "0", "-w", ws, "-m", "gemini-2.5-flash")
		c.Dir = ws
		c.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "AGENTRY_A2A_TOKEN=" + replicasToken,
			"GEMINI_API_KEY=" + fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL=" + fake.URL}
		stderr, err := c.StderrPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				urls[i] = m[1]
				break
			}
		}
		if urls[i] == "" {
			b.Fatal("a replica exited before listening")
		}
		go func() { _, _ = io.Copy(io.Discard, stderr) }()
	}
	res, err := a2aClientTB(b, urls[0]).SendMessage(b.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))})
	if err != nil {
		b.Fatal(err)
	}
	task := res.(*a2a.Task)
	body := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"` + string(task.ID) + `"}}`
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	get := func(url string) time.Duration {
		start := time.Now()
		req, _ := http.NewRequest(http.MethodPost, url+"/", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+replicasToken)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(got), `"TASK_STATE_COMPLETED"`) {
			b.Fatalf("tasks/get: %d %s", res.StatusCode, got)
		}
		return time.Since(start)
	}
	// The same over gRPC, with a2a-go's client: GetTask at a, and at b,
	// which reads the call's first message, resolves the task's context
	// and forwards the call over HTTP/2.
	grpcs := []*a2aclient.Client{grpcClient(b, urls[0]), grpcClient(b, urls[1])}
	getGRPC := func(i int) time.Duration {
		start := time.Now()
		got, err := grpcs[i].GetTask(b.Context(), &a2a.GetTaskRequest{ID: task.ID})
		if err != nil || got.Status.State != a2a.TaskStateCompleted {
			b.Fatalf("gRPC GetTask: %v, %v", got, err)
		}
		return time.Since(start)
	}
	for range 50 {
		get(urls[0])
		get(urls[1])
		getGRPC(0)
		getGRPC(1)
	}
	var direct, forwarded, directGRPC, forwardedGRPC []time.Duration
	for b.Loop() {
		direct = append(direct, get(urls[0]))
		forwarded = append(forwarded, get(urls[1]))
		directGRPC = append(directGRPC, getGRPC(0))
		forwardedGRPC = append(forwardedGRPC, getGRPC(1))
	}
	p := func(s []time.Duration, q float64) time.Duration { return s[int(float64(len(s)-1)*q)] }
	report := func(prefix string, direct, forwarded []time.Duration) {
		slices.Sort(direct)
		slices.Sort(forwarded)
		b.ReportMetric(float64(p(direct, 0.5).Microseconds()), prefix+"direct-p50-µs")
		b.ReportMetric(float64(p(forwarded, 0.5).Microseconds()), prefix+"forwarded-p50-µs")
		b.ReportMetric(float64((p(forwarded, 0.5) - p(direct, 0.5)).Microseconds()), prefix+"added-p50-µs")
		b.ReportMetric(float64((p(forwarded, 0.99) - p(direct, 0.99)).Microseconds()), prefix+"added-p99-µs")
	}
	report("", direct, forwarded)
	report("grpc-", directGRPC, forwardedGRPC)
}

func a2aClientTB(tb testing.TB, url string) *a2aclient.Client {
	tb.Helper()
	c, err := a2aclient.NewFromEndpoints(tb.Context(), []*a2a.AgentInterface{a2a.NewAgentInterface(url+"/", a2a.TransportProtocolJSONRPC)},
		a2aclient.WithJSONRPCTransport(&http.Client{Transport: plainTransport{}}))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// grpcClient is an a2a-go gRPC client of a replica, with the token.
func grpcClient(tb testing.TB, url string) *a2aclient.Client {
	tb.Helper()
	c, err := a2aclient.NewFromEndpoints(tb.Context(), []*a2a.AgentInterface{a2a.NewAgentInterface("dns:///"+strings.TrimPrefix(url, "http://"), a2a.TransportProtocolGRPC)},
		a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(grpcToken{})))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = c.Destroy() })
	return c
}

// otherThan is a replica of procs not holding the context's lease.
func otherThan(t *testing.T, db *sql.DB, contextID string, procs []*serveProc) *serveProc {
	t.Helper()
	owner := ownerOf(t, db, contextID)
	for _, s := range procs {
		if s.url != owner {
			return s
		}
	}
	t.Fatalf("every replica holds context %s", contextID)
	return nil
}

// TestServeReplicasLive: `agentry a2a` with its default transport (auto:
// the card offers SendLiveMessage) sent to a replica that does not hold
// the conversation's context: the live stream is forwarded to the holder
// and both confirmations of the turn are answered on it.
func TestServeReplicasLive(t *testing.T) {
	e, dsn, fake := clusterEnv(t)
	fake.Enqueue(
		fakegemini.Text("Noted."),
		fakegemini.Stream(genai.NewPartFromText("I'll run it."), genai.NewPartFromFunctionCall("run_shell_command", map[string]any{"command": "echo one >> proof.txt"})),
		fakegemini.Stream(genai.NewPartFromFunctionCall("run_shell_command", map[string]any{"command": "echo two >> proof.txt"})),
		fakegemini.Text("Done."),
	)
	procs := e.startReplicas(3, "-m", "gemini-2.5-flash")
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	res, err := a2aClient(t, procs[0].url).SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Remember kiwi."))})
	if err != nil {
		t.Fatal(err)
	}
	ctxID := res.(*a2a.Task).ContextID
	owner := ownerOf(t, db, ctxID)
	other := otherThan(t, db, ctxID, procs)

	r := e.a2a("y\ny\n", "--context", ctxID, other.url, "run", "the", "commands")
	if r.code != 0 || r.stdout != "I'll run it.\nDone.\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	wantStderr(t, r, "agentry over SendLiveMessage on GRPC 1.0 at dns:///"+strings.TrimPrefix(other.url, "http://")+"\n",
		"? run_shell_command needs your approval\n  command: echo one >> proof.txt",
		"? run_shell_command needs your approval\n  command: echo two >> proof.txt",
		"✓ run_shell_command\n")
	if e.proof() != "one\ntwo\n" {
		t.Fatalf("proof.txt = %q: both confirmed commands should have run once", e.proof())
	}
	if got := ownerOf(t, db, ctxID); got != owner {
		t.Fatalf("the context moved from %s to %s", owner, got)
	}
	m := summaryRE.FindStringSubmatch(r.stderr)
	if m == nil || m[1] != ctxID {
		t.Fatalf("no summary naming context %s:\n%s", ctxID, r.stderr)
	}
	reqs := fake.Requests()
	last, _ := json.Marshal(reqs[len(reqs)-1].Body.Contents)
	if !strings.Contains(string(last), "Remember kiwi.") {
		t.Errorf("the turn did not run with the context's history: %s", last)
	}

	// The finished task, read over gRPC at the third replica.
	third := procs[0]
	for _, s := range procs {
		if s.url != owner && s.url != other.url {
			third = s
		}
	}
	got, err := grpcClient(t, third.url).GetTask(t.Context(), &a2a.GetTaskRequest{ID: a2a.TaskID(m[2])})
	if err != nil || got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("gRPC GetTask at %s: %v, %v", third.url, got, err)
	}
}

// grpcToken sends the replicas' token with every gRPC call.
type grpcToken struct{}

func (grpcToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + replicasToken}, nil
}

func (grpcToken) RequireTransportSecurity() bool { return false }

// TestServeReplicaLosesLease: the replica running a turn loses its lease
// connection (PostgreSQL ends it) while the turn waits on the model: the
// replica counts the context lost and stops the turn, another replica
// takes the context on its next request, and the next message runs there
// with the history; the stopped turn never completes.
func TestServeReplicaLosesLease(t *testing.T) {
	e, dsn, fake := clusterEnv(t)
	fake.Enqueue(fakegemini.Text("Noted: plum."), fakegemini.Hang("Thinking"), fakegemini.Text("The fruit was plum."), fakegemini.Text("Still plum."))
	procs := e.startReplicas(2, "-m", "gemini-2.5-flash")
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c0 := a2aClient(t, procs[0].url)
	res, err := c0.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Remember plum."))})
	if err != nil {
		t.Fatal(err)
	}
	ctxID := res.(*a2a.Task).ContextID
	if owner := ownerOf(t, db, ctxID); owner != procs[0].url {
		t.Fatalf("a new context's owner is %s, want the replica it was sent to, %s", owner, procs[0].url)
	}
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Think."))
	m.ContextID = ctxID
	res, err = c0.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: m, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	hanging := res.(*a2a.Task)
	if _, err := fake.WaitRequests(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	var id string
	if err := db.QueryRowContext(t.Context(), `SELECT replica_id FROM agentry_replicas WHERE url = $1`, procs[0].url).Scan(&id); err != nil {
		t.Fatal(err)
	}
	var ended int
	if err := db.QueryRowContext(t.Context(), `SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, cluster.LeaseApplicationName(id)).Scan(&ended); err != nil || ended != 1 {
		t.Fatalf("ending the lease connection: %d, %v", ended, err)
	}
	procs[0].waitFor(regexp.MustCompile(`lease connection broke`))

	c1 := a2aClient(t, procs[1].url)
	var got *a2a.Task
	proctest.Eventually(t, "the stopped turn's task ends", func() bool {
		got, err = c1.GetTask(t.Context(), &a2a.GetTaskRequest{ID: hanging.ID})
		return err == nil && got.Status.State.Terminal()
	})
	if got.Status.State == a2a.TaskStateCompleted {
		t.Fatalf("the stopped turn completed: %+v", got.Status)
	}
	if got.Status.Message != nil && len(got.Status.Message.Parts) > 0 {
		t.Logf("the stopped turn: %s: %s", got.Status.State, got.Status.Message.Parts[0].Text())
	}

	// The next message, sent to the replica that lost the context, runs
	// on the one that took it.
	m = a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Which fruit?"))
	m.ContextID = ctxID
	res, err = c0.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: m})
	if err != nil {
		t.Fatal(err)
	}
	if task := res.(*a2a.Task); task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("the next message: %s %+v", task.Status.State, task.Status.Message)
	}
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	var history strings.Builder
	for _, c := range reqs[2].Body.Contents {
		for _, p := range c.Parts {
			history.WriteString(p.Text + "|")
		}
	}
	if !strings.Contains(history.String(), "Remember plum.") || !strings.Contains(history.String(), "Noted: plum.") {
		t.Fatalf("the next message's request lacks the history: %s", history.String())
	}

	// The replica that took the context dies; the first one takes it
	// back and reads the turns it missed, not its stale copy.
	if err := procs[1].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-procs[1].waited
	m = a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("And now?"))
	m.ContextID = ctxID
	proctest.Eventually(t, "the first replica takes the context back", func() bool {
		res, err = c0.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: m})
		if err != nil {
			t.Logf("send: %v", err)
		}
		return err == nil
	})
	if task := res.(*a2a.Task); task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("the message after the takeback: %s %+v", task.Status.State, task.Status.Message)
	}
	reqs = fake.Requests()
	history.Reset()
	for _, c := range reqs[len(reqs)-1].Body.Contents {
		for _, p := range c.Parts {
			history.WriteString(p.Text + "|")
		}
	}
	if len(reqs) != 4 || !strings.Contains(history.String(), "Which fruit?") || !strings.Contains(history.String(), "The fruit was plum.") {
		t.Fatalf("%d requests; the last lacks the other replica's turn: %s", len(reqs), history.String())
	}
}

// TestServeReplicasWSRelay: a /ws connection opened without contextId at
// a replica that does not hold the context its first message names is
// relayed to the holder, which runs the turn with the context's history;
// the connection then follows that context there.
func TestServeReplicasWSRelay(t *testing.T) {
	e, dsn, fake := clusterEnv(t)
	fake.Enqueue(fakegemini.Text("Noted."), fakegemini.Text("Relayed."))
	live := e.startReplicas(2, "-m", "gemini-2.5-flash")
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := a2aClient(t, live[0].url).SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Remember the word fig."))})
	if err != nil {
		t.Fatal(err)
	}
	first := res.(*a2a.Task)
	holder := ownerOf(t, db, first.ContextID)
	other := live[0]
	if other.url == holder {
		other = live[1]
	}
	conn, err := wsclient.Dial(t.Context(), "ws://"+strings.TrimPrefix(other.url, "http://")+"/ws", wsclient.Options{Token: replicasToken})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("What was the word?"))
	m.ContextID = first.ContextID
	var got struct {
		Task *a2a.Task `json:"task"`
	}
	if err := conn.Call(t.Context(), "SendMessage", map[string]any{"message": m}, &got); err != nil {
		t.Fatalf("SendMessage on /ws at the replica not holding the context: %v\nits stderr:\n%s", err, other.errText())
	}
	if got.Task == nil || got.Task.ContextID != first.ContextID || got.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("the relayed turn: %+v", got.Task)
	}
	if h := ownerOf(t, db, first.ContextID); h != holder {
		t.Fatalf("the context moved from %s to %s", holder, h)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || !strings.Contains(userTextsOf(reqs[1]), "Remember the word fig.") {
		t.Fatalf("%d model requests; the relayed turn's request lacks the first turn", len(reqs))
	}
}
