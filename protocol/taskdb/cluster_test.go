package taskdb_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/protocol/taskdb"
)

// TestFailContext: a replica taking a context over fails the tasks
// another process left unfinished in it, not its own running ones nor
// those of other contexts, and finds contexts and tasks' contexts.
func TestFailContext(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		db, dialect := b.connect(t)
		dead := openOn(t, db, dialect, taskdb.WithParkedRuns(), taskdb.WithoutRecovery())
		working := newTask(a2a.TaskStateWorking)
		mustCreate(t, ctx, dead, working)
		waiting := newTask(a2a.TaskStateInputRequired)
		waiting.ContextID = working.ContextID
		mustCreate(t, ctx, dead, waiting)
		done := newTask(a2a.TaskStateCompleted)
		done.ContextID = working.ContextID
		mustCreate(t, ctx, dead, done)
		elsewhere := newTask(a2a.TaskStateWorking)
		mustCreate(t, ctx, dead, elsewhere)

		live := openOn(t, db, dialect, taskdb.WithParkedRuns(), taskdb.WithoutRecovery())
		mine := newTask(a2a.TaskStateSubmitted)
		mine.ContextID = working.ContextID
		mustCreate(t, ctx, live, mine)

		got, err := live.UnfinishedContexts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{working.ContextID, elsewhere.ContextID}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("UnfinishedContexts = %v, want %v", got, want)
		}
		if id, err := live.ContextOf(ctx, string(working.ID)); err != nil || id != working.ContextID {
			t.Fatalf("ContextOf(a row) = %q, %v", id, err)
		}
		if id, err := live.ContextOf(ctx, string(mine.ID)); err != nil || id != working.ContextID {
			t.Fatalf("ContextOf(a task in memory) = %q, %v", id, err)
		}
		if _, err := live.ContextOf(ctx, "nope"); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("ContextOf(unknown) = %v", err)
		}

		n, err := live.FailContext(ctx, working.ContextID, "gone")
		if err != nil || n != 2 {
			t.Fatalf("FailContext = %d, %v; want the working and the waiting task", n, err)
		}
		for _, id := range []a2a.TaskID{working.ID, waiting.ID} {
			got := mustGet(t, ctx, live, id)
			if st := got.Task.Status; st.State != a2a.TaskStateFailed || st.Message == nil || st.Message.Parts[0].Text() != "gone" {
				t.Errorf("task %s: %s %+v, want failed saying gone", id, st.State, st.Message)
			}
		}
		for id, st := range map[a2a.TaskID]a2a.TaskState{done.ID: a2a.TaskStateCompleted, elsewhere.ID: a2a.TaskStateWorking, mine.ID: a2a.TaskStateSubmitted} {
			if got := mustGet(t, ctx, live, id); got.Task.Status.State != st {
				t.Errorf("task %s: %s, want %s untouched", id, got.Task.Status.State, st)
			}
		}
		if n, err := live.FailContext(ctx, working.ContextID, "gone"); err != nil || n != 0 {
			t.Fatalf("FailContext again = %d, %v; want nothing left", n, err)
		}
	})
}
