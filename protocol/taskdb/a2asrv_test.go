package taskdb_test

import (
	"context"
	"fmt"
	"iter"
	"sync/atomic"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/agentry-dev/agentry/protocol/taskdb"
)

// chunkExecutor streams an answer as artifact chunks, first asking for
// input if the task is new: the event pattern of an agent run.
type chunkExecutor struct{ chunks int }

func (e chunkExecutor) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if ec.StoredTask == nil {
			if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired,
				a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("which answer?"))), nil)
			return
		}
		if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
			return
		}
		artifact := a2a.NewArtifactID()
		for i := range e.chunks {
			ev := a2a.NewArtifactUpdateEvent(ec, artifact, a2a.NewTextPart(fmt.Sprint(i)))
			ev.Append = i > 0
			if !yield(ev, nil) {
				return
			}
			if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking,
				a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(fmt.Sprint("chunk ", i)))), nil) {
				return
			}
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
	}
}

func (chunkExecutor) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// recordingSender counts the push notifications a2a-go sends.
type recordingSender struct{ sent atomic.Int64 }

func (r *recordingSender) SendPush(_ context.Context, config *a2a.PushConfig, _ a2a.Event) error {
	if config.Token != "t" {
		return fmt.Errorf("push config token %q, want the stored one", config.Token)
	}
	r.sent.Add(1)
	return nil
}

// TestA2AServer runs tasks through a2a-go's request handler on a Store:
// a task pauses for input, the server restarts, and the continued task
// completes with all its chunks.
func TestA2AServer(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		const chunks = 30
		ctx := context.Background()
		var sender recordingSender
		server := func(s *taskdb.Store) a2asrv.RequestHandler {
			return a2asrv.NewHandler(chunkExecutor{chunks: chunks},
				a2asrv.WithTaskStore(s), a2asrv.WithPushNotifications(s.PushConfigs(), &sender))
		}
		h := server(b.open(t))
		res, err := h.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("question"))})
		if err != nil {
			t.Fatalf("SendMessage: %v", err)
		}
		task, ok := res.(*a2a.Task)
		if !ok || task.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("SendMessage = %#v, want an input-required task", res)
		}
		if _, err := h.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, URL: "https://client.example.com/hook", Token: "t"}); err != nil {
			t.Fatalf("CreateTaskPushConfig: %v", err)
		}

		// Restart: the paused task and its push config are in the database.
		h = server(b.open(t))
		got, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
		if err != nil || got.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("GetTask after restart = %v, %v", got, err)
		}
		configs, err := h.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: task.ID})
		if err != nil || len(configs.Configs) != 1 {
			t.Fatalf("ListTaskPushConfigs after restart = %v, %v", configs, err)
		}
		res, err = h.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.NewTextPart("42"))})
		if err != nil {
			t.Fatalf("SendMessage to the paused task: %v", err)
		}
		done, ok := res.(*a2a.Task)
		if !ok || done.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("SendMessage = %#v, want a completed task", res)
		}
		got, err = h.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
		if err != nil || got.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("GetTask = %v, %v", got, err)
		}
		if len(got.Artifacts) != 1 || len(got.Artifacts[0].Parts) != chunks {
			t.Fatalf("completed task has %d artifacts, want 1 with %d parts", len(got.Artifacts), chunks)
		}
		// question, "which answer?", 42, and the chunk status messages.
		if n := len(got.History); n != 3+chunks {
			t.Errorf("history has %d messages, want %d", n, 3+chunks)
		}
		if sender.sent.Load() == 0 {
			t.Error("no push notification was sent for the continued task")
		}
	})
}
