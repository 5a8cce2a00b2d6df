package taskdb_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/agentry-dev/agentry/protocol/taskdb"
)

// TestConcurrentTasks runs 50 tasks at once, each updated by its own
// goroutine as a2a-go would (versions chained, mostly progress, now and
// then a pause for input), while readers Get and List. Run it with -race.
func TestConcurrentTasks(t *testing.T) {
	const (
		tasks   = 50
		updates = 60
	)
	forEachBackend(t, func(t *testing.T, b backend) {
		db, dialect := b.connect(t)
		s := openOn(t, db, dialect, byUser())
		ctx := as("alice")
		ids := make([]a2a.TaskID, tasks)
		created := make([]*a2a.Task, tasks)
		for i := range tasks {
			created[i] = newTask(a2a.TaskStateSubmitted)
			ids[i] = created[i].ID
			mustCreate(t, ctx, s, created[i])
		}
		var done atomic.Bool
		var writers, readers sync.WaitGroup
		errs := make(chan error, tasks+4)
		for i := range tasks {
			writers.Go(func() {
				task, v := created[i], taskstore.TaskVersion(1)
				var err error
				for u := range updates {
					// Each update is a new task object, as a2a-go builds
					// one per event.
					next := *task
					next.Artifacts = append(append([]*a2a.Artifact(nil), task.Artifacts...),
						&a2a.Artifact{ID: a2a.ArtifactID(fmt.Sprint(u)), Parts: a2a.ContentParts{a2a.NewTextPart(fmt.Sprint(u))}})
					switch {
					case u == updates-1:
						next.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted}
					case u%20 == 10:
						next.Status = a2a.TaskStatus{State: a2a.TaskStateInputRequired}
					default:
						next.Status = a2a.TaskStatus{State: a2a.TaskStateWorking}
					}
					if v, err = s.Update(ctx, &taskstore.UpdateRequest{Task: &next, Event: statusEvent(&next), PrevVersion: v}); err != nil {
						errs <- fmt.Errorf("task %d update %d: %w", i, u, err)
						return
					}
					task = &next
				}
			})
		}
		for r := range 4 {
			readers.Go(func() {
				for n := 0; !done.Load(); n++ {
					if r%2 == 0 {
						if _, err := s.List(ctx, &a2a.ListTasksRequest{PageSize: 20, IncludeArtifacts: n%2 == 0}); err != nil {
							errs <- fmt.Errorf("List: %w", err)
							return
						}
						continue
					}
					id := ids[n%tasks]
					got, err := s.Get(ctx, id)
					if err != nil {
						errs <- fmt.Errorf("Get: %w", err)
						return
					}
					// A task read is whole: as many artifacts as updates.
					if len(got.Task.Artifacts) != int(got.Version)-1 {
						errs <- fmt.Errorf("Get(%s) version %d has %d artifacts", id, got.Version, len(got.Task.Artifacts))
						return
					}
				}
			})
		}
		writers.Wait()
		done.Store(true)
		readers.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if t.Failed() {
			return
		}
		other := openOn(t, db, dialect, byUser(), taskdb.WithoutRecovery())
		for _, id := range ids {
			got := mustGet(t, ctx, other, id)
			if got.Task.Status.State != a2a.TaskStateCompleted || got.Version != updates+1 || len(got.Task.Artifacts) != updates {
				t.Errorf("task %s in the database: %s version %d with %d artifacts, want completed %d with %d",
					id, got.Task.Status.State, got.Version, len(got.Task.Artifacts), updates+1, updates)
			}
		}
		list, err := s.List(ctx, &a2a.ListTasksRequest{Status: a2a.TaskStateCompleted})
		if err != nil || list.TotalSize != tasks {
			t.Errorf("List(completed) total %v, %v; want %d", list.TotalSize, err, tasks)
		}
	})
}

// TestConcurrentUpdatesOfOneTask has many goroutines update one task
// without version checks: every update gets its own version and the
// database writes land in version order (each is conditional on the
// previous one).
func TestConcurrentUpdatesOfOneTask(t *testing.T) {
	const goroutines = 50
	forEachBackend(t, func(t *testing.T, b backend) {
		db, dialect := b.connect(t)
		s := openOn(t, db, dialect)
		ctx := context.Background()
		for _, st := range []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateInputRequired} {
			t.Run(string(st), func(t *testing.T) {
				task := newTask(st)
				mustCreate(t, ctx, s, task)
				versions := make(chan taskstore.TaskVersion, goroutines)
				var wg sync.WaitGroup
				for i := range goroutines {
					wg.Go(func() {
						next := *task
						next.Metadata = map[string]any{"writer": float64(i)}
						v, err := s.Update(ctx, &taskstore.UpdateRequest{Task: &next, Event: statusEvent(&next)})
						if err != nil {
							t.Errorf("Update: %v", err)
						}
						versions <- v
					})
				}
				wg.Wait()
				close(versions)
				seen := map[taskstore.TaskVersion]bool{}
				for v := range versions {
					if seen[v] {
						t.Errorf("version %d given twice", v)
					}
					seen[v] = true
				}
				got := mustGet(t, ctx, s, task.ID)
				if got.Version != goroutines+1 {
					t.Errorf("version after %d updates = %d", goroutines, got.Version)
				}
				if st == a2a.TaskStateInputRequired {
					// Every update was written; the row is the last one.
					row := mustGet(t, ctx, openOn(t, db, dialect, taskdb.WithoutRecovery()), task.ID)
					if row.Version != got.Version || row.Task.Metadata["writer"] != got.Task.Metadata["writer"] {
						t.Errorf("row = version %d writer %v, Store = %d %v", row.Version, row.Task.Metadata["writer"], got.Version, got.Task.Metadata["writer"])
					}
				}
			})
		}
	})
}
