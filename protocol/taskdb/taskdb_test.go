package taskdb_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"github.com/google/go-cmp/cmp"

	"github.com/agentry-dev/agentry/protocol/taskdb"
)

func TestCreateGet(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		db, dialect := b.connect(t)
		s := openOn(t, db, dialect, byUser())
		alice := as("alice")

		running := newTask(a2a.TaskStateWorking)
		if v := mustCreate(t, alice, s, running); v != 1 {
			t.Errorf("Create version = %d, want 1", v)
		}
		done := newTask(a2a.TaskStateCompleted)
		mustCreate(t, alice, s, done)

		for _, want := range []*a2a.Task{running, done} {
			got := mustGet(t, alice, s, want.ID)
			if diff := cmp.Diff(want, got.Task); diff != "" {
				t.Errorf("Get(%s) task (-want +got):\n%s", want.Status.State, diff)
			}
			if got.Version != 1 || got.User != "alice" {
				t.Errorf("Get(%s) = version %d user %q, want 1 alice", want.Status.State, got.Version, got.User)
			}
		}

		// Duplicates: a task in memory, one only in the database, and
		// both as a second Store on the database sees them.
		other := openOn(t, db, dialect, byUser(), taskdb.WithoutRecovery())
		for _, st := range []*taskdb.Store{s, other} {
			for _, task := range []*a2a.Task{running, done} {
				if _, err := st.Create(alice, task); !errors.Is(err, taskstore.ErrTaskAlreadyExists) {
					t.Errorf("Create(%s) again: %v, want ErrTaskAlreadyExists", task.Status.State, err)
				}
			}
		}
		if got := mustGet(t, alice, s, running.ID); got.Version != 1 {
			t.Errorf("a refused duplicate changed the task: version %d", got.Version)
		}

		if _, err := s.Get(alice, "no-such-task"); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("Get(unknown) = %v, want ErrTaskNotFound", err)
		}

		// Another user's tasks do not exist for bob.
		bob := as("bob")
		for _, task := range []*a2a.Task{running, done} {
			if _, err := s.Get(bob, task.ID); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("bob Get(%s) = %v, want ErrTaskNotFound", task.Status.State, err)
			}
			if _, err := s.Update(bob, &taskstore.UpdateRequest{Task: task}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("bob Update(%s) = %v, want ErrTaskNotFound", task.Status.State, err)
			}
		}
		list, err := s.List(bob, &a2a.ListTasksRequest{})
		if err != nil || len(list.Tasks) != 0 || list.TotalSize != 0 {
			t.Errorf("bob List = %+v, %v; want no tasks", list, err)
		}
	})
}

func TestCreateRefusesBadMetadata(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		ctx := context.Background()
		task := newTask(a2a.TaskStateWorking)
		task.Metadata = map[string]any{"n": uint(3)}
		if _, err := s.Create(ctx, task); err == nil {
			t.Error("Create with a uint in metadata succeeded")
		}
		cyclic := map[string]any{}
		cyclic["self"] = cyclic
		task.Metadata = nil
		task.History[0].Metadata = cyclic
		if _, err := s.Create(ctx, task); err == nil {
			t.Error("Create with cyclic metadata succeeded")
		}
		task.History[0].Metadata = map[string]any{"ok": []any{1, "two", map[string]any{"three": 3.0}}}
		mustCreate(t, ctx, s, task)
		bad := *task
		bad.Artifacts = []*a2a.Artifact{{ID: "a", Parts: a2a.ContentParts{{Content: a2a.Text("x"), Metadata: map[string]any{"t": time.Now()}}}}}
		if _, err := s.Update(ctx, &taskstore.UpdateRequest{Task: &bad}); err == nil {
			t.Error("Update with a time in part metadata succeeded")
		}
	})
}

