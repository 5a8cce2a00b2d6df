package e2e

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/cluster"
	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/internal/proctest"
)

// TestServeReplicasEventLog: a subscriber on a replica that does not
// hold the context is served from the event log in PostgreSQL: it gets
// every event of a 200-delta turn, in order, with no gap or duplicate,
// the same as a late subscriber replays; and when the holder is killed
// in the middle of a turn, a subscriber on the other replica gets the
// events from before the kill, then the takeover failure.
func TestServeReplicasEventLog(t *testing.T) {
	e, dsn, fake := clusterEnv(t)
	var words, hang []string
	for i := range 200 {
		words = append(words, fmt.Sprintf("w%03d ", i))
	}
	for i := range 20 {
		hang = append(hang, fmt.Sprintf("h%02d ", i))
	}
	fake.Enqueue(fakegemini.Slow(fakegemini.Text(words...), 2*time.Millisecond), fakegemini.Hang(hang...))
	procs := e.startReplicas(2, "-m", "gemini-2.5-flash")
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	logged := func(task a2a.TaskID) int {
		var n int
		if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM agentry_task_events WHERE task_id = $1`, string(task)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	holder, other := a2aClient(t, procs[0].url), a2aClient(t, procs[1].url)
	send := func(text, ctxID string) *a2a.Task {
		t.Helper()
		m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
		m.ContextID = ctxID
		res, err := holder.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: m, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
		if err != nil {
			t.Fatal(err)
		}
		task, ok := res.(*a2a.Task)
		if !ok {
			t.Fatalf("%#v, want a task", res)
		}
		return task
	}
	// subscribe follows a task at the other replica, sending each event
	// as its stream-response JSON.
	subscribe := func(task a2a.TaskID) <-chan a2a.Event {
		out := make(chan a2a.Event, 1024)
		go func() {
			defer close(out)
			for ev, err := range other.SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: task}) {
				if err != nil {
					t.Errorf("subscribe %s: %v", task, err)
					return
				}
				out <- ev
			}
		}()
		return out
	}
	encode := func(ev a2a.Event) string {
		b, err := json.Marshal(a2a.StreamResponse{Event: ev})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	text := func(evs []string) string {
		var b strings.Builder
		for _, s := range evs {
			var sr a2a.StreamResponse
			if err := json.Unmarshal([]byte(s), &sr); err != nil {
				t.Fatal(err)
			}
			if u, ok := sr.Event.(*a2a.TaskArtifactUpdateEvent); ok {
				for _, p := range u.Artifact.Parts {
					b.WriteString(p.Text())
				}
			}
		}
		return b.String()
	}

	// Turn 1: 200 deltas, followed at the replica not running it.
	first := send("Count.", "")
	proctest.Eventually(t, "turn 1 logged", func() bool { return logged(first.ID) > 0 })
	var live []string
	for ev := range subscribe(first.ID) {
		live = append(live, encode(ev))
	}
	if got, want := text(live), strings.Join(words, ""); got != want {
		t.Fatalf("the subscriber's answer:\n%q\nwant\n%q", got, want)
	}
	var last a2a.StreamResponse
	_ = json.Unmarshal([]byte(live[len(live)-1]), &last)
	if u, ok := last.Event.(*a2a.TaskStatusUpdateEvent); !ok || u.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("last event %s", live[len(live)-1])
	}
	if n := logged(first.ID); n != len(live) {
		t.Fatalf("the log holds %d events, the subscriber got %d", n, len(live))
	}
	if ownerOf(t, db, first.ContextID) != procs[0].url {
		t.Fatalf("the context is not held by the replica the message reached")
	}
	// A late subscriber replays the same events.
	var late []string
	for ev := range subscribe(first.ID) {
		late = append(late, encode(ev))
	}
	if strings.Join(late, "\n") != strings.Join(live, "\n") {
		t.Fatalf("a late subscriber got %d events, unlike the live one's %d", len(late), len(live))
	}
	// So does one over gRPC.
	late = late[:0]
	for ev, err := range grpcClient(t, procs[1].url).SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: first.ID}) {
		if err != nil {
			t.Fatalf("gRPC subscribe: %v", err)
		}
		late = append(late, encode(ev))
	}
	if strings.Join(late, "\n") != strings.Join(live, "\n") {
		t.Fatalf("a late gRPC subscriber got %d events, unlike the live one's %d", len(late), len(live))
	}

	// Turn 2 hangs after 20 deltas; its replica is killed.
	hanging := send("Think.", first.ContextID)
	sub := subscribeWhenLogged(t, logged, hanging.ID, subscribe)
	var got strings.Builder
	var before int
	for !strings.Contains(got.String(), hang[len(hang)-1]) {
		ev, ok := <-sub
		if !ok {
			t.Fatalf("the subscription ended before the hang; got %q", got.String())
		}
		before++
		if u, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			for _, p := range u.Artifact.Parts {
				got.WriteString(p.Text())
			}
		}
	}
	if got.String() != strings.Join(hang, "") {
		t.Fatalf("before the kill: %q", got.String())
	}
	if err := procs[0].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-procs[0].waited
	var rest []a2a.Event
	for ev := range sub {
		rest = append(rest, ev)
	}
	if len(rest) == 0 {
		t.Fatal("the subscription ended without the takeover failure")
	}
	end, ok := rest[len(rest)-1].(*a2a.TaskStatusUpdateEvent)
	if !ok || end.Status.State != a2a.TaskStateFailed || end.Status.Message == nil || end.Status.Message.Parts[0].Text() != cluster.TakeoverMessage {
		t.Fatalf("the subscription ended with %s", encode(rest[len(rest)-1]))
	}
	for _, ev := range rest[:len(rest)-1] {
		if u, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			t.Errorf("a delta after the hang: %s", encode(u))
		}
	}
	// The task store agrees.
	task, err := other.GetTask(t.Context(), &a2a.GetTaskRequest{ID: hanging.ID})
	if err != nil || task.Status.State != a2a.TaskStateFailed {
		t.Fatalf("the killed turn's task: %+v, %v", task, err)
	}
	// A late subscriber replays the events from before the kill, then the
	// failure.
	var replay int
	var replayEnd a2a.Event
	for ev := range subscribe(hanging.ID) {
		replay++
		replayEnd = ev
	}
	if replay != before+len(rest) || encode(replayEnd) != encode(end) {
		t.Fatalf("the replay has %d events ending %s; the live subscriber got %d then %d", replay, encode(replayEnd), before, len(rest))
	}
}

// subscribeWhenLogged subscribes to a task once its first event is in the
// log, so that the subscribe is served from the log, not forwarded.
func subscribeWhenLogged(t *testing.T, logged func(a2a.TaskID) int, task a2a.TaskID, subscribe func(a2a.TaskID) <-chan a2a.Event) <-chan a2a.Event {
	t.Helper()
	proctest.Eventually(t, "the task logged", func() bool { return logged(task) > 0 })
	return subscribe(task)
}
