package taskdb_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// benchTask is a task some way into a run: a few messages and artifacts.
func benchTask() *a2a.Task {
	task := newTask(a2a.TaskStateWorking)
	for i := range 10 {
		task.History = append(task.History, a2a.NewMessageForTask(a2a.MessageRoleAgent, task, a2a.NewTextPart(fmt.Sprint("step ", i))))
	}
	for i := range 3 {
		task.Artifacts = append(task.Artifacts, &a2a.Artifact{ID: a2a.NewArtifactID(), Parts: a2a.ContentParts{a2a.NewTextPart(fmt.Sprint("output ", i))}})
	}
	return task
}

// runUpdates has 200 goroutines (the concurrent tasks of the target
// load) update a task each, the state of update n being state(n).
func runUpdates(b *testing.B, state func(n int) a2a.TaskState) {
	s := sqliteBackend(b).open(b)
	ctx := context.Background()
	b.SetParallelism(max(1, 200/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		task := benchTask()
		task.Status.State = state(0)
		v, err := s.Create(ctx, task)
		if err != nil {
			b.Error(err)
			return
		}
		for n := 1; pb.Next(); n++ {
			// What a2a-go passes per event: a new task with a new
			// status message.
			next := *task
			next.Status = a2a.TaskStatus{State: state(n), Message: a2a.NewMessageForTask(a2a.MessageRoleAgent, task, a2a.NewTextPart("progress"))}
			if v, err = s.Update(ctx, &taskstore.UpdateRequest{Task: &next, Event: statusEvent(&next), PrevVersion: v}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "updates/s")
}

// BenchmarkUpdate is the hot path: updates that keep a running task
// working, which only change memory.
func BenchmarkUpdate(b *testing.B) {
	runUpdates(b, func(int) a2a.TaskState { return a2a.TaskStateWorking })
}

// BenchmarkUpdateStateChange writes every update: each moves its task
// between submitted and working.
func BenchmarkUpdateStateChange(b *testing.B) {
	runUpdates(b, func(n int) a2a.TaskState {
		if n%2 == 0 {
			return a2a.TaskStateSubmitted
		}
		return a2a.TaskStateWorking
	})
}