func TestUpdateVersions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		ctx := context.Background()
		// A running task is checked against memory, an interrupted or
		// finished one against its row.
		for _, st := range []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateCompleted} {
			t.Run(string(st), func(t *testing.T) {
				task := newTask(st)
				v1 := mustCreate(t, ctx, s, task)
				task.Metadata = map[string]any{"n": "2"}
				v2 := mustUpdate(t, ctx, s, task, v1)
				if v2 != v1+1 {
					t.Fatalf("Update version = %d, want %d", v2, v1+1)
				}
				task.Metadata = map[string]any{"n": "stale"}
				if _, err := s.Update(ctx, &taskstore.UpdateRequest{Task: task, Event: statusEvent(task), PrevVersion: v1}); !errors.Is(err, taskstore.ErrConcurrentModification) {
					t.Fatalf("Update with stale version = %v, want ErrConcurrentModification", err)
				}
				if _, err := s.Update(ctx, &taskstore.UpdateRequest{Task: task, PrevVersion: v2 + 1}); !errors.Is(err, taskstore.ErrConcurrentModification) {
					t.Fatalf("Update with future version = %v, want ErrConcurrentModification", err)
				}
				got := mustGet(t, ctx, s, task.ID)
				if got.Version != v2 || got.Task.Metadata["n"] != "2" {
					t.Fatalf("after refused updates: version %d metadata %v, want %d n=2", got.Version, got.Task.Metadata, v2)
				}
				task.Metadata = map[string]any{"n": "3"}
				if v3 := mustUpdate(t, ctx, s, task, taskstore.TaskVersionMissing); v3 != v2+1 {
					t.Fatalf("unchecked Update version = %d, want %d", v3, v2+1)
				}
			})
		}
		unknown := newTask(a2a.TaskStateWorking)
		if _, err := s.Update(ctx, &taskstore.UpdateRequest{Task: unknown}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("Update(unknown) = %v, want ErrTaskNotFound", err)
		}
		if _, err := s.Get(ctx, unknown.ID); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("a refused Update left a task behind: Get = %v", err)
		}
	})
}

// TestPersistencePolicy follows one task through a run and, after every
// update, asks a second Store on the database (what a restarted process
// would find, recovery aside) what it holds.
func TestPersistencePolicy(t *testing.T) {
	type step struct {
		state a2a.TaskState
		// written says whether this update reaches the database.
		written bool
	}
	steps := []step{
		{a2a.TaskStateSubmitted, true}, // Create
		{a2a.TaskStateWorking, true},   // state change
		{a2a.TaskStateWorking, false},  // progress: memory only
		{a2a.TaskStateWorking, false},
		{a2a.TaskStateInputRequired, true},
		{a2a.TaskStateInputRequired, true}, // interrupted: every update
		{a2a.TaskStateWorking, true},
		{a2a.TaskStateWorking, false},
		{a2a.TaskStateAuthRequired, true},
		{a2a.TaskStateAuthRequired, true},
		{a2a.TaskStateSubmitted, true},
		{a2a.TaskStateSubmitted, false},
		{a2a.TaskStateWorking, true},
		{a2a.TaskStateWorking, false},
		{a2a.TaskStateCompleted, true}, // terminal: written, leaves memory
		{a2a.TaskStateCompleted, true}, // an update of a finished task
		{a2a.TaskStateWorking, true},   // back to running (the store allows it)
		{a2a.TaskStateWorking, false},
		{a2a.TaskStateFailed, true},
	}
	forEachBackend(t, func(t *testing.T, b backend) {
		db, dialect := b.connect(t)
		s := openOn(t, db, dialect)
		ctx := context.Background()
		task := newTask(steps[0].state)
		var version taskstore.TaskVersion
		dbStep, dbVersion := 0, taskstore.TaskVersion(0)
		for i, st := range steps {
			task.Status = a2a.TaskStatus{State: st.state}
			task.Metadata = map[string]any{"step": float64(i)}
			task.Artifacts = append(task.Artifacts, &a2a.Artifact{ID: a2a.ArtifactID(fmt.Sprint(i)), Parts: a2a.ContentParts{a2a.NewTextPart(fmt.Sprint(i))}})
			if i == 0 {
				version = mustCreate(t, ctx, s, task)
			} else {
				version = mustUpdate(t, ctx, s, task, version)
			}
			if st.written {
				dbStep, dbVersion = i, version
			}

			got := mustGet(t, ctx, s, task.ID)
			if got.Version != version || got.Task.Status.State != st.state || got.Task.Metadata["step"] != float64(i) || len(got.Task.Artifacts) != i+1 {
				t.Fatalf("step %d (%s): Store Get = version %d state %s step %v, want %d %s %d",
					i, st.state, got.Version, got.Task.Status.State, got.Task.Metadata["step"], version, st.state, i)
			}
			second := openOn(t, db, dialect, taskdb.WithoutRecovery())
			got = mustGet(t, ctx, second, task.ID)
			if got.Version != dbVersion || got.Task.Status.State != steps[dbStep].state || got.Task.Metadata["step"] != float64(dbStep) || len(got.Task.Artifacts) != dbStep+1 {
				t.Fatalf("step %d (%s): database holds version %d state %s step %v, want step %d: version %d state %s",
					i, st.state, got.Version, got.Task.Status.State, got.Task.Metadata["step"], dbStep, dbVersion, steps[dbStep].state)
			}
		}
	})
}

func TestRestartRecovery(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		ctx := context.Background()

		working := newTask(a2a.TaskStateSubmitted)
		v := mustCreate(t, ctx, s, working)
		thinking := a2a.NewMessageForTask(a2a.MessageRoleAgent, working, a2a.NewTextPart("thinking"))
		working.Status = a2a.TaskStatus{State: a2a.TaskStateWorking, Message: thinking}
		v = mustUpdate(t, ctx, s, working, v)
		working.Artifacts = []*a2a.Artifact{{ID: "lost", Parts: a2a.ContentParts{a2a.NewTextPart("progress")}}}
		mustUpdate(t, ctx, s, working, v) // memory only: lost in the crash

		submitted := newTask(a2a.TaskStateSubmitted)
		mustCreate(t, ctx, s, submitted)
		waiting := newTask(a2a.TaskStateInputRequired)
		mustCreate(t, ctx, s, waiting)
		done := newTask(a2a.TaskStateWorking)
		v = mustCreate(t, ctx, s, done)
		done.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted}
		done.Artifacts = []*a2a.Artifact{{ID: "result", Parts: a2a.ContentParts{a2a.NewTextPart("42")}}}
		mustUpdate(t, ctx, s, done, v)

		// The process dies; another opens the database.
		restartedAt := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
		restarted := b.open(t, taskdb.WithClock(func() time.Time { return restartedAt }))

		got := mustGet(t, ctx, restarted, working.ID)
		st := got.Task.Status
		if st.State != a2a.TaskStateFailed || got.Version != 3 {
			t.Fatalf("running task after restart: state %s version %d, want failed 3", st.State, got.Version)
		}
		if st.Message == nil || st.Message.Role != a2a.MessageRoleAgent || len(st.Message.Parts) != 1 || st.Message.Parts[0].Text() != taskdb.RecoveryMessage {
			t.Errorf("failed task's status message = %+v, want the agent saying %q", st.Message, taskdb.RecoveryMessage)
		}
		if st.Message != nil && (st.Message.TaskID != working.ID || st.Message.ContextID != working.ContextID) {
			t.Errorf("status message is for task %s context %s", st.Message.TaskID, st.Message.ContextID)
		}
		if st.Timestamp == nil || !st.Timestamp.Equal(restartedAt) {
			t.Errorf("status timestamp = %v, want %v", st.Timestamp, restartedAt)
		}
		if h := got.Task.History; len(h) != 2 || h[1].Parts[0].Text() != "thinking" {
			t.Errorf("history = %d messages, want the user's and the previous status message", len(h))
		}
		if len(got.Task.Artifacts) != 0 {
			t.Errorf("unwritten progress survived: %v", got.Task.Artifacts)
		}
		if got := mustGet(t, ctx, restarted, submitted.ID); got.Task.Status.State != a2a.TaskStateFailed {
			t.Errorf("submitted task after restart: %s, want failed", got.Task.Status.State)
		}
		if got := mustGet(t, ctx, restarted, waiting.ID); got.Task.Status.State != a2a.TaskStateInputRequired || got.Version != 1 {
			t.Errorf("input-required task after restart: %s version %d, want unchanged", got.Task.Status.State, got.Version)
		}
		got = mustGet(t, ctx, restarted, done.ID)
		if diff := cmp.Diff(done, got.Task); diff != "" || got.Version != 2 {
			t.Errorf("completed task after restart: version %d (-want +got):\n%s", got.Version, diff)
		}

	})
}

// TestParkedRunsRecovery: a server whose input-required tasks wait on
// runs held in memory fails them on restart, saying why; other tasks
// recover as without the option.
func TestParkedRunsRecovery(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t, taskdb.WithParkedRuns())
		ctx := context.Background()
		waiting := newTask(a2a.TaskStateInputRequired)
		mustCreate(t, ctx, s, waiting)
		working := newTask(a2a.TaskStateWorking)
		mustCreate(t, ctx, s, working)

		restarted := b.open(t, taskdb.WithParkedRuns())
		got := mustGet(t, ctx, restarted, waiting.ID)
		if st := got.Task.Status; st.State != a2a.TaskStateFailed || got.Version != 2 ||
			st.Message == nil || st.Message.Parts[0].Text() != taskdb.ParkedRecoveryMessage {
			t.Errorf("input-required task after restart: %s version %d message %+v, want failed, version 2, saying %q",
				st.State, got.Version, st.Message, taskdb.ParkedRecoveryMessage)
		}
		if got := mustGet(t, ctx, restarted, working.ID); got.Task.Status.State != a2a.TaskStateFailed ||
			got.Task.Status.Message.Parts[0].Text() != taskdb.RecoveryMessage {
			t.Errorf("working task after restart: %s %+v, want failed saying %q", got.Task.Status.State, got.Task.Status.Message, taskdb.RecoveryMessage)
		}
	})
}

func TestWithoutRecoveryLeavesRunningTasks(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		ctx := context.Background()
		task := newTask(a2a.TaskStateWorking)
		mustCreate(t, ctx, s, task)
		other := b.open(t, taskdb.WithoutRecovery())
		if got := mustGet(t, ctx, other, task.ID); got.Task.Status.State != a2a.TaskStateWorking {
			t.Errorf("WithoutRecovery: task is %s, want working", got.Task.Status.State)
		}
		// The first Store goes on with the task; the second sees what it
		// writes.
		v := mustUpdate(t, ctx, s, task, 1)
		task.Status.State = a2a.TaskStateCompleted
		mustUpdate(t, ctx, s, task, v)
		if got := mustGet(t, ctx, other, task.ID); got.Task.Status.State != a2a.TaskStateCompleted || got.Version != 3 {
			t.Errorf("second Store sees %s version %d, want completed 3", got.Task.Status.State, got.Version)
		}
	})
}

func TestConcurrentWritersOfOneDatabase(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		db, dialect := b.connect(t)
		a := openOn(t, db, dialect)
		ctx := context.Background()
		task := newTask(a2a.TaskStateSubmitted)
		mustCreate(t, ctx, a, task)
		task.Status.State = a2a.TaskStateWorking
		v := mustUpdate(t, ctx, a, task, 1) // written: version 2
		mustUpdate(t, ctx, a, task, v)      // memory only: version 3

		// A second Store loads version 2 from the row and writes 3.
		other := openOn(t, db, dialect, taskdb.WithoutRecovery())
		task.Status.State = a2a.TaskStateInputRequired
		if _, err := other.Update(ctx, &taskstore.UpdateRequest{Task: task, PrevVersion: 2}); err != nil {
			t.Fatalf("second Store's update: %v", err)
		}
		// The first one's write, against the row it wrote, is refused.
		task.Status.State = a2a.TaskStateCompleted
		if _, err := a.Update(ctx, &taskstore.UpdateRequest{Task: task, PrevVersion: 3}); !errors.Is(err, taskstore.ErrConcurrentModification) {
			t.Fatalf("overwriting the other Store's write: %v, want ErrConcurrentModification", err)
		}
	})
}

func TestSchemaTooNew(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		db, dialect := b.connect(t)
		openOn(t, db, dialect)
		if _, err := db.ExecContext(context.Background(), `INSERT INTO a2a_schema_version (version) VALUES (99)`); err != nil {
			t.Fatal(err)
		}
		_, err := taskdb.Open(context.Background(), db, dialect, quiet())
		if !errors.Is(err, taskdb.ErrSchemaTooNew) {
			t.Fatalf("Open on a newer schema = %v, want ErrSchemaTooNew", err)
		}
	})
}

func TestUnknownDialect(t *testing.T) {
	if _, err := taskdb.Open(context.Background(), nil, "mysql"); err == nil {
		t.Fatal("Open with dialect mysql succeeded")
	}
}

func TestConcurrentOpen(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		const openers = 4
		dbs := make([]*sql.DB, openers)
		dialects := make([]string, openers)
		for i := range dbs {
			dbs[i], dialects[i] = b.connect(t)
		}
		var wg sync.WaitGroup
		errs := make([]error, openers)
		for i := range openers {
			wg.Go(func() {
				_, errs[i] = taskdb.Open(context.Background(), dbs[i], dialects[i], quiet())
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("Open %d: %v", i, err)
			}
		}
		var versions int
		if err := dbs[0].QueryRowContext(context.Background(), `SELECT COUNT(*) FROM a2a_schema_version`).Scan(&versions); err != nil || versions != 1 {
			t.Errorf("a2a_schema_version has %d rows (%v), want 1", versions, err)
		}
	})
}

// TestCopies checks that nothing a caller holds is the Store's: not what
// it passed to Create or Update, nor what Get and List returned.
func TestCopies(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t, byUser())
		ctx := as("alice")
		for _, st := range []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateCompleted} {
			task := richTask(st)
			want := richTask(st)
			want.ID, want.ContextID = task.ID, task.ContextID
			want.History[0].TaskID, want.History[0].ContextID = task.ID, task.ContextID
			mustCreate(t, ctx, s, task)
			scribble(task)
			got := mustGet(t, ctx, s, task.ID)
			if diff := cmp.Diff(want, got.Task); diff != "" {
				t.Fatalf("%s: changing the created task changed the store (-want +got):\n%s", st, diff)
			}
			scribble(got.Task)
			list, err := s.List(ctx, &a2a.ListTasksRequest{IncludeArtifacts: true, ContextID: task.ContextID})
			if err != nil || len(list.Tasks) != 1 {
				t.Fatalf("List = %v, %v", list, err)
			}
			if diff := cmp.Diff(want, list.Tasks[0]); diff != "" {
				t.Fatalf("%s: changing Get's task changed the store (-want +got):\n%s", st, diff)
			}
			scribble(list.Tasks[0])
			if diff := cmp.Diff(want, mustGet(t, ctx, s, task.ID).Task); diff != "" {
				t.Fatalf("%s: changing List's task changed the store (-want +got):\n%s", st, diff)
			}
		}

		// The hot path keeps a2a-go's messages and artifacts but copies
		// the metadata and status message it may share.
		task := newTask(a2a.TaskStateWorking)
		v := mustCreate(t, ctx, s, task)
		task.Metadata = map[string]any{"nested": map[string]any{"k": "v"}}
		task.Status.Message = a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("status"))
		mustUpdate(t, ctx, s, task, v)
		task.Metadata["nested"].(map[string]any)["k"] = "changed"
		task.Status.Message.Parts[0] = a2a.NewTextPart("changed")
		task.History = append(task.History[:0], a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("changed")))
		got := mustGet(t, ctx, s, task.ID).Task
		if got.Metadata["nested"].(map[string]any)["k"] != "v" || got.Status.Message.Parts[0].Text() != "status" || got.History[0].Parts[0].Text() != "hello" {
			t.Errorf("hot Update shares what the caller changed: metadata %v status %q history %q",
				got.Metadata, got.Status.Message.Parts[0].Text(), got.History[0].Parts[0].Text())
		}
	})
}

// scribble changes everything reachable from a task.
func scribble(t *a2a.Task) {
	t.Status.State = a2a.TaskStateRejected
	t.Status.Message.Parts[0] = a2a.NewTextPart("scribbled")
	*t.Status.Timestamp = t.Status.Timestamp.Add(time.Hour)
	t.Metadata["k"] = "scribbled"
	t.Metadata["nested"].(map[string]any)["list"].([]any)[0] = "scribbled"
	t.History[0].Parts[0].Metadata["k"] = "scribbled"
	t.History[0].Parts = append(t.History[0].Parts[:0], a2a.NewTextPart("scribbled"))
	t.Artifacts[0].Name = "scribbled"
	t.Artifacts[0].Parts[1].Content.(a2a.Data).Value.(map[string]any)["answer"] = "scribbled"
	t.Artifacts[0].Parts[2].Content.(a2a.Raw)[0] = 'X'
	t.Artifacts = append(t.Artifacts, &a2a.Artifact{ID: "scribbled"})
}

// richTask has every kind of part and metadata a task carries.
func richTask(st a2a.TaskState) *a2a.Task {
	id, ctxID := a2a.NewTaskID(), a2a.NewContextID()
	ts := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	return &a2a.Task{
		ID:        id,
		ContextID: ctxID,
		Status: a2a.TaskStatus{
			State:     st,
			Message:   &a2a.Message{ID: "status", Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart("on it")}},
			Timestamp: &ts,
		},
		History: []*a2a.Message{{
			ID:             "m1",
			ContextID:      ctxID,
			TaskID:         id,
			Role:           a2a.MessageRoleUser,
			Extensions:     []string{"https://example.com/ext"},
			ReferenceTasks: []a2a.TaskID{"other-task"},
			Metadata:       map[string]any{"lang": "en"},
			Parts: a2a.ContentParts{
				{Content: a2a.Text("hello"), Metadata: map[string]any{"k": "v"}},
				{Content: a2a.URL("https://example.com/doc.pdf"), Filename: "doc.pdf", MediaType: "application/pdf"},
			},
		}, {
			ID:    "m2",
			Role:  a2a.MessageRoleAgent,
			Parts: a2a.ContentParts{a2a.NewTextPart("hi")},
		}},
		Artifacts: []*a2a.Artifact{{
			ID:          "a1",
			Name:        "result",
			Description: "the answer",
			Extensions:  []string{"https://example.com/ext"},
			Metadata:    map[string]any{"score": 0.5},
			Parts: a2a.ContentParts{
				a2a.NewTextPart("text"),
				a2a.NewDataPart(map[string]any{"answer": 42.0, "list": []any{"a", true, nil, 1.5}, "obj": map[string]any{"x": "y"}}),
				{Content: a2a.Raw("raw bytes \x00\xff"), Filename: "blob.bin", MediaType: "application/octet-stream"},
			},
		}},
		Metadata: map[string]any{
			"k":      "v",
			"n":      7.0,
			"flag":   true,
			"none":   nil,
			"nested": map[string]any{"list": []any{"x", 2.0, map[string]any{"deep": "yes"}}},
		},
	}
}

// TestJSONRoundTrip stores a task with every kind of part and metadata and
// reads it back from the database in another Store.
func TestJSONRoundTrip(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		db, dialect := b.connect(t)
		s := openOn(t, db, dialect)
		ctx := context.Background()
		other := openOn(t, db, dialect, taskdb.WithoutRecovery())

		// Written at creation (completed) and by a state change.
		done := richTask(a2a.TaskStateCompleted)
		mustCreate(t, ctx, s, done)
		running := richTask(a2a.TaskStateSubmitted)
		v := mustCreate(t, ctx, s, running)
		running.Status.State = a2a.TaskStateWorking
		mustUpdate(t, ctx, s, running, v)

		for _, want := range []*a2a.Task{done, running} {
			got := mustGet(t, ctx, other, want.ID)
			if diff := cmp.Diff(want, got.Task); diff != "" {
				t.Errorf("%s task read back from the database (-want +got):\n%s", want.Status.State, diff)
			}
			if got := mustGet(t, ctx, s, want.ID); cmp.Diff(want, got.Task) != "" {
				t.Errorf("%s task from the writing Store differs: %s", want.Status.State, cmp.Diff(want, got.Task))
			}
		}
	})
}
